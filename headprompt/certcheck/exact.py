"""Exact integer arithmetic shared by every claim: scaling rationals to integers over one common
denominator, rank by fraction-free elimination, checking a left inverse, the label rule, and
the test that a column is a probability distribution."""

from __future__ import annotations

import math

from .outcomes import Rejected, Unreadable
from .work import LIMITS, METER, digits, fraction_ops, int_ops

__all__ = ["scaled", "scaled_rows", "rank", "left_inverse_ok", "label", "stochastic", "vector_sum"]


def scaled(values):
    """``(ints, D)`` with ``values[i] = ints[i] / D``, ``D`` the lcm of the denominators."""
    D = 1
    for v in values:
        if v.denominator != 1:
            D = math.lcm(D, v.denominator)
            if D.bit_length() > LIMITS["number_digits"] * 4:
                raise Unreadable("a common denominator is over the digit limit")
    return [v.numerator * (D // v.denominator) for v in values], D


def scaled_rows(rows):
    flat, D = scaled([v for r in rows for v in r])
    width = len(rows[0]) if rows else 0
    return [flat[i * width:(i + 1) * width] for i in range(len(rows))], D


def rank(columns) -> int:
    """Rank of rational column vectors (fraction-free elimination on integers)."""
    rows = [scaled(c)[0] for c in columns if any(c)]
    r = 0
    width = len(rows[0]) if rows else 0
    for col in range(width):
        pivot = next((i for i in range(r, len(rows)) if rows[i][col]), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        p = rows[r]
        size = max(digits(max(row, key=abs)) for row in rows[r:])      # the integers grow as it eliminates
        METER.charge(3 * (int_ops(2 * (len(rows) - r - 1) * width, size, size) + fraction_ops(len(rows) - r - 1, size)),
                     "an exact rank")        # three times: measured, an elimination step is slower per unit
        for i in range(r + 1, len(rows)):
            f = rows[i][col]
            if f:
                row = [p[col] * rows[i][k] - f * p[k] for k in range(width)]
                g = math.gcd(*row)
                rows[i] = [v // g for v in row] if g > 1 else row
        r += 1
    return r


def vector_sum(terms, width: int, what: str):
    """``(num, den)`` with ``sum_k num_k / den_k = num / den`` for integer vectors ``num_k`` of
    ``width`` entries and positive integers ``den_k``, ``den > 0``; summed pairwise (a tree), so
    the integers reach the size of the whole sum only at the top: the work is that of the final
    size (times the depth), not the number of terms times it, as a running sum's would be."""
    terms = list(terms)
    if not terms:
        return [0] * width, 1
    while len(terms) > 1:
        merged = []
        for (a, da), (b, db) in zip(terms[::2], terms[1::2]):
            METER.charge(int_ops(2 * width + 1, max(digits(da), digits(max(a, key=abs))),
                                 max(digits(db), digits(max(b, key=abs)))), what)
            merged.append(([x * db + y * da for x, y in zip(a, b)], da * db))
        terms = merged + terms[len(merged) * 2:]
    return terms[0]


def left_inverse_ok(L, columns) -> bool:
    """``L C = I`` exactly, for ``C`` given by its columns (rationals)."""
    if len(L) != len(columns):
        return False
    Li, DL = scaled_rows(L)
    Ci, DC = scaled_rows(columns)
    one = DL * DC
    METER.charge(int_ops(len(Li) * len(Ci) * len(Ci[0] if Ci else ()), max(map(digits, (DL, DC))),
                         max(map(digits, (DL, DC)))), "checking a left inverse")
    for a, row in enumerate(Li):
        for b, col in enumerate(Ci):
            if sum(x * y for x, y in zip(row, col) if x) != (one if a == b else 0):
                return False
    return True


def label(scores, binary: bool) -> int:
    """``1(s >= 0)`` for one binary score; else the argmax with ties to the largest class."""
    if binary:
        return 1 if scores[0] >= 0 else 0
    top = max(scores)
    return max(c for c, s in enumerate(scores) if s == top)


def stochastic(ints, D, where):
    if any(v < 0 for v in ints) or sum(ints) != D:
        raise Rejected(f"{where} is not a probability distribution")
