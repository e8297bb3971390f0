"""The construction on an instance, checked: the witness the paper's builder gives (or, where it
cannot be carried out, the paper's recipe with pseudo-inverses, ``constructions/relaxed.py``)
checked exactly on a list of sequences. Construction-level evidence of ``verify theorem``,
``verify counterexample`` and ``verify explore``: a sequence where the witness disagrees with
``F*`` refutes the construction (not the statement; :mod:`.statement` is for that)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...constructions.relaxed import RECIPES, relaxed_33_witness, relaxed_36_witness, relaxed_memory_witness
from ...constructions.vanilla import ConstructionError
from ...models.hmm.rational import format_array
from ...models.hmm.task import num_classes
from ...models.hmm.values import MemoryHMM

__all__ = ["construction_check", "build_witness", "short_sequences", "empty_labels", "witness_dict",
           "MAX_SEQUENCES"]

MAX_SEQUENCES = 400
"""The most sequences :func:`short_sequences` gives."""


def empty_labels(model) -> dict:
    """``{"0": 0, "1": 0}``, or one count per class of a ``k``-row task."""
    return {str(c): 0 for c in range(num_classes(model.mu) if model is not None and model.mu is not None else 2)}


def short_sequences(model, max_length: int) -> list[tuple[int, ...]]:
    """Every sequence of length ``1..L`` with ``L <= max_length`` the largest that keeps at most
    :data:`MAX_SEQUENCES` of them."""
    from .sequences import exhaustive

    X = model.num_tokens
    L = max_length
    while L > 1 and sum(X ** k for k in range(1, L + 1)) > MAX_SEQUENCES:
        L -= 1
    return exhaustive(X, L)


def build_witness(model, theorem: str, *, relaxed_ok: bool = True) -> tuple[Any, list[int] | None, str]:
    """The witness "the construction" gives on ``model``: the paper's builder, or (when it
    cannot be carried out and ``relaxed_ok``) the recipe with pseudo-inverses. Returns
    ``(witness, H_star or None, how)``.

    Raises:
        ConstructionError: the paper's builder fails and ``relaxed_ok`` is False.
    """
    from ...constructions.memory import theorem_43_witness, theorem_c6_witness
    from ...constructions.vanilla import theorem_33_witness, theorem_36_witness

    try:
        if theorem == "3.3":
            return theorem_33_witness(model), None, "the paper's construction"
        if theorem == "3.6":
            return theorem_36_witness(model), None, "the paper's construction"
        w = theorem_43_witness(model) if theorem == "4.3" else theorem_c6_witness(model, theorem=theorem)
        return w, list(w.H_star), "the paper's construction"
    except ConstructionError as exc:
        if not relaxed_ok:
            raise
        why = str(exc)
    how = f"the paper's recipe without its assumption ({why}): {RECIPES[theorem]}"
    if theorem == "3.3":
        return relaxed_33_witness(model), None, how
    if theorem == "3.6":
        return relaxed_36_witness(model), None, how
    w, H_star = relaxed_memory_witness(model, theorem)
    return w, H_star, how


def witness_dict(witness, H_star) -> dict:
    out = {k: format_array(np.asarray(v, dtype=object)) for k, v in witness.as_dict().items() if k != "theorem"}
    if H_star is not None:
        out["H_star"] = list(H_star)
    return out


def construction_check(model, theorem: str, sequences, *, relaxed_ok: bool = True) -> dict:
    """Build the construction's witness and check it exactly on ``sequences``.

    Returns ``{"witness", "H_star", "how", "checked", "agree", "in_R", "labels",
    "disagreement"}`` where ``disagreement`` is None or ``{"sequence", "expected", "got"}``.
    """
    witness, H_star, how = build_witness(model, theorem, relaxed_ok=relaxed_ok)
    labels = empty_labels(model)
    if isinstance(model, MemoryHMM):
        from ..checks.memory.check import check_sequences

        res = check_sequences(model, witness, H_star, sequences, keep=True)
        counted = [d for d in res.decisions if d.in_R]
        in_R = res.in_R
    else:
        from ..checks.vanilla.check import check_sequences

        res = check_sequences(model, theorem, witness.b, getattr(witness, "u", None), sequences, keep=True)
        counted = [d for d in res.decisions if d.possible]        # Pr(x) = 0: outside every claim
        in_R = res.checked
    for d in counted:
        labels[str(d.expected)] += 1
    dis = None
    if res.first_disagreement is not None:
        d = res.first_disagreement
        dis = {"sequence": list(d.sequence), "expected": d.expected, "got": d.got}
    return {"witness": witness, "H_star": H_star, "how": how, "checked": res.checked, "agree": res.agree,
            "in_R": in_R, "labels": labels, "disagreement": dis}
