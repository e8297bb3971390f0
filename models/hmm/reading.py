"""Reading user input into arrays, before a model is built: the sizes a dense model may have,
decided from the shapes alone (:data:`DENSE_MAX_STATES`, :data:`DENSE_MAX_ENTRIES`), numbers
past the digit limit refused before they are expanded, and :func:`as_array`, which turns nested
lists or arrays into a fresh exact (``Fraction`` object) or float64 array. The model-side
checks and the arrays a model owns are in :mod:`.arrays`."""

from __future__ import annotations

import itertools
import math
import operator
import os
from contextlib import contextmanager
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import ExactnessError, InputError, LimitError, ValidationError
from .limits import MAX_DIGITS, MAX_NESTING, MAX_NPZ_ENTRIES, check_string_number, number_digits
from .rational import LONG_BITS, decimal_digits, float64_array, fraction_array

__all__ = ["as_array", "check_dense_size", "check_memory_size", "check_path", "DENSE_MAX_STATES",
           "DENSE_MAX_ENTRIES"]

DENSE_MAX_STATES = {"exact": 2000, "float": 16384}
"""Hidden states of a dense :class:`~.values.HMM` built by ``HMM.create``, per kind: exact (one
``Fraction`` per entry; the same limit as an ``.npz`` instance read whole,
:data:`~.files.NPZ_MAX_DENSE_STATES`) and float64 (the largest ``verify theorem --hidden``, the
language-model scale ``2^14``). Larger models are held sparse: :class:`~.large.LargeHMM`."""

DENSE_MAX_ENTRIES = {"exact": 8_000_000, "float": MAX_NPZ_ENTRIES}
"""Entries of ``A``, ``W``, ``pi0`` and ``mu`` together: exact, 2,000 states with as many tokens
(about 13 s and 0.7 GB of Fractions); float64, what an ``.npz`` instance may hold."""

_SEQUENCES = (list, tuple)
_NO_BUDGET = float("inf")
_NUMERATOR = operator.attrgetter("numerator")
_DENOMINATOR = operator.attrgetter("denominator")
_UNSET: Any = object()


def _input_shape(values: Any, name: str, budget: int) -> tuple[tuple[int, ...], int]:
    """The shape ``values`` claims (lengths along first elements, or an array's ``shape``) and
    its number of entries, read without converting anything. A walk over nested lists and tuples
    counts the entries (stopping once past ``budget``) and refuses nesting deeper than
    :data:`~.limits.MAX_NESTING` and a list that contains itself (numpy would recurse forever).

    Raises:
        InputError: a self-containing or too deeply nested list.
    """
    if not isinstance(values, _SEQUENCES):
        shape = getattr(values, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                            for d in shape):
            dims = tuple(int(d) for d in shape)
            return dims, math.prod(dims)
        return (), 1
    entries = 0
    path = {id(values)}
    stack = [(values, None)]
    while stack:
        container, items = stack[-1]
        if items is None:                          # first visit: plain rows are counted in bulk (C loops)
            kinds = set(map(type, container))
            flat = not any(issubclass(t, _SEQUENCES) or issubclass(t, np.ndarray) for t in kinds)
            if not flat and all(issubclass(t, _SEQUENCES) for t in kinds) and path.isdisjoint(map(id, container)):
                inner = set(map(type, itertools.chain.from_iterable(container)))
                if not any(issubclass(t, _SEQUENCES) or issubclass(t, np.ndarray) for t in inner):
                    entries += sum(map(len, container))            # a matrix of plain rows
                    flat = True
            elif flat:
                entries += len(container)
            if flat:
                path.discard(id(container))
                stack.pop()
                if entries > budget:
                    break
                continue
            items = iter(container)
            stack[-1] = (container, items)
        child = next(items, _UNSET)
        if child is _UNSET:
            path.discard(id(container))
            stack.pop()
        elif isinstance(child, _SEQUENCES):
            if id(child) in path:
                raise InputError(f"{name}: a list that contains itself (a cycle in the nesting); expected "
                                 "nested lists of numbers")
            if len(stack) >= MAX_NESTING:
                raise InputError(f"{name}: nested more than {MAX_NESTING} deep; expected nested lists of numbers "
                                 "(at most 3 levels)")
            path.add(id(child))
            stack.append((child, None))
        else:
            entries += child.size if isinstance(child, np.ndarray) else 1
            if entries > budget:
                break
    dims: list[int] = []
    v = values
    while len(dims) <= MAX_NESTING:
        if isinstance(v, _SEQUENCES):
            dims.append(len(v))
            if not v:
                break
            v = v[0]
        else:
            if isinstance(v, np.ndarray):
                dims.extend(int(d) for d in v.shape)
            break
    return tuple(dims), entries


def check_dense_size(arrays: dict[str, Any], *, exact: bool, what: str = "HMM.create") -> None:
    """Refuse, from the sizes alone (nothing converted or allocated), a dense model beyond
    :data:`DENSE_MAX_STATES` hidden states (the rows of ``A``) or :data:`DENSE_MAX_ENTRIES`
    entries of all ``arrays`` together (``None`` values are skipped).

    Raises:
        LimitError: naming the size, the limit and the sparse way to larger models;
        InputError: a list that contains itself, or nested too deeply.
    """
    kind = "exact" if exact else "float"
    cap_states, cap_entries = DENSE_MAX_STATES[kind], DENSE_MAX_ENTRIES[kind]
    larger = ("; larger models are held sparse: headprompt.models.hmm.large.LargeHMM.create(A, dA, W, dW, pi0, "
              "dpi, mu) (integer numerators over per-column denominators), saved and checked as an .npz instance")
    total = 0
    for name, values in arrays.items():
        if values is None:
            continue
        shape, entries = _input_shape(values, name, cap_entries - total)
        total += entries
        if name == "A" and shape and shape[0] > cap_states:
            shown = " x ".join(str(d) for d in shape)
            raise LimitError(f"{what}: A is {shown}, {shape[0]} hidden states; a dense {kind} HMM holds at most "
                             f"{cap_states} states{' (one Fraction per entry)' if exact else ''}"
                             + ("; exact=False allows " + str(DENSE_MAX_STATES['float']) if exact else "") + larger)
        if total > cap_entries:
            raise LimitError(f"{what}: more than {cap_entries:,} entries in {', '.join(k for k in arrays if arrays[k] is not None)} "
                             f"together; that is the limit for a dense {kind} HMM"
                             + (" (one Fraction per entry)" if exact else "") + larger)


def check_memory_size(cells: int, memory_values: int, syntax_states: int, arrays: dict[str, Any], *,
                      exact: bool, expand_prior: bool, what: str = "MemoryHMM.create") -> None:
    """Refuse, from the sizes alone (nothing converted, expanded or allocated), a memory HMM
    beyond the caps of a dense HMM (:data:`DENSE_MAX_STATES`, :data:`DENSE_MAX_ENTRIES`):
    ``|H| = cells x syntax_states`` hidden states, the joint prior's ``|M|^N`` entries (given as
    ``pM`` or expanded from ``pM_cells``: ``expand_prior``; never computed past the cap, so
    ``cells = 10**9`` is cheap), and the entries of all ``arrays`` together, the expanded prior
    included.

    Raises:
        LimitError: naming the size and the limit; InputError: a self-containing or too deeply
            nested list.
    """
    kind = "exact" if exact else "float"
    cap_states, cap_entries = DENSE_MAX_STATES[kind], DENSE_MAX_ENTRIES[kind]
    fraction = " (one Fraction per entry)" if exact else ""
    a_kind = "an exact" if exact else "a float"
    states = cells * syntax_states if cells <= cap_states and syntax_states <= cap_states else cap_states + 1
    if states > cap_states:
        raise LimitError(f"{what}: cells x syntax_states = {cells} x {syntax_states} hidden states; {a_kind} "
                         f"memory HMM holds at most {cap_states}{fraction}")
    joint = 1
    for _ in range(cells):                            # |M|^N, stopping once past the cap
        joint *= memory_values
        if joint > cap_entries:
            break
    if joint > cap_entries:
        magnitude = cells * math.log10(max(memory_values, 1))
        shown = f"{memory_values ** cells:,}" if magnitude < 18 else f"about 10^{int(magnitude)}"
        source = (f"pM_cells ({cells} cells x {memory_values} memory values) expands to" if expand_prior
                  else f"{cells} cells of {memory_values} memory values need")
        raise LimitError(f"{what}: {source} a joint prior pM of |M|^N = {memory_values}^{cells} = {shown} entries; "
                         f"{a_kind} memory HMM holds at most {cap_entries:,} entries in all{fraction} (use fewer "
                         "cells or memory values)")
    total = joint if expand_prior else 0
    for name, values in arrays.items():
        if values is None:
            continue
        _, entries = _input_shape(values, name, cap_entries - total)
        total += entries
        if total > cap_entries:
            given = ", ".join(k for k in arrays if arrays[k] is not None)
            raise LimitError(f"{what}: more than {cap_entries:,} entries in {given}"
                             + (" and the expanded joint prior" if expand_prior else "")
                             + f" together; that is the limit for {a_kind} memory HMM{fraction}")


_TEN_TO_MAX_DIGITS = 10 ** MAX_DIGITS


def _too_long(v: Any) -> bool:
    """Whether ``v`` (an entry as given) needs more than :data:`~.limits.MAX_DIGITS` digits
    exactly (an integer, a Fraction's numerator or denominator, a Decimal, a numeric string)."""
    t = type(v)
    if t is float:
        return False
    if isinstance(v, int) and not isinstance(v, bool):
        return v.bit_length() >= LONG_BITS and abs(v) >= _TEN_TO_MAX_DIGITS
    if isinstance(v, Fraction):
        return _too_long(v.numerator) or _too_long(v.denominator)
    if isinstance(v, Decimal):
        return v.is_finite() and number_digits(v) > MAX_DIGITS
    if isinstance(v, str):
        try:
            check_string_number(v, where="")
        except LimitError:
            return True
    return False


def _check_digits(arr: np.ndarray, name: str) -> None:
    """Refuse, before any value is expanded or printed, an entry of the object array ``arr``
    whose exact value needs more than :data:`~.limits.MAX_DIGITS` digits (the limit of instance
    files: ``10**5000``, ``"1e-5000"`` or ``"1e999999999"``).

    Raises:
        LimitError: naming the entry, its size and the limit.
    """
    flat = arr.ravel().tolist()
    kinds = set(map(type, flat))
    if kinds <= {float, bool}:
        return
    if kinds <= {int, Fraction} and flat:       # the common case, in C loops: the longest part's bits
        longest = max(max(map(int.bit_length, map(_NUMERATOR, flat))),
                      max(map(int.bit_length, map(_DENOMINATOR, flat))))
        if longest < LONG_BITS:
            return
    bad = next((i for i, v in enumerate(flat) if _too_long(v)), None)
    if bad is None:
        return
    where = f"{name}{[int(i) for i in np.unravel_index(bad, arr.shape)]}" if arr.ndim else name
    v = flat[bad]
    if isinstance(v, str):
        check_string_number(v, where=where)
    if isinstance(v, Decimal):
        raise LimitError(f"{where}: a decimal that would need {number_digits(v)} digits exactly; the limit is "
                         f"{MAX_DIGITS} digits per number (scale the values down or write 'p/q')")
    if isinstance(v, Fraction):
        part, n = ("numerator", v.numerator) if _too_long(v.numerator) else ("denominator", v.denominator)
        raise LimitError(f"{where}: a rational whose {part} has {decimal_digits(n)} digits; the limit is {MAX_DIGITS} "
                         "digits per number")
    raise LimitError(f"{where}: an integer of {decimal_digits(v)} digits; the limit is {MAX_DIGITS} digits per number "
                     "(scale the values down or write 'p/q')")


def as_array(values: Any, *, exact: bool, name: str) -> np.ndarray:
    """Exact (Fraction object array) or float64 array from nested lists or arrays: a fresh array.

    Before anything is converted, a list that contains itself (or nests deeper than
    :data:`~.limits.MAX_NESTING`) and a number whose exact value needs more than
    :data:`~.limits.MAX_DIGITS` digits (``10**5000``, ``"1e-5000"``) are refused, as in an
    instance file. In float mode, entries given exactly (numeric strings, Fractions, Decimals,
    long integers) are rounded once and refused when float64 cannot hold them (``"1e400"``, or
    ``"1e-400"`` which would become 0), with the messages of a JSON instance read in float mode.

    Raises:
        ValidationError: non-finite entries or a non-numeric value; InputError: ``exact`` not a
            bool, a self-containing list; LimitError: a number past the digit limit.
    """
    _check_exact_flag(exact)
    if isinstance(values, np.ma.MaskedArray):       # the mask would be dropped silently by every conversion
        hidden = np.argwhere(np.ma.getmaskarray(values))
        if hidden.size:
            raise ValidationError(f"{name}: a masked array with masked entries (the first at "
                                  f"{[int(i) for i in hidden[0]]}); give the numbers themselves, every entry")
        values = np.ma.getdata(values)
    if hasattr(values, "__array__") and not isinstance(values, (np.ndarray, np.generic)):
        try:                    # a torch tensor, pandas frame, ...: numpy reads it once (np.array(x, dtype=object)
            values = np.asarray(values)     # warns on a torch tensor); a tensor that requires grad refuses
        except Exception as exc:  # noqa: BLE001 (any library's refusal becomes one line naming the array)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValidationError(f"{name}: cannot be read as a numpy array ({type(values).__name__}: {reason})") from None
    _input_shape(values, name, budget=_NO_BUDGET)   # a self-containing or too deep list, refused (one len() a row)
    if exact:
        with _pointing_to_float_mode():
            return _exact_array(values, name)
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf" and values.dtype.itemsize <= 8:
        if values.dtype.kind == "b":
            _no_booleans(values, name)
        return _finite(np.array(values, dtype=float), name)
    if isinstance(values, np.ndarray) and values.dtype.kind == "c":
        raise ValidationError(f"{name}: expected real numbers, found an array of complex numbers")
    try:
        obj = np.array(values, dtype=object)
    except (ValueError, TypeError, RecursionError):
        raise ValidationError(f"{name}: expected numbers in a rectangular array") from None
    _check_digits(obj, name)
    if obj.ndim == 0 and not isinstance(values, (int, float, np.number, Fraction, Decimal, str)):
        raise ValidationError(f"{name}: expected numbers in a rectangular array")
    kinds = set(map(type, obj.ravel().tolist()))
    if any(t is bool or issubclass(t, np.bool_) for t in kinds):
        _no_booleans(obj, name)
    if all(t in (float, int, bool) or (issubclass(t, (np.integer, np.bool_)))
           or (issubclass(t, np.floating) and np.dtype(t).itemsize <= 8) for t in kinds):
        try:
            arr = np.array(obj, dtype=float)
        except OverflowError:                   # an int beyond float64's range: named below
            arr = None
        except (TypeError, ValueError):
            raise ValidationError(f"{name}: expected numbers in a rectangular array") from None
        if arr is not None:
            return _finite(arr, name)
    return _checked_floats(obj, name)


def _exact_array(values: Any, name: str) -> np.ndarray:
    """The Fraction object array of ``values`` (exact mode of :func:`as_array`)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf" and values.dtype.itemsize <= 8:
        return fraction_array(values, name=name)
    try:
        obj = np.array(values, dtype=object)
    except (ValueError, TypeError, RecursionError):
        raise InputError(f"{name}: rows have different lengths (ragged nesting)") from None
    _check_digits(obj, name)
    return fraction_array(obj if obj.ndim else values, name=name)


@contextmanager
def _pointing_to_float_mode():
    """A float entry refused in exact mode: the message also names ``exact=False``."""
    try:
        yield
    except ExactnessError as exc:
        if "found the float" not in str(exc):
            raise
        raise ExactnessError(f"{exc}; or read floats as float64 with exact=False (a float model)") from None


_FLOAT_HINT = "create it with exact=True, which reads it exactly"


def _checked_floats(obj: np.ndarray, name: str) -> np.ndarray:
    """float64 from an object array holding exact values too (numeric strings, Fractions,
    Decimals, long integers, long doubles): each float entry kept as it is, every other entry
    read exactly and rounded once, refusing what float64 cannot hold (``1e400``, or ``"1e-400"``
    which would become 0) with the messages of a JSON instance read in float mode
    (:func:`~.rational.float64_array`)."""
    conv = np.empty(obj.shape, dtype=object)
    for idx, v in np.ndenumerate(obj):
        if isinstance(v, (float, np.floating)):
            if not math.isfinite(v):
                raise ValidationError(f"{name}: entry {list(idx)} is {v}, expected a finite number")
            v = Fraction(*v.as_integer_ratio())          # its exact binary value: float() gives it back
        conv[idx] = v
    return float64_array(conv, name, hint=_FLOAT_HINT)


def _no_booleans(arr: np.ndarray, name: str) -> None:
    """Refuse booleans in float mode as exact mode does (``True`` is not the number 1 here)."""
    for idx, v in np.ndenumerate(arr):
        if isinstance(v, (bool, np.bool_)):
            where = ", ".join(str(int(i)) for i in idx)
            raise ValidationError(f"{name}[{where}]: expected a number, found a boolean {bool(v)}")


def _check_exact_flag(exact: Any) -> None:
    if not isinstance(exact, (bool, np.bool_)):
        raise InputError(f"exact={exact!r}: expected True or False")


def _finite(arr: np.ndarray, name: str) -> np.ndarray:
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValidationError(f"{name}: entry {list(bad)} is {arr[bad]}, expected a finite number")
    return arr


def _short_repr(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:40] + "..."


def check_path(path: Any) -> Any:
    """``path`` itself when it is a file path (``str`` or ``os.PathLike``, e.g. ``pathlib.Path``).

    Raises:
        InputError: naming the type found.
    """
    if isinstance(path, (str, os.PathLike)):
        return path
    raise InputError(f"path: expected a file path (a str or pathlib.Path), found {type(path).__name__} "
                     f"{_short_repr(path)}")

