"""The theorem registry: each theorem id mapped to its model kind, its assumptions and their exact
checks (STYLE 11). The report that builds and renders each theorem is chosen one floor up, from
the kind (:func:`headprompt.verify.reports.builders.report_module`), so that this table, on the
floor of the checks, names nothing above it.

The CLI (``verify theorem``, ``assumptions``, ``counterexample``, ``explore``), the reports and
the Python API read this one table instead of branching on ids. Reading it imports neither
torch nor the exact engine (the assumption checks are imported on first use).

>>> THEOREMS["3.6"].assumptions, THEOREMS["C.6"].kind
(('3.2', '3.5'), 'memory-hmm')
>>> theorem_spec("3.7")
Traceback (most recent call last):
...
headprompt.models.exceptions.InputError: theorem '3.7': expected one of 3.3, 3.6, 4.3, 4.6, C.6
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...models.exceptions import InputError
from ...models.paper import THEOREM_ASSUMPTIONS

__all__ = ["TheoremSpec", "THEOREMS", "THEOREM_IDS", "theorem_spec", "assumption_checks",
           "check_assumptions", "public_assumptions"]


@dataclass(frozen=True)
class TheoremSpec:
    """One theorem of the paper.

    ``kind`` is the instance kind it is about (``"hmm"`` or ``"memory-hmm"``), ``assumptions``
    the ids of its assumptions in the paper's order, ``head`` the witness family it builds and
    ``statement`` its conclusion in words.
    """

    id: str
    kind: str
    assumptions: tuple[str, ...]
    head: str
    statement: str

    @property
    def memory(self) -> bool:
        return self.kind == "memory-hmm"


THEOREMS: dict[str, TheoremSpec] = {spec.id: spec for spec in (
    TheoremSpec("3.3", "hmm", THEOREM_ASSUMPTIONS["3.3"], "linear head on G_1",
                "a linear head on the pretrained model's G_1 computes F*"),
    TheoremSpec("3.6", "hmm", THEOREM_ASSUMPTIONS["3.6"], "prompt u and linear head on Gbar_2",
                "prompt tuning plus a linear head on Gbar_2 computes F*"),
    TheoremSpec("4.3", "memory-hmm", THEOREM_ASSUMPTIONS["4.3"], "attention head on G_1..G_T",
                "an attention head on G computes F* on R"),
    TheoremSpec("4.6", "memory-hmm", THEOREM_ASSUMPTIONS["4.6"], "prompt and attention head (one cell)",
                "prompt tuning plus an attention head computes F* on R (one memory cell)"),
    TheoremSpec("C.6", "memory-hmm", THEOREM_ASSUMPTIONS["C.6"], "prompt and attention head (several cells)",
                "prompt tuning plus an attention head computes F* on R (several cells)"),
)}
THEOREM_IDS: tuple[str, ...] = tuple(THEOREMS)


def theorem_spec(theorem_id: str) -> TheoremSpec:
    """The registry entry of ``theorem_id``.

    Raises:
        InputError: an unknown id (the message lists the known ones).
    """
    try:
        return THEOREMS[str(theorem_id)]
    except KeyError:
        raise InputError(f"theorem {theorem_id!r}: expected one of {', '.join(THEOREM_IDS)}") from None


def assumption_checks(theorem_id: str) -> dict[str, Callable]:
    """Assumption id -> exact checker ``fn(model) -> dict`` for the theorem's model kind."""
    spec = theorem_spec(theorem_id)
    if spec.memory:
        from .memory.assumptions import CHECKS as table
    else:
        from .vanilla.assumptions import CHECKS as table
    return {name: table[name] for name in spec.assumptions}


def check_assumptions(model, theorem_id: str) -> dict[str, dict]:
    """Every assumption of the theorem on ``model``: ``{id: {"holds": bool, "why": str, ...}}``.

    Raises:
        InputError: an unknown theorem, or a model of the wrong kind.
    """
    from ...models.hmm.values import MemoryHMM

    spec = theorem_spec(theorem_id)
    if isinstance(model, MemoryHMM) != spec.memory:
        found = "memory-hmm" if isinstance(model, MemoryHMM) else "hmm"
        other = "4.3, 4.6 or C.6" if found == "memory-hmm" else "3.3 or 3.6"
        raise InputError(f"Theorem {spec.id} is about {spec.kind} instances, found kind {found!r} "
                         f"(use theorem {other})")
    return {name: fn(model) for name, fn in assumption_checks(theorem_id).items()}


def public_assumptions(model, theorem_id: str) -> dict[str, dict]:
    """:func:`check_assumptions` without the checkers' internal keys (those starting with ``_``),
    as reports print them."""
    return {name: {k: v for k, v in res.items() if not k.startswith("_")}
            for name, res in check_assumptions(model, theorem_id).items()}
