"""The cost model chooses the path of ``verify theorem 3.3|3.6`` (dense Fractions, or the large
path's sparse exact form) from a ``.npz`` file's headers before any work: forced either way on a
small instance (the rates monkeypatched), both paths give the same verdicts, which agree with the
path sums and sympy's rank (tests/oracle.py); the report names the path and why."""

from fractions import Fraction as F

import numpy as np
import pytest

from headprompt import check
from headprompt.models.hmm.files import instance_to_npz
from headprompt.models.hmm.npz import write_npz
from headprompt.models.hmm.values import HMM
from headprompt.verify.runtime import cost, paths
from tests.oracle import sympy_rank, vanilla_decisions

P = 2 ** 61 - 1


def sparse_transitions(n: int, rng: np.random.Generator) -> list[list[F]]:
    """A column-stochastic ``A`` with 1-3 successors per state (a self loop, the next state, one
    random), uniform over them: irreducible and aperiodic."""
    A = [[F(0)] * n for _ in range(n)]
    for h in range(n):
        succ = sorted({h, (h + 1) % n, int(rng.integers(n))})
        for g in succ:
            A[g][h] = F(1, len(succ))
    return A


def _cliff_hmm(n: int, seed: int = 5, *, singular: bool = False) -> HMM:
    """The boundary benchmark's sparse family (benchmarks/boundary.py) at ``n`` states: ``W``'s
    3 x 3 core ``M / p`` is singular modulo ``p = 2^61 - 1`` but not over Q; ``singular`` makes
    it singular over Q as well (every column the same), so Assumption 3.1 fails."""
    rng = np.random.default_rng(seed)
    A = sparse_transitions(n, rng)
    W = [[F(0)] * n for _ in range(n)]
    for i in range(3):
        for j in range(3):
            W[i][j] = F(1, 3) if singular else F(P - 2 if i == j else 1, P)
    for h in range(3, n):
        W[h][h] = F(1)
    mu = [F(int(rng.choice([-1, 1]))) for _ in range(n)]
    return HMM.create(A, W, [F(1, n)] * n, mu)


def _npz(tmp_path, hmm, name="m.npz"):
    path = tmp_path / name
    write_npz(path, instance_to_npz(hmm))
    return str(path)


def _run(path, monkeypatch, chosen, **options):
    with monkeypatch.context() as m:
        if chosen == "large":
            m.setattr(cost, "_DENSE_ENTRY_RATE", 1.0)           # the dense path predicted slow
        else:
            m.setattr(paths, "PATH_PREFERENCE", 1e12)             # the dense path kept
        report = check(path, "3.3", samples=40, length=2, **options)
    assert report.data["path"]["chosen"] == chosen, report.data["path"]
    return report


@pytest.mark.parametrize("singular", [False, True])
def test_both_paths_give_the_oracle_verdicts(tmp_path, monkeypatch, singular):
    hmm = _cliff_hmm(8, singular=singular)
    path = _npz(tmp_path, hmm)
    dense = _run(path, monkeypatch, "dense")
    large = _run(path, monkeypatch, "large")
    full = sympy_rank([list(hmm.W[:, c]) for c in range(8)]) == 8
    assert full != singular
    for r in (dense, large):
        assert r.data["assumptions"]["3.1"]["holds"] == full
        assert r.data["verdict"] == ("verified" if full else "assumptions-fail")
        assert "predicted" in r.data["path"]["why"] and set(r.data["path"]["estimates"]) == {"dense", "large"}
    if full:
        assert dense.data["witness"]["b"] == large.data["witness"]["b"]
        assert dense.data["sequences"]["agree"] == dense.data["sequences"]["checked"]
        assert large.data["sequences"]["agree"] == large.data["sequences"]["checked"]
        b = [F(v) for v in large.data["witness"]["b"]]
        seqs = [(0, 3), (3, 4), (5, 5), (1, 7)]
        for s, (star, got) in vanilla_decisions(hmm, "3.3", b, None, seqs).items():
            assert star == got, s                               # Theorem 3.3 holds, by path sums


def test_a_wrong_head_is_rejected_by_the_same_oracle(tmp_path, monkeypatch):
    """The oracle comparison above is not vacuous: the negated head disagrees with F*."""
    hmm = _cliff_hmm(8)
    large = _run(_npz(tmp_path, hmm), monkeypatch, "large")
    b = [-F(v) for v in large.data["witness"]["b"]]
    decisions = vanilla_decisions(hmm, "3.3", b, None, [(0, 3), (3, 4), (5, 5), (1, 7), (2, 6)])
    assert any(star != got for star, got in decisions.values())


def test_options_only_the_dense_path_serves_keep_it(tmp_path, monkeypatch):
    path = _npz(tmp_path, _cliff_hmm(8))
    with monkeypatch.context() as m:
        m.setattr(cost, "_DENSE_ENTRY_RATE", 1.0)
        report = check(path, "3.3", samples=20, length=2, mode="exact")
    assert report.data["path"]["chosen"] == "dense" and "exact mode" in report.data["path"]["why"]
    assert report.data["mode"] == "exact" and report.data["verdict"] == "verified"


def test_choose_path_rules():
    fast, slow = {"seconds": 10.0, "bytes": 0}, {"seconds": 40.0, "bytes": 0}
    assert paths.choose_path(slow, fast)["chosen"] == "large"
    assert paths.choose_path(fast, slow)["chosen"] == "dense"
    near = {"seconds": 30.0, "bytes": 0}                   # under PATH_PREFERENCE x faster: dense kept
    assert paths.choose_path(slow, near)["chosen"] == "dense"
    assert paths.choose_path(slow, fast, large_blocked="--witness")["chosen"] == "dense"
    assert paths.choose_path(fast, slow, dense_blocked="too big")["chosen"] == "large"
    huge = {"seconds": 1.0, "bytes": 2 * cost.MAX_LARGE_BYTES}
    assert paths.choose_path(huge, slow)["chosen"] == "large"


def test_the_estimates_follow_the_shapes():
    sparse = paths.dense_path_estimate(1000, 1000, 4000, 10200, 8)
    dense = paths.dense_path_estimate(1000, 1000, 1_000_000, 10200, 8)
    assert dense["seconds"] > sparse["seconds"] and sparse["bytes"] == dense["bytes"]
    assert paths.dense_path_estimate(2000, 2000, 8000, 10200, 8)["bytes"] > 3 * sparse["bytes"]
    assert paths.large_fallback_seconds(100, 8, 1_000_000, 1000) > 100 * paths.large_fallback_seconds(100, 8, 4000, 1000)
