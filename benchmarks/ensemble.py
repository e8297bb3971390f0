"""Would training the trials of a setting as one batched ensemble make cpu pretraining cheaper?

    python -m benchmarks.ensemble [--members 10] [--threads 1] [--repeats 3] [--json]

Issue 18 asked to measure, among other ideas, one forward over stacked parameters for all the
trials of a setting. This times one training step (forward, backward) of the cpu scale's
BiGRU masked LM (2 layers, 64 units per direction, batch 256, 36 tokens: the mean of 25..48)
three ways, in the same run:

- ``sequential``: ``members`` separate ``nn.GRU`` models, one after the other (what
  ``verify experiment`` does, one model per job);
- ``vmap``: ``torch.func.stack_module_state`` + ``vmap`` over ``nn.GRU`` (reported as
  unsupported when PyTorch has no batching rule for the fused GRU op);
- ``batched``: a GRU written with batched matmuls over a leading ensemble axis (input
  projections for all positions in one ``einsum``, the recurrence as ``baddbmm`` per position).

It prints the milliseconds per model-step of each and the ratio to ``sequential``; below 1 the
ensemble loses.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from benchmarks.timing import best_time

__all__ = ["BatchedGRU", "main"]

C, VOCAB, OUT, BATCH, LENGTH, LAYERS = 64, 11, 10, 256, 36, 2


class BatchedGRU(nn.Module):
    """One bidirectional GRU layer for ``E`` independent models: input ``[E, B, T, I]``, output
    ``[E, B, T, 2C]`` (PyTorch's GRU equations, gates ordered r, z, n)."""

    def __init__(self, members: int, inputs: int, width: int):
        super().__init__()
        k = width ** -0.5
        self.w_in = nn.Parameter(torch.empty(2, members, inputs, 3 * width).uniform_(-k, k))
        self.w_h = nn.Parameter(torch.empty(2, members, width, 3 * width).uniform_(-k, k))
        self.b_in = nn.Parameter(torch.empty(2, members, 1, 3 * width).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(2, members, 1, 3 * width).uniform_(-k, k))
        self.width = width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        E, B, T, _ = x.shape
        W = self.width
        projected = torch.einsum("ebti,deic->debtc", x, self.w_in) + self.b_in.unsqueeze(2)   # [2, E, B, T, 3C]
        outputs = []
        for d in range(2):
            steps = projected[d].unbind(2)            # per-position views (a cheap backward)
            h = x.new_zeros(E, B, W)
            hs = [None] * T
            for t in (range(T) if d == 0 else range(T - 1, -1, -1)):
                gh = torch.baddbmm(self.b_h[d], h, self.w_h[d])                             # [E, B, 3C]
                r, z = torch.sigmoid(steps[t][..., :2 * W] + gh[..., :2 * W]).chunk(2, -1)
                n = torch.tanh(steps[t][..., 2 * W:] + r * gh[..., 2 * W:])
                h = n + z * (h - n)
                hs[t] = h
            outputs.append(torch.stack(hs, 2))
        return torch.cat(outputs, -1)


def _model() -> nn.ModuleDict:
    return nn.ModuleDict({"wte": nn.Embedding(VOCAB, C), "head": nn.Linear(2 * C, OUT),
                          "rnn": nn.GRU(C, C, num_layers=LAYERS, batch_first=True, bidirectional=True)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ensemble", description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    E = args.members
    tokens = torch.randint(0, VOCAB, (BATCH, LENGTH))
    targets = torch.randint(0, OUT, (BATCH, LENGTH))
    models = [_model() for _ in range(E)]

    def sequential() -> None:
        for m in models:
            h, _ = m["rnn"](m["wte"](tokens))
            F.cross_entropy(m["head"](h).view(-1, OUT), targets.view(-1)).backward()

    result = {"members": E, "threads": args.threads, "batch": BATCH, "length": LENGTH,
              "sequential_ms": 1000 * best_time(sequential, args.repeats) / E}

    from torch.func import functional_call, stack_module_state, vmap

    params, _ = stack_module_state([m["rnn"] for m in models])
    skeleton = copy.deepcopy(models[0]["rnn"]).to("meta")
    x = models[0]["wte"](tokens).detach()
    try:
        vmap(lambda p: functional_call(skeleton, p, (x,))[0])(params)
        result["vmap"] = "ran"
    except RuntimeError as exc:
        result["vmap"] = f"unsupported: {str(exc).splitlines()[0]}"

    layers = [BatchedGRU(E, C, C), BatchedGRU(E, 2 * C, C)]
    emb = nn.Parameter(torch.randn(E, VOCAB, C))
    head = nn.Parameter(0.1 * torch.randn(E, 2 * C, OUT))
    stacked_tokens = tokens.expand(E, BATCH, LENGTH)

    def batched() -> None:
        h = emb[torch.arange(E)[:, None, None], stacked_tokens]
        for layer in layers:
            h = layer(h)
        logits = torch.einsum("ebtc,eco->ebto", h, head)
        F.cross_entropy(logits.reshape(-1, OUT), targets.expand(E, BATCH, LENGTH).reshape(-1)).backward()

    result["batched_ms"] = 1000 * best_time(batched, args.repeats) / E
    result["batched_speedup"] = result["sequential_ms"] / result["batched_ms"]
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{E} members, {args.threads} thread(s), batch {BATCH} x {LENGTH} tokens, per model-step:")
        print(f"  sequential nn.GRU  {result['sequential_ms']:7.1f} ms")
        print(f"  batched ensemble   {result['batched_ms']:7.1f} ms  ({result['batched_speedup']:.2f}x sequential)")
        print(f"  vmap over nn.GRU   {result['vmap']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
