"""Which ``pi0 = P[H_0]`` a fitted model's start law stands for (SPEC sections 1 and 5).

hmmlearn's ``startprob_`` and dynamax's ``initial.probs`` are the law of the *first emitting*
state; our ``H_0`` emits nothing and ``P[H_1] = A pi0``. Readings (``start=``):

- ``"auto"`` (default): ``"h1"`` when some ``pi0`` in the simplex reaches the start law
  (``A pi0 = startprob_`` within ``FLOAT_TOLERANCE``), else ``"stationary"``. It never makes a
  zero the model does not have: an exact ``"h1"`` solution is the most interior one (its
  smallest entry as large as possible), and the stationary law of an irreducible ``A`` is
  positive. Where no ``pi0`` reaches the start law, the ``"h1"`` closest point is often a vertex
  of the simplex (a fit on one long sequence leaves ``startprob_`` nearly one-hot), whose zeros
  would make Assumption 3.2 fail for the conversion's sake, not the model's.
- ``"h1"``: ``startprob_`` is ``P[H_1]``: the most interior exact solution when one exists,
  otherwise the ``pi0`` closest in total variation (a linear program), with a
  :class:`StartLawWarning` giving the distance. When ``A`` is singular the solution need not be
  unique; every solution gives the same law of ``X_{1:T}`` and of ``H_1..H_T`` (posteriors of
  ``H_0`` then depend on the choice: give ``pi0`` yourself).
- ``"h0"``: ``startprob_`` is read as ``pi0 = P[H_0]`` (so ``P[H_1] = A startprob_``).
- ``"stationary"``: ``pi0`` is the stationary law of ``A`` (``startprob_`` is ignored), the
  chain observed in its steady state.

:func:`start_readings` computes every reading, so a conversion can say which one it used and
what the others give (:class:`~.conversion.Conversion`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..exceptions import InputError
from .conversion import StartReading
from .limits import FLOAT_TOLERANCE

__all__ = ["START_READINGS", "START_OPTIONS", "StartLawWarning", "closest_initial", "interior_initial",
           "stationary_law", "initial_from_start", "start_readings", "choose_start", "start_to_initial"]

START_READINGS = ("h1", "h0", "stationary")
"""The readings of a start law as ``pi0`` (module docstring)."""

START_OPTIONS = ("auto",) + START_READINGS
"""What ``start=`` accepts: a reading, or ``"auto"`` (the default: ``"h1"`` when a ``pi0``
reaches the start law, else ``"stationary"``)."""


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


def interior_initial(A: Any, start: Any, *, tolerance: float = FLOAT_TOLERANCE) -> np.ndarray | None:
    """The most interior ``pi0`` of the simplex with ``A pi0 = start`` (within ``tolerance`` in
    total variation), or None when no ``pi0`` reaches ``start``. ``A``: ``(n, n)``
    column-stochastic float; ``start``: ``(n,)``.

    Among the solutions it takes one whose smallest entry is (up to a factor 2) as large as
    possible, so no entry is 0 unless every solution has it 0: the midpoint of the closest
    point (:func:`closest_initial`, a vertex of the solution set) and the solution of the linear
    program ``max s`` subject to ``|A pi0 - start| <= tolerance / n`` in every entry,
    ``pi0 >= s``, ``sum pi0 = 1`` (the midpoint halves the LP's slack; a positive entry of
    either stays positive).

    >>> interior_initial([[1.0, 1.0], [0.0, 0.0]], [1.0, 0.0]).round(6).tolist()   # the LP's (1/2, 1/2) and (1, 0)
    [0.75, 0.25]
    >>> interior_initial([[1.0, 1.0], [0.0, 0.0]], [0.5, 0.5]) is None
    True
    """
    from scipy.optimize import linprog

    A = np.asarray(A, dtype=float)
    start = np.asarray(start, dtype=float)
    closest, distance = closest_initial(A, start)
    if distance > tolerance:
        return None
    n = A.shape[0]
    slack = tolerance / n
    cost = np.concatenate([np.zeros(n), [-1.0]])                              # variables (pi0, s)
    upper = np.block([[A, np.zeros((n, 1))], [-A, np.zeros((n, 1))], [-np.eye(n), np.ones((n, 1))]])
    bound = np.concatenate([start + slack, slack - start, np.zeros(n)])
    equal = np.concatenate([np.ones(n), [0.0]])[None, :]
    res = linprog(cost, A_ub=upper, b_ub=bound, A_eq=equal, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    if res.status != 0:
        return closest
    pi0 = (closest + np.clip(res.x[:n], 0.0, None)) / 2
    pi0 = pi0 / pi0.sum()
    return pi0 if 0.5 * np.abs(A @ pi0 - start).sum() <= tolerance else closest


def _reading(name: str, pi0: np.ndarray, A: np.ndarray, start: np.ndarray) -> StartReading:
    return StartReading(name, tuple(float(v) for v in pi0), float(0.5 * np.abs(A @ pi0 - start).sum()),
                        tuple(int(h) for h in np.flatnonzero(pi0 == 0)))


def start_readings(A: Any, start: Any, *, tolerance: float = FLOAT_TOLERANCE) -> dict[str, StartReading]:
    """Every reading of the start law ``start`` (our ``P[H_1]``) as ``pi0`` (module docstring),
    by name (``"h1"``, ``"h0"``, ``"stationary"``), each with its distance
    ``TV(A pi0, start)`` and the states where its ``pi0`` is 0.

    Raises:
        InputError: shapes that disagree or entries that are not finite.
    """
    A = np.asarray(A, dtype=float)
    start = np.asarray(start, dtype=float)
    if start.shape != (A.shape[0],):
        raise InputError(f"startprob_: expected {A.shape[0]} entries, found shape {start.shape}")
    interior = interior_initial(A, start, tolerance=tolerance)
    h1 = closest_initial(A, start)[0] if interior is None else interior
    return {"h1": _reading("h1", h1, A, start),
            "h0": _reading("h0", start / start.sum(), A, start),
            "stationary": _reading("stationary", stationary_law(A), A, start)}


def choose_start(A: Any, start: Any, reading: str = "auto", *, tolerance: float = FLOAT_TOLERANCE,
                 name: str = "startprob_", source: str = "hmmlearn") -> tuple[str, dict[str, StartReading]]:
    """``(the reading used, every reading)`` for ``start=reading`` (module docstring). A
    :class:`StartLawWarning` says when no ``pi0`` reaches the start law and the reading used is
    ``"h1"`` (the closest point) or ``"auto"``'s fallback ``"stationary"``; ``name`` and
    ``source`` name the start law in it (dynamax: ``initial.probs``).

    Raises:
        InputError: an unknown ``reading``, or shapes that disagree.
    """
    if not isinstance(reading, str) or reading not in START_OPTIONS:
        raise InputError(f"start: expected one of {', '.join(map(repr, START_OPTIONS))}, found {reading!r}")
    readings = start_readings(A, start, tolerance=tolerance)
    distance = readings["h1"].distance
    used = reading
    if reading == "auto":
        used = "h1" if distance <= tolerance else "stationary"
    if used == "h1" and distance > tolerance:
        warnings.warn(StartLawWarning(
            f"{name} is not P[H_1] = A pi0 for any pi0 ({source}'s first state is our H_1); used the "
            f"closest pi0, at total variation {distance:.3g} from {name} (start='auto' reads it as the "
            "stationary law instead, without the zeros the closest point may have)", distance), stacklevel=5)
    elif reading == "auto" and used == "stationary":
        warnings.warn(StartLawWarning(
            f"{name} is not P[H_1] = A pi0 for any pi0 ({source}'s first state is our H_1; the closest pi0 is "
            f"at total variation {distance:.3g}); start='auto' used the stationary law of A as pi0 (model.conversion "
            "lists every reading; start='h1' or 'h0' read it otherwise)", distance), stacklevel=5)
    return used, readings


def start_to_initial(A: Any, start: Any, reading: str = "auto", *, tolerance: float = FLOAT_TOLERANCE,
                     name: str = "startprob_", source: str = "hmmlearn") -> np.ndarray:
    """Our ``pi0`` from a start law under ``reading`` (:func:`choose_start`), float64.

    Raises:
        InputError: an unknown ``reading``, or shapes that disagree.
    """
    used, readings = choose_start(A, start, reading, tolerance=tolerance, name=name, source=source)
    return np.array(readings[used].pi0, dtype=float)
