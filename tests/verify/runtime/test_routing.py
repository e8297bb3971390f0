"""The cost model chooses the path for every input kind (issue 38 item 1): a JSON file and an
in-memory HMM are priced from their shapes and nonzeros like an ``.npz`` file, and checked through
the large path's sparse exact form when it is cheaper. Forced either way, both paths give the
same verdicts, judged by independent oracles (path sums and sympy's rank, tests/oracle.py), and
the sparse exact form holds exactly the model's values."""

import json
import subprocess
import sys
from fractions import Fraction as F

import numpy as np
import pytest

from headprompt import check
from headprompt.models.generate.generators import full_rank_hmm, prompt_friendly_hmm
from headprompt.models.hmm.files import instance_to_npz, save_instance
from headprompt.models.hmm.npz import npz_counts, write_npz
from headprompt.models.hmm.values import HMM
from headprompt.verify.reports.routing import large_form
from headprompt.verify.runtime import paths
from tests.oracle import sympy_rank, vanilla_decisions


def _forced(monkeypatch, chosen, source, tid, **options):
    with monkeypatch.context() as m:
        m.setattr(paths, "PATH_PREFERENCE", 1e12 if chosen == "dense" else 0.0)
        report = check(source, tid, samples=60, length=3, **options)
    assert report.data["path"]["chosen"] == chosen, report.data["path"]
    assert set(report.data["path"]["estimates"]) == {"dense", "large"}
    return report.data


def _singular_w(hmm: HMM) -> HMM:
    """The same model with its first two columns of ``W`` equal: rank ``|H| - 1``, so
    Assumption 3.1 fails."""
    W = np.array(hmm.W, dtype=object)
    W[:, 1] = W[:, 0]
    return HMM.create(hmm.A, W, hmm.pi0, hmm.mu)


def test_the_sparse_exact_form_holds_the_same_values():
    hmm, _ = prompt_friendly_hmm(9, 6, rng=np.random.default_rng(3))
    form = large_form(hmm)
    A, W = form.A.toarray(), form.W.toarray()
    for name, mat, dense, den in (("A", A, hmm.A, form.dA), ("W", W, hmm.W, form.dW)):
        for i, j in np.ndindex(mat.shape):
            assert F(int(mat[i, j]), int(den[j])) == F(dense[i, j]), (name, i, j)
    assert [F(int(v), form.dpi) for v in form.pi0] == [F(v) for v in hmm.pi0]
    assert [F(int(v), form.dmu) for v in form.mu] == [F(v) for v in hmm.mu]


def test_a_model_beyond_int64_stays_dense():
    hmm, _ = full_rank_hmm(3, 4, rng=np.random.default_rng(1))
    q = 2 ** 70 + 1                                  # a column denominator beyond int64
    A = np.array(hmm.A, dtype=object)
    A[:, 0] = [F(1, q), F(q - 1, q), F(0)]
    big = HMM.create(A, hmm.W, hmm.pi0, hmm.mu)
    assert "int64" in large_form(big)


def test_object_and_json_counts_are_the_npz_headers_counts(tmp_path):
    hmm, _ = prompt_friendly_hmm(12, 7, rng=np.random.default_rng(4))
    write_npz(tmp_path / "m.npz", instance_to_npz(hmm))
    assert paths.model_counts(hmm) == npz_counts(tmp_path / "m.npz")
    A, W = np.array(hmm.A, dtype=object), np.array(hmm.W, dtype=object)
    assert paths.model_counts(hmm) == (12, 7, sum(v != 0 for v in A.flat), sum(v != 0 for v in W.flat))


@pytest.mark.parametrize("kind", ["object", "json"])
@pytest.mark.parametrize("tid,singular", [("3.3", False), ("3.3", True), ("3.6", False)])
def test_both_paths_give_the_oracle_verdicts(tmp_path, monkeypatch, kind, tid, singular):
    rng = np.random.default_rng(11)
    hmm = (full_rank_hmm(6, 7, rng=rng) if tid == "3.3" else prompt_friendly_hmm(7, 5, rng=rng))[0]
    if singular:
        hmm = _singular_w(hmm)
    source = hmm
    if kind == "json":
        source = str(tmp_path / "m.json")
        save_instance(hmm, source)
    dense = _forced(monkeypatch, "dense", source, tid)
    large = _forced(monkeypatch, "large", source, tid)
    assert large["instance"]["source"] == (source if kind == "json" else "object")
    assert dense["verdict"] == large["verdict"]
    if tid == "3.3":
        full = sympy_rank([list(hmm.W[:, c]) for c in range(hmm.num_states)]) == hmm.num_states
        assert full != singular
        assert dense["assumptions"]["3.1"]["holds"] == large["assumptions"]["3.1"]["holds"] == full
        assert large["verdict"] == ("verified" if full else "assumptions-fail")
    else:
        assert large["verdict"] == "verified"
    if large["verdict"] != "verified":
        return
    for r in (dense, large):
        assert r["sequences"]["agree"] == r["sequences"]["checked"] > 0
    b = [F(v) for v in large["witness"]["b"]]
    u = [F(v) for v in large["witness"]["u"]] if tid == "3.6" else None
    seqs = [(0, 1, 2), (2, 2, 0), (1, 0, 3), (4, 1, 1), (3, 3, 3)]
    decisions = vanilla_decisions(hmm, tid, b, u, seqs)
    assert decisions and all(star == got for star, got in decisions.values())      # by path sums


def _dense_transitions(n: int, seed: int = 2) -> HMM:
    """The boundary benchmark's dense family in Fractions: every entry of ``A`` positive, ``W``
    the identity but for a nonsingular 3 x 3 core (sparse emissions)."""
    rng = np.random.default_rng(seed)
    num = rng.integers(1, 10, size=(n, n))
    A = [[F(int(num[i, j]), int(num[:, j].sum())) for j in range(n)] for i in range(n)]
    W = [[F(int(i == j)) for j in range(n)] for i in range(n)]
    for i in range(3):
        for j in range(3):
            W[i][j] = F(2 if i == j else 1, 4)
    return HMM.create(A, W, [F(1, n)] * n, [F(int(v)) for v in rng.choice([-1, 1], size=n)])


def test_the_choice_follows_the_shapes_for_json_and_objects(tmp_path):
    """Priced without monkeypatching: a 5-state model keeps the dense path (its robustness block);
    a 150-state model with dense transitions, from a JSON file, goes to the large path at the
    default budget (predicted cheaper), and the report, text and JSON, says so and why."""
    small, _ = full_rank_hmm(5, 6, rng=np.random.default_rng(2))
    r = check(small, "3.3", samples=100, length=4).data
    assert r["path"]["chosen"] == "dense" and "predicted" in r["path"]["why"] and "robustness" in r
    big = _dense_transitions(150)
    path = tmp_path / "big.json"
    save_instance(big, path)
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.3", "--hmm", str(path), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["path"]["chosen"] == "large" and "predicted" in report["path"]["why"]
    assert report["path"]["estimates"]["large"]["seconds"] * paths.PATH_PREFERENCE < \
        report["path"]["estimates"]["dense"]["seconds"]
    assert report["verdict"] == "verified" and report["instance"]["source"] == str(path)
    text = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.3", "--hmm", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert text.returncode == 0 and "path: large (predicted" in text.stdout, text.stdout + text.stderr


def test_options_only_the_dense_path_serves_keep_it_for_objects(monkeypatch):
    hmm, _ = full_rank_hmm(6, 7, rng=np.random.default_rng(5))
    with monkeypatch.context() as m:
        m.setattr(paths, "PATH_PREFERENCE", 0.0)
        r = check(hmm, "3.3", samples=20, length=2, mode="exact").data
    assert r["path"]["chosen"] == "dense" and "exact mode" in r["path"]["why"] and r["verdict"] == "verified"


def test_the_bits_that_price_exact_mode_are_those_of_the_common_denominators(tmp_path):
    """Exact mode is priced by the bits of ``A``'s and ``W``'s common denominators: read from an
    ``.npz`` file's ``A.den``/``W.den`` alone or from the object, they are the bits of the least
    common multiple of every entry's denominator."""
    import math

    from headprompt.verify.reports.routing import _file_bits, _model_bits

    hmm, _ = prompt_friendly_hmm(9, 6, rng=np.random.default_rng(8))
    write_npz(tmp_path / "m.npz", instance_to_npz(hmm))
    expect = sum(math.lcm(*(F(v).denominator for v in np.asarray(m, dtype=object).flat)).bit_length()
                 for m in (hmm.A, hmm.W))
    assert _file_bits(tmp_path / "m.npz") == _model_bits(hmm) == expect
