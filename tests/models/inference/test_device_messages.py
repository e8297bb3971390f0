"""The certified backward kernel in torch (models/inference/device_messages.py) against exact
rational messages, against the numpy kernel, and the bound it relies on against the worst
summation order; the device's rounding probe catches forged arithmetic. On torch CPU tensors here;
the same tests on CUDA are marked ``cuda`` (skipped without a GPU)."""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from headprompt.models.exceptions import InputError
from headprompt.models.generate.generators import random_exact_hmm
from headprompt.models.inference import bounds as ib
from headprompt.models.inference.device_messages import (KernelDevice, backward_contractions, refuse_emulated_float64,
                                                         use_device)
from headprompt.models.inference.device_probe import adversarial_vector, probe_failures, within_gamma

TORCH_CPU = KernelDevice(torch.device("cpu"), "cpu (torch)")
DEVICES = [pytest.param(torch.device("cpu"), id="torch-cpu"),
           pytest.param(torch.device("cuda"), id="cuda", marks=[
               pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")])]


def _exact_backward0(hmm, seq):
    """``Pr(x | H_0 = h)`` in Fractions by ``beta_{j-1} = A^T (W[x_j] ⊙ beta_j)`` (the definition)."""
    H = hmm.num_states
    beta = [Fraction(1)] * H
    for z in reversed(seq):
        y = [Fraction(hmm.W[z, g]) * beta[g] for g in range(H)]
        beta = [sum((Fraction(hmm.A[g, h]) * y[g] for g in range(H)), Fraction(0)) for h in range(H)]
    return beta


def _rows(rng, H, k=3):
    """``k`` signed rational functionals with a few exact zeros."""
    return [[Fraction(int(rng.integers(-40, 41)), int(rng.integers(1, 30))) if rng.random() > 0.2 else Fraction(0)
             for _ in range(H)] for _ in range(k)]


def _case(seed, H=5, X=4, t=6, n=12):
    rng = np.random.default_rng(seed)
    hmm = random_exact_hmm(H, X, rng=rng)
    chain = ib.bound_chain(hmm)
    tokens = rng.integers(0, X, size=(n, t))
    rows = _rows(rng, H)
    pos, neg, _, ok = ib.split_rows(rows)
    return hmm, chain, tokens, rows, pos, neg, ok


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(6))
def test_device_contractions_are_within_the_bound_of_exact_ones(seed, device):
    """``P 2^-shift`` and ``N 2^-shift`` from the device are within ``gamma_count`` of the exact
    ``r+ . beta0``, ``r- . beta0`` (Fractions), with the count that certified mode uses."""
    hmm, chain, tokens, rows, pos, neg, ok = _case(seed)
    assert ok and chain.usable
    out = backward_contractions(chain, np.ascontiguousarray(tokens.T), pos, neg, track=True,
                                device=KernelDevice(device, str(device)))
    t, H = tokens.shape[1], hmm.num_states
    count = ib.backward_count(t, H) + 1 + H
    for i, seq in enumerate(tokens.tolist()):
        beta = _exact_backward0(hmm, seq)
        assert out["minpos"][i] >= chain.floor
        for k, row in enumerate(rows):
            for part, got in ((lambda r: max(r, 0), out["P"][i, k]), (lambda r: max(-r, 0), out["N"][i, k])):
                exact = sum((part(r) * b for r, b in zip(row, beta)), Fraction(0))
                unscaled = Fraction(float(got)) * Fraction(2) ** -int(out["shift"][i])   # exact
                g = Fraction(count, 2 ** 53 - count)
                assert abs(unscaled - exact) <= g * exact, (seed, i, k)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(6))
def test_device_and_numpy_certified_signs_agree_where_both_decide(seed, device):
    """Both kernels' certified signs are the exact signs wherever decided, and the guard's record
    and the decisions coincide (the same bound, counts and schedule)."""
    hmm, chain, tokens, rows, pos, neg, _ = _case(seed, H=6, X=3, t=8, n=40)
    idx = np.ascontiguousarray(tokens.T)
    count = ib.backward_count(tokens.shape[1], hmm.num_states) + 1 + hmm.num_states
    host = backward_contractions(chain, idx, pos, neg, track=True, device=None)
    dev = backward_contractions(chain, idx, pos, neg, track=True, device=KernelDevice(device, str(device)))
    s_host, d_host, _ = ib.certified_signs(host["P"], host["N"], count)
    s_dev, d_dev, _ = ib.certified_signs(dev["P"], dev["N"], count)
    for i, seq in enumerate(tokens.tolist()):
        beta = _exact_backward0(hmm, seq)
        for k, row in enumerate(rows):
            v = sum((r * b for r, b in zip(row, beta)), Fraction(0))
            sign = (v > 0) - (v < 0)
            for s, d in ((s_host, d_host), (s_dev, d_dev)):
                if d[i, k]:
                    assert s[i, k] == sign
    assert np.array_equal(d_host, d_dev)
    # the guard's record: the same powers of two up to a factor 2 (a row sum summed in another order)
    ratio = dev["minpos"] / host["minpos"]
    assert np.all((ratio > 0.49) & (ratio < 2.01))


def test_sparse_transitions_run_the_sparse_device_product():
    """A scipy-sparse ``A`` (the large path's) goes to the device as a CSR tensor of ``A^T``; the
    contractions match the numpy kernel's to the bound."""
    from scipy import sparse

    hmm, chain, tokens, rows, pos, neg, _ = _case(3, H=7, X=4)
    A = sparse.csc_array(chain.A)
    sp = ib.make_chain(A, chain.pi0, sparse.csr_array(chain.W), True)
    idx = np.ascontiguousarray(tokens.T)
    host = backward_contractions(sp, idx, pos, neg, track=True, device=None)
    dev = backward_contractions(sp, idx, pos, neg, track=True, device=TORCH_CPU)
    count = ib.backward_count(tokens.shape[1], 7) + 1 + 7
    g = 2 * ib.gamma(count)
    scale = np.ldexp(1.0, (host["shift"] - dev["shift"]).astype(int))[:, None]
    assert np.all(np.abs(dev["P"] * scale - host["P"]) <= g * host["P"] + 1e-300)


# ------------------------------------------------------------------ the bound against the worst order

def _sequential(x):
    s = 0.0
    for v in x:
        s += v
    return s


def _pairwise(x):
    x = list(x)
    while len(x) > 1:
        x = [x[i] + x[i + 1] if i + 1 < len(x) else x[i] for i in range(0, len(x), 2)]
    return x[0]


def test_gamma_n_covers_every_summation_order_of_the_adversarial_vector():
    """``[1, u, ..., u]``: left to right loses every ``u`` (relative error ``(n - 1) u``, the worst
    any order has); the bound ``gamma_n`` covers it and every other order tried (reversed,
    pairwise, numpy, torch GEMM, random permutations)."""
    x, exact = adversarial_vector()
    n = len(x)
    rng = np.random.default_rng(0)
    sums = {"sequential": _sequential(x), "reversed": _sequential(x[::-1]), "pairwise": _pairwise(x),
            "numpy": float(np.sum(x)), "torch": float((torch.from_numpy(x)[None, :] @ torch.ones(n, 1,
                                                                                       dtype=torch.float64))[0, 0])}
    sums.update({f"perm{k}": _sequential(x[rng.permutation(n)]) for k in range(5)})
    assert sums["sequential"] == 1.0                     # every u rounded away
    assert abs(Fraction(sums["sequential"]) - exact) == (n - 1) * Fraction(ib.UNIT_ROUNDOFF)
    for name, s in sums.items():
        assert within_gamma(s, exact, n), name


def test_a_bound_that_assumes_pairwise_summation_is_caught():
    """A forged device count, ``ceil(log2 n) + 1`` (what a pairwise tree would need), is violated by
    the left-to-right order of the adversarial vector: the test that the real count passes fails
    for it."""
    x, exact = adversarial_vector()
    n = len(x)
    forged = math.ceil(math.log2(n)) + 1
    worst = _sequential(x)
    assert within_gamma(worst, exact, n)
    assert not within_gamma(worst, exact, forged)


def test_the_probe_passes_torch_cpu_and_catches_forged_arithmetic():
    dev = torch.device("cpu")
    assert probe_failures(dev) == []
    in_float32 = lambda a, b: (a.float() @ b.float()).double()              # noqa: E731
    assert any("GEMM" in f for f in probe_failures(dev, matmul=in_float32))
    biased = lambda a, b: (a @ b) * (1 - 2.0 ** -40)                        # noqa: E731
    assert any("GEMM" in f for f in probe_failures(dev, matmul=biased))
    chopped = lambda a, b: (a * b).float().double()                        # noqa: E731
    assert any("products" in f for f in probe_failures(dev, multiply=chopped))


def test_device_choice_is_refused_in_one_line():
    with pytest.raises(InputError, match="expected auto, cpu or cuda"):
        with use_device("gpu"):
            pass
    with use_device("cpu") as kernels:
        assert kernels is None
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="CUDA is not available") as exc:
            with use_device("cuda"):
                pass
        assert "\n" not in str(exc.value)
        with use_device("auto") as kernels:                # auto without CUDA: the numpy kernels
            assert kernels is None


def test_cublas_float64_emulation_is_refused(monkeypatch):
    monkeypatch.setenv("CUBLAS_EMULATION_STRATEGY", "eager")
    with pytest.raises(InputError, match="CUBLAS_EMULATION_STRATEGY"):
        refuse_emulated_float64()
    monkeypatch.setenv("CUBLAS_EMULATION_STRATEGY", "")
    refuse_emulated_float64()


def test_a_table_too_large_for_the_device_is_gathered_on_the_host(monkeypatch):
    """Above :data:`TABLE_DEVICE_BYTES` the embedding rows are gathered on the host step by step
    (dense and CSR tables): the same contractions and guard as with the table on the device."""
    from scipy import sparse

    from headprompt.models.inference import device_messages as dm

    hmm, chain, tokens, rows, pos, neg, _ = _case(4, H=6, X=5)
    idx = np.ascontiguousarray(tokens.T)
    on_device = backward_contractions(chain, idx, pos, neg, track=True, device=KernelDevice(torch.device("cpu"), "t"))
    monkeypatch.setattr(dm, "TABLE_DEVICE_BYTES", 0)
    for table in (chain.W, sparse.csr_array(chain.W)):
        c = ib.make_chain(chain.A, chain.pi0, table, True)
        got = backward_contractions(c, idx, pos, neg, track=True, device=KernelDevice(torch.device("cpu"), "t"))
        for key in ("P", "N", "minpos", "shift"):
            assert np.array_equal(got[key], on_device[key]), key
