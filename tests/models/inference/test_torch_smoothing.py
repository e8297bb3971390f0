"""Smoothing through torch (``posterior_marginals(..., device=...)``): the torch kernel run on CPU
tensors against the numpy float64 path and hmmlearn's ``predict_proba`` (an independent
float64 oracle), in float64 and float32; device names are checked; on a CUDA GPU the CUDA
result matches the CPU one (marked ``cuda``, skipped without one)."""

import numpy as np
import pytest
import torch

from headprompt.models.exceptions import InputError
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.inference import floats as iff
from headprompt.models.inference import torch_smoothing as ts
from tests.oracle import hmmlearn_marginals

TOL32 = 64 * 2.0 ** -24          # as tests/models/inference/test_float32_kernels.py argues


def _case(H=30, X=6, n=3, t=50, seed=1):
    hmm = appendix_d_hmm(H, X, rng=np.random.default_rng(seed))
    tokens, _ = sample(hmm, n, t, rng=np.random.default_rng(seed + 1))
    return hmm, tokens


def _on_cpu_tensors(hmm, tokens, dtype):
    A, _, W, pi0 = iff.float_arrays(hmm)
    return ts.smoothed_marginals(*(torch.tensor(a, dtype=dtype) for a in (A, W, pi0)), torch.tensor(tokens)).numpy()


@pytest.mark.parametrize("H,n,t", [(30, 3, 50), (7, 1, 1), (200, 4, 300)])
def test_the_torch_kernel_matches_numpy_and_hmmlearn_in_float64(H, n, t):
    hmm, tokens = _case(H, 6, n, t)
    got = _on_cpu_tensors(hmm, tokens, torch.float64)
    assert got.shape == (n, t, H)
    np.testing.assert_allclose(got, iff.posterior_marginals(hmm, tokens), atol=1e-12)
    np.testing.assert_allclose(got, hmmlearn_marginals(hmm, tokens), atol=1e-10)


@pytest.mark.parametrize("H,n,t", [(30, 3, 50), (200, 4, 300), (12, 2, 10_000)])
def test_the_torch_kernel_in_float32_is_within_float32_tolerance(H, n, t):
    hmm, tokens = _case(H, 6, n, t)
    got = _on_cpu_tensors(hmm, tokens, torch.float32)
    assert got.dtype == np.float32
    assert np.abs(got - hmmlearn_marginals(hmm, tokens)).max() <= TOL32
    assert np.abs(got - iff.posterior_marginals(hmm, tokens)).max() <= TOL32


def test_impossible_sequences_stay_zero_in_torch():
    from fractions import Fraction
    from headprompt.models.hmm.values import HMM
    hmm = HMM.create([[1, 0], [0, 1]], [[1, 0], [0, 1]], [Fraction(1, 2), Fraction(1, 2)])
    got = _on_cpu_tensors(hmm, np.array([[0, 1], [0, 0]]), torch.float64)
    assert not got[0].any() and np.array_equal(got[1], [[1, 0], [1, 0]])


@pytest.mark.skipif(torch.cuda.is_available(), reason="auto means cuda on this machine")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_auto_without_cuda_runs_the_numpy_kernels(dtype):
    hmm, tokens = _case()
    assert np.array_equal(iff.posterior_marginals(hmm, tokens, dtype=dtype, device="auto"),
                          iff.posterior_marginals(hmm, tokens, dtype=dtype))


@pytest.mark.parametrize("device,match", [("gpu", "expected auto, cpu or cuda, found 'gpu'"),
                                          ("CUDA", "found 'CUDA'"), ("", "found ''"),
                                          pytest.param("cuda", "CUDA is not available", marks=pytest.mark.skipif(
                                              torch.cuda.is_available(), reason="CUDA is available"))])
def test_bad_devices_are_refused_in_one_line(device, match):
    hmm, tokens = _case()
    with pytest.raises(InputError, match=match):
        iff.posterior_marginals(hmm, tokens, device=device)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", TOL32)])
@pytest.mark.parametrize("device", ["cuda", "auto"])
def test_cuda_matches_the_cpu(dtype, tol, device):
    hmm, tokens = _case(300, 20, 5, 129)
    got = iff.posterior_marginals(hmm, tokens, dtype=dtype, device=device)
    assert isinstance(got, np.ndarray) and got.dtype == np.dtype(dtype) and got.shape == (5, 129, 300)
    np.testing.assert_allclose(got, iff.posterior_marginals(hmm, tokens), atol=tol)
    np.testing.assert_allclose(got, hmmlearn_marginals(hmm, tokens), atol=max(tol, 1e-10))
