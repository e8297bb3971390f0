"""The paper's recipes applied without their assumptions ("the construction" of ``verify
explore --drop``), exactly.

Each theorem's witness divides by something or inverts something that its assumptions make
invertible. Without the assumption we keep the recipe and replace every inverse by the
Moore-Penrose pseudo-inverse (which *is* the inverse when it exists), so the recipe always
produces a witness and that witness can be checked:

- Theorem 3.3: ``b = mu^T D^+ W^+`` with ``D = diag(P[H_1] / P[H_0])`` (``D^+`` is 0 where
  ``P[H_1] = 0``) and ``W^+`` the pseudo-inverse of ``W``;
- Theorem 3.6: ``B`` is the set Assumption 3.5's search finds, or else a smallest (greedy past a search budget: :func:`covering_set`) set whose
  one-step reach covers ``supp(mu)`` (all states when none does), ``u = 1_B``,
  ``H* = ∪_{h in B} supp(A[:, h])``, ``c = A (u ⊙ P[H_1])`` and
  ``b = mu_{H*}^T diag(P[H_0] / c)^+_{H*} (W_{:, H*})^+``;
- Theorems 4.3, 4.6, C.6: the Appendix C head with ``S*`` the set Assumption 4.2/4.5/C.5's
  search finds, or else ``S* = {0}``, and ``L = [U | Vb]^+``, ``W_(M', h)^+`` pseudo-inverses.

When the assumptions hold these are exactly the witnesses of ``constructions/vanilla.py`` and
``constructions/memory.py`` (the callers use those builders first).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ..models.hmm.task import is_multiclass
from ..models.hmm.values import HMM, MemoryHMM
from ..models.inference.exact import prior_h1, transition_apply
from ..models.hmm.linalg import from_fmpq_mat, pivot_columns, to_fmpq_mat

from .vanilla import LinearHeadWitness, PromptWitness, find_essential_sets

__all__ = ["pseudo_inverse", "relaxed_33_witness", "relaxed_36_witness", "relaxed_memory_witness",
           "covering_set", "RECIPES"]

RECIPES = {
    "3.3": "b = mu^T D^+ W^+ (Theorem 3.3's head with Moore-Penrose pseudo-inverses for W and D)",
    "3.6": "u = 1_B for a smallest B whose reach covers supp(mu) (greedy past a search budget), b = mu_H*^T diag(P[H_0]/c)^+ (W_:,H*)^+ "
           "(Theorem 3.6's recipe with pseudo-inverses)",
    "4.3": "Appendix C.1's attention head with S* = {0} when no S* exists and pseudo-inverses for "
           "[U | Vbar] and W_(M,h)",
    "4.6": "eq. C.6's prompt and Appendix C.3's head with S* = {0} when no S* exists and pseudo-inverses",
    "C.6": "eq. C.6's prompt and Appendix C.3's head with S* = {0} when no S* exists and pseudo-inverses",
}


def pseudo_inverse(matrix) -> np.ndarray:
    """The exact Moore-Penrose pseudo-inverse ``M^+`` (``n x m`` for ``M`` of shape ``m x n``),
    by the full-rank factorization ``M = C F``: ``M^+ = F^T (F F^T)^-1 (C^T C)^-1 C^T``.

    >>> [[str(v) for v in row] for row in pseudo_inverse([[1, 1], [1, 1]])]
    [['1/4', '1/4'], ['1/4', '1/4']]
    """
    arr = np.asarray(matrix, dtype=object)
    m, n = arr.shape
    M = to_fmpq_mat(arr)
    R, r = M.rref()
    if r == 0:
        return np.full((n, m), Fraction(0), dtype=object)
    pivots, row = [], 0
    for col in range(n):
        if row < r and R[row, col] != 0:
            pivots.append(col)
            row += 1
    C = to_fmpq_mat(arr[:, pivots])                                   # m x r
    F = to_fmpq_mat(from_fmpq_mat(R)[:r, :])                          # r x n
    Ft, Ct = F.transpose(), C.transpose()
    return from_fmpq_mat(Ft * (F * Ft).inv() * (Ct * C).inv() * Ct)


def _pinv_diag(values) -> list[Fraction]:
    return [Fraction(0) if v == 0 else 1 / Fraction(v) for v in values]


def _rows(mu) -> list:
    """The rows of a ``k``-row task, or ``[mu]``."""
    return list(mu) if is_multiclass(mu) else [mu]


def relaxed_33_witness(hmm: HMM) -> LinearHeadWitness:
    """Theorem 3.3's head ``b = mu^T D^+ W^+`` (module docstring); a ``k``-row task gets one
    head row per class."""
    if is_multiclass(hmm.mu):
        heads = [relaxed_33_witness(hmm.with_task(row)) for row in hmm.mu]
        return LinearHeadWitness(b=np.array([w.b for w in heads], dtype=object), cites=heads[0].cites)
    p0, p1 = hmm.pi0, prior_h1(hmm)
    d_plus = [Fraction(0) if p1[h] == 0 else Fraction(p0[h]) / p1[h] for h in range(hmm.num_states)]
    coeff = np.array([hmm.mu[h] * d_plus[h] for h in range(hmm.num_states)], dtype=object)
    return LinearHeadWitness(b=coeff.dot(pseudo_inverse(hmm.W)),
                             cites="Theorem 3.3's recipe without its assumptions: " + RECIPES["3.3"])


def _reach(hmm: HMM, B) -> list[int]:
    return sorted({g for h in B for g in range(hmm.num_states) if hmm.A[g, h] != 0})


COVER_SEARCH = 100_000   # candidate sets the smallest-cover search may try before going greedy


def covering_set(hmm: HMM) -> tuple[int, ...]:
    """A set ``B`` whose one-step reach covers ``supp(mu)`` (ignoring independence): the
    smallest, first in lexicographic order, while the sizes searched so far took at most
    :data:`COVER_SEARCH` candidates; past that budget (set cover is NP-hard: at 40 states a
    cover of 10 would mean 8.5e8 candidates) the greedy cover (most new targets first, ties to
    the lower state), which covers ``supp(mu)`` but need not be smallest; all states when
    nothing covers it."""
    n = hmm.num_states
    target = frozenset(h for row in _rows(hmm.mu) for h in range(n) if row[h] != 0)   # every class's support
    if not target:
        return ()
    reach = [frozenset(g for g in range(n) if hmm.A[g, h] != 0) & target for h in range(n)]
    if not target <= frozenset().union(*reach):
        return tuple(range(n))
    tried = 0
    for k in range(1, n + 1):
        size = math.comb(n, k)
        if tried + size > COVER_SEARCH:
            break
        tried += size
        for B in itertools.combinations(range(n), k):
            if frozenset().union(*(reach[h] for h in B)) == target:
                return B
    chosen, covered = [], frozenset()
    while covered != target:
        best = max(range(n), key=lambda h: (len(reach[h] - covered), -h))
        chosen.append(best)
        covered |= reach[best]
    return tuple(sorted(chosen))


def relaxed_36_witness(hmm: HMM, B=None) -> PromptWitness:
    """Theorem 3.6's prompt and head with pseudo-inverses (module docstring); a ``k``-row task
    gets one prompt ``u = 1_B`` (``B`` covers every row) and one head row per class."""
    if B is None:
        sets = find_essential_sets(hmm)
        B = tuple(sets.B) if sets.found else covering_set(hmm)
    if is_multiclass(hmm.mu):
        heads = [relaxed_36_witness(hmm.with_task(row), B) for row in hmm.mu]
        return PromptWitness(u=heads[0].u, b=np.array([w.b for w in heads], dtype=object),
                             H_star=heads[0].H_star, B=tuple(B), cites=heads[0].cites)
    n = hmm.num_states
    u = np.array([Fraction(1) if h in B else Fraction(0) for h in range(n)], dtype=object)
    p0, p1 = hmm.pi0, prior_h1(hmm)
    c = transition_apply(hmm, u * p1)
    H_star = _reach(hmm, B)
    if not H_star:
        return PromptWitness(u=u, b=np.array([Fraction(0)] * hmm.num_tokens, dtype=object), B=B)
    coeff = np.array([Fraction(0) if c[h] == 0 else hmm.mu[h] * p0[h] / c[h] for h in H_star], dtype=object)
    b = coeff.dot(pseudo_inverse(hmm.W[:, H_star]))
    return PromptWitness(u=u, b=b, H_star=tuple(H_star), B=B,
                         cites="Theorem 3.6's recipe without its assumptions: " + RECIPES["3.6"])


def relaxed_memory_witness(mhmm: MemoryHMM, theorem: str):
    """The Appendix C head (and for 4.6/C.6 the prompt of eq. C.6) with ``S* = {0}`` and
    pseudo-inverses; returns ``(witness, H_star)``. Used only where the paper's builder raises."""
    import math

    from .memory import prompt_vector
    from .span import SpanDecomposition, column_index, relevant_columns, theta_one
    from .witnesses import AttentionWitness

    mu = mhmm.mu
    prompt = theorem != "4.3"
    M_rec = tuple(range(mhmm.memory_values)) if not prompt else tuple(
        m for m in range(mhmm.memory_values) if any(row[m] != 0 for row in _rows(mu)))
    S_star = [0]
    U_labels, rest = relevant_columns(mhmm, S_star, None if not prompt else M_rec)
    V = np.stack([mhmm.W[:, m, h] for m, h in rest], axis=1) if rest else np.empty((mhmm.num_tokens, 0), dtype=object)
    Vb_labels = [rest[k] for k in pivot_columns(V)] if rest else []
    basis = np.stack([mhmm.W[:, m, h] for m, h in list(U_labels) + Vb_labels], axis=1)
    n, X, M = mhmm.num_states, mhmm.num_tokens, mhmm.memory_values
    j_star = mhmm.target_cell
    h_star = j_star * mhmm.syntax_states
    dec = SpanDecomposition((h_star,), M_rec, tuple(U_labels), tuple(Vb_labels), pseudo_inverse(basis),
                               mhmm.emission_matrix(), n)
    T1 = theta_one(mhmm, dec)
    Theta_K = np.concatenate([T1, np.full((1, X), Fraction(0), dtype=object)], axis=0)
    q = np.array([Fraction(1) if h == h_star else Fraction(0) for h in range(n)]
                 + [Fraction(1) if prompt else Fraction(0)], dtype=object)
    U_h = dec.U(h_star)
    small = pseudo_inverse(U_h).dot(dec.projection(h_star))             # |M'| x |X|
    Theta_V = np.full((M * n, X), Fraction(0), dtype=object)
    for r, m in enumerate(M_rec):
        Theta_V[column_index(mhmm, m, h_star)] = small[r]
    heads = []
    for row in _rows(mu):                        # k classes: one head row per class
        b = np.array([Fraction(0)] * (M * n), dtype=object)
        for s in range(mhmm.syntax_states):
            for m in range(M):
                b[column_index(mhmm, m, j_star * mhmm.syntax_states + s)] = Fraction(row[m])
        heads.append(b)
    b = np.array(heads, dtype=object) if is_multiclass(mu) else heads[0]
    notes = ("the paper's recipe without its non-degeneracy assumption: " + RECIPES[theorem],)
    if not prompt:
        beta = np.full((1, n + 1), Fraction(0), dtype=object)
        return AttentionWitness(q=q, Theta_K=Theta_K, beta=beta, Theta_V=Theta_V, b=b, theorem="4.3",
                                   H_star=(h_star,), S_star=(0,), memory_subset=M_rec, notes=notes), [h_star]
    top = max(Theta_K.T.dot(q)) if X else Fraction(0)
    c = Fraction(2) if top < 2 else Fraction(math.floor(top) + 1)
    beta = np.full((2, n + 1), Fraction(0), dtype=object)
    beta[0, n] = -c
    return AttentionWitness(q=q, Theta_K=Theta_K, beta=beta, Theta_V=Theta_V, b=b,
                               u=prompt_vector(mhmm, M_rec), theorem=theorem, H_star=(h_star,), S_star=(0,),
                               memory_subset=M_rec, notes=notes), [h_star]
