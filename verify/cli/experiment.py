"""``verify experiment fig3-left|fig3-right``: the paper's Figure 3 with the exact-G oracle.

Writes ``results.csv``, ``summary.json`` and a PNG into ``--out DIR`` (SPEC section 4); with
``--json`` prints the summary as one JSON object. Progress goes to stderr (with or without
``--json``): a bar on a terminal, otherwise one line per finished job with elapsed time and ETA.
Exit code 0 when every job completed (whether or not the predictions held; the summary says), 2 on bad input
(decided before any training), 4 when a job failed (the others are kept and cached; a rerun
resumes). This module imports no torch: ``verify --help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from .options import ascii_int, path_arg

__all__ = ["NAME", "add_parser", "run"]

DESCRIPTION = ("Figure 3 of the paper: head vs prompt tuning over hidden sizes (fig3-left) and a memory "
               "HMM with an attention head vs a vanilla HMM with a linear head (fig3-right), on a "
               "pretrained masked LM and on the exact model. Writes results.csv, summary.json and the "
               "plots into --out.")


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


def one_thread_workers(device, scale: str, models: str) -> bool:
    """Whether the jobs run one per core in worker processes of one thread each: on CPU for the
    small models of the tiny and cpu scales and for exact-only runs at any scale (no pretraining;
    one job's tuning gains little from a second thread: fig3-left at the paper setting takes
    3.1 min this way against 6.6 min in one multi-threaded process on 2 cores), unless
    ``OMP_NUM_THREADS`` asks for a thread count."""
    return (device.type == "cpu" and (scale != "paper" or models == "exact")
            and "OMP_NUM_THREADS" not in os.environ)


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..experiments.config import EXPERIMENTS, SCALE_NAMES

    p = subparsers.add_parser(NAME, help="Figure 3: MLM vs exact G, head vs prompt vs attention tuning",
                              description=DESCRIPTION)
    p.add_argument("name", metavar="NAME", choices=EXPERIMENTS, help=" | ".join(EXPERIMENTS))
    p.add_argument("--scale", choices=list(SCALE_NAMES), default="tiny",
                   help="tiny (~1 min on 2 CPU cores), cpu (all settings, CPU), paper (GPU)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to pretrain and tune: auto (CUDA when present, else CPU), cpu or cuda")
    p.add_argument("--trials", type=_positive, default=None,
                   help="trials per setting, each a new HMM, pretraining and task (default: the scale's)")
    p.add_argument("--config", metavar="FILE", default=None, type=path_arg,
                   help="TOML or JSON file overriding any hyperparameter (see README)")
    p.add_argument("--share-pretraining", action="store_true",
                   help="one HMM and one pretraining per setting; trials redraw only the task")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run the (setting, trial) jobs as Ray tasks: a local Ray without ADDRESS, "
                        "else the cluster at ADDRESS (needs the 'cluster' extra)")
    p.add_argument("--workers", type=_positive, default=None,
                   help="jobs run at once in local processes (default: one per core on CPU at the "
                        "tiny and cpu scales and with --model exact, else 1)")
    p.add_argument("--cached-only", action="store_true",
                   help="run nothing: summarise the jobs of this sweep that already finished")
    p.add_argument("--model", choices=("both", "mlm", "exact"), default="both",
                   help="which backbones: both (default), the pretrained MLM only, or the exact Gbar only "
                        "(no pretraining: e.g. --scale paper on a CPU)")
    p.add_argument("--memory-hmm", choices=("appendix-d", "hidden"), default=None,
                   help="fig3-right's memory HMM: Appendix D's, or one whose tokens alone hardly reveal the "
                        "memory (default: the scale's, appendix-d)")
    p.add_argument("--out", metavar="DIR", default=None, type=path_arg, help="output directory (default runs/NAME-SCALE)")
    p.add_argument("--plan", metavar="FILE", default=None, type=path_arg,
                   help="write the run's complete plan (settings, trials, seeds, budgets, gate, baselines, "
                        "tests, alpha, family) with its sha256 to FILE before any job; a FILE holding a "
                        "different plan is refused (default: plan.json in --out, replaced freely)")
    p.add_argument("--uncommitted-plan", action="store_true",
                   help="start a --plan run whose plan is not in a git commit yet (by default it is refused: "
                        "a plan must be committed before its results; summary.json records plan.commit)")
    p.add_argument("--replan", action="store_true",
                   help="replace a --plan FILE that holds a different plan (summary.json records both hashes)")
    p.add_argument("--pilot", metavar="DIR", default=None, type=path_arg,
                   help="an earlier run of the same experiment (results.csv, plan.json): the plan states each "
                        "test's detectable effect at 80%% power for --trials, from the pilot's noise")
    p.add_argument("--seed", type=ascii_int, default=0, help="seed of the sweep: HMMs, tasks and training (default 0)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    import sys

    import torch

    from ...models.mlm.model import resolve_device
    from ...models.mlm.cache import cache_dir
    from ..runtime.output_paths import check_out_dir
    from ..experiments.figure3 import run_experiment
    from ..reports.render import console, emit_json

    out = args.out or f"runs/{args.name}-{args.scale}"
    check_out_dir(out, flag="--out")                        # before any work (SPEC section 2)
    if args.plan is not None:
        check_out_dir(str(Path(args.plan).parent) if str(Path(args.plan).parent) else ".", flag="--plan")
    check_out_dir(str(cache_dir()), flag="the model cache ($HEADPROMPT_CACHE)")
    device = resolve_device(args.device)
    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    one = one_thread_workers(device, args.scale, args.model)
    if one:
        torch.set_num_threads(1)   # small models: a second thread gains little and suffers on a busy machine
    workers = args.workers or (len(os.sched_getaffinity(0)) if one else 1)
    try:
        summary = run_experiment(args.name, args.scale, device=device, trials=args.trials, seed=args.seed,
                                 out=out, progress=True, config=args.config,
                                 share_pretraining=args.share_pretraining, ray=args.ray,
                                 threads=1 if one else None, cached_only=args.cached_only, workers=workers,
                                 models=args.model, memory_hmm=args.memory_hmm, plan=args.plan,
                                 replan=args.replan, uncommitted_plan=args.uncommitted_plan,
                                 pilot=args.pilot)
    finally:
        torch.set_num_threads(threads)
    code = 4 if summary["failed_jobs"] else 0
    if summary["failed_jobs"]:
        first = summary["failed_jobs"][0]
        print(f"error: {len(summary['failed_jobs'])} of {summary['jobs']['total']} jobs failed (first: "
              f"{first['setting']} trial {first['trial']}: {first['error']}); the others are saved, "
              f"a rerun resumes; tracebacks under failed_jobs in summary.json", file=sys.stderr)
    if args.json:
        emit_json(summary)
        return code
    from rich.table import Table

    con = console()
    table = Table(title=f"{args.name} at scale {args.scale} on {device}, {summary['trials']} trials")
    for col in ("setting", "method", "model", "accuracy (clean split)", "95% interval", "i.i.d. draws", "trials"):
        table.add_column(col)
    iid = summary.get("estimand_iid") or {}
    iid_rows = {(str(r["setting"]), r["method"], r["model"]): r["accuracy"]
                for r in iid.get("rows", []) + iid.get("control_rows", [])}
    for r in summary["rows"] + summary["control_rows"]:
        setting = ", ".join(f"{k}={v}" for k, v in r["setting"].items())
        a_iid = iid_rows.get((str(r["setting"]), r["method"], r["model"]))
        table.add_row(setting, r["method"], r["model"], f"{r['accuracy']:.3f}",
                      f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]", "" if a_iid is None else f"{a_iid:.3f}",
                      str(r["trials"]))
    con.print(table)
    gate = summary.get("gate") or {}
    for q in summary["quality"]:
        setting = ", ".join(f"{k}={v}" for k, v in q["setting"].items())
        x, data = list(q["setting"].values())[-1], q["setting"].get("data", "vanilla")
        trials = [g for g in gate.get("trials", []) if g["setting"] == x and g["data"] == data]
        bound = max((g["bound"] for g in trials), default=float("nan"))
        passed = sum(g["passed"] for g in trials)
        con.print(f"MLM gate {setting}: TV at position 0 {sum(g['tv0'] for g in trials) / max(len(trials), 1):.3f}, "
                  f"worst upper bound {bound:.3f} (passes at <= {q['threshold']}): {passed} of {len(trials)} trials "
                  f"passed; pretraining's mixed TV {q['tv_mean']:.3f}, loss gap {q['loss_gap_mean']:.3f} nats")
    on_iid = {p["id"]: p for p in iid.get("predictions", []) + iid.get("controls", [])}

    def iid_line(item: dict) -> str:
        other = on_iid.get(item["id"])
        if other is None or other["pooled"].get("estimate") is None:
            return ""
        return f"\n  on i.i.d. test draws (the paper's estimand): {other['verdict']}, estimate {other['pooled']['estimate']:+.3f}"

    from ..experiments.design import design_line

    def planned(item: dict) -> str:
        line = design_line(summary.get("design"), item["id"])
        return f"\n  {line}" if line else ""

    for p in summary["predictions"]:
        con.print(f"{p['verdict']}: {p['claim']}\n  {p['evidence']}{planned(p)}{iid_line(p)}", markup=False)
    for c in summary["controls"]:
        con.print(f"control ({c['model']}) {c['control']}: {c['verdict']}\n  {c['evidence']}{iid_line(c)}",
                  markup=False)
    from ..experiments.search_edges import edge_text

    for line in edge_text(summary.get("search_edges") or []):
        con.print(f"search: {line}", markup=False)
    missing = summary["jobs"].get("missing", 0)
    con.print(f"wrote {out}/results.csv, summary.json, {args.name}.png, {args.name}-paper.png in "
              f"{time.perf_counter() - t0:.1f}s ({summary['jobs']['reused']} of {summary['jobs']['total']} jobs "
              f"reused from the cache" + (f"; {missing} not finished yet, left out" if missing else "") + ")")
    return code
