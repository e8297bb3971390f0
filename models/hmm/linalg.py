"""Exact linear algebra over the rationals (python-flint ``fmpq_mat``) on Fraction arrays.

The one place the package computes ranks, left inverses, null vectors, pivots and exact
solves; ``models``, ``constructions`` and ``verify`` all call these.

Raises ``ValueError`` subclasses from :mod:`.exceptions` (InputError) on dependent columns.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ..exceptions import InputError

__all__ = ["to_fmpq_mat", "from_fmpq_mat", "rank", "left_inverse", "nullspace_vector", "solve",
           "pivot_columns", "ColumnIndependence", "PRIME", "full_column_rank_mod_p", "integer_columns_independent",
           "column_blocks", "second_prime"]

PRIME = 2**61 - 1
"""A prime (the Mersenne prime ``2^61 - 1``) for ranks modulo ``p``."""


def full_column_rank_mod_p(columns: Sequence[Sequence[int]], rows: int, p: int = PRIME) -> bool:
    """Whether the integer matrix with the given columns (each ``rows`` integers) has full column
    rank modulo the prime ``p``. True is a proof of full column rank over Q: some ``k x k``
    minor is nonzero mod ``p``, hence a nonzero integer. False proves nothing over Q.

    >>> full_column_rank_mod_p([[1, 1], [2, 2]], 2), full_column_rank_mod_p([[1, 0], [3, 1]], 2)
    (False, True)
    """
    k = len(columns)
    if k == 0:
        return True
    if k > rows:
        return False
    flat = [int(v) % p for r in range(rows) for v in (col[r] for col in columns)]
    return flint.nmod_mat(rows, k, flat, p).rank() == k


def integer_columns_independent(columns: Sequence[Sequence[int]], rows: int) -> bool:
    """Whether integer columns are linearly independent over Q, exactly: the rank modulo
    :data:`PRIME` first (a proof when full), else the exact integer rank (``fmpz_mat``)."""
    if full_column_rank_mod_p(columns, rows):
        return True
    k = len(columns)
    if k > rows:
        return False
    return flint.fmpz_mat([[int(col[r]) for col in columns] for r in range(rows)]).rank() == k


def column_blocks(row_lists: Sequence[Sequence[int]]) -> list[tuple[list[int], list[int]]]:
    """The blocks of a sparse matrix given the row indices of each column's nonzeros: groups of
    columns connected through shared rows, as ``(columns, rows)`` pairs (sorted). Columns of
    different blocks have disjoint supports, so a set of columns is independent exactly when
    each block's columns are (the matrix is block-diagonal up to permutations).

    >>> column_blocks([[0, 1], [5], [1, 2]])
    [([0, 2], [0, 1, 2]), ([1], [5])]
    """
    parent = list(range(len(row_lists)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    owner: dict[int, int] = {}
    for c, rows in enumerate(row_lists):
        for r in rows:
            r = int(r)
            if r in owner:
                ra, rb = find(owner[r]), find(c)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
            else:
                owner[r] = c
    groups: dict[int, list[int]] = {}
    for c in range(len(row_lists)):
        groups.setdefault(find(c), []).append(c)
    out = []
    for cols in groups.values():
        rows = sorted({int(r) for c in cols for r in row_lists[c]})
        out.append((sorted(cols), rows))
    return sorted(out)


def to_fmpq_mat(matrix) -> flint.fmpq_mat:
    """A Fraction (or int) 2-D array as an ``fmpq_mat``."""
    arr = np.asarray(matrix, dtype=object)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    rows, cols = arr.shape
    return flint.fmpq_mat(rows, cols, [flint.fmpq(int(Fraction(v).numerator), int(Fraction(v).denominator))
                                       for v in arr.flat])


def from_fmpq_mat(mat: flint.fmpq_mat) -> np.ndarray:
    """An ``fmpq_mat`` as a Fraction object array."""
    out = np.empty((mat.nrows(), mat.ncols()), dtype=object)
    for i in range(mat.nrows()):
        for j in range(mat.ncols()):
            v = mat[i, j]
            out[i, j] = Fraction(int(v.p), int(v.q))
    return out


def rank(matrix) -> int:
    """Exact rank of a rational matrix (0 for an empty one), block by block
    (:func:`column_blocks`: columns of different blocks have disjoint supports, so the rank is
    the sum of the blocks' ranks); a block whose integer-scaled columns have full rank modulo
    :data:`PRIME` or a second, random prime has it over Q (a proof), else its rank is computed
    over Q (``fmpq_mat``).

    >>> rank([[1, 2], [2, 4]])
    1
    """
    arr = np.asarray(matrix, dtype=object)
    if arr.size == 0:
        return 0
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    return sum(_block_rank(arr[np.ix_(rows, cols)]) for cols, rows in _blocks(arr) if rows)


def _blocks(arr: np.ndarray) -> list[tuple[list[int], list[int]]]:
    """The :func:`column_blocks` of a 2-D object array (a zero column is a block of no rows)."""
    nonzero = arr != 0
    return column_blocks([np.flatnonzero(nonzero[:, c]).tolist() for c in range(arr.shape[1])])


def _scaled_columns(block: np.ndarray) -> list[list[int]]:
    """Each column of a rational block times the lcm of its denominators (integers; the same
    rank, the same independent column sets)."""
    import math

    out = []
    for c in range(block.shape[1]):
        col = [Fraction(v) for v in block[:, c]]
        scale = math.lcm(*(v.denominator for v in col))
        out.append([v.numerator * (scale // v.denominator) for v in col])
    return out


def second_prime(bits: int = 62) -> int:
    """A random prime of ``bits`` bits (other than :data:`PRIME`), drawn afresh each call: a
    matrix built to be singular modulo one fixed prime (every full minor a multiple of it) is
    full rank modulo a random one unless the prime divides those minors, which a fixed
    adversary cannot arrange."""
    import random

    rng = random.SystemRandom()
    while True:
        q = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        if q != PRIME and flint.fmpz(q).is_prime():
            return q


def _block_rank(block: np.ndarray) -> int:
    """The exact rank of one block: full modulo a prime proves it full, else over Q."""
    rows, k = block.shape
    full = min(rows, k)
    columns = _scaled_columns(block)
    if rows >= k:
        if full_column_rank_mod_p(columns, rows) or full_column_rank_mod_p(columns, rows, second_prime()):
            return k
    else:                                           # rank of the transpose: full row rank
        transposed = [[columns[c][r] for c in range(k)] for r in range(rows)]
        if full_column_rank_mod_p(transposed, k) or full_column_rank_mod_p(transposed, k, second_prime()):
            return rows
    return to_fmpq_mat(block).rank()


def left_inverse(matrix) -> np.ndarray:
    """The exact left inverse ``(M^T M)^{-1} M^T`` of a matrix with independent columns
    (the Moore-Penrose pseudo-inverse, so ``M^+ M = I``), block by block: columns of different
    :func:`column_blocks` have disjoint supports, so ``M^T M`` is block diagonal and each
    block's rows of ``M^+`` are its own pseudo-inverse on its rows (zero elsewhere).

    >>> left_inverse([[1, 0], [0, 2], [0, 0]]).tolist()
    [[Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 2), Fraction(0, 1)]]

    Raises:
        InputError: when the columns are dependent.
    """
    arr = np.asarray(matrix, dtype=object)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    n_rows, n_cols = arr.shape
    blocks = _blocks(arr)
    r = sum(_block_rank(arr[np.ix_(rows, cols)]) for cols, rows in blocks if rows)
    if r < n_cols:
        raise InputError(f"left_inverse: the {n_cols} columns are linearly dependent (rank {r})")
    out = np.full((n_cols, n_rows), Fraction(0), dtype=object)
    for cols, rows in blocks:
        block = arr[np.ix_(rows, cols)]
        if len(cols) == 1:                          # v^T / (v . v)
            v = [Fraction(x) for x in block[:, 0]]
            norm = sum(x * x for x in v)
            out[cols[0], rows] = [x / norm for x in v]
            continue
        M = to_fmpq_mat(block)
        Mt = M.transpose()
        out[np.ix_(cols, rows)] = from_fmpq_mat((Mt * M).inv() * Mt)
    return out


def nullspace_vector(matrix) -> np.ndarray | None:
    """A nonzero exact vector ``v`` with ``M v = 0``, or None when the columns are independent:
    found in the first block (:func:`column_blocks`) whose columns are dependent, zero on the
    other columns (a zero column gives the unit vector on it)."""
    arr = np.asarray(matrix, dtype=object)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    for cols, rows in _blocks(arr):
        v = np.full(arr.shape[1], Fraction(0), dtype=object)
        if not rows:
            v[cols[0]] = Fraction(1)
            return v
        block = arr[np.ix_(rows, cols)]
        if _block_rank(block) == len(cols):
            continue
        v[cols] = _kernel_vector(to_fmpq_mat(block))
        return v
    return None


def _kernel_vector(M: flint.fmpq_mat) -> list[Fraction]:
    """A nonzero kernel vector of a matrix with dependent columns: the first free column set to
    1, pivots back-substituted from the reduced row echelon form."""
    R, r = M.rref()
    pivots = _pivots(R, r)
    free = next(c for c in range(M.ncols()) if c not in pivots)
    v = [Fraction(0)] * M.ncols()
    v[free] = Fraction(1)
    for i, p in enumerate(pivots):
        val = -R[i, free]
        v[p] = Fraction(int(val.p), int(val.q))
    return v


def _pivots(R: flint.fmpq_mat, r: int) -> list[int]:
    pivots, row = [], 0
    for col in range(R.ncols()):
        if row < r and R[row, col] != 0:
            pivots.append(col)
            row += 1
    return pivots


def pivot_columns(matrix) -> list[int]:
    """Indices of a maximal independent set of columns (the pivots of the exact RREF), in order.

    >>> pivot_columns(np.array([[1, 2, 0], [1, 2, 1]], dtype=object))
    [0, 2]
    """
    arr = np.asarray(matrix, dtype=object)
    if arr.size == 0:
        return []
    return _pivots(*to_fmpq_mat(arr).rref())


def solve(matrix, rhs: Sequence) -> np.ndarray:
    """The unique exact solution of a square nonsingular system ``M x = rhs``."""
    M = to_fmpq_mat(matrix)
    b = to_fmpq_mat(np.asarray(rhs, dtype=object).reshape(-1, 1))
    return from_fmpq_mat(M.solve(b))[:, 0]


class ColumnIndependence:
    """Exact answers to "are these columns of ``M`` linearly independent?" for many subsets.

    Each column is scaled by the lcm of its denominators (which keeps independence) into
    integers, reduced once modulo the prime ``p = 2^61 - 1``. A subset whose residues have full
    column rank mod ``p`` has a ``k x k`` minor that is nonzero mod ``p``, hence a nonzero
    integer: it is independent over Q, proven. Only when the residues are dependent (the
    columns are, or ``p`` divides every full minor) does the check fall back to :func:`rank`
    over Q, so every answer is exact.

    >>> ci = ColumnIndependence([[1, 2, 0], [1, 2, 1]])
    >>> ci.independent([0, 2]), ci.independent([0, 1])
    (True, False)
    """

    PRIME = 2**61 - 1

    def __init__(self, matrix):
        import math

        self.matrix = np.asarray(matrix, dtype=object)
        rows, cols = self.matrix.shape
        self.rows = rows
        self.residues = np.empty((rows, cols), dtype=np.uint64)    # the scaled column mod p
        for j in range(cols):
            column = [Fraction(v) for v in self.matrix[:, j]]
            scale = math.lcm(*(v.denominator for v in column)) if column else 1
            self.residues[:, j] = [(v.numerator * (scale // v.denominator)) % self.PRIME for v in column]
        self.exact_fallbacks = 0

    def independent(self, columns) -> bool:
        """Whether ``M[:, columns]`` has independent columns (exactly; an empty set has)."""
        cols = sorted(int(c) for c in columns)
        k = len(cols)
        if k == 0:
            return True
        if k > self.rows:
            return False
        if flint.nmod_mat(self.rows, k, self.residues[:, cols].ravel().tolist(), self.PRIME).rank() == k:
            return True
        self.exact_fallbacks += 1
        return rank(self.matrix[:, cols]) == k

    def rank(self) -> int:
        """The exact rank of ``M``: the rank mod ``p`` when it is full (a proof), else over Q."""
        rows, cols = self.residues.shape
        if rows == 0 or cols == 0:
            return 0
        r = flint.nmod_mat(rows, cols, self.residues.ravel().tolist(), self.PRIME).rank()
        return r if r == min(rows, cols) else rank(self.matrix)
