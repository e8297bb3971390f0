"""The statements and sizes the symbolic proofs accept, decided without importing sympy (so that
``verify symbolic --help`` can state them): each of ``|H|``, ``|X|``, ``T`` in ``1..MAX_SIZE`` and
at most :data:`MAX_PATH_WORK` brute-force path terms (:func:`path_work`)."""

from __future__ import annotations

__all__ = ["STATEMENTS", "MAX_SIZE", "MAX_PATH_WORK", "MAX_STRUCTURED_WORK", "path_work", "accepted_sizes"]

# the statements ``verify symbolic`` proves, by name
STATEMENTS = ("prop-3.4", "claim-A.1", "lemma-B.2", "head-3.3", "head-3.6")

MAX_SIZE = 4
MAX_PATH_WORK = 3_000
MAX_STRUCTURED_WORK = 45_000


def path_work(hidden: int, vocab: int, length: int) -> int:
    """Brute-force size ``sum_{t=1..T} |X|^t |H|^(t+3)`` (sequences times hidden paths).

    >>> path_work(2, 2, 3), path_work(3, 3, 3)
    (672, 22113)
    """
    return sum(vocab ** t * hidden ** (t + 3) for t in range(1, length + 1))


def accepted_sizes() -> list[tuple[int, int, int]]:
    """Every ``(|H|, |X|, T)`` with ``|H|, |X| >= 2`` that the limits accept, largest ``T`` per pair.

    >>> accepted_sizes()[:3]
    [(2, 2, 4), (2, 3, 3), (2, 4, 2)]
    """
    out = []
    for h in range(2, MAX_SIZE + 1):
        for x in range(2, MAX_SIZE + 1):
            ok = [t for t in range(1, MAX_SIZE + 1) if path_work(h, x, t) <= MAX_PATH_WORK]
            if ok:
                out.append((h, x, max(ok)))
    return out
