"""Where the families' choices come from (:class:`Chooser`: :class:`RandomChooser` from a numpy
generator, or Hypothesis draws that shrink) and the exact stochastic columns built from those
integer choices (positive on a support, or *anchored*: strictly diagonally dominant on their own
token), shared by :mod:`.families` and :mod:`.memory_families`."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, Sequence

import numpy as np

from ..exceptions import InputError

__all__ = ["Chooser", "RandomChooser"]


class Chooser(Protocol):
    """Where a maker's choices come from: ``integer(lo, hi)`` returns an int in ``lo..hi``."""

    def integer(self, lo: int, hi: int) -> int: ...


@dataclass
class RandomChooser:
    """Choices from a numpy generator (uniform integers)."""

    rng: np.random.Generator

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


# ---------------------------------------------------------------- small helpers

def _pick(ch: Chooser, options: Sequence) -> Any:
    return options[ch.integer(0, len(options) - 1)]


def _order(ch: Chooser, n: int) -> list[int]:
    """A permutation of ``0..n-1`` (Fisher-Yates; all choices 0 give the identity)."""
    rest, out = list(range(n)), []
    while rest:
        out.append(rest.pop(ch.integer(0, len(rest) - 1)))
    return out


def _normalise(weights: Sequence[int]) -> list[Fraction]:
    total = sum(weights)
    return [Fraction(w, total) for w in weights]


def _column(ch: Chooser, size: int, support: Sequence[int], max_weight: int, *,
            extra: Sequence[int] = ()) -> list[Fraction]:
    """A stochastic column positive on ``support`` (weights ``1..max_weight``) and with
    optional entries on ``extra`` (weights ``0..max_weight``; 0 leaves them out)."""
    w = [0] * size
    for k in support:
        w[k] = ch.integer(1, max_weight)
    for k in extra:
        if k not in support:
            w[k] = ch.integer(0, max_weight)
    return _normalise(w)


def _anchored(ch: Chooser, size: int, anchor: int, max_weight: int, allowed: Sequence[int] | None = None
              ) -> list[Fraction]:
    """A column with weight ``K`` on ``anchor`` and small weights on ``allowed`` (default: every
    row), ``K`` larger than the sum of the others (strict diagonal dominance)."""
    rows = range(size) if allowed is None else allowed
    w = [0] * size
    for k in rows:
        if k != anchor:
            w[k] = ch.integer(0, max_weight)
    w[anchor] = sum(w) + ch.integer(1, max_weight)
    return _normalise(w)


def _task_value(ch: Chooser, nonzero: bool) -> Fraction:
    if nonzero:
        v = ch.integer(1, 6)
        return Fraction(v if v <= 3 else 3 - v)             # 1, 2, 3, -1, -2, -3
    return Fraction(ch.integer(-3, 3))


def _to_kind(arr, exact: bool):
    arr = np.array(arr, dtype=object)
    return arr if exact else arr.astype(float)


def _check_size(name: str, value: int, lo: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise InputError(f"{name}: expected an integer >= {lo}, found {value!r}")
