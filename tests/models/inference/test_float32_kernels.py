"""Accuracy of every float32 smoothing kernel (``posterior_marginals(..., dtype="float32")``):
the compiled kernel vectorised over sequences, the compiled one calling BLAS for its products,
the one streaming rows of ``A``, the step loop (numpy's sgemm, compiled elementwise passes) and
the BLAS loop (the one used without numba), each forced in turn, against independent float64
oracles: hmmlearn's ``predict_proba`` on random models, a long sequence included (T = 10,000:
the messages are normalised every step, so nothing under- or overflows and errors do not grow
with T), and brute force over all hidden paths (exact Fractions) on tiny models.

Tolerance: ``TOL32 = 64 u`` with ``u = 2^-24`` float32's unit roundoff (about 3.8e-6): the
marginals are probabilities, each step rounds a normalised message a few times, and forward-
backward forgets old rounding errors at the chain's mixing rate, so the error stays a small
multiple of ``u`` at any T (measured: at most 2.5e-7 on these models, T = 129 and 10,000).
"""

from fractions import Fraction

import numpy as np
import pytest

from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.hmm.values import HMM
from headprompt.models.inference import float32 as f32
from headprompt.models.inference import float32_compiled
from headprompt.models.inference import floats as iff
from tests.oracle import hmmlearn_marginals, path_posterior

TOL32 = 64 * 2.0 ** -24
KINDS = ["columns", "blas", "rows", "steps", "numpy"]


def _forced(monkeypatch, kind):
    if kind != "numpy" and not float32_compiled.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(f32, "float32_kernel", lambda H, n: kind)


def _dirichlet_hmm(H: int, X: int, seed: int, concentration: float = 1.0) -> HMM:
    rng = np.random.default_rng(seed)
    A = rng.dirichlet(np.full(H, concentration), size=H).T          # column-stochastic
    W = rng.dirichlet(np.full(X, concentration), size=H).T
    return HMM.create(A, W, rng.dirichlet(np.full(H, concentration)), exact=False)


MODELS = {"dirichlet 8x5": lambda: _dirichlet_hmm(8, 5, 0),
          "dirichlet 30x7 (0.3)": lambda: _dirichlet_hmm(30, 7, 1, 0.3),          # peaked rows
          "appendix D 12x40": lambda: appendix_d_hmm(12, 40, rng=np.random.default_rng(13)),  # entries ~1e-40
          "dirichlet 37x4": lambda: _dirichlet_hmm(37, 4, 2)}                      # H % 4 != 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("n,t", [(5, 129), (3, 1), (2, 10_000)])
def test_float32_marginals_match_hmmlearn(monkeypatch, kind, model, n, t):
    """n = 5 and 3 are not multiples of four (the rows kernel pads); T = 1 has no backward step."""
    _forced(monkeypatch, kind)
    hmm = MODELS[model]()
    tokens, _ = sample(hmm, n, t, rng=np.random.default_rng(t + n))
    got = iff.posterior_marginals(hmm, tokens, dtype="float32")
    assert got.dtype == np.float32 and got.shape == (n, t, hmm.num_states)
    assert np.abs(got - hmmlearn_marginals(hmm, tokens)).max() <= TOL32


@pytest.mark.parametrize("kind", KINDS)
def test_a_large_model_matches_hmmlearn(monkeypatch, kind):
    """600 states, 6 sequences: the sizes where the rows kernel runs by default."""
    _forced(monkeypatch, kind)
    hmm = _dirichlet_hmm(600, 20, 3)
    tokens, _ = sample(hmm, 6, 60, rng=np.random.default_rng(5))
    got = iff.posterior_marginals(hmm, tokens, dtype="float32")
    assert np.abs(got - hmmlearn_marginals(hmm, tokens)).max() <= TOL32


def _tiny_exact_hmm(seed: int) -> HMM:
    rng = np.random.default_rng(seed)
    H, X = 3, 2
    A = rng.integers(0, 5, size=(H, H)) + np.eye(H, dtype=np.int64)   # zeros allowed, diagonal kept
    W = rng.integers(1, 5, size=(X, H))
    pi0 = rng.integers(1, 5, size=H)
    col = lambda M: [[Fraction(int(M[i, j]), int(M[:, j].sum())) for j in range(M.shape[1])]
                     for i in range(M.shape[0])]
    return HMM.create(col(A), col(W), [Fraction(int(v), int(pi0.sum())) for v in pi0])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float32_marginals_match_path_sums(monkeypatch, kind, seed):
    """Every position of three sequences of length 5 against P[H_k | x] summed over all 3^6
    hidden paths in Fractions (tests/oracle.py: no message passing)."""
    _forced(monkeypatch, kind)
    hmm = _tiny_exact_hmm(seed)
    tokens = np.random.default_rng(seed).integers(0, 2, size=(3, 5))
    got = iff.posterior_marginals(hmm, tokens, dtype="float32")
    for r in range(3):
        for k in range(1, 6):
            exact = np.array([float(v) for v in path_posterior(hmm, tokens[r].tolist(), k)])
            assert np.abs(got[r, k - 1] - exact).max() <= TOL32


@pytest.mark.parametrize("kind", KINDS)
def test_impossible_sequences_stay_zero(monkeypatch, kind):
    _forced(monkeypatch, kind)
    hmm = HMM.create([[1, 0], [0, 1]], [[1, 0], [0, 1]], [Fraction(1, 2), Fraction(1, 2)])
    got = iff.posterior_marginals(hmm, np.array([[0, 1], [0, 0], [1, 1]]), dtype="float32")
    assert not got[0].any() and np.array_equal(got[1], [[1, 0], [1, 0]]) and np.array_equal(got[2], [[0, 1], [0, 1]])


def test_the_kernel_choice_by_size(monkeypatch):
    if float32_compiled.available():
        assert f32.float32_kernel(5, 256) == "columns" and f32.float32_kernel(32, 1) == "columns"
        assert f32.float32_kernel(50, 256) == "blas" and f32.float32_kernel(300, 1) == "blas"
        assert f32.float32_kernel(100, 8) == "blas" and f32.float32_kernel(101, 8) == "steps"
        assert f32.float32_kernel(200, 64) == "steps" and f32.float32_kernel(300, 2) == "steps"
        assert f32.float32_kernel(4096, 4) == "rows" and f32.float32_kernel(2048, 8) == "rows"
        assert f32.float32_kernel(400, 64) == "steps" and f32.float32_kernel(1000, 16) == "steps"
        assert f32.float32_kernel(2048, 64) == "steps"
    monkeypatch.setattr(float32_compiled, "available", lambda: False)   # numba missing: the BLAS loop
    assert {f32.float32_kernel(H, n) for H in (5, 400, 4096) for n in (1, 64)} == {"numpy"}


def test_the_blas_kernel_runs_scipys_blas_on_one_thread():
    """numba's np.dot calls scipy's OpenBLAS, which a fresh process may load only when the kernel
    compiles: the kernel must still hold it to one thread (two threads on a busy machine made it
    100-1,000x slower). In a fresh interpreter where scipy is not yet imported, the limit in force
    during the call covers a BLAS library loaded from scipy's folder, at one thread."""
    if not float32_compiled.available():
        pytest.skip("numba is not installed")
    import subprocess
    import sys
    code = """
import sys
import numpy as np
from headprompt.models.inference import float32 as f32, floats as iff
from headprompt.models.generate.generators import appendix_d_hmm
seen = []
real = f32._one_thread_all_blas
def spy():
    ctx = real()
    class Wrap:
        def __enter__(self):
            ctx.__enter__()
            seen.extend((p.filepath, p.num_threads) for p in f32._blas_controller().lib_controllers
                        if p.user_api == "blas")
        def __exit__(self, *a):
            return ctx.__exit__(*a)
    return Wrap()
f32._one_thread_all_blas = spy
hmm = appendix_d_hmm(50, 10, rng=np.random.default_rng(0))
iff.posterior_marginals(hmm, np.zeros((8, 5), dtype=np.int64), dtype="float32")
assert any("scipy" in path and "numpy" not in path for path, _ in seen), seen
assert all(k == 1 for _, k in seen), seen
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
