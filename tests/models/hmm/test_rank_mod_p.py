"""The rank-modulo-p certificate never claims full column rank for a rank-deficient rational
matrix (sympy's exact rank is the oracle), and the block split keeps independence."""

import numpy as np
import sympy
from hypothesis import given, settings, strategies as st

from headprompt.models.hmm.linalg import (column_blocks, full_column_rank_mod_p,
                                          integer_columns_independent)


def _sympy_full(columns, rows):
    if not columns:
        return True
    return sympy.Matrix([[c[r] for c in columns] for r in range(rows)]).rank() == len(columns)


entries = st.integers(min_value=-(2 ** 70), max_value=2 ** 70)


@st.composite
def matrices(draw):
    rows = draw(st.integers(1, 6))
    k = draw(st.integers(0, 6))
    cols = [draw(st.lists(entries, min_size=rows, max_size=rows)) for _ in range(k)]
    if k >= 2 and draw(st.booleans()):                  # plant a dependence: a combination of others
        a, b = draw(st.integers(-5, 5)), draw(st.integers(-5, 5))
        i, j = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
        cols[draw(st.integers(0, k - 1))] = [a * x + b * y for x, y in zip(cols[i], cols[j])]
    if k >= 1 and draw(st.booleans()):                  # multiples of the prime itself
        cols[0] = [v * (2 ** 61 - 1) for v in cols[0]]
    return cols, rows


@settings(max_examples=300, deadline=None)
@given(matrices())
def test_full_rank_mod_p_implies_full_rank_over_q(case):
    cols, rows = case
    exact = _sympy_full(cols, rows)
    if full_column_rank_mod_p(cols, rows):
        assert exact                                     # the certificate is sound
    assert integer_columns_independent(cols, rows) == exact     # and the fallback makes it exact


def test_a_prime_multiple_is_not_mistaken_for_zero_over_q():
    p = 2 ** 61 - 1
    cols = [[p, 0], [0, 1]]                              # rank 2 over Q, rank 1 mod p
    assert not full_column_rank_mod_p(cols, 2)
    assert integer_columns_independent(cols, 2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=3, unique=True), min_size=1, max_size=8))
def test_blocks_have_disjoint_rows_and_cover_every_column(row_lists):
    blocks = column_blocks(row_lists)
    seen_cols = sorted(c for cols, _ in blocks for c in cols)
    assert seen_cols == list(range(len(row_lists)))
    all_rows = [set(rows) for _, rows in blocks]
    for i in range(len(all_rows)):
        for j in range(i + 1, len(all_rows)):
            assert not all_rows[i] & all_rows[j]
    for cols, rows in blocks:
        assert set(rows) == {r for c in cols for r in row_lists[c]}
    # independence of the whole equals independence per block (random integer values)
    rng = np.random.default_rng(len(row_lists))
    dense = [[0] * 10 for _ in row_lists]
    for c, rows in enumerate(row_lists):
        for r in rows:
            dense[c][r] = int(rng.integers(1, 5))
    whole = _sympy_full(dense, 10)
    per_block = all(_sympy_full([[dense[c][r] for r in rows] for c in cols], len(rows)) for cols, rows in blocks)
    assert whole == per_block
