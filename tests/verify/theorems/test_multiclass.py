"""Tasks with several classes (SPEC section 1; issue 20 section 3): ``k`` heads, one per row of
``mu``, decided exactly by argmax with ties to the largest class, checked against brute-force
path sums; ``verify theorem ID --classes K``; Appendix D's two-row task."""

from __future__ import annotations

import json
from fractions import Fraction as Fr

import numpy as np
import pytest

from headprompt import check
from headprompt.constructions.memory import theorem_c6_witness
from headprompt.constructions.vanilla import theorem_33_witness, theorem_36_witness
from headprompt.models.generate.generators import (appendix_d_hmm, class_share, full_rank_hmm,
                                                   prompt_friendly_hmm)
from headprompt.models.generate.memory import generate_instance
from headprompt.models.hmm.files import load_instance
from headprompt.models.mlm.tuning import sparse_ground_truth
from headprompt.verify.evidence import sequences as seqs
from headprompt.verify.checks.memory.check import check_sequences as memory_check
from headprompt.verify.checks.vanilla.check import check_sequences, identity_check
from tests import oracle
from tests.cli import run_json


def _last_argmax(values):
    top = max(values)
    return max(c for c, v in enumerate(values) if v == top)


def _oracle_decisions(hmm, theorem, b, u, sequences):
    """``{x: (F*(x), F(x))}`` by path sums: argmax_c of ``mu_c . P[H_0 | x]`` and of
    ``b_c . g(x)``, ties to the largest class."""
    filler = [Fr(1)] * hmm.num_states
    out = {}
    for seq in map(list, sequences):
        if oracle.joint_probability(hmm, seq) == 0:
            continue
        post = oracle.path_posterior(hmm, seq, 0)
        emb = [list(hmm.W[z]) for z in seq]
        if theorem == "3.3":
            g = oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [filler] + emb, 0)
        else:
            g = oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [list(u), filler] + emb, 1)
        star = [sum(m * p for m, p in zip(row, post)) for row in hmm.mu]
        head = [sum(Fr(x) * y for x, y in zip(row, g)) for row in b]
        out[tuple(seq)] = (_last_argmax(star), _last_argmax(head))
    return out


@pytest.mark.parametrize("theorem", ["3.3", "3.6"])
def test_k_heads_agree_with_path_sums_on_every_short_sequence(theorem):
    if theorem == "3.3":
        hmm, _ = full_rank_hmm(3, 4, rng=np.random.default_rng(1), classes=3)
        w, u = theorem_33_witness(hmm), None
    else:
        hmm, _ = prompt_friendly_hmm(3, 4, rng=np.random.default_rng(2), classes=3)
        w = theorem_36_witness(hmm)
        u = w.u
    assert hmm.mu.shape == (3, 3) and w.b.shape == (3, 4)
    pool = seqs.exhaustive(4, 2)
    truth = _oracle_decisions(hmm, theorem, w.b, u, pool)
    res = check_sequences(hmm, theorem, w.b, u, pool, keep=True)
    got = {d.sequence: (d.expected, d.got) for d in res.decisions if d.possible}
    assert got == truth
    assert all(e == f for e, f in truth.values())
    assert len({e for e, _ in truth.values()}) >= 2          # not one label everywhere
    assert identity_check(hmm, theorem, w.b, u)["holds"]


def test_swapped_head_rows_are_refuted_against_path_sums():
    hmm, _ = full_rank_hmm(3, 4, rng=np.random.default_rng(1), classes=3)
    w = theorem_33_witness(hmm)
    bad = w.b[[1, 0, 2]]
    pool = seqs.exhaustive(4, 2)
    truth = _oracle_decisions(hmm, "3.3", bad, None, pool)
    assert any(e != f for e, f in truth.values())             # the oracle sees the wrong head
    res = check_sequences(hmm, "3.3", bad, None, pool)
    assert res.agree == sum(e == f for e, f in truth.values()) < res.checked
    d = res.first_disagreement
    assert truth[d.sequence] == (d.expected, d.got)
    assert not identity_check(hmm, "3.3", bad, None)["holds"]


def test_cli_36_classes_3_hidden_12_verifies_with_every_class(capsys):
    code, d, _ = run_json(capsys, ["theorem", "3.6", "--classes", "3", "--hidden", "12", "--samples", "2000"])
    assert code == 0 and d["verdict"] == "verified"
    assert set(d["labels"]) == {"0", "1", "2"} and d["vacuous"] is False
    assert sum(d["labels"].values()) == d["sequences"]["checked"]
    shares = d["instance"]["label_shares"]
    assert min(shares.values()) >= class_share(3)
    assert d["identity"]["holds"] and d["sequences"]["identity_agree"] == d["sequences"]["checked"]
    assert len(d["witness"]["b"]) == 3 and len(d["witness"]["b"][0]) == 10


def test_cli_out_round_trips_and_a_swapped_witness_is_refuted(capsys, tmp_path):
    out = tmp_path / "inst.json"
    argv = ["theorem", "3.6", "--classes", "3", "--hidden", "4", "--vocab", "4", "--exhaustive", "--length", "3"]
    code, d, _ = run_json(capsys, argv + ["--out", str(out)])
    assert code == 0
    model = load_instance(out)
    assert model.mu.shape == (3, 4)
    saved = json.loads(out.read_text())
    code2, d2, _ = run_json(capsys, ["theorem", "3.6", "--hmm", str(out), "--exhaustive", "--length", "3"])
    assert code2 == 0 and d2["labels"] == d["labels"]
    wit = saved["witness"]
    wit["b"] = [wit["b"][1], wit["b"][0], wit["b"][2]]
    wfile = tmp_path / "w.json"
    wfile.write_text(json.dumps(wit))
    code3, d3, _ = run_json(capsys, ["theorem", "3.6", "--hmm", str(out), "--witness", str(wfile),
                                     "--exhaustive", "--length", "3"])
    assert code3 == 1 and d3["verdict"] == "refuted"
    ce = d3["counterexample"]
    b = np.array([[Fr(v) for v in row] for row in wit["b"]], dtype=object)
    u = [Fr(v) for v in wit["u"]]
    truth = _oracle_decisions(model, "3.6", b, u, [ce["sequence"]])
    assert truth[tuple(ce["sequence"])] == (ce["expected"], ce["got"])
    assert ce["expected"] != ce["got"]


def test_wrong_inputs_are_refused_with_one_line(capsys, tmp_path):
    code, _, err = run_json_err(capsys, ["theorem", "3.6", "--classes", "1"])
    assert code == 2 and "--classes 1" in err and "Traceback" not in err
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps({"kind": "hmm", "A": [[1, 0], [0, 1]], "W": [["3/4", "1/4"], ["1/4", "3/4"]],
                                "pi0": ["1/2", "1/2"], "mu": [[1, -1], [0, 1]]}))
    code, _, err = run_json_err(capsys, ["theorem", "3.3", "--hmm", str(inst), "--classes", "2"])
    assert code == 2 and "--classes" in err
    wfile = tmp_path / "w.json"
    wfile.write_text(json.dumps({"theorem": "3.3", "b": ["1", "2"]}))   # one row for a two-class task
    code, _, err = run_json_err(capsys, ["theorem", "3.3", "--hmm", str(inst), "--witness", str(wfile)])
    assert code == 2 and "b" in err and len(err.strip().splitlines()) == 1


def run_json_err(capsys, argv):
    from headprompt.verify.cli.main import main

    code = main(argv + ["--json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_non_exact_mode_is_decided_exactly_and_says_so():
    r = check(None, "3.3", classes=2, hidden=4, vocab=6, samples=300, mode="certified")
    assert r.data["verdict"] == "verified" and r.data["mode"] == "exact"
    assert "decided exactly" in r.data["mode_note"]
    assert set(r.data["sequences"]["decided_by"]) == {"exact"}


def test_appendix_d_two_row_task_through_the_multiclass_path_is_the_binary_difference():
    # Appendix D: "we sample mu with 2 rows and take the label to be the argmax of the two
    # scores"; 6 sparse Gaussian entries, read exactly (each float is a dyadic rational)
    rng = np.random.default_rng(1)
    hmm = appendix_d_hmm(3, 4, rng=rng, exact=True)
    mu = np.array([[Fr(float(v)) for v in row] for row in sparse_ground_truth(2, 3, 6, rng=rng)], dtype=object)
    two = hmm.with_task(mu)
    diff = hmm.with_task(mu[1] - mu[0])
    report = check(two, "3.3", exhaustive=True, length=3)
    assert report.data["verdict"] == "verified" and report.data["vacuous"] is False
    pool = seqs.exhaustive(4, 3)
    w2, w1 = theorem_33_witness(two), theorem_33_witness(diff)
    r2 = check_sequences(two, "3.3", w2.b, None, pool, keep=True)
    r1 = check_sequences(diff, "3.3", w1.b, None, pool, keep=True)
    assert [(d.possible, d.expected, d.got) for d in r2.decisions] == \
        [(d.possible, d.expected, d.got) for d in r1.decisions]
    for seq in pool[:20]:                                      # F* against path sums, both ways
        post = oracle.path_posterior(two, list(seq), 0)
        if sum(post) == 0:
            continue
        scores = [sum(m * p for m, p in zip(row, post)) for row in mu]
        margin = sum((b - a) * p for a, b, p in zip(mu[0], mu[1], post))
        assert _last_argmax(scores) == int(margin >= 0)


def test_memory_theorem_with_classes_and_a_swapped_head(capsys, tmp_path):
    out = tmp_path / "m.json"
    short = ["--exhaustive", "--length", "3"]
    code, d, _ = run_json(capsys, ["theorem", "4.6", "--classes", "3", "--out", str(out)] + short)
    assert code == 0 and set(d["labels"]) == {"0", "1", "2"} and not d["vacuous"]
    model = load_instance(out)
    assert model.mu.shape == (3, model.memory_values)
    wit = json.loads(out.read_text())["witness"]
    wit["b"] = [wit["b"][2], wit["b"][1], wit["b"][0]]
    wfile = tmp_path / "w.json"
    wfile.write_text(json.dumps(wit))
    code, d, _ = run_json(capsys, ["theorem", "4.6", "--hmm", str(out), "--witness", str(wfile)] + short)
    assert code == 1 and d["verdict"] == "refuted"
    ce = d["counterexample"]
    post = oracle.memory_posterior(model, ce["sequence"], model.target_cell)      # path sums
    assert _last_argmax([sum(m * p for m, p in zip(row, post)) for row in model.mu]) == ce["expected"] != ce["got"]


def test_memory_decisions_agree_with_path_sums():
    model, _ = generate_instance("C.6", 3, 1, 2, 6, rng=np.random.default_rng(3), classes=3)
    w = theorem_c6_witness(model)
    pool = seqs.exhaustive(6, 2)
    res = memory_check(model, w, w.H_star, pool, keep=True)
    assert res.agree == res.in_R > 0
    seen = set()
    for d in res.decisions:
        if not d.possible:
            continue
        post = oracle.memory_posterior(model, list(d.sequence), model.target_cell)
        assert d.expected == _last_argmax([sum(m * p for m, p in zip(row, post)) for row in model.mu])
        seen.add(d.expected)
    assert len(seen) >= 2


def test_failed_assumptions_on_k_classes_are_exit_3_not_a_crash(capsys, tmp_path):
    from headprompt.models.generate.memory import break_nondegeneracy
    from headprompt.models.hmm.files import save_instance

    model, _ = generate_instance("4.6", 3, 1, 2, 6, rng=np.random.default_rng(0), classes=3)
    broken, _ = break_nondegeneracy(model, True)
    path = tmp_path / "broken.json"
    save_instance(broken, path)
    code, d, _ = run_json(capsys, ["theorem", "4.6", "--hmm", str(path), "--samples", "50"])
    assert code == 3 and d["verdict"] == "assumptions-fail"
    assert d["counterexample"]["checked"] is True                # the per-state certificates, rechecked
    code, d, _ = run_json(capsys, ["theorem", "3.3", "--classes", "3", "--hidden", "5", "--vocab", "3",
                                   "--samples", "50"])
    assert code == 3 and "binary" in d["counterexample"]["what"]


def test_report_rows_of_k_classes_match_path_sums():
    report = check(None, "3.3", classes=3, hidden=3, vocab=4, exhaustive=True, length=2)
    model = report.details["model"]
    truth = _oracle_decisions(model, "3.3", report.details["witness"].b, None, seqs.exhaustive(4, 2))
    rows = [r for r in report.rows() if r["possible"]]
    assert len(rows) == len(truth) > 0
    for r in rows:
        assert truth[tuple(r["sequence"])] == (r["F_star"], r["F"]) and r["agree"]
        assert r["task_margin"] is None                          # no single margin for k classes


def test_generated_tie_is_a_real_tie_between_the_two_best_classes():
    hmm, info = full_rank_hmm(3, 4, rng=np.random.default_rng(1), classes=3)
    assert info["tie_sequence"] is not None
    post = oracle.path_posterior(hmm, list(info["tie_sequence"]), 0)
    scores = sorted(sum(m * p for m, p in zip(row, post)) for row in hmm.mu)
    assert scores[-1] == scores[-2]


def test_a_float_k_class_model_is_rationalized_entrywise():
    hmm, _ = full_rank_hmm(3, 4, rng=np.random.default_rng(1), classes=3)
    report = check(hmm.to_float(), "3.3", rationalize=0.0, exhaustive=True, length=2)
    assert report.data["verdict"] == "verified"
    exact = report.details["model"].mu
    assert exact.shape == (3, 3)
    assert all(exact[c][h] == Fr(str(float(hmm.mu[c][h]))) for c in range(3) for h in range(3))


def test_a_k_class_run_beyond_the_exact_limit_is_refused_without_a_certified_way_out(capsys):
    code, _, err = run_json_err(capsys, ["theorem", "3.6", "--classes", "3", "--hidden", "60",
                                         "--samples", "300000", "--length", "64"])
    assert code == 2 and "decided exactly" in err and "--mode certified" not in err
