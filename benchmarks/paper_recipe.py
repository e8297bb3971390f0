"""The paper's Appendix D recipe at the paper's scale, for one lent GPU (issue 36, item 8).

``python -m benchmarks.paper_recipe --out DIR [--sizes 4 8 10 15 25 30] [--minutes M] [--device cuda]``

1. **Pretraining, packed.** One process per ``|H|`` pretrains the fig3-left MLM of trial 0 with
   the paper scale's configuration (Appendix D as written: 6 x 768 transformer, 5% masking,
   batch 8, lr 1e-5, 500 warmup steps, 3 epochs of 5,000 documents of 10,240 tokens, no early
   stop; bf16 autocast on CUDA), all at once on the one device, each through the checkpoint cache
   ``DIR/cache`` (``HEADPROMPT_CACHE``): a run stopped by ``--minutes`` is saved there
   (``mlm-<key>.partial``) and the next call resumes it. ``DIR/status.json`` says where each is.
2. **Fidelity**, once a model is finished: the position-0 gate (mean TV to the exact ``G_0``
   and its bound, :func:`models.mlm.gate.read_gate`) and the mean TV between the MLM's and the
   exact model's output at the ``[MASK]`` on the downstream test split itself (what the heads
   read), in ``DIR/fidelity.json``.
3. **Downstream tuning** (``--tune``, when every model is finished): ``verify experiment
   fig3-left`` at this scale with one trial per size, reading the cached models
   (``DIR/fig3-left``), and the verdicts with and without the 0.05 gate (the gate as a
   sensitivity analysis) in ``DIR/sensitivity.json``.

The same script runs at ``--scale tiny`` on a CPU in seconds (the test suite's dry run,
``tests/verify/experiments/test_paper_recipe.py``). Everything lands under ``DIR``, the folder
the device returns; copy it back into ``DIR`` before the next call to resume.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SIZES = (4, 8, 10, 15, 25, 30)      # the paper's Figure 3 (left) sizes


OVERRIDES: dict = {}      # --config: overrides of the scale (a JSON file), e.g. the test's micro sizes


def _spec(scale: str, size: int, seed: int, device: str) -> dict:
    from headprompt.verify.experiments.config import scale_to_dict
    from headprompt.verify.experiments.figure3 import resolve_scale
    from headprompt.verify.experiments.jobs import job_specs

    cfg = scale_to_dict(resolve_scale(scale, {**OVERRIDES, "hidden_sizes": [size]}))
    return job_specs("fig3-left", cfg, seed=seed, trials=1, share_pretraining=False, device=device)[0]


def pretrain_one(scale: str, size: int, seed: int, device: str, cache: Path, seconds: float | None) -> dict:
    """Pretrain (or resume, or load) the MLM of ``|H| = size``; returns its status."""
    import torch

    from headprompt.models.mlm.model import MLMConfig, PretrainConfig
    from headprompt.models.mlm.pretrain import PretrainingPaused, load_or_pretrain
    from headprompt.verify.experiments.jobs import job_model

    spec = _spec(scale, size, seed, device)
    cfg = spec["config"]
    t0 = time.perf_counter()
    try:
        _, info = load_or_pretrain(job_model(spec), MLMConfig(**cfg["model"]), PretrainConfig(**cfg["pretrain"]),
                                   seed=100 * seed + spec["hmm_index"], device=torch.device(device), directory=cache,
                                   progress=False, time_limit=seconds)
    except PretrainingPaused as paused:
        return {"size": size, "state": "paused", "step": paused.step, "total": paused.total,
                "seconds": round(time.perf_counter() - t0, 1)}
    return {"size": size, "state": "done", "steps": info["steps"], "cached": info["cached"],
            "seconds": round(time.perf_counter() - t0, 1), "path": Path(info["path"]).name}


def fidelity(scale: str, size: int, seed: int, device: str, cache: Path) -> dict:
    """Position-0 gate and the downstream-test TV of the finished MLM of ``|H| = size``."""
    import numpy as np
    import torch

    from headprompt.models.mlm.gate import read_gate
    from headprompt.models.mlm.model import MLMConfig, PretrainConfig
    from headprompt.models.mlm.pretrain import load_or_pretrain
    from headprompt.models.mlm.splits import distinct_splits
    from headprompt.models.mlm.tuning import ExactBackbone, MLMBackbone, TaskConfig
    from headprompt.verify.experiments.jobs import job_model

    spec = _spec(scale, size, seed, device)
    cfg, dev = spec["config"], torch.device(device)
    hmm = job_model(spec)
    pc = PretrainConfig(**cfg["pretrain"])
    mlm, _ = load_or_pretrain(hmm, MLMConfig(**cfg["model"]), pc, seed=100 * seed + spec["hmm_index"], device=dev,
                              directory=cache, progress=False)
    task = TaskConfig(**cfg["task"])
    key = [2, size]
    gate = read_gate(mlm, hmm, int(cfg.get("gate_sequences", 4096)), task.length + 1, seed=[seed, *key, 3, 0],
                     threshold=pc.gate_tv, z=float(cfg.get("gate_z", 1.645)))
    sizes = {"train": task.num_train, "val": task.num_val, "test": task.num_test}
    tokens, _ = distinct_splits(hmm, sizes, task.length, rng=np.random.default_rng([seed, *key, 1, 0]))
    ours = MLMBackbone(mlm, dev).mask_outputs(tokens["test"]).double().cpu()
    exact = ExactBackbone(hmm, dev).mask_outputs(tokens["test"]).double().cpu()
    tv = 0.5 * (ours - exact).abs().sum(-1)
    return {"size": size, "gate": gate, "downstream_test_tv": float(tv.mean()),
            "downstream_test_tv_max": float(tv.max()), "test_sequences": int(len(tv))}


def tune_and_test(scale: str, sizes: list[int], seed: int, device: str, out: Path) -> dict:
    """fig3-left with one trial per size on the cached models; verdicts with and without the gate."""
    import csv

    import torch

    from headprompt.verify.experiments.claims import evaluate
    from headprompt.verify.experiments.figure3 import run_experiment

    summary = run_experiment("fig3-left", scale, device=torch.device(device), trials=1, seed=seed,
                             out=out / "fig3-left", progress=True, config={**OVERRIDES, "hidden_sizes": sizes})
    with open(out / "fig3-left" / "results.csv", newline="") as fh:
        records = list(csv.DictReader(fh))
    ungated = evaluate("fig3-left", [{**r, "gate_passed": "True"} for r in records], seed=seed)
    pick = ("id", "verdict", "pooled")
    return {"with_gate": [{k: p[k] for k in pick} for p in summary["predictions"]],
            "without_gate": [{k: p[k] for k in pick} for p in ungated["predictions"]],
            "gate": summary["gate"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--scale", default="paper", choices=("tiny", "cpu", "paper"))
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--minutes", type=float, default=None, help="pause (and save) each pretraining after this long")
    ap.add_argument("--tune", action="store_true", help="when every model is finished: fidelity, tuning, verdicts")
    ap.add_argument("--config", type=Path, default=None, help="JSON overrides of the scale (as verify experiment --config)")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)     # a worker: pretrain one size
    args = ap.parse_args(argv)
    if args.config is not None:
        OVERRIDES.update(json.loads(args.config.read_text()))
    cache = args.out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["HEADPROMPT_CACHE"] = str(cache)
    seconds = None if args.minutes is None else 60 * args.minutes
    if args.one is not None:
        print(json.dumps(pretrain_one(args.scale, args.one, args.seed, args.device, cache, seconds)))
        return 0
    t0 = time.perf_counter()
    base = [sys.executable, "-m", "benchmarks.paper_recipe", "--out", str(args.out), "--scale", args.scale,
            "--seed", str(args.seed), "--device", args.device] + (["--minutes", str(args.minutes)] if seconds else []) \
        + (["--config", str(args.config)] if args.config else [])
    procs = {h: subprocess.Popen(base + ["--one", str(h)], stdout=subprocess.PIPE, text=True) for h in args.sizes}
    status = []
    for h, p in procs.items():
        out, _ = p.communicate()
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        status.append(json.loads(lines[-1]) if p.returncode == 0 and lines else
                      {"size": h, "state": "failed", "returncode": p.returncode})
    record = {"scale": args.scale, "device": args.device, "seed": args.seed, "sizes": args.sizes,
              "pretraining": status, "seconds": round(time.perf_counter() - t0, 1)}
    (args.out / "status.json").write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record))
    done = all(s["state"] == "done" for s in status)
    if done:
        fid = [fidelity(args.scale, h, args.seed, args.device, cache) for h in args.sizes]
        (args.out / "fidelity.json").write_text(json.dumps(fid, indent=1) + "\n")
        if args.tune:
            result = tune_and_test(args.scale, args.sizes, args.seed, args.device, args.out)
            (args.out / "sensitivity.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0 if all(s["state"] != "failed" for s in status) else 1


if __name__ == "__main__":
    raise SystemExit(main())
