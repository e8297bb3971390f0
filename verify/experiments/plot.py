"""Figure 3's plots, two panels.

Left: test accuracy per setting for both models (MLM solid with circles, exact ``G`` dashed with
squares), the fair baselines bold with each trial as a point and a 95% band
(:func:`verify.experiments.stats.accuracy_interval`, which contains its mean; none for rows of
fewer than ``MIN_BAND_TRIALS`` trials, whose 1-df interval covers nearly (0, 1)), the
paper-protocol rows thin with hollow markers, the majority-class line, the controls, and the
downstream gate (the worst upper bound of the MLMs' TV at position 0, red with the count of
excluded trials) under every setting; an exact-only run says nothing of MLMs. With the trials'
records, an MLM line is the mean over the trials whose MLM passed the gate (the trials the
verdicts read, :mod:`.claims`); a gate-failing trial is drawn as a grey cross, never averaged in.
Right: every test's paired difference per setting (the mean with its 95% t-interval) and its
pooled estimate with its interval, with the verdict in the legend (:mod:`.claims`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["plot", "figure", "replot", "MIN_BAND_TRIALS"]

MIN_BAND_TRIALS = 3   # rows of fewer trials are drawn without a band


def _x(row: dict):
    return list(row["setting"].values())[-1]


_MODEL_STYLE = {"mlm": ("-", "o", "MLM"), "exact": ("--", "s", "exact G"), "none": (":", "^", "no G")}


def _lines(name: str) -> list:
    """``(method, data, model, label, colour)`` of every accuracy line: the fair rows and the
    paper-protocol rows of each model (the style tells the model and the protocol apart)."""
    if name == "fig3-left":
        cells = [("head", None, "Head tuning", "tab:blue"), ("prompt", None, "Prompt tuning", "tab:orange")]
    else:
        cells = [("attention", "memory", "Memory HMM + attention", "tab:green"),
                 ("head", "vanilla", "Vanilla HMM + linear head", "tab:red"),
                 ("head", "memory", "2x2: memory HMM + linear head", "tab:olive"),
                 ("attention", "vanilla", "control: vanilla HMM + attention", "tab:purple")]
    out = []
    for model in ("mlm", "exact"):
        for method, data, label, color in cells:
            out.append((f"{method}-fair", data, model, f"{label}, fair ({_MODEL_STYLE[model][2]})", color))
            out.append((method, data, model, f"{label}, paper protocol ({_MODEL_STYLE[model][2]})", color))
    if name == "fig3-right":
        out += [("attention-tokens-fair", "memory", "none", "control: token-only attention, fair (memory HMM)",
                 "tab:brown"),
                ("attention-tokens", "memory", "none", "control: token-only attention, paper protocol (memory HMM)",
                 "tab:brown")]
    return out


def _passed(r: dict) -> bool:
    return r["model"] != "mlm" or str(r.get("gate_passed")).lower() == "true"


def _gated(rows: list, records: list, key: str) -> list:
    """``rows`` with every MLM row recomputed over the trials whose MLM passed the gate (a row
    whose every trial failed is dropped); other rows unchanged. Without gate columns (an
    exact-only run), ``rows``."""
    from .stats import accuracy_interval

    if not any(r["model"] == "mlm" for r in records):
        return rows
    groups: dict = {}
    for r in records:
        if r["model"] == "mlm" and _passed(r):
            groups.setdefault((r["method"], r.get("data") or None, float(r[key])), []).append(float(r["accuracy"]))
    out = []
    for row in rows:
        if row["model"] != "mlm":
            out.append(row)
            continue
        accs = groups.get((row["method"], row["setting"].get("data"), float(_x(row))))
        if accs:
            out.append({**row, "accuracy": sum(accs) / len(accs), "ci95": list(accuracy_interval(accs, 0)),
                        "trials": len(accs)})
    return out


def plot(name: str, summary: dict, path: Path, records: list | None = None) -> None:
    """Write ``summary``'s figure (:func:`figure`) to ``path`` (PNG)."""
    import matplotlib.pyplot as plt

    fig = figure(name, summary, records)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def figure(name: str, summary: dict, records: list | None = None):
    """``summary``'s figure (a matplotlib ``Figure``); ``records`` (one per trial, model and
    method, as in ``results.csv``) add the per-trial points. MLM rows are solid with round
    markers, exact rows dashed with square markers; fair rows are bold, paper-protocol rows thin
    with hollow markers; every band contains its mean, and a row of fewer than
    ``MIN_BAND_TRIALS`` trials gets no band (the title says so)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = records or []
    key = "hidden_states" if name == "fig3-left" else "hidden_total"
    rows = _gated(summary["rows"] + summary.get("control_rows", []), records, key)
    fig, (ax, dax) = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [1.35, 1]})
    ticks_all = sorted({_x(r) for r in rows})
    step = (max(ticks_all) - min(ticks_all)) / 90 if len(ticks_all) > 1 else 0.05
    if name == "fig3-left":
        ax.axvline(10, color="grey", ls=":", lw=1)
        ax.set_xlabel("hidden states |H|  (|X| = 10, dotted)")
    else:
        ax.set_xlabel("|M||H|")
    lines = _lines(name)
    low = 1.0                                   # the axis shows every band whole (never clipped)
    unbanded = False                            # a fair row drawn without its band (too few trials)
    for i, (method, data, model, label, color) in enumerate(lines):
        sel = sorted(((_x(r), r) for r in rows if r["method"] == method and r["model"] == model
                      and (data is None or r["setting"].get("data") == data)), key=lambda t: t[0])
        if not sel:
            continue
        style, marker, _ = _MODEL_STYLE[model]
        fair = method.endswith("-fair")
        x = [s for s, _ in sel]
        mine = [r for r in records if r["method"] == method and r["model"] == model
                and (data is None or r.get("data") == data)]
        pts = [(float(r[key]), float(r["accuracy"])) for r in mine if _passed(r)]
        failed = [(float(r[key]), float(r["accuracy"])) for r in mine if not _passed(r)]
        if (pts or failed) and fair:            # every trial of the fair rows, nudged sideways per line
            off = (i - len(lines) / 2) * step
            if pts:
                ax.scatter([p[0] + off for p in pts], [p[1] for p in pts], s=6, color=color, alpha=0.35, lw=0,
                           marker=marker)
            if failed:                          # drawn, never averaged: the gate excluded them
                ax.scatter([p[0] + off for p in failed], [p[1] for p in failed], s=12, color="grey",
                           alpha=0.6, marker="x", lw=0.8)
            low = min(low, *(p[1] for p in pts + failed))
        ax.plot(x, [r["accuracy"] for _, r in sel], style, marker=marker, ms=5 if fair else 4, color=color,
                lw=1.8 if fair else 0.9, alpha=1.0 if fair else 0.6, mfc=color if fair else "white", label=label)
        # a band only where the row has enough trials to say something: with 2 trials the t
        # interval has 1 degree of freedom and covers nearly (0, 1)
        banded = [r["trials"] >= MIN_BAND_TRIALS for _, r in sel]
        lo = [r["ci95"][0] if b else float("nan") for (_, r), b in zip(sel, banded)]
        hi = [r["ci95"][1] if b else float("nan") for (_, r), b in zip(sel, banded)]
        if fair:
            unbanded = unbanded or not all(banded)
            if any(banded):
                ax.fill_between(x, lo, hi, color=color, alpha=0.12 if model == "mlm" else 0.07, lw=0)
        low = min(low, *(v for v in lo if v == v), *(r["accuracy"] for _, r in sel))
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
    # the downstream gate under each setting: the worst upper bound of the MLMs' position-0 TV,
    # and how many of them failed (red)
    gate: dict = {}
    for g in (summary.get("gate") or {}).get("trials", []):
        bound, failed, n = gate.get(g["setting"], (0.0, 0, 0))
        gate[g["setting"]] = (max(bound, g["bound"]), failed + (not g["passed"]), n + 1)
    for k, (x, (bound, failed, n)) in enumerate(sorted(gate.items())):
        # alternate rows, so that the labels of neighbouring settings (|H| = 8, 10, 12) do not overlap
        ax.annotate(f"TV0 <= {bound:.3f}" + (f"\n{failed}/{n} out" if failed else ""),
                    (x, bottom + (0.015 if k % 2 == 0 else 0.04)),
                    ha="center", fontsize=6, color="red" if failed else "black")
    trials = max((r["trials"] for r in rows), default=0)
    exact_only = summary.get("models") == "exact"
    what = "HMM" if exact_only else "HMM and pretraining"
    design = (f"one {what} per setting" if summary.get("share_pretraining") else f"a new {what} per trial")
    variant = f", memory HMM: {summary['memory_hmm']}" if summary.get("memory_hmm") else ""
    legend_note = ("dashed/squares: exact G" if exact_only else
                   "solid/circles: MLM (over the trials whose MLM passed the gate; grey x: excluded trials), "
                   "dashed/squares: exact G\nTV0: worst gate bound at position 0 (red: trials excluded)")
    ax.set_title(f"{name}, scale {summary['scale']}, {trials} trial{'s' if trials != 1 else ''} ({design}{variant})\n"
                 f"{legend_note}\nbold: fair baselines (points: trials; bands: 95% intervals"
                 + (f", none for rows of fewer than {MIN_BAND_TRIALS} trials: a 1-df t interval covers nearly "
                    f"(0, 1)" if unbanded else "")
                 + "), thin/hollow: paper protocol", fontsize=7.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=5.5, loc="lower left", bbox_to_anchor=(0, 0.07 / (1.02 - bottom)), ncol=2)
    _differences(dax, name, summary, ticks, step, exact_only)
    fig.tight_layout()
    return fig


def _differences(ax, name: str, summary: dict, ticks: list, step: float, exact_only: bool = False) -> None:
    """The tests' paired differences per setting and their pooled estimates: colour by kind,
    marker and line style by model (MLM: circles, solid; exact: squares, dashed)."""
    kind_colors = {"claim": "tab:blue", "reproduction": "tab:cyan", "interaction": "tab:olive"}
    items = [(p, p.get("kind", "claim"), p.get("id", "claim").split(":")[0]) for p in summary.get("predictions", [])]
    items += [(c, "control", "control: " + c["control"].split(" (")[0]) for c in summary.get("controls", [])]
    for i, (item, kind, what) in enumerate(items):
        model = item.get("model", "mlm")
        color = kind_colors.get(kind) or ("tab:brown" if "token-only" in what else "tab:purple")
        style, marker, model_label = _MODEL_STYLE.get(model, _MODEL_STYLE["mlm"])
        off = (i - len(items) / 2) * step * 1.5
        per = [d for d in item["paired"] if d["difference"] is not None]
        xs = [d["setting"] + off for d in per]
        ax.errorbar(xs, [d["difference"] for d in per],
                    yerr=[[d["difference"] - d["ci95"][0] if d["ci95"] else 0 for d in per],
                          [d["ci95"][1] - d["difference"] if d["ci95"] else 0 for d in per]],
                    fmt=marker, ms=4, color=color, capsize=2, lw=1,
                    mfc=color if model == "mlm" else "white",
                    label=f"{what} ({model_label}): {item['verdict'].split(' (')[0]}")
        pooled = item["pooled"]
        counted = [d["setting"] for d in per if d["counts"]]
        if pooled.get("ci95") and counted:
            lo, hi = min(counted) - 0.4, max(counted) + 0.4
            ax.hlines(pooled["estimate"], lo, hi, color=color, lw=1.5, ls=style)
            ax.fill_between([lo, hi], min(pooled["ci95"][0], pooled["estimate"]),
                            max(pooled["ci95"][1], pooled["estimate"]), color=color, alpha=0.1, lw=0)
    ax.axhline(0, color="black", lw=0.8)
    if name == "fig3-left":
        ax.axvline(10, color="grey", ls=":", lw=1)
    ax.set_xticks(ticks)
    ax.set_xlabel("|H|  (claim: |H| > |X| = 10)" if name == "fig3-left" else "|M||H|")
    ax.set_ylabel("paired difference of test accuracy" + (" (prompt - head)" if name == "fig3-left"
                                                          else " (see legend)"))
    over = "over the trials" if exact_only else "over the trials that pass the gate"
    ax.set_title(f"paired differences per setting (mean, 95% t-interval {over};\n"
                 "line + band: pooled estimate and interval; legend: verdict (Holm-adjusted over the family;\n"
                 "reproductions unadjusted, outside it))",
                 fontsize=7.5)
    ax.grid(alpha=0.3)
    lo, hi = ax.get_ylim()          # headroom for the legend, so it covers no interval
    ax.set_ylim(lo, hi + 0.075 * len(items) * (hi - lo))
    ax.legend(fontsize=5.5, loc="upper left")


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
