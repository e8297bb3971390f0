"""Fields of a parsed certificate, each read strictly: canonical rationals, lists of a given
length, indices, tokens, prompts, the task ``mu``; and the comparisons of printed values with
recomputed ones (a printed number that differs is a false claim, exit 1; a value of the wrong
type is unreadable, exit 2)."""

from __future__ import annotations

import json
import re
from fractions import Fraction

from .outcomes import Rejected, Unreadable
from .reading import READER
from .work import LIMITS

__all__ = ["RATIONAL", "ZERO", "field", "rational", "of_list", "vector", "matrix", "size", "indices", "boolean",
           "tokens", "listed_rows", "known_keys", "task_rows", "same_value", "same_ints", "labels_printed",
           "prompt_vector", "distinct_rows"]


RATIONAL = re.compile(r"(-?)(0|[1-9][0-9]*)(?:/([1-9][0-9]*))?", re.ASCII)
"""Canonical numerals only: no leading zeros, no ``+``, no spaces; ``-0``, ``p/1`` and fractions
not in lowest terms are refused after the match (``str`` of a ``Fraction`` is canonical)."""


def field(d, key, where):
    if not isinstance(d, dict) or key not in d:
        raise Unreadable(f"{where}: missing field {key!r}")
    return d[key]


def rational(text, where) -> Fraction:
    """One rational from a string ``"-3/7"`` (ASCII digits only) or a JSON integer."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise Unreadable(f"{where}: expected a rational as a string like \"3/7\", found {str(text)[:40]!r}")
    if isinstance(text, int):
        return ZERO if text == 0 else Fraction(text)
    if text == "0":
        return ZERO
    match = RATIONAL.fullmatch(text)
    if match is None:
        raise Unreadable(f"{where}: {text[:40]!r} is not a rational \"p\" or \"p/q\" (ASCII digits)")
    sign, num, den = match.groups()
    if sign and num == "0":
        raise Unreadable(f"{where}: {text[:40]!r} is not canonical (write 0)")
    READER.digits(len(num), where)
    if den is None:
        return Fraction(-int(num) if sign else int(num))
    READER.digits(len(den), where)
    d = int(den)
    value = Fraction(-int(num) if sign else int(num), d)
    if value.denominator != d or d == 1:
        raise Unreadable(f"{where}: {text[:40]!r} is not in lowest terms with a denominator above 1 "
                         f"(write {value})"[:300])
    return value


ZERO = Fraction(0)


def of_list(v, n, where, what="entries"):
    if not isinstance(v, list) or (n is not None and len(v) != n):
        raise Unreadable(f"{where}: expected a list of {n} {what}")
    return v


def vector(v, n, where):
    return [rational(t, f"{where}[{i}]") for i, t in enumerate(of_list(v, n, where, "rationals"))]


def matrix(m, rows, cols, where):
    return [vector(r, cols, f"{where}[{i}]") for i, r in enumerate(of_list(m, rows, where, "rows"))]


def size(v, where, limit, low=1):
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= limit:
        raise Unreadable(f"{where}: expected an integer in {low}..{limit}")
    return v


def indices(v, n, where):
    """A list of distinct indices in ``0..n-1`` (sorted on return)."""
    v = of_list(v, None, where, "indices")
    if any(isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < n for h in v) or len(set(v)) != len(v):
        raise Unreadable(f"{where}: expected distinct indices in 0..{n - 1}")
    return sorted(v)


def boolean(v, where):
    if not isinstance(v, bool):
        raise Unreadable(f"{where}: expected true or false")
    return v


def tokens(seq, m, where):
    if not isinstance(seq, list) or not seq or len(seq) > LIMITS["length"]:
        raise Unreadable(f"{where}: expected a nonempty list of at most {LIMITS['length']} tokens")
    for z in seq:
        if isinstance(z, bool) or not isinstance(z, int) or not 0 <= z < m:
            raise Unreadable(f"{where}: expected tokens in 0..{m - 1}")
    return tuple(seq)


def listed_rows(v, where):
    v = of_list(v, None, where, "rows")
    if len(v) > LIMITS["rows"]:
        raise Unreadable(f"{where}: {len(v)} rows, over the limit of {LIMITS['rows']}")
    return v


def known_keys(d, allowed, where):
    if not isinstance(d, dict):
        raise Unreadable(f"{where}: expected an object")
    extra = sorted(set(d) - set(allowed))
    if extra:
        raise Unreadable(f"{where}: unknown field {extra[0]!r}")


def task_rows(value, n, where):
    """``mu``: a vector (binary task) or ``k >= 2`` rows. Returns ``(rows, binary)``."""
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        if not 2 <= len(value) <= LIMITS["classes"]:
            raise Unreadable(f"{where}: a task with several classes has 2..{LIMITS['classes']} rows")
        return matrix(value, len(value), n, where), False
    return [vector(value, n, where)], True


def same_value(printed, num, den, where, what):
    """The printed rational equals ``num / den`` (``den > 0``), or ``0`` when ``den = 0``."""
    p = rational(printed, where)
    if (den == 0 and p != 0) or (den != 0 and p.numerator * den != num * p.denominator):
        value = Fraction(0) if den == 0 else Fraction(num, den)
        shown = str(value) if len(str(value.denominator)) < 60 else f"a rational with a {len(str(value.denominator))}-digit denominator"
        raise Rejected(f"{where}: {what} is {shown}, not the printed value")


def same_ints(printed, values) -> bool:
    """A printed list of integers (booleans are not integers) equal to ``values``."""
    return (isinstance(printed, list) and len(printed) == len(values)
            and all(type(p) is int and p == v for p, v in zip(printed, values)))


def labels_printed(row, star, got, where):
    for key, value in (("F_star", star), ("F", got)):
        v = field(row, key, where)
        if isinstance(v, bool) or not isinstance(v, int):     # a type error, not a false claim
            raise Unreadable(f"{where}.{key}: expected a JSON integer label, found {json.dumps(v)[:20]}")
        if v != value:
            raise Rejected(f"{where}: labels: {key} is {value}, not the printed {v}")


def prompt_vector(value, n, where):
    u = vector(value, n, where)
    if any(not 0 <= v <= 1 for v in u):
        raise Rejected(f"{where}: a prompt entry is outside [0, 1]")
    return u


def distinct_rows(rows, seqs, where="sequences"):
    """``(rows, seqs, repeated)`` with every sequence once: a row repeating an earlier row's
    sequence must repeat it exactly (else one of the two prints a false value: rejected) and is
    then collapsed, so every count of an accepted line counts distinct sequences."""
    first, keep = {}, []
    for k, seq in enumerate(seqs):
        j = first.setdefault(seq, k)
        if j == k:
            keep.append(k)
        elif rows[k] != rows[j]:
            raise Rejected(f"{where}[{k}] repeats the sequence of {where}[{j}] with other printed values")
    return [rows[k] for k in keep], [seqs[k] for k in keep], len(seqs) - len(keep)
