"""Theorem rows and symbolic rows of ``verify statements``.

A theorem row runs ``verify theorem`` (exact) on several generated instances, each with an exact
tie ``mu . p = 0`` among its sequences, and re-derives ``F*`` (and, for the vanilla theorems, the
head's output ``b . Gbar``) by brute-force path sums on every short sequence, independently of
the message-passing code; Theorems 3.3 and 3.6 also run the symbolic head identity. Symbolic
rows run :mod:`headprompt.verify.symbolic.proofs` at ``|H| = |X| = 3, T = 2`` and at
``|H| = |X| = 2, T = 3``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ....models.hmm.values import HMM
from ...api import run_theorem
from ...reports.requests import TheoremRequest
from .paths import memory_path_joint, ones, path_joint, words

__all__ = ["THEOREM_SIZES", "SEEDS", "SYMBOLIC_SIZES", "TOOL_SEQUENCES", "tool_sequences", "symbolic_head_scope",
           "run_instances", "check_run", "check_vanilla_decisions",
           "check_memory_decisions", "check_theorem", "check_symbolic"]

SEEDS = (0, 1, 2)
RUN = {"samples": 100, "length": 4}
THEOREM_SIZES = {"3.3": {"hidden": 3, "vocab": 3}, "3.6": {"hidden": 4, "vocab": 3},
                 "4.3": {}, "4.6": {}, "C.6": {}}
"""Sizes of the generated instances (memory theorems: the generator's defaults)."""
BRUTE_LENGTH = {"3.3": 3, "3.6": 2, "4.3": 2, "4.6": 2, "C.6": 2}
"""Every sequence up to this length (and the tie sequence) is re-derived by brute force."""
TOOL_SEQUENCES = {
    "vanilla": ("the tool: 100 sampled of length 4, every x of length <= 2, 200 near-threshold ones of length 4, "
                "exact near-ties at lengths 1..4 and the tie (lengths 1..4)", [1, 2, 3, 4]),
    "memory": ("the tool: 100 sampled of length 4, every x of length <= 2 and the tie (lengths 1, 2 and 4; "
               "none of length 3)", [1, 2, 4]),
}
"""What ``verify theorem`` checks with :data:`RUN` (vanilla: samples, every short sequence,
near-threshold and near-tie sequences; memory: samples and every short sequence), and the lengths
that set has; :func:`check_theorem` fails when a report's lengths differ from the scope's."""


def tool_sequences(tid: str) -> tuple[str, list[int]]:
    """``(scope text, lengths)`` of the sequences ``verify theorem tid`` checks in these rows."""
    return TOOL_SEQUENCES["vanilla" if tid in ("3.3", "3.6") else "memory"]


def symbolic_head_scope(tid: str) -> str:
    """Where the symbolic head identity of ``tid`` is proved: 3.3 fully symbolic at
    :data:`SYMBOLIC_SIZES`; 3.6's ``Gbar_2`` identity there too, but its head identity only on
    :func:`~headprompt.verify.symbolic.sides.structured_case` (one support pattern of ``A``,
    fixed ``H*`` and ``B``), whose ``|H|`` is not the one of :data:`SYMBOLIC_SIZES`."""
    sizes = ", ".join(f"({h}, {x}, {t})" for h, x, t in SYMBOLIC_SIZES)
    if tid != "3.6":
        return f"(|H|, |X|, T) = {sizes}: every x of length 1..T, all parameters symbolic"
    from ...symbolic.sides import structured_case

    cases = [structured_case(x) | {"length": t} for _, x, t in SYMBOLIC_SIZES]
    shown = ", ".join(f"({c['hidden']}, {c['vocab']}, {c['length']})" for c in cases)
    return (f"Gbar_2(ehat(x)) = r_x W diag(1/P[H_0]) (c ⊙ P[H_0 | x]): (|H|, |X|, T) = {sizes}, every x of "
            f"length 1..T, all parameters symbolic; the head identity b . Gbar_2 = r_x mu . P[H_0 | x]: only the "
            f"structured case (|H|, |X|, T) = {shown}, H* = {{0..|H|-2}}, B = {{0}}, A[|H|-1, 0] = 0, u = 1_B, "
            f"mu supported on H*, the other parameters symbolic")
SYMBOLIC_SIZES = ((3, 3, 2), (2, 2, 3))
"""``(|H|, |X|, T)``: size 3 in the states and tokens, and in the length; ``(3, 3, 3)`` needs
22,113 brute-force path terms, over the symbolic limit of 3,000 (minutes of sympy time)."""


def run_instances(tid: str, seeds=SEEDS) -> list:
    """``verify theorem tid`` (exact) on one generated instance per seed."""
    return [run_theorem(TheoremRequest.from_options(tid, **THEOREM_SIZES[tid], seed=s, progress=False, **RUN))
            for s in seeds]


def check_run(data: dict) -> tuple[bool, str]:
    """One ``verify theorem`` report: verified, not vacuous, and at least one exact tie among the
    sequences that count."""
    seq = data["sequences"]
    if data["verdict"] != "verified":
        return False, f"verdict {data['verdict']}"
    if data.get("vacuous") or not seq.get("in_R", seq["checked"]):
        return False, "vacuous: a label never occurs (or no sequence in R)"
    if not seq.get("ties"):
        return False, "vacuous on ties: no tie mu . p = 0 among the checked sequences"
    return True, f"verified on {seq['checked']} sequences ({seq.get('in_R', seq['checked'])} counting, {seq['ties']} ties)"


def _ge(value) -> int:
    return int(value >= 0)


def check_vanilla_decisions(hmm: HMM, tid: str, b, u, sequences, *, rule: Callable = _ge) -> tuple[bool, str, dict]:
    """On every possible sequence: ``F*(x) = rule(mu . P[H_0 | x])`` (default ``>= 0``, the
    paper's tie rule) and the head's ``1(b . Gbar >= 0)`` (``G_1((∅, x))`` for 3.3,
    ``Gbar_2(u, e(∅), e(x))`` for 3.6), both by brute-force path sums, agree."""
    W = [list(r) for r in hmm.W]
    n = hmm.num_states
    counts = {"sequences": 0, "ties": 0, "labels": {0: 0, 1: 0}}
    for seq in sequences:
        cols = [W[z] for z in seq]
        post = path_joint(hmm.A, W, hmm.pi0, cols, keep=0)
        if sum(post) == 0:
            continue
        counts["sequences"] += 1
        margin = sum(Fraction(m) * p for m, p in zip(hmm.mu, post))
        counts["ties"] += margin == 0
        want = rule(margin)
        counts["labels"][want] += 1
        emb, keep = ([ones(n)] + cols, 1) if tid == "3.3" else ([list(u), ones(n)] + cols, 2)
        tau = path_joint(hmm.A, W, hmm.pi0, emb, keep=keep)
        head = sum(Fraction(bx) * sum(W[x][h] * tau[h] for h in range(n)) for x, bx in enumerate(b))
        if _ge(head) != want:
            return False, f"x = {list(seq)}: F* = {want} (mu . Pr(H_0, x) = {margin}) but the head gives {_ge(head)}", counts
    if not counts["sequences"]:
        return False, "vacuous: no possible sequence among those given", counts
    return True, "", counts


def check_memory_decisions(mhmm, decisions, *, rule: Callable = _ge) -> tuple[bool, str, dict]:
    """For every decision on a sequence in ``R``: ``F*(x) = rule(mu . P[M_j* | x])`` by
    brute-force sums over memories and paths equals the tool's ``F*`` and its head's output."""
    import itertools

    configs = list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))
    counts = {"sequences": 0, "ties": 0}
    for d in decisions:
        if not (d.possible and d.in_R):
            continue
        counts["sequences"] += 1
        parts = memory_path_joint(mhmm, [("token", z) for z in d.sequence], by_config=True)
        margin = sum(Fraction(mhmm.mu[ms[mhmm.target_cell]]) * p for ms, p in zip(configs, parts))
        counts["ties"] += margin == 0
        want = rule(margin)
        if want != d.expected or want != d.got:
            return False, (f"x = {list(d.sequence)}: F* by brute force = {want}, the tool's F* = {d.expected}, "
                           f"its head = {d.got}"), counts
    if not counts["sequences"]:
        return False, "vacuous: no sequence in R among those given", counts
    return True, "", counts


def _brute(tid: str, report, rule: Callable) -> tuple[bool, str, dict]:
    model, witness = report.details["model"], report.details["witness"]
    tie = tuple(report.data["instance"]["tie_sequence"])
    seqs = [tie] + [s for s in words(model.num_tokens, BRUTE_LENGTH[tid]) if s != tie]
    if tid in ("3.3", "3.6"):
        return check_vanilla_decisions(model, tid, witness.b, getattr(witness, "u", None), seqs, rule=rule)
    from ...checks.memory.check import check_sequences

    res = check_sequences(model, witness, report.details["H_star"], seqs, keep=True)
    return check_memory_decisions(model, res.decisions, rule=rule)


def check_theorem(tid: str, *, seeds=SEEDS, rule: Callable = _ge, symbolic: bool = True) -> tuple[bool, str, dict]:
    """Theorem ``tid`` on one generated instance per seed: the tool's verdict (:func:`check_run`),
    then ``F*`` (and for 3.3/3.6 the head) by brute force on the tie sequence and every sequence
    up to :data:`BRUTE_LENGTH`, each instance needing a brute-force tie; for 3.3 and 3.6 the
    symbolic head identity at :data:`SYMBOLIC_SIZES` too."""
    counts = {"instances": 0, "sequences_tool": 0, "sequences_brute": 0, "ties_brute": 0}
    if not seeds:
        return False, "vacuous: no instances, nothing was checked", counts
    for seed, report in zip(seeds, run_instances(tid, seeds)):
        ok, why = check_run(report.data)
        if not ok:
            return False, f"seed {seed}: {why}", counts
        ok, why, c = _brute(tid, report, rule)
        if not ok:
            return False, f"seed {seed}: {why}", counts
        if not c["ties"]:
            return False, f"seed {seed}: no tie mu . p = 0 among the brute-force sequences", counts
        lengths = report.data["sequences"].get("lengths")
        if lengths != tool_sequences(tid)[1]:
            return False, (f"seed {seed}: the tool checked lengths {lengths}, but the row's scope says "
                           f"{tool_sequences(tid)[1]}"), counts
        counts["instances"] += 1
        counts["lengths_tool"] = lengths
        inst = report.data["instance"]
        counts.setdefault("sizes", {k: inst[k] for k in ("cells", "memory", "syntax_states", "hidden", "vocab")
                                    if k in inst})
        counts["sequences_tool"] += report.data["sequences"].get("in_R", report.data["sequences"]["checked"])
        counts["sequences_brute"] += c["sequences"]
        counts["ties_brute"] += c["ties"]
    detail = (f"verified on {counts['instances']} instances ({counts['sequences_tool']} sequences counting); "
              f"F*{' and the head' if tid in ('3.3', '3.6') else ''} re-derived by brute force on "
              f"{counts['sequences_brute']} sequences, {counts['ties_brute']} of them ties")
    if symbolic and tid in ("3.3", "3.6"):
        ok, why, c = check_symbolic("head-" + tid)
        counts["symbolic"] = c
        if not ok:
            return False, why, counts
        detail += "; " + why
        if tid == "3.6":
            detail += " (its head identity b . Gbar_2 only on the structured case the scope names)"
    return True, detail, counts


def check_symbolic(name: str, sizes=SYMBOLIC_SIZES) -> tuple[bool, str, dict]:
    """``verify symbolic name`` at each ``(|H|, |X|, T)`` of ``sizes``."""
    from ...symbolic.proofs import prove_all

    counts = {"sizes": [list(s) for s in sizes], "sequences": 0}
    if not sizes:
        return False, "vacuous: no sizes, nothing was proved", counts
    for h, x, t in sizes:
        out = prove_all(h, x, t, [name])[0]
        if not out["holds"]:
            return False, f"{name} NOT proved at |H| = {h}, |X| = {x}, T = {t}: {out['failure'] or out['checks']}", counts
        counts["sequences"] += out["sequences_checked"]
    shown = ", ".join(f"({h}, {x}, {t})" for h, x, t in sizes)
    return True, f"{name} proved symbolically at (|H|, |X|, T) = {shown}", counts

