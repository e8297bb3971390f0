"""Markdown tables of a Figure 3 run, for the README: ``python -m benchmarks.fig3_tables DIR``
(``--pretraining``: the steps and seconds of its pretrainings instead).

``DIR`` is an experiment's output directory (``summary.json`` inside); the tables give, per
setting, the MLMs' downstream gate (TV at position 0, its worst bound, trials passed), the
majority line, the mean accuracies of the paper-protocol and fair rows, the paired differences
of the claim (fair pair; fig3-right: and the 2 x 2 interaction) with their 95% intervals; then
every test's pooled verdict (estimate, interval, p, Holm-adjusted p, detectable effect, pairs,
trials excluded by the gate).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.3f}"


def _diff(p: dict | None) -> str:
    if p is None:
        return ""
    if p["ci95"] is None:
        return f"{p['difference']:+.3f}"
    lo, hi = p["ci95"]
    return f"{p['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _acc(rows: list, setting: dict, method: str, model: str) -> float | None:
    return next((r["accuracy"] for r in rows if r["setting"] == setting and r["method"] == method
                 and r["model"] == model), None)


def _gate(summary: dict, setting: int, data: str = "vanilla") -> str:
    """The downstream gate of a setting's MLMs: the mean TV at position 0, the worst upper
    bound, and how many trials passed (excluded ones are the rest)."""
    trials = [g for g in (summary.get("gate") or {}).get("trials", []) if g["setting"] == setting and g["data"] == data]
    if not trials:
        return ""
    passed = sum(g["passed"] for g in trials)
    return (f"{sum(g['tv0'] for g in trials) / len(trials):.3f} (bound max {max(g['bound'] for g in trials):.3f}; "
            f"{passed}/{len(trials)} passed)")


def _item(summary: dict, test_id: str) -> dict | None:
    return next((c for c in summary["predictions"] + summary["controls"] if c.get("id") == test_id), None)


def _paired(summary: dict, test_id: str, key) -> dict | None:
    item = _item(summary, test_id)
    p = None if item is None else next((p for p in item["paired"] if p["setting"] == key), None)
    return None if p is None or p["difference"] is None else p


def _verdicts(summary: dict) -> list[str]:
    """The pooled test of every claim, interaction, control and reproduction, one row each."""
    lines = ["| test | model | verdict | pooled estimate | 95% interval | p | Holm-adjusted p | detectable effect "
             "(80% power) | pairs / settings | trials excluded by the gate |", "|---" * 10 + "|"]
    for c in summary["predictions"] + summary["controls"]:
        pt = c["pooled"]
        text = c.get("claim") or "control: " + c["control"]
        ci = f"[{pt['ci95'][0]:+.3f}, {pt['ci95'][1]:+.3f}]" if pt.get("ci95") else ""
        est = f"{pt['estimate']:+.3f}" if pt.get("estimate") is not None else ""
        p = pt.get("p", pt.get("p_value"))
        padj = pt.get("p_adjusted") if c.get("in_family") else None
        mde = pt.get("detectable_effect", pt.get("mde"))
        lines.append(f"| {text} | {c['model']} | {c['verdict']} | {est} | {ci} | {'' if p is None else f'{p:.2g}'} | "
                     f"{'outside the family' if not c.get('in_family') else ('' if padj is None else f'{padj:.2g}')} | "
                     f"{_fmt(mde)} | {pt.get('pairs', '')} / {pt.get('settings', '')} | {c.get('excluded_trials', 0)} |")
    return lines


def _models(summary: dict) -> tuple:
    return {"both": ("mlm", "exact"), "mlm": ("mlm",), "exact": ("exact",)}[summary.get("models", "both")]


def left(summary: dict) -> list[str]:
    rows = summary["rows"]
    majority = {m["setting"]["hidden_states"]: m["accuracy"] for m in summary["majority"]}
    cols = ["|H|", "majority"] + (["MLM gate: TV0 (bound max; passed)"] if "mlm" in _models(summary) else [])
    for m in _models(summary):
        cols += [f"{m} head", f"{m} head-fair", f"{m} prompt", f"{m} prompt-fair",
                 f"{m} prompt-fair - head-fair, 95% CI", f"{m} prompt - head (paper protocol)"]
    out = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
    for H in summary["config"]["hidden_sizes"]:
        s = {"hidden_states": H}
        cells = [str(H), _fmt(majority.get(H))] + ([_gate(summary, H)] if "mlm" in _models(summary) else [])
        for m in _models(summary):
            cells += [_fmt(_acc(rows, s, meth, m)) for meth in ("head", "head-fair", "prompt", "prompt-fair")]
            cells += [_diff(_paired(summary, f"claim:{m}", H)), _diff(_paired(summary, f"reproduction:{m}", H))]
        out.append("| " + " | ".join(cells) + " |")
    return out + [""] + _verdicts(summary)


def right(summary: dict) -> list[str]:
    rows = summary["rows"] + summary["control_rows"]
    majority = {(m["setting"]["data"], m["setting"]["memory_values"]): m["accuracy"] for m in summary["majority"]}
    cols = ["|M||H|", "majority, memory"] + (["MLM gate memory / vanilla"] if "mlm" in _models(summary) else [])
    for m in _models(summary):
        cols += [f"{m}: memory + attention-fair", f"memory + head-fair", f"vanilla + attention-fair",
                 f"vanilla + head-fair", f"{m} claim (fair), 95% CI", f"{m} interaction, 95% CI"]
    cols += ["token-only attention-fair"]
    out = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
    for M in summary["config"]["memory_values"]:
        H = 4 * M
        mem = {"data": "memory", "memory_values": M, "hidden_total": H}
        van = {"data": "vanilla", "memory_values": M, "hidden_total": H}
        cells = [str(H), _fmt(majority.get(("memory", M)))]
        if "mlm" in _models(summary):
            cells.append(f"{_gate(summary, H, 'memory')} / {_gate(summary, H, 'vanilla')}")
        for m in _models(summary):
            cells += [_fmt(_acc(rows, mem, "attention-fair", m)), _fmt(_acc(rows, mem, "head-fair", m)),
                      _fmt(_acc(rows, van, "attention-fair", m)), _fmt(_acc(rows, van, "head-fair", m)),
                      _diff(_paired(summary, f"claim:{m}", H)), _diff(_paired(summary, f"interaction:{m}", H))]
        cells.append(_fmt(_acc(rows, mem, "attention-tokens-fair", "none")))
        out.append("| " + " | ".join(cells) + " |")
    return out + [""] + _verdicts(summary)


def pretraining(directory: Path) -> list[str]:
    """Per setting: how many MLMs were pretrained, their steps to the gate (mean, max) and
    seconds (mean, sum), from ``results.csv`` (one MLM per (setting, trial, data))."""
    import csv

    keys = ("hidden_states", "data", "memory_values")
    seen: dict = {}
    with open(directory / "results.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            if r["model"] != "mlm" or not r.get("pretrain_steps"):
                continue
            setting = tuple((k, r[k]) for k in keys if r.get(k))
            seen.setdefault(setting, {})[r["trial"]] = (int(r["pretrain_steps"]), float(r["pretrain_seconds"]),
                                                        r["pretrain_stopped"], r["pretrain_cached"] == "True")
    out = ["| setting | MLMs | steps: mean (max) | stopped by the gate | seconds per MLM: mean | seconds: sum |",
           "|---" * 6 + "|"]
    total_steps = total_seconds = 0.0
    for setting, trials in seen.items():
        steps = [v[0] for v in trials.values()]
        secs = [v[1] for v in trials.values() if not v[3]]
        total_steps, total_seconds = total_steps + sum(steps), total_seconds + sum(secs)
        name = ", ".join(f"{k}={v}" for k, v in setting)
        out.append(f"| {name} | {len(steps)} | {sum(steps) / len(steps):.0f} ({max(steps)}) | "
                   f"{sum(v[2] == 'gate' for v in trials.values())}/{len(steps)} | "
                   f"{(sum(secs) / len(secs)) if secs else 0:.0f} | {sum(secs):.0f} |")
    out.append(f"| all | {sum(len(t) for t in seen.values())} | {total_steps:.0f} steps in all | | | {total_seconds:.0f} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--pretraining", action="store_true",
                        help="instead: steps and seconds of the run's pretrainings per setting")
    args = parser.parse_args()
    if args.pretraining:
        print("\n".join(pretraining(args.directory)))
        return
    summary = json.loads((args.directory / "summary.json").read_text())
    lines = left(summary) if summary["experiment"] == "fig3-left" else right(summary)
    variant = f", memory HMM {summary['memory_hmm']}" if summary.get("memory_hmm") else ""
    print(f"{summary['experiment']} at scale {summary['scale']}{variant}, models {summary.get('models', 'both')}, "
          f"{summary['trials']} trials, seed {summary['seed']}, plan sha256 {summary['plan']['sha256'][:16]}, "
          f"{summary['seconds']:.0f} s; jobs {summary['jobs']}; splits {summary.get('splits')}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
