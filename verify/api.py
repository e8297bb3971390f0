"""The Python API: one call checks a theorem and returns a report (SPEC section 5).

>>> import headprompt
>>> report = headprompt.check(None, "3.6", hidden=5, vocab=3, samples=200, length=4)
>>> report.verdict, report.exit_code, report.to_dict()["theorem"]
('verified', 0, '3.6')

``check(instance, theorem, **options)`` runs exactly what ``verify theorem`` runs: its
``to_dict()`` is the object that ``verify theorem ... --json`` prints for the same inputs.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..models.exceptions import InputError

from .theorems.registry import theorem_spec
from .theorems.requests import TheoremRequest

__all__ = ["check", "load", "run_theorem", "TheoremReport", "EXIT_CODES", "DETAILS"]

DETAILS = "_details"
"""Key under which a report builder leaves the checked model, witness and sequences for
:meth:`TheoremReport.to_frame`; :func:`run_theorem` removes it, so it never reaches JSON."""

# verdict -> exit code of ``verify theorem`` (SPEC section 4): 0, 1 and 3 are proofs; an
# uncertified (float) run exits 5 whatever its verdict.
EXIT_CODES = {"verified": 0, "refuted": 1, "assumptions-fail": 3}
EXIT_UNCERTIFIED = 5


@dataclass(frozen=True)
class TheoremReport:
    """The result of one theorem check: the report dict of SPEC section 4, read-only.

    ``verdict`` is ``"verified"``, ``"refuted"`` or ``"assumptions-fail"`` when it was proven
    (exact or certified mode); a float-mode run, which proves nothing, reads
    ``"verified (uncertified)"`` (and so on), so ``report.verdict == "verified"`` is true only
    of a proof. ``proven`` says the same as a bool; ``exit_code`` is what the CLI exits with
    (5 for a float run). ``to_dict()["verdict"]`` stays the JSON's word, beside
    ``"certified": false``.
    """

    data: dict = field(repr=False)
    request: TheoremRequest = field(repr=False)
    details: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def verdict(self) -> str:
        word = self.data["verdict"]
        return word if self.proven else f"{word} (uncertified)"

    @property
    def certified(self) -> bool:
        return self.data.get("mode") != "float"

    @property
    def proven(self) -> bool:
        """True when the verdict is a proof (exact or certified arithmetic), False in float mode."""
        return self.certified

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.data["verdict"]] if self.certified else EXIT_UNCERTIFIED

    def to_dict(self) -> dict:
        """A deep copy of the report: the object ``verify theorem --json`` prints."""
        return copy.deepcopy(self.data)

    def rows(self) -> list[dict]:
        """One row per checked sequence (those with ``Pr(x) = 0`` included, marked), decided
        again the slow, general way, exactly: ``sequence``, ``possible``, ``in_R``, ``F_star``,
        ``F``, ``agree``, ``tie``, and the margins ``task_margin`` (``mu . P[H_0 | x]``, or
        ``mu . P[M_j* | x]``) and ``head_margin`` (the head's output before the threshold), as
        exact ``Fraction`` values (``None`` for a task with several classes, decided by
        argmax of its scores). Empty when no witness was checked. Costs about a millisecond
        per sequence and state (it recomputes every posterior and ``G`` exactly).
        """
        from fractions import Fraction

        witness = self.details.get("witness")
        if witness is None:
            return []
        model, out = self.details["model"], []
        if theorem_spec(self.request.id).memory:
            from .theorems.memory.check import decide_direct

            for seq in self.details["sequences"]:
                d = decide_direct(model, witness, self.details["H_star"], seq)
                out.append({"sequence": list(seq), "possible": d.possible, "in_R": d.in_R,
                            "F_star": d.expected, "F": d.got, "agree": d.in_R and d.expected == d.got,
                            "tie": d.tie, "task_margin": d.task_margin, "head_margin": d.head_margin})
            return out
        from ..models.hmm.task import class_label, is_multiclass, label
        from .theorems.vanilla.check import margins_direct

        b, u = witness.b, getattr(witness, "u", None)
        for seq in self.details["sequences"]:
            star, head, possible = margins_direct(model, self.request.id, b, u, seq)
            if is_multiclass(model.mu):     # k classes: the scores decide, there is no one margin
                top = sorted(star)[-2:]
                out.append({"sequence": list(seq), "possible": possible, "in_R": possible,
                            "F_star": class_label(star), "F": class_label(head),
                            "agree": possible and class_label(star) == class_label(head),
                            "tie": possible and top[0] == top[1], "task_margin": None, "head_margin": None})
                continue
            out.append({"sequence": list(seq), "possible": possible, "in_R": possible,
                        "F_star": label(star), "F": label(head), "agree": possible and label(star) == label(head),
                        "tie": possible and star == 0, "task_margin": Fraction(star), "head_margin": Fraction(head)})
        return out

    def to_frame(self):
        """:meth:`rows` as a pandas DataFrame (``pip install pandas``), the margins as exact
        ``Fraction`` objects and, beside them, as floats (``task_margin_float``,
        ``head_margin_float``) for plotting.

        Raises:
            ImportError: pandas is not installed (the message says how to install it).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("TheoremReport.to_frame needs pandas: pip install pandas") from None
        frame = pd.DataFrame(self.rows(), columns=["sequence", "possible", "in_R", "F_star", "F", "agree",
                                                   "tie", "task_margin", "head_margin"])
        for name in ("task_margin", "head_margin"):
            frame[f"{name}_float"] = [None if v is None else float(v) for v in frame[name]]
        return frame

    def _repr_html_(self) -> str:
        """A small table for notebooks: verdict, mode, instance, assumptions and counts."""
        from html import escape

        d = self.data
        colour = {"verified": "#1a7f37", "refuted": "#cf222e", "assumptions-fail": "#9a6700"}[d["verdict"]]
        inst = d.get("instance") or {}
        sizes = ", ".join(f"{k} {v}" for k, v in inst.items() if k in ("hidden", "vocab", "memory", "cells",
                                                                     "syntax", "classes") and v is not None)
        rows = [("verdict", f'<b style="color:{colour}">{escape(self.verdict)}</b>'),
                ("mode", escape(str(d.get("mode"))) + ("" if self.proven else " (proves nothing)")),
                ("instance", escape(f"{inst.get('source', '')} ({sizes})"))]
        for name, a in (d.get("assumptions") or {}).items():
            rows.append((f"assumption {escape(name)}", ("holds: " if a.get("holds") else "fails: ")
                         + escape(str(a.get("why", "")))))
        seqs = d.get("sequences") or {}
        if seqs:
            rows.append(("sequences", escape(f"{seqs.get('agree')}/{seqs.get('checked')} agree with F* "
                                             f"({seqs.get('how')}, length {seqs.get('length')})")))
        if d.get("labels"):
            rows.append(("labels of F*", escape(", ".join(f"{k}: {v}" for k, v in d["labels"].items()))))
        if d.get("counterexample"):
            rows.append(("counterexample", escape(str(d["counterexample"].get("kind")))))
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
                       for k, v in rows)
        return f"<table><caption>Theorem {escape(str(d['theorem']))}</caption>{body}</table>"

    def __repr__(self) -> str:
        seqs = self.data.get("sequences") or {}
        return (f"TheoremReport(theorem={self.data['theorem']!r}, verdict={self.verdict!r}, "
                f"mode={self.data.get('mode')!r}, checked={seqs.get('checked')})")


def run_theorem(request: TheoremRequest) -> TheoremReport:
    """Build the report of one request (the CLI's ``verify theorem`` calls this too)."""
    start = time.perf_counter()
    if request.certificate is not None:          # refuse what no certificate can express, before any work
        from .evidence.certificate import check_certificate_request

        check_certificate_request(request.id, request.mode, request.classes)
    data = theorem_spec(request.id).report().theorem(request)
    details = data.pop(DETAILS, {})
    data["seconds"] = round(time.perf_counter() - start, 3)
    report = TheoremReport(data=data, request=request, details=details)
    if request.certificate is not None:
        from .evidence.certificate import write_certificate

        write_certificate(report, request.certificate)
    return report


def load(path: str | os.PathLike, *, exact: bool = True):
    """An instance file (SPEC section 3) as an ``HMM`` or ``MemoryHMM``.

    Raises:
        InputError: ``path`` not a ``str``/``os.PathLike``, ``exact`` not a bool, or a missing,
            malformed or invalid file (the message names the problem).
    """
    from ..models.hmm.files import load_instance

    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise InputError(f"path={path!r}: expected the path of an instance file (str or os.PathLike), "
                         f"found {type(path).__name__}")
    if not isinstance(exact, (bool, np.bool_)):
        raise InputError(f"exact={exact!r}: expected True or False")
    return load_instance(os.fspath(path), exact=bool(exact))


def check(instance: Any, theorem: str, **options: Any) -> TheoremReport:
    """Check ``theorem`` (``"3.3"``, ``"3.6"``, ``"4.3"``, ``"4.6"`` or ``"C.6"``) on ``instance``.

    ``instance`` is an ``HMM``, a ``MemoryHMM``, the path of an instance file, or ``None`` to
    generate one of the sizes given by ``hidden``, ``vocab``, ``memory``, ``cells`` from
    ``seed``. Options are those of ``verify theorem``: ``mode`` (``"exact"``, ``"certified"``,
    ``"float"``), ``samples``, ``length``, ``exhaustive``, ``seed``, ``witness`` (a witness file),
    ``out``.

    Raises:
        InputError: an unknown theorem or option, or invalid input (as the CLI's exit code 2).
    """
    from ..models.hmm.values import HMM, MemoryHMM

    if isinstance(instance, (str, os.PathLike)):
        options["hmm"] = os.fspath(instance)
    elif isinstance(instance, (HMM, MemoryHMM)):
        options["model"] = instance
    elif instance is not None:
        raise InputError(f"instance {type(instance).__name__!r}: expected an HMM, a MemoryHMM, "
                         "the path of an instance file, or None (generate one)")
    return run_theorem(TheoremRequest.from_options(theorem, **options))
