"""Readable forms of a theorem report in Python: the CLI's text (``str(report)``), an HTML table
for notebooks, a pandas frame of the rows and a matplotlib plot of the margins."""

from __future__ import annotations

import contextlib
import io
import re
from decimal import Context, Decimal
from fractions import Fraction
from html import escape

import numpy as np

from .rows import ROW_KEYS
from .builders import render_report

__all__ = ["report_text", "report_html", "rows_frame", "plot_margins", "check_axes", "NEAR_TIE"]

NEAR_TIE = 1e-6
"""A nonzero task margin at most this far from 0 is marked as a near tie in :func:`plot_margins`."""


def report_text(data: dict) -> str:
    """The readable report ``verify theorem`` prints (the same renderer), as plain text."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):             # off a terminal: no colour, no wrapping
        render_report(data)
    # a notebook kernel may still get bold/italic codes (FORCE_COLOR and the like): plain text only
    return re.sub(r"\x1b\[[0-9;]*m", "", buffer.getvalue()).rstrip("\n")


def report_html(data: dict, verdict: str, proven: bool) -> str:
    """The same content as :func:`report_text` as an HTML table: verdict, mode, instance, each
    assumption, witness and identity, sequence counts, labels, robustness, counterexample."""
    colour = {"verified": "#1a7f37", "refuted": "#cf222e", "assumptions-fail": "#9a6700"}[data["verdict"]]
    inst = data.get("instance") or {}
    sizes = ", ".join(f"{k} {v}" for k, v in inst.items() if k in ("hidden", "vocab", "memory", "cells",
                                                                 "syntax_states", "classes") and v is not None)
    rows = [("verdict", f'<b style="color:{colour}">{escape(verdict)}</b>'),
            ("mode", escape(str(data.get("mode"))) + ("" if proven else " (proves nothing)")),
            ("instance", escape(f"{inst.get('source', '')} ({sizes})"))]
    for name, a in (data.get("assumptions") or {}).items():
        rows.append((f"assumption {escape(name)}", ("holds: " if a.get("holds") else "fails: ")
                     + escape(str(a.get("why", "")))))
    if data.get("identity"):
        idt = data["identity"]
        rows.append(("identity", ("holds: " if idt.get("holds") else "does not hold: ") + escape(str(idt.get("what")))))
    seqs = data.get("sequences") or {}
    if seqs:
        text = (f"{seqs.get('agree')}/{seqs.get('in_R', seqs.get('checked'))} agree with F* "
                f"({seqs.get('how')}, length {seqs.get('length')}); ties {seqs.get('ties')}")
        rows.append(("sequences", escape(text)))
    if data.get("labels"):
        rows.append(("labels of F*", escape(", ".join(f"{k}: {v}" for k, v in data["labels"].items()))))
    rob = data.get("robustness")
    if rob:
        rows.append(("robustness", escape(f"radius {rob.get('radius')} ({rob.get('norm')} norm), "
                                          f"task radius {rob.get('task_radius')}")))
    ce = data.get("counterexample")
    if ce:
        rows.append(("counterexample", escape(f"{ce.get('kind')}: {ce.get('what') or ce.get('sequence', '')}")))
    if "seconds" in data:
        rows.append(("time", f"{data['seconds']:.2f} s"))
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
                   for k, v in rows)
    return f"<table><caption>Theorem {escape(str(data['theorem']))}</caption>{body}</table>"


def _decimal(value, digits: int):
    if value is None:
        return None
    return Context(prec=digits).divide(Decimal(value.numerator), Decimal(value.denominator))


def rows_frame(rows: list[dict], *, exact: bool, digits: int = 20):
    """Rows as a pandas DataFrame. With ``exact`` the margins are ``decimal.Decimal`` values
    (``digits`` significant digits, correctly rounded) and the exact fractions are a column away
    (``task_margin_exact``, ``head_margin_exact``, as ``"p/q"`` strings); otherwise floats
    with their certified bounds."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("TheoremReport.to_frame needs pandas: pip install pandas") from None
    from ...models.hmm.rational import format_fraction

    frame = pd.DataFrame(rows, columns=list(ROW_KEYS))
    if exact:
        for name in ("task_margin", "head_margin"):
            values = list(frame[name])
            frame[name] = [_decimal(v, digits) for v in values]
            frame.insert(frame.columns.get_loc(name) + 1, f"{name}_exact",
                         [None if v is None else format_fraction(Fraction(v)) for v in values])
            frame = frame.drop(columns=[f"{name}_bound"])
    return frame


def check_axes(ax) -> None:
    """Refuse an ``ax`` of :func:`plot_margins` that is not ``None``, a matplotlib Axes, or a
    nonempty sequence of them.

    Raises:
        InputError: naming what was found."""
    if ax is None:
        return
    from matplotlib.axes import Axes

    from ...models.exceptions import InputError

    axes = [ax] if isinstance(ax, Axes) or not hasattr(ax, "__len__") or isinstance(ax, str) else list(np.ravel(ax))
    if not axes or not all(isinstance(a, Axes) for a in axes):
        raise InputError(f"ax: expected a matplotlib Axes or a sequence of them, found {type(ax).__name__}")


def plot_margins(rows: list[dict], data: dict, *, ax=None, near: float = NEAR_TIE):
    """Task and head margins by sequence length (symlog scale), ties (margin exactly 0) and near
    ties (``0 < |margin| <= near``) marked, disagreements in red, and a band at +- the smallest
    head margin (its legend names it so, and gives the report's robustness radius beside it: how
    far the read-out may move in the sup norm, a different number); legends sit below the axes,
    never over the data. Returns the matplotlib Figure."""
    if ax is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharex=True)
    else:
        from matplotlib.axes import Axes

        axes = [ax] if isinstance(ax, Axes) else list(np.ravel(ax))
        fig = axes[0].figure
    live = [r for r in rows if r["possible"] and r["task_margin"] is not None]
    for axis, key, title in zip(axes, ("task_margin", "head_margin"),
                                ("task margin mu . P[H | x]", "head margin (before the threshold)")):
        xs = [r["length"] + ((hash(tuple(r["sequence"])) % 97) / 97 - 0.5) * 0.5 for r in live]
        ys = [float(r[key]) for r in live]
        agree = [r["agree"] or not r["in_R"] for r in live]
        axis.scatter([x for x, a in zip(xs, agree) if a], [y for y, a in zip(ys, agree) if a], s=6, alpha=0.5,
                     color="#0969da", label="agrees with F*")
        bad = [(x, y) for x, y, a in zip(xs, ys, agree) if not a]
        if bad:
            axis.scatter(*zip(*bad), s=18, color="#cf222e", label="disagrees")
        ties = [(x, y) for x, y in zip(xs, ys) if y == 0]
        nears = [(x, y) for x, y in zip(xs, ys) if 0 < abs(y) <= near]
        if ties:
            axis.scatter(*zip(*ties), marker="x", s=40, color="black", label=f"tie ({len(ties)})")
        if nears:
            axis.scatter(*zip(*nears), marker="^", s=30, color="#9a6700", label=f"near tie ({len(nears)})")
        axis.set_yscale("symlog", linthresh=max(near, 1e-12))
        axis.axhline(0, color="grey", lw=0.8)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("sequence length")
    rob = data.get("robustness") or {}
    margin = rob.get("min_margin")
    if margin is not None and len(axes) > 1:
        m, radius, where = float(margin), float(rob.get("radius", 0)), ""
        if m == 0 and rob.get("radius_off_zero_margins") is not None:      # ties: the radius off them
            nonzero = [abs(float(r["head_margin"])) for r in live if r["head_margin"] != 0]
            m, radius, where = min(nonzero, default=0.0), float(rob["radius_off_zero_margins"]), " off the ties"
        # the band is what is drawn: every head margin lies outside +-m; the radius is a
        # different number (how far the read-out may move, sup norm) and is named as such
        axes[1].axhspan(-m, m, color="#9a6700", alpha=0.15,
                        label=f"band: smallest |head margin|{where} = {m:.3g}\n"
                              f"(robustness radius{where} {radius:.3g}, sup norm)")
    for axis in axes:
        if axis.get_legend_handles_labels()[0]:      # below the axes: a legend never covers data
            axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.suptitle(f"Theorem {data['theorem']}: {data['verdict']}", fontsize=11)
    fig.tight_layout()
    return fig
