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

from .exceptions import InputError

__all__ = ["to_fmpq_mat", "from_fmpq_mat", "rank", "left_inverse", "nullspace_vector", "solve",
           "pivot_columns"]


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
    """Exact rank of a rational matrix (0 for an empty one).

    >>> rank([[1, 2], [2, 4]])
    1
    """
    arr = np.asarray(matrix, dtype=object)
    if arr.size == 0:
        return 0
    return to_fmpq_mat(arr).rank()


def left_inverse(matrix) -> np.ndarray:
    """The exact left inverse ``(M^T M)^{-1} M^T`` of a matrix with independent columns
    (the Moore-Penrose pseudo-inverse, so ``M^+ M = I``).

    >>> left_inverse([[1, 0], [0, 2], [0, 0]]).tolist()
    [[Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 2), Fraction(0, 1)]]

    Raises:
        InputError: when the columns are dependent.
    """
    M = to_fmpq_mat(matrix)
    if M.rank() < M.ncols():
        raise InputError(f"left_inverse: the {M.ncols()} columns are linearly dependent (rank {M.rank()})")
    Mt = M.transpose()
    return from_fmpq_mat((Mt * M).inv() * Mt)


def nullspace_vector(matrix) -> np.ndarray | None:
    """A nonzero exact vector ``v`` with ``M v = 0``, or None when the columns are independent."""
    M = to_fmpq_mat(matrix)
    if M.rank() == M.ncols():
        return None
    # the first free column set to 1, pivots back-substituted from the reduced row echelon form
    R, r = M.rref()
    pivots = _pivots(R, r)
    free = next(c for c in range(M.ncols()) if c not in pivots)
    v = [Fraction(0)] * M.ncols()
    v[free] = Fraction(1)
    for i, p in enumerate(pivots):
        val = -R[i, free]
        v[p] = Fraction(int(val.p), int(val.q))
    return np.array(v, dtype=object)


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
