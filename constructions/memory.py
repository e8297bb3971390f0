"""Witnesses for the memory-augmented HMM theorems (paper Section 4, Appendix C), built exactly.

Conventions (SPEC section 1): hidden state ``h = (j, s)`` is flattened as ``h = j |S| + s``;
emission columns ``W_(m, h) = W[:, m, h]`` are indexed ``m |H| + h`` (``m`` major) in
``W`` read as ``|X| x (|M||H|)``; lifted states ``(m_1..m_N, h)`` are indexed ``c |H| + h``
for the lexicographic memory configuration ``c``.

Span decomposition behind Claim C.3 (Theorem 4.3) and Claim C.10 (Theorems 4.6/C.6). For a
set of recoverable states ``H* = {j*} x S*`` and a set ``M'`` of memory values (``M' = M``
for Theorem 4.3, ``M' = M* = supp(mu)`` for 4.6/C.6), let ``U_h`` hold the columns
``W_(m, h)``, ``m in M'``, for ``h in H*``, and let ``Vbar`` be the span of the remaining
relevant columns: for Theorem 4.3 every ``W_(m, h')`` with ``h' not in H*``; for C.6 (our
reading of Assumption C.5) ``W_(m, (j*, s))`` with ``m in M*``, ``s not in S*`` together
with ``W_(m, (j, s))`` for every ``m`` and every ``j != j*``. The non-degeneracy assumption
says the columns of all ``U_h`` are independent and their span meets ``Vbar`` only in 0, so
``span(U) ⊕ Vbar`` is a direct sum. With ``Vb`` a basis of ``Vbar`` (pivot columns) and
``L = [U | Vb]^+`` (an exact left inverse, so ``L [U | Vb] = I``), the projections are

    B^(h) = U_h L_h          (L_h: the rows of L belonging to U_h)
    Bbar  = Vb L_V           (L_V: the rows of L belonging to Vb)

and they recover every part of a vector of the direct sum exactly (Claim C.3: "we can recover
v^(h) = B^(h) P[X_i | X_-i = x_-i]"). Outside the direct sum they are one fixed linear
extension (the Moore-Penrose one); the paper leaves it arbitrary.

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

from ..models.hmm import MemoryHMM

from ..models.linalg import left_inverse, rank, to_fmpq_mat
from .vanilla import ConstructionError

__all__ = ["SpanDecomposition", "AttentionWitness", "AttentionResult", "RecoverableSets",
           "span_decomposition", "find_recoverable_states", "relevant_columns", "theta_one",
           "theta_two", "prompt_vector", "theorem_43_witness", "theorem_c6_witness",
           "beta_row", "attention", "softmax_attention", "column_index", "pivot_columns"]

_ZERO, _ONE = Fraction(0), Fraction(1)


def column_index(mhmm: MemoryHMM, m: int, h: int) -> int:
    """Index of ``W_(m, h)`` in ``W`` read as ``|X| x (|M||H|)`` (``m`` major)."""
    return m * mhmm.num_states + h


def pivot_columns(matrix: np.ndarray) -> list[int]:
    """Indices of a maximal independent set of columns (the pivots of the exact RREF), in order.

    >>> pivot_columns(np.array([[1, 2, 0], [1, 2, 1]], dtype=object))
    [0, 2]
    """
    arr = np.asarray(matrix, dtype=object)
    if arr.size == 0:
        return []
    R, r = to_fmpq_mat(arr).rref()
    pivots, row = [], 0
    for col in range(arr.shape[1]):
        if row < r and R[row, col] != 0:
            pivots.append(col)
            row += 1
    return pivots


def _require_exact(mhmm: MemoryHMM) -> None:
    if not mhmm.exact:
        raise ConstructionError("constructions are exact; convert the memory HMM with to_exact() first")


def _require_task(mhmm: MemoryHMM) -> np.ndarray:
    _require_exact(mhmm)
    if mhmm.mu is None:
        raise ConstructionError("the instance has no task vector mu; add \"mu\" to the instance file")
    return mhmm.mu


def relevant_columns(mhmm: MemoryHMM, S_star: Sequence[int], memory_subset: Sequence[int] | None
                     ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The ``(m, h)`` labels of the recoverable columns ``U`` and of the columns spanning
    ``Vbar`` (module docstring). ``memory_subset=None`` is Theorem 4.3's ``M' = M``."""
    j_star, S = mhmm.target_cell, mhmm.syntax_states
    M_all = list(range(mhmm.memory_values))
    M_rec = M_all if memory_subset is None else sorted(int(m) for m in memory_subset)
    H_star = [j_star * S + s for s in sorted(S_star)]
    U = [(m, h) for h in H_star for m in M_rec]
    rest = []
    for h in range(mhmm.num_states):
        if h in H_star:
            continue
        ms = M_rec if mhmm.cell_of(h) == j_star else M_all
        rest.extend((m, h) for m in ms)
    return U, rest


def _columns(mhmm: MemoryHMM, labels: Sequence[tuple[int, int]]) -> np.ndarray:
    if not labels:
        return np.empty((mhmm.num_tokens, 0), dtype=object)
    return np.stack([mhmm.W[:, m, h] for m, h in labels], axis=1)


@dataclass(frozen=True)
class SpanDecomposition:
    """The direct sum ``span(U) ⊕ Vbar`` of Claim C.3 / C.10 with its exact projections.

    Attributes:
        H_star: flattened recoverable states ``(j*, s)``, ``s in S*``.
        memory_subset: ``M'`` (all of ``M`` for Theorem 4.3, ``supp(mu)`` for 4.6/C.6).
        U_labels: ``(m, h)`` of the recoverable columns, grouped by ``h`` (``h`` major).
        Vbar_labels: ``(m, h)`` of the pivot columns chosen as a basis of ``Vbar``.
        left_inverse: ``L = [U | Vb]^+`` (``k x |X|``), ``L [U | Vb] = I``.
        W_flat: ``W`` as ``|X| x (|M||H|)``; num_states: ``|H|``.
    """

    H_star: tuple[int, ...]
    memory_subset: tuple[int, ...]
    U_labels: tuple[tuple[int, int], ...]
    Vbar_labels: tuple[tuple[int, int], ...]
    left_inverse: np.ndarray = field(repr=False)
    W_flat: np.ndarray = field(repr=False)
    num_states: int = 0

    def _rows(self, h: int) -> list[int]:
        return [k for k, (_, g) in enumerate(self.U_labels) if g == h]

    def _cols(self, labels) -> np.ndarray:
        return np.stack([self.W_flat[:, m * self.num_states + g] for m, g in labels], axis=1)

    def U(self, h: int) -> np.ndarray:
        """``U_h = W_(M', h)`` (``|X| x |M'|``)."""
        return self._cols([self.U_labels[k] for k in self._rows(h)])

    def projection(self, h: int) -> np.ndarray:
        """``B^(h) = U_h L_h`` (``|X| x |X|``): recovers the ``span(U_h)`` part."""
        return self.U(h).dot(self.rows_of(h))

    def rest_projection(self) -> np.ndarray:
        """``Bbar = Vb L_V`` (``|X| x |X|``): recovers the ``Vbar`` part (0 when ``Vbar = 0``)."""
        X = self.W_flat.shape[0]
        if not self.Vbar_labels:
            return _zeros(X, X)
        return self._cols(self.Vbar_labels).dot(self.rest_rows())

    def rows_of(self, h: int) -> np.ndarray:
        """``L_h`` (``|M'| x |X|``), the rows of ``L`` for ``U_h``."""
        return self.left_inverse[self._rows(h), :]

    def rest_rows(self) -> np.ndarray:
        """``L_V``, the rows of ``L`` for the basis of ``Vbar``."""
        return self.left_inverse[len(self.U_labels):, :]


def _stack_cols(cols: list) -> np.ndarray:
    return np.stack(cols, axis=1)


def _zeros(rows: int, cols: int) -> np.ndarray:
    return np.full((rows, cols), _ZERO, dtype=object)


def span_decomposition(mhmm: MemoryHMM, S_star: Sequence[int], *,
                       memory_subset: Sequence[int] | None = None) -> SpanDecomposition:
    """The exact direct-sum decomposition for ``H* = {j*} x S*`` (Claim C.3 / C.10).

    >>> from models.hmm import MemoryHMM
    >>> W = [[[1, 0], [0, 0]], [[0, 0], [1, 0]], [[0, '1/2'], [0, 0]], [[0, '1/2'], [0, 1]]]
    >>> mh = MemoryHMM.create(1, 2, 2, [[0, 1], [1, 0]], W, ['1/2', '1/2'], ['1/2', '1/2'])
    >>> d = span_decomposition(mh, [0])                  # X=4, M=2, H=2, H* = {0}
    >>> d.U_labels, d.Vbar_labels
    (((0, 0), (1, 0)), ((0, 1), (1, 1)))
    >>> v = np.array([Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8)], dtype=object)
    >>> [str(x) for x in d.projection(0).dot(v)]        # the span(U_0) part of v
    ['1/2', '1/4', '0', '0']

    Raises:
        ConstructionError: the recoverable columns are dependent, or their span meets
            ``Vbar`` outside 0 (the non-degeneracy assumption fails), naming the ranks.
    """
    _require_exact(mhmm)
    S_star = sorted(set(int(s) for s in S_star))
    if not S_star:
        raise ConstructionError("S* is empty: there are no recoverable hidden states")
    bad = [s for s in S_star if not 0 <= s < mhmm.syntax_states]
    if bad:
        raise ConstructionError(f"S* holds syntax state {bad[0]}, outside 0..{mhmm.syntax_states - 1}")
    U_labels, rest = relevant_columns(mhmm, S_star, memory_subset)
    U = _columns(mhmm, U_labels)
    rU = rank(U)
    if rU < len(U_labels):
        raise ConstructionError(f"the {len(U_labels)} recoverable columns W_(m,h), h in H*, are linearly "
                                f"dependent (rank {rU})")
    V = _columns(mhmm, rest)
    pivots = pivot_columns(V)
    Vb_labels = [rest[k] for k in pivots]
    basis = np.concatenate([U, _columns(mhmm, Vb_labels)], axis=1)
    rB = rank(basis)
    if rB < basis.shape[1]:
        raise ConstructionError(f"span of the recoverable columns meets the span of the other columns: "
                                f"rank [U | Vbar] = {rB} < rank U + rank Vbar = {rU} + {len(pivots)}")
    L = left_inverse(basis)
    j_star, S = mhmm.target_cell, mhmm.syntax_states
    M_rec = tuple(range(mhmm.memory_values)) if memory_subset is None else tuple(sorted(int(m) for m in memory_subset))
    return SpanDecomposition(tuple(j_star * S + s for s in S_star), M_rec, tuple(U_labels), tuple(Vb_labels),
                             L, mhmm.emission_matrix(), mhmm.num_states)


def theta_one(mhmm: MemoryHMM, dec: SpanDecomposition) -> np.ndarray:
    """``Theta^(1)`` of Claim C.3 (``|H| x |X|``): row ``h in H*`` is ``1^T B^(h)``; the row of the
    smallest ``h`` outside ``H*`` is ``1^T Bbar``; so ``Theta^(1) G_i(x)`` holds
    ``Pr(H_i = h | X_-i = x_-i)`` on ``H*`` and sums to 1 on the direct sum."""
    n, X = mhmm.num_states, mhmm.num_tokens
    out = _zeros(n, X)
    ones = np.array([_ONE] * X, dtype=object)
    for h in dec.H_star:
        out[h] = ones.dot(dec.projection(h))
    outside = [h for h in range(n) if h not in dec.H_star]
    if outside:
        out[outside[0]] = ones.dot(dec.rest_projection())
    return out


def theta_two(mhmm: MemoryHMM, dec: SpanDecomposition, s: int) -> np.ndarray:
    """``Theta^(2,s) = W_(M',j*,s)^+ B^((j*,s))`` of Claim C.3 / C.10 (``|M| x |X|``; rows for
    ``m`` outside ``M'`` are 0), so ``Theta^(2,s) G_i(x) = P[M_j*, H_i = (j*, s) | X_-i]``."""
    h = mhmm.target_cell * mhmm.syntax_states + s
    if h not in dec.H_star:
        raise ConstructionError(f"syntax state {s} is not in S*")
    cols = [column_index(mhmm, m, h) for m in dec.memory_subset]
    U_h = dec.W_flat[:, cols]
    small = left_inverse(U_h).dot(dec.projection(h))            # |M'| x |X|
    out = _zeros(mhmm.memory_values, mhmm.num_tokens)
    for r, m in enumerate(dec.memory_subset):
        out[m] = small[r]
    return out


def prompt_vector(mhmm: MemoryHMM, memory_subset: Sequence[int]) -> np.ndarray:
    """The prompt of eq. C.6 over lifted states ``c |H| + h``: ``u = 1(m_j* in M*)``.

    >>> from models.hmm import MemoryHMM
    >>> mh = MemoryHMM.create(1, 2, 1, [[1]], [[[1], [0]], [[0], [1]]], [1], ['1/2', '1/2'])
    >>> [str(v) for v in prompt_vector(mh, [1])]
    ['0', '1']
    """
    keep = set(int(m) for m in memory_subset)
    j = mhmm.target_cell
    return np.array([_ONE if ms[j] in keep else _ZERO for ms in mhmm.memory_configurations()
                     for _ in range(mhmm.num_states)], dtype=object)


@dataclass(frozen=True)
class AttentionWitness:
    """An attention head (eq. 4.1-4.2), optionally with a prompt (Theorems 4.6/C.6).

    Attributes:
        q: ``(|H|+1,)`` query.  Theta_K: ``(|H|+1, |X|)`` keys.  beta: ``(r, |H|+1)`` position
            embeddings for positions 1..r (later positions reuse the last row).
        Theta_V: ``(|M||H|, |X|)``.  b: ``(|M||H|,)``.  u: lifted prompt or None.
        H_star, S_star, memory_subset: the sets the construction used (informational).
        notes: deviations from the paper's literal construction, if any.
    """

    q: np.ndarray
    Theta_K: np.ndarray
    beta: np.ndarray
    Theta_V: np.ndarray
    b: np.ndarray
    u: np.ndarray | None = None
    theorem: str = "4.3"
    H_star: tuple[int, ...] = ()
    S_star: tuple[int, ...] = ()
    memory_subset: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    cites: str = "Theorem 4.3, Appendix C.1: Lemma C.2 (q, Theta_K, beta = 0), Lemma C.4 (Theta_V, b)"

    def as_dict(self) -> dict:
        out = {"theorem": self.theorem, "q": list(self.q), "Theta_K": [list(r) for r in self.Theta_K],
               "beta": [list(r) for r in self.beta], "Theta_V": [list(r) for r in self.Theta_V],
               "b": list(self.b)}
        if self.u is not None:
            out["u"] = list(self.u)
        return out


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
    _require_exact(mhmm)
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
    return tuple(m for m in range(len(mu)) if mu[m] != 0)


def _value_parameters(mhmm: MemoryHMM, dec: SpanDecomposition, S_star, mu) -> tuple[np.ndarray, np.ndarray]:
    """``Theta_V`` and ``b`` of Lemma C.4 / C.13."""
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


# ---------------------------------------------------------------- the attention head itself

def beta_row(beta: np.ndarray, i: int) -> np.ndarray:
    """Position embedding of 0-based position ``i`` (rows past the end reuse the last row)."""
    return beta[min(i, len(beta) - 1)]


@dataclass
class AttentionResult:
    output: object              # Attn(...)
    attended: tuple[int, ...]   # 0-based positions averaged over (the argmax set)
    scores: list
    values: list


def attention(witness: AttentionWitness, G: Sequence[Sequence], value_embeddings: Sequence[Sequence]
              ) -> AttentionResult:
    """``Attn = (1/|I|) sum_{i in I} V(G_i, v_i)`` with ``I`` the set of all maximizers of
    ``q . (Theta_K G_i + beta_i)`` (eq. 4.1-4.2), exact ties kept; ``V(a, v) = b . ((Theta_V a)
    ⊙ v)``. ``value_embeddings[i]`` is ``e(x_i)`` (or ``phi`` of the lifted prompt input).
    Exact when every input is a Fraction.

    >>> w = AttentionWitness(q=np.array([1, 0]), Theta_K=np.array([[1, 0], [0, 0]]),
    ...                      beta=np.array([[0, 0]]), Theta_V=np.array([[1, 0]]), b=np.array([2]))
    >>> r = attention(w, [[Fraction(1, 2), Fraction(1, 2)], [1, 0], [1, 0]], [[1], [3], [-1]])
    >>> r.attended, r.output
    ((1, 2), Fraction(2, 1))
    """
    scores, values = [], []
    for i, (g, v) in enumerate(zip(G, value_embeddings)):
        g = np.asarray(g, dtype=object)
        scores.append(witness.q.dot(witness.Theta_K.dot(g) + beta_row(witness.beta, i)))
        values.append(witness.b.dot(witness.Theta_V.dot(g) * np.asarray(v, dtype=object)))
    top = max(scores)
    attended = tuple(i for i, s in enumerate(scores) if s == top)
    total = sum((values[i] for i in attended), _ZERO)
    output = Fraction(total) / len(attended) if isinstance(total, (int, Fraction)) else total / len(attended)
    return AttentionResult(output, attended, scores, values)


def softmax_attention(witness: AttentionWitness, G: Sequence[Sequence], value_embeddings: Sequence[Sequence],
                      *, query_scale: float) -> float:
    """The softmax head with the query scaled by ``query_scale`` (float64; temperature
    ``1 / query_scale``): ``sum_i softmax(query_scale * score)_i V_i``. As ``query_scale``
    grows it tends to :func:`attention`'s argmax average (paper, below eq. 4.2)."""
    q = np.asarray(witness.q, dtype=float) * query_scale
    K = np.asarray(witness.Theta_K, dtype=float)
    V = np.asarray(witness.Theta_V, dtype=float)
    b = np.asarray(witness.b, dtype=float)
    beta = np.asarray(witness.beta, dtype=float)
    scores, values = [], []
    for i, (g, v) in enumerate(zip(G, value_embeddings)):
        g = np.asarray(g, dtype=float)
        scores.append(q @ (K @ g + beta[min(i, len(beta) - 1)]))
        values.append(b @ ((V @ g) * np.asarray(v, dtype=float)))
    s = np.array(scores)
    w = np.exp(s - s.max())
    return float((w / w.sum()) @ np.array(values))
