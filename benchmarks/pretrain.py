"""Pretraining throughput: tokens/s and achieved FLOP/s over a matmul peak measured in the same run.

    python -m benchmarks.pretrain [--scale tiny|cpu|paper] [--recipe scale|large-batch|cpu-before]
                                  [--steps 30] [--device auto|cpu|cuda] [--compile] [--full]
                                  [--to-gate 15,30 [--trials 1] [--first-trial 0] [--minutes M]] [--json]

The model FLOPs per token follow nanoGPT's estimate for a training step (forward + backward):
``6 N + 12 L T C`` with ``N`` the non-embedding parameters, ``L`` layers, ``T`` the context,
``C`` the width. The peak is the best of several square matmuls (fp32 on CPU; bf16 on CUDA, the
precision pretraining runs in, 8192 x 8192 so that a large GPU is saturated), timed right before
the training steps, so the ratio is the model-FLOPs utilisation of this machine at this moment.

The timed steps are the training step of :func:`models.mlm.pretrain`: bf16 autocast on CUDA,
``scaled_dot_product_attention``, fused AdamW, gradient clipping, the batch and masks made on
the device, no host synchronisation inside the timed loop (the loss is accumulated on the
device), and optionally ``torch.compile`` (``--compile``). The data are random tokens (the HMM
only changes the values, not the cost).

``--recipe large-batch`` (paper scale only) is a stated departure from Appendix D: batch 64
instead of 8 and lr 1e-4 instead of 1e-5 with 200 warmup steps, for the same number of tokens
(4,688 steps instead of 37,500), because batch 8 of 512 tokens leaves a large GPU idle. Its
quality-gate figure must be reported beside that of ``--recipe scale`` (``--full`` runs a whole
pretraining on an Appendix D HMM with ``|H| = 30`` and prints the gate; it checkpoints every
1000 steps and resumes, so it can be run in pieces with ``--minutes``).

Measured on this project's idle 2-core CPU machine: ``cpu`` scale 69,000 tokens/s, 48.9 GFLOP/s
over a 141.9 GFLOP/s matmul peak (ratio 0.34) with 2 threads; 57,000 tokens/s, ratio 0.53 of
the one-thread peak with ``OMP_NUM_THREADS=1``; ``paper`` scale 254 tokens/s, ratio 0.49.
The cpu scale before and after issue 18 (per step, steps to the gate, a whole figure):
``benchmarks/results/pretrain/README.md``.
``--to-gate SIZES`` also pretrains, with the scale's stopping rule, one MLM per ``|H|`` in SIZES
and trial on the Appendix D HMMs that ``verify experiment fig3-left`` draws for trial 0, 1, ...
(seed 0; ``--first-trial K`` starts at trial K), and prints the steps, seconds and gate TV of
each: the cost that matters is steps to the gate times seconds per step. ``--recipe cpu-before``
is the cpu scale as it was before issue 18 (no weight average, stop at TV 0.04 on 512 sequences,
2,500 steps); ``--recipe cpu-budget2500`` the weight-averaged scale with its first budget of
2,500 steps; ``--recipe scale`` the scale as is (5,000 steps).

Measured on one H200 (2026-11-26): ``benchmarks/results/gpu/README.md`` (``--recipe gpu-gate``
and ``gpu-gate-lr5e-4`` pretrain the paper scale to the position-0 gate; neither reached it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import torch

from headprompt.models.mlm.model import MLM, batch_loss, mask_tokens, resolve_device
from headprompt.models.mlm.pretrain import _optimizer, weight_average

__all__ = ["matmul_peak", "flops_per_token", "measure", "recipe", "main"]

RECIPES = ("scale", "large-batch", "cpu-before", "cpu-budget2500", "gpu-gate", "gpu-gate-lr5e-4",
           "gpu-gate-mask20", "gpu-gate-mask20-lr3e-4", "gpu-gate-mask20-long")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def matmul_peak(device: torch.device, *, size: int | None = None, repeats: int = 10) -> float:
    """Best FLOP/s of ``size x size`` matmuls (``2 size^3`` FLOPs each): bf16 on CUDA, fp32 on CPU."""
    size = size or (8192 if device.type == "cuda" else 1024)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=gen).to(device, dtype)
    b = torch.randn(size, size, generator=gen).to(device, dtype)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return 2 * size ** 3 / best


def flops_per_token(model: MLM) -> float:
    """Training FLOPs per token: ``6 N`` for the weights (forward + backward), plus nanoGPT's
    ``12 L T C`` for a transformer's attention scores and values; a GRU (``arch="bigru"``) has
    no attention, so its count is ``6 N`` alone (every GRU FLOP is a weight matmul)."""
    c = model.config
    attention = 12 * c.n_layer * c.block_size * c.n_embd if getattr(c, "arch", "transformer") == "transformer" else 0
    return 6 * model.num_parameters() + attention


def recipe(scale, name: str):
    """The pretraining config of ``scale`` under recipe ``name`` (module docstring)."""
    if name == "scale":
        return scale.pretrain
    import tomllib
    from pathlib import Path

    table = tomllib.loads((Path(__file__).parent / "recipes" / f"{name}.toml").read_text())["pretrain"]
    table = {k: None if v == "none" else v for k, v in table.items()}     # TOML has no null
    return dataclasses.replace(scale.pretrain, **table)


def measure(model_config, pretrain_config, *, steps: int, device: torch.device, seed: int = 0,
            compile: bool = False) -> dict:
    """Time ``steps`` pretraining steps (after warmup steps) of a fresh model on random tokens."""
    torch.manual_seed(seed)
    model = MLM(model_config).to(device).train()
    opt = _optimizer(model, pretrain_config, device)
    step_model = torch.compile(model) if compile else model
    ema = weight_average(model, pretrain_config)                                   # as pretrain keeps it
    gen = torch.Generator(device=device).manual_seed(seed)
    B, T = pretrain_config.batch_size, model_config.block_size
    data = torch.randint(0, model_config.num_tokens, (8 * B, T), generator=torch.Generator().manual_seed(seed))
    data = data.to(torch.uint8).to(device)                                       # held on the device
    running = torch.zeros((), device=device)

    def step(i: int) -> None:
        nonlocal running
        batch = data[(i % 8) * B:(i % 8 + 1) * B].long()
        inputs, targets = mask_tokens(batch, pretrain_config.mask_rate, model_config.mask_id, gen)
        loss = batch_loss(step_model, inputs, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if ema is not None:
            ema.update_parameters(model)
        running += loss.detach()                                                  # no host sync

    for i in range(10 if compile else 3):
        step(i)
    _sync(device)
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    _sync(device)
    seconds = time.perf_counter() - t0
    tokens = steps * B * T
    achieved = tokens * flops_per_token(model) / seconds
    return {"tokens_per_second": tokens / seconds, "steps_per_second": steps / seconds, "achieved_flops": achieved,
            "flops_per_token": flops_per_token(model), "parameters": model.num_parameters(),
            "steps": steps, "seconds": seconds, "batch_size": B, "mean_loss": float(running) / (steps + 3)}


def full_pretraining(scale, pretrain_config, device: torch.device, *, minutes: float | None, seed: int = 0) -> dict:
    """One whole pretraining on an Appendix D HMM with ``|H| = 30`` through the checkpoint cache
    (resumes an earlier piece); returns its time, steps and quality gate."""
    import numpy as np

    from headprompt.models.generate.generators import appendix_d_hmm
    from headprompt.models.mlm.pretrain import PretrainingPaused
    from headprompt.models.mlm.pretrain import load_or_pretrain

    hmm = appendix_d_hmm(30, 10, rng=np.random.default_rng([seed, 30, 0]))
    t0 = time.perf_counter()
    try:
        _, info = load_or_pretrain(hmm, scale.model, pretrain_config, seed=seed, device=device,
                                   time_limit=None if minutes is None else 60 * minutes)
    except PretrainingPaused as exc:
        return {"paused": str(exc), "seconds": time.perf_counter() - t0}
    return {"seconds_total_training": info["seconds"], "steps": info["steps"], "gate": info["gate"],
            "cached": info["cached"], "seconds": time.perf_counter() - t0}


def to_gate(scale, pretrain_config, sizes: list[int], trials: int, device: torch.device,
            progress: bool = True, first_trial: int = 0, minutes: float | None = None) -> list[dict]:
    """Pretrain one MLM per ``(|H|, trial)``, trials ``first_trial .. first_trial + trials - 1``,
    on fig3-left's Appendix D HMMs (seed 0) with the stopping rule of ``pretrain_config``; the
    steps, seconds, steps/s and gate of each. With ``minutes``, a pretraining still running after
    that long stops (``stopped = "time"``) and its row holds the gate checks made so far, read back
    from the run's checkpoint (no final gate)."""
    import tempfile
    from pathlib import Path

    from headprompt.models.mlm.cache import cache_key, read_checkpoint
    from headprompt.models.mlm.pretrain import PretrainingPaused, pretrain
    from headprompt.verify.experiments.jobs import job_model

    rows = []
    for H in sizes:
        for trial in range(first_trial, first_trial + trials):
            hmm = job_model({"data": "vanilla", "size": H, "seed": 0, "hmm_index": trial, "config": {}})
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                partial = Path(tmp) / "run.partial"
                try:
                    _, info = pretrain(hmm, scale.model, pretrain_config, seed=trial, device=device,
                                       progress=progress, resume_path=partial if minutes else None,
                                       time_limit=None if minutes is None else 60 * minutes)
                except PretrainingPaused:
                    saved = read_checkpoint(partial, cache_key(hmm, scale.model, pretrain_config, trial), device)
                    state = saved["state"]
                    history = state["gate_history"]
                    last = history[-1] if history else [0, float("nan"), float("nan")]
                    info = {"steps": state["step"], "stopped": "time", "seconds": state["seconds"],
                            "gate": {"tv": last[1], "tv_first_bound": last[2], "passed": False,
                                     "from": "the last check on the stopping set (no final gate)"},
                            "gate_history": history}
            seconds = time.perf_counter() - t0
            rows.append({"hidden_states": H, "trial": trial, "steps": info["steps"], "stopped": info["stopped"],
                         "seconds": round(seconds, 1), "steps_per_second": round(info["steps"] / info["seconds"], 2),
                         "gate_tv": round(info["gate"]["tv"], 4), "passed": info["gate"]["passed"],
                         "gate": info["gate"], "history": info["gate_history"],
                         "losses": info.get("losses"), "final_loss": info.get("final_loss"),
                         "unigram_entropy": info.get("unigram_entropy")})
            print(f"  |H| = {H}, trial {trial}: {info['steps']} steps ({info['stopped']}), {seconds:.0f} s, "
                  f"gate TV {info['gate']['tv']:.4f}", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    from headprompt.verify.experiments.figure3 import SCALES

    parser = argparse.ArgumentParser(prog="python -m benchmarks.pretrain", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=list(SCALES), default="cpu")
    parser.add_argument("--recipe", choices=RECIPES, default="scale")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--full", action="store_true", help="also run one whole pretraining with the quality gate")
    parser.add_argument("--minutes", type=float, default=None, help="with --full or --to-gate: stop (and save) a pretraining after this long")
    parser.add_argument("--to-gate", default=None, metavar="SIZES",
                        help="also pretrain to the gate on Appendix D HMMs with these |H| (comma-separated)")
    parser.add_argument("--trials", type=int, default=1, help="with --to-gate: HMMs per size")
    parser.add_argument("--first-trial", type=int, default=0,
                        help="with --to-gate: the first trial's index (e.g. 7 with --trials 1: only trial 7)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    scale = SCALES[args.scale]
    pc = recipe(scale, args.recipe)
    peak = matmul_peak(device)
    result = measure(scale.model, pc, steps=args.steps, device=device, compile=args.compile)
    result.update({"scale": args.scale, "recipe": args.recipe, "device": str(device),
                   "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                   "threads": torch.get_num_threads(), "compile": args.compile,
                   "matmul_peak_flops": peak, "ratio": result["achieved_flops"] / peak,
                   "steps_per_pretraining": pc.budget(scale.model.block_size)})
    result["estimated_pretraining_seconds"] = result["steps_per_pretraining"] * result["seconds"] / args.steps
    if args.full:
        result["full"] = full_pretraining(scale, pc, device, minutes=args.minutes)
    if args.to_gate:
        result["to_gate"] = to_gate(scale, pc, [int(v) for v in args.to_gate.split(",")], args.trials, device,
                                    progress=not args.json, first_trial=args.first_trial, minutes=args.minutes)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"scale {args.scale}, recipe {args.recipe} on {result['device_name']} ({result['threads']} threads"
              f"{', compiled' if args.compile else ''}): {result['parameters']:,} non-embedding parameters, "
              f"context {scale.model.block_size}, batch {pc.batch_size}")
        print(f"  {result['steps_per_second']:.2f} steps/s, {result['tokens_per_second']:,.0f} tokens/s, {result['achieved_flops'] / 1e9:.2f} GFLOP/s "
              f"achieved, matmul peak {peak / 1e9:.2f} GFLOP/s, fraction of peak {result['ratio']:.3f}")
        print(f"  one pretraining ({result['steps_per_pretraining']:,} steps) would take about "
              f"{result['estimated_pretraining_seconds'] / 60:.1f} min")
        if args.full:
            print(f"  full pretraining: {json.dumps(result['full'])}")
        for row in result.get("to_gate", []):
            print(f"  to the gate, |H| = {row['hidden_states']} trial {row['trial']}: {row['steps']} steps "
                  f"({row['stopped']}), {row['seconds']:.0f} s ({row['steps_per_second']:.2f} steps/s), "
                  f"gate TV {row['gate_tv']:.4f} ({'passed' if row['passed'] else 'FAILED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
