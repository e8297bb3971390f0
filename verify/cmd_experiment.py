"""``verify experiment fig3-left|fig3-right``: the paper's Figure 3 with the exact-G oracle.

Writes ``results.csv``, ``summary.json`` and a PNG into ``--out DIR`` (SPEC section 4); with
``--json`` prints the summary as one JSON object. Progress bars go to stderr. Exit code 0 when
the run completes (whether or not the predictions held; the summary says), 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import time

__all__ = ["NAME", "add_parser", "run"]

NAME = "experiment"


def _positive(text: str) -> int:
    # argparse shows an ArgumentTypeError's own message (a ValueError would read
    # "invalid _positive value")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {value}")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
    from .experiment import EXPERIMENTS, SCALES

    p = subparsers.add_parser(NAME, help="Figure 3: MLM vs exact G, head vs prompt vs attention tuning",
                              description=__doc__.splitlines()[0])
    p.add_argument("name", metavar="NAME", choices=EXPERIMENTS, help=" | ".join(EXPERIMENTS))
    p.add_argument("--scale", choices=list(SCALES), default="tiny",
                   help="tiny (~1 min on 2 CPU cores), cpu (all settings, < 1 h on CPU), paper (GPU)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--trials", type=_positive, default=None,
                   help="downstream trials per setting (default: the scale's)")
    p.add_argument("--out", metavar="DIR", default=None, help="output directory (default runs/NAME-SCALE)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..models.mlm import resolve_device
    from .experiment import run_experiment
    from .render import console, emit_json

    from ..models.mlm import cache_dir
    from .common import check_out_dir

    out = args.out or f"runs/{args.name}-{args.scale}"
    check_out_dir(out, flag="--out")                        # before any work (SPEC section 2)
    check_out_dir(str(cache_dir()), flag="the model cache ($HEADPROMPT_CACHE)")
    device = resolve_device(args.device)
    t0 = time.perf_counter()
    import torch

    threads = torch.get_num_threads()
    if device.type == "cpu" and args.scale != "paper" and "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(1)   # small models: a second thread gains little and suffers on a busy machine
    try:
        summary = run_experiment(args.name, args.scale, device=device, trials=args.trials, seed=args.seed,
                                 out=out, progress=not args.json)
    finally:
        torch.set_num_threads(threads)
    if args.json:
        emit_json(summary)
        return 0
    from rich.table import Table

    con = console()
    table = Table(title=f"{args.name} at scale {args.scale} on {device}")
    for col in ("setting", "method", "model", "accuracy", "95% interval", "trials"):
        table.add_column(col)
    for r in summary["rows"]:
        setting = ", ".join(f"{k}={v}" for k, v in r["setting"].items())
        table.add_row(setting, r["method"], r["model"], f"{r['accuracy']:.3f}",
                      f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]", str(r["trials"]))
    con.print(table)
    for p in summary["predictions"]:
        con.print(f"{'held' if p['held'] else 'did not hold'}: {p['claim']}\n  {p['evidence']}")
    con.print(f"wrote {out}/results.csv, summary.json, {args.name}.png in {time.perf_counter() - t0:.1f}s")
    return 0
