"""Markdown tables of issue 36's evidence for docs/experiments.md, from committed run folders
(``results.csv`` and ``summary.json`` alone):

``python -m benchmarks.report_issue36 RUN_DIR [RUN_DIR ...]``

Per run: the searches' edges per method (:mod:`verify.experiments.search_edges`); fig3-left: per
``|H|`` the fair rows on the clean split and on i.i.d. draws with the paired differences
``prompt-fair - head-fair`` and ``prompt-refit - head-fair`` (95% t-intervals, description), and
the prompts' movement (:mod:`verify.experiments.diagnostics`); every verdict on both estimands.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np


def _t(d):
    from scipy import stats

    d = np.asarray(d, float)
    if len(d) < 2 or d.std() == 0:
        return f"{d.mean():+.3f}"
    h = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return f"{d.mean():+.3f} [{d.mean() - h:+.3f}, {d.mean() + h:+.3f}]"


def left_table(records: list, model: str) -> list[str]:
    cells: dict = {}
    for r in records:
        if r["model"] == model:
            cells.setdefault(int(r["hidden_states"]), {}).setdefault(r["method"], {})[int(r["trial"])] = r
    out = ["| `\\|H\\|` | head-fair | prompt-fair | prompt-refit | prompt-fair - head-fair | prompt-refit - head-fair "
           "| i.i.d.: head-fair | i.i.d.: prompt-fair | i.i.d.: prompt-fair - head-fair |", "|" + "---|" * 9]
    for h in sorted(cells):
        c = cells[h]
        trials = sorted(set(c.get("head-fair", {})) & set(c.get("prompt-fair", {})))

        def acc(m, col="accuracy"):
            return [float(c[m][t][col]) for t in trials if t in c.get(m, {})]

        def diff(a, b, col="accuracy"):
            return [float(c[a][t][col]) - float(c[b][t][col]) for t in trials if t in c.get(a, {})]

        out.append(f"| {h} | {np.mean(acc('head-fair')):.3f} | {np.mean(acc('prompt-fair')):.3f} | "
                   f"{np.mean(acc('prompt-refit')):.3f} | {_t(diff('prompt-fair', 'head-fair'))} | "
                   f"{_t(diff('prompt-refit', 'head-fair'))} | {np.mean(acc('head-fair', 'iid_accuracy')):.3f} | "
                   f"{np.mean(acc('prompt-fair', 'iid_accuracy')):.3f} | "
                   f"{_t(diff('prompt-fair', 'head-fair', 'iid_accuracy'))} |")
    return out


def main() -> None:
    from headprompt.verify.experiments.diagnostics import movement_table
    from headprompt.verify.experiments.search_edges import edge_table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    args = ap.parse_args()
    for run in args.runs:
        summary = json.loads((run / "summary.json").read_text())
        with open(run / "results.csv", newline="") as fh:
            records = list(csv.DictReader(fh))
        print(f"\n## {run}\n\nsearch edges:\n\n| model | method | selections | on an edge | edge beats its neighbour | at l2=0 |")
        print("|---|---|---|---|---|---|")
        for e in edge_table(records):
            print(f"| {e['model']} | {e['method']} | {e['selections']} | {e['on_edge']} | {e['edge_beats']} "
                  f"({100 * e['edge_beats_share']:.0f}%) | {e.get('path_end', 0)} |")
        if summary["experiment"] == "fig3-left":
            for model in sorted({r["model"] for r in records}):
                print(f"\n{model} rows:\n")
                print("\n".join(left_table(records, model)))
        mv = movement_table(records, ("hidden_states",) if summary["experiment"] == "fig3-left" else ("hidden_total",))
        if mv:
            print("\nprompt movement:\n\n| model | method | `\\|H\\|` | mean TV moved | outputs moved > 0.01 | "
                  "predictions changed | trials with no prediction changed | gradient at the initial prompt | shift |")
            print("|" + "---|" * 9)
            for m in mv:
                print(f"| {m['model']} | {m['method']} | {list(m['setting'].values())[0]} | {m['tv_mean']:.3f} | "
                      f"{m['outputs_changed']:.0%} | {m['predictions_changed']:.1%} | {m['unmoved_trials']} of "
                      f"{m['trials']} | {m['grad0_mean']:.2g} | {m['shift_mean']:.2g} |")
        print("\nverdicts (clean split | i.i.d. draws):\n\n| test | clean: estimate [95% CI], p (adj.) | verdict "
              "| i.i.d.: estimate [95% CI], p (adj.) | verdict |\n|---|---|---|---|---|")
        iid = (summary.get("estimand_iid") or {})
        iid_items = {p["id"]: p for p in iid.get("predictions", []) + iid.get("controls", [])}
        for p in summary["predictions"] + summary["controls"]:
            def cell(q):
                if not q or q["pooled"].get("estimate") is None:
                    return "n/a", "n/a"
                pt = q["pooled"]
                ci = pt.get("ci95")
                ci = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "[no interval]"
                pa = pt.get("p_adjusted", pt.get("p"))
                return f"{pt['estimate']:+.3f} {ci}, p {pa:.2g}" if pa is not None else f"{pt['estimate']:+.3f} {ci}", q["verdict"]
            a, b = cell(p), cell(iid_items.get(p["id"]))
            print(f"| {p['id']} | {a[0]} | {a[1]} | {b[0]} | {b[1]} |")


if __name__ == "__main__":
    main()
