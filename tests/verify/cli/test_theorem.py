"""``verify theorem`` / ``assumptions`` / ``counterexample`` end to end: JSON, exit codes,
certificates re-checked independently, replay of saved instances, refuted witnesses."""

import json
from fractions import Fraction

import numpy as np
import pytest

from headprompt.models.generate.generators import prompt_friendly_hmm
from headprompt.models.hmm.files import load_instance, save_instance
from headprompt.verify.evidence.certificates import check_no_linear_head_certificate
from headprompt.verify.cli.main import main

from tests import oracle
from tests.cli import run_json




def test_headline_theorem_36(capsys, tmp_path):
    out_file = tmp_path / "run.json"
    code, res, _ = run_json(capsys, ["theorem", "3.6", "--hidden", "25", "--out", str(out_file)])
    assert code == 0 and res["verdict"] == "verified" and res["mode"] == "exact"
    seq = res["sequences"]
    assert seq["checked"] >= 10_000 and seq["agree"] == seq["checked"] and seq["ties"] >= 1
    assert res["assumptions"]["3.2"]["holds"] and res["assumptions"]["3.5"]["holds"]
    assert set(res["witness"]) >= {"u", "b"} and res["identity"]["holds"]
    assert res["instance"]["source"] == "generated" and res["counterexample"] is None
    # replay the saved run from the file, with its witness
    code2, res2, _ = run_json(capsys, ["theorem", "3.6", "--hmm", str(out_file), "--witness", str(out_file),
                                       "--samples", "500"])
    assert code2 == 0 and res2["verdict"] == "verified" and res2["instance"]["source"] == str(out_file)
    assert load_instance(out_file).num_states == 25


def test_headline_theorem_33_gives_a_checkable_certificate(capsys, tmp_path):
    out_file = tmp_path / "inst.json"
    code, res, _ = run_json(capsys, ["theorem", "3.3", "--hidden", "25", "--out", str(out_file)])
    assert code == 3 and res["verdict"] == "assumptions-fail"
    assert not res["assumptions"]["3.1"]["holds"]
    cert = res["counterexample"]
    assert cert["kind"] == "no-linear-head"
    y, z = (cert["certificate"][k] for k in ("y", "z"))
    assert len(y) == len(z) == len(cert["sequences"]) == len(cert["features"])
    hmm = load_instance(out_file)
    # re-check with the brute-force-tested engine (features recomputed, not read from the output)
    assert check_no_linear_head_certificate(hmm, cert)[0]
    # and the identity sum y g - sum z g = 0 from the printed features, exactly
    feats = [[Fraction(v) for v in row] for row in cert["features"]]
    for x in range(hmm.num_tokens):
        assert sum((Fraction(a) - Fraction(b)) * g[x] for a, b, g in zip(y, z, feats)) == 0


def _small_certificate():
    hmm, _ = prompt_friendly_hmm(6, 3, rng=np.random.default_rng(4))
    from headprompt.verify.evidence.certificates import find_no_linear_head_certificate
    from headprompt.verify.evidence.sequences import exhaustive

    cert = find_no_linear_head_certificate(hmm, exhaustive(3, 3))
    assert cert is not None
    return hmm, cert


def test_certificate_checker_rejects_wrong_certificates():
    hmm, cert = _small_certificate()
    assert check_no_linear_head_certificate(hmm, cert)[0]
    # the features recomputed by the engine equal brute-force path sums
    filler = [Fraction(1)] * hmm.num_states
    for seq, feat in zip(cert["sequences"], cert["features"]):
        assert [Fraction(v) for v in feat] == oracle.path_gbar(hmm.A, hmm.W, hmm.pi0,
                                                               [filler] + [list(hmm.W[z]) for z in seq], 0)

    def mutated(fn):
        c = json.loads(json.dumps(cert))
        fn(c)
        return check_no_linear_head_certificate(hmm, c)

    k = next(i for i, v in enumerate(cert["certificate"]["y"]) if v != "0")
    j = next(i for i, v in enumerate(cert["certificate"]["z"]) if v != "0")
    assert not mutated(lambda c: c["certificate"]["y"].__setitem__(k, str(Fraction(c["certificate"]["y"][k]) * 2)))[0]
    assert not mutated(lambda c: c["certificate"]["z"].__setitem__(j, "-" + c["certificate"]["z"][j]))[0]
    assert not mutated(lambda c: c["certificate"].__setitem__("y", ["0"] * len(c["certificate"]["y"])))[0]
    assert not mutated(lambda c: c.__setitem__("labels", [1 - v for v in c["labels"]]))[0]
    assert not mutated(lambda c: c["sequences"][k].append(0))[0]


def test_refuted_witness_exit_1_and_the_sequence_really_disagrees(capsys, tmp_path):
    hmm, _ = prompt_friendly_hmm(5, 3, rng=np.random.default_rng(2))
    inst = tmp_path / "h.json"
    save_instance(hmm, inst)
    witness = tmp_path / "w.json"
    witness.write_text(json.dumps({"theorem": "3.6", "u": [1] * 5, "b": [1, -1, 0]}))
    code, res, _ = run_json(capsys, ["theorem", "3.6", "--hmm", str(inst), "--witness", str(witness),
                                     "--exhaustive", "--length", "3"])
    assert code == 1 and res["verdict"] == "refuted"
    ce = res["counterexample"]
    seq = ce["sequence"]
    post = oracle.path_posterior(hmm, seq, 0)
    f_star = int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0)
    g = oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [[1] * 5, [1] * 5] + [list(hmm.W[z]) for z in seq], 1)
    f = int(g[0] - g[1] >= 0)
    assert (ce["expected"], ce["got"]) == (f_star, f) and f_star != f


def test_assumptions_and_counterexample_commands(capsys, tmp_path):
    hmm, _ = prompt_friendly_hmm(12, 4, rng=np.random.default_rng(0))
    inst = tmp_path / "h.json"
    save_instance(hmm, inst)
    code, res, _ = run_json(capsys, ["assumptions", "3.6", "--hmm", str(inst)])
    assert code == 0 and res["holds"] and res["assumptions"]["3.5"]["holds"]
    code, res, _ = run_json(capsys, ["assumptions", "3.3", "--hmm", str(inst)])
    assert code == 3 and not res["assumptions"]["3.1"]["holds"]
    code, res, _ = run_json(capsys, ["counterexample", "3.3", "--hidden", "5", "--vocab", "5"])
    assert code == 1 and res["kind"] == "statement" and res["counterexample"]["kind"] == "no-linear-head"


@pytest.mark.parametrize("argv, fragment", [
    (["theorem", "3.7"], "expected one of 3.3, 3.6"),
    (["theorem", "3.6", "--hidden", "0"], "--hidden 0"),
    (["theorem", "3.6", "--hidden", "100000"], "--hidden 100000"),
    (["theorem", "3.6", "--exhaustive", "--length", "9"], "the limit is"),
    (["theorem", "3.6", "--mode", "fast"], "invalid choice"),
    (["theorem", "3.6", "--hidden", "2"], "at least 3 hidden states"),
])
def test_theorem_bad_usage(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]


def test_bad_witness_files(capsys, tmp_path):
    hmm, _ = prompt_friendly_hmm(5, 3, rng=np.random.default_rng(2))
    inst = tmp_path / "h.json"
    save_instance(hmm, inst)
    for content, fragment in [({"theorem": "3.6", "b": [1, 2, 3]}, "needs 'u'"),
                              ({"theorem": "3.6", "u": [1] * 5, "b": [1, 2]}, "witness b: expected shape (3,)"),
                              ({"theorem": "3.6", "u": [2] * 5, "b": [1, 2, 3]}, "expected a value in [0, 1]"),
                              ({"theorem": "3.3", "b": [1, 2, 3]}, "not 3.6")]:
        w = tmp_path / "w.json"
        w.write_text(json.dumps(content))
        assert main(["theorem", "3.6", "--hmm", str(inst), "--witness", str(w)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0], err


@pytest.mark.parametrize("A, pi0, kind", [
    ([[0, 1], [1, 0]], [0.5, 0.5], "construction-survives"),     # periodic: D still defined
    ([[0.5, 0.5], [0.5, 0.5]], [1, 0], "construction-undefined"),    # P[H_0][1] = 0: D undefined
])
def test_assumption_32_failures_in_theorem_33(capsys, tmp_path, A, pi0, kind):
    inst = tmp_path / "h.json"
    inst.write_text(json.dumps({"kind": "hmm", "A": A, "W": [[0.7, 0.2], [0.3, 0.8]], "pi0": pi0, "mu": [1, -2]}))
    code, res, _ = run_json(capsys, ["theorem", "3.3", "--hmm", str(inst), "--samples", "100"])
    assert code == 3 and res["failed"] == ["3.2"] and res["counterexample"]["kind"] == kind
    if kind == "construction-survives":
        assert res["sequences"]["agree"] == res["sequences"]["checked"] > 0
    else:
        assert "P[H_0][1] = 0" in res["counterexample"]["what"] and res["witness"] is None


def test_an_undefined_construction_that_agrees_everywhere_is_no_counterexample(capsys, tmp_path):
    """P[H_0][1] = 0 makes D undefined, but the recipe applied anyway agrees with F* on every
    short sequence: the evidence is named construction-undefined and human output never heads
    it "counterexample" (issue 35: a counterexample that agrees everywhere)."""
    inst = tmp_path / "h.json"
    inst.write_text(json.dumps({"kind": "hmm", "A": [[0.5, 0.5], [0.5, 0.5]], "W": [[0.7, 0.2], [0.3, 0.8]],
                                "pi0": [1, 0], "mu": [1, -2]}))
    code, res, _ = run_json(capsys, ["theorem", "3.3", "--hmm", str(inst), "--samples", "100"])
    ce = res["counterexample"]
    assert code == 3 and ce["kind"] == "construction-undefined" and ce["construction"]["disagreement"] is None
    assert ce["construction"]["agree"] == ce["construction"]["checked"] > 0
    assert main(["theorem", "3.3", "--hmm", str(inst), "--samples", "100"]) == 3
    text = capsys.readouterr().out
    assert "counterexample:" not in text and "evidence (no counterexample): construction-undefined" in text


def test_a_construction_that_disagrees_is_a_counterexample_checked_by_path_sums(capsys, tmp_path):
    """State 0 is never entered (3.2 fails, D singular) and the recipe applied anyway gets a
    sequence wrong: construction-breaks, and the disagreement holds by brute-force path sums."""
    A = [[0, 0, 0], [1, "1/2", "1/2"], [0, "1/2", "1/2"]]
    W = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    inst = tmp_path / "h.json"
    inst.write_text(json.dumps({"kind": "hmm", "A": A, "W": W, "pi0": ["1/3"] * 3, "mu": [1, -1, 0]}))
    code, res, _ = run_json(capsys, ["theorem", "3.3", "--hmm", str(inst), "--samples", "100"])
    ce = res["counterexample"]
    assert code == 3 and ce["kind"] == "construction-breaks"
    d = ce["construction"]["disagreement"]
    hmm = load_instance(inst)
    post = oracle.path_posterior(hmm, tuple(d["sequence"]))
    assert d["expected"] == int(sum(Fraction(m) * p for m, p in zip([1, -1, 0], post)) >= 0) != d["got"]
    assert main(["theorem", "3.3", "--hmm", str(inst), "--samples", "100"]) == 3
    assert "counterexample: construction-breaks" in capsys.readouterr().out


def test_out_and_certificate_say_what_they_wrote(capsys, tmp_path):
    """``--out F`` and ``--certificate F`` name the file they wrote and how to use it (issue 35
    item 7); with --json the line goes to stderr, so stdout stays one JSON object."""
    out, cert = tmp_path / "inst.json", tmp_path / "cert.json"
    assert main(["theorem", "3.6", "--hidden", "4", "--seed", "1", "--out", str(out), "--certificate", str(cert)]) == 0
    text = capsys.readouterr().out
    assert f"wrote the checked instance to {out} (replay: verify theorem 3.6 --hmm {out})" in text
    assert f"wrote the certificate to {cert}" in text and out.exists() and cert.exists()
    assert main(["theorem", "3.6", "--hidden", "4", "--seed", "1", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"] == "verified" and f"wrote the checked instance to {out}" in captured.err
    assert main(["theorem", "3.6", "--hmm", str(out)]) == 0          # the replay it names works


def test_a_large_run_says_what_it_is_doing_before_the_first_bar(monkeypatch, capsys):
    """Above 1,000 states a run at a terminal announces each phase as it starts (generation,
    assumptions, the head, drawing the sequences), so it is never silent while it builds (issue
    35 item 7: --hidden 16384 printed nothing for its first 10-15 s); off a terminal stderr keeps
    only the progress lines."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert main(["theorem", "3.6", "--hidden", "1100", "--vocab", "200", "--samples", "50"]) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if line.endswith(" ...")]
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["theorem", "3.6", "--hidden", "1100", "--vocab", "200", "--samples", "50"]) == 0
    err = sys.stderr.getvalue().splitlines()
    starts = [line for line in err if line.endswith(" ...")]
    assert [s.split(" ")[0] for s in starts] == ["generating", "checking", "building", "drawing"], err
    first_bar = next(i for i, line in enumerate(err) if "checking Theorem 3.6:" in line)
    assert all(err.index(s) < first_bar for s in starts)
