"""Smoothing in float32 (``posterior_marginals(..., dtype="float32")``, as dynamax runs by
default): the same quantity as the float64 kernels, uncertified (as float mode is).

Every kernel normalises the messages to sum 1 after every step (as dynamax does), so none leaves
float32's range at any sequence length and an impossible sequence gets all-zero marginals.
:func:`float32_kernel` picks by size among the compiled kernels of :mod:`.float32_compiled`
(numba: one vectorised over sequences for few states, one calling BLAS for each product with
the rest of the step fused into one compiled pass for tens to hundreds of states, one streaming
the rows of ``A`` once per step for both passes for many states and few sequences), the step
loop :func:`smoothed_float32_steps` (numpy's sgemm per step and pass from Python, the rest of
each step one compiled call; the fastest at 300-1,500 states where the sgemm dominates) and the
BLAS loop :func:`smoothed_float32_numpy` (the kernel without numba).
Measured against dynamax's float32 in ``benchmarks/results/smoothing/issue38-float32.md``.

Shapes: ``n`` sequences, ``T`` positions, ``H`` hidden states.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from ..hmm.values import HMM
from . import float32_compiled
from .float_inputs import float32_arrays
from .scaling import single_thread_blas

__all__ = ["DTYPES", "smoothed_float32", "smoothed_float32_numpy", "smoothed_float32_steps", "float32_kernel",
           "COLUMNS_MAX_STATES",
           "BLAS_MAX_STATES", "BLAS_ANY_BATCH_MAX_STATES", "ROWS_MIN_STATES",
           "ROWS_MAX_SEQUENCES"]

# measured against dynamax's float32 and the BLAS loop (benchmarks/results/smoothing/issue38-float32.md)
COLUMNS_MAX_STATES = 32    # the compiled kernel vectorised over sequences up to this many states
BLAS_MAX_STATES = 300      # the compiled one calling BLAS per product up to this many states, ...
BLAS_ANY_BATCH_MAX_STATES = 100   # ... for any batch up to this many, above it for one sequence
ROWS_MIN_STATES = 1536     # the one streaming rows of A from this many states ...
ROWS_MAX_SEQUENCES = 32    # ... with at most this many sequences (between: the BLAS loop)

DTYPES = ("float64", "float32")
"""The precisions of the smoothing API (:func:`.floats.posterior_marginals`): float64 (the default, and
the certified kernels' only one), or float32 as dynamax runs by default."""


def float32_kernel(H: int, n: int) -> str:
    """Which kernel smooths ``n`` sequences on ``H`` states in float32: ``"columns"``
    (:func:`.float32_compiled.columns_kernel`, vectorised over sequences, no Python call per
    step) up to :data:`COLUMNS_MAX_STATES` states; ``"blas"`` (:func:`.float32_compiled.blas_kernel`,
    a BLAS sgemm per step and pass called from compiled code, the elementwise work fused, no
    Python call per step) up to :data:`BLAS_ANY_BATCH_MAX_STATES` states, and up to
    :data:`BLAS_MAX_STATES` for one sequence; ``"rows"``
    (:func:`.float32_compiled.rows_kernel`, one streamed read of ``A`` per step for both passes)
    from :data:`ROWS_MIN_STATES` states with at most :data:`ROWS_MAX_SEQUENCES` sequences; else
    ``"steps"`` (:func:`smoothed_float32_steps`: numpy's sgemm per step and pass from Python, the
    elementwise work one compiled call per step); ``"numpy"`` (:func:`smoothed_float32_numpy`,
    no numba) always without numba. Measured kernel against kernel, interleaved, one thread,
    T = 129: ``steps`` / ``blas`` 1.2-2.2x faster at 110-300 states with 2-64 sequences (scipy's
    sgemm, which ``blas`` calls, is slow on few rows), level at 100-300 with 256, slower at 40-100
    with 8-64 and with one sequence (a Python call per step)."""
    if not float32_compiled.available():
        return "numpy"
    if H <= COLUMNS_MAX_STATES:
        return "columns"
    if H <= BLAS_ANY_BATCH_MAX_STATES or (H <= BLAS_MAX_STATES and n == 1):
        return "blas"
    return "rows" if H >= ROWS_MIN_STATES and n <= ROWS_MAX_SEQUENCES else "steps"


def smoothed_float32(hmm: HMM, tokens: np.ndarray) -> np.ndarray:
    """:func:`.floats.posterior_marginals` in float32 for ``tokens`` ``[n, T]`` (checked): the
    kernel :func:`float32_kernel` picks. Returns ``[n, T, H]`` float32."""
    A, AT, W, pi0 = float32_arrays(hmm)
    tokens = np.ascontiguousarray(tokens.T)                           # [T, n]
    t, n = tokens.shape
    H = hmm.num_states
    kind = float32_kernel(H, n)
    if kind == "columns":
        post = np.empty((t, H, n), dtype=np.float32)
        float32_compiled.columns_kernel()(A, AT, W, pi0, tokens, post)
        return post.transpose(2, 0, 1)
    if kind == "blas":
        post = np.empty((t, n, H), dtype=np.float32)
        with _one_thread_all_blas():
            float32_compiled.blas_kernel()(A, AT, W, pi0, tokens, post, np.ones(H, dtype=np.float32))
        return post.transpose(1, 0, 2)
    if kind == "rows":
        m = 4 * -(-n // 4)                                            # groups of four sequences
        if m != n:                                                    # padding: token 0, discarded
            tokens = np.concatenate([tokens, np.zeros((t, m - n), dtype=tokens.dtype)], axis=1)
        post, beta = np.empty((t, m, H), dtype=np.float32), np.empty((t, m, H), dtype=np.float32)
        float32_compiled.rows_kernel()(A, W, pi0, tokens, post, beta)
        return post[:, :n].transpose(1, 0, 2)
    if kind == "steps":
        return smoothed_float32_steps(hmm, tokens.T)
    return smoothed_float32_numpy(hmm, tokens.T)


def smoothed_float32_steps(hmm: HMM, tokens: np.ndarray) -> np.ndarray:
    """Smoothing in float32 with messages as rows ``[n, H]``, as
    :func:`.float32_compiled.blas_kernel` computes it, but each product numpy's sgemm called from
    Python (``x @ A^T`` forward, ``y @ A`` backward) and the elementwise work of each step one
    compiled call (:func:`.float32_compiled.step_kernels`). Measured at 300-1,000 states against
    the loop of :func:`smoothed_float32_numpy` (interleaved, one thread, T = 129): 1.09-1.37x
    faster at 300 x 16, 400 x 64, 700 x 32 and 1,000 x 16; against the ``blas`` kernel it ties at
    50 and 100 states and is faster where scipy's sgemm is slow on few rows. Returns ``[n, T, H]``
    float32."""
    emitted, posterior, normalised = float32_compiled.step_kernels()
    A, AT, W, pi0 = float32_arrays(hmm)
    toks = np.ascontiguousarray(tokens.T)                                # [t, n]
    t, n = toks.shape
    H = hmm.num_states
    post = np.empty((t, n, H), dtype=np.float32)
    ones = np.ones(H, dtype=np.float32)
    x = np.repeat(pi0[None, :], n, axis=0)
    with single_thread_blas():
        for j in range(t):                                              # alpha_j = norm(v_j ⊙ A alpha_{j-1})
            np.matmul(x, AT, out=post[j])
            emitted(post[j], W, toks[j])
            x = post[j]
        beta, y = np.ones((n, H), dtype=np.float32), np.empty((n, H), dtype=np.float32)
        for j in range(t - 1, -1, -1):                                  # post_j = norm(alpha_j ⊙ beta_j)
            posterior(post[j], beta, y, W, toks[j], j == 0)
            if j:
                np.matmul(y, A, out=beta)                               # beta_{j-1} = norm(A^T (v_j ⊙ beta_j))
                normalised(beta, ones)
    return post.transpose(1, 0, 2)


@functools.cache
def _blas_controller():
    """A threadpoolctl controller that sees scipy's OpenBLAS, the one numba's ``np.dot`` calls:
    created after loading it (a controller made before, as :func:`.scaling.single_thread_blas`'s
    may be, leaves that library at its default thread count; on a busy machine its threads
    made the ``"blas"`` kernel 100-1,000x slower, measured). None without threadpoolctl."""
    import scipy.linalg.cython_blas  # noqa: F401  (loads scipy's BLAS into the process)
    try:
        from threadpoolctl import ThreadpoolController
        return ThreadpoolController()
    except Exception:  # pragma: no cover - threadpoolctl missing or unable to act
        return None


def _one_thread_all_blas():
    """A context in which every loaded BLAS, scipy's included, runs on one thread."""
    controller = _blas_controller()
    return controller.limit(limits=1, user_api="blas") if controller is not None else contextlib.nullcontext()


def smoothed_float32_numpy(hmm: HMM, tokens: np.ndarray) -> np.ndarray:
    """Smoothing in float32 through numpy's BLAS alone (the kernel without numba): forward and
    backward messages ``[H, n]`` (sequences as columns, one float32 GEMM per step, the step's
    emissions gathered as rows of ``W``), each normalised to sum 1 after every step (so no
    message leaves float32's range; a zero column stays zero), then ``alpha_i ⊙ beta_i``
    normalised. Returns ``[n, T, H]`` float32."""
    A, AT, W, pi0 = float32_arrays(hmm)
    n, t = tokens.shape
    H = hmm.num_states
    tiny = np.finfo(np.float32).tiny
    ones = np.ones(H, dtype=np.float32)
    # each step's emissions [H, n] are gathered as rows of W and read transposed: a gather of all
    # positions into a [t, H, n] copy took 8-11 of the 90-110 ms at 400 states x 64 sequences
    toks = np.ascontiguousarray(tokens.T)                               # [t, n]
    post = np.empty((t, H, n), dtype=np.float32)

    def normalise(v: np.ndarray) -> None:
        s = ones @ v
        np.maximum(s, tiny, out=s)
        v *= np.reciprocal(s, out=s)

    prev = np.repeat(pi0[:, None], n, axis=1)
    with single_thread_blas():
        for j in range(t):
            np.matmul(A, prev, out=post[j])
            post[j] *= W[toks[j]].T
            normalise(post[j])
            prev = post[j]
        beta, tmp = np.ones((H, n), dtype=np.float32), np.empty((H, n), dtype=np.float32)
        for j in range(t - 1, -1, -1):
            post[j] *= beta
            normalise(post[j])                                        # while it is in cache
            if j:
                np.multiply(W[toks[j]].T, beta, out=tmp)
                np.matmul(AT, tmp, out=beta)
                normalise(beta)
    return post.transpose(2, 0, 1)
