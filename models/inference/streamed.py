"""Both products of a forward-backward step in one streamed read of ``A``, compiled with numba.

For a dense column-stochastic ``A`` (``[H, H]``, C order) and batches held as columns
(``[H, n]``), one step of :func:`models.inference.forward_backward.smoothed_products` needs
``p = A a`` (forward) and ``b = A^T y`` (backward). With many states and few sequences these two
skinny products are bound by reading ``A`` from memory (128 MB at 4,096 states), and a BLAS
GEMM called on row panels of ``A`` runs them at about a fifth of the core's peak.
:func:`pair_kernel` reads each row of ``A`` once for both: four rows at a time, four sequences
at a time (16 dot-product accumulators and four axpy rows, vectorised along the row), so one
step costs about one streamed read of ``A`` (measured: 8.9 ms against 8.3 ms for ``A.sum()``
and 13.8 ms for the panel GEMMs, at 4,096 states and 4 sequences;
``benchmarks/results/smoothing/README.md``).

numba is an optional dependency (``pip install headprompt[fast]``); without it
:func:`available` is False and the panel GEMMs run. Sequences beyond a multiple of four are
zero-padded (each group of four is one more read of ``A``), so the kernel is used only where a
read of ``A`` is the cost: :func:`use_streamed`. The first use on a machine compiles it (about
0.7 s); numba caches the result on disk where it can. Floating-point contraction and reassociation
are allowed inside the kernel (``fastmath={"contract", "reassoc"}``, no assumptions about NaN
or infinities), so sums are formed in another order than BLAS's: the same float64 quantity up
to rounding.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["available", "use_streamed", "pair_kernel", "streamed_pair", "STREAMED_MIN_STATES",
           "WIDE_MIN_STATES", "WIDE_MAX_GROUPS", "ROW_PAD_BYTES"]

STREAMED_MIN_STATES = 1000   # from here, with at most 4 sequences (one group: one read of A a step)
WIDE_MIN_STATES = 4096       # from here (A >= 128 MB) also with several groups of 4 sequences
WIDE_MAX_GROUPS = 4          # ... up to this many groups (16 sequences)
ROW_PAD_BYTES = 64           # message rows padded by one cache line (see streamed_pair)


@functools.cache
def available() -> bool:
    """Whether numba can be imported (the kernel is compiled on first use)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def use_streamed(H: int, n: int) -> bool:
    """Whether :func:`models.inference.forward_backward.smoothed_products` runs its products
    through :func:`pair_kernel` for ``H`` states and ``n`` sequences: numba importable and
    either at most 4 sequences on at least :data:`STREAMED_MIN_STATES` states, or at most
    :data:`WIDE_MAX_GROUPS` groups of four on at least :data:`WIDE_MIN_STATES`. Measured
    against the panel GEMMs on this project's machine (whole smoothings, T = 129): 2x faster
    at 1,000 states and 4 sequences, 1.7x at 2,048, 1.5x at 4,096, 2.5x at 8,192; 1.46x at
    4,096 and 12 sequences; slower with 8 sequences at 1,000-2,048 (two reads of a cached
    ``A`` lose to one GEMM) and below about 256 states."""
    groups = -(-n // 4)
    return ((groups == 1 and H >= STREAMED_MIN_STATES)
            or (groups <= WIDE_MAX_GROUPS and H >= WIDE_MIN_STATES)) and available()


@functools.cache
def pair_kernel():
    """The compiled kernel ``kernel(A, xT, yT, pT, bT)``: for ``A`` ``[H, H]`` and ``xT``,
    ``yT`` ``[4 G, H']`` (sequences as rows, C order, rows of ``H' >= H`` entries of which the
    first ``H`` are read), writes the first ``H`` entries of ``pT = (A xT^T)^T`` and
    ``bT = (A^T yT^T)^T`` (``[4 G, H']``; ``bT``'s padding is zeroed)."""
    import numba

    def kernel(A, xT, yT, pT, bT):
        H = A.shape[0]
        rows4 = H - H % 4
        for g in range(0, xT.shape[0], 4):
            x0, x1, x2, x3 = xT[g], xT[g + 1], xT[g + 2], xT[g + 3]
            b0, b1, b2, b3 = bT[g], bT[g + 1], bT[g + 2], bT[g + 3]
            b0[:] = 0.0
            b1[:] = 0.0
            b2[:] = 0.0
            b3[:] = 0.0
            for i in range(0, rows4, 4):
                r0, r1, r2, r3 = A[i], A[i + 1], A[i + 2], A[i + 3]
                s00 = s01 = s02 = s03 = 0.0
                s10 = s11 = s12 = s13 = 0.0
                s20 = s21 = s22 = s23 = 0.0
                s30 = s31 = s32 = s33 = 0.0
                y00, y01, y02, y03 = yT[g, i], yT[g + 1, i], yT[g + 2, i], yT[g + 3, i]
                y10, y11, y12, y13 = yT[g, i + 1], yT[g + 1, i + 1], yT[g + 2, i + 1], yT[g + 3, i + 1]
                y20, y21, y22, y23 = yT[g, i + 2], yT[g + 1, i + 2], yT[g + 2, i + 2], yT[g + 3, i + 2]
                y30, y31, y32, y33 = yT[g, i + 3], yT[g + 1, i + 3], yT[g + 2, i + 3], yT[g + 3, i + 3]
                for k in range(H):
                    w0, w1, w2, w3 = r0[k], r1[k], r2[k], r3[k]
                    c0, c1, c2, c3 = x0[k], x1[k], x2[k], x3[k]
                    s00 += w0 * c0
                    s01 += w0 * c1
                    s02 += w0 * c2
                    s03 += w0 * c3
                    s10 += w1 * c0
                    s11 += w1 * c1
                    s12 += w1 * c2
                    s13 += w1 * c3
                    s20 += w2 * c0
                    s21 += w2 * c1
                    s22 += w2 * c2
                    s23 += w2 * c3
                    s30 += w3 * c0
                    s31 += w3 * c1
                    s32 += w3 * c2
                    s33 += w3 * c3
                    b0[k] += w0 * y00 + w1 * y10 + w2 * y20 + w3 * y30
                    b1[k] += w0 * y01 + w1 * y11 + w2 * y21 + w3 * y31
                    b2[k] += w0 * y02 + w1 * y12 + w2 * y22 + w3 * y32
                    b3[k] += w0 * y03 + w1 * y13 + w2 * y23 + w3 * y33
                pT[g, i], pT[g + 1, i], pT[g + 2, i], pT[g + 3, i] = s00, s01, s02, s03
                pT[g, i + 1], pT[g + 1, i + 1], pT[g + 2, i + 1], pT[g + 3, i + 1] = s10, s11, s12, s13
                pT[g, i + 2], pT[g + 1, i + 2], pT[g + 2, i + 2], pT[g + 3, i + 2] = s20, s21, s22, s23
                pT[g, i + 3], pT[g + 1, i + 3], pT[g + 2, i + 3], pT[g + 3, i + 3] = s30, s31, s32, s33
            for i in range(rows4, H):            # the last H % 4 rows
                r = A[i]
                for j in range(4):
                    s = 0.0
                    xj, bj, yji = xT[g + j], bT[g + j], yT[g + j, i]
                    for k in range(H):
                        s += r[k] * xj[k]
                        bj[k] += r[k] * yji
                    pT[g + j, i] = s

    options = dict(fastmath={"contract", "reassoc"}, boundscheck=False, nogil=True)
    try:                  # compiled once per machine (about 0.7 s), then loaded from numba's cache
        return numba.njit(cache=True, **options)(kernel)
    except RuntimeError:  # no writable cache location: compile in every process
        return numba.njit(cache=False, **options)(kernel)


def streamed_pair(A: np.ndarray, p: np.ndarray, y: np.ndarray):
    """``pair(a, b)`` as in :func:`models.inference.forward_backward._pair_products`: ``p = A a``
    and ``b = A^T y`` for ``[H, n]`` batches (``p``, ``y`` fixed buffers), through
    :func:`pair_kernel` on transposed, zero-padded copies (``O(H n)`` per step, beside the
    ``O(H^2 n)`` products).

    Each copy's rows are :data:`ROW_PAD_BYTES` longer than ``H`` entries: the kernel reads four
    rows of ``A`` and writes four rows of ``bT`` at once, and with rows of a power-of-two size
    (``H`` = 512, 1,024, ... in float64, 1,024, 2,048, ... in float32) they all fall in one L1
    cache set and evict each other, or not, depending on where the heap put the buffers
    (measured for the float32 twin at 2,048 states: 10-13 ms per pair of products with the
    buffers placed in one set against 3.4-7.9 ms spread; the likely cause, not reproduced on
    demand, of whole smoothings that took 0.93-0.99 s in one benchmark process and 0.35-0.58 s
    in another)."""
    H, n = p.shape
    width = 4 * -(-n // 4)
    Hp = H + ROW_PAD_BYTES // 8
    xT, yT = np.zeros((width, Hp)), np.zeros((width, Hp))
    pT, bT = np.zeros((width, Hp)), np.zeros((width, Hp))
    kernel = pair_kernel()
    A = np.ascontiguousarray(A)

    def pair(a, b):
        xT[:n, :H] = a.T
        yT[:n, :H] = y.T
        kernel(A, xT, yT, pT, bT)
        p[:] = pT[:n, :H].T
        b[:] = bT[:n, :H].T
    return pair
