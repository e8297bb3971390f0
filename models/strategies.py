"""Hypothesis strategies for random HMMs and memory HMMs, for your own property tests.

Every option is keyword-only and accepts a value or a strategy::

    from hypothesis import given
    from .strategies import hmms

    @given(hmms(num_states=st.integers(2, 4), num_tokens=2, sparsity=0.3))
    def test_something(hmm): ...

Exact instances have rational entries with denominators bounded by ``max_weight`` per column;
``sparsity`` is the chance that an entry is forced to zero (each column keeps at least one
nonzero). Float instances are the same rationals converted to float64.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import strategies as st

from .hmm import HMM, MemoryHMM

__all__ = ["stochastic_columns", "hmms", "memory_hmms", "token_sequences"]


def _draw(draw, value: Any) -> Any:
    return draw(value) if isinstance(value, st.SearchStrategy) else value


@st.composite
def stochastic_columns(draw, rows: int, cols: int, *, sparsity: float | st.SearchStrategy = 0.0,
                       max_weight: int = 6, exact: bool = True) -> np.ndarray:
    """A ``rows x cols`` column-stochastic matrix of Fractions (or floats): integer weights in
    ``0..max_weight`` per column, normalised exactly; each column keeps at least one nonzero."""
    sparsity = _draw(draw, sparsity)
    out = np.empty((rows, cols), dtype=object)
    for c in range(cols):
        weights = [0 if draw(st.floats(0, 1)) < sparsity else draw(st.integers(1, max_weight))
                   for _ in range(rows)]
        if sum(weights) == 0:
            weights[draw(st.integers(0, rows - 1))] = draw(st.integers(1, max_weight))
        total = sum(weights)
        out[:, c] = [Fraction(w, total) for w in weights]
    return out if exact else out.astype(float)


@st.composite
def hmms(draw, *, num_states: int | st.SearchStrategy = st.integers(1, 4),
         num_tokens: int | st.SearchStrategy = st.integers(1, 3),
         sparsity: float | st.SearchStrategy = 0.0, exact: bool | st.SearchStrategy = True,
         with_task: bool | st.SearchStrategy = False, max_weight: int = 6) -> HMM:
    """Random vanilla HMMs; ``with_task`` adds an integer task vector ``mu`` (ties possible)."""
    n, x, ex = _draw(draw, num_states), _draw(draw, num_tokens), _draw(draw, exact)
    A = draw(stochastic_columns(n, n, sparsity=sparsity, max_weight=max_weight, exact=ex))
    W = draw(stochastic_columns(x, n, sparsity=sparsity, max_weight=max_weight, exact=ex))
    pi0 = draw(stochastic_columns(n, 1, sparsity=sparsity, max_weight=max_weight, exact=ex))[:, 0]
    mu = None
    if _draw(draw, with_task):
        mu = np.array([Fraction(draw(st.integers(-3, 3))) for _ in range(n)], dtype=object)
        mu = mu if ex else mu.astype(float)
    return HMM(A, W, pi0, mu)


@st.composite
def memory_hmms(draw, *, cells: int | st.SearchStrategy = st.integers(1, 2),
                memory_values: int | st.SearchStrategy = st.integers(1, 3),
                syntax_states: int | st.SearchStrategy = st.integers(1, 2),
                num_tokens: int | st.SearchStrategy = st.integers(1, 3),
                sparsity: float | st.SearchStrategy = 0.0, exact: bool | st.SearchStrategy = True,
                product_prior: bool | st.SearchStrategy = st.booleans(), max_weight: int = 6) -> MemoryHMM:
    """Random memory-augmented HMMs with a joint or product memory prior and a task ``mu``."""
    N, M, S, X = (_draw(draw, v) for v in (cells, memory_values, syntax_states, num_tokens))
    ex = _draw(draw, exact)
    H = N * S
    kw = dict(sparsity=sparsity, max_weight=max_weight, exact=ex)
    A = draw(stochastic_columns(H, H, **kw))
    W = draw(stochastic_columns(X, M * H, **kw)).reshape(X, M, H)
    pi0 = draw(stochastic_columns(H, 1, **kw))[:, 0]
    mu = np.array([Fraction(draw(st.integers(-3, 3))) for _ in range(M)], dtype=object)
    mu = mu if ex else mu.astype(float)
    target = draw(st.integers(0, N - 1))
    if _draw(draw, product_prior):
        cells_prior = draw(stochastic_columns(M, N, **kw)).T
        return MemoryHMM.create(N, M, S, A, W, pi0, pM_cells=cells_prior, mu=mu, target_cell=target, exact=ex)
    pM = draw(stochastic_columns(M ** N, 1, **kw))[:, 0]
    return MemoryHMM(N, M, S, A, W, pi0, pM, mu, target)


def token_sequences(num_tokens: int, *, min_length: int = 1, max_length: int = 4) -> st.SearchStrategy:
    """Token sequences over ``0..num_tokens-1``."""
    return st.lists(st.integers(0, num_tokens - 1), min_size=min_length, max_size=max_length)
