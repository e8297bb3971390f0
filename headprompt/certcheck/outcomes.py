"""The three outcomes other than acceptance: a false claim (exit 1), a vacuous one (exit 1) and
an unreadable file (exit 2). Every module of the checker raises only these."""

from __future__ import annotations

__all__ = ["Rejected", "Vacuous", "Unreadable"]


class Rejected(Exception):
    """A claim of the certificate does not hold (the message names it). Exit 1."""


class Vacuous(Rejected):
    """The claim would hold only vacuously (nothing it could have failed on). Exit 1."""


class Unreadable(Exception):
    """The certificate cannot be read: over a limit, not strict JSON, a field missing or malformed. Exit 2."""
