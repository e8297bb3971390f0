"""Figure 3's independent jobs: one (setting, trial) each, as plain data, run anywhere.

A job spec is a JSON-able dict (:func:`job_specs`); :func:`run_job` turns it into result records
in any process (this one, or a Ray worker), so an in-process run and a Ray run with the same
seeds compute the same numbers. Each job draws its HMM, pretrains its MLM (through the
checkpoint cache, with the quality gate), reads the downstream gate (position 0, with its upper
bound: :func:`models.mlm.gate.read_gate`), samples its task sequences (validation and test never
repeat a training sequence: :func:`models.mlm.splits.distinct_splits`) and ``mu``, and tunes
every (model, method) pair of its setting, controls included: the paper's protocol and the fair
baselines (``head-fair``, ``prompt-fair``, ``attention-fair``, ``attention-tokens-fair``:
:mod:`models.mlm.fair`). fig3-right is a 2 x 2: each of the memory and the vanilla data is tuned
with the linear and the attention head.

Seeds (``seed`` is ``--seed``; ``h`` is the HMM index, the trial, or 0 with
``--share-pretraining``): a vanilla HMM with ``|H| = n`` is drawn from
``default_rng([seed, n, h])`` (so fig3-right's vanilla ``|H| = 8`` is fig3-left's, and its
pretraining is shared through the cache), a memory HMM from ``default_rng([seed, 1000 + |M|, h])``;
pretraining uses seed ``100 * seed + h``; the task's sequences ``[seed, key, 1, trial]``, its
``mu`` ``[seed, key, 2, trial]``, the downstream gate's sequences ``[seed, key, 3, trial]``;
tuning ``1000 * seed + trial``.

Finished jobs are cached as JSON under ``<cache>/jobs/<key>.json``, ``key`` a hash of the spec
(the device and thread count left out) and of :data:`JOB_FORMAT` and the package version, so a
sweep that stopped or partly failed resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import traceback
from pathlib import Path

__all__ = ["JOB_FORMAT", "MODELS", "job_specs", "job_model", "hmm_seed", "hmm_recipe", "job_key", "run_job",
           "run_job_safely", "read_cached", "write_cached"]

JOB_FORMAT = 5   # bump when a job's computation or its records change


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("headprompt")
    except metadata.PackageNotFoundError:
        return "unknown"


MODELS = ("both", "mlm", "exact")


def job_specs(name: str, config: dict, *, seed: int, trials: int, share_pretraining: bool,
              device: str, models: str = "both") -> list[dict]:
    """Every job of experiment ``name`` under ``config`` (:func:`scale_to_dict`'s shape).

    ``models``: ``both`` (the MLM and the exact ``Gbar``), ``mlm``, or ``exact`` (no pretraining
    at all: only the exact rows and the token-only control).
    """
    from .config import SYNTAX_STATES

    jobs = []
    keep = {"both": ("mlm", "exact", "none"), "mlm": ("mlm",), "exact": ("exact", "none")}[models]

    def add(setting: dict, data: str, size: int, methods: list, trial: int) -> None:
        spec = {"experiment": name, "setting": setting, "data": data, "size": size,
                "methods": [m for m in methods if m[0] in keep], "trial": trial,
                "hmm_index": 0 if share_pretraining else trial, "seed": seed, "config": config, "device": device}
        if models != "both":
            spec["models"] = models
        jobs.append(spec)

    def both(methods: tuple) -> list:       # each method under the paper's protocol, then its fair version
        return [[model, m] for model in ("mlm", "exact") for method in methods for m in (method, f"{method}-fair")]

    for trial in range(trials):
        if name == "fig3-left":
            for H in config["hidden_sizes"]:
                add({"hidden_states": H}, "vanilla", H, both(("head", "prompt")), trial)
        else:
            for M in config["memory_values"]:
                H = M * SYNTAX_STATES
                add({"data": "memory", "memory_values": M, "hidden_total": H}, "memory", M,
                    both(("attention", "head")) + [["none", "attention-tokens"], ["none", "attention-tokens-fair"]],
                    trial)
                add({"data": "vanilla", "memory_values": M, "hidden_total": H}, "vanilla", H,
                    both(("head", "attention")), trial)
    return jobs


def job_key(spec: dict) -> str:
    """A 24-hex-digit hash of everything that decides a job's numbers."""
    keep = {k: v for k, v in spec.items() if k not in ("device", "threads", "cache")}
    blob = json.dumps({"job": keep, "format": JOB_FORMAT, "version": _version()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _jobs_dir(cache: str | None) -> Path:
    from ...models.mlm.cache import cache_dir

    return (Path(cache) if cache else cache_dir()) / "jobs"


def read_cached(spec: dict, cache: str | None = None) -> dict | None:
    """The cached result of ``spec``, or ``None`` (missing or unreadable: rerun)."""
    path = _jobs_dir(cache) / f"{job_key(spec)}.json"
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) and result.get("key") == job_key(spec) else None


def write_cached(spec: dict, result: dict, cache: str | None = None) -> None:
    directory = _jobs_dir(cache)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{job_key(spec)}.json"
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(result) + "\n")
    os.replace(tmp, path)


def hmm_seed(spec: dict) -> list[int]:
    """The ``default_rng`` seed of the job's HMM (module docstring)."""
    if spec["data"] == "memory":
        return [spec["seed"], 1000 + spec["size"], spec["hmm_index"]]
    return [spec["seed"], spec["size"], spec["hmm_index"]]


def hmm_recipe(spec: dict) -> str:
    """The generator of the job's HMM: ``appendix-d``, ``appendix-d-memory`` or ``hidden-memory``."""
    if spec["data"] != "memory":
        return "appendix-d"
    return "hidden-memory" if spec["config"].get("memory_hmm") == "hidden" else "appendix-d-memory"


def job_model(spec: dict):
    """The job's HMM (vanilla or memory), drawn from :func:`hmm_seed` by :func:`hmm_recipe`."""
    import numpy as np

    from ...models.generate.generators import appendix_d_hmm, appendix_d_memory_hmm, hidden_memory_hmm
    from .config import NUM_TOKENS, SYNTAX_STATES

    rng = np.random.default_rng(hmm_seed(spec))
    recipe = hmm_recipe(spec)
    if recipe == "hidden-memory":
        return hidden_memory_hmm(spec["size"], SYNTAX_STATES, NUM_TOKENS, rng=rng,
                                 visit=spec["config"].get("hidden_visit", 0.3))
    if recipe == "appendix-d-memory":
        return appendix_d_memory_hmm(spec["size"], SYNTAX_STATES, NUM_TOKENS, rng=rng)
    return appendix_d_hmm(spec["size"], NUM_TOKENS, rng=rng)


def run_job(spec: dict, *, progress: bool = False) -> dict:
    """Run one job; returns ``{"key", "records": [...], "quality": {...}, "pretrain": {...},
    "seconds"}`` with one record per (model, method) of the spec."""
    import numpy as np
    import torch

    from ...models.mlm.model import MLMConfig, PretrainConfig
    from ...models.mlm.pretrain import load_or_pretrain
    from ...models.mlm.fair import FAIR_METHODS, prompt_refit, tune_fair
    from ...models.generate.sampling import sample
    from ...models.mlm.gate import read_gate
    from ...models.mlm.splits import distinct_splits, overlap
    from ...models.mlm.tuning import ExactBackbone, MLMBackbone, TaskConfig, TuneConfig, make_task, tune

    t_job = time.perf_counter()
    if spec.get("threads"):
        torch.set_num_threads(int(spec["threads"]))
    cfg = spec["config"]
    mc, pc = MLMConfig(**cfg["model"]), PretrainConfig(**cfg["pretrain"])
    task_cfg, tune_cfg = TaskConfig(**cfg["task"]), TuneConfig(**cfg["tune"])
    device = torch.device(spec["device"])
    data_model = job_model(spec)
    seed, trial = spec["seed"], spec["trial"]
    backbones = {"exact": ExactBackbone(data_model, device)}
    backbones["none"] = backbones["exact"]          # the token-only control reads no G
    info = None
    if any(m == "mlm" for m, _ in spec["methods"]):
        mlm, info = load_or_pretrain(data_model, mc, pc, seed=100 * seed + spec["hmm_index"], device=device,
                                     directory=Path(spec["cache"]) if spec.get("cache") else None,
                                     progress=progress)
        backbones["mlm"] = MLMBackbone(mlm, device, progress=progress)
    key = [{"memory": 1, "vanilla": 2}[spec["data"]], spec["size"]]
    sizes = {"train": task_cfg.num_train, "val": task_cfg.num_val, "test": task_cfg.num_test}
    tokens, split_report = distinct_splits(data_model, sizes, task_cfg.length,
                                           rng=np.random.default_rng([seed, *key, 1, trial]))
    for split in ("val", "test"):
        if len(tokens[split]) == 0:
            raise ValueError(f"no {split} sequence distinct from the training split in "
                             f"{split_report[split]['drawn']} draws: the HMM repeats its sequences")
    # the paper's estimand: a test set of i.i.d. draws, repeats of training sequences included
    tokens["iid"] = sample(data_model.to_float(), task_cfg.num_test, task_cfg.length,
                           rng=np.random.default_rng([seed, *key, 4, trial]))[0]
    task = make_task(data_model, task_cfg, rng=np.random.default_rng([seed, *key, 2, trial]), tokens=tokens)
    split_cols = {"val_size": split_report["val"]["size"], "test_size": split_report["test"]["size"],
                  "val_overlap": overlap(tokens["val"], tokens["train"]),
                  "test_overlap": overlap(tokens["test"], tokens["train"]),
                  "test_rejected": split_report["test"]["rejected"], "test_drawn": split_report["test"]["drawn"],
                  "iid_size": len(tokens["iid"]), "iid_overlap": overlap(tokens["iid"], tokens["train"])}
    quality, mlm_cols = None, {"pretrain_key": "", "gate_tv": "", "gate_tv_first": "", "mlm_loss": "",
                               "exact_loss": "", "loss_gap": "", "gate0_tv": "", "gate0_se": "", "gate0_bound": "",
                               "gate0_sequences": "", "gate_passed": "", "pretrain_steps": "",
                               "pretrain_stopped": "", "pretrain_seconds": "", "pretrain_cached": ""}
    if info is not None:
        gate = info["gate"]
        gate0 = read_gate(mlm, data_model, int(cfg.get("gate_sequences", 4096)), task_cfg.length + 1,
                          seed=[seed, *key, 3, trial], threshold=pc.gate_tv, z=float(cfg.get("gate_z", 1.645)))
        quality = {"tv": gate["tv"], "tv_first": gate["tv_first"], "mlm_loss": gate["mlm_loss"],
                   "exact_loss": gate["exact_loss"], "loss_gap": gate["loss_gap"], "passed": gate0["passed"],
                   "threshold": gate["threshold"], "steps": info["steps"], "budget": info["budget"],
                   "stopped": info["stopped"], "history": info["gate_history"], "gate0": gate0,
                   "pretrain_passed": gate["passed"]}
        mlm_cols = {"pretrain_key": Path(info["path"]).stem.removeprefix("mlm-"),
                    "gate_tv": round(gate["tv"], 6), "gate_tv_first": round(gate["tv_first"], 6),
                    "mlm_loss": round(gate["mlm_loss"], 6), "exact_loss": round(gate["exact_loss"], 6),
                    "loss_gap": round(gate["loss_gap"], 6), "gate0_tv": round(gate0["tv0"], 6),
                    "gate0_se": round(gate0["se"], 6), "gate0_bound": round(gate0["bound"], 6),
                    "gate0_sequences": gate0["sequences"], "gate_passed": gate0["passed"],
                    "pretrain_steps": info["steps"], "pretrain_stopped": info["stopped"],
                    "pretrain_seconds": round(info["seconds"], 2), "pretrain_cached": info["cached"]}
    shared: dict = {}

    def features(model_name: str, method: str) -> dict | None:
        # one output pass per backbone: the linear head's features are the attention head's at
        # position 0 (the same computation; tests/verify/experiments/test_figure3.py), and the
        # paper-protocol and fair heads read the same features
        base = FAIR_METHODS.get(method, method)
        if base not in ("head", "attention"):
            return None
        every = [model_name, "attention"] in spec["methods"]
        if (model_name, every) not in shared:
            compute = backbones[model_name].all_outputs if every else backbones[model_name].mask_outputs
            shared[(model_name, every)] = {s: compute(task.tokens[s]) for s in task.tokens}
        out = shared[(model_name, every)]
        return out if base == "attention" else ({s: f[:, 0] for s, f in out.items()} if every else out)

    records, done = [], {}
    for model_name, method in spec["methods"]:
        t0 = time.perf_counter()
        if method in FAIR_METHODS:
            acc = tune_fair(backbones[model_name], task, method, tune_cfg, seed=1000 * seed + trial,
                            features=features(model_name, method), progress=progress,
                            known=done.get((model_name, FAIR_METHODS[method])))
        else:
            acc = tune(backbones[model_name], task, method, tune_cfg, seed=1000 * seed + trial,
                       features=features(model_name, method), progress=progress)
        done[(model_name, method)] = acc
        rows = [(method, acc)]
        if method == "prompt-fair":
            rows.append(("prompt-refit", prompt_refit(acc["prompted"], task.labels)))
        for name, a in rows:
            records.append({
                "experiment": spec["experiment"], **spec["setting"], "trial": trial, "model": model_name,
                "method": name, "accuracy": a["test"], "val_accuracy": a["val"], "train_accuracy": a["train"],
                "iid_accuracy": a["iid"], "selected": a.get("selected", ""),
                "searched": " ".join(f"{k}:{v:.4f}" for k, v in a.get("searched", {}).items()),
                "edge": a.get("edge", ""), "edge_beats": a.get("edge_beats", ""),
                **_movement(name, a, model_name, done, features(model_name, "head") if name.startswith("prompt") else None),
                "majority": task.majority_accuracy("test"), "redraws": task.redraws,
                "control": _is_control(spec, model_name, name),
                "hmm": hmm_recipe(spec), "hmm_seed": " ".join(map(str, hmm_seed(spec))),
                "hmm_index": spec["hmm_index"], **split_cols, **mlm_cols,
                "seconds": round(time.perf_counter() - t0, 3)})
    pretrain = None if info is None else {"final_loss": info["final_loss"], "unigram_entropy": info["unigram_entropy"],
                                          "seconds": info["seconds"], "cached": info["cached"]}
    return {"key": job_key(spec), "records": records, "quality": quality, "pretrain": pretrain,
            "seconds": time.perf_counter() - t_job}


MOVEMENT = ("prompt_tv", "prompt_out_changed", "prompt_pred_changed", "prompt_grad0", "prompt_shift",
            "prompt_saturated")


def _movement(method: str, acc: dict, model: str, done: dict, unprompted: dict | None) -> dict:
    """How far a prompt moved what the head reads (empty for other methods): ``prompt_tv``, the
    mean total variation between the prompted and the unprompted output at the ``[MASK]`` on
    the test split; ``prompt_out_changed``, the share of test outputs moved by a TV above 0.01;
    ``prompt_pred_changed``, the share of test predictions that differ from the same protocol's
    linear head (``prompt`` against ``head``, ``prompt-fair`` and ``prompt-refit`` against
    ``head-fair``); and the diagnosis of :func:`models.mlm.tuning.tune` (``prompt_grad0``,
    ``prompt_shift``, ``prompt_saturated``)."""
    import numpy as np

    if method == "prompt-refit":
        acc = {**done[(model, "prompt-fair")], "predictions": acc["predictions"]}
    if "prompted" not in acc or unprompted is None:
        return {k: "" for k in MOVEMENT}
    tv = 0.5 * (acc["prompted"]["test"].double() - unprompted["test"].double().cpu()).abs().sum(-1)
    head = done.get((model, "head" if method == "prompt" else "head-fair"))
    changed = "" if head is None else round(float(np.mean(acc["predictions"]["test"] != head["predictions"]["test"])), 6)
    return {"prompt_tv": round(float(tv.mean()), 6), "prompt_out_changed": round(float((tv > 0.01).double().mean()), 6),
            "prompt_pred_changed": changed, "prompt_grad0": float(f"{acc['prompt_grad0']:.6g}"),
            "prompt_shift": round(acc["prompt_shift"], 6), "prompt_saturated": round(acc["prompt_saturated"], 6)
            if acc["prompt_saturated"] == acc["prompt_saturated"] else ""}


def _is_control(spec: dict, model: str, method: str) -> bool:
    """Whether a (model, method) of the job is a control row, not one of the figure's lines."""
    if spec["experiment"] == "fig3-left":
        return False
    base = method.removesuffix("-fair")
    return (spec["data"], base) not in (("memory", "attention"), ("vanilla", "head"))


def run_job_safely(spec: dict, progress: bool = False) -> dict:
    """:func:`run_job`, with any failure returned as ``{"key", "error", "traceback"}`` instead of
    raised, so one failed job never loses the others."""
    try:
        return run_job(spec, progress=progress)
    except Exception as exc:   # noqa: BLE001 - reported per job, the sweep goes on
        return {"key": job_key(spec), "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8)}
