"""Pretraining throughput: tokens/s and achieved FLOP/s over a matmul peak measured in the same run.

    python -m benchmarks.pretrain [--scale tiny|cpu|paper] [--steps 30] [--device auto] [--json]

The model FLOPs per token follow nanoGPT's estimate for a training step (forward + backward):
``6 N + 12 L T C`` with ``N`` the non-embedding parameters, ``L`` layers, ``T`` the context,
``C`` the width. The peak is the best of several square matmuls (fp32 on CPU, bf16 on CUDA,
the precision pretraining runs in), timed right before the training steps, so the ratio is
the model-FLOPs utilisation of this machine at this moment. The data are random tokens (the
HMM only changes the values, not the cost).

Measured on this project's idle 2-core CPU machine: ``cpu`` scale 69,000 tokens/s, 48.9 GFLOP/s
over a 141.9 GFLOP/s matmul peak (ratio 0.34) with 2 threads; 57,000 tokens/s, ratio 0.53 of
the one-thread peak with ``OMP_NUM_THREADS=1``; ``paper`` scale 254 tokens/s, ratio 0.49.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from headprompt.models.mlm import MLM, batch_loss, mask_tokens, resolve_device

__all__ = ["matmul_peak", "flops_per_token", "measure", "main"]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def matmul_peak(device: torch.device, *, size: int = 1024, repeats: int = 10) -> float:
    """Best FLOP/s of ``size x size`` matmuls (``2 size^3`` FLOPs each)."""
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
    """Training FLOPs per token: ``6 N + 12 L T C`` (nanoGPT's estimate)."""
    c = model.config
    return 6 * model.num_parameters() + 12 * c.n_layer * c.block_size * c.n_embd


def measure(model_config, batch_size: int, *, steps: int, device: torch.device, seed: int = 0) -> dict:
    """Time ``steps`` pretraining steps (after 3 warmup steps) of a fresh model on random tokens."""
    torch.manual_seed(seed)
    model = MLM(model_config).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=device).manual_seed(seed)
    data = torch.randint(0, model_config.num_tokens, (batch_size, model_config.block_size),
                         generator=torch.Generator().manual_seed(seed)).to(device)

    def step() -> None:
        inputs, targets = mask_tokens(data, 0.05, model_config.mask_id, gen)
        loss = batch_loss(model, inputs, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    seconds = time.perf_counter() - t0
    tokens = steps * batch_size * model_config.block_size
    achieved = tokens * flops_per_token(model) / seconds
    return {"tokens_per_second": tokens / seconds, "achieved_flops": achieved,
            "flops_per_token": flops_per_token(model), "parameters": model.num_parameters(),
            "steps": steps, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    from headprompt.verify.experiment import SCALES

    parser = argparse.ArgumentParser(prog="python -m benchmarks.pretrain", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    scale = SCALES[args.scale]
    peak = matmul_peak(device)
    result = measure(scale.model, scale.pretrain.batch_size, steps=args.steps, device=device)
    result.update({"scale": args.scale, "device": str(device), "threads": torch.get_num_threads(),
                   "matmul_peak_flops": peak, "ratio": result["achieved_flops"] / peak})
    if args.json:
        print(json.dumps(result))
    else:
        print(f"scale {args.scale} on {device} ({result['threads']} threads): "
              f"{result['parameters']:,} non-embedding parameters, context {scale.model.block_size}, "
              f"batch {scale.pretrain.batch_size}")
        print(f"  {result['tokens_per_second']:,.0f} tokens/s, {result['achieved_flops'] / 1e9:.2f} GFLOP/s "
              f"achieved, matmul peak {peak / 1e9:.2f} GFLOP/s, ratio {result['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
