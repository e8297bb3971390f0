"""constructions.relaxed.covering_set: the prompt set B of Theorem 3.6's recipe when
Assumption 3.5 fails. Against a brute-force smallest cover written here on small models, and
on a 40-state model whose smallest cover is 20 states (an exhaustive search would try about
1e11 sets) it must return a cover quickly."""

import itertools
import time

import numpy as np
from hypothesis import given, settings, strategies as st

from headprompt.constructions.relaxed import covering_set
from headprompt.models.hmm.values import HMM


def _hmm(A, mu):
    n = len(A)
    W = np.eye(n, dtype=int).tolist()
    return HMM.create(A, W, [f"1/{n}"] * n, mu, exact=True)


def _column_stochastic(pattern):
    """A from a 0/1 support pattern (columns = current state), each column uniform on its support."""
    n = len(pattern)
    cols = [[i for i in range(n) if pattern[i][j]] or [j] for j in range(n)]
    return [[f"1/{len(cols[j])}" if i in cols[j] else 0 for j in range(n)] for i in range(n)]


def _brute_smallest(A, target):
    n = len(A)
    for k in range(1, n + 1):
        for B in itertools.combinations(range(n), k):
            if all(any(A[g][h] != 0 for h in B) for g in target):
                return B
    return tuple(range(n))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=n, max_size=n),
    st.lists(st.sampled_from([0, 1, -1]), min_size=n, max_size=n))))
def test_small_models_get_the_lexicographically_first_smallest_cover(case):
    pattern, mu = case
    A = _column_stochastic(pattern)
    target = [h for h in range(len(A)) if mu[h] != 0]
    got = covering_set(_hmm(A, mu))
    assert got == (() if not target else _brute_smallest(A, target))


def test_a_large_cover_is_found_greedily_and_covers():
    # state 2i and 2i+1 are reached only from state 2i: the smallest cover is the 20 even states
    n = 40
    pattern = [[1 if (g // 2) * 2 == h else 0 for h in range(n)] for g in range(n)]
    A = _column_stochastic(pattern)
    t0 = time.perf_counter()
    B = covering_set(_hmm(A, [1, -1] * (n // 2)))
    assert time.perf_counter() - t0 < 30
    assert all(any(A[g][h] != 0 for h in B) for g in range(n))
    assert B == tuple(range(0, n, 2))
