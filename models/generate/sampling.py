"""Vectorised sampling of sequences and documents from HMMs and memory HMMs.

All randomness comes from an explicit :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from ..hmm.values import HMM, MemoryHMM

__all__ = ["sample", "sample_categorical_columns"]

_CHUNK_ENTRIES = 1 << 22          # work arrays of at most ~4M entries (32 MB)


def sample_categorical_columns(matrix: np.ndarray, columns: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each entry ``c`` of ``columns`` (``[n]``), draw a row index from ``matrix[:, c]``
    (a column-stochastic float matrix). Returns ``int64 [n]``."""
    cum_all = np.cumsum(matrix, axis=0)
    u_all = rng.random(len(columns))
    out = np.empty(len(columns), dtype=np.int64)
    chunk = max(1, _CHUNK_ENTRIES // matrix.shape[0])        # bounded memory for long documents
    for start in range(0, len(columns), chunk):
        cols = columns[start:start + chunk]
        cum = cum_all[:, cols]                                 # [rows, chunk]
        u = u_all[start:start + chunk] * cum[-1]               # guard against sums 1 - eps
        out[start:start + chunk] = np.minimum((u[None, :] >= cum).sum(axis=0), matrix.shape[0] - 1)
    return out


def sample(model: HMM | MemoryHMM, num_sequences: int, length: int, *, rng: np.random.Generator):
    """Draw ``num_sequences`` sequences of ``length`` tokens.

    Returns ``(tokens [n, T], states [n, T + 1])`` for an :class:`HMM` (``states[:, 0]`` is
    ``H_0``, which emits nothing) and ``(tokens, states, memories [n, N])`` for a
    :class:`MemoryHMM` (memories index values per cell).

    Raises:
        InputError: for a nonpositive count or length.
    """
    if num_sequences < 1 or length < 1:
        raise InputError(f"sample: need at least one sequence of at least one token, found "
                         f"{num_sequences} sequences of length {length}")
    f = model.to_float()
    A, pi0 = np.asarray(f.A, float), np.asarray(f.pi0, float)
    n = num_sequences
    states = np.empty((n, length + 1), dtype=np.int64)
    states[:, 0] = sample_categorical_columns(pi0[:, None], np.zeros(n, dtype=np.int64), rng)
    for t in range(1, length + 1):
        states[:, t] = sample_categorical_columns(A, states[:, t - 1], rng)
    if isinstance(f, HMM):
        W = np.asarray(f.W, float)
        tokens = sample_categorical_columns(W, states[:, 1:].ravel(), rng).reshape(n, length)
        return tokens, states
    configs = np.array(f.memory_configurations(), dtype=np.int64)          # [C, N]
    c = sample_categorical_columns(np.asarray(f.pM, float)[:, None], np.zeros(n, dtype=np.int64), rng)
    memories = configs[c]                                                   # [n, N]
    cell = states[:, 1:] // f.syntax_states                                 # [n, T]
    m = np.take_along_axis(memories, cell, axis=1)                          # [n, T]
    Wflat = f.emission_matrix()                                             # [X, M*H]
    cols = (m * f.num_states + states[:, 1:]).ravel()
    tokens = sample_categorical_columns(np.asarray(Wflat, float), cols, rng).reshape(n, length)
    return tokens, states, memories
