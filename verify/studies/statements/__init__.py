"""Every numbered statement of Sections 3-4 and Appendices A-C: how the toolkit checks it, on
what scope, and the result of checking it now (``verify statements``).

Each row is ``(statement, how, scope, check)``; ``check()`` returns ``(ok, detail, counts)``.
Results: ``holds`` (the statement, as the paper words it, holds on the row's scope),
``agrees`` (an assumption row: the toolkit's checker agrees with an independent oracle on
instances where the assumption holds and where it fails; an assumption is a hypothesis, never
said to hold), ``fails``, ``vacuous`` (the check could not have failed: no input of the kind the
statement is about), ``indirect`` (a proof step whose conclusion another row checks).

Kinds of check: brute-force sums over hidden paths and memories (:mod:`.paths`) against the
message-passing code (:mod:`.vanilla`, :mod:`.memory`); the assumption checkers against oracles
(:mod:`.assumptions`); ``verify theorem`` on several generated instances with ties, with ``F*``
re-derived by brute force, and sympy proofs (:mod:`.theorems`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from .assumptions import FAMILIES, check_assumption
from .memory import (check_claim_c14, check_claim_c15, check_lemma_c7, check_prop_c8, check_prop_c11,
                     paper_prompt, support_instance, two_cell_instance)
from .paths import memory_path_joint, path_joint, words
from .theorems import SEEDS, SYMBOLIC_SIZES, THEOREM_SIZES, check_symbolic, check_theorem
from .vanilla import check_lemma_b1, small_instance, zero_norm_instance

__all__ = ["STATEMENTS", "run_statements", "path_joint", "memory_path_joint", "words", "check_lemma_b1",
           "check_lemma_c7", "check_prop_c8", "check_prop_c11", "check_claim_c14", "check_claim_c15",
           "check_assumption", "check_theorem", "check_symbolic", "paper_prompt", "small_instance",
           "zero_norm_instance", "two_cell_instance", "one_cell_instance", "RESULTS"]

RESULTS = ("holds", "agrees", "fails", "vacuous", "indirect")

_SYM = ", ".join(f"({h}, {x}, {t})" for h, x, t in SYMBOLIC_SIZES)
SYMBOLIC_SCOPE = {"instances": "every HMM of these sizes (all parameters symbolic; the identities hold wherever "
                               "their denominators are nonzero)",
                  "symbolic_sizes": f"(|H|, |X|, T) = {_SYM}: every x of length 1..T, all parameters symbolic",
                  "not_reached": "(3, 3, 3): 22,113 brute-force path terms, over the symbolic limit of 3,000"}


# ------------------------------------------------------------------ instances of the lemma rows

B1_CASES = [("zero-norm instance, u = (1, 0, 0)", zero_norm_instance, [1, 0, 0]),
            ("zero-norm instance, u = (1, 0, 1/2)", zero_norm_instance, [1, 0, Fraction(1, 2)]),
            ("Theorem 3.6 generator seed 0 (|H| = 3, |X| = 2), u = (1/2, 1, 1/3)", small_instance,
             [Fraction(1, 2), 1, Fraction(1, 3)])]


def _b1():
    total = {"positions": 0, "positive": 0, "zero_norm": 0, "sequences": 0}
    for name, build, u in B1_CASES:
        hmm = build()
        ok, why, c = check_lemma_b1(hmm, u, words(hmm.num_tokens, 3))
        if not ok:
            return False, f"{name}: {why}", c
        total = {k: total[k] + c[k] for k in total}
    if not total["zero_norm"] or not total["positive"]:
        return False, "vacuous on one half: no position with ||tau|| = 0 or none with ||tau|| > 0", total
    return True, (f"tau_i = P[H_i, Xhat_-i] at all {total['positions']} positions; Gbar_i = P[Xhat_i | Xhat_-i] "
                  f"at {total['positive']} positions with ||tau|| > 0, Gbar_i = 0 at {total['zero_norm']} "
                  f"with ||tau|| = 0"), total


def one_cell_instance():
    """The Theorem 4.6 generator's one-cell instance (|M| = 3, |S| = 2), stationary start, with
    ``supp(mu)`` made a proper subset of ``M`` (:func:`.memory.support_instance`)."""
    from ...api import run_theorem
    from ...reports.requests import TheoremRequest

    r = run_theorem(TheoremRequest.from_options("4.6", hidden=2, memory=3, cells=1, samples=1, length=1,
                                                progress=False))
    return support_instance(r.details["model"])


def _c7():
    m = two_cell_instance()
    size = len(m.pM) * m.num_states
    total = {"positions": 0, "positive": 0, "zero_norm": 0, "sequences": 0}
    for name, u in (("prompt (C.6)", paper_prompt(m)), ("prompt (k mod 3)/2", [Fraction(k % 3, 2) for k in range(size)])):
        ok, why, c = check_lemma_c7(m, u, words(m.num_tokens, 2))
        if not ok:
            return False, f"{name}: {why}", c
        total = {k: total[k] + c[k] for k in total}
    if not total["zero_norm"]:
        return False, "vacuous on the zero-norm half: no position with Pr(Xhat_-i) = 0", total
    return True, (f"2 cells, factor |M|^-(N-1) = 1/3: tau_i and phi(tau_i) at all {total['positions']} positions; "
                  f"Gbar_i = P[Xhat_i | Xhat_-i] at {total['positive']}, Gbar_i = 0 at {total['zero_norm']} "
                  f"zero-norm positions"), total


def _c8():
    m = two_cell_instance()
    return check_prop_c8(m, words(m.num_tokens, 2))


def _both(check: Callable):
    def run():
        details, total = [], {}
        for name, m in (("one cell", one_cell_instance()), ("two cells", two_cell_instance())):
            ok, why, c = check(m, paper_prompt(m), words(m.num_tokens, 2))
            if not ok:
                return False, f"{name}: {why}", c
            details.append(f"{name}: {why}")
            total[name] = c
        return True, "; ".join(details), total
    return run


def _c15():
    from .assumptions import oracle_44, oracle_nondegenerate

    m = two_cell_instance()
    if not (oracle_44(m) and oracle_nondegenerate(m, True)):
        return False, "the instance does not satisfy Assumptions 4.4 and C.5 (oracles)", {}
    ok, why, c = check_claim_c15(m, paper_prompt(m), words(m.num_tokens, 2))
    return ok, why + ("; the instance satisfies Assumptions 4.4 and C.5 (oracles)" if ok else ""), c


# ------------------------------------------------------------------ the rows

ORACLE_TEXT = {
    "3.1": "sympy rank of W",
    "3.2": "reachability sets of A's support graph (Wielandt's bound) and P[H_0] > 0",
    "3.5": "every B: H* = one-step reach of B, supp(mu) ⊆ H*, sympy rank of W[:, H*]",
    "4.2": "every nonempty S*: sympy ranks of U and [U | V]",
    "4.4": "reachability sets of the syntax chain and A P[H_0] = P[H_0] in Fractions",
    "4.5": "every nonempty S*, m in supp(mu) on the target cell: sympy ranks",
    "C.5": "every nonempty S*, m in supp(mu) on the target cell, every m elsewhere: sympy ranks",
}


def _assumption(aid: str):
    how = f"the toolkit's checker vs an independent oracle ({ORACLE_TEXT[aid]})"
    scope = {"instances": 24, "made": f"seeded random family (seed 0): {FAMILIES[aid][0]}",
             "needs": "the assumption holding on some instances and failing on others"}
    return (f"Assumption {aid}", how, scope, lambda: check_assumption(aid))


def _theorem(tid: str):
    sym = tid in ("3.3", "3.6")
    how = ("verify theorem (exact) on generated instances with exact ties; F*"
           + (" and the head's output" if sym else "") + " re-derived by brute force"
           + ("; symbolic head identity (head-" + tid + ")" if sym else ""))
    from .theorems import BRUTE_LENGTH, symbolic_head_scope, tool_sequences

    scope = {"instances": len(SEEDS), "made": f"generated to satisfy the theorem's assumptions, seeds "
                                              f"{', '.join(map(str, SEEDS))}, each with an exact tie mu . p = 0",
             "sizes": THEOREM_SIZES[tid] or "the generator's defaults (see counts)",
             "sequences": f"{tool_sequences(tid)[0]}; brute force: the tie and every x of length "
                          f"<= {BRUTE_LENGTH[tid]}" + ("" if sym else " that is in R")}
    if sym:
        scope.update({k: v for k, v in SYMBOLIC_SCOPE.items() if k != "instances"})
        scope["symbolic_sizes"] = symbolic_head_scope(tid)
    return (f"Theorem {tid}", how, scope, lambda: check_theorem(tid))


SYMBOLIC_WHAT = {
    "prop-3.4": "with U = X_1, Z = H_1, V = X_{2:T+1} of the HMM (the case Theorem 3.3 uses): "
                "P[X_1 | X_{2:T+1} = x] = G_1(x') = W P[H_1 | X_{2:T+1} = x]; not for arbitrary U, V, Z",
}
"""What a symbolic row proves where it is narrower than the statement's wording."""


def _a1_steps() -> list[int]:
    import inspect

    from ...symbolic.proofs import claim_a1

    return list(inspect.signature(claim_a1).parameters["steps"].default)


def _symbolic(row: str, name: str):
    scope = dict(SYMBOLIC_SCOPE)
    if name == "claim-A.1":                  # the claim is for every timestep i; the proof runs these
        scope["steps"] = f"i = {', '.join(map(str, _a1_steps()))} only (the claim: every i >= 1)"
    how = f"symbolic (sympy): identity of rational functions ({name})"
    if name in SYMBOLIC_WHAT:
        how += ", " + SYMBOLIC_WHAT[name]
    return (row, how, scope, lambda: check_symbolic(name))


PATHS = "brute-force sums over hidden paths vs message passing, exact"
MEM = "brute-force sums over memories and hidden paths vs message passing on the lifted chain, exact"
SUMS = "brute-force sums over memories and hidden paths on both sides, exact"
TWO_CELLS = ("two-cell instance: N = 2, |M| = 3, |S| = 1 (|H| = 2), |X| = 5, j* = 1, joint pM, stationary "
             "start, mu = (1, -1, 0)")
ONE_CELL = "Theorem 4.6 generator (seed 0: one cell, |M| = 3, |S| = 2, |X| = 10), mu's last entry set to 0"


def _ind(where: str, what: str = "a proof step inside "):
    return ("indirect: " + what + where, {"instances": "none of its own", "covered_by": where}, None)


STATEMENTS: list[tuple[str, str, dict, Callable | None]] = [
    _assumption("3.1"),
    _assumption("3.2"),
    _theorem("3.3"),
    _symbolic("Proposition 3.4", "prop-3.4"),
    _assumption("3.5"),
    _theorem("3.6"),
    ("Example 4.1", *_ind("the memory HMM family of verify theorem 4.3 (generators)", "an example of ")),
    _assumption("4.2"),
    _theorem("4.3"),
    _assumption("4.4"),
    _assumption("4.5"),
    _theorem("4.6"),
    _symbolic("Claim A.1", "claim-A.1"),
    ("Lemma B.1", PATHS + ": the prompt is a fake token with emission u; tau_i at every position, "
     "Gbar_i = P[Xhat_i | Xhat_-i] where ||tau|| > 0 and 0 where ||tau|| = 0",
     {"instances": 3, "made": "; ".join(name for name, _, _ in B1_CASES),
      "sequences": "every x of length 1..3", "positions": "every position 1..T+2, the prompt's included",
      "convention": "position 2 is the placeholder ∅, embedded as the all-ones vector (X_2 unobserved), as in "
                    "every check of Theorem 3.6; the lemma's values at the other positions depend on that choice"},
     _b1),
    _symbolic("Lemma B.2", "lemma-B.2"),
    ("Proposition C.1", *_ind("verify theorem 4.3 (the attention head's identity)")),
    ("Lemma C.2", *_ind("verify theorem 4.3")),
    ("Claim C.3", *_ind("verify theorem 4.3")),
    ("Lemma C.4", *_ind("verify theorem 4.3")),
    _assumption("C.5"),
    _theorem("C.6"),
    ("Lemma C.7", MEM + ": tau_i, phi(tau_i) with its factor |M|^-(N-1), and Gbar_i at every position, "
     "both halves", {"instances": 1, "made": TWO_CELLS, "cells": 2,
                     "prompts": "(C.6) and (k mod 3)/2 over the 18 lifted states",
                     "sequences": "every x of length 1..2", "positions": "every position 1..T+1"}, _c7),
    ("Proposition C.8", SUMS + ": stationary start, P[M, H_i, X_{i+1:i+t}] = P[M, H_0, X_{1:t}]",
     {"instances": 1, "made": TWO_CELLS, "cells": 2, "sequences": "every x of length 1..2", "shifts": "i = 1, 2"},
     _c8),
    ("Lemma C.9", *_ind("verify theorem 4.6 / C.6")),
    ("Claim C.10", *_ind("verify theorem 4.6 / C.6")),
    ("Proposition C.11", SUMS + ": with the prompt (C.6), supp P[M_j* | Xhat_-i] ⊆ supp(mu) at every later position",
     {"instances": 2, "made": f"{ONE_CELL}; {TWO_CELLS}", "cells": "1 and 2",
      "sequences": "every x of length 1..2", "positions": "every position 2..T+1 with Pr(Xhat_-i) > 0"},
     _both(check_prop_c11)),
    ("Claim C.12", *_ind("verify theorem 4.6 / C.6")),
    ("Lemma C.13", *_ind("verify theorem 4.6 / C.6")),
    ("Claim C.14", SUMS + ": mu . P[M_j* | Xhat] = mu . P[M_j* | X] / Pr(z~ | rest) where Pr(xhat) > 0",
     {"instances": 2, "made": f"{ONE_CELL}; {TWO_CELLS}", "cells": "1 and 2",
      "sequences": "every x of length 1..2 with Pr(xhat) > 0"}, _both(check_claim_c14)),
    ("Claim C.15", MEM + ": x with Pr(x) > 0 and Pr(xhat) = 0 has mu . P[M_j* | x] = 0; Gbar_i = 0 "
     "wherever Pr(Xhat_-i) = 0",
     {"instances": 1, "made": TWO_CELLS + " (token 2 only from m_(j*) = 2, outside supp(mu))", "cells": 2,
      "sequences": "every x of length 1..2; the claim's sequences are counted (vacuous if none)",
      "positions": "every position 2..T+1"}, _c15),
]
"""``(statement, how it is checked, scope, check)``; ``check()`` returns ``(ok, detail, counts)``,
None for indirect."""


def _result(name: str, ok: bool, detail: str) -> str:
    if ok:
        return "agrees" if name.startswith("Assumption") else "holds"
    return "vacuous" if "vacuous" in detail else "fails"


def run_statements() -> list[dict]:
    """Run every check; one row per statement: ``statement``, ``how``, ``scope``, ``result``
    (one of :data:`RESULTS`), ``detail``, ``counts``."""
    rows = []
    for name, how, scope, check in STATEMENTS:
        if check is None:
            rows.append({"statement": name, "how": how, "scope": scope, "result": "indirect", "detail": None,
                         "counts": None})
            continue
        ok, detail, counts = check()
        rows.append({"statement": name, "how": how, "scope": scope, "result": _result(name, ok, detail),
                     "detail": detail, "counts": _plain(counts)})
    return rows


def _plain(value):
    """JSON-safe counts (integer dict keys as strings)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
