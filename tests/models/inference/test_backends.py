"""Float64 and torch backends against the exact engine, hmmlearn, and long sequences."""

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from headprompt.models.inference import exact as ie
from headprompt.models.inference import floats as iff
from headprompt.models.inference import torch_backend as it
from headprompt.models.generate.generators import appendix_d_hmm, random_exact_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.generate.strategies import hmms, memory_hmms, token_sequences


def _f(vectors):
    return np.array([[float(v) for v in row] for row in vectors])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_float_and_torch_agree_with_exact(data):
    hmm = data.draw(hmms(num_states=st.integers(1, 4), num_tokens=st.integers(1, 3), sparsity=0.3))
    tokens = data.draw(token_sequences(hmm.num_tokens, max_length=6))
    exact_G = _f(ie.conditionals(hmm, tokens))
    np.testing.assert_allclose(iff.conditionals(hmm, [tokens])[0], exact_G, atol=1e-12)
    A, W, pi0 = it.hmm_tensors(hmm)
    np.testing.assert_allclose(it.conditionals(A, W, pi0, torch.tensor([tokens])).numpy()[0], exact_G, atol=1e-12)
    for k in range(len(tokens) + 1):
        np.testing.assert_allclose(iff.posterior_hidden(hmm, [tokens], k)[0],
                                   [float(v) for v in ie.posterior_hidden(hmm, tokens, k)], atol=1e-12)
    emb = [[Fraction(data.draw(st.integers(0, 3)), 3) for _ in range(hmm.num_states)] for _ in tokens]
    i = data.draw(st.integers(0, len(tokens) - 1))
    exact = [float(v) for v in ie.gbar(hmm, emb, i)]
    femb = np.array([[float(v) for v in row] for row in emb])[None]
    np.testing.assert_allclose(iff.gbar(hmm, femb, i)[0], exact, atol=1e-12)
    np.testing.assert_allclose(it.gbar(A, W, pi0, torch.tensor(femb), i).numpy()[0], exact, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_memory_float_agrees_with_exact(data):
    mhmm = data.draw(memory_hmms())
    tokens = data.draw(token_sequences(mhmm.num_tokens, max_length=4))
    np.testing.assert_allclose(iff.memory_posterior(mhmm, [tokens])[0],
                               [float(v) for v in ie.memory_posterior(mhmm, tokens)], atol=1e-12)
    size = mhmm.memory_values * mhmm.num_states
    emb = [[Fraction(data.draw(st.integers(0, 3)), 3) for _ in range(size)] for _ in tokens]
    i = data.draw(st.integers(0, len(tokens) - 1))
    femb = np.array([[float(v) for v in row] for row in emb])[None]
    np.testing.assert_allclose(iff.memory_gbar(mhmm, femb, i)[0],
                               [float(v) for v in ie.memory_gbar(mhmm, emb, i)], atol=1e-12)


def test_torch_gbar_is_differentiable():
    hmm = random_exact_hmm(4, 3, rng=np.random.default_rng(0))
    A, W, pi0 = it.hmm_tensors(hmm)
    emb = torch.rand(2, 5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda e: it.gbar(A, W, pi0, e, 1), (emb,))


def test_hmmlearn_posteriors_on_a_long_sequence():
    """T = 10,000: no underflow, and smoothed posteriors match hmmlearn's predict_proba."""
    hmmlearn = pytest.importorskip("hmmlearn.hmm")
    hmm = appendix_d_hmm(6, 10, rng=np.random.default_rng(1))
    tokens, _ = sample(hmm, 1, 10_000, rng=np.random.default_rng(2))
    model = hmmlearn.CategoricalHMM(n_components=6, init_params="", params="")
    model.startprob_ = hmm.A @ hmm.pi0            # P[H_1]: hmmlearn's first state emits
    model.transmat_ = hmm.A.T                     # hmmlearn rows are "from" states
    model.emissionprob_ = hmm.W.T
    theirs = model.predict_proba(tokens[0][:, None])            # [T, H]: P[H_k | X], k = 1..T
    A, W, pi0 = (np.asarray(a) for a in (hmm.A, hmm.W, hmm.pi0))
    pre, alpha, beta = iff.messages(A, pi0, W[tokens])
    ours = alpha[0] * beta[0]
    ours /= ours.sum(axis=1, keepdims=True)
    assert np.all(np.isfinite(ours))
    np.testing.assert_allclose(ours, theirs, atol=1e-8)
    for k in (1, 5000, 10_000):
        np.testing.assert_allclose(iff.posterior_hidden(hmm, tokens, k)[0], theirs[k - 1], atol=1e-8)
    np.testing.assert_allclose(iff.posterior_marginals(hmm, tokens)[0], theirs, atol=1e-8)


def test_batched_smoothing_matches_hmmlearn_sequence_by_sequence():
    """The time-major batch (sequences of one length) against hmmlearn, one sequence at a time."""
    hmmlearn = pytest.importorskip("hmmlearn.hmm")
    hmm = appendix_d_hmm(5, 4, rng=np.random.default_rng(7))
    tokens, _ = sample(hmm, 40, 25, rng=np.random.default_rng(8))
    model = hmmlearn.CategoricalHMM(n_components=5, init_params="", params="")
    model.startprob_, model.transmat_, model.emissionprob_ = hmm.A @ hmm.pi0, hmm.A.T, hmm.W.T
    ours = iff.posterior_marginals(hmm, tokens)
    for r in range(len(tokens)):
        np.testing.assert_allclose(ours[r], model.predict_proba(tokens[r][:, None]), atol=1e-10)


def test_kernel_rescaling_is_an_exact_power_of_two():
    """The certified kernel's messages are the unscaled float messages times 2^shift, bit for bit
    (item 1 of models.inference_bounds: power-of-two scaling is exact)."""
    hmm = appendix_d_hmm(4, 3, rng=np.random.default_rng(9))
    tokens, _ = sample(hmm, 7, 40, rng=np.random.default_rng(10))
    A, AT, W, pi0 = iff.float_arrays(hmm)
    idx = np.ascontiguousarray(tokens.T)
    m = iff.scaled_messages(A, AT, pi0, W, idx, forward=False, store=False, track=True, every=1)
    b = np.ones((len(tokens), 4))
    for j in range(tokens.shape[1] - 1, -1, -1):          # the same operations, never rescaled
        b = (W[idx[j]] * b) @ A
    assert np.array_equal(m["beta0"], np.ldexp(b, m["shift_beta0"][:, None]))


def test_long_sequence_matches_exact():
    """T = 300 in exact arithmetic against the scaled float path (values far below 1e-300)."""
    hmm = random_exact_hmm(3, 4, rng=np.random.default_rng(3), max_denominator=50)
    tokens, _ = sample(hmm, 1, 300, rng=np.random.default_rng(4))
    seq = tokens[0].tolist()
    np.testing.assert_allclose(iff.posterior_h0(hmm, tokens)[0], [float(v) for v in ie.posterior_h0(hmm, seq)],
                               atol=1e-12)
    exact_G = _f(ie.conditionals(hmm, seq))
    np.testing.assert_allclose(iff.conditionals(hmm, tokens)[0], exact_G, atol=1e-12)


def test_sampling_frequencies_match_the_model():
    hmm = random_exact_hmm(3, 4, rng=np.random.default_rng(5)).to_float()
    tokens, states = sample(hmm, 200_000, 2, rng=np.random.default_rng(6))
    # P[X_1] = W A pi0
    expected = np.asarray(hmm.W) @ np.asarray(hmm.A) @ np.asarray(hmm.pi0)
    freq = np.bincount(tokens[:, 0], minlength=4) / len(tokens)
    assert np.abs(freq - expected).max() < 0.01
    assert np.abs(np.bincount(states[:, 0], minlength=3) / len(states) - hmm.pi0).max() < 0.01
