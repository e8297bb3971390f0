"""Exact inference: ``tau_i``, ``Gbar_i``, ``G_i`` and posteriors in rational arithmetic.

Definitions (SPEC section 1, paper eq. B.1)::

    tau_i(v)[h] = sum over h_0..h_t with h_i = h of
                  pi0[h_0] * prod_{j=1..t} A[h_j, h_{j-1}] * prod_{j != i} v_j[h_j]
    Gbar_i(v)   = W tau_i(v) / ||tau_i(v)||_1      (the zero vector when the norm is 0)

computed by forward/backward messages (never by path sums; those are the test oracle)::

    alpha_0 = pi0,   pre_j = A alpha_{j-1},   alpha_j = v_j ⊙ pre_j
    beta_t  = 1,     beta_{j-1} = A^T (v_j ⊙ beta_j)
    tau_i   = pre_i ⊙ beta_i

Speed: the kernels clear denominators once (``A = A_int / d_A`` and so on) and run on
python-flint integer matrices; every common factor cancels in the normalisations, and the exact
scale of ``tau`` is restored from the denominators when asked for. Positions ``i`` are 0-based
in code (``i = 0`` is the paper's ``tau_1``).
"""

from __future__ import annotations

import functools
import math
import weakref
from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ..exceptions import InputError, SequenceError
from ..hmm.values import HMM, MemoryHMM
from ..hmm.integer import FUSED_MAX_STATES, IntegerHMM, head_weights, integer_hmm, prior_h1
from ..hmm.integer import column as _col
from ..hmm.integer import column_entries as _entries
from ..hmm.integer import scaled_column as _scaled
from ..hmm.integer import scaled_integer_vector, transition_apply

__all__ = ["prior_h1", "transition_apply", "head_weights", "IntegerHMM", "Step", "token_steps", "embedding_steps", "integer_messages", "shared_backward_messages", "SparseBackward", "sparse_backward", "transpose_apply", "SPARSE_STEP_DENSITY", "integer_hmm", "check_tokens", "tau", "gbar", "conditionals",
           "posterior_hidden", "posterior_h0", "memory_posterior", "lift_embedding",
           "reverse_lift", "memory_gbar", "lifted_gbar", "prompt_gbar", "scaled_integer_vector"]


def check_tokens(tokens: Sequence[int], num_tokens: int) -> list[int]:
    """Validate a token sequence: nonempty, integers in ``0..num_tokens-1``.

    Raises:
        SequenceError: naming the first bad token and its position.
    """
    seq = list(tokens)
    if not seq:
        raise SequenceError("sequence: expected at least one token, found an empty sequence")
    for pos, z in enumerate(seq):
        if isinstance(z, bool) or not isinstance(z, (int, np.integer)):
            raise SequenceError(f"sequence: position {pos} holds {z!r}, expected an integer token")
        if not 0 <= z < num_tokens:
            raise SequenceError(f"sequence: token {z} at position {pos} is outside the vocabulary "
                                f"0..{num_tokens - 1}")
    return [int(z) for z in seq]


class Step:
    """One position's message step for an integer embedding ``v = ints / scale``:
    ``forward(alpha) = v ⊙ (A_int alpha)`` and ``backward(beta) = A_int^T (v ⊙ beta)``, fused
    into one matrix for small ``|H|``."""

    def __init__(self, ih: IntegerHMM, ints: Sequence[int], scale: int = 1, *, token: int | None = None):
        self.ih, self.ints, self.scale, self.token = ih, list(ints), scale, token

    def forward(self, alpha: flint.fmpz_mat) -> flint.fmpz_mat:
        if self.token is not None:
            return self.ih.step_forward(self.token, alpha)
        return self._fused("F") * alpha if self._small() else _scaled(self.ih.A_int * alpha, self.ints)

    def backward(self, beta: flint.fmpz_mat) -> flint.fmpz_mat:
        if self.token is not None:
            return self.ih.step_backward(self.token, beta)
        return self._fused("B") * beta if self._small() else self.ih.AT_int * _scaled(beta, self.ints)

    def _small(self) -> bool:
        return self.ih.num_states <= FUSED_MAX_STATES

    @functools.cache
    def _fused(self, kind: str) -> flint.fmpz_mat:
        n = self.ih.num_states
        D = flint.fmpz_mat(n, n)
        for h, w in enumerate(self.ints):
            D[h, h] = w
        return D * self.ih.A_int if kind == "F" else self.ih.AT_int * D


def token_steps(ih: IntegerHMM, tokens: Sequence[int]) -> list[Step]:
    """The steps of proper embeddings ``e(x_j) = W[x_j] = W_int[x_j] / dW``."""
    made: dict[int, Step] = {}
    return [made.setdefault(z, Step(ih, ih.W_rows[z], ih.dW, token=z)) for z in tokens]


def embedding_steps(ih: IntegerHMM, embeddings: Sequence[Sequence[Fraction]]) -> list[Step]:
    """The steps of arbitrary nonnegative embeddings (one per position; repeated vectors share
    one step).

    Raises:
        InputError: a wrong length or a negative entry.
    """
    n = ih.num_states
    steps, seen = [], {}
    for j, v in enumerate(embeddings):
        if len(v) != n:
            raise InputError(f"embedding {j}: expected {n} entries (one per hidden state), found {len(v)}")
        if id(v) not in seen:                     # the same object again (alive in `embeddings`)
            vals = tuple(Fraction(x) for x in v)
            if vals not in seen:
                if any(x < 0 for x in vals):
                    raise InputError(f"embedding {j}: entries must be nonnegative")
                ints, d = scaled_integer_vector(vals)
                seen[vals] = Step(ih, ints, d)
            seen[id(v)] = seen[vals]
        steps.append(seen[id(v)])
    return steps


def integer_messages(ih: IntegerHMM, steps: Sequence[Step]):
    """The exact message-passing kernel: integer ``pre_j`` and ``beta_j`` (``j = 0..t-1``) as
    flint columns, and the last forward message ``alpha_{t-1}``::

        alpha_{-1} = pi0_int,  pre_j = A_int alpha_{j-1},  alpha_j = v_j ⊙ pre_j
        beta_{t-1} = 1,        beta_{j-1} = A_int^T (v_j ⊙ beta_j)
    """
    t = len(steps)
    pre, alpha = [], ih.pi0_int
    for step in steps:
        pre.append(ih.A_int * alpha)
        alpha = step.forward(alpha)
    beta = [None] * t
    b = _col([1] * ih.num_states)
    for j in range(t - 1, -1, -1):
        beta[j] = b
        b = steps[j].backward(b)
    return pre, beta, alpha


def transpose_apply(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``A^T y`` exactly over the nonzeros of ``A`` given in CSC form (``indptr`` over its
    ``n`` columns, ``indices`` the rows, ``data`` Python integers as an object array) and an
    object array ``y`` of Python integers: entry ``h`` is ``sum_g A[g, h] y[g]`` (0 for an
    empty column). One exact backward step costs ``O(nnz(A) + n)`` integer operations.

    >>> transpose_apply(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([2, 3, 5], dtype=object),
    ...                 np.array([1, 10], dtype=object)).tolist()
    [32, 50]
    """
    n = len(indptr) - 1
    out = np.zeros(n, dtype=object)
    nonempty = np.flatnonzero(np.diff(indptr))
    if nonempty.size:
        out[nonempty] = np.add.reduceat(data * y[indices], indptr[nonempty])
    return out


SPARSE_STEP_DENSITY = 0.05
"""Above :data:`~headprompt.models.hmm.integer.FUSED_MAX_STATES` states, an exact backward step
runs over the nonzeros of ``A`` (:class:`SparseBackward`) when at most this share of its entries
is nonzero: a Python-integer operation per nonzero costs about 15 times a dense ``fmpz_mat``
entry (measured at 400-1,000 states, ``benchmarks/boundary.py``), and a dense step also builds
its scaled column entry by entry."""


class SparseBackward:
    """The exact backward step ``beta -> A_int^T (W_int[z] ⊙ beta)`` over the nonzeros of
    ``A_int`` (CSC: for each column ``h`` of ``A``, its rows ``g`` and integers), on object
    arrays of Python integers: ``O(nnz(A) + |H|)`` operations a step instead of ``|H|^2``.
    The same integers as :meth:`IntegerHMM.step_backward`, so the same proofs."""

    def __init__(self, ih: IntegerHMM):
        n = ih.num_states
        flat = ih.A_int.entries()                        # row-major A_int[g, h]
        nz = [k for k, v in enumerate(flat) if v]
        rows = np.array([k // n for k in nz], dtype=np.int64)
        cols = np.array([k % n for k in nz], dtype=np.int64)
        order = np.argsort(cols, kind="stable")
        self.indices = rows[order]
        self.data = np.array([int(flat[nz[k]]) for k in order.tolist()], dtype=object)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=n))]).astype(np.int64)
        self.W_rows = [None] * ih.num_tokens
        self.ih = ih

    def step(self, z: int, beta: np.ndarray) -> np.ndarray:
        """One backward step on an object array ``beta`` (Python integers)."""
        if self.W_rows[z] is None:
            self.W_rows[z] = np.array([int(w) for w in self.ih.W_rows[z]], dtype=object)
        return transpose_apply(self.indptr, self.indices, self.data, self.W_rows[z] * beta)


def sparse_backward(ih: IntegerHMM) -> SparseBackward | None:
    """The :class:`SparseBackward` of ``ih`` when ``A`` is sparse enough to pay
    (:data:`SPARSE_STEP_DENSITY`, above :data:`FUSED_MAX_STATES` states), else None; built once
    per integer form (a weak cache: it goes with ``ih``)."""
    n = ih.num_states
    if n <= FUSED_MAX_STATES:
        return None
    key = id(ih)
    hit = _SPARSE.get(key)
    if hit is not None and hit[0]() is ih:
        return hit[1]
    nnz = sum(1 for v in ih.A_int.entries() if v)
    made = SparseBackward(ih) if nnz <= SPARSE_STEP_DENSITY * n * n else None
    _SPARSE[key] = (weakref.ref(ih, lambda _ref, k=key, cache=_SPARSE: cache.pop(k, None)), made)
    return made


_SPARSE: dict[int, tuple] = {}


def shared_backward_messages(ih: IntegerHMM, sequences):
    """``(x, beta_int(x))`` for every token sequence, shortest first: the integer backward
    message ``beta_{-1}`` of :func:`integer_messages` (so ``pi0 . beta(x) = Pr(X = x)`` up to
    the scale ``(dA dW)^len(x)``), computed once per distinct suffix and shared between the
    sequences that end alike; over the nonzeros of a sparse ``A`` (:func:`sparse_backward`)."""
    sparse_step = sparse_backward(ih)
    if sparse_step is not None:
        n = ih.num_states
        cache = {(): np.array([1] * n, dtype=object)}
        step = sparse_step.step
    else:
        cache = {(): _col([1] * ih.num_states)}
        step = ih.step_backward
    for seq in sorted(sequences, key=len):
        k = 0                                   # seq[k:] is the longest cached suffix
        while seq[k:] not in cache:
            k += 1
        vec = cache[seq[k:]]
        for j in range(k - 1, -1, -1):
            vec = step(seq[j], vec)
            cache[seq[j:]] = vec
        yield seq, (vec if sparse_step is None else flint.fmpz_mat(n, 1, vec.tolist()))


def _tau_int(pre: flint.fmpz_mat, beta: flint.fmpz_mat) -> list:
    return [p * q for p, q in zip(_entries(pre), _entries(beta))]


def _gbar_from_tau(ih: IntegerHMM, tau_int: list) -> list[Fraction]:
    total = sum(tau_int)
    if total == 0:
        return [Fraction(0)] * ih.num_tokens
    emitted = ih.W_int * _col(tau_int)
    den = int(total) * ih.dW
    return [Fraction(int(emitted[x, 0]), den) for x in range(ih.num_tokens)]


def tau(hmm: HMM, embeddings: Sequence[Sequence[Fraction]], i: int) -> list[Fraction]:
    """Exact ``tau_i(v)`` (SPEC section 1) at 0-based position ``i``, at its true scale.

    For proper embeddings ``v_j = W[x_j, :]`` this is ``P[H_{i+1}, X_{-(i+1)} = x_{-(i+1)}]``.

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, '1/2'], [0, '1/2']], [['1/2', 1], ['1/2', 0]], ['1/2', '1/2'])
    >>> [str(v) for v in tau(h, [[1, 0], [1, 1]], 1)]    # P(H_1 = 0) = 3/4, then stays
    ['3/4', '0']
    >>> [str(v) for v in tau(h, [[1, 1], [1, 1]], 0)]    # ignores v_1: P[H_1] = (3/4, 1/4)
    ['3/4', '1/4']

    Raises:
        InputError: position out of range, wrong embedding length, negative entries.
    """
    ih, tau_int, scales = _tau_integer(hmm, embeddings, i)
    scale = ih.dpi * ih.dA ** len(embeddings) * math.prod(s for j, s in enumerate(scales) if j != i)
    return [Fraction(int(v), scale) for v in tau_int]


def _tau_integer(hmm: HMM, embeddings, i: int):
    """``(integer form, tau_i as integers up to a positive factor, embedding scales)``."""
    ih = integer_hmm(hmm)
    t = len(embeddings)
    if not 0 <= i < t:
        raise InputError(f"position {i} is outside 0..{t - 1}")
    steps = embedding_steps(ih, embeddings)
    pre, beta, _ = integer_messages(ih, steps)
    return ih, _tau_int(pre[i], beta[i]), [st.scale for st in steps]


def gbar(hmm: HMM, embeddings: Sequence[Sequence[Fraction]], i: int) -> list[Fraction]:
    """Exact ``Gbar_i(v) = W tau_i(v) / ||tau_i(v)||_1`` (zero vector when the norm is 0).

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, '1/2'], [0, '1/2']], [['1/2', 1], ['1/2', 0]], ['1/2', '1/2'])
    >>> [str(v) for v in gbar(h, [[1, 1], [0, 1]], 0)]   # tau_1 = (0, 1/8): only H_1 = 1
    ['1', '0']
    >>> [str(v) for v in gbar(h, [[1, 1], [1, 1]], 0)]   # W P[H_1] = W (3/4, 1/4)
    ['5/8', '3/8']
    """
    ih, tau_int, _ = _tau_integer(hmm, embeddings, i)
    return _gbar_from_tau(ih, tau_int)


def conditionals(hmm: HMM, tokens: Sequence[int]) -> list[list[Fraction]]:
    """``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` for every position (0-based list), exactly.

    A position whose context has probability 0 gets the zero vector (paper, Section B).
    """
    ih = integer_hmm(hmm)
    seq = check_tokens(tokens, hmm.num_tokens)
    pre, beta, _ = integer_messages(ih, token_steps(ih, seq))
    return [_gbar_from_tau(ih, _tau_int(pre[i], beta[i])) for i in range(len(seq))]


def _normalise(ints: list) -> list[Fraction]:
    total = int(sum(ints))
    if total == 0:
        return [Fraction(0)] * len(ints)
    return [Fraction(int(v), total) for v in ints]


def posterior_hidden(hmm: HMM, tokens: Sequence[int], i: int) -> list[Fraction]:
    """``P[H_i | X_{1:T} = x]`` for ``i`` in ``0..T`` (``H_0`` emits nothing), exactly.

    Returns the zero vector when ``Pr(X = x) = 0``.
    """
    ih = integer_hmm(hmm)
    seq = check_tokens(tokens, hmm.num_tokens)
    if not 0 <= i <= len(seq):
        raise InputError(f"hidden index {i} is outside 0..{len(seq)}")
    alpha = ih.pi0_int
    for z in seq[:i]:
        alpha = ih.step_forward(z, alpha)
    beta = _col([1] * ih.num_states)
    for z in reversed(seq[i:]):
        beta = ih.step_backward(z, beta)
    return _normalise([a * b for a, b in zip(_entries(alpha), _entries(beta))])


def posterior_h0(hmm: HMM, tokens: Sequence[int]) -> list[Fraction]:
    """``P[H_0 | X_{1:T} = x]`` exactly (the zero vector when ``Pr(X = x) = 0``).

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, 0], [0, 1]], [['3/4', '1/4'], ['1/4', '3/4']], ['1/2', '1/2'])
    >>> [str(v) for v in posterior_h0(h, [0, 0])]
    ['9/10', '1/10']
    """
    return posterior_hidden(hmm, tokens, 0)


# ---------------------------------------------------------------- memory-augmented HMMs

def lift_embedding(mhmm: MemoryHMM, v: Sequence) -> list:
    """``eta(v)[(m_1..m_N, j, s)] = v[(m_j, j, s)]`` (SPEC section 1); ``v`` has length
    ``|M| |H|`` ordered ``(m, h)``, ``m`` major; the result is over lifted states
    ``c * |H| + h``."""
    n = mhmm.num_states
    if len(v) != mhmm.memory_values * n:
        raise InputError(f"memory embedding: expected {mhmm.memory_values * n} entries "
                         f"(|M| x |H|), found {len(v)}")
    return [v[ms[mhmm.cell_of(h)] * n + h] for ms in mhmm.memory_configurations() for h in range(n)]


def reverse_lift(mhmm: MemoryHMM, w: Sequence) -> list:
    """``phi(w)[(m, j, s)] = |M|^-(N-1) sum_{m_1..m_N : m_j = m} w[(m_1..m_N, j, s)]``, so
    ``phi(eta(v)) = v``. Exact when ``w`` holds Fractions."""
    n, M = mhmm.num_states, mhmm.memory_values
    exact = isinstance(w[0], Fraction)
    out = [Fraction(0) if exact else 0.0] * (M * n)
    for c, ms in enumerate(mhmm.memory_configurations()):
        for h in range(n):
            k = ms[mhmm.cell_of(h)] * n + h
            out[k] = out[k] + w[c * n + h]
    scale = Fraction(1, M ** (mhmm.cells - 1)) if exact else 1.0 / M ** (mhmm.cells - 1)
    return [x * scale for x in out]


def lifted_gbar(mhmm: MemoryHMM, lifted_embeddings: Sequence[Sequence], i: int) -> list[Fraction]:
    """``Gbar_i = W phi(tau_i(w)) / ||phi(tau_i(w))||_1`` for embeddings ``w`` already over the
    lifted states ``(m_1..m_N, h)`` (e.g. a prompt ``u`` followed by ``eta(e(x_j))``); the zero
    vector when the norm is 0 (SPEC section 1)."""
    phi = reverse_lift(mhmm, tau(mhmm.lift(), lifted_embeddings, i))
    total = sum(phi)
    if total == 0:
        return [Fraction(0)] * mhmm.num_tokens
    Wf = mhmm.emission_matrix()
    return [sum((Wf[x, k] * phi[k] for k in range(len(phi)) if phi[k]), Fraction(0)) / total
            for x in range(mhmm.num_tokens)]


def memory_gbar(mhmm: MemoryHMM, embeddings: Sequence[Sequence], i: int) -> list[Fraction]:
    """``Gbar_i(v) = W phi(tau_i(eta(v))) / ||phi(tau_i(eta(v)))||_1`` for a memory HMM,
    embeddings of length ``|M||H|`` (SPEC section 1). Zero vector when the norm is 0."""
    return lifted_gbar(mhmm, [lift_embedding(mhmm, v) for v in embeddings], i)


def prompt_gbar(mhmm: MemoryHMM, u: Sequence, tokens: Sequence[int], i: int) -> list[Fraction]:
    """``Gbar_i(ehat(x))`` for ``ehat(x) = (u, eta(e(x_1)), ..., eta(e(x_t)))`` with the prompt
    ``u`` over the lifted states (0-based ``i`` in ``0..t``), exactly."""
    lifted = mhmm.lift()
    return lifted_gbar(mhmm, [list(u)] + [list(lifted.W[z]) for z in tokens], i)


def memory_posterior(mhmm: MemoryHMM, tokens: Sequence[int], cell: int | None = None) -> list[Fraction]:
    """``P[M_j | X_{1:T} = x]`` for cell ``j`` (default the target cell), exactly."""
    j = mhmm.target_cell if cell is None else cell
    if not 0 <= j < mhmm.cells:
        raise InputError(f"cell {j} is outside 0..{mhmm.cells - 1}")
    post = posterior_h0(mhmm.lift(), tokens)
    n = mhmm.num_states
    out = [Fraction(0)] * mhmm.memory_values
    for c, ms in enumerate(mhmm.memory_configurations()):
        out[ms[j]] += sum(post[c * n:(c + 1) * n], Fraction(0))
    return out
