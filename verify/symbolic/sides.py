"""The two sides of every symbolic proof (:mod:`.proofs`).

- Left-hand sides by brute force over hidden paths (:func:`path_sum`, the definition of
  ``tau_i`` read literally).
- Right-hand sides from the paper's formulas, with the probabilities in them computed by matrix
  products (forward marginals ``A^i pi0``, backward messages ``Pr(X_{1:T} = x | H_0)``).
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

from ...models.exceptions import InputError

from .algebra import MAX_SIZE, RationalFunction, SymbolicHMM, Vector

__all__ = ["path_sum", "gbar_path_sum", "state_marginal", "backward_likelihood", "sequence_probability",
           "start_posterior", "prompt_weight", "left_inverse", "prop_3_4_rhs", "claim_a1_rhs",
           "lemma_b2_rhs", "gbar2_rhs", "head_3_3_matrix", "head_3_3_rhs", "head_3_6_matrix",
           "structured_case", "nonnegative_polynomial"]


# ----------------------------------------------------------------------------------------------
# Left-hand sides: brute force over hidden paths.

def path_sum(hmm: SymbolicHMM, emissions: Sequence[Vector | None], step: int) -> Vector:
    """Joint weight of ``H_step = h`` and the evidence, by enumerating hidden paths.

    ``out[h] = sum over h_0..h_t with h_step = h of
    pi0[h_0] prod_{j=1..t} A[h_j, h_{j-1}] prod_{j: emissions[j-1] given} emissions[j-1][h_j]``,
    ``t = len(emissions)``; ``emissions[j-1]`` is the likelihood vector of the evidence at time
    ``j`` (``None``: unobserved). Shape ``(|H|,)``, entries in ``hmm.ring``.
    """
    n, t = hmm.num_states, len(emissions)
    out = [hmm.ring.zero] * n

    def walk(j: int, prev: int, weight: Any, marked: int) -> None:
        if j > t:
            out[marked] += weight
            return
        for h in range(n):
            w = weight * hmm.A[h][prev]
            if emissions[j - 1] is not None:
                w *= emissions[j - 1][h]
            if w:
                walk(j + 1, h, w, h if j == step else marked)

    for h0 in range(n):
        if hmm.pi0[h0]:
            walk(1, h0, hmm.pi0[h0], h0)
    return tuple(out)


def gbar_path_sum(hmm: SymbolicHMM, embeddings: Sequence[Vector], position: int) -> Vector:
    """``Gbar_i(v) = W tau_i(v) / ||tau_i(v)||_1`` (paper eq. B.1, SPEC section 1) by path sums.

    ``position`` is 0-based (paper's ``i = position + 1``); ``embeddings[position]`` is ignored.
    Shape ``(|X|,)``, entries :class:`RationalFunction`; the norm is a nonzero polynomial here.
    """
    tau = path_sum(hmm, [None if j == position else v for j, v in enumerate(embeddings)],
                   position + 1)
    norm = hmm.frac(sum(tau, hmm.ring.zero))
    return tuple(hmm.frac(sum((hmm.W[z][h] * tau[h] for h in range(hmm.num_states)),
                              hmm.ring.zero)) / norm for z in range(hmm.vocab_size))


def _normalized(hmm: SymbolicHMM, joint: Vector) -> Vector:
    total = hmm.frac(sum(joint, hmm.ring.zero))
    return tuple(hmm.frac(p) / total for p in joint)


# ----------------------------------------------------------------------------------------------
# Right-hand sides: matrix products (messages).

def _matvec(M: Sequence[Vector], v: Vector) -> Vector:
    return tuple(sum((row[c] * v[c] for c in range(len(v))), 0) for row in M)


def _dot(a: Vector, b: Vector) -> Any:
    return sum((p * q for p, q in zip(a, b)), 0)


def state_marginal(hmm: SymbolicHMM, step: int) -> Vector:
    """``P[H_step] = A^step pi0``, shape ``(|H|,)``."""
    v = hmm.pi0
    for _ in range(step):
        v = _matvec(hmm.A, v)
    return v


def backward_likelihood(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``beta[h] = Pr(X_{1:T} = x | H_0 = h)`` by backward messages
    ``beta_{j-1} = A^T (W[x_j, :] ⊙ beta_j)``, ``beta_T = 1``. Shape ``(|H|,)``."""
    n = hmm.num_states
    beta = (hmm.ring.one,) * n
    for z in reversed(x):
        beta = tuple(sum((hmm.A[h2][h] * hmm.W[z][h2] * beta[h2] for h2 in range(n)), 0)
                     for h in range(n))
    return beta


def sequence_probability(hmm: SymbolicHMM, x: Sequence[int], step: int = 0) -> Any:
    """``Pr(X_{step+1:step+T} = x) = P[H_step] . beta`` (stationary emissions/transitions)."""
    return _dot(state_marginal(hmm, step), backward_likelihood(hmm, x))


def start_posterior(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``P[H_0 | X_{1:T} = x] = pi0 ⊙ beta / (pi0 . beta)``, shape ``(|H|,)``."""
    beta = backward_likelihood(hmm, x)
    total = _dot(hmm.pi0, beta)
    return tuple(RationalFunction([p, b], [total]) for p, b in zip(hmm.pi0, beta))


def prompt_weight(hmm: SymbolicHMM) -> Vector:
    """``c = P[Xhat_1 = ztilde, H_2] = A (u ⊙ P[H_1])`` (proof of Theorem 3.6), shape
    ``(|H|,)``."""
    p1 = state_marginal(hmm, 1)
    return _matvec(hmm.A, tuple(u * p for u, p in zip(hmm.u, p1)))


def _determinant(M: Sequence[Sequence[Any]], one: Any) -> Any:
    """Leibniz expansion ``sum_sigma sign(sigma) prod_r M[r][sigma(r)]`` (``k <= 4``)."""
    total = 0 * one
    for perm in itertools.permutations(range(len(M))):
        inversions = sum(a > b for a, b in itertools.combinations(perm, 2))
        term = one
        for r, c in enumerate(perm):
            term = term * M[r][c]
        total = total - term if inversions % 2 else total + term
    return total


def left_inverse(hmm: SymbolicHMM, columns: Sequence[int]) -> dict[int, Vector]:
    """A left inverse of ``W[:, columns]``: rows ``{h: (|X|,)}`` with
    ``sum_x row_h[x] W[x, g] = 1(h = g)`` for ``h, g`` in ``columns``.

    Uses the top ``k x k`` block ``M = W[:k, columns]`` (``k = len(columns) <= |X|``):
    ``M^-1 = adj(M) / det(M)`` (Cramer), padded with zero columns; equals ``W^-1`` when
    ``k = |X|``. Raises :class:`InputError` if ``det(M)`` is the zero polynomial (then
    Assumption 3.1/3.5 fails on the whole parameter space).
    """
    k = len(columns)
    if k > hmm.vocab_size:
        raise InputError(f"W[:, {list(columns)}] has {k} columns but only {hmm.vocab_size} rows; "
                         "it has no left inverse (Assumption 3.1/3.5 needs |X| >= that number)")
    M = [[hmm.W[r][h] for h in columns] for r in range(k)]
    det = _determinant(M, hmm.ring.one)
    if not det:
        raise InputError(f"W[:{k}, {list(columns)}] is singular; no left inverse")

    def cofactor(r: int, c: int) -> Any:  # (-1)^(r+c) det(M without row r and column c)
        minor = [[M[i][j] for j in range(k) if j != c] for i in range(k) if i != r]
        return (-1) ** (r + c) * _determinant(minor, hmm.ring.one)

    zeros = (hmm.frac(0),) * (hmm.vocab_size - k)
    return {h: tuple(RationalFunction([cofactor(x, i)], [det]) for x in range(k)) + zeros
            for i, h in enumerate(columns)}


def prop_3_4_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``W P[H_1 | X_{2:T+1} = x]`` with ``P[H_1 | .] ∝ P[H_1] ⊙ beta`` (Proposition 3.4)."""
    joint = tuple(p * b for p, b in zip(state_marginal(hmm, 1), backward_likelihood(hmm, x)))
    return _matvec([[hmm.frac(w) for w in row] for row in hmm.W], _normalized(hmm, joint))


def claim_a1_rhs(hmm: SymbolicHMM, x: Sequence[int], step: int) -> Vector:
    """``r_x D P[H_0 | X_{1:T} = x]``, ``D = diag(P[H_i] / P[H_0])``,
    ``r_x = Pr(X_{1:T} = x) / Pr(X_{i+1:T+i} = x)`` (Claim A.1, ``i = step``)."""
    r = hmm.frac(sequence_probability(hmm, x)) / hmm.frac(sequence_probability(hmm, x, step))
    d = [hmm.frac(p) / hmm.frac(q) for p, q in zip(state_marginal(hmm, step), hmm.pi0)]
    return tuple(r * dh * ph for dh, ph in zip(d, start_posterior(hmm, x)))


def _lemma_b2_r(hmm: SymbolicHMM, x: Sequence[int]) -> tuple[Any, Any]:
    """``r_x = Pr(X_{1:T} = x) / Pr(Xhat_1 = ztilde, Xhat_{3:T+2} = x)`` as (num, den)."""
    return sequence_probability(hmm, x), _dot(prompt_weight(hmm), backward_likelihood(hmm, x))


def lemma_b2_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``r_x diag(1/P[H_0]) (c ⊙ P[H_0 | X_{1:T} = x])``, ``c = P[Xhat_1 = ztilde, H_2]``
    (Lemma B.2 with ``D = diag(1/P[H_0])``; ``r_x`` as in :func:`_lemma_b2_r`)."""
    num, den = _lemma_b2_r(hmm, x)
    r = hmm.frac(num) / hmm.frac(den)
    return tuple(r * hmm.frac(c) / hmm.frac(p) * q
                 for c, p, q in zip(prompt_weight(hmm), hmm.pi0, start_posterior(hmm, x)))


def gbar2_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``Gbar_2(ehat(x)) = r_x W diag(1/P[H_0]) (c ⊙ P[H_0 | X = x])`` (Theorem 3.6's proof)."""
    return _matvec([[hmm.frac(w) for w in row] for row in hmm.W], lemma_b2_rhs(hmm, x))


def head_3_3_matrix(hmm: SymbolicHMM) -> dict[int, Vector]:
    """``M = D^-1 W^+``, ``D = diag(P[H_1]/P[H_0])``, so Theorem 3.3's head is ``b = mu^T M``
    (proof of Theorem 3.3). Rows ``{h: (|X|,)}`` for every hidden state ``h``."""
    w_plus, p1 = left_inverse(hmm, range(hmm.num_states)), state_marginal(hmm, 1)
    return {h: tuple(RationalFunction([hmm.pi0[h]], [p1[h]]) * w for w in w_plus[h])
            for h in w_plus}


def head_3_3_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``r_x P[H_0 | X_{1:T} = x]`` (the coefficient of ``mu`` in ``r_x mu . P[H_0 | x]``),
    ``r_x = Pr(X_{1:T} = x) / Pr(X_{2:T+1} = x)``, shape ``(|H|,)``."""
    r = hmm.frac(sequence_probability(hmm, x)) / hmm.frac(sequence_probability(hmm, x, 1))
    return tuple(r * p for p in start_posterior(hmm, x))


def head_3_6_matrix(hmm: SymbolicHMM, H_star: Sequence[int]) -> dict[int, Vector]:
    """``M = diag(P[H_0] / c)_{H*} W_{H*}^+`` so Theorem 3.6's head is ``b = mu^T M``
    (proof of Theorem 3.6: ``W_{H*}^+`` a left inverse of ``W[:, H*]``, the diagonal undoes
    ``D = diag(1/P[H_0])`` and the prompt weight ``c``). Rows ``{h: (|X|,)}``, zero off ``H*``."""
    w_plus, c = left_inverse(hmm, H_star), prompt_weight(hmm)
    zero = (hmm.frac(0),) * hmm.vocab_size
    return {h: tuple(RationalFunction([hmm.pi0[h]], [c[h]]) * w for w in w_plus[h])
            if h in w_plus else zero for h in range(hmm.num_states)}


def structured_case(vocab: int) -> dict[str, Any]:
    """The Theorem 3.6 instance family used here: ``H* = {0..k-1}``, ``k = min(vocab, 3)``,
    ``|H| = k + 1``, ``B = {0}``, ``A[h, 0] = 0`` for ``h`` outside ``H*`` (so
    ``supp(A[:, 0]) = H*``), ``mu`` supported on ``H*``."""
    k = min(vocab, MAX_SIZE - 1)
    return {"hidden": k + 1, "vocab": vocab, "H_star": list(range(k)), "B": [0],
            "A_zeros": [[k, 0]]}


def nonnegative_polynomial(p: Any) -> bool:
    """True iff ``p`` is a nonzero polynomial whose coefficients are all >= 0 (then ``p > 0``
    wherever every variable is > 0)."""
    return bool(p) and all(c >= 0 for c in p.coeffs())
