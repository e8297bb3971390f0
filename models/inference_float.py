"""Float64 inference, batched over sequences with numpy, scaled for long sequences.

Same definitions as :mod:`models.inference_exact` (SPEC section 1, eq. B.1), computed with
messages renormalised at every step, so ``T = 10,000`` neither underflows nor loses accuracy:
``tau_i`` is only needed up to a positive factor, because ``Gbar_i`` and every posterior are
normalised. A message that is exactly zero (an impossible prefix or suffix) stays zero, so the
paper's zero-norm convention (``Gbar_i = 0``) is kept. Positions are 0-based.

Shapes: ``n`` sequences, ``t`` positions, ``H`` hidden states, ``X`` tokens.
"""

from __future__ import annotations

import numpy as np

from .exceptions import InputError, SequenceError
from .hmm import HMM, MemoryHMM

__all__ = ["check_token_array", "proper_embeddings", "messages", "tau_normalized", "gbar",
           "conditionals", "posterior_hidden", "posterior_h0", "memory_posterior",
           "memory_gbar"]


def _normalize(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` divided by their sums; all-zero rows stay zero."""
    s = v.sum(axis=-1, keepdims=True)
    return v / np.where(s > 0, s, 1.0)


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
    bad = np.argwhere((arr < 0) | (arr >= num_tokens))
    if len(bad):
        r, c = bad[0]
        raise SequenceError(f"tokens: token {arr[r, c]} at sequence {r}, position {c} is outside "
                            f"the vocabulary 0..{num_tokens - 1}")
    return arr.astype(np.int64)


def proper_embeddings(hmm: HMM, tokens) -> np.ndarray:
    """``e(x_j) = W[x_j, :]`` for every position: ``[n, t, H]``."""
    tokens = check_token_array(tokens, hmm.num_tokens)
    return np.asarray(hmm.to_float().W)[tokens]  # [n, t, H]


def messages(A: np.ndarray, pi0: np.ndarray, emb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scaled messages for embeddings ``emb`` ``[n, t, H]``.

    Returns ``(pre, alpha, beta)``, each ``[n, t, H]`` and each row known up to a positive
    factor: ``pre[:, j] ∝ A alpha_{j-1}`` (the prior of ``H_{j+1}`` times evidence before it),
    ``alpha[:, j] ∝ emb_j ⊙ pre[:, j]``, ``beta[:, j] ∝ P[evidence after j | H_{j+1}]``.
    """
    n, t, H = emb.shape
    # C-contiguous operands: OpenBLAS takes a far slower path for a transposed right operand
    A, AT = np.ascontiguousarray(A), np.ascontiguousarray(A.T)
    pre = np.empty((n, t, H))
    alpha = np.empty((n, t, H))
    beta = np.empty((n, t, H))
    a = np.broadcast_to(pi0, (n, H))
    for j in range(t):
        pre[:, j] = _normalize(a @ AT)           # [n, H]
        a = alpha[:, j] = _normalize(emb[:, j] * pre[:, j])
    b = np.ones((n, H)) / H
    for j in range(t - 1, -1, -1):
        beta[:, j] = b
        b = _normalize((emb[:, j] * b) @ A)       # A^T (v_j ⊙ b), batched as row vectors
    return pre, alpha, beta


def _as_float(hmm: HMM):
    f = hmm.to_float()
    return tuple(np.ascontiguousarray(a) for a in (f.A, f.W, f.pi0))


def tau_normalized(hmm: HMM, emb: np.ndarray, i: int) -> np.ndarray:
    """``tau_i(v) / ||tau_i(v)||_1`` (zero rows where the norm is 0): ``[n, H]``."""
    A, _, pi0 = _as_float(hmm)
    emb = np.asarray(emb, dtype=float)
    if emb.ndim != 3 or emb.shape[2] != hmm.num_states:
        raise InputError(f"embeddings: expected shape [n, t, {hmm.num_states}], found {emb.shape}")
    if not 0 <= i < emb.shape[1]:
        raise InputError(f"position {i} is outside 0..{emb.shape[1] - 1}")
    pre, _, beta = messages(A, pi0, emb)
    return _normalize(pre[:, i] * beta[:, i])


def gbar(hmm: HMM, emb: np.ndarray, i: int) -> np.ndarray:
    """``Gbar_i(v)`` for a batch of embedding sequences ``[n, t, H]``: ``[n, X]``."""
    _, W, _ = _as_float(hmm)
    return tau_normalized(hmm, emb, i) @ np.ascontiguousarray(W.T)


def conditionals(hmm: HMM, tokens) -> np.ndarray:
    """``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` for every position: ``[n, T, X]``."""
    A, W, pi0 = _as_float(hmm)
    pre, _, beta = messages(A, pi0, proper_embeddings(hmm, tokens))
    return _normalize(pre * beta) @ np.ascontiguousarray(W.T)


def posterior_hidden(hmm: HMM, tokens, i: int) -> np.ndarray:
    """``P[H_i | X_{1:T} = x]`` for ``i`` in ``0..T``: ``[n, H]`` (zero rows where
    ``Pr(X = x) = 0``)."""
    A, W, pi0 = _as_float(hmm)
    emb = proper_embeddings(hmm, tokens)
    n, t, H = emb.shape
    if not 0 <= i <= t:
        raise InputError(f"hidden index {i} is outside 0..{t}")
    if i == 0:                                    # backward pass only
        b = np.ones((n, H))
        for j in range(t - 1, -1, -1):
            b = _normalize((emb[:, j] * b) @ A)   # ∝ P[x_{j+1..T} | H_j]
        return _normalize(pi0[None, :] * b)
    pre, alpha, beta = messages(A, pi0, emb)
    return _normalize(alpha[:, i - 1] * beta[:, i - 1])


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
