"""Fused float64 forward-backward: smoothed marginals with both passes in one loop.

:func:`smoothed_products` computes ``alpha_j ⊙ beta_j`` (SPEC section 1's messages, each known
up to a power of two) at every position of a batch of sequences for a dense ``A``: the kernel of
:func:`models.inference.floats.posterior_marginals`. Iteration ``k`` runs the forward step ``k``
and the backward step ``t - 2 - k`` (they are independent), and:

- its two products ``A alpha_{k-1}`` and ``A^T (v ⊙ beta)`` read ``A`` together: from
  :data:`PANEL_MIN_STATES` states ``A`` is cut into row panels (:func:`panel_rows`) and both
  products use a panel while it is in cache (the second as a transposed view of the same
  memory), which halves the memory traffic of these skinny GEMMs (``[H, H] x [H, n]`` with few
  sequences ``n`` is bound by reading ``A``);
- each message goes straight into the one ``[t, H, n]`` output (the second factor of a position
  is multiplied into it): no separate ``alpha`` or ``beta`` arrays; sequences are columns, so a
  panel's rows of ``A alpha`` are contiguous;
- from :data:`streamed.STREAMED_MIN_STATES` states with few sequences, and numba installed,
  both products of a step run in one compiled pass over the rows of ``A``
  (:mod:`.streamed`: the step costs about one read of ``A`` from memory);
- otherwise the products run on one thread, on numpy's GEMM (OpenBLAS in the wheels), or for the sizes
  :data:`TORCH_STATES` on torch's CPU GEMM (MKL in the x86 wheels), which was faster there on
  this project's machine (Intel Xeon, AVX-512; ``benchmarks/results/smoothing/README.md``);
- with few states the embeddings of all positions are gathered in one call, and the loop makes
  a handful of numpy calls per step (Python overhead dominates there).

Rescaling follows :func:`floats.scaled_messages` without ``track`` (every ``every`` steps, only
while a sum leaves ``[2^-256, 2^256]``, by exact powers of two), so the result is the same
float64 quantity as the two-pass kernel up to the summation order inside the products.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from . import streamed
from .scaling import _LOW, _rescale, largest, single_thread_blas

__all__ = ["smoothed_products", "gemm_backend", "panel_rows", "PANEL_MIN_STATES", "PANEL_ROWS",
           "PANEL_BYTES", "TORCH_STATES", "GATHER_ONCE_MAX"]

PANEL_MIN_STATES = 1000         # panels from this many states (A = 8 MB: out of L2)
PANEL_ROWS = 32                 # numpy: rows per panel (OpenBLAS's GEMM is 2x slower from 64 rows here)
PANEL_BYTES = 1 << 19           # torch: about this much of A per panel (a quarter of L2 here)
TORCH_STATES = range(256, 4096)  # torch's GEMM (MKL) here; numpy's (OpenBLAS) below and above
GATHER_ONCE_MAX = 1 << 12       # H * n up to this: all embeddings gathered at once


def gemm_backend(H: int) -> str:
    """Whose GEMM the products of a model with ``H`` states run on: ``"torch"`` (its CPU BLAS,
    MKL in the x86 wheels) for ``H`` in :data:`TORCH_STATES`, else ``"numpy"`` (its BLAS,
    OpenBLAS in the wheels)."""
    return "torch" if H in TORCH_STATES else "numpy"


def panel_rows(H: int) -> int:
    """Rows of ``A`` per panel: all of ``A`` below :data:`PANEL_MIN_STATES` states, else
    :data:`PANEL_ROWS` on numpy's GEMM and about :data:`PANEL_BYTES` (at least 16 rows) on
    torch's (measured: ``benchmarks/results/smoothing/README.md``)."""
    if H < PANEL_MIN_STATES:
        return H
    return max(16, PANEL_BYTES // (8 * H)) if gemm_backend(H) == "torch" else PANEL_ROWS


@contextlib.contextmanager
def _torch_one_thread():
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield torch
    finally:
        torch.set_num_threads(before)


def _pair_products(A: np.ndarray, AT: np.ndarray, rows: int, p: np.ndarray, y: np.ndarray, torch=None):
    """``pair(a, b)``: ``p = A a`` and ``b = A^T y`` for batches held as columns (``[H, n]``,
    C order; ``p`` and ``y`` fixed buffers, so their panel views are made once). With
    ``rows < H``, by row panels ``A[s]``: ``p[s] = A[s] a`` and ``b = sum_s A[s]^T y[s]``, both
    products reading the same panel's memory (``A[s]^T`` a transposed view, not a block of
    ``AT``). numpy's GEMM, or torch's on the same memory (no copies) when the ``torch`` module
    is given."""
    H = A.shape[0]
    if torch is None and rows >= H:
        def pair(a, b):                              # (np.dot: less call overhead than matmul)
            np.dot(A, a, out=p)
            np.dot(AT, y, out=b)
        return pair
    if torch is None:
        mm, wrap, M, MT = np.dot, None, A, AT
        tmp = np.empty_like(p)

        def accumulate(b, AiT, ys):
            np.dot(AiT, ys, out=tmp)
            np.add(b, tmp, out=b)
    else:
        with warnings.catch_warnings():              # read-only model arrays: torch only reads them
            warnings.simplefilter("ignore", UserWarning)
            M, MT = torch.from_numpy(A), torch.from_numpy(AT)
        mm, wrap = torch.mm, torch.from_numpy
        p, y = wrap(p), wrap(y)

        def accumulate(b, AiT, ys):
            b.addmm_(AiT, ys)
    if rows >= H:
        first, rest = (M, p, MT, y), []
    else:
        panels = [(M[i:i + rows], p[i:i + rows], M[i:i + rows].T, y[i:i + rows]) for i in range(0, H, rows)]
        first, rest = panels[0], panels[1:]

    def pair(a, b):
        if wrap is not None:
            a, b = wrap(a), wrap(b)
        Ai, ps, AiT, ys = first
        mm(Ai, a, out=ps)                            # rows s of A a
        mm(AiT, ys, out=b)                           # A^T y = sum over panels of A[s]^T y[s]
        for Ai, ps, AiT, ys in rest:
            mm(Ai, a, out=ps)
            accumulate(b, AiT, ys)
    return pair


def smoothed_products(A: np.ndarray, AT: np.ndarray, pi0: np.ndarray, table: np.ndarray,
                      idx: np.ndarray, every: int) -> np.ndarray:
    """``alpha_j ⊙ beta_j`` for ``j = 0..t-1``, sequences as columns: ``[t, H, n]``, each column
    known up to a positive factor.

    ``A`` (``[H, H]``, dense, column-stochastic) and ``AT`` its C-contiguous transpose, ``pi0``
    ``[H]``, embeddings ``v_j = table[idx[j, r]]`` (``table`` dense ``[K, H]``, ``idx`` ``[t, n]``),
    ``every`` the rescaling interval (:func:`floats.rescale_interval`). With
    ``alpha_{-1} = pi0``, ``alpha_j = v_j ⊙ (A alpha_{j-1})``, ``beta_{t-1} = 1``,
    ``beta_{j-1} = A^T (v_j ⊙ beta_j)``, as in :func:`floats.scaled_messages`.
    """
    t, n = idx.shape
    H = A.shape[0]
    grows = largest(table) > 1.0                     # messages grow only through embeddings > 1
    ones = np.ones(H)
    tableT = np.ascontiguousarray(table.T)           # [H, K]: embeddings gathered as columns
    post = np.empty((t, H, n))
    post[t - 1] = 1.0                                # beta_{t-1} = 1
    posts = list(post)                               # views made once (the loop is call-bound at small H)
    # v_j as [H, n] views, gathered at once for small batches (the loop is call-bound there)
    embs = list(np.take(tableT, idx, axis=1).transpose(1, 0, 2)) if H * n <= GATHER_ONCE_MAX else None
    take, mul = np.take, np.multiply
    a = np.empty((H, n))
    a[:] = pi0[:, None]
    b = posts[t - 1]
    p, y, emb = np.empty((H, n)), np.empty((H, n)), np.empty((H, n))
    fwd_scratch, bwd_scratch = np.empty((H, n)), np.empty((H, n))
    sums = np.empty(n)
    smallest, largest_sum = np.minimum.reduce, np.maximum.reduce   # (no ndarray.min wrapper: ~1 us a call)

    def settle(v):
        """Rescale the columns of ``v`` by powers of two if a sum left ``[2^-256, 2^256]``."""
        np.matmul(ones, v, out=sums)
        if smallest(sums) < _LOW or (grows and largest_sum(sums) > 1.0 / _LOW):
            _rescale(v.T, ones, sums)

    torch_ctx = _torch_one_thread() if gemm_backend(H) == "torch" else contextlib.nullcontext()
    with single_thread_blas(), torch_ctx as torch:
        if streamed.use_streamed(H, n):              # one compiled read of A for both products
            pair = streamed.streamed_pair(A, p, y)
        else:
            pair = _pair_products(A, AT, panel_rows(H), p, y, torch)
        for k in range(t):
            # a = alpha_{k-1}, b = beta_{jb+1}; computed now: alpha_k and beta_jb (jb = t-2-k).
            # Before the passes meet, each message goes straight into its post[j]; from then on
            # post[j] holds the other factor, so the message goes into a scratch buffer and is
            # multiplied in after the products have read their inputs.
            jb = t - 2 - k
            direct = jb > k
            check = (k + 1) % every == 0
            if jb >= 0:
                e = embs[jb + 1] if embs is not None else take(tableT, idx[jb + 1], axis=1, out=emb)
                mul(e, b, out=y)                     # v_{jb+1} ⊙ beta_{jb+1}
                b_out = posts[jb] if direct else bwd_scratch
                pair(a, b_out)                       # p = A alpha_{k-1}, b_out = A^T y
                if check:
                    settle(b_out)
            else:
                np.dot(A, a, out=p)                  # the last forward step alone
            if check:
                settle(p)
            a_out = posts[k] if direct else fwd_scratch
            e = embs[k] if embs is not None else take(tableT, idx[k], axis=1, out=emb)
            mul(e, p, out=a_out)                     # alpha_k
            if not direct:
                if jb == k:                          # both factors of position k now
                    mul(a_out, b_out, out=posts[k])
                else:
                    posts[k] *= a_out
                    if jb >= 0:
                        posts[jb] *= b_out
            a = a_out
            if jb >= 0:
                b = b_out
    return post
