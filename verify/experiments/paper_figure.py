"""Figure 3 drawn as the paper draws it, for a slide: accuracy by setting, one line per method.

fig3-left: prompt tuning against head tuning (the fair pair, :mod:`models.mlm.fair`) by ``|H|``;
fig3-right: the memory HMM with the attention head against the vanilla HMM with the linear head
by ``|M||H|``. One panel per backbone of the run (the pretrained MLM, the exact ``G``), each line
the mean test accuracy over trials with its 95% interval as a band
(:func:`.stats.accuracy_interval`; no band under :data:`.plot.MIN_BAND_TRIALS` trials). An MLM
trial whose model failed the downstream gate is never drawn (its setting says how many were
left out; a setting with none left is not drawn at all). The diagnostic figure with every row,
control and test stays beside it (:mod:`.plot`).

:data:`PAPER_LEFT` holds the paper's own Figure 3 (left) numbers for side-by-side comparisons.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PAPER_LEFT", "paper_series", "paper_figure", "paper_plot", "replot_paper"]

# Wei, Xie and Ma (2021), Figure 3 left, read from the paper: |H| -> (prompt, head) test accuracy %
PAPER_LEFT = {4: (99.7, 94.0), 8: (97.0, 84.0), 10: (93.0, 79.7), 15: (87.0, 74.6), 25: (74.8, 66.2),
              30: (75.1, 66.2)}

_LINES = {"fig3-left": [("prompt-fair", "vanilla", "Prompt tuning", "tab:orange"),
                        ("head-fair", "vanilla", "Head tuning", "tab:blue")],
          "fig3-right": [("attention-fair", "memory", "Memory HMM + attention head", "tab:green"),
                         ("head-fair", "vanilla", "Vanilla HMM + linear head", "tab:red")]}
_MODELS = {"mlm": "pretrained MLM", "exact": "exact G (no MLM)"}


def _x_key(name: str) -> str:
    return "hidden_states" if name == "fig3-left" else "hidden_total"


def _passed(r: dict) -> bool:
    return r["model"] != "mlm" or str(r.get("gate_passed")).lower() == "true"


def paper_series(name: str, records: list, model: str, *, column: str = "accuracy") -> list[dict]:
    """The figure's lines for ``model``: ``{"label", "color", "x", "mean", "lo", "hi", "trials",
    "left_out"}`` (lists per drawn setting; ``left_out`` counts gate-failing trials per setting,
    the drawn ones and the undrawn)."""
    from .stats import accuracy_interval
    from .plot import MIN_BAND_TRIALS

    key = _x_key(name)
    out = []
    for method, data, label, color in _LINES[name]:
        cells: dict = {}
        for r in records:
            if r["model"] != model or r["method"] != method or (r.get("data") or "vanilla") != data:
                continue
            ok = _passed(r)
            cell = cells.setdefault(int(r[key]), {"values": [], "left_out": 0})
            if ok:
                cell["values"].append(float(r[column]))
            else:
                cell["left_out"] += 1
        line = {"label": label, "color": color, "x": [], "mean": [], "lo": [], "hi": [], "trials": [],
                "left_out": {x: c["left_out"] for x, c in sorted(cells.items()) if c["left_out"]}}
        for x, cell in sorted(cells.items()):
            v = cell["values"]
            if not v:
                continue
            lo, hi = accuracy_interval(v, 1) if len(v) >= MIN_BAND_TRIALS else (None, None)
            line["x"].append(x)
            line["mean"].append(sum(v) / len(v))
            line["lo"].append(lo)
            line["hi"].append(hi)
            line["trials"].append(len(v))
        out.append(line)
    return out


def paper_figure(name: str, records: list, *, title: str | None = None, column: str = "accuracy"):
    """The figure (module docstring); returns the matplotlib ``Figure``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [m for m in ("mlm", "exact") if any(r["model"] == m for r in records)]
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 3.6), sharey=True, squeeze=False)
    xlabel = "number of hidden states |H|" if name == "fig3-left" else "|M| x |H| (hidden states in total)"
    for ax, model in zip(axes[0], models):
        lines = paper_series(name, records, model, column=column)
        for line in lines:
            ax.plot(line["x"], line["mean"], "-o", color=line["color"], lw=2.2, ms=5, label=line["label"])
            band = [i for i, lo in enumerate(line["lo"]) if lo is not None]
            if band:
                ax.fill_between([line["x"][i] for i in band], [line["lo"][i] for i in band],
                                [line["hi"][i] for i in band], color=line["color"], alpha=0.2, lw=0)
        left_out = sorted({x for line in lines for x in line["left_out"]})
        sub = _MODELS[model]
        if left_out:
            sub += f"\n(gate-failing trials not drawn at {', '.join(map(str, left_out))})"
        ax.set_title(sub, fontsize=11)
        ax.set_xlabel(xlabel, fontsize=11)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=10)
        xs = sorted({x for line in lines for x in line["x"]})
        if xs:
            ax.set_xticks(xs)
    axes[0][0].set_ylabel("test accuracy" + (" (i.i.d. draws)" if column == "iid_accuracy" else ""), fontsize=11)
    axes[0][0].legend(fontsize=10, loc="lower left")
    if title:
        fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig


def paper_plot(name: str, records: list, path: Path | str, *, title: str | None = None) -> Path:
    """Write :func:`paper_figure` to ``path`` (PNG, 150 dpi); returns the path."""
    import matplotlib.pyplot as plt

    fig = paper_figure(name, records, title=title)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return Path(path)


def replot_paper(directory: Path | str, *, title: str | None = None) -> Path:
    """Draw ``<name>-paper.png`` of a run's output ``directory`` from its ``results.csv`` and
    ``summary.json`` (the experiment's name) alone.

    Raises:
        InputError: a missing or unreadable ``summary.json`` or ``results.csv``.
    """
    import csv
    import json

    from ...models.exceptions import InputError

    directory = Path(directory)
    try:
        name = json.loads((directory / "summary.json").read_text())["experiment"]
        with open(directory / "results.csv", newline="") as fh:
            records = list(csv.DictReader(fh))
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"replot: {directory} has no readable summary.json and results.csv ({exc})") from None
    return paper_plot(name, records, directory / f"{name}-paper.png", title=title)
