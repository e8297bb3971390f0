"""Figure 3's plots: both models, the majority-class line, the controls, 95% bands inside [0, 1]
(Student-t on the logit scale, :func:`verify.experiment_stats.accuracy_interval`), and the
pretraining quality gate (mean TV of the MLM to the exact ``G_i``) under every setting."""

from __future__ import annotations

from pathlib import Path

__all__ = ["plot"]


def _x(row: dict):
    return list(row["setting"].values())[-1]


def plot(name: str, summary: dict, path: Path) -> None:
    """Write ``summary``'s figure to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["rows"] + summary.get("control_rows", [])
    fig, ax = plt.subplots(figsize=(9.5, 4.8))
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
    for method, data, model, label, color, style in lines:
        sel = sorted(((_x(r), r) for r in rows if r["method"] == method and r["model"] == model
                      and (data is None or r["setting"].get("data") == data)), key=lambda t: t[0])
        if not sel:
            continue
        x = [s for s, _ in sel]
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
    ticks = sorted({_x(r) for r in rows})
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
    design = ("one HMM and pretraining per setting" if summary.get("share_pretraining")
              else "a new HMM and pretraining per trial")
    ax.set_title(f"{name}, scale {summary['scale']}, {trials} trial{'s' if trials != 1 else ''} ({design})\n"
                 f"solid: MLM, dashed: exact G; bands: 95% t-intervals (logit scale); "
                 f"TV: worst MLM-vs-G gate (red: failed)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
