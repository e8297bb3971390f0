"""The exact direct-sum decomposition behind the memory theorems (Claims C.3 and C.10).

Conventions (SPEC section 1): hidden state ``h = (j, s)`` is flattened as ``h = j |S| + s``;
emission columns ``W_(m, h) = W[:, m, h]`` are indexed ``m |H| + h`` (``m`` major) in ``W``
read as ``|X| x (|M||H|)``.

For a set of recoverable states ``H* = {j*} x S*`` and a set ``M'`` of memory values
(``M' = M`` for Theorem 4.3, ``M' = M* = supp(mu)`` for 4.6/C.6), let ``U_h`` hold the columns
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
extension (the Moore-Penrose one); the paper leaves it arbitrary. ``Theta^(1)`` and
``Theta^(2,s)`` of Claims C.3/C.10 are read off these projections.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..models.exceptions import ConstructionError
from ..models.hmm.values import MemoryHMM
from ..models.hmm.linalg import left_inverse, pivot_columns, rank

__all__ = ["SpanDecomposition", "span_decomposition", "relevant_columns", "theta_one", "theta_two",
           "column_index", "require_exact"]

_ZERO, _ONE = Fraction(0), Fraction(1)


def column_index(mhmm: MemoryHMM, m: int, h: int) -> int:
    """Index of ``W_(m, h)`` in ``W`` read as ``|X| x (|M||H|)`` (``m`` major)."""
    return m * mhmm.num_states + h


def require_exact(mhmm: MemoryHMM) -> None:
    """Constructions are exact.

    Raises:
        ConstructionError: for a float model.
    """
    if not mhmm.exact:
        raise ConstructionError("constructions are exact; convert the memory HMM explicitly first "
                                "(headprompt.models.hmm.rationalize.rationalize)")


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


def _zeros(rows: int, cols: int) -> np.ndarray:
    return np.full((rows, cols), _ZERO, dtype=object)


def span_decomposition(mhmm: MemoryHMM, S_star: Sequence[int], *,
                       memory_subset: Sequence[int] | None = None) -> SpanDecomposition:
    """The exact direct-sum decomposition for ``H* = {j*} x S*`` (Claim C.3 / C.10).

    >>> from headprompt.models.hmm.values import MemoryHMM
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
    require_exact(mhmm)
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
