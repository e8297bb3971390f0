"""Instances built to break one assumption so that the *statement* fails (``verify
counterexample``): the failure mode is known, so the instance is constructed, not searched.

- Theorem 3.3 without 3.1, Theorem 3.6 without 3.5 (:func:`twin_states_hmm`): two hidden states
  ``0, 1`` with the same emission column ("twins") and proportional rows of ``A``
  (``A[1, :] = lam A[0, :]``: whatever enters one enters the other in a fixed ratio), different
  columns of ``A`` (they lead to different futures), and ``mu = (1, -1, 0, ...)``, a task that
  separates them. ``Gbar_2(u, e(∅), e(x)) = W (beta ⊙ c(u)) / ||.||`` sees ``beta`` on the twins
  only through ``beta[0] + lam beta[1]`` for every prompt ``u`` (``c(u)[1] = lam c(u)[0]``), while
  ``F*`` reads ``pi0[0] beta[0] - pi0[1] beta[1]``. The default is the smallest such instance:
  ``|H| = 3, |X| = 2`` (with 2 states, twin columns make ``beta`` constant, hence ``F*``; with 1
  token every sequence is certain). Assumption 3.2 holds; 3.1 and 3.5 fail.
- Theorems 3.3 and 3.6 without 3.2 (:func:`unreachable_state_hmm`): a state that the chain never
  enters after time 0 (``P[H_1] = 0`` there, so the support graph is not strongly connected) but
  that the task reads at time 0; its future is not a linear function of what ``G`` sees.
  Assumptions 3.1 (Theorem 3.3) and 3.5 (Theorem 3.6) hold.

Every instance is exact (rationals); :mod:`headprompt.verify.studies.refute` checks the assumptions on it and finds the
certificates, so nothing here is trusted.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from ...models.exceptions import InputError
from ...models.hmm.values import HMM

__all__ = ["twin_states_hmm", "unreachable_state_hmm", "KNOWN", "known_construction"]


def twin_states_hmm(num_states: int = 3, num_tokens: int = 2, *, rng: np.random.Generator | None = None
                    ) -> tuple[HMM, str]:
    """The twin-state instance (module docstring): ``(hmm, how)``. Without ``rng`` and at the
    default sizes, the fixed minimal instance; otherwise random rationals (denominators from
    draws in 1..12) around the same structure, so that the two length-1 sequences ``(0)`` and
    ``(1)`` take labels 0 and 1 while ``beta_(0) - beta_(1)`` is invisible to every prompt.

    >>> hmm, _ = twin_states_hmm()
    >>> [[str(v) for v in row] for row in hmm.A]
    [['0', '1/2', '1/4'], ['0', '1/2', '1/4'], ['1', '0', '1/2']]

    Raises:
        InputError: fewer than 3 states or 2 tokens.
    """
    n, X = int(num_states), int(num_tokens)
    if n < 3 or X < 2:
        raise InputError(f"--hidden {n} --vocab {X}: twin states that a task can separate need |H| >= 3 and "
                         "|X| >= 2 (with 2 states the twins make F* constant)")
    mu = [F(1), F(-1)] + [F(0)] * (n - 2)
    if rng is None and (n, X) == (3, 2):
        A = [[F(0), F(1, 2), F(1, 4)], [F(0), F(1, 2), F(1, 4)], [F(1), F(0), F(1, 2)]]
        W = [[F(1), F(1), F(0)], [F(0), F(0), F(1)]]
        how = ("the smallest twin-state instance: states 0 and 1 emit token 0, state 2 emits token 1; "
               "A[0, :] = A[1, :]; state 0 moves to 2, state 1 stays in {0, 1}; mu = (1, -1, 0)")
        return HMM.create(A, W, [F(1, 3)] * 3, mu), how
    rng = np.random.default_rng(0) if rng is None else rng

    def weights(size: int) -> list[int]:
        return [int(v) for v in rng.integers(1, 13, size)]

    def column(size: int, *, equal01: bool = False) -> list[F]:
        w = weights(size)
        if equal01:
            w[1] = w[0]
        return [F(v, sum(w)) for v in w]

    # W: tokens 0 and 1 are emitted equally often by every state except the twins (more 0s)
    # and state 2 (more 1s), by the same margin 2 delta; so v = W[0] - W[1] is (t, t, -t, 0..)
    twin, marker = column(X, equal01=True), column(X, equal01=True)
    delta = min(twin[0], marker[0]) / 2
    twin[0], twin[1], marker[0], marker[1] = twin[0] + delta, twin[1] - delta, marker[0] - delta, marker[1] + delta
    Wc = [twin, twin, marker] + [column(X, equal01=True) for _ in range(n - 3)]
    # A (rows 0 and 1 equal): from every state h >= 2 the next token is 0 or 1 equally often
    # (mass m into the twins, m into state 2); twin 0 never re-enters the twins (q into state 2),
    # twin 1 does; the rest goes to states 3.. (positive, so the chain is ergodic)
    def spread(mass: F) -> list[F]:
        if n == 3:
            return []
        w = weights(n - 3)
        return [mass * v / sum(w) for v in w]

    q = F(1) if n == 3 else F(int(rng.integers(1, 6)), 12)
    m1 = F(1) if n == 3 else q + F(int(rng.integers(0, 4)), 12) * (1 - q)
    cols = [[F(0), F(0), q] + spread(1 - q), [m1 / 2, m1 / 2, m1 - q] + spread(1 - 2 * m1 + q)]
    for _ in range(2, n):
        m = F(1, 2) if n == 3 else F(int(rng.integers(1, 6)), 12)
        cols.append([m / 2, m / 2, m] + spread(1 - 2 * m))
    W = [[Wc[h][x] for h in range(n)] for x in range(X)]
    A = [[cols[g][h] for g in range(n)] for h in range(n)]
    pi0 = column(n)
    # mu = (1, -rho): rho between the twins' likelihood ratios after x = (0) and x = (1), so the two
    # length-1 sequences take labels 0 and 1 (beta_(0) - beta_(1) = A^T v is (-q, q, 0, ...))
    beta = {x: [sum(A[h][g] * W[x][h] for h in range(n)) for g in range(2)] for x in (0, 1)}
    ratio = {x: pi0[0] * beta[x][0] / (pi0[1] * beta[x][1]) for x in (0, 1)}
    rho = (ratio[0] + ratio[1]) / 2
    mu = [F(1), -rho] + [F(0)] * (n - 2)
    how = ("twin states 0 and 1 (same emission column, equal rows of A, different columns), state 2 the marker "
           "that tells tokens 0 and 1 apart like the twins but in reverse, states 3.. drawn as positive rationals; "
           f"mu = (1, -{rho}, 0, ...)")
    return HMM.create(A, W, pi0, mu), how


def unreachable_state_hmm(theorem: str) -> tuple[HMM, str]:
    """The smallest instances we know where Assumption 3.2 alone fails and the statement does
    (module docstring): Theorem 3.3 with ``|H| = |X| = 3``, Theorem 3.6 with ``|H| = 4, |X| = 3``.

    Raises:
        InputError: a theorem other than 3.3 or 3.6.
    """
    if theorem == "3.3":
        A = [[F(0), F(0), F(0)], [F(1), F(1, 2), F(1, 2)], [F(0), F(1, 2), F(1, 2)]]
        W = [[F(1), F(0), F(0)], [F(0), F(1), F(0)], [F(0), F(0), F(1)]]
        how = ("state 0 is never entered (row 0 of A is zero) but P[H_0 = 0] > 0; states 1 and 2 have the same "
               "column of A, state 0 moves to 1; W = I (Assumption 3.1 holds); mu = (1, -1, 0)")
        return HMM.create(A, W, [F(1, 3)] * 3, [F(1), F(-1), F(0)]), how
    if theorem == "3.6":
        A = [[F(0), F(0), F(0), F(1)], [F(1), F(1, 2), F(1, 2), F(0)], [F(0), F(1, 2), F(1, 2), F(0)],
             [F(0), F(0), F(0), F(0)]]
        W = [[F(1), F(0), F(0), F(1, 3)], [F(0), F(1), F(0), F(1, 3)], [F(0), F(0), F(1), F(1, 3)]]
        how = ("state 3 is never entered and is the only way into state 0, so P[H_2 = 0] = 0: no prompt reaches 0 "
               "at the read position; states 1 and 2 have the same column of A; Assumption 3.5 holds "
               "(B = {1, 3}, H* = {0, 1, 2}); mu = (1, -1, 0, 0)")
        return HMM.create(A, W, [F(1, 4)] * 4, [F(1), F(-1), F(0), F(0)]), how
    raise InputError(f"theorem {theorem!r}: the unreachable-state instances are for Theorems 3.3 and 3.6")


MAX_HIDDEN, MAX_VOCAB = 40, 20
KNOWN = {("3.3", "3.1"): "twin", ("3.6", "3.5"): "twin", ("3.3", "3.2"): "unreachable",
         ("3.6", "3.2"): "unreachable"}
"""(theorem, dropped assumption) pairs with a construction whose statement fails."""


def known_construction(theorem: str, drop: str, *, hidden: int | None = None, vocab: int | None = None,
                       seed: int | None = None) -> tuple[HMM, str] | None:
    """The constructed instance for ``(theorem, drop)``, or None when none is known. Sizes and
    seed apply to the twin-state family (default: the minimal fixed instance)."""
    kind = KNOWN.get((theorem, drop))
    if kind is None:
        return None
    for flag, value, hi in (("--hidden", hidden, MAX_HIDDEN), ("--vocab", vocab, MAX_VOCAB)):
        if value is not None and not 1 <= value <= hi:
            raise InputError(f"{flag} {value}: the constructed counterexamples take 1..{hi} (a certificate on "
                             "short sequences needs no more); leave it out for the minimal instance")
    if kind == "twin":
        sized = hidden is not None or vocab is not None or seed not in (None, 0)
        return twin_states_hmm(3 if hidden is None else hidden, 2 if vocab is None else vocab,
                               rng=np.random.default_rng(seed or 0) if sized else None)
    if hidden is not None or vocab is not None:
        raise InputError(f"--hidden/--vocab: the instance for Theorem {theorem} without {drop} has fixed sizes")
    return unreachable_state_hmm(theorem)
