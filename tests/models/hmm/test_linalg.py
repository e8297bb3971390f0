"""Exact column independence (models.linalg.ColumnIndependence) against sympy's rank."""

from fractions import Fraction

import numpy as np
import pytest

from headprompt.models.hmm import linalg
from headprompt.models.hmm.linalg import ColumnIndependence

from tests import oracle


def _random_matrix(rng, rows, cols):
    W = np.empty((rows, cols), dtype=object)
    for r in range(rows):
        for c in range(cols):
            W[r, c] = Fraction(int(rng.integers(0, 7)), int(rng.integers(1, 9)))
    # dependent columns on purpose: a sum, a multiple and a zero column
    W[:, 3] = W[:, 0] + W[:, 1]
    W[:, 4] = Fraction(5, 3) * W[:, 2]
    W[:, 5] = Fraction(0)
    return W


@pytest.mark.parametrize("seed", range(4))
def test_independence_matches_sympy_on_random_subsets(seed):
    rng = np.random.default_rng(seed)
    W = _random_matrix(rng, 5, 9)
    ci = ColumnIndependence(W)
    assert ci.rank() == oracle.sympy_rank([list(W[:, c]) for c in range(9)])
    for _ in range(40):
        cols = sorted(set(int(c) for c in rng.integers(0, 9, size=int(rng.integers(0, 7)))))
        truth = oracle.sympy_rank([list(W[:, c]) for c in cols]) == len(cols)
        assert ci.independent(cols) == truth, cols


def test_a_prime_that_hides_independence_falls_back_to_exact(monkeypatch):
    # det [[1, 1], [1, 4]] = 3: independent over Q, dependent mod 3
    monkeypatch.setattr(ColumnIndependence, "PRIME", 3)
    ci = ColumnIndependence([[1, 1], [1, 4]])
    assert ci.independent([0, 1]) and ci.exact_fallbacks == 1
    assert ci.rank() == 2
    dependent = ColumnIndependence([[1, 2], [Fraction(1, 2), 1]])
    assert not dependent.independent([0, 1])


def test_more_columns_than_rows_are_dependent_and_empty_sets_independent():
    ci = ColumnIndependence([[1, 0, 1], [0, 1, 1]])
    assert not ci.independent([0, 1, 2]) and ci.independent([]) and ci.independent([2])
    assert linalg.rank([[1, 0, 1], [0, 1, 1]]) == ci.rank() == 2
