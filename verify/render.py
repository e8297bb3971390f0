"""Rendering of result dicts: one JSON object for scripts, rich text for people."""

from __future__ import annotations

import json
import sys
from typing import Any
from fractions import Fraction

__all__ = ["emit_json", "console", "print_header", "print_labels", "progress_bar"]


def emit_json(result: dict[str, Any]) -> None:
    """Print ``result`` as exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(result, default=_default) + "\n")


def _default(obj: Any) -> Any:
    from fractions import Fraction

    import numpy as np

    from ..models.hmm.rational import format_fraction

    if isinstance(obj, Fraction):
        return format_fraction(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def console():
    """A rich console on stdout (plain text when not a terminal)."""
    from rich.console import Console

    return Console(highlight=False)


def print_header(out, result: dict[str, Any]) -> None:
    """The common head of a theorem report: verdict, instance, and the assumptions table."""
    from rich.table import Table

    verdict = result["verdict"]
    colour = {"verified": "green", "refuted": "red", "assumptions-fail": "yellow"}[verdict]
    inst = result["instance"]
    if result.get("certified") is False or result.get("mode") == "float":
        out.print("[bold red]UNCERTIFIED[/bold red] (--mode float): the verdict and counts below come from "
                  "float64 arithmetic and prove nothing; rerun with --mode exact or certified for a proof")
    out.print(f"[bold]Theorem {result['theorem']}[/bold]  verdict: [{colour}]{verdict}[/{colour}]  "
              f"(mode: {result['mode']})")
    if result.get("mode_note"):
        out.print(f"  mode {result['mode_note']}")
    sizes = ", ".join(f"{k} {v}" for k, v in inst.items()
                      if k not in ("source", "how", "tie_sequence", "label_shares", "rationalized")
                      and v is not None)
    out.print(f"instance: {inst['source']}  ({sizes})")
    if inst.get("how"):
        out.print(f"  {inst['how']}")
    if inst.get("rationalized"):
        r = inst["rationalized"]
        out.print(f"  rationalized: {r['pruned_entries']} entries below {float(Fraction(r['prune_below'])):g} pruned "
                  f"to 0, the rest rounded to denominator {r['max_denominator']}; largest entry change "
                  f"{r['max_entry_change']['approx']:.3g}; the verdict is about this exact model")
    table = Table(title="assumptions")
    for col in ("assumption", "holds", "why"):
        table.add_column(col)
    for name, a in result["assumptions"].items():
        table.add_row(name, "yes" if a["holds"] else "[red]no[/red]", a["why"])
    out.print(table)


def print_labels(out, result: dict[str, Any]) -> None:
    """The label counts of a theorem report, and a warning when the check was vacuous."""
    counts = result.get("labels")
    if counts is None:
        return
    where = "in R" if result["theorem"] not in ("3.3", "3.6") else "checked"
    out.print(f"labels of F* on the sequences {where}: {counts['0']} with F* = 0, {counts['1']} with F* = 1")
    if result.get("vacuous"):
        if counts["0"] + counts["1"] == 0:
            what, missing = "no checked sequence counts (none is in R)", "0 or 1"
        else:
            missing = "0" if counts["0"] == 0 else "1"
            what = f"F* = {1 - int(missing)} on every sequence that counts, never {missing}"
        out.print(f"[bold yellow]VACUOUS[/bold yellow]: {what}, so the check could not have failed on a "
                  f"sequence of label {missing}; it says little about the task")


def progress_bar(total: int, label: str, *, quiet: bool = False):
    """``(bar, tick)``: a tqdm bar on stderr when it is a terminal (and not ``quiet``, e.g. for
    ``--json``), else ``(None, None)``."""
    import sys

    if quiet or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, file=sys.stderr, leave=False, unit="seq")
    return bar, bar.update
