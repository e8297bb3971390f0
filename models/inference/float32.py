"""Smoothing in float32 (``posterior_marginals(..., dtype="float32")``, as dynamax runs by
default): the same quantity as the float64 kernels, uncertified (as float mode is).

Shapes: ``n`` sequences, ``T`` positions, ``H`` hidden states.
"""

from __future__ import annotations

import numpy as np

from ..hmm.values import HMM
from .float_inputs import float32_arrays
from .scaling import single_thread_blas

__all__ = ["DTYPES", "smoothed_float32"]

DTYPES = ("float64", "float32")
"""The precisions of the smoothing API (:func:`.floats.posterior_marginals`): float64 (the default, and
the certified kernels' only one), or float32 as dynamax runs by default."""


def smoothed_float32(hmm: HMM, tokens: np.ndarray) -> np.ndarray:
    """:func:`.floats.posterior_marginals` in float32: forward and backward messages ``[H, n]`` (sequences
    as columns, one float32 GEMM per step, the embeddings of every position gathered once), each
    normalised to sum 1 after every step (so no message leaves float32's range; a zero column
    stays zero), then ``alpha_i ⊙ beta_i`` normalised. Returns ``[n, T, H]`` float32."""
    A, AT, W, pi0 = float32_arrays(hmm)
    n, t = tokens.shape
    H = hmm.num_states
    tiny = np.finfo(np.float32).tiny
    ones = np.ones(H, dtype=np.float32)
    emb = np.ascontiguousarray(W[tokens.T].transpose(0, 2, 1))       # [t, H, n]
    post = np.empty((t, H, n), dtype=np.float32)

    def normalise(v: np.ndarray) -> None:
        s = ones @ v
        np.maximum(s, tiny, out=s)
        v *= np.reciprocal(s, out=s)

    prev = np.repeat(pi0[:, None], n, axis=1)
    with single_thread_blas():
        for j in range(t):
            np.matmul(A, prev, out=post[j])
            post[j] *= emb[j]
            normalise(post[j])
            prev = post[j]
        beta, tmp = np.ones((H, n), dtype=np.float32), np.empty((H, n), dtype=np.float32)
        for j in range(t - 1, -1, -1):
            post[j] *= beta
            if j:
                np.multiply(emb[j], beta, out=tmp)
                np.matmul(AT, tmp, out=beta)
                normalise(beta)
        s = ones @ post                                               # [t, n]
        np.maximum(s, tiny, out=s)
        post *= np.reciprocal(s, out=s)[:, None, :]
    return post.transpose(2, 0, 1)
