"""Figure 3's plots, two panels.

Left: test accuracy per setting for both models, each trial as a point beside the mean, 95%
bands inside [0, 1] (Student-t on the logit scale,
:func:`verify.experiments.stats.accuracy_interval`), the majority-class line, the controls, and
the pretraining quality gate (worst TV of the MLM to the exact ``G_i``) under every setting.
Right: the claim's paired difference per setting (each trial a point, the mean with its 95%
t-interval) and the pooled estimate with its interval (a band over the settings it pools), with
the verdict in the legend (:func:`verify.experiments.stats.pooled_test`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["plot", "replot"]


def _x(row: dict):
    return list(row["setting"].values())[-1]


def plot(name: str, summary: dict, path: Path, records: list | None = None) -> None:
    """Write ``summary``'s figure to ``path`` (PNG); ``records`` (one per trial, model and
    method, as in ``results.csv``) add the per-trial points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["rows"] + summary.get("control_rows", [])
    records = records or []
    fig, (ax, dax) = plt.subplots(1, 2, figsize=(14, 5.2), gridspec_kw={"width_ratios": [1.35, 1]})
    ticks_all = sorted({_x(r) for r in rows})
    step = (max(ticks_all) - min(ticks_all)) / 60 if len(ticks_all) > 1 else 0.05
    if name == "fig3-left":
        lines = [("head", None, "mlm", "Head tuning (MLM)", "tab:blue", "-"),
                 ("prompt", None, "mlm", "Prompt tuning (MLM)", "tab:orange", "-"),
                 ("head", None, "exact", "Head tuning (exact G)", "tab:blue", "--"),
                 ("prompt", None, "exact", "Prompt tuning (exact G)", "tab:orange", "--")]
        ax.axvline(10, color="grey", ls=":", lw=1)
        ax.set_xlabel("hidden states |H|  (|X| = 10, dotted)")
    else:
        lines = [("attention", "memory", "mlm", "Memory HMM + attention (MLM)", "tab:green", "-"),
                 ("head", "vanilla", "mlm", "Vanilla HMM + linear head (MLM)", "tab:red", "-"),
                 ("attention", "memory", "exact", "Memory HMM + attention (exact G)", "tab:green", "--"),
                 ("head", "vanilla", "exact", "Vanilla HMM + linear head (exact G)", "tab:red", "--"),
                 ("attention", "vanilla", "mlm", "control: vanilla HMM + attention (MLM)", "tab:purple", "-."),
                 ("attention", "vanilla", "exact", "control: vanilla HMM + attention (exact G)", "tab:purple", ":"),
                 ("attention-tokens", "memory", "none", "control: token-only attention (memory HMM)", "tab:brown", "-.")]
        ax.set_xlabel("|M||H|")
    low = 1.0                                   # the axis shows every band whole (never clipped)
    key = "hidden_states" if name == "fig3-left" else "hidden_total"
    for i, (method, data, model, label, color, style) in enumerate(lines):
        sel = sorted(((_x(r), r) for r in rows if r["method"] == method and r["model"] == model
                      and (data is None or r["setting"].get("data") == data)), key=lambda t: t[0])
        if not sel:
            continue
        x = [s for s, _ in sel]
        pts = [(r[key], r["accuracy"]) for r in records if r["method"] == method and r["model"] == model
               and (data is None or r.get("data") == data)]
        if pts:                                 # every trial, nudged sideways per line
            off = (i - len(lines) / 2) * step
            ax.scatter([p[0] + off for p in pts], [p[1] for p in pts], s=7, color=color, alpha=0.45, lw=0)
            low = min(low, *(p[1] for p in pts))
        ax.plot(x, [r["accuracy"] for _, r in sel], style, marker="o", ms=4, color=color, label=label)
        ax.fill_between(x, [r["ci95"][0] for _, r in sel], [r["ci95"][1] for _, r in sel], color=color,
                        alpha=0.12 if model != "exact" else 0.07, lw=0)
        low = min(low, *(min(r["ci95"][0], r["accuracy"]) for _, r in sel))
    maj = summary.get("majority", [])
    if name == "fig3-right":
        maj = [m for m in maj if m["setting"].get("data") == "memory"]
    if maj:
        pts = sorted((_x(m), m["accuracy"]) for m in maj)
        low = min(low, *(p[1] for p in pts))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black", lw=1, ls=(0, (1, 2)),
                label="majority class" + (" (memory data)" if name == "fig3-right" else ""))
    ticks = ticks_all
    ax.set_xticks(ticks)
    bottom = max(0.0, min(0.35, low) - 0.06)
    ax.set_ylim(bottom, 1.02)
    ax.set_ylabel("test accuracy")
    # the quality gate under each setting: mean TV of the MLMs, red when a trial failed
    gate = {}
    for q in summary.get("quality", []):
        x = _x(q)
        tv, ok = gate.get(x, (0.0, True))
        gate[x] = (max(tv, q["tv_max"]), ok and q["passed"])
    for x, (tv, ok) in gate.items():
        ax.annotate(f"TV {tv:.3f}", (x, bottom + 0.02), ha="center", fontsize=6.5, color="black" if ok else "red")
    trials = max((r["trials"] for r in rows), default=0)
    what = "HMM" if summary.get("models") == "exact" else "HMM and pretraining"
    design = (f"one {what} per setting" if summary.get("share_pretraining") else f"a new {what} per trial")
    variant = f", memory HMM: {summary['memory_hmm']}" if summary.get("memory_hmm") else ""
    ax.set_title(f"{name}, scale {summary['scale']}, {trials} trial{'s' if trials != 1 else ''} ({design}{variant})\n"
                 f"solid: MLM, dashed: exact G; points: trials; bands: 95% t-intervals (logit scale); "
                 f"TV: worst MLM-vs-G gate (red: failed)", fontsize=8)
    ax.grid(alpha=0.3)
    # lower left, lifted 0.06 (in accuracy units) above the row of gate labels at the bottom
    ax.legend(fontsize=6.5, loc="lower left", bbox_to_anchor=(0, 0.06 / (1.02 - bottom)))
    _differences(dax, name, summary, ticks, step)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def _differences(ax, name: str, summary: dict, ticks: list, step: float) -> None:
    """The claims' (and controls') paired differences per setting and their pooled estimates."""
    colors = {"mlm": "tab:blue", "exact": "tab:gray"}
    items = [(p, p["claim"].rsplit("(", 1)[-1].rstrip(")"), "claim") for p in summary.get("predictions", [])]
    items += [(c, c["model"], "control: " + c["control"].split(" (")[0]) for c in summary.get("controls", [])]
    markers = ["o", "s", "^", "D", "v", "P"]
    for i, (item, model, what) in enumerate(items):
        if what == "claim":
            color = colors.get(model, "tab:gray")
        else:                                   # the left panel's colours: purple vanilla + attention, brown token-only
            color = "tab:brown" if "token-only" in what else "tab:purple"
        off = (i - len(items) / 2) * step * 1.5
        per = [d for d in item["paired"]]
        xs = [d["setting"] + off for d in per]
        ax.errorbar(xs, [d["difference"] for d in per],
                    yerr=[[d["difference"] - d["ci95"][0] if d["ci95"] else 0 for d in per],
                          [d["ci95"][1] - d["difference"] if d["ci95"] else 0 for d in per]],
                    fmt=markers[i % len(markers)], ms=4, color=color, capsize=2, lw=1,
                    mfc=color if what == "claim" else "white",
                    label=f"{what} ({model}): {item['verdict'].split(' (')[0]}")
        pooled = item["pooled"]
        counted = [d["setting"] for d in per if d["counts"]]
        if pooled.get("ci95") and counted:
            lo, hi = min(counted) - 0.4, max(counted) + 0.4
            ax.hlines(pooled["estimate"], lo, hi, color=color, lw=1.5, ls="--")
            ax.fill_between([lo, hi], pooled["ci95"][0], pooled["ci95"][1], color=color, alpha=0.12, lw=0)
    ax.axhline(0, color="black", lw=0.8)
    if name == "fig3-left":
        ax.axvline(10, color="grey", ls=":", lw=1)
    ax.set_xticks(ticks)
    ax.set_xlabel("|H|  (claim: |H| > |X| = 10)" if name == "fig3-left" else "|M||H|")
    ax.set_ylabel("paired difference of test accuracy" + (" (prompt - head)" if name == "fig3-left"
                                                          else " (memory+attention - comparator)"))
    ax.set_title("paired differences per setting (mean, 95% t-interval; dashed + band: pooled estimate\n"
                 "and 95% interval over the settings that count; legend: pooled verdict)", fontsize=8)
    ax.grid(alpha=0.3)
    lo, hi = ax.get_ylim()          # headroom for the legend, so it covers no interval
    ax.set_ylim(lo, hi + 0.075 * len(items) * (hi - lo))
    ax.legend(fontsize=6.5, loc="upper left")


def replot(directory: Path | str) -> Path:
    """Redraw the figure of an experiment's output ``directory`` (``summary.json`` and
    ``results.csv`` inside) without rerunning anything; returns the PNG's path.

    Raises:
        InputError: a missing or unreadable ``summary.json`` or ``results.csv``.
    """
    import csv
    import json

    from ...models.exceptions import InputError

    directory = Path(directory)
    try:
        summary = json.loads((directory / "summary.json").read_text())
        with open(directory / "results.csv", newline="") as fh:
            records = list(csv.DictReader(fh))
        name = summary["experiment"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"replot: {directory} has no readable summary.json and results.csv ({exc})") from None
    key = "hidden_states" if name == "fig3-left" else "hidden_total"
    for r in records:
        r[key], r["accuracy"] = int(r[key]), float(r["accuracy"])
    path = directory / f"{name}.png"
    plot(name, summary, path, records)
    return path
