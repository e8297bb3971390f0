"""Learned HMMs: conversion to and from ``hmmlearn.hmm.CategoricalHMM`` (SPEC section 5).

hmmlearn's conventions against ours (SPEC section 1):

- ``transmat_[i, j] = Pr(next = j | current = i)`` is row-stochastic: ``A = transmat_.T``.
- ``emissionprob_[h, x] = Pr(x | h)``: ``W = emissionprob_.T``.
- ``startprob_`` is the law of the *first emitting* state, our ``P[H_1] = A pi0`` (our ``H_0``
  emits nothing). Going from hmmlearn to us needs a ``pi0`` in the simplex with
  ``A pi0 = startprob_``: :func:`initial_from_start` solves it by nonnegative least squares and
  checks the residual; when ``startprob_`` is not in the image of the simplex under ``A`` (a
  chain whose every state moves to state 0 reaches only ``startprob_ = e_0``) it says so. When ``A`` is singular
  the solution need not be unique; every solution gives the same law of ``X_{1:T}`` and of
  ``H_1..H_T``, and posteriors of ``H_0`` then depend on the choice (give ``pi0`` yourself).

hmmlearn is needed only when these functions are called.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InputError
from .limits import FLOAT_TOLERANCE

__all__ = ["initial_from_start", "hmmlearn_arrays", "to_hmmlearn"]


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


def hmmlearn_arrays(model: Any, *, pi0: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, W, pi0)`` (float64) of a fitted ``hmmlearn.hmm.CategoricalHMM`` (module docstring);
    :meth:`HMM.from_hmmlearn <headprompt.models.hmm.values.HMM.from_hmmlearn>` builds the model.

    Args:
        model: the fitted model (``startprob_``, ``transmat_``, ``emissionprob_`` set).
        pi0: our ``P[H_0]``; default: solved from ``A pi0 = startprob_`` by
            :func:`initial_from_start`. A given ``pi0`` is checked against ``startprob_``.

    Raises:
        InputError: a model without fitted parameters, or no ``pi0`` (see above).
    """
    try:
        start = np.asarray(model.startprob_, dtype=float)
        transmat = np.asarray(model.transmat_, dtype=float)
        emission = np.asarray(model.emissionprob_, dtype=float)
    except AttributeError as exc:
        raise InputError(f"from_hmmlearn: expected a fitted hmmlearn CategoricalHMM ({exc})") from None
    A = transmat.T                                            # (|H|, |H|) column-stochastic
    W = emission.T                                            # (|X|, |H|)
    if pi0 is None:
        pi0 = initial_from_start(A, start)
    else:
        pi0 = np.asarray(pi0, dtype=float)
        if pi0.shape != start.shape or np.max(np.abs(A @ pi0 - start)) > FLOAT_TOLERANCE:
            raise InputError("pi0: A pi0 differs from the model's startprob_ (hmmlearn's start law is our "
                             "P[H_1] = A pi0)")
    return A, W, pi0


def to_hmmlearn(hmm: Any, **kwargs: Any) -> Any:
    """A ``hmmlearn.hmm.CategoricalHMM`` with the same law of ``H_1..H_T, X_1..X_T``:
    ``startprob_ = A pi0``, ``transmat_ = A.T``, ``emissionprob_ = W.T`` (float64).
    ``kwargs`` go to the constructor (``init_params`` defaults to ``""`` so that a later
    ``fit`` starts from these parameters)."""
    from hmmlearn.hmm import CategoricalHMM

    f = hmm.to_float()
    kwargs.setdefault("init_params", "")
    model = CategoricalHMM(n_components=f.num_states, n_features=f.num_tokens, **kwargs)
    model.startprob_ = f.hidden_marginal_1()
    model.transmat_ = f.A.T.copy()
    model.emissionprob_ = f.W.T.copy()
    return model
