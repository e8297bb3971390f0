"""Figure 3's figure on synthetic rows (verify.experiments.plot.figure): every band drawn
contains the mean drawn at the same setting, MLM and exact rows differ in line style and
marker, an exact-only figure says nothing of MLMs or their gate, and rows of 2 trials (the
tiny scale) get no band that would cover nearly all of [0, 1]."""

import numpy as np
import pytest

from headprompt.verify.experiments.claims import evaluate
from headprompt.verify.experiments.plot import MIN_BAND_TRIALS, figure
from headprompt.verify.experiments.stats import summarize

matplotlib = pytest.importorskip("matplotlib")


def _records(trials: int, models=("mlm", "exact"), seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for t in range(trials):
        for h in (4, 12, 15):
            for model in models:
                for method, level in (("head", 0.7), ("prompt", 0.8), ("head-fair", 0.85), ("prompt-fair", 0.9)):
                    acc = min(1.0, level + (0.09 if model == "exact" else 0.0) + rng.normal(0, 0.04))
                    r = {"experiment": "fig3-left", "hidden_states": h, "trial": t, "model": model,
                         "method": method, "accuracy": round(acc * 500) / 500, "majority": 0.6, "control": False}
                    if model == "mlm":
                        r.update(gate0_tv=0.01, gate0_se=0.002, gate0_bound=0.014, gate0_sequences=512,
                                 gate_passed=True)
                    out.append(r)
    return out


def _summary(records: list, models: str) -> dict:
    tested = evaluate("fig3-left", records, models)
    return {"experiment": "fig3-left", "scale": "tiny", "models": models, "share_pretraining": False,
            "rows": summarize(records, ("hidden_states",), 500), "predictions": tested["predictions"],
            "controls": tested["controls"], "gate": tested["gate"], "majority": []}


def _bands(ax) -> list:
    """``(colour, {x: (low, high)})`` of every filled band on ``ax``, read back from its polygon."""
    from matplotlib.collections import PolyCollection

    out = []
    for c in ax.collections:
        if not isinstance(c, PolyCollection):
            continue
        ext: dict = {}
        for path in c.get_paths():
            for x, y in path.vertices:
                lo, hi = ext.get(round(float(x), 9), (np.inf, -np.inf))
                ext[round(float(x), 9)] = (min(lo, y), max(hi, y))
        out.append((tuple(np.round(c.get_facecolor()[0][:3], 6)), ext))
    return out


def _texts(fig) -> str:
    parts = []
    for ax in fig.axes:
        parts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        parts += [t.get_text() for t in ax.texts]
        if ax.get_legend():
            parts += [t.get_text() for t in ax.get_legend().get_texts()]
    return "\n".join(parts)


def test_every_band_contains_the_mean_drawn_at_its_setting():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgb

    records = _records(5)
    fig = figure("fig3-left", _summary(records, "both"), records)
    ax = fig.axes[0]
    bands = _bands(ax)
    assert bands, "fair rows of 5 trials must have bands"
    checked = 0
    for line in ax.get_lines():
        if line.get_linewidth() < 1.5:        # thin: the paper-protocol rows (no band), reference lines
            continue
        colour = tuple(np.round(to_rgb(line.get_color()), 6))
        xs, ys = line.get_xdata(), line.get_ydata()
        mine = [ext for c, ext in bands if c == colour and set(map(lambda v: round(float(v), 9), xs)) <= set(ext)]
        assert mine, line.get_label()
        hits = 0
        for ext in mine:
            if all(ext[round(float(x), 9)][0] <= y <= ext[round(float(x), 9)][1] for x, y in zip(xs, ys)):
                hits += 1
        assert hits >= 1, f"{line.get_label()}: no band of its colour contains its means"
        checked += 1
    assert checked == 4            # head-fair and prompt-fair for each of the two models
    plt.close(fig)


def test_mlm_and_exact_rows_are_drawn_differently_and_labelled():
    import matplotlib.pyplot as plt

    records = _records(4)
    fig = figure("fig3-left", _summary(records, "both"), records)
    for ax in fig.axes:
        handles, labels = ax.get_legend_handles_labels()
        style = {}
        for h, lab in zip(handles, labels):
            marker = h.get_marker() if hasattr(h, "get_marker") else h.lines[0].get_marker()
            model = "exact" if "exact" in lab else "mlm" if "MLM" in lab else None
            if model:
                style.setdefault(model, set()).add(marker)
        assert set(style) == {"mlm", "exact"}, labels
        assert not style["mlm"] & style["exact"], "MLM and exact rows share a marker"
    lines = {ln.get_label(): ln.get_linestyle() for ln in fig.axes[0].get_lines()}
    mlm = {s for lab, s in lines.items() if "(MLM)" in lab}
    exact = {s for lab, s in lines.items() if "(exact G)" in lab}
    assert mlm and exact and not mlm & exact
    plt.close(fig)


def test_an_exact_only_figure_says_nothing_of_mlms():
    import matplotlib.pyplot as plt

    records = _records(4, models=("exact",))
    fig = figure("fig3-left", _summary(records, "exact"), records)
    text = _texts(fig)
    assert "exact" in text
    for word in ("MLM", "gate", "pretraining", "TV0"):
        assert word not in text, word
    plt.close(fig)


def test_two_trial_rows_get_no_band_and_the_title_says_why():
    import matplotlib.pyplot as plt

    records = _records(2)
    summary = _summary(records, "both")
    assert all(r["trials"] == 2 < MIN_BAND_TRIALS for r in summary["rows"])
    # the 1-df interval these rows carry covers nearly all of (0, 1): no band may show it
    assert max(r["ci95"][1] - r["ci95"][0] for r in summary["rows"]) > 0.5
    fig = figure("fig3-left", summary, records)
    ax = fig.axes[0]
    assert _bands(ax) == []
    assert f"none for rows of fewer than {MIN_BAND_TRIALS} trials" in ax.get_title()
    assert ax.get_ylim()[0] > 0.1              # no near-(0, 1) interval pulls the axis down to 0
    plt.close(fig)


def test_gate_failing_mlm_trials_are_drawn_but_never_averaged():
    """A trial whose MLM failed the gate is left out of the MLM line (as the verdicts leave it
    out) and drawn as a grey cross; the line's value is the mean over the passing trials,
    computed here by hand from the records."""
    records = _records(4)
    for r in records:                      # trial 3's MLM at |H| = 12 fails the gate, with a wild accuracy
        if r["model"] == "mlm" and r["hidden_states"] == 12 and r["trial"] == 3:
            r.update(gate_passed=False, gate0_bound=0.2, accuracy=0.1)
    summary = _summary(records, "both")
    fig = figure("fig3-left", summary, records)
    ax = fig.axes[0]
    line = next(l for l in ax.get_lines() if l.get_label() == "Head tuning, fair (MLM)")
    xs, ys = list(line.get_xdata()), list(line.get_ydata())
    passing = [r["accuracy"] for r in records if r["model"] == "mlm" and r["method"] == "head-fair"
               and r["hidden_states"] == 12 and r["trial"] != 3]
    assert ys[xs.index(12)] == pytest.approx(sum(passing) / 3)
    everything = [r["accuracy"] for r in records if r["model"] == "mlm" and r["method"] == "head-fair"
                  and r["hidden_states"] == 12]
    assert ys[xs.index(12)] != pytest.approx(sum(everything) / 4)   # the summary's row would have averaged it in
    crosses = [c for c in ax.collections if c.get_offsets().shape[0] and
               np.allclose(c.get_facecolor()[0][:3], matplotlib.colors.to_rgb("grey"))]
    ys_x = sorted(float(y) for c in crosses for _, y in c.get_offsets())
    assert ys_x == [0.1, 0.1]              # head-fair and prompt-fair: the excluded trial, drawn
    assert "grey x: excluded" in _texts(fig)
