"""Compiled float32 smoothing kernels (numba): the whole forward-backward of a batch in one call.

Both kernels compute the smoothed marginals ``P[H_i | x]`` (``i = 1..T``) of
:func:`models.inference.floats.posterior_marginals` in float32, with messages normalised to
sum 1 after every step as dynamax does (sums accumulated in float64, so a column whose sum is
subnormal in float32 is still normalised; an all-zero column, an impossible sequence, stays
zero). They differ in the axis they vectorise along, which is what decides their speed:

- :func:`columns_kernel` holds messages as ``[H, n]`` (sequences as columns) and vectorises
  over the ``n`` sequences: each step is ``H^2`` axpys of length ``n`` on data in cache, with no
  Python call per step (at 5-100 states the per-step numpy calls of a BLAS loop cost more
  than the products).
- :func:`rows_kernel` holds messages as ``[n, H]`` and vectorises along the rows of ``A``:
  iteration ``k`` runs the forward step ``k`` and the backward step ``T - 1 - k`` in one pass
  over ``A`` (four rows at a time, each row used by four sequences at a time for both
  products, the rows kept in L1 while every group of four sequences uses them), so a step
  costs about one streamed read of ``A`` (64 MB at 4,096 states) where a BLAS loop reads it
  twice, once per pass, through GEMMs that are slow on such skinny operands.
- :func:`blas_kernel` holds messages as ``[n, H]`` and calls BLAS for the products (numba's
  ``np.dot``, scipy's sgemm, one per step and pass) with all the elementwise work of a step
  (emission gather, product, normalisation) fused into one compiled pass over the message:
  no Python call per step at all (at 50-200 states the dozen numpy calls per step of the
  BLAS loop cost as much as its GEMM).

numba is an optional dependency (``pip install headprompt[fast]``); :func:`available` says
whether it imports. The first call on a machine compiles (a few seconds; numba caches the
result on disk where it can). Floating-point contraction and reassociation are allowed
(``fastmath={"contract", "reassoc"}``), so sums are formed in another order than a BLAS
would: the same float32 quantity up to rounding.
"""

from __future__ import annotations

import functools

import numpy as np

from .streamed import ROW_PAD_BYTES

__all__ = ["available", "columns_kernel", "rows_kernel", "blas_kernel"]

_OPTIONS = dict(fastmath={"contract", "reassoc"}, boundscheck=False, nogil=True)
ROW_PAD_FLOAT32 = ROW_PAD_BYTES // 4


@functools.cache
def available() -> bool:
    """Whether numba can be imported (the kernels are compiled on first use)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _compile(fn):
    import numba
    try:                  # compiled once per machine, then loaded from numba's cache
        return numba.njit(cache=True, **_OPTIONS)(fn)
    except RuntimeError:  # no writable cache location: compile in every process
        return numba.njit(cache=False, **_OPTIONS)(fn)


def _times(M, v, out):
    """``out = M v`` for ``M`` ``[H, H]`` and ``v`` ``[H, n]`` (sequences as columns), vectorised
    along the ``n`` sequences: two rows of ``out`` accumulate four rows of ``v`` at a time (one
    load and store of each per eight multiply-adds)."""
    H = M.shape[0]
    n = v.shape[1]
    k4 = H - H % 4
    out[:] = 0.0
    for i in range(0, H - 1, 2):
        o0, o1, m0, m1 = out[i], out[i + 1], M[i], M[i + 1]
        for k in range(0, k4, 4):
            a0, a1, a2, a3 = m0[k], m0[k + 1], m0[k + 2], m0[k + 3]
            b0, b1, b2, b3 = m1[k], m1[k + 1], m1[k + 2], m1[k + 3]
            v0, v1, v2, v3 = v[k], v[k + 1], v[k + 2], v[k + 3]
            for r in range(n):
                o0[r] += a0 * v0[r] + a1 * v1[r] + a2 * v2[r] + a3 * v3[r]
                o1[r] += b0 * v0[r] + b1 * v1[r] + b2 * v2[r] + b3 * v3[r]
        for k in range(k4, H):
            vk = v[k]
            for r in range(n):
                o0[r] += m0[k] * vk[r]
                o1[r] += m1[k] * vk[r]
    if H % 2:                                        # the last row
        o, m = out[H - 1], M[H - 1]
        for k in range(H):
            vk = v[k]
            for r in range(n):
                o[r] += m[k] * vk[r]


def _columns(A, AT, W, pi0, tok, post):
    """``post[j, :, r] = P[H_{j+1} | x_r]`` for ``A`` ``[H, H]`` and ``AT`` its C-contiguous
    transpose, ``W`` ``[X, H]``, ``pi0`` ``[H]``
    (float32), ``tok`` ``[t, n]`` (int64), ``post`` ``[t, H, n]`` float32 (written)."""
    t, n = tok.shape
    H = A.shape[0]
    a = np.empty((H, n), np.float32)
    for h in range(H):
        a[h, :] = pi0[h]
    p = np.empty((H, n), np.float32)
    sums = np.empty(n, np.float64)
    for j in range(t):                                   # alpha_j = norm(v_j ⊙ A alpha_{j-1})
        _times(A, a, p)
        sums[:] = 0.0
        out = post[j]
        for i in range(H):
            for r in range(n):
                v = W[tok[j, r], i] * p[i, r]
                out[i, r] = v
                sums[r] += v
        for r in range(n):
            sums[r] = 1.0 / sums[r] if sums[r] > 0.0 else 0.0
        for i in range(H):
            for r in range(n):
                out[i, r] = out[i, r] * sums[r]
        a = out
    b = np.ones((H, n), np.float32)
    y = np.empty((H, n), np.float32)
    for j in range(t - 1, -1, -1):                       # post_j = norm(alpha_j ⊙ beta_j)
        out = post[j]
        sums[:] = 0.0
        for i in range(H):
            for r in range(n):
                v = out[i, r] * b[i, r]
                out[i, r] = v
                sums[r] += v
        for r in range(n):
            sums[r] = 1.0 / sums[r] if sums[r] > 0.0 else 0.0
        for i in range(H):
            for r in range(n):
                out[i, r] = out[i, r] * sums[r]
        if j == 0:
            break
        for i in range(H):                               # beta_{j-1} = norm(A^T (v_j ⊙ beta_j))
            for r in range(n):
                y[i, r] = W[tok[j, r], i] * b[i, r]
        _times(AT, y, b)
        sums[:] = 0.0
        for k in range(H):
            for r in range(n):
                sums[r] += b[k, r]
        for r in range(n):
            sums[r] = 1.0 / sums[r] if sums[r] > 0.0 else 0.0
        for k in range(H):
            for r in range(n):
                b[k, r] = b[k, r] * sums[r]


def _normalise_rows(v, sums):
    """Rows of ``v`` (``[m, H]``) scaled to sum 1 (sums in float64; zero rows stay zero)."""
    for r in range(v.shape[0]):
        s = 0.0
        for h in range(v.shape[1]):
            s += v[r, h]
        sums[r] = 1.0 / s if s > 0.0 else 0.0       # float64: 1/s may exceed float32's range
        vr = v[r]
        f = sums[r]
        for h in range(v.shape[1]):
            vr[h] = vr[h] * f


def _pair(A, x, y, p, b):
    """``p[r] = A x[r]`` and ``b[r] = A^T y[r]`` for rows ``r`` (``[m, H']``, ``m`` a multiple of
    4, rows of ``H' >= H`` entries of which the first ``H`` count) in one pass over ``A``: four
    rows of ``A`` at a time, used by every group of four rows of ``x``/``y`` while they are in
    cache; float32 accumulators."""
    H = A.shape[0]
    m = x.shape[0]
    rows4 = H - H % 4
    b[:] = 0.0
    zero = np.float32(0.0)
    for i in range(0, rows4, 4):
        r0, r1, r2, r3 = A[i], A[i + 1], A[i + 2], A[i + 3]
        for g in range(0, m, 4):
            x0, x1, x2, x3 = x[g], x[g + 1], x[g + 2], x[g + 3]
            b0, b1, b2, b3 = b[g], b[g + 1], b[g + 2], b[g + 3]
            s00 = s01 = s02 = s03 = zero
            s10 = s11 = s12 = s13 = zero
            s20 = s21 = s22 = s23 = zero
            s30 = s31 = s32 = s33 = zero
            y00, y01, y02, y03 = y[g, i], y[g + 1, i], y[g + 2, i], y[g + 3, i]
            y10, y11, y12, y13 = y[g, i + 1], y[g + 1, i + 1], y[g + 2, i + 1], y[g + 3, i + 1]
            y20, y21, y22, y23 = y[g, i + 2], y[g + 1, i + 2], y[g + 2, i + 2], y[g + 3, i + 2]
            y30, y31, y32, y33 = y[g, i + 3], y[g + 1, i + 3], y[g + 2, i + 3], y[g + 3, i + 3]
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
            p[g, i], p[g + 1, i], p[g + 2, i], p[g + 3, i] = s00, s01, s02, s03
            p[g, i + 1], p[g + 1, i + 1], p[g + 2, i + 1], p[g + 3, i + 1] = s10, s11, s12, s13
            p[g, i + 2], p[g + 1, i + 2], p[g + 2, i + 2], p[g + 3, i + 2] = s20, s21, s22, s23
            p[g, i + 3], p[g + 1, i + 3], p[g + 2, i + 3], p[g + 3, i + 3] = s30, s31, s32, s33
    for i in range(rows4, H):                        # the last H % 4 rows
        ri = A[i]
        for g in range(m):
            s = zero
            xg, bg, ygi = x[g], b[g], y[g, i]
            for k in range(H):
                s += ri[k] * xg[k]
                bg[k] += ri[k] * ygi
            p[g, i] = s


def _rows(A, W, pi0, tok, post, beta):
    """The same marginals with messages as rows: ``post`` and ``beta`` ``[t, m, H]`` float32
    (``m`` = ``n`` rounded up to a multiple of 4; padding rows use token 0 and are discarded),
    ``post[j, r] = P[H_{j+1} | x_r]`` on return."""
    t, m = tok.shape
    H = A.shape[0]
    Hp = H + ROW_PAD_FLOAT32                         # padded rows: see streamed.streamed_pair
    x = np.zeros((m, Hp), np.float32)
    for r in range(m):
        x[r, :H] = pi0
    y = np.zeros((m, Hp), np.float32)
    p = np.zeros((m, Hp), np.float32)
    b = np.zeros((m, Hp), np.float32)
    sums = np.empty(m, np.float64)
    beta[t - 1] = 1.0
    for k in range(t):
        jb = t - 1 - k                               # backward: beta_{jb-1} from beta_jb
        if jb >= 1:
            for r in range(m):
                w = W[tok[jb, r]]
                br = beta[jb, r]
                for h in range(H):
                    y[r, h] = w[h] * br[h]
        else:
            y[:] = 0.0
        _pair(A, x, y, p, b)
        for r in range(m):                           # alpha_k = norm(v_k ⊙ A alpha_{k-1})
            w = W[tok[k, r]]
            for h in range(H):
                post[k, r, h] = w[h] * p[r, h]
        _normalise_rows(post[k], sums)
        x[:, :H] = post[k]
        if jb >= 1:
            beta[jb - 1] = b[:, :H]
            _normalise_rows(beta[jb - 1], sums)
    for j in range(t):                               # post_j = norm(alpha_j ⊙ beta_j)
        post[j] *= beta[j]
        _normalise_rows(post[j], sums)


def _scaled_row(v, w):
    """``v *= w`` then ``v /= sum(v)`` for one message ``v`` ``[H]`` (``w``: its emission row,
    the other pass's message, or ones); the sum accumulated in float64 and the factor applied
    in float64 where ``1/sum`` exceeds float32's range; a zero row stays zero."""
    H = v.shape[0]
    s = 0.0
    for h in range(H):
        x = v[h] * w[h]
        v[h] = x
        s += x
    f = 1.0 / s if s > 0.0 else 0.0
    if f < 1e38:                                     # the common case: a float32 multiply
        f32 = np.float32(f)
        for h in range(H):
            v[h] = v[h] * f32
    else:
        for h in range(H):
            v[h] = v[h] * f


def _emitted_rows(out, W, tokj):
    """One forward step's elementwise work on ``out`` ``[n, H]`` (holding ``x @ A^T``): each row
    times its emission row ``W[tokj[r]]``, then scaled to sum 1 (:func:`_scaled_row`)."""
    for r in range(out.shape[0]):
        _scaled_row(out[r], W[tokj[r]])


def _posterior_rows(out, b, y, W, tokj, last):
    """One backward step's elementwise work: ``out`` ``[n, H]`` (alpha) times ``b`` (beta),
    scaled to sum 1 (the marginals), and unless ``last``, ``y = v_j ⊙ b`` for the next product."""
    H = out.shape[1]
    for r in range(out.shape[0]):
        br = b[r]
        _scaled_row(out[r], br)
        if not last:
            w, yr = W[tokj[r]], y[r]
            for h in range(H):
                yr[h] = w[h] * br[h]


def _normalised_rows(b, ones):
    """Rows of ``b`` scaled to sum 1 (:func:`_scaled_row` with ``ones``)."""
    for r in range(b.shape[0]):
        _scaled_row(b[r], ones)


def _blas_rows(A, AT, W, pi0, tok, post, ones):
    """The same marginals with messages as rows and BLAS products: ``post`` ``[t, n, H]``
    float32 (written, ``post[j, r] = P[H_{j+1} | x_r]``), ``ones`` ``[H]`` float32 ones; ``A``,
    ``AT`` (its C-contiguous transpose), ``W`` ``[X, H]``, ``pi0`` float32; ``tok`` ``[t, n]``.
    Per step and pass one sgemm (``x @ A^T`` forward, ``y @ A`` backward) and one fused pass."""
    t, n = tok.shape
    H = A.shape[0]
    x = np.empty((n, H), np.float32)
    for r in range(n):
        x[r, :] = pi0
    for j in range(t):                               # alpha_j = norm(v_j ⊙ A alpha_{j-1})
        out = post[j]
        np.dot(x, AT, out)
        _emitted_rows(out, W, tok[j])
        x = out
    b = np.ones((n, H), np.float32)
    y = np.empty((n, H), np.float32)
    for j in range(t - 1, -1, -1):                   # post_j = norm(alpha_j ⊙ beta_j)
        _posterior_rows(post[j], b, y, W, tok[j], j == 0)
        if j == 0:
            break
        np.dot(y, A, b)                              # beta_{j-1} = norm(A^T (v_j ⊙ beta_j))
        _normalised_rows(b, ones)


def _compiled_helpers() -> None:
    """Replace the helpers the kernels call by their compiled versions (once)."""
    g = globals()
    for name in ("_times", "_pair", "_normalise_rows", "_scaled_row", "_emitted_rows", "_posterior_rows",
                 "_normalised_rows"):
        if not hasattr(g[name], "py_func"):
            g[name] = _compile(g[name])


@functools.cache
def columns_kernel():
    """The compiled :func:`_columns` ``(A, AT, W, pi0, tok, post)``."""
    _compiled_helpers()
    return _compile(_columns)


@functools.cache
def blas_kernel():
    """The compiled :func:`_blas_rows` ``(A, AT, W, pi0, tok, post, ones)`` (its products call
    scipy's BLAS through numba; run it inside :func:`.scaling.single_thread_blas`)."""
    _compiled_helpers()
    return _compile(_blas_rows)


@functools.cache
def rows_kernel():
    """The compiled :func:`_rows` ``(A, W, pi0, tok, post, beta)``."""
    _compiled_helpers()
    return _compile(_rows)


@functools.cache
def step_kernels():
    """The compiled per-step passes of :func:`_blas_rows` ``(emitted, posterior, normalised)``
    for a loop whose products numpy's BLAS computes (:func:`.float32.smoothed_float32_steps`)."""
    _compiled_helpers()
    return _emitted_rows, _posterior_rows, _normalised_rows
