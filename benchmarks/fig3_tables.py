"""Markdown tables of a Figure 3 run, for the README: ``python -m benchmarks.fig3_tables DIR``
(``--pretraining``: the steps and seconds of its pretrainings instead).

``DIR`` is an experiment's output directory (``summary.json`` inside); the tables give, per
setting, the MLM's gate TV per trial, the majority line, the mean accuracies, the paired
differences with their 95% intervals, and (fig3-right) the controls; then each claim's and
control's pooled test (verdict, estimate, interval, p-values, detectable effect).
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


def _gate(quality: list, setting: dict) -> str:
    q = next((q for q in quality if q["setting"] == setting), None)
    if q is None:
        return ""
    tvs = [t["tv"] for t in q["trials"]]
    passed = sum(t["passed"] for t in q["trials"])
    if len(tvs) > 3:                       # many trials: mean and max, and how many passed
        return f"{sum(tvs) / len(tvs):.3f} (max {max(tvs):.3f}; {passed}/{len(tvs)} passed)"
    return f"{', '.join(f'{v:.3f}' for v in tvs)} ({'yes' if q['passed'] else 'no'})"


def _paired(claims: list, model: str, key) -> dict | None:
    claim = next((c for c in claims if c.get("claim", c.get("control", "")).endswith(f"({model})")
                  or c.get("model") == model), None)
    return None if claim is None else next((p for p in claim["paired"] if p["setting"] == key), None)


def _verdicts(summary: dict) -> list[str]:
    """The pooled test of every claim and control, one table row each."""
    lines = ["| claim or control | model | verdict | pooled estimate | 95% interval | p (t) | p (Wilcoxon) "
             "| detectable effect (80% power) | pairs / settings |", "|---" * 9 + "|"]
    items = [(c["claim"].rsplit(" (", 1)[0], c["claim"].rsplit("(", 1)[-1].rstrip(")"), c)
             for c in summary["predictions"]]
    items += [("control: " + c["control"], c["model"], c) for c in summary["controls"]]
    for text, model, c in items:
        pt = c["pooled"]
        ci = f"[{pt['ci95'][0]:+.3f}, {pt['ci95'][1]:+.3f}]" if pt.get("ci95") else ""
        est = f"{pt['estimate']:+.3f}" if pt.get("estimate") is not None else ""
        p_t = f"{pt['p_value']:.2g}" if pt.get("p_value") is not None else ""
        p_w = f"{pt['wilcoxon_p']:.2g}" if pt.get("wilcoxon_p") is not None else ""
        lines.append(f"| {text} | {model} | {c['verdict']} | {est} | {ci} | {p_t} | {p_w} | {_fmt(pt.get('mde'))} | "
                     f"{pt['pairs']} / {pt['settings']} |")
    return lines


def left(summary: dict) -> list[str]:
    rows, quality = summary["rows"], summary["quality"]
    majority = {m["setting"]["hidden_states"]: m["accuracy"] for m in summary["majority"]}
    out = ["| |H| | MLM gate TV per trial (passed?) or mean (max) | majority | MLM head | MLM prompt | MLM prompt - head, 95% CI "
           "| exact head | exact prompt | exact prompt - head, 95% CI |", "|---" * 9 + "|"]
    for H in summary["config"]["hidden_sizes"]:
        s = {"hidden_states": H}
        out.append(f"| {H} | {_gate(quality, s)} | {_fmt(majority.get(H))} | {_fmt(_acc(rows, s, 'head', 'mlm'))} | "
                   f"{_fmt(_acc(rows, s, 'prompt', 'mlm'))} | {_diff(_paired(summary['predictions'], 'mlm', H))} | "
                   f"{_fmt(_acc(rows, s, 'head', 'exact'))} | {_fmt(_acc(rows, s, 'prompt', 'exact'))} | "
                   f"{_diff(_paired(summary['predictions'], 'exact', H))} |")
    return out + [""] + _verdicts(summary)


def right(summary: dict) -> list[str]:
    rows, quality, controls = summary["rows"], summary["quality"], summary["control_rows"]
    out = ["| |M||H| | MLM gate TV per trial, memory / vanilla (passed?) | majority, memory | memory + attention: MLM | "
           "exact | vanilla + linear head: MLM | exact | memory - vanilla (MLM), 95% CI | memory - vanilla (exact), "
           "95% CI | vanilla + attention: MLM / exact (control) | token-only attention (control) |", "|---" * 11 + "|"]
    majority = {(m["setting"]["data"], m["setting"]["memory_values"]): m["accuracy"] for m in summary["majority"]}
    for M in summary["config"]["memory_values"]:
        H = 4 * M
        mem = {"data": "memory", "memory_values": M, "hidden_total": H}
        van = {"data": "vanilla", "memory_values": M, "hidden_total": H}
        out.append(f"| {H} | {_gate(quality, mem)} / {_gate(quality, van)} | {_fmt(majority.get(('memory', M)))} | "
                   f"{_fmt(_acc(rows, mem, 'attention', 'mlm'))} | {_fmt(_acc(rows, mem, 'attention', 'exact'))} | "
                   f"{_fmt(_acc(rows, van, 'head', 'mlm'))} | {_fmt(_acc(rows, van, 'head', 'exact'))} | "
                   f"{_diff(_paired(summary['predictions'], 'mlm', H))} | "
                   f"{_diff(_paired(summary['predictions'], 'exact', H))} | "
                   f"{_fmt(_acc(controls, van, 'attention', 'mlm'))} / {_fmt(_acc(controls, van, 'attention', 'exact'))} | "
                   f"{_fmt(_acc(controls, mem, 'attention-tokens', 'none'))} |")
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
          f"{summary['trials']} trials, "
          f"{summary['seconds']:.0f} s; jobs {summary['jobs']}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
