"""The rows of a theorem report (:meth:`headprompt.verify.api.TheoremReport.rows`): one per
checked sequence, computed once, in bounded memory.

Each row: ``sequence``, ``length``, ``possible`` (``Pr(x) > 0``), ``in_R``, ``F_star``, ``F``,
``agree``, ``tie``, the margins ``task_margin`` (``mu . P[H_0 | x]``, or ``mu . P[M_j* | x]``)
and ``head_margin`` (the head's output before the threshold), and ``exact`` (whether the
margins are exact). By default the margins are floats with a certified error bound beside
them (``task_margin_bound``, ``head_margin_bound``: ``|exact - value| <= bound``); a row the
bound cannot settle (ties, near-ties, underflow) is computed exactly, so the labels and ties
are always proven. With ``exact=True`` every margin is an exact ``Fraction`` (bound ``0``).
A task with several classes has no single margin (``None``); its rows are decided exactly.
"""

from __future__ import annotations

from fractions import Fraction

from ...models.hmm.task import is_multiclass, label
from ..checks.registry import theorem_spec

__all__ = ["report_rows", "ROW_KEYS"]

ROW_KEYS = ("sequence", "length", "possible", "in_R", "F_star", "F", "agree", "tie", "task_margin",
            "task_margin_bound", "head_margin", "head_margin_bound", "exact")


def _row(seq, possible, in_R, f_star, f, tie, task, task_b, head, head_b) -> dict:
    exact = task is None or isinstance(task, Fraction)
    return {"sequence": list(seq), "length": len(seq), "possible": bool(possible), "in_R": bool(in_R),
            "F_star": f_star, "F": f, "agree": bool(in_R and f_star is not None and f_star == f),
            "tie": bool(tie), "task_margin": task, "task_margin_bound": task_b, "head_margin": head,
            "head_margin_bound": head_b, "exact": exact}


def _floated(value, bound: float, exact: bool):
    """A margin as the caller asked: exact fractions stay exact with ``exact``; otherwise a float
    (an exact value rounds once: its bound is one unit in the last place)."""
    import math

    if value is None or exact or not isinstance(value, Fraction):
        return value, bound
    try:
        f = float(value)
    except OverflowError:                         # past float64 (a head weight of 10**5000): +-inf
        return (math.inf if value > 0 else -math.inf), math.inf
    return f, (0.0 if Fraction(f) == value else math.ulp(f))


def report_rows(theorem: str, details: dict, *, exact: bool = False) -> list[dict]:
    """The rows of a report from its details (model, witness, sequences[, H_star])."""
    witness = details.get("witness")
    if witness is None:
        return []
    model, sequences = details["model"], details["sequences"]
    if theorem_spec(theorem).memory:
        return _memory_rows(model, witness, details["H_star"], sequences, exact)
    return _vanilla_rows(model, theorem, witness, sequences, exact)


def _vanilla_rows(model, theorem, witness, sequences, exact):
    from ..checks.margins import vanilla_margins
    from ..checks.vanilla.check import check_sequences

    b, u = witness.b, getattr(witness, "u", None)
    if is_multiclass(model.mu):          # k classes: the exact decisions (no single margin)
        res = check_sequences(model, theorem, b, u, sequences, mode="exact", keep=True)
        return [_row(d.sequence, d.possible, d.possible, d.expected if d.possible else None,
                     d.got if d.possible else None, d.possible and d.tie, None, None, None, None)
                for d in res.decisions]
    out = []
    for seq, (possible, task, task_b, head, head_b) in zip(sequences, vanilla_margins(model, theorem, b, u,
                                                                                        sequences, exact=exact)):
        task, task_b = _floated(task, task_b, exact)
        head, head_b = _floated(head, head_b, exact)
        out.append(_row(seq, possible, possible, label(task) if possible else None,
                        label(head) if possible else None, possible and task == 0, task, task_b, head, head_b))
    return out


def _memory_rows(model, witness, H_star, sequences, exact):
    from ..runtime.cost import check_fallback
    from ..checks.memory.check import check_sequences

    if exact and sequences:              # sized before any exact work (LimitError, an InputError)
        check_fallback(len(sequences), max(len(s) for s in sequences), model.lift().num_states, memory=True,
                       model=model)
    res = check_sequences(model, witness, H_star, sequences, mode="exact" if exact else "certified", keep=True,
                          evaluate_outside_R=True, margins=True)
    out = []
    for d in res.decisions:
        if d.float_margins is not None:
            task, task_b, head, head_b = d.float_margins
        else:
            task, task_b = _floated(d.task_margin, 0.0, exact)
            head, head_b = _floated(d.head_margin, 0.0, exact)
        if not d.possible or is_multiclass(model.mu):
            task = head = task_b = head_b = None
        f_star = d.expected if d.possible else None
        f = d.got if d.possible else None
        out.append(_row(d.sequence, d.possible, d.in_R, f_star, f, d.possible and d.tie, task, task_b, head, head_b))
    return out
