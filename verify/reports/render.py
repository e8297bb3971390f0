"""Rendering of result dicts: one JSON object for scripts, rich text for people."""

from __future__ import annotations

import json
import sys
from typing import Any
from fractions import Fraction

__all__ = ["emit_json", "console", "print_header", "print_labels", "progress_bar", "Progress", "phase",
           "lengths_checked", "lengths_text", "evidence_name", "evidence_heading", "NOT_COUNTEREXAMPLES"]

EVIDENCE_NAMES = {"no-linear-head": "Motzkin certificate (no linear head)",
                  "no-prompt-and-head": "Motzkin certificates (no prompt and head)"}
"""People's names of the JSON ``kind`` values of evidence (the JSON keeps its words: a contract)."""


NOT_COUNTEREXAMPLES = frozenset({"none-found", "construction-survives", "construction-undefined", "vacuous-prompt"})
"""Evidence kinds that show no failure of the conclusion: human output heads them "evidence",
never "counterexample" (a construction that agrees on every checked sequence refutes nothing)."""


def evidence_heading(kind: str) -> str:
    """The heading human output gives evidence of JSON kind ``kind``."""
    return "evidence (no counterexample)" if kind in NOT_COUNTEREXAMPLES else "counterexample"


def evidence_name(kind: str) -> str:
    """How human output names evidence of JSON kind ``kind`` (the kind itself when it has no other name)."""
    return EVIDENCE_NAMES.get(kind, kind)


def emit_json(result: dict[str, Any]) -> None:
    """Print ``result`` as exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(result, default=_default) + "\n")


def _default(obj: Any) -> Any:
    from fractions import Fraction

    import numpy as np

    from ...models.hmm.rational import format_fraction

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
    """A rich console on stdout. On a terminal, text wraps at its width; off a terminal (a pipe,
    a file) nothing is wrapped: every sentence stays on one line and tables take their natural
    width, so ``verify ... | grep`` and logs read whole lines. No colour codes off a terminal."""
    import sys

    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:       # rich would exit 1, which reads as a refutation
            raise BrokenPipeError(32, "Broken pipe")

    if sys.stdout.isatty():
        return _Console(highlight=False, force_jupyter=False)
    # never rich's Jupyter display: str(report) in a notebook captures this console's text
    return _Console(highlight=False, soft_wrap=True, width=100_000, no_color=True, force_jupyter=False)


def print_header(out, result: dict[str, Any]) -> None:
    """The common head of a theorem report: verdict, instance, and the assumptions table."""
    from rich.table import Table

    verdict = result["verdict"]
    colour = {"verified": "green", "refuted": "red", "assumptions-fail": "yellow"}[verdict]
    inst = result["instance"]
    if result.get("certified") is False or result.get("mode") == "float":
        out.print("[bold red]UNCERTIFIED[/bold red] (--mode float): the verdict and counts below come from "
                  "float64 arithmetic and prove nothing; rerun with --mode exact or certified for a proof")
    conv = result.get("conversion") or {}
    decided = " [bold yellow](decided by the conversion, not the source model)[/bold yellow]" if conv.get("decided") else ""
    out.print(f"[bold]Theorem {result['theorem']}[/bold]  verdict: [{colour}]{verdict}[/{colour}]{decided}  "
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
                  f"to 0, the rest " + (f"rounded to denominator {r['max_denominator']}" if r.get("max_denominator") is not None
                                       else "kept at their exact binary values") + "; largest entry change "
                  f"{r['max_entry_change']['approx']:.3g}; the verdict is about this exact model")
    if conv:
        record = conv["record"]
        start = record.get("start") or {}
        out.print(f"  converted from {record['source']} ({record['dtype']})"
                  + (f"; pi0 read as start={start['used']!r}" + (f" (asked {start['requested']!r})"
                     if start.get("requested") not in (None, start["used"]) else "") if start else ""))
        for r in conv["readings"]:
            under = ("every assumption holds" if not r["failed"] else "fails " + ", ".join(r["failed"]))
            if r.get("verdict"):
                under += f"; verdict {r['verdict']}"
            out.print(f"  under {r['reading']}: {under}")
        if conv.get("note"):
            out.print(f"  [yellow]{conv['note']}[/yellow]")
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
    off = result.get("labels_off_ties")
    ties = "" if not off or off["1"] == counts.get("1") else f" ({counts['1'] - off['1']} of them exact ties mu . p = 0)"
    out.print(f"labels of F* on the sequences {where}: "
              + ", ".join(f"{n} with F* = {c}" for c, n in counts.items()) + ties)
    if result.get("weak"):
        out.print(f"[bold yellow]WEAK[/bold yellow]: {result['weak_why']}")
    if result.get("vacuous"):
        absent = [c for c, n in counts.items() if n == 0]
        if sum(counts.values()) == 0:
            what, missing = "no checked sequence counts (none is in R)", " or ".join(counts)
        elif len(counts) == 2:
            missing = absent[0]
            what = f"F* = {1 - int(missing)} on every sequence that counts, never {missing}"
        else:                                   # several classes: name those that never occur
            missing = " or ".join(absent)
            what = f"F* is never {missing} on the sequences that count"
        out.print(f"[bold yellow]VACUOUS[/bold yellow]: {what}, so the check could not have failed on a "
                  f"sequence of label {missing}; it says little about the task")


class Progress:
    """Progress of a long run on stderr, readable on a terminal and in a log.

    On a terminal it is a tqdm bar, redrawn every ``refresh`` seconds even between updates (so
    its elapsed time and time-left estimate move while a long batch runs). Off a terminal
    (``2> log``, CI) it prints plain lines ``label: done/total (pct) elapsed 12 s, ETA 34 s``: one
    per update when ``each`` is true (one line per finished job of a sweep), otherwise at most
    one every ``interval`` seconds, also when no update came (a heartbeat, so a log never looks
    frozen), and a last one at the end. ``quiet`` prints nothing. Same interface as a tqdm bar
    for its callers: ``update(n)``, ``close()``, and a context manager.
    """

    def __init__(self, total: int, label: str, *, unit: str = "item", quiet: bool = False,
                 each: bool = False, interval: float = 10.0, initial: int = 0, stream=None,
                 refresh: float = 1.0) -> None:
        import sys
        import time

        self.total, self.label, self.unit, self.quiet = int(total), label, unit, quiet
        self.each, self.interval, self.done = each, interval, int(initial)
        self.stream = sys.stderr if stream is None else stream
        self._clock = time.monotonic
        self.start = self._last = self._clock()
        self._start_done = self.done
        self.bar = None
        self.closed = False
        if not quiet and _isatty(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, initial=self.done, desc=label, file=self.stream, leave=False,
                            unit=unit)
        self._beat = None
        if not quiet and not each:
            self._start_heartbeat(refresh if self.bar is not None else interval)

    def _start_heartbeat(self, every: float) -> None:
        """A daemon thread that redraws the bar (terminal) or prints a line when none was printed
        for ``every`` seconds (log), until :meth:`close`."""
        import threading
        import weakref

        stop = threading.Event()
        ref = weakref.ref(self)              # a bar dropped without close() (an error) stops its thread

        def beat() -> None:
            while not stop.wait(every):
                bar = ref()
                if bar is None or bar.closed:
                    return
                if bar.bar is not None:
                    bar.bar.refresh()
                elif bar._clock() - bar._last >= every and bar.done < bar.total:
                    bar._last = bar._clock()
                    bar._line(None)
                del bar

        thread = threading.Thread(target=beat, name="progress-heartbeat", daemon=True)
        self._beat = stop
        thread.start()

    def update(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.update(n)
            return
        now = self._clock()
        if self.each or self.done >= self.total or now - self._last >= self.interval:
            self._last = now
            self._line(note)

    def line(self) -> str:
        """The status line off a terminal (also what :meth:`update` prints)."""
        elapsed = self._clock() - self.start
        ran = self.done - self._start_done
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        eta = ""
        if 0 < ran and self.done < self.total:
            eta = f", ETA {_seconds(elapsed / ran * (self.total - self.done))}"
        return f"{self.label}: {self.done}/{self.total} {self.unit}s{pct}, elapsed {_seconds(elapsed)}{eta}"

    def _line(self, note: str | None) -> None:
        print(self.line() + (f" ({note})" if note else ""), file=self.stream, flush=True)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._beat is not None:
            self._beat.set()
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _seconds(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


class phase:  # noqa: N801 - used as ``with phase("label"):``
    """``with phase("generating the instance", quiet=...)``: one stderr line when a phase of a
    long run starts (``label ...``) and one when it ends (``label: done in 3 s``), so a run at a
    terminal is never silent for long; nothing when stderr is not a terminal, nor with
    ``quiet`` (``--json`` keeps stderr for errors only when asked)."""

    def __init__(self, label: str, *, quiet: bool = False, stream=None) -> None:
        import sys

        self.stream = sys.stderr if stream is None else stream
        # people at a terminal see each phase; a log or a pipe keeps stderr for the result (a
        # refusal stays one line)
        self.label, self.quiet = label, quiet or not _isatty(self.stream)

    def __enter__(self) -> "phase":
        import time

        self.start = time.monotonic()
        if not self.quiet:
            print(f"{self.label} ...", file=self.stream, flush=True)
        return self

    def __exit__(self, exc_type, *rest) -> None:
        import time

        if self.quiet or exc_type is not None:
            return
        print(f"{self.label}: done in {_seconds(time.monotonic() - self.start)}", file=self.stream, flush=True)


def progress_bar(total: int, label: str, *, quiet: bool = False):
    """``(progress, tick)``: a :class:`Progress` on stderr (a bar on a terminal, lines in a log),
    or ``(None, None)`` with ``quiet`` (e.g. ``--json``)."""
    if quiet:
        return None, None
    bar = Progress(total, label, unit="sequence")
    return bar, bar.update


def lengths_checked(sequences) -> list[int]:
    """The distinct lengths of the checked sequences, in order (the report's ``"lengths"``)."""
    return sorted({len(s) for s in sequences})


def lengths_text(s: dict) -> str:
    """``lengths 1-3, 8`` from a report's ``sequences`` block (older reports: ``length <= T``)."""
    lengths = s.get("lengths")
    if not lengths:
        return f"length <= {s['length']}"
    runs, start = [], lengths[0]
    for a, b in zip(lengths, lengths[1:] + [None]):
        if b != a + 1:
            runs.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return ("length " if len(lengths) == 1 else "lengths ") + ", ".join(runs)
