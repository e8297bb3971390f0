"""The three outcomes other than acceptance: a false claim (exit 1), a vacuous one (exit 1) and
an unreadable file (exit 2). Every module of the checker raises only these."""

from __future__ import annotations

__all__ = ["Accepted", "Rejected", "Vacuous", "Unreadable"]


class Rejected(Exception):
    """A claim of the certificate does not hold (the message names it). Exit 1."""


class Vacuous(Rejected):
    """The claim would hold only vacuously (nothing it could have failed on). Exit 1."""


class Unreadable(Exception):
    """The certificate cannot be read: over a limit, not strict JSON, a field missing or malformed. Exit 2."""


class Accepted(str):
    """An accepted line (a ``str``), carrying the sets of sequences the claim is about, for
    :mod:`.separation`: ``covers`` the distinct sequences on which a witness is proven to give
    ``F = F*`` (``every`` when that is every sequence with ``Pr(x) > 0``, by an identity), and
    ``lists`` the distinct sequences a no-linear-head claim lists (each with ``Pr(x) > 0``)."""

    covers: frozenset = frozenset()
    every: bool = False
    lists: frozenset = frozenset()

    def __new__(cls, line: str, covers=(), every: bool = False, lists=()):
        self = super().__new__(cls, line)
        self.covers, self.every, self.lists = frozenset(covers), every, frozenset(lists)
        return self

    def said(self, line: str) -> "Accepted":
        """Another line about the same sets."""
        return Accepted(line, self.covers, self.every, self.lists)
