"""The compiled one-read kernel of a forward-backward step (models/inference/streamed.py)
against numpy's BLAS products and, inside whole smoothings, against hmmlearn."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.inference import floats as iff
from headprompt.models.inference import forward_backward as fb
from tests.oracle import hmmlearn_marginals
from headprompt.models.inference import streamed

pytest.importorskip("numba")


@settings(max_examples=40, deadline=None)
@given(H=st.integers(1, 23), n=st.integers(1, 13), seed=st.integers(0, 2**32 - 1))
def test_both_products_match_blas(H, n, seed):
    """``p = A a`` and ``b = A^T y`` for any number of states (also not a multiple of the 4
    rows the kernel takes at a time) and sequences (padded to groups of 4), with zeros in A."""
    rng = np.random.default_rng(seed)
    A = rng.random((H, H)) * (rng.random((H, H)) < 0.7)
    a, y = rng.random((H, n)), rng.random((H, n))
    p, b = np.full((H, n), np.nan), np.full((H, n), np.nan)
    A.setflags(write=False)                            # model arrays are read-only
    streamed.streamed_pair(A, p, y)(a, b)
    np.testing.assert_allclose(p, A @ a, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(b, A.T @ y, rtol=1e-13, atol=1e-300)


def test_pair_overwrites_its_outputs():
    """A second call with other inputs leaves nothing of the first (b is zeroed, not added to)."""
    rng = np.random.default_rng(3)
    A = rng.random((9, 9))
    p, y, b = np.empty((9, 2)), rng.random((9, 2)), np.empty((9, 2))
    pair = streamed.streamed_pair(A, p, y)
    pair(rng.random((9, 2)), b)
    a2 = rng.random((9, 2))
    y[:] = rng.random((9, 2))
    pair(a2, b)
    np.testing.assert_allclose(p, A @ a2, rtol=1e-13)
    np.testing.assert_allclose(b, A.T @ y, rtol=1e-13)


@pytest.mark.parametrize("n", [1, 3, 4, 6, 16])
@pytest.mark.parametrize("length", [1, 2, 17])
def test_smoothing_through_the_kernel_matches_hmmlearn(monkeypatch, n, length):
    """Whole smoothings with every step's products in the kernel (thresholds lowered so that a
    small model takes the path), against hmmlearn's float64 forward-backward."""
    monkeypatch.setattr(streamed, "STREAMED_MIN_STATES", 0)
    monkeypatch.setattr(streamed, "WIDE_MIN_STATES", 0)
    hmm = appendix_d_hmm(30, 6, rng=np.random.default_rng(length))
    tokens, _ = sample(hmm, n, length, rng=np.random.default_rng(n))
    assert streamed.use_streamed(30, n)
    calls = []
    real = streamed.streamed_pair
    monkeypatch.setattr(streamed, "streamed_pair", lambda *a: calls.append(1) or real(*a))
    np.testing.assert_allclose(iff.posterior_marginals(hmm, tokens), hmmlearn_marginals(hmm, tokens), atol=1e-12)
    assert calls or length == 1                       # one token: no step pairs, no kernel


def test_default_thresholds_and_the_fallback(monkeypatch):
    """The measured rule: one group of 4 sequences from 1,000 states, up to 4 groups from 4,096;
    never without numba (the panel GEMMs then run, and still match hmmlearn)."""
    assert streamed.use_streamed(1000, 4) and not streamed.use_streamed(999, 4)
    assert not streamed.use_streamed(2048, 5) and streamed.use_streamed(4096, 16)
    assert not streamed.use_streamed(4096, 17)
    monkeypatch.setattr(streamed, "available", lambda: False)
    assert not streamed.use_streamed(8192, 1)
    hmm = appendix_d_hmm(1100, 20, rng=np.random.default_rng(11))
    tokens, _ = sample(hmm, 2, 9, rng=np.random.default_rng(12))
    monkeypatch.setattr(streamed, "streamed_pair", lambda *a: pytest.fail("kernel used without numba"))
    np.testing.assert_allclose(iff.posterior_marginals(hmm, tokens), hmmlearn_marginals(hmm, tokens), atol=1e-12)
    assert fb.panel_rows(1100) < 1100
