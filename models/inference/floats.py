"""Float64 inference, batched over sequences with numpy, scaled for long sequences.

Same definitions as :mod:`models.inference_exact` (SPEC section 1, eq. B.1), computed with
messages rescaled on a schedule (:func:`rescale_interval`), so ``T = 10,000`` neither underflows nor loses accuracy:
``tau_i`` is only needed up to a positive factor, because ``Gbar_i`` and every posterior are
normalised. The rescaling multiplies each message by a power of two (its row sum moved
into ``[1/2, 1)``), which is exact in binary floating point, so a message computed here is the
float image of the exact message times a known power of two; :mod:`models.inference_bounds`
builds its rigorous error bounds on this very kernel. A message that is exactly zero (an
impossible prefix or suffix) stays zero, so the paper's zero-norm convention (``Gbar_i = 0``) is
kept. Positions are 0-based.

Speed: the recursion runs time-major (``[t, n, H]``) with one GEMM per step on C-contiguous
operands (OpenBLAS takes a far slower path for a transposed right operand) and a single BLAS
thread (these matrices are small; on a shared machine OpenBLAS's threads spin and make each
product tens of times slower). A model is converted to float once (:func:`float_arrays`).

Shapes: ``n`` sequences, ``t`` positions, ``H`` hidden states, ``X`` tokens.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from ..hmm.values import HMM, MemoryHMM
from .float32 import DTYPES, smoothed_float32
from .float_inputs import check_token_array, float32_arrays, float_arrays, rescale_interval  # noqa: F401 (re-exported)
from .scaling import _LOW, _rescale, largest, positive_min, single_thread_blas  # noqa: F401 (re-exported)

__all__ = ["DTYPES", "float32_arrays", "check_token_array", "float_arrays", "proper_embeddings", "single_thread_blas",
           "scaled_messages", "rescale_interval", "messages", "tau_normalized", "gbar", "conditionals",
           "posterior_marginals", "posterior_hidden", "posterior_h0", "memory_posterior",
           "memory_gbar"]


def _normalize(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` divided by their sums; all-zero rows stay zero."""
    s = v.sum(axis=-1, keepdims=True)
    return v / np.where(s > 0, s, 1.0)


def proper_embeddings(hmm: HMM, tokens) -> np.ndarray:
    """``e(x_j) = W[x_j, :]`` for every position: ``[n, t, H]``."""
    tokens = check_token_array(tokens, hmm.num_tokens)
    return float_arrays(hmm)[2][tokens]  # [n, t, H]


SPARSE_MIN_STATES, SPARSE_MAX_DENSITY = 128, 0.05


def _sparse_enough(A: np.ndarray) -> bool:
    """Whether a dense ``A`` runs as a sparse product: at least :data:`SPARSE_MIN_STATES`
    states and at most :data:`SPARSE_MAX_DENSITY` nonzeros."""
    return A.shape[0] >= SPARSE_MIN_STATES and np.count_nonzero(A) <= SPARSE_MAX_DENSITY * A.size


def _row_multipliers(A: np.ndarray, AT: np.ndarray):
    """``(times_AT, times_A, order)``: ``f(x, out)`` writes ``x @ AT`` (resp. ``x @ A``) for a
    batch of rows ``x`` ``[n, H]`` held in memory ``order``. A dense GEMM (C order), or for a
    sparse ``A`` (a scipy sparse array, or a dense one of at least :data:`SPARSE_MIN_STATES`
    states and at most :data:`SPARSE_MAX_DENSITY` nonzeros) a sparse product over the nonzeros
    only. Either way each entry is a sum of the same nonnegative products, the zero terms left
    out, so the a priori bound of :mod:`models.inference_bounds` (any summation order, at most
    ``H`` terms) covers both.

    A scipy sparse ``A`` runs in Fortran order: the batch ``x`` is then ``x.T``, a C-contiguous
    ``[H, n]`` block that the sparse kernels read and write without a copy, and ``A``'s transpose
    is a view (a CSC matrix's transpose is CSR over the same arrays)."""
    if hasattr(A, "tocsr"):
        A_csc = A.tocsc()
        AT_view = A_csc.T                  # CSR view of the same arrays: no transposed copy

        def times_AT_f(x, out):            # out^T = A x^T, both C-contiguous [H, n] blocks
            out.T[...] = A_csc @ x.T

        def times_A_f(x, out):             # out^T = A^T x^T
            out.T[...] = AT_view @ x.T

        return times_AT_f, times_A_f, "F"
    if _sparse_enough(A):
        from scipy import sparse

        A_sp = sparse.csr_array(A)
        AT_view = A_sp.T                   # a CSC view of the same arrays: no transposed copy

        def times_AT(x, out):              # (A x^T)^T
            out[...] = (A_sp @ x.T).T

        def times_A(x, out):               # (A^T x^T)^T
            out[...] = (AT_view @ x.T).T

        return times_AT, times_A, "C"
    return (lambda x, out: np.matmul(x, AT, out=out)), (lambda x, out: np.matmul(x, A, out=out)), "C"


def _row_taker(table):
    """``take(rows, out)``: ``out[r] = table[rows[r]]`` for a dense or a sparse (CSR) table
    (``out`` in either memory order)."""
    if hasattr(table, "tocsr"):
        csr = table.tocsr()

        def take(rows, out):
            picked = csr[rows]
            if out.flags.f_contiguous:
                picked.T.toarray(out=out.T)          # [H, n], C-contiguous: no transposing copy
            else:
                picked.toarray(out=out)
        return take
    return lambda rows, out: np.take(table, rows, axis=0, out=out)


def scaled_messages(A: np.ndarray, AT: np.ndarray, pi0: np.ndarray, table: np.ndarray,
                    idx: np.ndarray, *, forward: bool = True, backward: bool = True,
                    store: bool = True, track: bool = False, every: int | None = None,
                    store_alpha: bool = False, on_beta=None) -> dict:
    """The one float message-passing kernel: forward and backward messages of a batch.

    Embeddings are rows of ``table`` (``[K, H]``): position ``j`` of sequence ``r`` uses
    ``v_j = table[idx[j, r]]`` (``idx`` is ``[t, n]``, time-major). With
    ``alpha_{-1} = pi0``::

        pre_j  = A alpha_{j-1}            alpha_j = v_j ⊙ pre_j
        beta_{t-1} = 1                    beta_{j-1} = A^T (v_j ⊙ beta_j)

    every ``every`` steps (default :func:`rescale_interval`) each row is multiplied by the
    power of two that moves its sum into ``[1/2, 1)``; :func:`rescale_interval` keeps messages
    far from underflow and overflow in between, so only scheduled steps look at them (and
    without ``track`` a scheduled rescaling is skipped while the row sums stay in range). Returns a dict with (as asked)
    ``pre`` and ``beta`` (``[t, n, H]``, when ``store``; rows of different positions carry
    different powers of two; with ``store_alpha`` the forward array holds ``alpha_j`` instead
    of ``pre_j``, under the key ``alphas``), ``alpha`` (``alpha_{t-1}``, ``[n, H]``), ``beta0``
    (``A^T (v_0 ⊙ beta_0) ∝ Pr(x | H_0)``, ``[n, H]``), and with ``track`` ``minpos``
    (``[n]``): the smallest positive entry of a rescaled message (``inf`` if none), the
    underflow guard of :mod:`models.inference_bounds`; ``on_beta(j, beta_j)``, when given, is
    called with each backward message as it is computed (a contraction that needs no stored
    ``beta``); and ``shift_alpha``, ``shift_beta0``
    (``[n]`` int): the total exponents applied, so ``alpha = 2^shift_alpha * (alpha computed
    without rescaling)`` and likewise ``beta0``.
    """
    t, n = idx.shape
    H = A.shape[0]
    every = rescale_interval(A, table) if every is None else every
    out: dict = {"every": every}
    ones = np.ones(H)
    grows = largest(table) > 1.0                      # messages can grow only through embeddings > 1
    take = _row_taker(table)
    if track:
        out["minpos"] = minpos = np.full(n, np.inf)
        shift = {"f": np.zeros(n, dtype=np.int64), "b": np.zeros(n, dtype=np.int64)}

    def settle(v: np.ndarray, step: int, direction: str) -> None:
        """Rescale (and record the guard) at every ``every``-th step and at the last one; without
        ``track`` (no bound claimed) a scheduled rescaling before the last step is skipped while
        every row sum stays above ``2^-256`` (one reduction instead of a rescaling)."""
        if (step + 1) % every and step != t - 1:
            return
        if not track and step != t - 1:
            sums = v @ ones
            if sums.min() < _LOW or (grows and sums.max() > 1.0 / _LOW):
                _rescale(v, ones, sums)
            return
        e = _rescale(v, ones)
        if not track:
            return
        shift[direction] -= e
        m = v.min(axis=1)
        zero = m == 0
        if zero.any():
            sub = v[zero]
            m[zero] = np.min(sub, axis=1, where=sub > 0, initial=np.inf)
        np.minimum(minpos, m, out=minpos)

    times_AT, times_A, order = _row_multipliers(A, AT)
    emb = np.empty((n, H), order=order)
    with single_thread_blas():
        if forward:
            pre = np.empty((t, n, H)) if store else None
            a = np.empty((n, H), order=order)
            a[:] = pi0
            buf = np.empty((n, H), order=order)
            for j in range(t):
                p = pre[j] if store and not store_alpha else buf
                times_AT(a, p)                              # [n, H]: rows are (A alpha)^T
                settle(p, j, "f")
                take(idx[j], emb)
                np.multiply(emb, p, out=a)                  # alpha_j = v_j ⊙ pre_j
                if store and store_alpha:
                    pre[j] = a
            out["alpha"] = a
            if track:
                out["shift_alpha"] = shift["f"]
            if store:
                out["alphas" if store_alpha else "pre"] = pre
        if backward:
            beta = np.empty((t, n, H)) if store else None
            b = np.ones((n, H), order=order)
            y = np.empty((n, H), order=order)
            for step, j in enumerate(range(t - 1, -1, -1)):
                if store:
                    beta[j] = b
                if on_beta is not None:
                    on_beta(j, b)
                take(idx[j], emb)
                np.multiply(emb, b, out=y)                  # v_j ⊙ beta_j
                b = np.empty((n, H), order=order) if store else b
                times_A(y, b)                               # A^T (v_j ⊙ beta_j), as rows
                settle(b, step, "b")
            out["beta0"] = b
            if track:
                out["shift_beta0"] = shift["b"]
            if store:
                out["beta"] = beta
    return out


def messages(A: np.ndarray, pi0: np.ndarray, emb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scaled messages for embeddings ``emb`` ``[n, t, H]`` (batch-major convenience form of
    :func:`scaled_messages`).

    Returns ``(pre, alpha, beta)``, each ``[n, t, H]`` and each row known up to a positive
    factor: ``pre[:, j] ∝ A alpha_{j-1}`` (the prior of ``H_{j+1}`` times evidence before it),
    ``alpha[:, j] ∝ emb_j ⊙ pre[:, j]``, ``beta[:, j] ∝ P[evidence after j | H_{j+1}]``.
    """
    emb = np.asarray(emb, dtype=float)
    n, t, H = emb.shape
    A = np.ascontiguousarray(A, dtype=float)
    table = np.ascontiguousarray(emb.transpose(1, 0, 2).reshape(t * n, H))
    idx = np.arange(t * n).reshape(t, n)
    m = scaled_messages(A, np.ascontiguousarray(A.T), np.asarray(pi0, dtype=float), table, idx)
    pre = m["pre"].transpose(1, 0, 2)
    alpha = emb * pre
    return pre, alpha, m["beta"].transpose(1, 0, 2)


def tau_normalized(hmm: HMM, emb: np.ndarray, i: int) -> np.ndarray:
    """``tau_i(v) / ||tau_i(v)||_1`` (zero rows where the norm is 0): ``[n, H]``."""
    A, _, _, pi0 = float_arrays(hmm)
    emb = np.asarray(emb, dtype=float)
    if emb.ndim != 3 or emb.shape[2] != hmm.num_states:
        raise InputError(f"embeddings: expected shape [n, t, {hmm.num_states}], found {emb.shape}")
    if not 0 <= i < emb.shape[1]:
        raise InputError(f"position {i} is outside 0..{emb.shape[1] - 1}")
    pre, _, beta = messages(A, pi0, emb)
    return _normalize(pre[:, i] * beta[:, i])


def gbar(hmm: HMM, emb: np.ndarray, i: int) -> np.ndarray:
    """``Gbar_i(v)`` for a batch of embedding sequences ``[n, t, H]``: ``[n, X]``."""
    W = float_arrays(hmm)[2]
    return tau_normalized(hmm, emb, i) @ np.ascontiguousarray(W.T)


def _interval(hmm: HMM) -> int:
    """:func:`rescale_interval` of the model's ``A`` and ``W`` (memoised: a pass over ``A``)."""
    return hmm.memo("float_rescale_interval", lambda: rescale_interval(float_arrays(hmm)[0], float_arrays(hmm)[2]))


def _dense_kernel(hmm: HMM) -> bool:
    """Whether the model's products are dense GEMMs (:func:`_row_multipliers`' choice; memoised)."""
    def decide():
        A, _, W, _ = float_arrays(hmm)
        return not (hasattr(A, "tocsr") or hasattr(W, "tocsr") or _sparse_enough(A))
    return hmm.memo("float_dense_kernel", decide)


def _token_messages(hmm: HMM, tokens, **kw) -> dict:
    A, AT, W, pi0 = float_arrays(hmm)
    tokens = check_token_array(tokens, hmm.num_tokens)
    kw.setdefault("every", _interval(hmm))
    return scaled_messages(A, AT, pi0, W, np.ascontiguousarray(tokens.T), **kw)


def conditionals(hmm: HMM, tokens) -> np.ndarray:
    """``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` for every position: ``[n, T, X]``."""
    m = _token_messages(hmm, tokens)
    tau = m["pre"] * m["beta"]                                     # [T, n, H]
    G = _normalize(tau) @ np.ascontiguousarray(float_arrays(hmm)[2].T)
    return G.transpose(1, 0, 2)


def posterior_marginals(hmm: HMM, tokens, *, dtype: str = "float64", device: str = "cpu") -> np.ndarray:
    """Smoothed marginals ``P[H_i | X_{1:T} = x]`` for ``i = 1..T`` (forward-backward, the
    quantity of hmmlearn's ``predict_proba`` and dynamax's ``smoothed_probs``): ``[n, T, H]``
    (a view of a time-major array, ``[T, H, n]`` for a dense model). A dense model runs both passes in one loop
    (:func:`models.inference.forward_backward.smoothed_products`); a sparse one two passes of
    :func:`scaled_messages`, each backward message multiplied into the stored forward ones.
    ``dtype="float32"``: the same quantity in float32 (:func:`.float32.smoothed_float32`; about 1e-6
    relative error per step where float64 has 1e-15; uncertified, as float mode is).
    ``device="cuda"`` (or ``"auto"`` on a machine with CUDA): the same quantity in ``dtype`` on
    the GPU through torch (:func:`.torch_smoothing.device_marginals`), returned as numpy; the
    default ``"cpu"`` (and ``"auto"`` without CUDA) runs the numpy kernels and never imports torch.

    Raises:
        InputError: an unknown ``dtype`` or ``device``, or ``cuda`` on a machine without CUDA.
    """
    if dtype not in DTYPES:
        raise InputError(f"dtype={dtype!r}: expected one of {', '.join(map(repr, DTYPES))}")
    tokens = check_token_array(tokens, hmm.num_tokens)
    if device != "cpu":
        from .torch_smoothing import device_marginals
        on_device = device_marginals(hmm, tokens, dtype=dtype, device=device)
        if on_device is not None:
            return on_device
    if dtype == "float32":
        return smoothed_float32(hmm, tokens)
    A, AT, W, pi0 = float_arrays(hmm)
    if _dense_kernel(hmm):
        from .forward_backward import smoothed_products
        post = smoothed_products(A, AT, pi0, W, np.ascontiguousarray(tokens.T), _interval(hmm))
        s = np.ones(post.shape[1]) @ post                         # [T, n]
        np.maximum(s, np.finfo(float).tiny, out=s)                 # zero columns stay zero
        post *= np.reciprocal(s, out=s)[:, None, :]               # (a multiply is ~3x a divide's speed)
        return post.transpose(2, 0, 1)
    post = _token_messages(hmm, tokens, backward=False, store_alpha=True)["alphas"]

    def times_beta(j, beta_j):                                     # alpha_j ⊙ beta_j, in place: no [T, n, H] beta
        post[j] *= beta_j

    _token_messages(hmm, tokens, forward=False, store=False, on_beta=times_beta)
    s = (post @ np.ones(post.shape[2]))[:, :, None]
    np.maximum(s, np.finfo(float).tiny, out=s)                     # zero rows stay zero
    post /= s
    return post.transpose(1, 0, 2)


def posterior_hidden(hmm: HMM, tokens, i: int) -> np.ndarray:
    """``P[H_i | X_{1:T} = x]`` for ``i`` in ``0..T``: ``[n, H]`` (zero rows where
    ``Pr(X = x) = 0``)."""
    tokens = check_token_array(tokens, hmm.num_tokens)
    t = tokens.shape[1]
    if not 0 <= i <= t:
        raise InputError(f"hidden index {i} is outside 0..{t}")
    pi0 = float_arrays(hmm)[3]
    if i == 0:                                    # backward pass only
        b = _token_messages(hmm, tokens, forward=False, store=False)["beta0"]
        return _normalize(pi0[None, :] * b)
    m = _token_messages(hmm, tokens)
    W = float_arrays(hmm)[2]
    return _normalize(W[tokens[:, i - 1]] * m["pre"][i - 1] * m["beta"][i - 1])


def posterior_h0(hmm: HMM, tokens) -> np.ndarray:
    """``P[H_0 | X_{1:T} = x]``: ``[n, H]``."""
    return posterior_hidden(hmm, tokens, 0)


def memory_posterior(mhmm: MemoryHMM, tokens, cell: int | None = None) -> np.ndarray:
    """``P[M_j | X_{1:T} = x]`` for cell ``j`` (default the target cell): ``[n, |M|]``."""
    j = mhmm.target_cell if cell is None else cell
    if not 0 <= j < mhmm.cells:
        raise InputError(f"cell {j} is outside 0..{mhmm.cells - 1}")
    post = posterior_h0(mhmm.lift(), tokens)          # [n, C*H]
    n = mhmm.num_states
    configs = mhmm.memory_configurations()
    per_config = post.reshape(post.shape[0], len(configs), n).sum(axis=2)   # [n, C]
    onehot = np.zeros((len(configs), mhmm.memory_values))
    for c, ms in enumerate(configs):
        onehot[c, ms[j]] = 1.0
    return per_config @ onehot


def memory_gbar(mhmm: MemoryHMM, emb: np.ndarray, i: int) -> np.ndarray:
    """``Gbar_i`` of a memory HMM on embeddings over ``(m, h)``: ``emb`` ``[n, t, |M||H|]``,
    result ``[n, X]`` (SPEC section 1: lift with ``eta``, reverse with ``phi``)."""
    f = mhmm.to_float()
    n_h, M = f.num_states, f.memory_values
    configs = f.memory_configurations()
    emb = np.asarray(emb, dtype=float)
    if emb.ndim != 3 or emb.shape[2] != M * n_h:
        raise InputError(f"memory embeddings: expected shape [n, t, {M * n_h}], found {emb.shape}")
    # eta: lifted index c * H + h reads (m_{cell(h)}, h)
    idx = np.array([ms[h // f.syntax_states] * n_h + h for ms in configs for h in range(n_h)])
    tau_lift = tau_normalized(f.lift(), emb[:, :, idx], i)            # [n, C*H]
    phi = np.zeros((emb.shape[0], M * n_h))
    np.add.at(phi.T, idx, tau_lift.T)                                  # sum over other cells
    return _normalize(phi) @ f.emission_matrix().T
