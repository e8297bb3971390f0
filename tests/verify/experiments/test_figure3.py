"""Downstream tuning and ``verify experiment``: the exact-Gbar prompt path against the torch
backend, prompt tuning solving an Assumption 3.5 instance that no linear head fits, task
generation, and the CLI end to end at tiny scale."""

import csv
import json

import numpy as np
import pytest
import torch

from headprompt.models.inference import floats as inference_float
from headprompt.models.inference import torch_backend as inference_torch
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.hmm.values import HMM
from headprompt.models.generate.sampling import sample
from headprompt.models.mlm.tuning import (SPLITS, DownstreamTask, ExactBackbone, TaskConfig, TuneConfig, make_task,
                           sparse_ground_truth, task_labels, tune)
from headprompt.verify.checks.vanilla.assumptions import check_32, check_35
from headprompt.verify.cli.main import main

CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("one_torch_thread")



def test_exact_prompted_factorisation_matches_full_gbar():
    hmm = appendix_d_hmm(5, 4, rng=np.random.default_rng(0))
    backbone = ExactBackbone(hmm, CPU)
    tokens = sample(hmm, 6, 7, rng=np.random.default_rng(1))[0]                    # [n, T]
    theta = torch.randn(3, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64) / 5
    got = backbone.prompted(backbone.prepare(tokens), theta)                        # [n, X]
    A, W, pi0 = inference_torch.hmm_tensors(hmm)
    u = torch.sigmoid(backbone.LOGIT_SCALE * theta)
    emb = torch.cat([u.expand(6, 3, 5), torch.ones(6, 1, 5, dtype=torch.float64),
                     W[torch.as_tensor(tokens)]], dim=1)                            # [n, P+1+T, H]
    want = inference_torch.gbar(A, W, pi0, emb, 3)
    assert torch.allclose(got.double(), want, atol=1e-6)
    # without prompts, the head's input is Gbar_0 of (1, e(x)), i.e. G_1 of any x_1 followed by x
    full = np.concatenate([np.zeros((6, 1), dtype=np.int64), tokens], axis=1)
    assert np.allclose(backbone.mask_outputs(tokens).numpy(), inference_float.conditionals(hmm, full)[:, 0],
                       atol=1e-6)


# Built for Assumption 3.5 with |H| = 4 > |X| = 2: column 0 of A is supported on H* = {0, 1}
# (B = {0}), W's columns 0 and 1 are independent, the task reads only states 0 and 1
# (label 1 iff P[H_0 = 1 | x] > P[H_0 = 0 | x]). A linear head sees only W D P[H_0 | x], a
# 2-vector, which mixes in states 2 and 3; the prompt 1_B removes them (Theorem 3.6).
A_35 = [["7/10", "1/5", "1/20", "3/20"], ["3/10", "1/5", "3/20", "1/20"],
        ["0", "1/5", "2/5", "9/20"], ["0", "2/5", "2/5", "7/20"]]
W_35 = [["1/5", "11/20", "1/10", "19/20"], ["4/5", "9/20", "9/10", "1/20"]]
MU_35 = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])   # argmax rows: label 1 iff p_1 > p_0


def _best_linear_accuracy(features: torch.Tensor, labels: torch.Tensor) -> float:
    """Training accuracy of a thoroughly fitted logistic regression (LBFGS)."""
    f = ((features - features.mean(0)) / features.std(0).clamp_min(1e-9)).double()
    lin = torch.nn.Linear(f.shape[1], 2).double()
    opt = torch.optim.LBFGS(lin.parameters(), max_iter=500)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(lin(f), labels)
        loss.backward()
        return loss

    opt.step(closure)
    return float((lin(f).argmax(1) == labels).double().mean())


def test_prompt_tuning_solves_assumption_35_instance_where_head_cannot():
    exact = HMM.create(A_35, W_35, ["1/4"] * 4, mu=[-1, 1, 0, 0], exact=True)
    assert check_32(exact)["holds"]
    a35 = check_35(exact)
    assert a35["holds"] and a35["H_star"] == [0, 1] and a35["B"] == [0]
    hmm = exact.to_float()
    assert hmm.num_states > hmm.num_tokens
    toks = sample(hmm, 2200, 8, rng=np.random.default_rng(0))[0]
    tokens = dict(zip(SPLITS, np.split(toks, [1600, 1800])))
    post = {s: inference_float.posterior_h0(hmm, tokens[s]) for s in SPLITS}
    task = DownstreamTask(tokens, post, MU_35, {s: task_labels(post[s], MU_35) for s in SPLITS}, 0)
    backbone = ExactBackbone(hmm, CPU)
    prompt = tune(backbone, task, "prompt", TuneConfig(), seed=0)
    head = tune(backbone, task, "head", TuneConfig(), seed=0)
    assert prompt["train"] >= 0.99 and prompt["test"] >= 0.99, prompt
    assert head["train"] < 0.85, head
    # no linear head fits, however well optimised
    best = _best_linear_accuracy(backbone.mask_outputs(tokens["train"]), torch.as_tensor(task.labels["train"]))
    assert best < 0.85
    assert task.majority_accuracy("train") < 0.6


def test_sparse_ground_truth_and_degenerate_redraws(monkeypatch):
    mu = sparse_ground_truth(2, 5, 6, rng=np.random.default_rng(0))
    assert mu.shape == (2, 5) and np.count_nonzero(mu) == 6
    assert np.count_nonzero(sparse_ground_truth(2, 2, 6, rng=np.random.default_rng(0))) == 4
    import headprompt.models.mlm.tuning as tuning

    calls = []

    def first_degenerate(rows, size, nonzeros, *, rng):
        calls.append(1)
        return np.zeros((rows, size)) if len(calls) == 1 else sparse_ground_truth(rows, size, nonzeros, rng=rng)

    monkeypatch.setattr(tuning, "sparse_ground_truth", first_degenerate)
    hmm = appendix_d_hmm(6, 10, rng=np.random.default_rng(3))
    task = make_task(hmm, TaskConfig(length=8, num_train=300, num_val=50, num_test=50, min_minority=0.1),
                     rng=np.random.default_rng(4))
    assert task.redraws >= 1 and len(calls) == task.redraws + 1      # all-zero mu: one label only
    for s in SPLITS:
        assert len(np.unique(task.labels[s])) == 2
        assert np.array_equal(task.labels[s], task_labels(task.posteriors[s], task.mu))
    assert min(task.labels["train"].mean(), 1 - task.labels["train"].mean()) >= 0.1


# a micro configuration for tests that run the experiment machinery, not its science
MICRO = {"hidden_sizes": [4], "memory_values": [2],
         "model": {"block_size": 32, "n_layer": 1, "n_head": 2, "n_embd": 16},
         "pretrain": {"max_steps": 6, "eval_every": 3, "gate_sequences": 16, "gate_length": 9, "batch_size": 8},
         "task": {"length": 8, "num_train": 60, "num_val": 20, "num_test": 40},
         "tune": {"epochs": 1, "num_prompts": 4}}


def test_tie_is_label_one_through_models_task():
    mu = np.array([[0.5, 0.0], [0.0, 0.5]])
    post = np.array([[0.5, 0.5], [0.6, 0.4], [0.4, 0.6]])
    assert task_labels(post, mu).tolist() == [1, 0, 1]          # a tie goes to label 1 (SPEC)


@pytest.mark.parametrize("name,rows,records", [("fig3-left", 2 * 10, 2 * 10), ("fig3-right", 2 * 4, 10 + 8)])
def test_cli_experiment_tiny_end_to_end(name, rows, records, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    one = tmp_path / "one.json"                     # fig3-right: one |M| keeps CI fast
    one.write_text(json.dumps({"memory_values": [2]}))
    code = main(["experiment", name, "--scale", "tiny", "--trials", "1", "--device", "cpu",
                 "--out", str(out), "--json"] + (["--config", str(one)] if name == "fig3-right" else []))
    assert code == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed == json.loads((out / "summary.json").read_text())
    # off a terminal (``2> log``): one line per finished job, with elapsed time and (but the last) ETA
    lines = [ln for ln in captured.err.splitlines() if ln.startswith(f"{name} (tiny): ")]
    jobs = 2 if name == "fig3-left" else 2
    assert len(lines) == jobs and all("elapsed" in ln and "trial 0" in ln for ln in lines)
    assert "ETA" in lines[0] and f"{jobs}/{jobs} jobs" in lines[-1]
    assert {"experiment", "scale", "device", "rows", "predictions", "quality", "controls", "majority",
            "config", "seed", "version", "trials"} <= set(printed)
    assert (printed["experiment"], printed["scale"], printed["device"]) == (name, "tiny", "cpu")
    assert printed["config"]["pretrain"]["gate_tv"] == 0.05 and printed["version"]
    assert len(printed["rows"]) == rows      # settings x (model, method) pairs, one trial each
    for row in printed["rows"]:
        assert {"setting", "method", "model", "accuracy", "ci95", "trials"} <= set(row)
        assert row["model"] in ("mlm", "exact") and row["trials"] == 1
        assert 0 <= row["ci95"][0] <= row["accuracy"] <= row["ci95"][1] <= 1
    assert {r["model"] for r in printed["rows"]} == {"mlm", "exact"}
    assert {r["method"] for r in printed["rows"]} == ({"head", "head-fair", "prompt", "prompt-fair", "prompt-refit"}
                                                       if name == "fig3-left" else
                                                       {"head", "head-fair", "attention", "attention-fair"})
    # per model: the fair claim and the paper protocol's reproduction (fig3-left: and the refit
    # sensitivity analysis; fig3-right: and the interaction)
    assert len(printed["predictions"]) == 6
    # the paper's estimand beside the clean one, the searches' edges, the prompts' movement, and
    # the paper-style figure beside the diagnostic one
    iid = printed["estimand_iid"]
    assert len(iid["rows"]) == rows and len(iid["predictions"]) == len(printed["predictions"])
    assert {(e["model"], e["method"]) for e in printed["search_edges"]} >= {("exact", "head-fair"), ("mlm", "head-fair")}
    for e in printed["search_edges"]:
        assert e["on_edge"] + e["path_end"] <= e["selections"] and e["edge_beats"] <= e["on_edge"]
    if name == "fig3-left":
        assert {m["method"] for m in printed["prompt_movement"]} == {"prompt", "prompt-fair", "prompt-refit"}
        assert all(0 <= m["tv_mean"] <= 1 and 0 <= m["predictions_changed"] <= 1 for m in printed["prompt_movement"])
    assert (out / f"{name}.png").stat().st_size > 0 and (out / f"{name}-paper.png").stat().st_size > 0
    for p in printed["predictions"]:
        assert isinstance(p["held"], bool) and p["evidence"] and p["paired"]
        for d in p["paired"]:
            assert d["ci95"] is None                                      # one trial: no interval
        assert not p["held"]                                              # so nothing can hold
        assert p["verdict"].startswith("inconclusive")                   # one trial per setting: no test
        assert p["excluded_trials"] == len(p["excluded"]) and "excluded by the gate" in p["evidence"]
    for g in printed["gate"]["trials"]:       # the gate at position 0: an upper bound under the threshold
        assert g["bound"] == pytest.approx(g["tv0"] + printed["config"]["gate_z"] * g["se"], abs=2e-6)   # rounded to 6 places
        assert g["passed"] == (g["bound"] <= printed["config"]["pretrain"]["gate_tv"])
    assert printed["gate"]["failed"] == sum(not g["passed"] for g in printed["gate"]["trials"])
    assert printed["splits"]["test_train_overlap_max"] == 0 == printed["splits"]["val_train_overlap_max"]
    plan = json.loads((out / "plan.json").read_text())
    assert printed["plan"]["sha256"] == plan["sha256"] and plan["plan"]["experiment"] == name
    if name == "fig3-right":
        assert {c["control"] for c in printed["controls"]} == {
            "same attention head on the vanilla HMM's data",
            "token-only attention head (G replaced by a constant) on the memory data"}
    with open(out / "results.csv") as fh:
        rows_csv = list(csv.DictReader(fh))
    assert len(rows_csv) == records
    assert {"gate_tv", "loss_gap", "gate_passed", "majority", "control", "hmm", "hmm_seed",
            "pretrain_key"} <= set(rows_csv[0])
    for r in rows_csv:      # each row names its HMM and (MLM rows) its pretraining checkpoint
        assert r["hmm_seed"] and (r["model"] != "mlm" or (tmp_path / "cache" / f"mlm-{r['pretrain_key']}.pt").exists())
    # the control rows are in results.csv: token-only and vanilla + attention on fig3-right
    controls = {(r["model"], r["method"], r.get("data")) for r in rows_csv if r["control"] == "True"}
    assert controls == (set() if name == "fig3-left" else {
        ("none", "attention-tokens", "memory"), ("none", "attention-tokens-fair", "memory"),
        *((m, meth, "vanilla") for m in ("mlm", "exact") for meth in ("attention", "attention-fair")),
        *((m, meth, "memory") for m in ("mlm", "exact") for meth in ("head", "head-fair"))})
    for r in rows_csv:      # the fair searches name the configuration validation selected
        searched = r["method"].endswith("-fair") or r["method"] == "prompt-refit"   # refit: an L2 search
        assert bool(r["selected"]) == searched and r["test_overlap"] == "0.0"
    assert (out / f"{name}.png").stat().st_size > 1000


def test_each_trial_draws_a_new_hmm_and_pretrains_again(tmp_path, monkeypatch):
    from headprompt.verify.experiments.figure3 import run_experiment
    from headprompt.verify.experiments.jobs import job_model as _model, job_specs

    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    summary = run_experiment("fig3-left", "tiny", device=CPU, trials=2, out=tmp_path / "a", progress=False,
                             config=MICRO)
    (trials,) = [q["trials"] for q in summary["quality"]]
    assert len(trials) == 2 and trials[0]["tv"] != trials[1]["tv"]
    with open(tmp_path / "a" / "results.csv") as fh:
        assert {r["pretrain_cached"] for r in csv.DictReader(fh)} == {"False"}
    specs = job_specs("fig3-left", summary["config"], seed=0, trials=2, share_pretraining=False, device="cpu")
    assert not np.array_equal(np.asarray(_model(specs[0]).A), np.asarray(_model(specs[1]).A))
    shared = run_experiment("fig3-left", "tiny", device=CPU, trials=2, out=tmp_path / "b", progress=False,
                            config=MICRO, share_pretraining=True)
    (trials,) = [q["trials"] for q in shared["quality"]]
    assert trials[0]["tv"] == trials[1]["tv"]
    # a rerun reuses every finished job
    again = run_experiment("fig3-left", "tiny", device=CPU, trials=2, out=tmp_path / "a", progress=False,
                           config=MICRO)
    assert again["jobs"]["reused"] == 2 and again["rows"] == summary["rows"]


def test_a_failed_job_is_reported_and_the_others_kept(tmp_path, monkeypatch, capsys):
    import headprompt.verify.experiments.jobs as jobs

    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    real = jobs.run_job

    def flaky(spec, progress=False):
        if spec["trial"] == 1:
            raise RuntimeError("simulated worker failure")
        return real(spec, progress=progress)

    monkeypatch.setattr(jobs, "run_job", flaky)
    cfg = tmp_path / "micro.json"
    cfg.write_text(json.dumps(MICRO))
    code = main(["experiment", "fig3-left", "--scale", "tiny", "--trials", "2", "--device", "cpu",
                 "--out", str(tmp_path / "out"), "--config", str(cfg), "--json", "--workers", "1"])
    assert code == 4
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["failed_jobs"][0]["trial"] == 1 and "simulated worker failure" in summary["failed_jobs"][0]["error"]
    assert summary["rows"] and all(r["trials"] == 1 for r in summary["rows"])
    assert "1 of 2 jobs failed" in captured.err
    monkeypatch.setattr(jobs, "run_job", real)                   # the rerun resumes: trial 0 is reused
    assert main(["experiment", "fig3-left", "--scale", "tiny", "--trials", "2", "--device", "cpu",
                 "--out", str(tmp_path / "out"), "--config", str(cfg), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == {"total": 2, "reused": 1, "failed": 0}


def test_config_file_overrides_and_bad_configs(tmp_path, capsys):
    from headprompt.verify.experiments.figure3 import resolve_scale

    toml = tmp_path / "c.toml"
    toml.write_text('trials_left = 7\nhidden_sizes = [4, 30]\n[pretrain]\nmax_steps = 99\n[tune]\nepochs = 2\n')
    sc = resolve_scale("cpu", toml)
    assert (sc.trials_left, sc.hidden_sizes, sc.pretrain.max_steps, sc.tune.epochs) == (7, (4, 30), 99, 2)
    for text, match in [('[pretrain]\nmax_step = 3\n', "unknown field pretrain.max_step"),
                        ('hidden_sizes = "4"\n', "hidden_sizes"), ('[tune]\nepochs = "5"\n', "tune.epochs"),
                        ('not toml [', "not valid TOML")]:
        toml.write_text(text)
        assert main(["experiment", "fig3-left", "--config", str(toml)]) == 2
        err = capsys.readouterr().err
        assert match in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("argv,match", [
    (["experiment", "fig9"], "invalid choice"),
    (["experiment", "fig3-left", "--scale", "huge"], "invalid choice"),
    (["experiment", "fig3-left", "--trials", "0"], "--trials"),
    (["experiment", "fig3-left", "--device", "tpu"], "invalid choice"),
    (["experiment", "fig3-left", "--config", "/nonexistent/c.toml"], "--config"),
])
def test_cli_experiment_bad_input(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("what", ["out", "cache"])
def test_out_or_cache_that_is_a_file_is_bad_input_before_training(what, tmp_path, monkeypatch, capsys):
    import headprompt.models.mlm.pretrain as mlm

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("HEADPROMPT_CACHE", str(blocker if what == "cache" else tmp_path / "cache"))
    monkeypatch.setattr(mlm, "pretrain", lambda *a, **k: pytest.fail("trained before rejecting bad input"))
    out = blocker if what == "out" else tmp_path / "out"
    assert main(["experiment", "fig3-left", "--scale", "tiny", "--device", "cpu", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert ("--out" if what == "out" else "HEADPROMPT_CACHE") in err and "directory" in err
    assert len(err.strip().splitlines()) == 1


def test_worker_processes_compute_what_one_process_does(tmp_path, monkeypatch, capsys):
    cfg = tmp_path / "micro.json"
    cfg.write_text(json.dumps(MICRO))
    rows = {}
    for workers in ("1", "2"):
        monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / f"cache{workers}"))
        assert main(["experiment", "fig3-left", "--scale", "tiny", "--trials", "2", "--device", "cpu",
                     "--out", str(tmp_path / f"out{workers}"), "--config", str(cfg), "--json",
                     "--workers", workers]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["jobs"] == {"total": 2, "reused": 0, "failed": 0}
        rows[workers] = (summary["rows"], summary["quality"])
    assert rows["1"] == rows["2"]


def test_a_job_shares_one_output_pass_between_the_linear_and_attention_heads(monkeypatch):
    """The linear head's features are the attention head's at position 0 (exactly, for both
    backbones), so a job computes them once; its accuracies equal tuning each from scratch."""
    from headprompt.models.mlm.model import MLM, MLMConfig
    from headprompt.models.mlm.splits import distinct_splits
    from headprompt.models.mlm.tuning import MLMBackbone
    from headprompt.verify.experiments import jobs

    hmm = appendix_d_hmm(5, 10, rng=np.random.default_rng(4))
    tokens = sample(hmm, 7, 6, rng=np.random.default_rng(5))[0]
    torch.manual_seed(0)
    mlm = MLMBackbone(MLM(MLMConfig(num_tokens=10, block_size=8, n_layer=1, n_embd=16, arch="bigru")), CPU)
    for backbone in (ExactBackbone(hmm, CPU), mlm):
        assert torch.equal(backbone.all_outputs(tokens)[:, 0], backbone.mask_outputs(tokens))

    calls = []
    real_all = ExactBackbone.all_outputs
    real_mask = ExactBackbone.mask_outputs
    monkeypatch.setattr(ExactBackbone, "all_outputs", lambda self, t: calls.append("all") or real_all(self, t))
    monkeypatch.setattr(ExactBackbone, "mask_outputs", lambda self, t: calls.append("mask") or real_mask(self, t))
    spec = {"experiment": "fig3-right", "setting": {"data": "vanilla", "memory_values": 2, "hidden_total": 8},
            "data": "vanilla", "size": 8, "methods": [["exact", "head"], ["exact", "attention"]], "trial": 0,
            "hmm_index": 0, "seed": 3, "device": "cpu", "models": "exact",
            "config": {"model": {"num_tokens": 10, "block_size": 40, "n_layer": 1, "n_head": 2, "n_embd": 16,
                                 "dropout": 0.0},
                       "pretrain": {}, "task": {"length": 8, "num_train": 120, "num_val": 40, "num_test": 60},
                       "tune": {"epochs": 2, "batch_size": 32}}}
    shared = jobs.run_job(spec)
    assert calls == ["all"] * (len(SPLITS) + 1)            # one pass per split (and the i.i.d. draws), not per head
    monkeypatch.setattr(ExactBackbone, "all_outputs", real_all)
    monkeypatch.setattr(ExactBackbone, "mask_outputs", real_mask)
    task_cfg, tune_cfg = TaskConfig(**spec["config"]["task"]), TuneConfig(**spec["config"]["tune"])
    model = jobs.job_model(spec)
    sizes = {"train": task_cfg.num_train, "val": task_cfg.num_val, "test": task_cfg.num_test}
    toks, _ = distinct_splits(model, sizes, task_cfg.length, rng=np.random.default_rng([3, 2, 8, 1, 0]))
    task = make_task(model, task_cfg, rng=np.random.default_rng([3, 2, 8, 2, 0]), tokens=toks)
    for record in shared["records"]:                      # each head tuned alone gives the same accuracy
        alone = tune(ExactBackbone(model, CPU), task, record["method"], tune_cfg, seed=3000)
        assert record["accuracy"] == alone["test"] and record["train_accuracy"] == alone["train"]


@pytest.mark.parametrize("device, scale, model, omp, expected", [
    ("cpu", "tiny", "both", False, True),
    ("cpu", "cpu", "mlm", False, True),
    ("cpu", "paper", "exact", False, True),      # no pretraining: small jobs, one per core
    ("cpu", "paper", "both", False, False),      # a paper-scale MLM wants every thread
    ("cpu", "paper", "mlm", False, False),
    ("cpu", "cpu", "both", True, False),         # OMP_NUM_THREADS is the user's choice
    ("cuda", "tiny", "both", False, False),
    ("cuda", "paper", "exact", False, False),
])
def test_jobs_run_one_thread_per_core_only_for_small_cpu_jobs(monkeypatch, device, scale, model, omp, expected):
    from headprompt.verify.cli.experiment import one_thread_workers

    if omp:
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
    else:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert one_thread_workers(torch.device(device), scale, model) is expected
