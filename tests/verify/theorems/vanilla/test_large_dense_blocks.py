"""Dense blocks of ``W`` on the large-model path (a fitted model's ``W`` is one block of every
column): the exact head ``b`` on a block, the exact sparse products that carry integers of
thousands of digits, the size limit, and the fast printing of such numbers. Oracles written
here: plain ``Fraction`` arithmetic over dense Python lists, sympy's pseudo-inverse, and
CPython's own ``int -> str``."""

import sys
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st
from scipy import sparse

from headprompt.models.exceptions import LimitError
from headprompt.models.hmm import large as large_hmm
from headprompt.models.hmm.large import LargeHMM, exact_matvec, exact_rmatvec
from headprompt.models.hmm.rational import format_fraction
from headprompt.verify.checks.vanilla import large


def dense_model(n: int, X: int, seed: int) -> LargeHMM:
    """Every ``W[x, h] > 0`` (one block of all ``n`` columns) over per-column denominators;
    ``A`` a cycle with self-loops."""
    rng = np.random.default_rng(seed)
    Wn = rng.integers(1, 50, size=(X, n)).astype(np.int64)
    A = sparse.csc_array(sparse.coo_array(([1] * n + [1] * n, (list(range(n)) + [(h + 1) % n for h in range(n)],
                                                               list(range(n)) * 2)), shape=(n, n)))
    mu = rng.choice([-1, 0, 1], size=n)
    return LargeHMM.create(A, np.full(n, 2), sparse.csc_array(Wn), Wn.sum(0), np.ones(n, dtype=np.int64), n, mu, 1)


@pytest.mark.parametrize("n, X, seed", [(6, 9, 0), (12, 12, 1), (25, 40, 2)])
def test_head_on_a_dense_block_is_the_exact_pseudo_inverse_solution(n, X, seed):
    model = dense_model(n, X, seed)
    rng = np.random.default_rng(seed + 10)
    states = sorted(rng.choice(n, size=n - 1, replace=False).tolist())
    coeff = {h: Fraction(int(rng.integers(-9, 10)), int(rng.integers(1, 7))) for h in states}
    b, groups = large.head_for(model, states, coeff)
    Wd = model.W.toarray()
    cols = [[Fraction(int(Wd[x, h]), int(model.dW[h])) for x in range(X)] for h in states]
    for h, col in zip(states, cols):                               # W_S^T b = coeff, exactly
        assert sum(c * bx for c, bx in zip(col, b)) == coeff.get(h, 0)
    M = sympy.Matrix([[sympy.Rational(c.numerator, c.denominator) for c in col] for col in cols])   # W_S^T
    rhs = sympy.Matrix([sympy.Rational(coeff[h].numerator, coeff[h].denominator) for h in states])
    expected = M.pinv() * rhs                                      # the minimum-norm solution
    assert [Fraction(int(v.p), int(v.q)) for v in expected] == b
    for rows, ints, d in groups:                                   # the groups hold b over one denominator
        assert all(Fraction(i, d) == b[r] for r, i in zip(rows, ints))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(1, 25), st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(0, 3000))
def test_exact_products_equal_dense_fraction_sums_at_any_chunk(m, n, seed, chunk, digits):
    rng = np.random.default_rng(seed)
    M = sparse.csc_array((rng.random((m, n)) < rng.random()) * rng.integers(1, 1000, (m, n)))
    den = rng.integers(1, 5, n) * 4
    x = np.array([int(v) * 10 ** int(rng.integers(0, digits + 1)) for v in rng.integers(-50, 50, n)], dtype=object)
    xr = np.array([int(v) * 10 ** int(rng.integers(0, digits + 1)) for v in rng.integers(-50, 50, m)], dtype=object)
    D = M.toarray().tolist()
    old = large_hmm._DOT_CHUNK
    large_hmm._DOT_CHUNK = chunk
    try:
        y, d = exact_matvec(M, den, x)
        yr, _ = exact_rmatvec(M, den, xr)
    finally:
        large_hmm._DOT_CHUNK = old
    for i in range(m):                                             # (M x)_i with M = num / den per column
        assert Fraction(int(y[i]), d) == sum(Fraction(D[i][j] * int(x[j]), int(den[j])) for j in range(n))
    for j in range(n):                                             # (M^T x)_j = y_j / den_j
        assert int(yr[j]) == sum(D[i][j] * int(xr[i]) for i in range(m))


def test_a_block_above_the_limit_is_refused_with_its_size(monkeypatch):
    model = dense_model(12, 14, 3)
    assert large.independent_states(model, range(12)) == (True, 1)
    monkeypatch.setattr(large, "MAX_BLOCK_COLUMNS", 11)
    with pytest.raises(LimitError, match="12 columns linked"):
        large.independent_states(model, range(12))


def test_big_fractions_print_as_cpython_prints_them():
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        for v in (Fraction(3 ** 20000 + 1, 2 ** 15001), Fraction(-(7 ** 9000)), Fraction(-5, 3 ** 5000), Fraction(2, 3)):
            assert format_fraction(v) == (str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}")
    finally:
        sys.set_int_max_str_digits(old)


def test_the_estimate_charges_a_dense_w_its_cubic_solve_and_says_so_when_it_refuses():
    from headprompt.verify.reports import scale

    sparse_w = scale.estimate(3000, 3000, 15000, 6000, 20, 8, all_columns=True, three_three=True)
    dense_w = scale.estimate(3000, 3000, 15000, 3000 * 3000, 20, 8, all_columns=True, three_three=True)
    assert sparse_w["solve_seconds"] == 0 and dense_w["solve_seconds"] == pytest.approx(3.6e-8 * 3000 ** 3, rel=1e-3)
    assert dense_w["seconds"] > scale.MAX_SECONDS > dense_w["assumption_seconds"]
    with pytest.raises(LimitError, match="W is dense"):
        scale._refuse_if_too_big(dense_w, "this run")
    scale._refuse_if_too_big(dense_w, "this run", key="assumption_seconds")       # the assumptions alone fit
