"""Exact numbers: parsing, conversion and printing of rationals.

Exact mode represents every value as :class:`fractions.Fraction` (in numpy ``object`` arrays);
python-flint types are used inside the fast kernels only. JSON numbers are read as exact
decimals (``0.1`` is ``1/10``) and strings ``"p/q"`` as rationals (SPEC section 2).
"""

from __future__ import annotations

import math
import operator
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import ExactnessError, InputError
from .limits import MAX_DIGITS

__all__ = ["short_numbers", "shown_exact", "decimal_digits", "to_fraction", "fraction_array", "format_fraction", "format_array",
           "round_to_denominator", "denominator_for", "common_denominator", "is_exact_array",
           "ascii_number_text", "float_or_inf", "float64_array", "describe_magnitude"]

# The number grammar of instance files and flags (SPEC section 2), ASCII only: Python's int() and
# Decimal() would also read Arabic-Indic or fullwidth digits, "3_0" and " 1 " (and int() "1 / 3"
# around the slash), which no other tool reads as these numbers.
_DECIMAL_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RATIO_TEXT = re.compile(r"[+-]?[0-9]+/[+-]?[0-9]+")
_DENOMINATOR = operator.attrgetter("denominator")


def ascii_number_text(text: str, *, name: str = "value") -> str:
    """``text`` itself when it is an ASCII decimal (``"0.25"``, ``"-3"``, ``"1e-3"``) or ratio
    ``"p/q"``: digits ``0-9`` only, no spaces, underscores or other scripts' digits.

    >>> ascii_number_text("-1/3")
    '-1/3'
    >>> ascii_number_text("\uff13")
    Traceback (most recent call last):
    ...
    headprompt.models.exceptions.ExactnessError: value: cannot read '\\uff13' as a number: only ASCII digits 0-9, an optional sign, '.', an exponent or one '/' (no spaces, underscores or other digits)

    Raises:
        ExactnessError: (an :class:`InputError`) for any other text, in one line.
    """
    if _DECIMAL_TEXT.fullmatch(text) or _RATIO_TEXT.fullmatch(text):
        return text
    raise ExactnessError(f"{name}: cannot read {ascii(text)} as a number: only ASCII digits 0-9, an optional sign, "
                         "'.', an exponent or one '/' (no spaces, underscores or other digits)")


def to_fraction(value: Any, *, name: str = "value") -> Fraction:
    """Read ``value`` exactly as a rational.

    Accepts ``int``, ``Fraction``, ``Decimal``, ASCII strings ``"p/q"``, ``"p"`` or decimal strings
    ``"0.25"`` (:func:`ascii_number_text`: no spaces, underscores or non-ASCII digits), numpy
    integers, and python-flint ``fmpq``/``fmpz``. Floats are refused (their binary value is
    rarely what was meant); read JSON with ``parse_float=Decimal`` instead.

    >>> to_fraction("3/6"), to_fraction(Decimal("0.1"))
    (Fraction(1, 2), Fraction(1, 10))

    Raises:
        ExactnessError: for floats, NaN, infinities or unparsable strings.
    """
    if isinstance(value, bool):
        raise ExactnessError(f"{name}: expected a number, found a boolean {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ExactnessError(f"{name}: expected a finite number, found {value}")
        return Fraction(value)
    if isinstance(value, str):
        text = ascii_number_text(value, name=name)
        try:
            if "/" in text:
                num, den = text.split("/")
                result = Fraction(int(num), int(den))
            else:
                dec = Decimal(text)
                if not dec.is_finite():
                    raise ExactnessError(f"{name}: expected a finite number, found {value!r}")
                result = Fraction(dec)
        except (ValueError, ZeroDivisionError, InvalidOperation):
            raise ExactnessError(f"{name}: cannot read {value!r} as a rational "
                                 "(use an integer, a decimal or 'p/q')") from None
        return result
    type_name = type(value).__name__
    if type_name in ("fmpq", "fmpz"):
        return Fraction(int(value.p), int(value.q)) if type_name == "fmpq" else Fraction(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ExactnessError(f"{name}: expected a finite number, found {value}")
        raise ExactnessError(f"{name}: found the float {value!r} where an exact value is "
                             "required; give a decimal string or 'p/q', or convert explicitly")
    if isinstance(value, np.integer):
        return Fraction(int(value))
    raise InputError(f"{name}: expected a number, found {type_name} {value!r}")


def fraction_array(values: Any, *, name: str = "array") -> np.ndarray:
    """A numpy ``object`` array of :class:`Fraction` from nested lists of exact numbers.

    Raises:
        InputError: ragged nesting or non-numeric entries; ExactnessError for floats.
    """
    try:
        arr = np.array(values, dtype=object)
    except ValueError:
        raise InputError(f"{name}: rows have different lengths (ragged nesting)") from None
    if arr.ndim == 0:
        raise InputError(f"{name}: expected nested lists or an array of numbers, found "
                         f"{type(values).__name__} {values!r}")
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        if isinstance(v, (list, tuple)):
            raise InputError(f"{name}: rows have different lengths (ragged nesting)")
        out[idx] = to_fraction(v, name=f"{name}{list(idx)}")
    return out


def is_exact_array(arr: np.ndarray) -> bool:
    """True when ``arr`` is an object array whose entries are all Fractions."""
    return arr.dtype == object and all(isinstance(v, Fraction) for v in arr.flat)


def format_fraction(value: Fraction) -> str:
    """``"p/q"``, or ``"p"`` for integers (SPEC section 4).

    >>> format_fraction(Fraction(-2, 4)), format_fraction(Fraction(3))
    ('-1/2', '3')
    """
    value = Fraction(value)
    p, q = value.numerator, value.denominator
    if max(p.bit_length(), q.bit_length()) > 4096:      # CPython's int -> str is quadratic: flint's is not
        import flint

        p, q = flint.fmpz(p), flint.fmpz(q)
    return str(p) if q == 1 else f"{p}/{q}"


def format_array(arr: Any) -> Any:
    """Nested lists of ``"p/q"`` strings for an exact array, of floats for a float array."""
    arr = np.asarray(arr)
    if arr.dtype == object:
        return np.vectorize(format_fraction, otypes=[object])(arr).tolist() if arr.size else arr.tolist()
    return arr.astype(float).tolist()


def common_denominator(values: Any) -> int:
    """The least common multiple of the denominators of an iterable of Fractions.

    >>> common_denominator([Fraction(1, 4), Fraction(1, 6), 3])
    12
    """
    flat = np.asarray(values, dtype=object).ravel().tolist()
    if set(map(type, flat)) <= {Fraction}:          # the common case: one attribute read each
        dens = set(map(_DENOMINATOR, flat))
    else:
        dens = {v.denominator if isinstance(v, Fraction) else Fraction(v).denominator for v in flat}
    return math.lcm(*dens) if dens else 1


def denominator_for(length: int, base: int) -> int:
    """The denominator for rationalizing a probability vector of ``length`` entries: ``base``
    while ``length <= base / 4``, else the next multiple of ``base`` giving at least four units
    per entry, so a long vector keeps distinct, positive entries (``|H| = 1000``, ``|X| = 1000``).

    >>> denominator_for(25, 100), denominator_for(100, 100), denominator_for(1000, 100)
    (100, 400, 4000)
    """
    if 4 * length <= base:
        return base
    return base * -(-4 * length // base)


def round_to_denominator(probs: np.ndarray, max_denominator: int, *, axis: int = 0) -> np.ndarray:
    """Rationalize nonnegative float probability vectors along ``axis``, summing to exactly 1.

    Each vector ``p`` becomes ``round(p * D) / D`` with ``D = max_denominator``, the rounding
    error moved onto the largest entry; entries that were positive stay positive (at least
    ``1/D``) and zeros stay zero, so the support is kept.

    >>> round_to_denominator(np.array([0.5, 0.3333, 0.1667]), 12).tolist()
    [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]

    Raises:
        InputError: negative or non-finite entries, a zero vector, or a denominator smaller
            than the support size.
    """
    probs = np.asarray(probs, dtype=float)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise InputError("round_to_denominator: entries must be finite and nonnegative")
    moved = np.moveaxis(probs, axis, -1)
    out = np.empty(moved.shape, dtype=object)
    # every entry is c / D for a count 0 <= c <= D: one Fraction per distinct count, shared
    # (Fractions are immutable), instead of one normalising construction per entry
    units: dict[int, Fraction] = {}

    def unit(c: int) -> Fraction:
        u = units.get(c)
        if u is None:
            u = units[c] = Fraction(c, max_denominator)
        return u
    for idx in np.ndindex(moved.shape[:-1]):
        p = moved[idx]
        total = p.sum()
        if total <= 0:
            raise InputError("round_to_denominator: a vector is all zero")
        support = p > 0
        if support.sum() > max_denominator:
            raise InputError(f"round_to_denominator: support {int(support.sum())} exceeds "
                             f"the denominator {max_denominator}")
        counts = np.where(support, np.maximum(np.rint(p / total * max_denominator), 1), 0).astype(np.int64)
        while counts.sum() != max_denominator:
            diff = max_denominator - counts.sum()
            j = int(np.argmax(np.where(counts > 1, counts, 0) if diff < 0 else counts))
            step = max(diff, 1 - counts[j]) if diff < 0 else diff
            counts[j] += step
        out[idx] = [units[c] if c in units else unit(c) for c in counts.tolist()]
    return np.moveaxis(out, -1, axis)


def float_or_inf(value: Any) -> float:
    """``float(value)`` rounded once, with IEEE overflow: a rational beyond float64's range is
    ``inf`` or ``-inf`` (as ``float("3e500")`` reads), never an ``OverflowError``; one below its
    smallest subnormal becomes ``0.0``. Callers that need every value held test the result
    (:func:`float64_array`)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


LONG_BITS = int(MAX_DIGITS * math.log2(10))    # below this many bits an integer has at most MAX_DIGITS digits


def decimal_digits(n: int) -> int:
    """Decimal digits of ``abs(n)``, without ``str`` (Python refuses it past 4,300 digits)."""
    n = abs(n)
    d = max(1, int(n.bit_length() * math.log10(2)))
    while 10 ** d <= n:
        d += 1
    while d > 1 and 10 ** (d - 1) > n:
        d -= 1
    return d


def _too_long_to_print(v: Any) -> bool:
    return (isinstance(v, (int, Fraction)) and not isinstance(v, bool)
            and max(v.numerator.bit_length(), v.denominator.bit_length()) >= LONG_BITS)


def _sizes(v) -> str:
    num, den = v.numerator, v.denominator
    sign = "a negative" if num < 0 else "an" if den == 1 else "a"
    if den == 1:
        return f"{sign} integer of {decimal_digits(num)} digits"
    return f"{sign} rational with a {decimal_digits(num)}-digit numerator and a {decimal_digits(den)}-digit denominator"


def shown_exact(v: Any) -> str:
    """``v`` in a message: ``str(v)``; a long rational by a few significant digits and its size
    (:func:`short_numbers`); one too long to print by its sizes (``an integer of 5001 digits``)."""
    return _sizes(v) if _too_long_to_print(v) else short_numbers(str(v))


_LONG_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?:/(\d+))?(?![\w.])")


def short_numbers(text: str, *, longest: int = 48) -> str:
    """``text`` with every number (integer, decimal or ``p/q``) longer than ``longest``
    characters shown by a few significant digits and its size, so that one message line stays
    readable: a float instance read exactly (``5e-324`` is a 324-digit decimal) can make a column
    sum a fraction of hundreds of digits (:func:`shown_exact`).

    >>> short_numbers("sums to " + "1" + "0" * 29 + "1/" + "1" + "0" * 30 + ", expected exactly 1")
    'sums to about 1.000000000 (1 + 1.00E-30, a 31/31-digit fraction), expected exactly 1'
    """
    from decimal import localcontext

    def decimal(value: Fraction, digits: int) -> Decimal:
        with localcontext() as ctx:
            ctx.prec = digits
            return Decimal(value.numerator) / Decimal(value.denominator)

    def shorten(m: re.Match) -> str:
        whole = m.group(0)
        if len(whole) <= longest:
            return whole
        parts = [g for g in m.groups() if g]
        if max(len(g) for g in parts) <= MAX_DIGITS:    # (beyond: int() may refuse the text)
            try:
                return approximate(*m.groups())
            except (ValueError, ArithmeticError):
                pass
        return f"{whole[:12]}...{whole[-8:]} ({len(whole)} characters)"

    def approximate(num: str, den: str | None) -> str:
        if not den:
            size = len(num.lstrip("-").replace(".", ""))
            return f"{decimal(Fraction(num), 10):.9E} (a {size}-digit number)"
        if not int(den):
            raise ValueError("a zero denominator")
        value = Fraction(int(num), int(den))
        near = round(value) if abs(value) < 2 ** 53 else None
        rest = value - near if near is not None else None
        what = f"a {len(num.lstrip('-'))}/{len(den)}-digit fraction"
        if near is not None and rest == 0:
            return f"{near} ({what})"
        if near is not None and abs(rest) < Fraction(1, 10 ** 6):
            sign = "+" if rest > 0 else "-"
            return f"about {decimal(value, 10):f} ({near} {sign} {decimal(abs(rest), 3):.2E}, {what})"
        return f"about {decimal(value, 10):.10G} ({what})"

    return _LONG_NUMBER.sub(shorten, text)



def describe_magnitude(v: Fraction) -> str:
    """A rational as ``p/q`` when short, as ``about 1eN`` when long, and by its sizes when too
    long to print (messages about huge or tiny values)."""
    if _too_long_to_print(v):
        return _sizes(v)
    text = format_fraction(v)
    if len(text) <= 30:
        return text
    exponent = len(str(abs(v.numerator))) - len(str(v.denominator))     # 10^(e-1) <= |v| < 10^(e+1)
    return f"{'-' if v < 0 else ''}about 1e{exponent}"


def float64_array(values: Any, name: str, *, hint: str = "use --mode exact, which reads it exactly") -> np.ndarray:
    """Exact values as float64, refusing what float64 cannot hold: a value beyond its range
    (``1e400``) or a nonzero value that would become 0 (``1e-400``, which would change a support
    or a task and so the model).

    Raises:
        ValidationError: naming the entry (``name[i, j]``), the value and ``hint``.
    """
    from ..exceptions import ValidationError

    exact = fraction_array(values, name=name)
    out = np.empty(exact.shape, dtype=float)
    for idx, v in np.ndenumerate(exact):
        f = float_or_inf(v)
        if math.isinf(f):
            raise ValidationError(f"{name}{list(idx)}: {describe_magnitude(v)} is beyond the float64 range (about 1.8e308); "
                                  f"{hint}")
        if f == 0.0 and v != 0:
            raise ValidationError(f"{name}{list(idx)}: {describe_magnitude(v)} would become 0 in float64 (below about "
                                  f"4.9e-324), changing the model; {hint}")
        out[idx] = f
    return out
