"""The paper's Figure 3 (left) beside ours: a table and a two-panel figure (issue 36, item 7).

``python -m benchmarks.paper_side_by_side --out DIR LABEL=RUN_DIR [LABEL=RUN_DIR ...]``

Left panel: test accuracy by ``|H|``, the paper's prompt and head tuning
(:data:`verify.experiments.paper_figure.PAPER_LEFT`, read from the paper's Figure 3) dashed, and
each run's fair prompt and head rows (``prompt-fair``, ``head-fair``; MLM rows only from trials
whose MLM passed the gate) solid with 95% bands. Right panel: the gap, prompt minus head, per
source (ours: the mean paired difference with its t-interval). Writes ``fig3-left-vs-paper.png``
and ``table.md`` into ``DIR``.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np


def _paired(records: list, model: str, a: str, b: str, column: str = "accuracy") -> dict:
    """``{|H|: [differences a - b per trial]}`` over the trials that passed the gate (MLM)."""
    cells: dict = {}
    for r in records:
        if r["model"] != model or r["method"] not in (a, b):
            continue
        if model == "mlm" and str(r.get("gate_passed")).lower() != "true":
            continue
        cells.setdefault(int(r["hidden_states"]), {}).setdefault(int(r["trial"]), {})[r["method"]] = float(r[column])
    return {h: [t[a] - t[b] for t in trials.values() if a in t and b in t] for h, trials in sorted(cells.items())}


def _mean(records: list, model: str, method: str, column: str = "accuracy") -> dict:
    out: dict = {}
    for r in records:
        if r["model"] == model and r["method"] == method and (model != "mlm" or str(r.get("gate_passed")).lower() == "true"):
            out.setdefault(int(r["hidden_states"]), []).append(float(r[column]))
    return {h: float(np.mean(v)) for h, v in sorted(out.items())}


def _t_interval(d: list) -> tuple[float, float, float]:
    from scipy import stats

    d = np.asarray(d, dtype=float)
    m = float(d.mean())
    if len(d) < 2 or d.std() == 0:
        return m, m, m
    half = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)))
    return m, m - half, m + half


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from headprompt.verify.experiments.paper_figure import PAPER_LEFT

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="LABEL=RUN_DIR[:model] (model mlm or exact; default exact)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--column", default="accuracy", help="accuracy (clean split) or iid_accuracy")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sources = []
    for item in args.runs:
        label, _, rest = item.partition("=")
        path, _, model = rest.partition(":")
        with open(Path(path) / "results.csv", newline="") as fh:
            records = list(csv.DictReader(fh))
        sources.append((label, model or "exact", records))
    hs = sorted(PAPER_LEFT)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.9))
    ax.plot(hs, [PAPER_LEFT[h][0] / 100 for h in hs], "--^", color="tab:orange", lw=2, label="paper: prompt")
    ax.plot(hs, [PAPER_LEFT[h][1] / 100 for h in hs], "--^", color="tab:blue", lw=2, label="paper: head")
    bx.plot(hs, [(PAPER_LEFT[h][0] - PAPER_LEFT[h][1]) / 100 for h in hs], "--^", color="black", lw=2, label="paper")
    styles = ["-o", "-s", "-D"]
    colours = ["tab:green", "tab:purple", "tab:brown"]
    lines = ["| |H| | paper prompt | paper head | paper gap | " + " | ".join(
        f"{label}: prompt | {label}: head | {label}: gap [95% CI]" for label, _, _ in sources) + " |",
        "|" + "---|" * (4 + 3 * len(sources))]
    table = {h: [f"{PAPER_LEFT[h][0] / 100:.3f}", f"{PAPER_LEFT[h][1] / 100:.3f}",
                 f"{(PAPER_LEFT[h][0] - PAPER_LEFT[h][1]) / 100:+.3f}"] for h in hs}
    extra_h = set()
    for i, (label, model, records) in enumerate(sources):
        prompt, head = _mean(records, model, "prompt-fair", args.column), _mean(records, model, "head-fair", args.column)
        gaps = _paired(records, model, "prompt-fair", "head-fair", args.column)
        xs = sorted(set(prompt) & set(head))
        extra_h |= set(xs) - set(hs)
        if i == 0:
            ax.plot(xs, [prompt[h] for h in xs], styles[i], color="tab:orange", lw=2, label="ours: prompt")
            ax.plot(xs, [head[h] for h in xs], styles[i], color="tab:blue", lw=2, label="ours: head")
            ax.set_title(f"accuracy; ours: {label}", fontsize=10)
        g = {h: _t_interval(gaps[h]) for h in xs if gaps.get(h)}
        gx = sorted(g)
        bx.plot(gx, [g[h][0] for h in gx], styles[i], color=colours[i], lw=2, label=label)
        bx.fill_between(gx, [g[h][1] for h in gx], [g[h][2] for h in gx], color=colours[i], alpha=0.15, lw=0)
        for h in sorted(set(hs) | set(xs)):
            table.setdefault(h, ["", "", ""])
            if h in g:
                table[h] += [f"{prompt[h]:.3f}", f"{head[h]:.3f}", f"{g[h][0]:+.3f} [{g[h][1]:+.3f}, {g[h][2]:+.3f}]"]
            else:
                table[h] += ["", "", ""]
    for h in sorted(table):
        row = table[h] + [""] * (3 + 3 * len(sources) - len(table[h]))
        lines.append(f"| {h} | " + " | ".join(row) + " |")
    bx.set_title("prompt minus head", fontsize=11)
    for a in (ax, bx):
        a.set_xlabel("number of hidden states |H|", fontsize=11)
        a.set_xticks(sorted(set(hs) | extra_h))
        a.grid(alpha=0.3)
        a.tick_params(labelsize=10)
    ax.set_ylabel("test accuracy" + (" (i.i.d. draws)" if args.column == "iid_accuracy" else ""), fontsize=11)
    bx.axhline(0, color="grey", lw=1)
    ax.legend(fontsize=9, loc="lower left")
    bx.legend(fontsize=9, loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out / "fig3-left-vs-paper.png", dpi=150)
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
