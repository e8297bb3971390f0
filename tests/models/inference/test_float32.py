"""``posterior_marginals(..., dtype="float32")``: the smoothed marginals in float32 (as dynamax
runs by default), against the exact posteriors in Fractions (``exact.posterior_hidden``, itself
tested against path sums) and the float64 kernel; an unknown dtype is refused."""

from fractions import Fraction as F

import numpy as np
import pytest

from headprompt.models.exceptions import InputError
from headprompt.models.hmm.values import HMM
from headprompt.models.inference import exact as ie
from headprompt.models.inference import floats as iff
from tests.oracle import path_posterior


def _random_hmm(n: int, x: int, seed: int, *, zeros: bool = False) -> HMM:
    rng = np.random.default_rng(seed)
    A = rng.integers(0 if zeros else 1, 9, size=(n, n)) + np.eye(n, dtype=np.int64)
    W = rng.integers(1, 9, size=(x, n))
    pi0 = rng.integers(1, 9, size=n)
    col = lambda M: [[F(int(M[i, j]), int(M[:, j].sum())) for j in range(M.shape[1])] for i in range(M.shape[0])]
    return HMM.create(col(A), col(W), [F(int(v), int(pi0.sum())) for v in pi0])


@pytest.mark.parametrize("n,x,t,seed", [(3, 2, 4, 0), (5, 3, 6, 1), (12, 4, 40, 2), (40, 7, 129, 3)])
def test_float32_marginals_match_the_exact_ones(n, x, t, seed):
    hmm = _random_hmm(n, x, seed, zeros=seed % 2 == 1)
    rng = np.random.default_rng(seed + 10)
    tokens = rng.integers(0, x, size=(3, t))
    got = iff.posterior_marginals(hmm, tokens, dtype="float32")
    assert got.dtype == np.float32 and got.shape == (3, t, n)
    ref64 = iff.posterior_marginals(hmm, tokens)
    for k in range(3):
        for i in (1, t // 2, t):
            exact = np.array([float(v) for v in ie.posterior_hidden(hmm, tokens[k].tolist(), i)])
            # float32: about 2^-24 per operation, compounded over the ~2t steps of both passes
            assert np.abs(got[k, i - 1] - exact).max() <= 4 * t * n * 2.0 ** -24
            assert np.abs(ref64[k, i - 1] - exact).max() <= 1e-12
    if n <= 5:                                         # path sums, independent of the kernels
        post = path_posterior(hmm, tokens[0].tolist(), 2)
        assert np.abs(got[0, 1] - np.array([float(v) for v in post])).max() <= 1e-5


def test_impossible_sequences_stay_zero_in_float32():
    hmm = HMM.create([[1, 0], [0, 1]], [[1, 0], [0, 1]], [F(1, 2), F(1, 2)])   # token z only from state z
    got = iff.posterior_marginals(hmm, np.array([[0, 1], [0, 0]]), dtype="float32")
    assert not got[0].any() and np.array_equal(got[1], [[1, 0], [1, 0]])


def test_an_unknown_dtype_is_refused():
    hmm = _random_hmm(3, 2, 0)
    with pytest.raises(InputError, match="float16"):
        iff.posterior_marginals(hmm, np.array([[0, 1]]), dtype="float16")
