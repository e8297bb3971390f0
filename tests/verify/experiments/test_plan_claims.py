"""The plan on file (hash stable under layout, changed by any setting; a changed plan refused
without --replan; a --plan run refused until its plan is in a git commit) and the tested claims (per-trial gate exclusion counted; the 2 x 2
interaction computed from its four cells, by hand here)."""

import json
import os
import shutil
import subprocess

import pytest

from headprompt.verify.cli.main import main
from headprompt.verify.experiments.claims import evaluate, family, claim_tests
from headprompt.verify.experiments.config import SCALES, scale_to_dict
from headprompt.verify.experiments.plan import build_plan, plan_commit, plan_hash


def _plan(**change):
    cfg = scale_to_dict(SCALES["tiny"])
    cfg.update(change.pop("config", {}))
    kw = {"trials": 2, "seed": 26, "models": "both", "share_pretraining": False, **change}
    return build_plan("fig3-left", "tiny", cfg, **kw)


def test_plan_hash_is_stable_and_changes_with_any_setting():
    base = _plan()
    assert plan_hash(base) == plan_hash(_plan()) == plan_hash(json.loads(json.dumps(base, indent=3)))
    reordered = dict(reversed(list(base.items())))
    assert plan_hash(reordered) == plan_hash(base)                 # canonical JSON: key order is irrelevant
    for change in ({"trials": 3}, {"seed": 27}, {"models": "exact"}, {"config": {"hidden_sizes": [4, 12]}},
                   {"config": {"gate_z": 2.0}}):
        assert plan_hash(_plan(**change)) != plan_hash(base), change
    assert {"settings", "trials", "seed", "seeds", "config", "gate", "baselines", "tests", "rule", "family"} <= set(base)
    assert base["family"] == family("fig3-left") == ["claim:mlm", "claim:exact"]


def test_a_changed_plan_is_refused_without_replan(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    plan = tmp_path / "plan.json"                                  # tmp_path is no git repository
    argv = ["experiment", "fig3-left", "--scale", "tiny", "--model", "exact", "--device", "cpu",
            "--out", str(tmp_path / "out"), "--plan", str(plan), "--seed", "26", "--json"]
    assert main(argv) == 2                                         # nothing runs: the plan is written first
    err = capsys.readouterr().err
    assert "not in a git commit" in err and "git add" in err and len(err.strip().splitlines()) == 1
    first = json.loads(plan.read_text())
    assert first["sha256"] == plan_hash(first["plan"])
    assert main(argv) == 2                                         # the same plan again: still uncommitted
    assert "not in a git commit" in capsys.readouterr().err
    changed = [a if a != "26" else "27" for a in argv]
    assert main(changed) == 2
    err = capsys.readouterr().err
    assert "holds a different plan" in err and "--replan" in err and len(err.strip().splitlines()) == 1
    assert json.loads(plan.read_text())["sha256"] == first["sha256"]    # left as it was
    assert main(changed + ["--replan"]) == 2
    assert "not in a git commit" in capsys.readouterr().err
    assert json.loads(plan.read_text())["sha256"] != first["sha256"]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})
    return subprocess.run(["git", "log", "-1", "--format=%H"], cwd=cwd, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_plan_runs_only_once_committed_and_summary_names_the_commit(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    plan = repo / "plan.json"
    cfg = tmp_path / "one.json"
    cfg.write_text(json.dumps({"hidden_sizes": [4]}))
    argv = ["experiment", "fig3-left", "--scale", "tiny", "--model", "exact", "--device", "cpu", "--trials", "1",
            "--config", str(cfg), "--out", str(tmp_path / "out"), "--plan", str(plan), "--json"]
    assert main(argv) == 2 and not (tmp_path / "out" / "results.csv").exists()
    digest = json.loads(plan.read_text())["sha256"]
    assert plan_commit(plan, digest) is None
    _git(repo, "add", "plan.json")
    commit = _git(repo, "commit", "-q", "-m", "plan")
    assert plan_commit(plan, digest) == commit
    capsys.readouterr()
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["plan"]["commit"] == commit and (tmp_path / "out" / "results.csv").exists()
    # the hash named in a commit message counts too (the plan file itself may live elsewhere)
    other = repo / "elsewhere.json"
    other.write_text(plan.read_text())
    (repo / "note.txt").write_text("x")
    _git(repo, "add", "note.txt")
    named = _git(repo, "commit", "-q", "-m", f"plan of the next run: sha256 {digest}")
    assert plan_commit(other, digest) in (commit, named)
    assert plan_commit(other, "0" * 64) is None


def _rows(trial, H, gate_ok, accs):
    base = {"experiment": "fig3-left", "hidden_states": H, "trial": trial}
    out = []
    for (model, method), acc in accs.items():
        r = {**base, "model": model, "method": method, "accuracy": acc, "control": False}
        if model == "mlm":
            r.update(gate0_tv=0.01, gate0_se=0.001, gate0_bound=0.02 if gate_ok else 0.06, gate0_sequences=100,
                     gate_passed=gate_ok)
        out.append(r)
    return out


def test_a_trial_that_fails_the_gate_is_excluded_alone_and_counted():
    records = []
    for t in range(4):
        for H in (12, 15):
            ok = not (H == 15 and t == 2)
            records += _rows(t, H, ok, {("mlm", "prompt-fair"): 0.9 + 0.01 * t, ("mlm", "head-fair"): 0.8,
                                        ("mlm", "prompt"): 0.85, ("mlm", "head"): 0.8,
                                        ("exact", "prompt-fair"): 0.9, ("exact", "head-fair"): 0.8 + 0.01 * t,
                                        ("exact", "prompt"): 0.9, ("exact", "head"): 0.8})
    out = evaluate("fig3-left", records, "both")
    claim = {p["id"]: p for p in out["predictions"]}
    assert claim["claim:mlm"]["excluded_trials"] == 1 and claim["claim:mlm"]["excluded"] == [[15, 2]]
    assert claim["claim:mlm"]["pooled"]["pairs"] == 7                 # 8 pairs, one trial out
    assert claim["claim:exact"]["excluded_trials"] == 0 and claim["claim:exact"]["pooled"]["pairs"] == 8
    per = {d["setting"]: d for d in claim["claim:mlm"]["paired"]}
    assert per[15]["trials"] == 3 and per[15]["difference"] == pytest.approx((0.10 + 0.11 + 0.13) / 3)
    assert out["gate"]["failed"] == 1 and out["gate"]["mlms"] == 8
    assert "trials excluded by the gate: 1" in claim["claim:mlm"]["evidence"]
    assert claim["claim:mlm"]["family_size"] == 2 and not claim["reproduction:mlm"]["in_family"]


def test_the_interaction_is_the_difference_of_differences_of_the_2x2():
    (inter,) = [t for t in claim_tests("fig3-right", "exact") if t["kind"] == "interaction"]
    cells = {("exact", "attention-fair", "memory"): 0.95, ("exact", "head-fair", "memory"): 0.80,
             ("exact", "attention-fair", "vanilla"): 0.85, ("exact", "head-fair", "vanilla"): 0.83,
             ("exact", "attention", "memory"): 0.9, ("exact", "head", "vanilla"): 0.8,
             ("none", "attention-tokens-fair", "memory"): 0.7}
    records = [{"experiment": "fig3-right", "hidden_total": 8, "data": d, "trial": t, "model": m, "method": meth,
                "accuracy": acc + 0.001 * t * (d == "memory"), "control": False}
               for t in range(3) for (m, meth, d), acc in cells.items()]
    out = evaluate("fig3-right", records, "exact")
    (got,) = [p for p in out["predictions"] if p["id"] == inter["id"]]
    by_hand = [(0.95 + 0.001 * t - (0.80 + 0.001 * t)) - (0.85 - 0.83) for t in range(3)]
    assert got["paired"][0]["difference"] == pytest.approx(sum(by_hand) / 3)
    assert got["in_family"] and got["family_size"] == len(family("fig3-right", "exact")) == 4
