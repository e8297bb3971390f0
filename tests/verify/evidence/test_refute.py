"""``verify counterexample``: the constructed instances break exactly the dropped assumption
(checked by brute-force oracles), every statement-level certificate holds by path sums (and,
for Theorem 3.6, for random prompts by sympy), one-label tasks are vacuous, and the written
certificates are accepted by certcheck and rejected once tampered with."""

import itertools
import json
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy

from headprompt.models.hmm.values import HMM
from headprompt.verify.cli.main import main
from headprompt.verify.evidence.breaking import KNOWN, known_construction, twin_states_hmm
from headprompt.verify.studies.refute import CounterexampleRequest, find_counterexample
from headprompt.verify.evidence.universal import check_prompt_universal_certificate

from tests import oracle
from tests.cli import run_json


def _oracle_holds(hmm: HMM, assumption: str) -> bool:
    n = hmm.num_states
    if assumption == "3.1":
        return oracle.sympy_rank([list(hmm.W[:, h]) for h in range(n)]) == n
    if assumption == "3.2":
        return oracle.is_ergodic_chain(oracle.as_lists(hmm.A), list(hmm.pi0))
    return oracle.assumption_35(hmm)


def _assumptions(tid):
    return {"3.3": ("3.1", "3.2"), "3.6": ("3.2", "3.5")}[tid]


@pytest.mark.parametrize("tid, drop", sorted(KNOWN))
def test_constructed_instance_breaks_exactly_the_dropped_assumption(tid, drop):
    hmm, _ = known_construction(tid, drop)
    assert {a: _oracle_holds(hmm, a) for a in _assumptions(tid)} == {a: a != drop for a in _assumptions(tid)}
    res = find_counterexample(CounterexampleRequest(theorem=tid, drop=drop))
    assert res["failed"] == [drop] and res["found"] and res["kind"] == "statement" and res["proof"]


def _g1_by_paths(hmm, seq):
    return oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [[Fraction(1)] * hmm.num_states] + [list(hmm.W[z]) for z in seq], 0)


def _label_by_paths(hmm, seq):
    assert oracle.joint_probability(hmm, list(seq)) > 0                 # Pr(x) > 0
    post = oracle.path_posterior(hmm, list(seq), 0)
    return int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0)


def _signs_ok(cert, labels):
    y = [Fraction(v) for v in cert["certificate"]["y"]]
    z = [Fraction(v) for v in cert["certificate"]["z"]]
    assert all(v >= 0 for v in y + z) and any(y)
    assert all(yk == 0 for yk, lab in zip(y, labels) if lab == 1) and all(zk == 0 for zk, lab in zip(z, labels) if lab == 0)
    return y, z


@pytest.mark.parametrize("tid, drop", sorted(KNOWN))
def test_statement_certificate_holds_by_path_sums(tid, drop):
    res = find_counterexample(CounterexampleRequest(theorem=tid, drop=drop))
    model = known_construction(tid, drop)[0]
    cert = res["counterexample"]
    labels = [_label_by_paths(model, s) for s in cert["sequences"]]
    assert labels == cert["labels"] and set(labels) == {0, 1}
    y, z = _signs_ok(cert, labels)
    if tid == "3.3":
        feats = [_g1_by_paths(model, s) for s in cert["sequences"]]
        assert all(sum((yk - zk) * g[x] for yk, zk, g in zip(y, z, feats)) == 0 for x in range(model.num_tokens))
        return
    # Theorem 3.6: sum (y_k - z_k) W tau_k(u) = 0 for random prompts u, tau by path sums (sympy rationals)
    rng = random.Random(0)
    filler = [Fraction(1)] * model.num_states
    for _ in range(5):
        u = [Fraction(rng.randint(0, 7), 7) for _ in range(model.num_states)]
        taus = [oracle.path_tau(model.A, model.pi0, [u, filler] + [list(model.W[t]) for t in s], 1)
                for s in cert["sequences"]]
        total = sympy.zeros(model.num_tokens, 1)
        for yk, zk, tau in zip(y, z, taus):
            Wtau = sympy.Matrix(oracle.as_lists(model.W)).applyfunc(lambda v: sympy.Rational(str(v))) * \
                sympy.Matrix([sympy.Rational(str(v)) for v in tau])
            total += sympy.Rational(str(yk - zk)) * Wtau
        assert total == sympy.zeros(model.num_tokens, 1)


def test_a_tampered_universal_certificate_is_rejected():
    res = find_counterexample(CounterexampleRequest(theorem="3.6"))
    model = known_construction("3.6", "3.5")[0]
    cert = res["counterexample"]
    assert check_prompt_universal_certificate(model, cert)[0]
    bad = json.loads(json.dumps(cert))
    bad["certificate"]["z"] = ["2" if v != "0" else v for v in bad["certificate"]["z"]]
    assert not check_prompt_universal_certificate(model, bad)[0]


@pytest.mark.parametrize("n, X, seed", [(4, 2, 1), (6, 3, 2), (9, 5, 3)])
def test_sized_twin_instances_give_certificates(n, X, seed):
    hmm, _ = twin_states_hmm(n, X, rng=np.random.default_rng(seed))
    assert not _oracle_holds(hmm, "3.5") and _oracle_holds(hmm, "3.2")
    res = find_counterexample(CounterexampleRequest(theorem="3.6", hidden=n, vocab=X, seed=seed))
    assert res["kind"] == "statement" and res["counterexample"]["kind"] == "no-prompt-and-head"
    assert [_label_by_paths(hmm, s) for s in res["counterexample"]["sequences"]] == res["counterexample"]["labels"]


def test_a_one_label_task_is_vacuous_never_agreement(tmp_path):
    hmm, _ = twin_states_hmm()
    flat = hmm.with_task([Fraction(1)] * 3)                  # mu > 0: F* = 1 on every sequence
    res = find_counterexample(CounterexampleRequest(theorem="3.6", model=flat, source="flat"))
    assert res["failed"] == ["3.5"] and not res["found"] and res["vacuous"] is True
    assert "vacuous" in res["construction"]["what"] and "vacuous" in res["reading"]
    assert "agrees with F*" not in res["construction"]["what"] and "not a proof" in res["reading"].lower()


def test_cli_certificates_are_accepted_and_tampering_rejected(capsys, tmp_path):
    for tid in ("3.3", "3.6"):
        cert, inst = tmp_path / f"c{tid}.json", tmp_path / f"i{tid}.json"
        code, res, _ = run_json(capsys, ["counterexample", tid, "--certificate", str(cert), "--out", str(inst)])
        assert code == 1 and res["found"] and res["certificate"] == str(cert)
        run = lambda path: subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(path)],  # noqa: E731
                                          capture_output=True, text=True, timeout=120)
        ok = run(cert)
        assert ok.returncode == 0 and ok.stdout.startswith("accepted"), ok.stdout + ok.stderr
        data = json.loads(cert.read_text())
        data["certificate"]["y"] = ["0" for _ in data["certificate"]["y"]]
        cert.write_text(json.dumps(data))
        assert run(cert).returncode == 1
        code, rep, _ = run_json(capsys, ["theorem", tid, "--hmm", str(inst), "--samples", "20"])
        assert code == 3 and rep["failed"] == [{"3.3": "3.1", "3.6": "3.5"}[tid]]


def test_same_file_for_out_and_certificate_is_refused(capsys, tmp_path):
    f = str(tmp_path / "x.json")
    assert main(["counterexample", "3.3", "--out", f, "--certificate", f]) == 2
    assert "two different files" in capsys.readouterr().err


def test_memory_counterexample_is_a_construction_disagreement_on_two_labels(capsys):
    code, res, _ = run_json(capsys, ["counterexample", "4.6"])
    assert code == 1 and res["kind"] == "construction" and res["failed"] == ["4.5"]
    ce = res["counterexample"]
    assert min(ce["labels"].values()) > 0 and ce["disagreement"]["expected"] != ce["disagreement"]["got"]


def test_nothing_found_names_the_bound_and_is_not_a_proof(capsys):
    code, res, _ = run_json(capsys, ["counterexample", "4.3", "--drop", "3.2", "--examples", "5"])
    assert code == 0 and not res["found"] and "not a proof" in res["reading"] and "5 random instances" in res["reading"]


def test_a_construction_level_counterexample_is_certified_as_a_refuted_witness(capsys, tmp_path):
    """On a given instance where only the construction fails (3.3 without 3.2: the task is linearly
    separable on G_1 there, so no statement certificate exists), --certificate writes the refuted
    witness's certificate, which certcheck accepts; for attention heads it is refused up front."""
    example = Path(__file__).resolve().parents[3] / "examples" / "counterexamples" / "3.3-drop-3.2.json"
    cert = tmp_path / "c.json"
    code, res, _ = run_json(capsys, ["counterexample", "3.3", "--hmm", str(example), "--certificate", str(cert)])
    assert code == 1 and res["kind"] == "construction" and res["dropped"] == "3.2"
    assert "statement itself is not refuted" in res["reading"]
    proc = subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(cert)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "refuted" in proc.stdout
    assert main(["counterexample", "4.6", "--certificate", str(tmp_path / "m.json")]) == 2
    assert "attention heads have no statement-level certificate" in capsys.readouterr().err


def test_impossible_sequences_are_not_counted_as_labels(tmp_path, capsys):
    """Found by an audit: a token the HMM never emits made every sequence holding it count as
    label 1 (its posterior is undefined), so a one-label task passed the vacuity guard and the
    construction's failure was reported as a counterexample (exit 1). Sequences with Pr(x) = 0
    are outside every claim: the labels count only possible ones (path sums decide which), and
    the instance with the dead token row removed gives the same reading."""
    dead = {"kind": "hmm", "A": [["3/7", "1"], ["4/7", "0"]], "W": [["1/2", "1/2"], ["0", "0"], ["1/2", "1/2"]],
            "pi0": ["1/2", "1/2"], "mu": ["-2", "1"]}
    alive = {**dead, "W": [dead["W"][0], dead["W"][2]]}
    readings = []
    for name, inst in (("dead", dead), ("alive", alive)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(inst))
        code, out, _ = run_json(capsys, ["counterexample", "3.3", "--hmm", str(path)])
        hmm = HMM.create(*(inst[k] for k in ("A", "W", "pi0", "mu")))
        vocab = len(inst["W"])
        possible = [s for t in range(1, 4) for s in itertools.product(range(vocab), repeat=t)
                    if oracle.joint_probability(hmm, list(s)) > 0]
        labels = out["construction"]["labels"]
        assert sum(labels.values()) == len(possible)
        mu = [Fraction(v) for v in inst["mu"]]
        stars = {int(sum(m * q for m, q in zip(mu, oracle.path_posterior(hmm, list(s)))) >= 0) for s in possible}
        assert stars == {0} and labels["1"] == 0          # F* = 0 on every possible sequence
        assert code == 0 and out["construction"]["vacuous"] and not out["found"]
        readings.append((code, out["found"], out["construction"]["labels"]))
    assert readings[0] == readings[1]
