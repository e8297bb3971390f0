"""Validated, owned arrays of the HMM value types (:mod:`.values`): the checks a model runs
once at construction (shapes, signs, stochastic columns, task weights within float64's range),
the private read-only copies a model holds and each array's float64 form, computed once and
shared by the models holding it. Reading user input into arrays is :mod:`.reading`."""

from __future__ import annotations

import math
import operator
import weakref
from contextlib import contextmanager
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import ExactnessError, ValidationError
from .limits import FLOAT_TOLERANCE
from .rational import shown_exact
from .reading import _short_repr

__all__ = ["check_model_arrays"]

_EXACT_ENTRY_TYPES = (Fraction, int, np.integer)


def check_model_arrays(model: Any, names: tuple[str, ...], *, optional: tuple[str, ...] = ()) -> None:
    """The fields ``names`` of a model given to its constructor are numpy arrays (``None`` for
    those in ``optional``), and an object array (exact kind) holds exact numbers only
    (Fractions or integers): arrays a model of this module owns were checked when it was built.

    Raises:
        ValidationError: naming the field, what was found and :meth:`create`, which reads lists.
    """
    kind = type(model).__name__
    for name in names:
        arr = getattr(model, name)
        if arr is None and name in optional:
            continue
        if not isinstance(arr, np.ndarray):
            raise ValidationError(f"{kind}: {name}: expected a numpy array (float64, or an object array of "
                                  f"Fractions), found {type(arr).__name__}; build from lists or other values with "
                                  f"{kind}.create(..., exact=True|False)")
        if arr.dtype != object or _owned(arr) is not None:
            continue
        flat = arr.ravel().tolist()
        if all(issubclass(t, _EXACT_ENTRY_TYPES) and t is not bool for t in set(map(type, flat))):
            continue
        i = next(i for i, v in enumerate(flat) if isinstance(v, bool) or not isinstance(v, _EXACT_ENTRY_TYPES))
        where = f"{name}{[int(j) for j in np.unravel_index(i, arr.shape)]}" if arr.ndim else name
        raise ValidationError(f"{kind}: {where}: found {type(flat[i]).__name__} {_short_repr(flat[i])}, but an exact "
                              f"model's object arrays hold Fractions or integers; read other values with "
                              f"{kind}.create(..., exact=True|False)")


class _Owned:
    """What this module knows about an array it froze itself (a private, read-only copy held by
    a model): whether it passed the probability checks (nonnegative, columns along axis 0 sum
    to 1; exactly for an object array, within ``FLOAT_TOLERANCE`` for a float one; both are
    facts about the entries, which cannot change) and its float64 form once computed."""

    __slots__ = ("ref", "checked", "floats")

    def __init__(self, ref: weakref.ref) -> None:
        self.ref, self.checked, self.floats = ref, False, None


# id(array) -> record, for the read-only arrays the models of this module own. A model built
# from arrays of another model (``with_task``, ``dataclasses.replace``, ``with_stationary_start``)
# keeps those arrays, neither copied nor checked again; any other array (a user's, even a
# read-only one) is copied and checked in full. The entry goes when its array does.
_OWNED: dict[int, _Owned] = {}


def _owned(arr: Any) -> _Owned | None:
    """The record of ``arr`` when it is an array a model of this module owns (still read-only)."""
    rec = _OWNED.get(id(arr))
    if rec is None or rec.ref() is not arr or arr.flags.writeable:
        return None
    return rec


def _register(arr: np.ndarray) -> np.ndarray:
    """Make ``arr`` (a fresh array nobody else holds) read-only and record it as owned."""
    arr.setflags(write=False)
    key = id(arr)

    def forget(ref: weakref.ref, key: int = key, owned: dict = _OWNED) -> None:
        rec = owned.get(key)       # (the table itself is bound here: it outlives module teardown)
        if rec is not None and rec.ref is ref:
            del owned[key]

    _OWNED[key] = _Owned(weakref.ref(arr, forget))
    return arr


def _own(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself when a model already owns it, else a frozen private copy (recorded)."""
    return arr if _owned(arr) is not None else _register(np.array(arr, copy=True))


def _float_form(arr: np.ndarray | None) -> np.ndarray | None:
    """The float64 form of an owned array (each entry rounded once, as ``astype(float)``),
    computed once per array and shared by every model holding it."""
    if arr is None:
        return None
    rec = _owned(arr)
    if rec is not None and rec.floats is not None:
        return rec.floats
    out = _register(_to_float64(arr))
    if rec is not None:
        rec.floats = out
    return out


_NUMERATOR = operator.attrgetter("numerator")
_DENOMINATOR = operator.attrgetter("denominator")


def _rational_parts(arr: np.ndarray) -> tuple[list, list, bool] | None:
    """Numerators and denominators of an object array's entries (C order), and whether every
    entry is a Fraction, when every entry is a Fraction or an int (not a bool); else None (the
    caller takes the general path)."""
    if arr.dtype != object:
        return None
    flat = arr.ravel().tolist()
    types = set(map(type, flat))
    if not types <= _RATIONALS:
        return None
    return list(map(_NUMERATOR, flat)), list(map(_DENOMINATOR, flat)), types <= _FRACTIONS


_RATIONALS = frozenset({Fraction, int})
_FRACTIONS = frozenset({Fraction})


def _floats_of(shape: tuple[int, ...], parts: tuple[list, list, bool] | None) -> np.ndarray | None:
    """The float64 array of Fractions given by their ``parts``: each the numerator divided by
    the denominator in integer true division (correctly rounded), which is exactly what
    ``float(Fraction)`` and so ``astype(float)`` compute; None unless all entries are Fractions."""
    if parts is None or not parts[2]:
        return None
    nums, dens, _ = parts
    try:
        return np.fromiter(map(operator.truediv, nums, dens), dtype=float, count=len(nums)).reshape(shape)
    except OverflowError:                # a task weight beyond float64's range: IEEE's inf, as float("3e500")
        from .rational import float_or_inf

        return np.array([float_or_inf(Fraction(n, d)) for n, d in zip(nums, dens)], dtype=float).reshape(shape)


def _to_float64(arr: np.ndarray) -> np.ndarray:
    """``arr.astype(float)``, the same numbers, without a ``Fraction.__float__`` call per entry; a
    value beyond float64's range (only a task weight can be) becomes ``inf`` as in IEEE arithmetic
    (``float("3e500")``), never an ``OverflowError``: the float form serves the parts that read
    ``A``, ``W`` and ``pi0`` (sampling, supports), and theorem checks refuse such a task first
    (:func:`_check_task_range`)."""
    out = _floats_of(arr.shape, _rational_parts(arr))
    if out is not None:
        return out
    try:
        return arr.astype(float)
    except OverflowError:
        from .rational import float_or_inf

        return np.array([float_or_inf(v) for v in arr.flat], dtype=float).reshape(arr.shape)


def _check_shape(arr: np.ndarray, shape: tuple[int, ...], name: str, what: str) -> None:
    if arr.shape != shape:
        raise ValidationError(f"{name}: expected shape {shape} ({what}), found {arr.shape}")


_FLOAT64_MAX = Fraction(np.finfo(float).max)


def _check_task_range(mu: np.ndarray) -> None:
    """Task weights within float64's range (about 1.8e308), as a theorem check needs them: the
    sampler, the float kernels and the certified bound read a float form of the model, and
    ``F* = 1(mu . p >= 0)`` does not change when ``mu`` is divided by a positive number, so
    nothing is lost by asking for it (exact posteriors read any weight exactly).

    Raises:
        ValidationError: naming the entry and the way out.
    """
    if mu.dtype != object:
        return
    for idx, v in np.ndenumerate(mu):
        if abs(v) > _FLOAT64_MAX:
            from .rational import describe_magnitude

            raise ValidationError(f"mu{list(idx)}: {describe_magnitude(v)} is beyond the float64 range (about "
                                  "1.8e308), which sampling and the float kernels need; F* = 1(mu . p >= 0) is "
                                  "unchanged when mu is divided by a positive number: scale mu down")


def _check_task_shape(mu: np.ndarray, n: int, what: str) -> None:
    """``mu`` is a vector ``(n,)`` (binary task) or a ``k x n`` matrix with ``k >= 2`` (one row
    per class, SPEC section 1: ``F* = argmax_c mu_c . p``, ties to the largest class)."""
    if mu.ndim == 2 and mu.shape[0] >= 2 and mu.shape[1] == n:
        return
    if mu.ndim == 2:
        raise ValidationError(f"mu: expected shape ({n},) ({what}) or (k, {n}) with k >= 2 classes, "
                              f"found {mu.shape}")
    _check_shape(mu, (n,), "mu", what)


_UNSET: Any = object()


def _check_nonnegative(arr: np.ndarray, name: str, parts: Any = _UNSET) -> None:
    """No negative entry (the first one in C order is named). ``parts``: the array's
    :func:`_rational_parts`, when the caller has them."""
    if parts is _UNSET:
        parts = _rational_parts(arr)
    if parts is not None and (not parts[0] or min(parts[0]) >= 0):   # denominators are positive
        return
    neg = np.argwhere(arr < 0)
    if len(neg):
        idx = tuple(int(i) for i in neg[0])
        raise ValidationError(f"{name}: entry {list(idx)} is {shown_exact(arr[idx])}, expected a nonnegative "
                              "probability")


_MAX_COMMON_DENOMINATOR_BITS = 4096


def _exact_column_sums(arr: np.ndarray, parts: tuple[list, list, bool] | None) -> np.ndarray | None:
    """``arr.sum(axis=0)`` for an array of Fractions and ints, as Fractions of equal value,
    through integer numerators over one common denominator (far fewer operations than adding
    Fractions); None when the entries are of other types or the denominators have no small
    common multiple (then the caller adds the entries themselves)."""
    if parts is None or arr.ndim == 0 or arr.shape[0] == 0 or arr.size == 0:
        return None
    nums, dens, _ = parts
    distinct = set(dens)
    common = 1
    for d in distinct:
        common = math.lcm(common, d)
        if common.bit_length() > _MAX_COMMON_DENOMINATOR_BITS:
            return None
    if len(distinct) > 1:
        scale = {d: common // d for d in distinct}
        nums = list(map(operator.mul, nums, map(scale.__getitem__, dens)))
    totals = np.array(nums, dtype=object).reshape(arr.shape).sum(axis=0)
    out = np.empty(arr.shape[1:], dtype=object)
    for idx in np.ndindex(out.shape):
        out[idx] = Fraction(int(totals[idx] if idx else totals), common)
    return out


def _check_stochastic(arr: np.ndarray, name: str, exact: bool, parts: Any = _UNSET) -> None:
    """Columns along axis 0 must sum to 1 (exactly in exact mode).

    Raises:
        ValidationError: naming the column and its sum; for a matrix ``A`` or ``W`` whose rows
            sum to 1 instead, naming the ``A[to, from]`` (``W[token, state]``) column convention
            and the fix (the transpose); in exact mode, when every column is within float64's
            tolerance of 1, saying that ``exact=False`` reads it as a float model.
    """
    if exact and parts is _UNSET:
        parts = _rational_parts(arr)
    sums = _exact_column_sums(arr, parts) if exact else None
    if sums is None:
        sums = np.asarray(arr.sum(axis=0), dtype=arr.dtype)
    for idx in np.ndindex(sums.shape):
        s = sums[idx]
        ok = (s == 1) if exact else abs(float(s) - 1.0) <= FLOAT_TOLERANCE
        if not ok:
            where = f"column {list(idx) if len(idx) > 1 else idx[0]}" if idx else "the vector"
            shown = shown_exact(s) if exact else repr(float(s))
            if name in ("A", "W") and arr.ndim == 2 and _rows_sum_to_one(arr, exact):
                raise ValidationError(_transposed_message(name, where, shown))
            near = exact and all(abs(Fraction(v) - 1) <= _FLOAT_TOLERANCE for v in np.ravel(sums))
            raise ValidationError(f"{name}: {where} sums to {shown}, expected exactly 1"
                                  + ("" if exact else f" (within {FLOAT_TOLERANCE})")
                                  + ("; exact=False reads it as float64" if near else ""))


_FLOAT_TOLERANCE = Fraction(FLOAT_TOLERANCE)


def _rows_sum_to_one(arr: np.ndarray, exact: bool) -> bool:
    """Whether every row of the matrix ``arr`` sums to 1 (exactly, or within the float tolerance)."""
    rows = arr.sum(axis=1)
    if exact:
        return all(Fraction(v) == 1 for v in rows)
    return bool(np.all(np.abs(np.asarray(rows, dtype=float) - 1.0) <= FLOAT_TOLERANCE))


def _transposed_message(name: str, where: str, shown: str) -> str:
    """A row-stochastic matrix given where a column-stochastic one is read (hmmlearn's way)."""
    if name == "A":
        convention = ("A is column-stochastic, A[to, from] = Pr(H_i = to | H_{i-1} = from): each column is the "
                      "law of the next state")
        library = "hmmlearn's transmat_[from, to] is row-stochastic"
    else:
        convention = ("W is column-stochastic, W[token, state] = Pr(X_i = token | H_i = state): each column is a "
                      "state's emission law")
        library = "hmmlearn's emissionprob_[state, token] is row-stochastic"
    return (f"{name}: {where} adds up to {shown} but every row adds up to 1: {convention}, and "
            f"{library}; pass the transpose, {name}.T (HMM.from_hmmlearn converts a fitted model)")


def _check_distributions(model: Any, names: tuple[str, ...], exact: bool) -> dict[str, np.ndarray]:
    """Nonnegative entries and columns summing to 1 for each named array of ``model``, except
    arrays another model of this module already owns and checked (the same object, read-only:
    a derived model, e.g. :meth:`HMM.with_task`); user arrays are always checked in full.

    Returns the float64 forms that came for free with the exact checks (by name)."""
    floats = {}
    for name in names:
        arr = getattr(model, name)
        rec = _owned(arr)
        if rec is not None and rec.checked:
            continue
        parts = _rational_parts(arr) if exact else None
        _check_nonnegative(arr, name, parts)
        _check_stochastic(arr, name, exact, parts)
        as_float = _floats_of(arr.shape, parts)
        if as_float is not None:
            floats[name] = as_float
    return floats


def _own_fields(model: Any, names: tuple[str, ...], checked: tuple[str, ...],
                floats: dict[str, np.ndarray]) -> None:
    """Replace each named (non-None) array of ``model`` by an owned, read-only array (the same
    object when already owned), record those in ``checked`` as checked distributions and keep
    the float forms ``floats`` computed on the way."""
    for name in names:
        arr = getattr(model, name)
        if arr is not None:
            arr = _own(arr)
            object.__setattr__(model, name, arr)
            rec = _OWNED[id(arr)]
            if name in checked:
                rec.checked = True
            if name in floats and rec.floats is None:
                rec.floats = _register(floats[name])


def _decimal_array(arr: np.ndarray, name: str) -> np.ndarray:
    """Each float as the decimal it prints as (``repr``), exactly; sums are then checked by the
    model's validation, whose error is rewritten to point to the explicit conversion."""
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = Fraction(Decimal(repr(float(v))))
    return out


@contextmanager
def _pointing_to_rationalize():
    try:
        yield
    except ValidationError as exc:
        raise ExactnessError(f"to_exact: {exc}; the float model is not exactly stochastic when its "
                             "entries are read as decimals, and to_exact never moves a model: convert it "
                             "explicitly with headprompt.models.hmm.rationalize.rationalize(model, "
                             "prune_below=..., max_denominator=...), which reports how far it moved") from None


def _is_exact(*arrays: np.ndarray) -> bool:
    return all(a.dtype == object for a in arrays)
