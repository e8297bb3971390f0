"""Learned HMMs: conversion to and from ``hmmlearn.hmm.CategoricalHMM`` (SPEC section 5).

hmmlearn's conventions against ours (SPEC section 1):

- ``transmat_[i, j] = Pr(next = j | current = i)`` is row-stochastic: ``A = transmat_.T``.
- ``emissionprob_[h, x] = Pr(x | h)``: ``W = emissionprob_.T``.
- ``startprob_`` is the law of the *first emitting* state; our ``H_0`` emits nothing and
  ``P[H_1] = A pi0``. :func:`start_to_initial` offers three readings (``start=``):

  - ``"h1"`` (default): ``startprob_`` is ``P[H_1]``; ``pi0`` is a point of the simplex with
    ``A pi0 = startprob_`` when one exists, otherwise the one closest in total variation (a
    linear program), and a :class:`StartLawWarning` carries the remaining distance
    ``TV(A pi0, startprob_)``. EM fits rarely leave ``startprob_`` exactly in ``A``'s image of
    the simplex (a fit on one long sequence makes it nearly one-hot). When ``A`` is singular the
    solution need not be unique; every solution gives the same law of ``X_{1:T}`` and of
    ``H_1..H_T`` (posteriors of ``H_0`` then depend on the choice: give ``pi0`` yourself).
  - ``"h0"``: ``startprob_`` is read as ``pi0 = P[H_0]`` (so ``P[H_1] = A startprob_``).
  - ``"stationary"``: ``pi0`` is the stationary law of ``A`` (``startprob_`` is ignored), the
    chain observed in its steady state.

hmmlearn is needed only when these functions are called (scipy for ``"h1"``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import InputError
from .limits import FLOAT_TOLERANCE

__all__ = ["renormalize", "Renormalization", "RenormalizedWarning", "SOURCE_SUM_TOLERANCE", "initial_from_start", "closest_initial", "stationary_law", "start_to_initial", "StartLawWarning",
           "START_READINGS", "hmmlearn_arrays", "to_hmmlearn", "dynamax_arrays", "to_dynamax"]

START_READINGS = ("h1", "h0", "stationary")


class StartLawWarning(UserWarning):
    """``from_hmmlearn(start="h1")``: no ``pi0`` has ``A pi0 = startprob_`` exactly; the closest
    one was used. ``distance`` is ``TV(A pi0, startprob_)`` (half the l1 distance)."""

    def __init__(self, message: str, distance: float) -> None:
        super().__init__(message)
        self.distance = distance


def closest_initial(A: Any, start: Any) -> tuple[np.ndarray, float]:
    """``(pi0, distance)``: a ``pi0`` in the simplex minimising ``TV(A pi0, start) =
    1/2 sum_h |(A pi0)_h - start_h|`` and that minimum (float64), by the linear program
    ``min sum t`` subject to ``-t <= A pi0 - start <= t``, ``pi0 >= 0``, ``sum pi0 = 1``
    (``scipy.optimize.linprog``, HiGHS). ``A``: ``(n, n)`` column-stochastic; ``start``: ``(n,)``.

    >>> pi0, d = closest_initial([[1.0, 1.0], [0.0, 0.0]], [0.5, 0.5])
    >>> round(float(pi0.sum()), 12), round(d, 12)
    (1.0, 0.5)

    Raises:
        InputError: shapes disagree or entries are not finite.
    """
    from scipy.optimize import linprog

    A = np.asarray(A, dtype=float)
    start = np.asarray(start, dtype=float)
    n = A.shape[0] if A.ndim == 2 else 0
    if A.shape != (n, n) or start.shape != (n,) or n == 0:
        raise InputError(f"startprob_: expected {n} entries for a {A.shape} transition matrix, found {start.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(start))):
        raise InputError("startprob_/transmat_: entries must be finite")
    eye = np.eye(n)
    cost = np.concatenate([np.zeros(n), np.ones(n)])                         # variables (pi0, t)
    upper = np.block([[A, -eye], [-A, -eye]])
    bound = np.concatenate([start, -start])
    equal = np.concatenate([np.ones(n), np.zeros(n)])[None, :]
    res = linprog(cost, A_ub=upper, b_ub=bound, A_eq=equal, b_eq=[1.0], bounds=[(0, None)] * (2 * n),
                  method="highs")
    pi0 = np.clip(res.x[:n], 0.0, None)
    pi0 = pi0 / pi0.sum()
    return pi0, float(0.5 * np.abs(A @ pi0 - start).sum())


def stationary_law(A: Any) -> np.ndarray:
    """A stationary law ``p = A p`` (``p >= 0``, ``sum p = 1``) of a float column-stochastic
    ``(n, n)`` ``A``: the least-squares solution of ``[A - I; 1] p = [0; 1]``, clipped to the
    simplex (the float counterpart of the exact
    ``headprompt.models.generate.generators.stationary_distribution``).

    >>> stationary_law([[0.5, 1.0], [0.5, 0.0]]).round(12).tolist()
    [0.666666666667, 0.333333333333]
    """
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    system = np.vstack([A - np.eye(n), np.ones((1, n))])
    p, *_ = np.linalg.lstsq(system, np.concatenate([np.zeros(n), [1.0]]), rcond=None)
    p = np.clip(p, 0.0, None)
    return p / p.sum()


def start_to_initial(A: Any, start: Any, reading: str = "h1", *, tolerance: float = FLOAT_TOLERANCE,
                     name: str = "startprob_", source: str = "hmmlearn") -> np.ndarray:
    """Our ``pi0`` from hmmlearn's ``startprob_`` under ``reading`` (module docstring):
    ``"h1"`` (``A pi0 = startprob_``, or the closest, with a :class:`StartLawWarning` when the
    distance exceeds ``tolerance``), ``"h0"`` (``pi0 = startprob_``) or ``"stationary"``;
    ``name`` and ``source`` name the start law in the warning (dynamax: ``initial.probs``).

    Raises:
        InputError: an unknown ``reading``, or shapes that disagree.
    """
    if not isinstance(reading, str) or reading not in START_READINGS:
        raise InputError(f"start: expected one of {', '.join(map(repr, START_READINGS))}, found {reading!r}")
    A = np.asarray(A, dtype=float)
    start = np.asarray(start, dtype=float)
    if start.shape != (A.shape[0],):
        raise InputError(f"startprob_: expected {A.shape[0]} entries, found shape {start.shape}")
    if reading == "h0":
        return start / start.sum()
    if reading == "stationary":
        return stationary_law(A)
    pi0, distance = closest_initial(A, start)
    if distance > tolerance:
        warnings.warn(StartLawWarning(
            f"{name} is not P[H_1] = A pi0 for any pi0 ({source}'s first state is our H_1); used the "
            f"closest pi0, at total variation {distance:.3g} from {name} (start='h0' or 'stationary' "
            "read it otherwise)", distance), stacklevel=4)
    return pi0


def initial_from_start(A: Any, start: Any, *, tolerance: float = FLOAT_TOLERANCE) -> np.ndarray:
    """A ``pi0 >= 0`` with ``sum pi0 = 1`` and ``A pi0 = start`` (within ``tolerance`` in every
    entry), float64, from nonnegative least squares (``scipy.optimize.nnls``).

    ``A`` is column-stochastic, so ``sum(A pi0) = sum(pi0)``: any nonnegative solution of
    ``A pi0 = start`` already sums to 1.

    >>> initial_from_start([[0.0, 1.0], [1.0, 0.0]], [0.25, 0.75]).round(12).tolist()
    [0.75, 0.25]

    Raises:
        InputError: shapes disagree, or no such ``pi0`` exists (the message gives the smallest
            residual found and what to do).
    """
    from scipy.optimize import nnls

    A = np.asarray(A, dtype=float)
    start = np.asarray(start, dtype=float)
    n = A.shape[0]
    if A.shape != (n, n) or start.shape != (n,):
        raise InputError(f"startprob_: expected {n} entries for a {A.shape} transition matrix, found {start.shape}")
    # the sum row keeps the solution on the simplex even when A has a near-null direction
    system = np.vstack([A, np.ones((1, n))])
    target = np.concatenate([start, [1.0]])
    x, _ = nnls(system, target)
    if x.sum() > 0:
        x = x / x.sum()
    residual = float(np.max(np.abs(A @ x - start))) if x.sum() > 0 else float("inf")
    if not residual <= tolerance:
        raise InputError(f"startprob_: no pi0 in the simplex has A pi0 = startprob_ (the closest "
                         f"nonnegative pi0 misses by {residual:.3g} in some entry; hmmlearn's first "
                         "state is our H_1 = A H_0, and this startprob_ is not reachable in one step of "
                         "the chain); pass pi0 explicitly, or, for a chain observed at stationarity, set "
                         "startprob_ to the stationary law of transmat_, which pi0 = that law reaches")
    return x


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
                source: str, dtype: str = "float64") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start_law, A, W)`` (``A``, ``W`` column-stochastic, float64), after checking that each
    column sums to 1 within :data:`SOURCE_SUM_TOLERANCE` (the source library's own tolerance).
    A table with a column sum further from 1 than the float64 tolerance of :meth:`HMM.create`
    (``FLOAT_TOLERANCE``; typically a float32 fit) has every column divided by its sum, and a
    :class:`RenormalizedWarning` says how far the model moved; other tables are kept as given.

    Raises:
        InputError: a negative or non-finite entry, or a column whose sum is not 1 within the
            tolerance (naming the table and column).
    """
    gaps, tvs, out = {}, {}, []
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
        out.append(fixed)
    if max(gaps.values()) > FLOAT_TOLERANCE:
        r = Renormalization(dtype, gaps, tvs)
        warnings.warn(RenormalizedWarning(r.describe(), r), stacklevel=5)
    return out[0][:, 0], out[1], out[2]


def hmmlearn_arrays(model: Any, *, pi0: Any = None, start: str = "h1") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, W, pi0)`` (float64) of a fitted ``hmmlearn.hmm.CategoricalHMM`` (module docstring);
    :meth:`HMM.from_hmmlearn <headprompt.models.hmm.values.HMM.from_hmmlearn>` builds the model.

    Args:
        model: the fitted model (``startprob_``, ``transmat_``, ``emissionprob_`` set).
        pi0: our ``P[H_0]``; default: from ``startprob_`` by :func:`start_to_initial`. A given
            ``pi0`` is checked against ``startprob_`` (for ``start="h1"``).
        start: how ``startprob_`` is read: ``"h1"``, ``"h0"`` or ``"stationary"`` (module docstring).

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


def _from_start_law(start_law: np.ndarray, A: np.ndarray, W: np.ndarray, *, pi0: Any, start: str,
                    name: str, names: tuple[str, str] = ("transmat_", "emissionprob_"),
                    source: str = "hmmlearn", dtype: str = "float64") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, W, pi0)`` with ``pi0`` read from a library's law of the first emitting state (our
    ``P[H_1]``) as ``start`` says, or checked against it when given (hmmlearn and dynamax); the
    fitted tables are renormalised first (:func:`renormalize`)."""
    if not isinstance(start, str) or start not in START_READINGS:
        raise InputError(f"start: expected one of {', '.join(map(repr, START_READINGS))}, found {start!r}")
    start_law, A, W = renormalize(start_law, A, W, names=(name,) + names, source=source, dtype=dtype)
    if pi0 is None:
        pi0 = start_to_initial(A, start_law, start, name=name, source=source)
    elif start != "h1":
        raise InputError(f"pi0: give either pi0= or start={start!r}, not both")
    else:
        try:
            pi0 = np.asarray(pi0, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"pi0: expected {A.shape[0]} probabilities, found {type(pi0).__name__}") from None
        if pi0.shape != start_law.shape or np.max(np.abs(A @ pi0 - start_law)) > FLOAT_TOLERANCE:
            raise InputError(f"pi0: A pi0 differs from the model's {name} (the library's first state is "
                             f"our H_1, so {name} is P[H_1] = A pi0)")
    return A, W, pi0


def dynamax_arrays(params: Any, *, pi0: Any = None, start: str = "h1") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, W, pi0)`` (float64) of dynamax ``CategoricalHMM`` parameters with one emission
    dimension: ``initial.probs`` is the law of the first emitting state (our ``P[H_1]``, read as
    ``start`` like hmmlearn's ``startprob_``), ``transitions.transition_matrix`` is
    row-stochastic (``A`` is its transpose) and ``emissions.probs`` is ``(|H|, 1, |X|)``.

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
