"""Learned HMMs: conversion to and from ``hmmlearn.hmm.CategoricalHMM`` (SPEC section 5).

hmmlearn's conventions against ours (SPEC section 1):

- ``transmat_[i, j] = Pr(next = j | current = i)`` is row-stochastic: ``A = transmat_.T``.
- ``emissionprob_[h, x] = Pr(x | h)``: ``W = emissionprob_.T``.
- ``startprob_`` is the law of the *first emitting* state; our ``H_0`` emits nothing and
  ``P[H_1] = A pi0``. Its readings as ``pi0`` (``start=``: ``"auto"``, the default, ``"h1"``,
  ``"h0"``, ``"stationary"``) are :mod:`.start_law`'s; the default never makes a zero of ``pi0``
  that the model does not have.

Each converted model carries a :class:`~.conversion.Conversion` (``model.conversion``): the
source, the start reading used and every other reading with its ``pi0``, and how far the
renormalisation of a float32 fit moved each matrix.

hmmlearn is needed only when these functions are called (scipy for ``"h1"``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import InputError
from .conversion import Conversion, StartReading
from .limits import FLOAT_TOLERANCE
from .start_law import (START_OPTIONS, START_READINGS, StartLawWarning, choose_start,  # noqa: F401 (exported)
                        closest_initial, initial_from_start, stationary_law, start_to_initial)

__all__ = ["renormalize", "Renormalization", "RenormalizedWarning", "SOURCE_SUM_TOLERANCE", "initial_from_start",
           "closest_initial", "stationary_law", "start_to_initial", "StartLawWarning", "START_READINGS",
           "START_OPTIONS", "hmmlearn_arrays", "hmmlearn_conversion", "to_hmmlearn", "dynamax_arrays",
           "dynamax_conversion", "to_dynamax"]


SOURCE_SUM_TOLERANCE = 1e-5 + 1e-8
"""How far from 1 a fitted table's column may sum: ``np.allclose(sum, 1)`` with numpy's default
tolerances, the test hmmlearn applies to its own parameters. A float32 fit (dynamax's default)
misses 1 by about ``|H| * 6e-8``; a float64 fit by about ``1e-16``."""


class RenormalizedWarning(UserWarning):
    """A fitted model's columns did not sum to 1 within the float64 tolerance of
    :meth:`HMM.create <headprompt.models.hmm.values.HMM.create>` (typically a float32 fit) and
    were divided by their sums. ``renormalization`` (a :class:`Renormalization`) says how far
    each table moved and bounds what that does to every posterior."""

    def __init__(self, message: str, renormalization: "Renormalization") -> None:
        super().__init__(message)
        self.renormalization = renormalization


@dataclass(frozen=True)
class Renormalization:
    """What dividing each fitted column by its sum changed.

    Attributes:
        dtype: the dtype of the given tables (``"float32"``, ``"float64"``).
        sum_gap: per parameter (``"start"``, ``"A"``, ``"W"``) the largest ``|1 - column sum|`` as given.
        tv: per parameter the largest column distance ``tv(given, renormalised)`` (``= gap / 2``
            per column, float64).
    """

    dtype: str
    sum_gap: dict
    tv: dict

    def path_tv(self, length: int) -> float:
        """``delta_L = tv_start + L (tv_A + tv_W)``: total variation between the path measures of
        the given and the renormalised model on ``L`` emitting positions
        (:func:`headprompt.models.hmm.distance.path_tv`)."""
        from .distance import path_tv

        return float(path_tv(self.tv, length))

    def conditional_bound(self, length: int, event_probability: Any) -> float:
        """``min(1, 2 delta_L / Q(B))``: how far any entry of a posterior (or ``G_i``) given an event
        ``B`` of probability ``Q(B)`` can move (:func:`headprompt.models.hmm.distance.conditional_bound`)."""
        from .distance import conditional_bound

        return float(conditional_bound({k: Fraction(v) for k, v in self.tv.items()}, length, event_probability))

    def describe(self) -> str:
        return (f"renormalised the {self.dtype} fit: columns summed to 1 within {max(self.sum_gap.values()):.2g}; "
                f"column distances tv_A = {self.tv['A']:.3g}, tv_W = {self.tv['W']:.3g}, tv_start = "
                f"{self.tv['start']:.3g}. Any posterior or G_i given an event B of probability Q(B) moves by at most "
                f"2 (tv_start + L (tv_A + tv_W)) / Q(B) on L positions (delta_10 = {self.path_tv(10):.2g})")


def _float_arrays(*tables: Any) -> tuple[list[np.ndarray], str]:
    """``(tables as float64 arrays, their common dtype as given)``; a float32 value is read exactly."""
    out = [np.asarray(t) for t in tables]
    for t in out:
        if t.dtype.kind not in "fiu":
            raise InputError(f"expected arrays of numbers, found dtype {t.dtype}")
    return [t.astype(np.float64) if t.dtype != np.float64 else t for t in out], str(np.result_type(*out))


def renormalize(start_law: np.ndarray, A: np.ndarray, W: np.ndarray, *, names: tuple[str, str, str],
                source: str, dtype: str = "float64") -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """``(start_law, A, W, changes)`` (``A``, ``W`` column-stochastic, float64), after checking
    that each column sums to 1 within :data:`SOURCE_SUM_TOLERANCE` (the source library's own
    tolerance). A table with a column sum further from 1 than the float64 tolerance of
    :meth:`HMM.create` (``FLOAT_TOLERANCE``; typically a float32 fit) has every column divided
    by its sum, and a :class:`RenormalizedWarning` says how far the model moved; other tables
    are kept as given. ``changes``: per table (``"start"``, ``"A"``, ``"W"``) the largest change
    of one entry (0.0 for a table kept as given).

    Raises:
        InputError: a negative or non-finite entry, or a column whose sum is not 1 within the
            tolerance (naming the table and column).
    """
    gaps, tvs, changes, out = {}, {}, {}, []
    for key, name, table in (("start", names[0], start_law[:, None]), ("A", names[1], A), ("W", names[2], W)):
        if not np.all(np.isfinite(table)) or np.any(table < 0):
            raise InputError(f"{source} {name}: entries must be finite and nonnegative")
        sums = table.sum(axis=0)
        gap = np.abs(sums - 1.0)
        if table.size and gap.max() > SOURCE_SUM_TOLERANCE:
            k = int(np.argmax(gap))
            raise InputError(f"{source} {name}: a probability table sums to {sums[k]!r} (entry {k}), not 1 within "
                             f"{SOURCE_SUM_TOLERANCE:.2g} (np.allclose); is the model fitted?")
        fixed = table / sums if table.size and gap.max() > FLOAT_TOLERANCE else table   # else valid as given
        gaps[key] = float(gap.max()) if table.size else 0.0
        tvs[key] = float(0.5 * np.abs(fixed - table).sum(axis=0).max()) if table.size else 0.0
        changes[key] = float(np.abs(fixed - table).max()) if table.size else 0.0
        out.append(fixed)
    if max(gaps.values()) > FLOAT_TOLERANCE:
        r = Renormalization(dtype, gaps, tvs)
        warnings.warn(RenormalizedWarning(r.describe(), r), stacklevel=5)
    return out[0][:, 0], out[1], out[2], changes


def hmmlearn_conversion(model: Any, *, pi0: Any = None, start: str = "auto"
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Conversion]:
    """``(A, W, pi0, conversion)`` (float64 arrays) of a fitted ``hmmlearn.hmm.CategoricalHMM``
    (module docstring), with the :class:`~.conversion.Conversion` record that
    :meth:`HMM.from_hmmlearn <headprompt.models.hmm.values.HMM.from_hmmlearn>` attaches.

    Args:
        model: the fitted model (``startprob_``, ``transmat_``, ``emissionprob_`` set).
        pi0: our ``P[H_0]``; default: from ``startprob_`` as ``start`` reads it. A given
            ``pi0`` is checked against ``startprob_`` (``A pi0 = startprob_``).
        start: ``"auto"`` (default), ``"h1"``, ``"h0"`` or ``"stationary"`` (:mod:`.start_law`).

    Raises:
        InputError: a model without fitted parameters, an unknown ``start``, or a given ``pi0``
            that contradicts ``startprob_``.
    """
    try:
        (start_law, transmat, emission), dtype = _float_arrays(model.startprob_, model.transmat_,
                                                               model.emissionprob_)
    except AttributeError as exc:
        raise InputError(f"from_hmmlearn: expected a fitted hmmlearn CategoricalHMM ({exc})") from None
    return _from_start_law(start_law, transmat.T, emission.T, pi0=pi0, start=start, name="startprob_", dtype=dtype)


def hmmlearn_arrays(model: Any, *, pi0: Any = None, start: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, W, pi0)`` of :func:`hmmlearn_conversion`, without the record."""
    return hmmlearn_conversion(model, pi0=pi0, start=start)[:3]


def _from_start_law(start_law: np.ndarray, A: np.ndarray, W: np.ndarray, *, pi0: Any, start: str,
                    name: str, names: tuple[str, str] = ("transmat_", "emissionprob_"),
                    source: str = "hmmlearn", dtype: str = "float64"
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Conversion]:
    """``(A, W, pi0, conversion)`` with ``pi0`` read from a library's law of the first emitting
    state (our ``P[H_1]``) as ``start`` says, or checked against it when given (hmmlearn and
    dynamax); the fitted tables are renormalised first (:func:`renormalize`)."""
    if not isinstance(start, str) or start not in START_OPTIONS:
        raise InputError(f"start: expected one of {', '.join(map(repr, START_OPTIONS))}, found {start!r}")
    if pi0 is not None and start not in ("auto", "h1"):
        raise InputError(f"pi0: give either pi0= or start={start!r}, not both")
    start_law, A, W, changes = renormalize(start_law, A, W, names=(name,) + names, source=source, dtype=dtype)
    if pi0 is None:
        used, readings = choose_start(A, start_law, start, name=name, source=source)
        pi0 = np.array(readings[used].pi0, dtype=float)
        found = tuple(readings.values())
    else:
        try:
            pi0 = np.asarray(pi0, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"pi0: expected {A.shape[0]} probabilities, found {type(pi0).__name__}") from None
        if pi0.shape != start_law.shape or np.max(np.abs(A @ pi0 - start_law)) > FLOAT_TOLERANCE:
            raise InputError(f"pi0: A pi0 differs from the model's {name} (the library's first state is "
                             f"our H_1, so {name} is P[H_1] = A pi0)")
        used = "given"
        found = (StartReading("given", tuple(float(v) for v in pi0), float(0.5 * np.abs(A @ pi0 - start_law).sum()),
                              tuple(int(h) for h in np.flatnonzero(pi0 == 0))),)
    record = Conversion(source=source, dtype=dtype, start=used, start_requested=start, readings=found,
                        renormalized=changes)
    return A, W, pi0, record


def dynamax_conversion(params: Any, *, pi0: Any = None, start: str = "auto"
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Conversion]:
    """``(A, W, pi0, conversion)`` (float64 arrays) of dynamax ``CategoricalHMM`` parameters with
    one emission dimension: ``initial.probs`` is the law of the first emitting state (our
    ``P[H_1]``, read as ``start`` like hmmlearn's ``startprob_``), ``transitions.transition_matrix``
    is row-stochastic (``A`` is its transpose) and ``emissions.probs`` is ``(|H|, 1, |X|)``.

    Raises:
        InputError: parameters of another shape or kind, an unknown ``start``, or a given
            ``pi0`` that contradicts ``initial.probs``.
    """
    try:
        (start_law, transmat, emission), dtype = _float_arrays(
            params.initial.probs, params.transitions.transition_matrix, params.emissions.probs)
    except AttributeError as exc:
        raise InputError(f"from_dynamax: expected the parameters of a dynamax CategoricalHMM ({exc})") from None
    if emission.ndim != 3 or emission.shape[1] != 1:
        raise InputError(f"from_dynamax: emissions.probs has shape {emission.shape}; one emission dimension "
                         "(|H|, 1, |X|) is a token sequence, other shapes are not")
    return _from_start_law(start_law, transmat.T, emission[:, 0, :].T, pi0=pi0, start=start, name="initial.probs",
                           names=("transitions.transition_matrix", "emissions.probs"), source="dynamax", dtype=dtype)


def dynamax_arrays(params: Any, *, pi0: Any = None, start: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, W, pi0)`` of :func:`dynamax_conversion`, without the record."""
    return dynamax_conversion(params, pi0=pi0, start=start)[:3]


def to_dynamax(hmm: Any) -> tuple[Any, Any]:
    """``(model, params)``: a dynamax ``CategoricalHMM(|H|, 1, |X|)`` and its parameters with
    the same law of ``H_1..H_T, X_1..X_T`` (``initial_probs = A pi0``, ``transition_matrix =
    A.T``, ``emission_probs = W.T`` as ``(|H|, 1, |X|)``), float64 when jax has x64 enabled.
    Needs dynamax (an optional dependency)."""
    try:
        import jax.numpy as jnp
        from dynamax.hidden_markov_model import CategoricalHMM
    except ImportError as exc:
        raise InputError(f"to_dynamax: dynamax is not installed ({exc}); pip install dynamax") from None
    f = hmm.to_float()
    model = CategoricalHMM(f.num_states, 1, f.num_tokens)
    params, _ = model.initialize(initial_probs=jnp.asarray(f.hidden_marginal_1()),
                                 transition_matrix=jnp.asarray(f.A.T),
                                 emission_probs=jnp.asarray(f.W.T)[:, None, :])
    return model, params


def to_hmmlearn(hmm: Any, **kwargs: Any) -> Any:
    """A ``hmmlearn.hmm.CategoricalHMM`` with the same law of ``H_1..H_T, X_1..X_T``:
    ``startprob_ = A pi0``, ``transmat_ = A.T``, ``emissionprob_ = W.T`` (float64).
    ``kwargs`` go to the constructor (``init_params`` defaults to ``""`` so that a later
    ``fit`` starts from these parameters)."""
    from hmmlearn.hmm import CategoricalHMM

    f = hmm.to_float()
    kwargs.setdefault("init_params", "")
    fixed = sorted({"n_components", "n_features"} & set(kwargs))
    if fixed:
        raise InputError(f"to_hmmlearn: {fixed[0]}= is fixed by the model ({f.num_states} states, {f.num_tokens} "
                         "tokens); drop it")
    try:
        model = CategoricalHMM(n_components=f.num_states, n_features=f.num_tokens, **kwargs)
    except TypeError as exc:                          # an unknown keyword of the constructor
        raise InputError(f"to_hmmlearn: {exc}") from None
    model.startprob_ = f.hidden_marginal_1()
    model.transmat_ = f.A.T.copy()
    model.emissionprob_ = f.W.T.copy()
    return model
