"""The fused forward-backward kernel (posterior_marginals on a dense model) against exact
arithmetic and hmmlearn, in each of its configurations (GEMM backend, panels, gathering)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.generate.strategies import hmms, token_sequences
from headprompt.models.inference import exact as ie
from headprompt.models.inference import floats as iff
from headprompt.models.inference import forward_backward as fb
from tests.oracle import hmmlearn_marginals


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_marginals_match_exact_posteriors(data):
    """Every position of a batch (zeros in A and W: impossible sequences give zero rows, the
    paper's convention) against the exact engine's P[H_i | x], i = 1..T."""
    hmm = data.draw(hmms(num_states=st.integers(1, 5), num_tokens=st.integers(1, 3), sparsity=0.4))
    length = data.draw(st.integers(1, 7))
    seqs = data.draw(st.lists(token_sequences(hmm.num_tokens, min_length=length, max_length=length),
                              min_size=1, max_size=3))
    ours = iff.posterior_marginals(hmm, np.array(seqs))
    for r, seq in enumerate(seqs):
        exact = np.array([[float(v) for v in ie.posterior_hidden(hmm, seq, i)] for i in range(1, length + 1)])
        np.testing.assert_allclose(ours[r], exact, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("rows", [None, 7])                 # all of A, or panels (7 does not divide 30)
@pytest.mark.parametrize("gather_once", [True, False])
@pytest.mark.parametrize("length", [1, 2, 16, 41])          # the passes meet at a position (even) or not
def test_every_configuration_matches_hmmlearn(monkeypatch, backend, rows, gather_once, length):
    monkeypatch.setattr(fb, "gemm_backend", lambda H: backend)
    monkeypatch.setattr(fb, "panel_rows", lambda H: H if rows is None else rows)
    monkeypatch.setattr(fb, "GATHER_ONCE_MAX", 1 << 30 if gather_once else 0)
    hmm = appendix_d_hmm(30, 6, rng=np.random.default_rng(length))
    tokens, _ = sample(hmm, 3, length, rng=np.random.default_rng(length + 1))
    np.testing.assert_allclose(iff.posterior_marginals(hmm, tokens), hmmlearn_marginals(hmm, tokens), atol=1e-12)


def test_large_model_with_the_default_configuration_matches_hmmlearn():
    """1,100 states as shipped: the compiled one-read kernel when numba is installed (else
    torch's GEMM by panels of A; that fallback is tested in test_streamed.py)."""
    hmm = appendix_d_hmm(1100, 20, rng=np.random.default_rng(11))
    assert fb.gemm_backend(1100) == "torch" and fb.panel_rows(1100) < 1100
    tokens, _ = sample(hmm, 2, 9, rng=np.random.default_rng(12))
    np.testing.assert_allclose(iff.posterior_marginals(hmm, tokens), hmmlearn_marginals(hmm, tokens), atol=1e-12)


def test_rescaling_keeps_long_sequences_exact_in_ratio(monkeypatch):
    """T = 3,000: the messages would underflow without rescaling (which does happen); the
    marginals still match hmmlearn's (which normalises every step)."""
    hmm = appendix_d_hmm(12, 40, rng=np.random.default_rng(13))
    tokens, _ = sample(hmm, 2, 3000, rng=np.random.default_rng(14))
    calls = []
    rescale = fb._rescale
    monkeypatch.setattr(fb, "_rescale", lambda *a: calls.append(1) or rescale(*a))
    ours = iff.posterior_marginals(hmm, tokens)
    assert len(calls) >= 2 and np.all(np.isfinite(ours))     # each pass fell below 2^-256 at least once
    np.testing.assert_allclose(ours, hmmlearn_marginals(hmm, tokens), atol=1e-10)


def test_sparse_model_keeps_the_two_pass_kernel():
    """A transition matrix with at most 5% nonzeros (200 states) runs the sparse two-pass kernel,
    not the fused dense one; its marginals match hmmlearn's as well."""
    from headprompt.models.generate.generators import sparse_transitions
    from headprompt.models.hmm.values import HMM

    rng = np.random.default_rng(15)
    base = appendix_d_hmm(200, 8, rng=rng)
    hmm = HMM.create(sparse_transitions(200, 6, rng=rng).astype(float), base.W, base.pi0, exact=False)
    assert not iff._dense_kernel(hmm)
    tokens, _ = sample(hmm, 3, 20, rng=np.random.default_rng(16))
    np.testing.assert_allclose(iff.posterior_marginals(hmm, tokens), hmmlearn_marginals(hmm, tokens), atol=1e-12)
