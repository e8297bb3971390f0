"""Witnesses for the memory-augmented HMM theorems (paper Section 4, Appendix C), built exactly.

Conventions (SPEC section 1): hidden state ``h = (j, s)`` is flattened as ``h = j |S| + s``;
emission columns ``W_(m, h) = W[:, m, h]`` are indexed ``m |H| + h`` (``m`` major) in
``W`` read as ``|X| x (|M||H|)``; lifted states ``(m_1..m_N, h)`` are indexed ``c |H| + h``
for the lexicographic memory configuration ``c``.

The span decomposition ``span(U) ⊕ Vbar`` with its exact projections ``B^(h)`` and ``Bbar``
(Claims C.3 and C.10) is in :mod:`.span`; the head's semantics (argmax-set averaging) in
:mod:`headprompt.models.inference.attention`; the witness type in :mod:`.witnesses`.

Theorem 4.3 (Claim C.3, Lemmas C.2 and C.4):

    Theta^(1)[h]   = 1^T B^(h) for h in H*;  Theta^(1)[h0] = 1^T Bbar for the smallest h0
                     not in H* (when there is one); other rows 0             (|H| x |X|)
    Theta^(2,s)    = W_(M,j*,s)^+ B^((j*,s))                                  (|M| x |X|)
    q              = (1_{H*}, 0);  Theta_K = [Theta^(1); 0];  beta_i = 0      (|H|+1)
    Theta_V[(m,(j*,s))] = Theta^(2,s)[m] for s in S*, other rows 0           (|M||H| x |X|)
    b[(m,(j*,s))]  = mu_m for every s in S (the matrix "B" of Lemma C.4 sums over s), else 0

so that ``q . Theta_K G_i(x) = Pr(H_i in H* | X_-i = x_-i)`` (1 exactly on the positions
``Z`` whose posterior support lies in ``H*``) and ``V(G_i(x), e(x_i)) = mu .
P[M_j*, X_i = x_i | X_-i = x_-i] = r_i mu . P[M_j* | X = x]`` with ``r_i > 0`` on ``Z``.

Theorems 4.6 and C.6 (Claims C.10-C.15, Lemmas C.9 and C.13): the prompt of eq. C.6,
``u[(m_1..m_N, h)] = 1(m_j* in supp(mu))`` over lifted states; the same construction with
``M' = M*`` (``Theta^(2,s)`` padded with zero rows for ``m`` outside ``M*``);
``q = (1_{H*}, 1)``; position embeddings ``beta_1 = (0_|H|, -2)`` and ``beta_i = 0`` for
``i > 1`` (SPEC's reading). The value reads ``phi`` of the lifted input embedding.

One deviation, documented: the paper argues ``q . (K(Gbar_1) + beta_1) <= -1`` for the prompt
position, which needs ``q . Theta_K Gbar_1 <= 1``. When ``M* != M``, ``Gbar_1`` (which
ignores the prompt) mixes the columns ``W_(m, h)``, ``m not in M*``, that lie outside the
direct sum, and the projections give no bound on them. Position embeddings are kept as SPEC
reads them whenever ``max_x (Theta_K^T q)_x < 2`` (then ``score_1 < 0 <= score_i`` for every
``i > 1``, as the proof needs); otherwise ``beta_1``'s last entry becomes ``-c`` for the
smallest integer ``c > max_x (Theta_K^T q)_x``, and the witness says so in ``notes``.

Position embeddings in a witness are rows ``beta[0], beta[1], ...`` for positions 1, 2, ...;
positions past the last row reuse the last row (so one witness serves every length).

Witnesses are plain data citing the claim they support; ``verify/`` checks them independently.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..models.inference.attention import AttentionResult, attention, beta_row, softmax_attention
from ..models.exceptions import ConstructionError
from ..models.hmm.values import MemoryHMM
from ..models.hmm.linalg import pivot_columns

from .span import (SpanDecomposition, column_index, relevant_columns, require_exact, span_decomposition,
                   theta_one, theta_two)
from .witnesses import AttentionWitness

# the span decomposition lives in .span, the head's semantics in models.attention and the
# witness type in .witnesses; they are re-exported here for callers of the theorem builders
__all__ = ["RecoverableSets", "find_recoverable_states", "prompt_vector", "theorem_43_witness",
           "theorem_c6_witness", "AttentionWitness", "SpanDecomposition", "span_decomposition",
           "relevant_columns", "theta_one", "theta_two", "column_index", "pivot_columns",
           "attention", "softmax_attention", "beta_row", "AttentionResult"]

_ZERO, _ONE = Fraction(0), Fraction(1)


def _zeros(rows: int, cols: int) -> np.ndarray:
    return np.full((rows, cols), _ZERO, dtype=object)


def _require_task(mhmm: MemoryHMM) -> np.ndarray:
    require_exact(mhmm)
    if mhmm.mu is None:
        raise ConstructionError("the instance has no task vector mu; give one (\"mu\" in the instance file)")
    return mhmm.mu



def prompt_vector(mhmm: MemoryHMM, memory_subset: Sequence[int]) -> np.ndarray:
    """The prompt of eq. C.6 over lifted states ``c |H| + h``: ``u = 1(m_j* in M*)``.

    >>> from headprompt.models.hmm.values import MemoryHMM
    >>> mh = MemoryHMM.create(1, 2, 1, [[1]], [[[1], [0]], [[0], [1]]], [1], ['1/2', '1/2'])
    >>> [str(v) for v in prompt_vector(mh, [1])]
    ['0', '1']
    """
    keep = set(int(m) for m in memory_subset)
    j = mhmm.target_cell
    return np.array([_ONE if ms[j] in keep else _ZERO for ms in mhmm.memory_configurations()
                     for _ in range(mhmm.num_states)], dtype=object)


@dataclass(frozen=True)
class RecoverableSets:
    """Result of the search for ``S*`` (Assumption 4.2 / 4.5 / C.5)."""

    found: bool
    S_star: tuple[int, ...] = ()
    singletons: dict = field(default_factory=dict)     # s -> "ok" or the reason it fails
    reason: str = ""


def _singleton_failure(mhmm: MemoryHMM, s: int, memory_subset) -> str | None:
    try:
        span_decomposition(mhmm, [s], memory_subset=memory_subset)
    except ConstructionError as exc:
        return str(exc)
    return None


def find_recoverable_states(mhmm: MemoryHMM, *, memory_subset: Sequence[int] | None = None
                            ) -> RecoverableSets:
    """A largest ``S*`` with ``H* = {j*} x S*`` satisfying the non-degeneracy assumption.

    Valid sets are closed under subsets, and a singleton ``{s}`` that fails makes every set
    containing ``s`` fail (a dependence or a common vector of ``{s}`` against the rest becomes
    one of the larger set), so the search runs over subsets of the valid singletons, largest
    first; when no singleton is valid, their failures prove that no ``S*`` exists.
    """
    require_exact(mhmm)
    singles = {}
    for s in range(mhmm.syntax_states):
        why = _singleton_failure(mhmm, s, memory_subset)
        singles[s] = "ok" if why is None else why
    ok = [s for s, v in singles.items() if v == "ok"]
    if not ok:
        return RecoverableSets(False, singletons=singles,
                               reason="no syntax state s of the target cell works even alone: " +
                                      "; ".join(f"S* = {{{s}}}: {why}" for s, why in singles.items()))
    if len(ok) > 14:
        ok_sets = [tuple(ok)] + [(s,) for s in ok]
    else:
        ok_sets = [c for k in range(len(ok), 0, -1) for c in itertools.combinations(ok, k)]
    for cand in ok_sets:
        try:
            span_decomposition(mhmm, cand, memory_subset=memory_subset)
        except ConstructionError:
            continue
        return RecoverableSets(True, S_star=tuple(cand), singletons=singles)
    return RecoverableSets(False, singletons=singles, reason="no subset works")  # pragma: no cover


def _target_support(mu: np.ndarray) -> tuple[int, ...]:
    """``supp(mu)``; for a ``k``-row task the union of the rows' supports."""
    if np.ndim(mu) == 2:
        return tuple(sorted(set().union(*(_target_support(row) for row in mu))))
    return tuple(m for m in range(len(mu)) if mu[m] != 0)


def _value_parameters(mhmm: MemoryHMM, dec: SpanDecomposition, S_star, mu) -> tuple[np.ndarray, np.ndarray]:
    """``Theta_V`` and ``b`` of Lemma C.4 / C.13; for a ``k``-row ``mu``, ``b`` has one row per
    class (the same ``Theta_V``, ``b_c`` built from ``mu_c``)."""
    if np.ndim(mu) == 2:
        parts = [_value_parameters(mhmm, dec, S_star, row) for row in mu]
        return parts[0][0], np.array([b for _, b in parts], dtype=object)
    n, M, X, S = mhmm.num_states, mhmm.memory_values, mhmm.num_tokens, mhmm.syntax_states
    j_star = mhmm.target_cell
    Theta_V = _zeros(M * n, X)
    for s in S_star:
        T2 = theta_two(mhmm, dec, s)
        h = j_star * S + s
        for m in range(M):
            Theta_V[column_index(mhmm, m, h)] = T2[m]
    b = np.array([_ZERO] * (M * n), dtype=object)
    for s in range(S):
        for m in range(M):
            b[column_index(mhmm, m, j_star * S + s)] = Fraction(mu[m])
    return Theta_V, b


def theorem_43_witness(mhmm: MemoryHMM, S_star: Sequence[int] | None = None) -> AttentionWitness:
    """The Theorem 4.3 attention head (Appendix C.1), exactly.

    Raises:
        ConstructionError: no task ``mu``, or Assumption 4.2 fails (no ``S*``, or the given
            ``S*`` breaks it), with the reason.
    """
    mu = _require_task(mhmm)
    if S_star is None:
        sets = find_recoverable_states(mhmm)
        if not sets.found:
            raise ConstructionError(f"Assumption 4.2 fails: {sets.reason}")
        S_star = sets.S_star
    dec = span_decomposition(mhmm, S_star)
    n = mhmm.num_states
    T1 = theta_one(mhmm, dec)
    Theta_K = np.concatenate([T1, _zeros(1, mhmm.num_tokens)], axis=0)
    q = np.array([_ONE if h in dec.H_star else _ZERO for h in range(n)] + [_ZERO], dtype=object)
    beta = _zeros(1, n + 1)
    Theta_V, b = _value_parameters(mhmm, dec, sorted(S_star), mu)
    return AttentionWitness(q=q, Theta_K=Theta_K, beta=beta, Theta_V=Theta_V, b=b, theorem="4.3",
                            H_star=dec.H_star, S_star=tuple(sorted(S_star)),
                            memory_subset=dec.memory_subset)


def theorem_c6_witness(mhmm: MemoryHMM, S_star: Sequence[int] | None = None, *,
                       theorem: str = "C.6") -> AttentionWitness:
    """The prompt ``u`` of eq. C.6 and the attention head of Lemmas C.9 and C.13, exactly
    (Theorem 4.6 is the case of one memory cell).

    Raises:
        ConstructionError: no task, ``mu = 0``, or Assumption 4.5 / C.5 fails.
    """
    mu = _require_task(mhmm)
    M_star = _target_support(mu)
    if not M_star:
        raise ConstructionError("mu = 0: supp(mu) is empty, so the prompt of eq. C.6 is 0 "
                                "(and F* = 1 everywhere)")
    name = "4.5" if theorem == "4.6" else "C.5"
    if S_star is None:
        sets = find_recoverable_states(mhmm, memory_subset=M_star)
        if not sets.found:
            raise ConstructionError(f"Assumption {name} fails: {sets.reason}")
        S_star = sets.S_star
    dec = span_decomposition(mhmm, S_star, memory_subset=M_star)
    n, X = mhmm.num_states, mhmm.num_tokens
    T1 = theta_one(mhmm, dec)
    Theta_K = np.concatenate([T1, _zeros(1, X)], axis=0)
    q = np.array([_ONE if h in dec.H_star else _ZERO for h in range(n)] + [_ONE], dtype=object)
    key = Theta_K.T.dot(q)                                   # Theta_K^T q, over tokens
    top = max(key)
    notes = ()
    c = Fraction(2)
    if top >= 2:
        c = Fraction(math.floor(top) + 1)
        notes = (f"beta_1 = (0, -{c}) instead of (0, -2): max_x (Theta_K^T q)_x = {top} >= 2, so -2 "
                 "would not keep the prompt position below the others (see constructions/memory.py)",)
    beta = _zeros(2, n + 1)
    beta[0, n] = -c
    Theta_V, b = _value_parameters(mhmm, dec, sorted(S_star), mu)
    return AttentionWitness(q=q, Theta_K=Theta_K, beta=beta, Theta_V=Theta_V, b=b,
                            u=prompt_vector(mhmm, M_star), theorem=theorem, H_star=dec.H_star,
                            S_star=tuple(sorted(S_star)), memory_subset=M_star, notes=notes,
                            cites=f"Theorem {theorem}, Appendix C.3: u of eq. C.6, Lemma C.9 "
                                  "(q, Theta_K, beta), Lemma C.13 (Theta_V, b)")
