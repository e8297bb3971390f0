"""Exact checks of the memory-HMM assumptions, each returning holds / a plain reason / evidence.

- 3.2 (regularity) on the syntax chain ``(A, P[H_0])``, as for vanilla HMMs.
- 4.2 (non-degeneracy): some ``H* = {j*} x S*`` has independent columns
  ``{W_(m,h)}_{m in M, h in H*}`` whose span meets the span of ``{W_(m,h')}_{m, h' not in H*}``
  only in 0 (exact ranks: ``rank [U | V] = rank U + rank V`` with ``rank U = |U|``).
- 4.4 (stationarity): 3.2 and ``P[H_0] = A P[H_0]`` exactly.
- 4.5 (one memory cell) and C.5 (several): the same with ``m`` restricted to
  ``M* = supp(mu)`` in the target cell (C.5's ``Vbar`` keeps every ``m`` in the other cells).

When non-degeneracy fails, the evidence proves that no ``S*`` exists: for every syntax state
``s`` either a nonzero null vector of ``U_s`` (dependent columns) or coefficients ``a, c`` with
``U_s a = Vb c != 0`` (a common vector); a failing singleton makes every ``S*`` containing it
fail (see :func:`constructions.memory.find_recoverable_states`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ....models.hmm.linalg import nullspace_vector, pivot_columns, rank
from ....constructions.memory import find_recoverable_states
from ....constructions.span import relevant_columns
from ....models.exceptions import InputError
from ....models.hmm.values import HMM, MemoryHMM
from ....models.hmm.rational import format_fraction

from ..vanilla import assumptions as asm
from ....models.paper import THEOREM_ASSUMPTIONS as _ALL

__all__ = ["check_32", "check_42", "check_44", "check_45", "check_c5", "check_all",
           "THEOREM_ASSUMPTIONS", "CHECKS"]

# the memory theorems' assumptions, read from the one table (models/paper.py)
THEOREM_ASSUMPTIONS = {tid: names for tid, names in _ALL.items() if tid in ("4.3", "4.6", "C.6")}


def _fmt(values) -> list[str]:
    return [format_fraction(Fraction(v)) for v in values]


def _syntax_chain(mhmm: MemoryHMM) -> HMM:
    """The syntax chain ``(A, P[H_0])`` as a vanilla HMM with a one-token emission."""
    one = Fraction(1) if mhmm.exact else 1.0
    return HMM(mhmm.A, np.array([[one] * mhmm.num_states], dtype=mhmm.A.dtype), mhmm.pi0)


def check_32(mhmm: MemoryHMM) -> dict:
    """Assumption 3.2 on the syntax chain ``H_0, H_1, ...``."""
    return asm.check_32(_syntax_chain(mhmm))


def check_44(mhmm: MemoryHMM) -> dict:
    """Assumption 4.4: 3.2 and exact stationarity ``P[H_0] = A P[H_0]``."""
    reg = check_32(mhmm)
    if not reg["holds"]:
        return {**reg, "why": "Assumption 3.2 fails: " + reg["why"]}
    image = mhmm.hidden_marginal_1()                  # P[H_1] = A P[H_0]
    diff = [image[h] - mhmm.pi0[h] for h in range(mhmm.num_states)]
    if any(d != 0 for d in diff):
        h = next(k for k, d in enumerate(diff) if d != 0)
        return {"holds": False, "why": f"P[H_0] is not stationary: (A P[H_0])[{h}] = {format_fraction(image[h])} "
                                       f"but P[H_0][{h}] = {format_fraction(mhmm.pi0[h])}",
                "A_pi0_minus_pi0": _fmt(diff)}
    return {"holds": True, "why": reg["why"] + "; P[H_0] = A P[H_0] exactly (stationary)"}


def _singleton_evidence(mhmm: MemoryHMM, s: int, memory_subset) -> dict:
    U_labels, rest = relevant_columns(mhmm, [s], memory_subset)
    cols = lambda labels: (np.stack([mhmm.W[:, m, h] for m, h in labels], axis=1)   # noqa: E731
                           if labels else np.empty((mhmm.num_tokens, 0), dtype=object))
    U = cols(U_labels)
    v = nullspace_vector(U)
    if v is not None:
        return {"s": s, "kind": "dependent", "columns": [list(c) for c in U_labels], "null_vector": _fmt(v),
                "what": f"sum_k v_k W_(m_k, h_k) = 0 with v != 0 over the columns (m, h) of S* = {{{s}}}"}
    V = cols(rest)
    piv = pivot_columns(V)
    Vb_labels = [rest[k] for k in piv]
    Vb = cols(Vb_labels)
    v = nullspace_vector(np.concatenate([U, Vb], axis=1))
    if v is None:
        return {"s": s, "kind": "ok"}
    a, c = v[:len(U_labels)], -v[len(U_labels):]
    w = U.dot(a)
    return {"s": s, "kind": "shared", "U_columns": [list(x) for x in U_labels], "a": _fmt(a),
            "V_columns": [list(x) for x in Vb_labels], "c": _fmt(c), "w": _fmt(w),
            "what": f"w = U a = V c != 0 lies in both spans for S* = {{{s}}}"}


def _nondegeneracy(mhmm: MemoryHMM, name: str, memory_subset) -> dict:
    if not mhmm.exact:
        raise InputError("assumption checks are exact; load the instance exactly")
    sets = find_recoverable_states(mhmm, memory_subset=memory_subset)
    j = mhmm.target_cell
    M_text = "M" if memory_subset is None else f"M* = supp(mu) = {list(memory_subset)}"
    if sets.found:
        U_labels, rest = relevant_columns(mhmm, sets.S_star, memory_subset)
        rU = len(U_labels)
        V = np.stack([mhmm.W[:, m, h] for m, h in rest], axis=1) if rest else np.empty((mhmm.num_tokens, 0), dtype=object)
        rV = rank(V)
        H_star = [j * mhmm.syntax_states + s for s in sets.S_star]
        return {"holds": True, "S_star": list(sets.S_star), "H_star": H_star, "target_cell": j,
                "ranks": {"U": rU, "rest": rV, "together": rU + rV},
                "why": f"H* = {{{j}}} x S* with S* = {list(sets.S_star)} (flattened {H_star}): the {rU} columns "
                       f"W_(m,h), m in {M_text}, h in H*, are independent and rank [U | rest] = {rU} + {rV}, "
                       "so their span meets the other columns' span only in 0"}
    evidence = [_singleton_evidence(mhmm, s, memory_subset) for s in range(mhmm.syntax_states)]
    return {"holds": False, "target_cell": j,
            "why": f"no S* works for Assumption {name} (m in {M_text}): every syntax state of cell {j} fails "
                   "alone, and a failing state makes every S* containing it fail",
            "evidence": evidence}


def check_42(mhmm: MemoryHMM) -> dict:
    """Assumption 4.2 by complete search over ``S*``."""
    return _nondegeneracy(mhmm, "4.2", None)


def _support_of_mu(mhmm: MemoryHMM) -> list[int]:
    if mhmm.mu is None:
        raise InputError("the instance has no task vector \"mu\"; Assumptions 4.5/C.5 depend on supp(mu)")
    rows = mhmm.mu if mhmm.mu.ndim == 2 else [mhmm.mu]      # k classes: the union of the rows' supports
    return [m for m in range(mhmm.memory_values) if any(row[m] != 0 for row in rows)]


def check_c5(mhmm: MemoryHMM, name: str = "C.5") -> dict:
    """Assumption C.5 (4.5 when there is one cell): non-degeneracy with ``m in supp(mu)``."""
    support = _support_of_mu(mhmm)
    if not support:
        # mu = 0 (README, "mu = 0"): no column is restricted, so the condition holds vacuously
        # for every S*; S* = all syntax states makes R as large as it can be. Same reading as
        # Assumption 3.5 with supp(mu) empty (B = H* = []).
        j, S = mhmm.target_cell, mhmm.syntax_states
        H_star = [j * S + s for s in range(S)]
        return {"holds": True, "S_star": list(range(S)), "H_star": H_star, "target_cell": j,
                "why": f"mu = 0: supp(mu) is empty, so Assumption {name} holds vacuously (no columns W_(m,h) "
                       f"with m in supp(mu) to recover; S* = all syntax states, H* = {H_star}); "
                       "F* = 1 on every sequence, so any check of this task is vacuous"}
    return _nondegeneracy(mhmm, name, support)


def check_45(mhmm: MemoryHMM) -> dict:
    """Assumption 4.5 (single memory cell).

    Raises:
        InputError: for an instance with more than one cell (use C.5 / Theorem C.6).
    """
    if mhmm.cells != 1:
        raise InputError(f"Assumption 4.5 and Theorem 4.6 are about one memory cell; the instance has "
                         f"{mhmm.cells} cells (use C.6)")
    return check_c5(mhmm, "4.5")


def check_all(model, theorem_id: str) -> dict:
    """Every assumption of Theorem ``4.3``, ``4.6`` or ``C.6`` on ``model``.

    Raises:
        InputError: a vanilla HMM, an unknown theorem, or 4.6 on several cells.
    """
    if not isinstance(model, MemoryHMM):
        raise InputError(f"Theorem {theorem_id} is about memory-augmented HMMs; found kind 'hmm' "
                         "(use theorem 3.3 or 3.6)")
    if theorem_id not in THEOREM_ASSUMPTIONS:
        raise InputError(f"theorem {theorem_id!r}: expected one of {', '.join(THEOREM_ASSUMPTIONS)}")
    return {name: CHECKS[name](model) for name in THEOREM_ASSUMPTIONS[theorem_id]}


# assumption id -> exact checker (read by the registry)
CHECKS = {"3.2": check_32, "4.2": check_42, "4.4": check_44, "4.5": check_45, "C.5": check_c5}
