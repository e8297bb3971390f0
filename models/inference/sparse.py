"""Inference on large exact HMMs (:class:`~headprompt.models.hmm.large.LargeHMM`).

Float: sampling and backward messages through the one float kernel
(:func:`.floats.scaled_messages`, which multiplies by a sparse ``A`` over its nonzeros and
reads embeddings from a sparse ``W``), in batches so that memory stays ``O(batch x |H|)``.
Exact: the backward message of one sequence in Python integers over the nonzeros of ``A``
and ``W`` (the certified checker's fallback and cross-check).
"""

from __future__ import annotations

import math

import numpy as np

from ..hmm.large import LargeHMM
from . import floats as iff
from .exact import transpose_apply

__all__ = ["sample_large", "backward0_large", "posterior_h0_large", "exact_backward0", "BATCH"]

BATCH = 512
"""Sequences per kernel call: messages ``[BATCH, |H|]`` (64 MiB at 16,384 states)."""


def _column_sampler(csr_float, rng):
    """``draw(states) -> rows``: for each column ``h`` of a column-stochastic matrix (given as
    the CSR of its transpose, one row per column), a row index drawn from that column."""
    indptr, indices, data = csr_float.indptr, csr_float.indices, csr_float.data
    cum = np.cumsum(data)
    start = np.concatenate([[0.0], cum])[indptr[:-1]]
    total = np.concatenate([[0.0], cum])[indptr[1:]] - start

    def draw(states: np.ndarray) -> np.ndarray:
        target = start[states] + rng.random(len(states)) * total[states]
        k = np.searchsorted(cum, target, side="right")
        k = np.clip(k, indptr[states], indptr[states + 1] - 1)
        return indices[k]
    return draw


def sample_large(model: LargeHMM, count: int, length: int, *, rng: np.random.Generator) -> np.ndarray:
    """``count`` token sequences of ``length`` drawn from the model: ``int64 [count, length]``
    (so each has ``Pr(x) > 0``: every draw follows a positive entry)."""
    f = model.float_form()
    A_cols = f["A"].T.tocsr()               # row h = column h of A
    W_cols = f["W"].T.tocsr()
    step, emit = _column_sampler(A_cols, rng), _column_sampler(W_cols, rng)
    p = f["pi0"] / f["pi0"].sum()
    h = rng.choice(model.num_states, size=count, p=p)
    out = np.empty((count, length), dtype=np.int64)
    for j in range(length):
        h = step(h)
        out[:, j] = emit(h)
    return out


def backward0_large(model: LargeHMM, tokens: np.ndarray, *, track: bool = False, every: int | None = None,
                    batch: int = BATCH):
    """``beta0 ∝ Pr(x | H_0 = h)`` (``[n, |H|]``) of token rows, batch by batch; with ``track``
    also each row's smallest positive rescaled entry (the certified kernel's underflow guard)."""
    f = model.float_form()
    tokens = np.asarray(tokens, dtype=np.int64)
    n = len(tokens)
    beta0 = np.empty((n, model.num_states))
    minpos = np.full(n, np.inf)
    for lo in range(0, n, batch):
        idx = np.ascontiguousarray(tokens[lo:lo + batch].T)
        m = iff.scaled_messages(f["A"], None, f["pi0"], f["W"], idx, forward=False, store=False,
                                track=track, every=every)
        beta0[lo:lo + batch] = m["beta0"]
        if track:
            minpos[lo:lo + batch] = m["minpos"]
    return (beta0, minpos) if track else beta0


def posterior_h0_large(model: LargeHMM, tokens: np.ndarray) -> np.ndarray:
    """``P[H_0 | X = x]`` per row (float; zero rows where ``Pr(x) = 0``)."""
    post = backward0_large(model, tokens) * model.float_form()["pi0"][None, :]
    s = post.sum(axis=1, keepdims=True)
    return post / np.where(s > 0, s, 1.0)


def exact_backward0(model: LargeHMM, seq) -> tuple[np.ndarray, int]:
    """``(ints, scale)``: ``Pr(x | H_0 = h) = ints[h] / scale`` exactly (Python integers), by
    ``beta_{j-1} = A^T (W[x_j] ⊙ beta_j)`` over the nonzeros of ``A`` and ``W``."""
    lA = math.lcm(*{int(v) for v in model.dA.tolist()})
    lW = math.lcm(*{int(v) for v in model.dW.tolist()})
    sA = np.array([lA // int(v) for v in model.dA.tolist()], dtype=object)
    sW = np.array([lW // int(v) for v in model.dW.tolist()], dtype=object)
    W_rows = model.W.tocsr()
    A = model.A
    H = model.num_states
    beta = np.ones(H, dtype=object)
    scale = 1
    for z in reversed(list(seq)):
        lo, hi = W_rows.indptr[z], W_rows.indptr[z + 1]
        cols = W_rows.indices[lo:hi]
        y = np.zeros(H, dtype=object)                    # W[z] ⊙ beta, times lW
        y[cols] = W_rows.data[lo:hi].astype(object) * sW[cols] * beta[cols]
        beta = transpose_apply(A.indptr, A.indices, A.data.astype(object), y) * sA     # A^T y, times lA
        scale *= lA * lW
    return beta, scale

