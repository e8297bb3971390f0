"""The inputs of the float kernels: validated token arrays, a model's arrays converted once
(float64, and float32 for the smoothing API's ``dtype="float32"``) and the rescaling interval
of the messages. Below :mod:`.floats` (which re-exports every name here) and
:mod:`.float32`, so that both read the same cached arrays without importing each other.

Shapes: ``n`` sequences, ``T`` positions, ``H`` hidden states, ``X`` tokens.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import SequenceError
from ..hmm.values import HMM
from .scaling import largest, positive_min

__all__ = ["check_token_array", "float_arrays", "float32_arrays", "rescale_interval"]


def check_token_array(tokens, num_tokens: int) -> np.ndarray:
    """``tokens`` as an ``int64`` array ``[n, T]`` (a 1-D sequence becomes ``[1, T]``).

    Raises:
        SequenceError: empty, non-integer or out-of-vocabulary tokens (naming the first).
    """
    arr = np.asarray(tokens)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise SequenceError(f"tokens: expected shape [n, T] with T >= 1, found {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise SequenceError(f"tokens: expected integers, found dtype {arr.dtype}")
    bad = (np.argwhere((arr < 0) | (arr >= num_tokens)) if arr.size and (arr.min() < 0 or arr.max() >= num_tokens)
           else ())                                        # min/max first: one pass, no mask
    if len(bad):
        r, c = bad[0]
        raise SequenceError(f"tokens: token {arr[r, c]} at sequence {r}, position {c} is outside "
                            f"the vocabulary 0..{num_tokens - 1}")
    return arr.astype(np.int64, copy=False)


def float_arrays(hmm: HMM) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(A, A^T, W, pi0)`` as C-contiguous float64 arrays, converted once per model (cached)."""
    return hmm.memo("float_arrays", lambda: _build_float_arrays(hmm))


def _build_float_arrays(hmm: HMM) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    f = hmm.to_float()
    A = np.ascontiguousarray(f.A, dtype=float)
    out = (A, np.ascontiguousarray(A.T), np.ascontiguousarray(f.W, dtype=float),
           np.ascontiguousarray(f.pi0, dtype=float))
    for a in out:
        a.setflags(write=False)
    return out


def float32_arrays(hmm: HMM) -> tuple:
    """``(A, A^T, W, pi0)`` in float32 (each entry the float64 one rounded), cached per model."""
    def build():
        out = tuple(a.astype(np.float32) for a in float_arrays(hmm))
        for a in out:
            a.setflags(write=False)
        return out
    return hmm.memo("float32_arrays", build)


def rescale_interval(A: np.ndarray, table: np.ndarray) -> int:
    """How many steps messages may go between rescalings: each step shrinks a positive entry
    by at most ``a w`` (the smallest positive entries of ``A`` and of the embeddings), and
    ``(a w)^k`` must stay above ``2^-500`` (far from underflow). Between 1 and 16."""
    amin, wmin = positive_min(A), positive_min(table)
    per_step = -(np.log2(amin) + np.log2(wmin))      # the product may underflow to 0 (1e-300 * 1e-320)
    # messages never grow unless an embedding exceeds 1 (A is column-stochastic); then by at
    # most that factor per step, which must stay below 2^500 between rescalings as well
    per_step = max(per_step, np.log2(max(largest(table), 1.0)))
    return int(max(1, min(16, 500 // max(per_step, 1.0))))
