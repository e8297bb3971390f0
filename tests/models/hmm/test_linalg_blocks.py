"""Ranks, left inverses and null vectors block by block (``column_blocks``), with a second,
random prime: a matrix built singular modulo 2^61 - 1 but not over Q (the issue-38 cliff's core
block) is decided without an exact rank of the whole matrix, and every answer equals sympy's."""

from fractions import Fraction as F

import numpy as np
import sympy

from headprompt.models.hmm import linalg
from headprompt.models.hmm.linalg import PRIME, full_column_rank_mod_p, left_inverse, nullspace_vector, rank
from tests.oracle import sympy_rank

P = PRIME


def _cliff(n: int) -> np.ndarray:
    """``W``: the core ``M / p`` (``det M = p (p - 3)^2``, so singular mod p only) and the identity."""
    W = np.full((n, n), F(0), dtype=object)
    for i in range(3):
        for j in range(3):
            W[i, j] = F(P - 2 if i == j else 1, P)
    for h in range(3, n):
        W[h, h] = F(1)
    return W


def _columns(W):
    return [list(W[:, c]) for c in range(W.shape[1])]


def test_the_core_is_singular_mod_p_but_not_over_q():
    core = [[P - 2 if i == j else 1 for i in range(3)] for j in range(3)]
    assert not full_column_rank_mod_p(core, 3)
    assert sympy_rank(core) == 3


def test_rank_left_inverse_and_null_vector_match_sympy():
    W = _cliff(7)
    W[6, 5] = F(1, 3)                           # join two padding columns into one block
    assert rank(W) == sympy_rank(_columns(W)) == 7
    L = left_inverse(W)
    expected = sympy.Matrix(W.tolist()).pinv()
    assert [[F(str(v)) for v in row] for row in expected.tolist()] == L.tolist()
    assert nullspace_vector(W) is None


def test_a_dependent_block_gives_a_kernel_vector_and_a_refusal():
    W = _cliff(6)
    W[:, 5] = W[:, 4] * 2                       # columns 4 and 5 dependent: one block of two columns
    W[5, 5] = F(0)
    assert rank(W) == sympy_rank(_columns(W)) == 5
    v = nullspace_vector(W)
    assert any(x != 0 for x in v)
    assert all(sum(W[r, c] * v[c] for c in range(6)) == 0 for r in range(6))
    try:
        left_inverse(W)
    except ValueError as exc:
        assert "dependent" in str(exc)
    else:
        raise AssertionError("left_inverse accepted dependent columns")


def test_zero_column_and_wide_blocks():
    W = np.array([[F(1), F(0), F(2)], [F(0), F(0), F(0)]], dtype=object)
    assert rank(W) == sympy_rank(_columns(W)) == 1
    v = nullspace_vector(W)
    assert all(sum(W[r, c] * v[c] for c in range(3)) == 0 for r in range(2)) and any(x != 0 for x in v)
    wide = np.array([[F(1), F(2), F(3)], [F(4), F(5), F(7)]], dtype=object)
    assert rank(wide) == sympy_rank(_columns(wide)) == 2


def test_the_second_prime_is_a_prime_other_than_the_first():
    q = linalg.second_prime()
    assert q != P and sympy.isprime(q) and q.bit_length() == 62
