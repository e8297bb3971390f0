"""Orchestration and rendering of ``verify theorem 4.3 | 4.6 | C.6`` and ``verify
counterexample`` for memory-augmented HMMs (SPEC section 4)."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from ...constructions.memory import AttentionWitness, theorem_43_witness, theorem_c6_witness
from ...models.exceptions import ConstructionError, InputError
from ...models.generate.memory import break_nondegeneracy, generate_instance
from ...models.hmm.values import MemoryHMM
from ...models.hmm.files import save_instance
from ...models.hmm.limits import check_lifted_states
from ...models.hmm.rational import format_array
from ...models.hmm.task import is_multiclass, num_classes
from ...models.generate.sampling import sample

from ..checks.memory import assumptions as masm
from ..evidence import sequences as seqs
from ..checks.memory.check import check_sequences, cross_check, decide_direct, identity_check
from .render import lengths_checked, lengths_text, progress_bar
from .requests import DETAILS
from ..runtime.cost import check_work
from .instances import instance_witness_note, load_task_instance, resolve_witness
from .verdicts import label_counts, settle_verdict
from .rationalized import rationalized_source
from .conversion import judge_conversion
from ..checks.multiclass import multiclass_mode

__all__ = ["theorem", "render", "counterexample", "generate_instance", "read_witness", "zero_task_witness",
           "break_nondegeneracy", "sequence_set"]

DEFAULTS = {"memory": 3, "hidden": 3, "cells": {"4.3": 2, "4.6": 1, "C.6": 2}}


# ---------------------------------------------------------------- generated instances

# ---------------------------------------------------------------- instance and witness input

def _sizes(args, tid: str) -> tuple[int, int, int]:
    memory = args.memory if args.memory is not None else DEFAULTS["memory"]
    cells = args.cells if args.cells is not None else DEFAULTS["cells"][tid]
    syntax = args.hidden if args.hidden is not None else DEFAULTS["hidden"]
    typed = [f"--{name} {v}" for name, v in (("memory", args.memory), ("cells", args.cells), ("hidden", args.hidden))
             if v is not None]
    left = [f"--{name} {v}" for name, v, given in (("memory", memory, args.memory), ("cells", cells, args.cells),
                                                   ("hidden", syntax, args.hidden)) if given is None]
    given = " ".join(typed) + (f" (with the default {', '.join(left)})" if left and typed else "")
    check_lifted_states(memory, cells, syntax, mode="exact", where="verify theorem " + tid,
                        given=given or f"the defaults {', '.join(left)}", float_hint=False)
    return memory, cells, syntax


def load_or_generate(args, tid: str) -> tuple[MemoryHMM, dict]:
    """The instance to check and the ``instance`` block of the report."""
    given = getattr(args, "model", None)
    if args.hmm or given is not None:
        source, conversion = rationalized_source(args.hmm or given, getattr(args, "rationalize", None),
                                                 mode=getattr(args, "mode", None))
        model = load_task_instance(source, tid, memory=True)
        if tid == "4.6" and model.cells != 1:
            raise InputError(f"{args.hmm or 'the instance'}: Theorem 4.6 is about one memory cell; the "
                             f"instance has {model.cells} (use C.6)")
        info = {"source": args.hmm or "object"}
        if conversion is not None:
            info["rationalized"] = conversion.to_dict()
    else:
        memory, cells, syntax = _sizes(args, tid)
        classes = getattr(args, "classes", None)
        try:
            model, gen = generate_instance(tid, memory, cells, syntax, args.vocab, rng=np.random.default_rng(args.seed),
                                           classes=classes)
        except InputError as exc:              # the generator names flags (--cells 2): in Python, cells=2
            if not getattr(args, "python", False):
                raise
            text = re.sub(r"--([a-z]+) (\S+):", r"\1=\2:", str(exc))
            raise type(exc)(re.sub(r"--([a-z]+)\b", r"\1=", text)) from None
        info = {"source": "generated", "how": gen["recipe"], "tie_sequence": gen["tie_sequence"],
                "label_shares": gen["label_shares"], **({"classes": classes} if classes else {})}
    return model, {"cells": model.cells, "memory": model.memory_values, "syntax_states": model.syntax_states,
                   "hidden": model.num_states, "vocab": model.num_tokens, "target_cell": model.target_cell,
                   "lifted_states": model.lift().num_states, "seed": args.seed, **info}


def zero_task_witness(model: MemoryHMM, tid: str) -> AttentionWitness:
    """The witness for the task ``mu = 0`` (README, "mu = 0"): ``F* = 1(0 >= 0) = 1`` on every
    sequence, and the construction's head, whose value weights are proportional to ``mu``,
    is the zero head (zero prompt, query, keys and values), whose output ``1(0 >= 0) = 1``
    agrees everywhere. The report then says the check is vacuous (one label)."""
    n, X, M = model.num_states, model.num_tokens, model.memory_values
    zeros = lambda *shape: np.full(shape, Fraction(0), dtype=object)      # noqa: E731
    return AttentionWitness(q=zeros(n + 1), Theta_K=zeros(n + 1, X), beta=zeros(1, n + 1),
                            Theta_V=zeros(M * n, X), b=zeros(M * n), u=zeros(model.lift().num_states),
                            theorem=tid, notes=("mu = 0: F* = 1 on every sequence; the construction's head is "
                                                "proportional to mu, so it is the zero head (F = 1(0 >= 0) = 1)",))


def read_witness(given, tid: str, model: MemoryHMM) -> tuple[AttentionWitness, list[int] | None]:
    """A witness file (SPEC section 3), a dict or an :class:`AttentionWitness`, validated
    against the instance; an optional ``"H_star"`` (flattened states) fixes the ``H*`` of ``R``
    (:func:`~headprompt.verify.reports.instances.resolve_witness`, the one reader)."""
    return resolve_witness(given, tid, model)


def sequence_set(args, model: MemoryHMM, extra=()) -> tuple[list[tuple[int, ...]], str, int]:
    """Exhaustive sequences, or samples from the model plus every sequence of length <= 2."""
    if args.exhaustive:
        length = 4 if args.length is None else args.length
        return seqs.exhaustive(model.num_tokens, length), "exhaustive", length
    length = 8 if args.length is None else args.length
    rng = np.random.default_rng(args.seed + 1)
    pool = []
    if args.samples:
        tokens, _, _ = sample(model.to_float(), args.samples, length, rng=rng)
        pool = [tuple(int(z) for z in row) for row in tokens]
    short = seqs.exhaustive(model.num_tokens, min(2, length)) if model.num_tokens ** 2 <= 10_000 else []
    return list(dict.fromkeys(pool + short + [tuple(e) for e in extra])), "sampled", length


# ---------------------------------------------------------------- the report

def _verify_evidence(model: MemoryHMM, evidence: list, memory_subset) -> bool:
    """Recheck each singleton certificate exactly from the instance."""
    from ...constructions.span import relevant_columns

    for e in evidence:
        U_labels, rest = relevant_columns(model, [e["s"]], memory_subset)
        col = lambda mh: model.W[:, mh[0], mh[1]]                      # noqa: E731
        if e["kind"] == "dependent":
            v = [Fraction(x) for x in e["null_vector"]]
            total = sum((c * col(mh) for c, mh in zip(v, U_labels)), np.zeros(model.num_tokens, dtype=object))
            if any(v) is False or any(t != 0 for t in total):
                return False
        elif e["kind"] == "shared":
            a = [Fraction(x) for x in e["a"]]
            c = [Fraction(x) for x in e["c"]]
            left = sum((x * col(mh) for x, mh in zip(a, U_labels)), np.zeros(model.num_tokens, dtype=object))
            right = sum((x * col(tuple(mh)) for x, mh in zip(c, e["V_columns"])),
                        np.zeros(model.num_tokens, dtype=object))
            if any(l != r for l, r in zip(left, right)) or all(l == 0 for l in left):
                return False
            if any(tuple(mh) not in set(rest) for mh in e["V_columns"]):
                return False
        else:
            return False
    return True


def construction_evidence(model: MemoryHMM, tid: str) -> dict:
    """What breaks: "the construction" (the paper's builder, or its recipe with ``S* = {0}`` and
    pseudo-inverses when no ``S*`` exists; ``constructions/relaxed.py``) checked exactly on every
    sequence of length <= 3 (fewer when there would be more than 200), counting only ``R``.
    Attention heads have no certificate that *no* head works: this is about the construction."""
    from ..evidence.construction import construction_check

    L = 3
    while L > 1 and sum(model.num_tokens ** k for k in range(1, L + 1)) > 200:
        L -= 1
    chk = construction_check(model, tid, seqs.exhaustive(model.num_tokens, L))
    d = chk["disagreement"]
    what = (f"{chk['how']}: disagrees with F* on {d['sequence']} in R (F* = {d['expected']}, F = {d['got']}; "
            "checked exactly)" if d is not None else
            f"{chk['how']}: agrees with F* on all {chk['in_R']} sequences in R of length <= {L}")
    return {"how": chk["how"], "H_star": chk["H_star"], "checked": chk["checked"], "in_R": chk["in_R"],
            "agree": chk["agree"], "labels": chk["labels"], "disagreement": d, "what": what,
            "scope": "evidence about the construction only (no certificate exists that no attention head works)"}


def _assumption_counterexample(model: MemoryHMM, tid: str, failed: dict) -> dict:
    out = _failed_assumption_evidence(model, tid, failed)
    if is_multiclass(model.mu):             # the relaxed construction's check is binary
        out["construction"] = {"what": f"the recipe applied anyway is checked for binary tasks only; not run for "
                                       f"this {num_classes(model.mu)}-class task", "disagreement": None}
        return out
    try:
        out["construction"] = construction_evidence(model, tid)
    except ConstructionError as exc:
        out["construction"] = {"what": f"the construction cannot be carried out: {exc}", "disagreement": None}
    if out["kind"] == "construction-breaks" and out["construction"].get("disagreement") is None \
            and out["construction"].get("checked"):
        out["kind"] = "construction-undefined"      # nothing the recipe applied anyway gets wrong
    return out


def _failed_assumption_evidence(model: MemoryHMM, tid: str, failed: dict) -> dict:
    name = next((k for k in ("4.2", "4.5", "C.5") if k in failed), None)
    if name is not None:
        ev = failed[name].get("evidence")
        if ev:
            subset = None if name == "4.2" else sorted({m for row in np.atleast_2d(model.mu) for m in range(model.memory_values)
                                                           if row[m] != 0})
            ok = _verify_evidence(model, ev, subset)
            return {"kind": "no-recoverable-states", "what": failed[name]["why"], "evidence": ev,
                    "checked": ok,
                    "note": "each syntax state s of the target cell carries an exact certificate that S* = {s} "
                            "fails; a failing s makes every S* containing it fail, so no H* exists and the "
                            "construction of Appendix C cannot start as written (see 'construction' for the "
                            "recipe applied anyway)"}
        return {"kind": "construction-breaks", "what": failed[name]["why"]}
    other = next(iter(failed))
    return {"kind": "construction-breaks", "what": failed[other]["why"],
            "evidence": {k: v for k, v in failed[other].items() if k not in ("holds", "why")}}


def theorem(args) -> dict:
    """The report dict of ``verify theorem 4.3|4.6|C.6`` (SPEC section 4)."""
    tid = args.id
    model, instance = load_or_generate(args, tid)
    file_witness_note = instance_witness_note(args, tid, model)    # a malformed one: exit 2 before the work
    mode, mode_note = check_work(args, model)
    model.check_task_range()             # every mode samples and bounds with a float form of mu
    if mode == "float":                  # float arithmetic cannot hold 3e500, and 1e-400 would become 0
        model.check_float64()
    if is_multiclass(model.mu):
        mode, mode_note = multiclass_mode(args, model, mode, mode_note)
    results = masm.check_all(model, tid)
    converted = judge_conversion(args, tid, model, results, rerun=theorem)
    failed = {k: v for k, v in results.items() if not v["holds"]}
    report = {"theorem": tid, "verdict": None, "mode": mode, **({"mode_note": mode_note} if mode_note else {}),
              "certified": mode != "float",
              "instance": instance, "assumptions": results, "witness": None, "identity": None,
              "sequences": None, "labels": None, "vacuous": None, "counterexample": None,
              **({"conversion": converted} if converted is not None else {})}
    nondeg = results.get("4.2") or results.get("4.5") or results.get("C.5")
    H_star = nondeg.get("H_star") if nondeg and nondeg["holds"] else None
    witness, construction_error = None, None
    if args.witness is not None:
        witness, given_H = read_witness(args.witness, tid, model)
        H_star = given_H if given_H is not None else H_star
        if H_star is None:
            raise InputError(f"{args.witness}: R (eq. 4.3) needs a set H*, and the non-degeneracy assumption "
                             "finds none on this instance; add \"H_star\" (flattened hidden states) to the witness")
    elif not failed and tid != "4.3" and all(v == 0 for v in np.ravel(model.mu)):
        witness = zero_task_witness(model, tid)
    elif not failed:
        try:
            S_star = nondeg["S_star"]
            witness = (theorem_43_witness(model, S_star) if tid == "4.3"
                       else theorem_c6_witness(model, S_star, theorem=tid))
        except ConstructionError as exc:
            construction_error = str(exc)
    if witness is not None:
        report["witness"] = {k: format_array(np.asarray(v, dtype=object)) for k, v in witness.as_dict().items()
                             if k != "theorem"}
        report["witness"]["H_star"] = list(H_star)
        if witness.notes:
            report["witness"]["notes"] = list(witness.notes)
        report["identity"] = identity_check(model, witness, H_star)
        extra = [instance["tie_sequence"]] if instance.get("tie_sequence") else []
        sequences, how, length = sequence_set(args, model, extra)
        bar, tick = progress_bar(len(sequences), f"checking Theorem {tid}", quiet=not getattr(args, "progress", True))
        res = check_sequences(model, witness, H_star, sequences, mode=mode, progress=tick, keep=True)
        if bar is not None:
            bar.close()
        report.update(label_counts([d.expected for d in res.decisions if d.in_R], num_classes(model.mu)))
        res.decisions = []
        if mode != "float":
            cross_check(model, witness, H_star, sequences, count=10, seed=args.seed)
        report["sequences"] = {"checked": res.checked, "agree": res.agree, "in_R": res.in_R,
                               "length": length, "lengths": lengths_checked(sequences), "how": how, "outside_R": res.outside_R,
                               "outside_support": res.outside_support, "ties": res.ties,
                               "attended_is_Z": res.attended_is_Z,
                               "share_in_R": round(res.in_R / res.checked, 4) if res.checked else 0.0,
                               "certified": mode != "float",
                               "verdicts_by": "float (uncertified)" if mode == "float" else "exact",
                               "decided_by": dict(res.decided_by)}
        if mode == "certified":
            report["sequences"]["verdicts_by"] = ("a priori rounding-error bound, exact where it "
                                                  "cannot decide")
        if res.first_disagreement is not None:
            d = res.first_disagreement
            report["counterexample"] = {"kind": "disagreement", "sequence": list(d.sequence),
                                        "expected": d.expected, "got": d.got,
                                        "attended": list(d.attended), "Z": list(d.Z)}
            if mode == "float":                  # say whether the float disagreement is real
                e = decide_direct(model, witness, H_star, d.sequence)
                report["counterexample"]["exact_check"] = {
                    "expected": e.expected, "got": e.got, "in_R": e.in_R,
                    "disagrees": bool(e.in_R and e.expected != e.got)}
    failed = settle_verdict(report, witness_given=args.witness is not None, failed=failed,
                            construction_error=construction_error)
    if report["verdict"] == "assumptions-fail":
        report["counterexample"] = _assumption_counterexample(model, tid, failed)
    if args.out:
        wd = None
        if witness is not None:
            wd = witness.as_dict()
            wd["H_star"] = list(H_star)
        save_instance(model, args.out, witness=wd, meta={"theorem": tid, "instance": instance})
    # what TheoremReport.to_frame needs; verify.api.run_theorem takes it out of the dict
    report[DETAILS] = {"model": model, "witness": witness, "H_star": H_star,
                       "sequences": sequences if witness is not None else [],
                       "instance_witness_note": file_witness_note}
    return report


def counterexample(args) -> dict:
    """``verify counterexample 4.3|4.6|C.6``: an instance whose non-degeneracy assumption
    fails (generated: the friendly instance with the target cell made degenerate), with exact
    evidence that no ``H*`` exists."""
    tid = args.id
    if args.hmm:
        model, instance = load_or_generate(args, tid)
    else:
        memory, cells, syntax = _sizes(args, tid)
        model, gen = generate_instance(tid, memory, cells, syntax, args.vocab, rng=np.random.default_rng(args.seed))
        model, how = break_nondegeneracy(model, tid != "4.3")
        instance = {"cells": model.cells, "memory": model.memory_values, "syntax_states": model.syntax_states,
                    "vocab": model.num_tokens, "seed": args.seed, "source": "generated",
                    "how": gen["recipe"] + "; then " + how}
    results = masm.check_all(model, tid)
    failed = {k: v for k, v in results.items() if not v["holds"]}
    out = {"theorem": tid, "instance": instance, "assumptions": results, "failed": sorted(failed),
           "counterexample": _assumption_counterexample(model, tid, failed) if failed else None}
    if getattr(args, "out", None):
        save_instance(model, args.out, meta={"theorem": tid, "instance": instance})
    return out


def render(result: dict) -> None:
    """A readable report of a memory-theorem result dict."""
    from .render import console, evidence_heading, evidence_name, print_header, print_labels

    out = console()
    print_header(out, result)
    w = result.get("witness")
    if w:
        shapes = {k: (f"{len(v)}x{len(v[0])}" if v and isinstance(v[0], list) else f"{len(v)}")
                  for k, v in w.items() if k not in ("H_star", "notes")}
        out.print("witness: " + "; ".join(f"{k} {s}" for k, s in shapes.items()) + f"; H* = {w['H_star']}")
        for note in w.get("notes", []):
            out.print(f"  note: {note}")
    if result.get("identity"):
        idt = result["identity"]
        out.print(f"identity: {'holds' if idt['holds'] else 'does not hold'}: {idt['what']}")
    s = result.get("sequences")
    if s:
        out.print(f"sequences ({s['how']}, {lengths_text(s)}): {s['checked']} possible, {s['in_R']} in R "
                  f"({100 * s['share_in_R']:.1f}%), {s['agree']}/{s['in_R']} agree with F* on R; "
                  f"{s['outside_R']} outside R not counted; "
                  + ("ties between the two best classes" if len(result.get("labels") or {}) > 2 else "ties mu.p = 0")
                  + f" in R: {s['ties']}; "
                  f"attended set = Z on {s['attended_is_Z']}"
                  + (f"; decided by: {', '.join(f'{k} {v}' for k, v in s['decided_by'].items())}"
                     if s.get("decided_by") else "")
                  + ("" if s["certified"] else " [uncertified float verdicts]"))
    print_labels(out, result)
    ce = result.get("counterexample")
    if ce:
        out.print(f"[bold]{evidence_heading(ce['kind'])}[/bold]: {evidence_name(ce['kind'])}")
        if ce["kind"] == "disagreement":
            out.print(f"  sequence {ce['sequence']}: F*(x) = {ce['expected']} but F(x) = {ce['got']} "
                      f"(attended {ce['attended']}, Z = {ce['Z']})")
            if "exact_check" in ce:
                ex = ce["exact_check"]
                out.print("  checked exactly: " + ("a real disagreement" if ex["disagrees"] else
                          f"NOT a disagreement (exact F*(x) = {ex['expected']}, F(x) = {ex['got']}); "
                          "the float verdict was wrong"))
        else:
            out.print(f"  {ce.get('what', '')}")
            for e in ce.get("evidence", []) if isinstance(ce.get("evidence"), list) else []:
                out.print(f"  s = {e['s']}: {e['kind']}: {e.get('what', '')}")
            if "checked" in ce:
                out.print(f"  certificates rechecked independently: {ce['checked']}")
            if isinstance(ce.get("construction"), dict):
                out.print(f"  construction: {ce['construction']['what']}")
    if "seconds" in result:
        out.print(f"time: {result['seconds']:.2f} s")
