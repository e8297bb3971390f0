"""Orchestration and rendering of ``verify theorem 3.3 | 3.6`` (and the shared renderer)."""

from __future__ import annotations

import random

import numpy as np

from ...constructions.vanilla import PromptWitness, theorem_33_witness, theorem_36_witness
from ...models.exceptions import ConstructionError, InputError, InternalError
from ...models.generate.generators import full_rank_hmm, prompt_friendly_hmm
from ...models.hmm.values import HMM
from ...models.hmm.rational import format_array, format_fraction
from ...models.hmm.task import is_multiclass, num_classes

from ..evidence import sequences as seqs
from ..checks.vanilla.check import check_sequences, decide_direct, identity_check
from .render import lengths_checked, lengths_text, progress_bar
from .requests import DETAILS
from ..runtime.cost import check_work
from .instances import instance_witness_note, load_task_instance, resolve_witness, save_checked_instance
from .verdicts import label_counts, settle_verdict
from .rationalized import rationalized_source
from .conversion import judge_conversion
from ..checks.multiclass import multiclass_mode
from ..checks.registry import check_assumptions
from ..evidence.robustness import robustness_block
from ..evidence.vanilla_failures import counterexample_for, given_prompt_evidence

__all__ = ["theorem", "load_or_generate", "read_witness", "render"]

CROSS_CHECKS = 30


def load_or_generate(args, theorem_id: str) -> tuple[HMM, dict]:
    """The instance to check, and the ``instance`` block of the report."""
    given = getattr(args, "model", None)
    if args.hmm or given is not None:
        source, conversion = rationalized_source(args.hmm or given, getattr(args, "rationalize", None),
                                                 mode=getattr(args, "mode", None))
        model = load_task_instance(source, theorem_id, memory=False)
        instance = {"hidden": model.num_states, "vocab": model.num_tokens, "seed": args.seed,
                    "source": args.hmm or "object"}
        if conversion is not None:
            instance["rationalized"] = conversion.to_dict()
            instance["_conversion"] = conversion            # popped by theorem()
        return model, instance
    hidden = 25 if args.hidden is None else args.hidden
    rng = np.random.default_rng(args.seed)
    classes = getattr(args, "classes", None)
    if theorem_id == "3.3" and hidden <= args.vocab:
        model, info = full_rank_hmm(hidden, args.vocab, rng=rng, classes=classes)
        how = "generated to satisfy Assumptions 3.1 and 3.2: " + info["recipe"]
    else:
        shown = getattr(args, "shown", lambda name, value: f"--{name} {value}")   # as the user wrote it
        if args.vocab < 2:
            hint = (f"; {shown('hidden', 1)} gives a one-state, one-token instance" if theorem_id == "3.3" else "")
            raise InputError(f"{shown('vocab', args.vocab)}: a generated Theorem {theorem_id} instance "
                             f"with {shown('hidden', hidden)} needs at least 2 tokens for its prompt and task; "
                             f"use {shown('vocab', 2)} or more{hint}")
        if hidden < 3:
            raise InputError(f"{shown('hidden', hidden)}: a generated Theorem {theorem_id} instance needs at "
                             "least 3 hidden states (its recipe plants a basis set B, its reach H* and a state "
                             f"outside H*); use {shown('hidden', 3)} or more")
        model, info = prompt_friendly_hmm(hidden, args.vocab, rng=rng, classes=classes)
        how = "generated to satisfy Assumptions 3.2 and 3.5: " + info["recipe"]
        if theorem_id == "3.3":
            how += f" (no instance can satisfy Assumption 3.1 with |H| = {hidden} > |X| = {args.vocab})"
    return model, {"hidden": hidden, "vocab": args.vocab, "seed": args.seed, "source": "generated",
                   "how": how, "tie_sequence": info.get("tie_sequence"),
                   "label_shares": info.get("label_shares"), **({"classes": classes} if classes else {})}


def read_witness(given, theorem_id: str, hmm: HMM):
    """A witness file (SPEC section 3), a dict or a witness object, validated against the
    instance (:func:`~headprompt.verify.reports.instances.resolve_witness`, the one reader)."""
    return resolve_witness(given, theorem_id, hmm)[0]


def _sequence_set(args, hmm: HMM, extra=()):
    rng = np.random.default_rng(args.seed + 1)
    if args.exhaustive:
        length = 4 if args.length is None else args.length
        return seqs.exhaustive(hmm.num_tokens, length), "exhaustive", length
    length = 8 if args.length is None else args.length
    pool = seqs.sampled(hmm, args.samples, length, rng=rng) if args.samples else []
    adv = seqs.adversarial(hmm, 200, length, rng=rng)
    near = seqs.near_ties(hmm, length)             # exact ranking: near-ties at every length 1..T
    return list(dict.fromkeys(pool + adv + near + [tuple(e) for e in extra])), "sampled", length


def theorem(args) -> dict:
    """The report dict of ``verify theorem 3.3|3.6`` (SPEC section 4)."""
    tid = args.id
    from .routing import path_for, route_loaded
    from .scale import theorem_at_scale

    path = path_for(args)                 # the cost model's choice, before any work
    if path["chosen"] == "large":         # the sparse exact form
        report = theorem_at_scale(args)
        report["path"] = path
        return report
    if getattr(args, "ray", None) and not path.get("pending"):
        raise InputError(f"{args.option('ray') if hasattr(args, 'option') else '--ray'} splits the checks of the "
                         "large-model path (above 1,000 states or tokens); this instance is checked in one process")
    hmm, instance = load_or_generate(args, tid)
    file_witness_note = instance_witness_note(args, tid, hmm)      # a malformed one: exit 2 before the work
    if path.pop("pending", False):        # a JSON file or an HMM object: priced now it is read (.routing)
        path, large = route_loaded(args, hmm, instance)
        if large is not None:
            large[DETAILS]["instance_witness_note"] = file_witness_note
            return large
    conversion = instance.pop("_conversion", None)
    mode, mode_note = check_work(args, hmm)
    hmm.check_task_range()               # every mode samples and bounds with a float form of mu
    if mode == "float":                  # float arithmetic cannot hold 3e500, and 1e-400 would become 0
        hmm.check_float64()
    if is_multiclass(hmm.mu):
        mode, mode_note = multiclass_mode(args, hmm, mode, mode_note)
    results = check_assumptions(hmm, tid)
    sets = results.get("3.5", {}).pop("_sets", None)
    converted = judge_conversion(args, tid, hmm, results, rerun=theorem)
    failed = {k: v for k, v in results.items() if not v["holds"]}
    report = {"theorem": tid, "verdict": None, "mode": mode, **({"mode_note": mode_note} if mode_note else {}),
              "certified": mode != "float", "path": path,
              "instance": instance, "assumptions": results, "witness": None, "identity": None,
              "sequences": None, "labels": None, "vacuous": None, "counterexample": None,
              **({"conversion": converted} if converted is not None else {})}
    witness, construction_error = None, None
    if args.witness is not None:
        witness = read_witness(args.witness, tid, hmm)
    else:
        try:
            witness = theorem_33_witness(hmm) if tid == "3.3" else theorem_36_witness(hmm, sets if sets and sets.found else None)
        except ConstructionError as exc:
            construction_error = str(exc)
    if witness is not None:
        report["witness"] = {k: format_array(np.asarray(v, dtype=object)) for k, v in witness.as_dict().items()
                             if k != "theorem"}
        if isinstance(witness, PromptWitness) and args.witness is None:
            report["witness"]["H_star"] = list(witness.H_star)
            report["witness"]["B"] = list(witness.B)
        u = getattr(witness, "u", None)
        report["identity"] = identity_check(hmm, tid, witness.b, u)
        lam = report["identity"].pop("lambda")
        if lam is not None:
            report["identity"]["lambda"] = format_fraction(lam)
        extra = [instance["tie_sequence"]] if instance.get("tie_sequence") else []
        sequences, how, length = _sequence_set(args, hmm, extra)
        bar, tick = progress_bar(len(sequences), f"checking Theorem {tid}", quiet=not getattr(args, "progress", True))
        res = check_sequences(hmm, tid, witness.b, u, sequences, mode=mode, lam=lam, progress=tick)
        if bar is not None:
            bar.close()
        report.update(label_counts(res.expected_labels, num_classes(hmm.mu)))
        _cross_check(hmm, tid, witness, sequences, mode, res)
        report["sequences"] = {"checked": res.checked, "agree": res.agree, "in_R": res.checked,
                               "length": length, "lengths": lengths_checked(sequences), "how": how, "ties": res.ties,
                               "outside_support": res.outside_support, "zero_norm": res.zero_norm,
                               "identity_agree": res.identity_agree if mode != "float" else None,
                               "exact_fallbacks": res.exact_fallbacks,
                               "decided_by": dict(res.decided_by),
                               "certified": mode != "float"}
        if res.first_disagreement is not None:
            d = res.first_disagreement
            report["counterexample"] = {"kind": "disagreement", "sequence": list(d.sequence),
                                        "expected": d.expected, "got": d.got}
            if mode == "float":                  # say whether the float disagreement is real
                f_star, f, possible = decide_direct(hmm, tid, witness.b, u, d.sequence)
                report["counterexample"]["exact_check"] = {
                    "expected": f_star, "got": f, "disagrees": bool(possible and f_star != f)}
            if args.witness is not None and tid == "3.6" and not is_multiclass(hmm.mu):     # binary certificates
                report["prompt_evidence"] = given_prompt_evidence(hmm, u)
        elif mode != "float" and not is_multiclass(hmm.mu):         # margins are binary
            report["robustness"] = robustness_block(hmm, tid, witness.b, u, sequences, rationalization=conversion,
                                                    messages=res.messages)
    failed = settle_verdict(report, witness_given=args.witness is not None, failed=failed,
                            construction_error=construction_error)
    if report["verdict"] == "assumptions-fail":
        evidence = counterexample_for(hmm, tid, failed, seed=args.seed, construction_error=construction_error)
        report["counterexample"] = report["counterexample"] or evidence
        if report["counterexample"] is not evidence and evidence is not None:
            report["assumption_evidence"] = evidence
        if construction_error:
            report["construction"] = construction_error
    save_note = None
    if args.out:
        save_note = save_checked_instance(hmm, args.out, witness=None if witness is None else witness.as_dict(),
                                          meta={"theorem": tid, "instance": instance})
    # what TheoremReport.to_frame needs; verify.api.run_theorem takes it out of the dict
    report[DETAILS] = {"model": hmm, "witness": witness,
                       "sequences": sequences if witness is not None else [],
                       "instance_witness_note": file_witness_note, "save_note": save_note}
    return report


def _cross_check(hmm, tid, witness, sequences, mode, res) -> None:
    """Recompute a random sample of verdicts the slow, general way (``ie.gbar`` on the actual
    embedding sequence, ``ie.posterior_h0``); a mismatch is an internal error, never hidden.
    Thirty sequences, fewer above 100 hidden states (each costs |H|^2 big-integer work)."""
    if mode == "float":
        return
    count = CROSS_CHECKS if hmm.num_states <= 100 else max(5, CROSS_CHECKS * 100 // hmm.num_states)
    sample = random.Random(0).sample(sequences, min(count, len(sequences)))
    fast = check_sequences(hmm, tid, witness.b, getattr(witness, "u", None), sample, keep=True)
    for d in fast.decisions:
        f_star, f, possible = decide_direct(hmm, tid, witness.b, getattr(witness, "u", None), d.sequence)
        if (f_star, f) != (d.expected, d.got):
            raise InternalError(f"fast and direct checks differ on {list(d.sequence)}")


def render(result: dict) -> None:
    """A readable report of a theorem result dict."""
    from .render import console, evidence_heading, evidence_name, print_header, print_labels

    out = console()
    print_header(out, result)
    path = result.get("path")
    if path:
        out.print(f"path: {path['chosen']} ({path['why']})")
    w = result.get("witness")
    if w:
        parts = [(f"{k}: {len(v)} x {len(v[0])} entries" if v and isinstance(v[0], list) else f"{k}: {len(v)} entries")
                 if isinstance(v, list) else f"{k}: {v}" for k, v in w.items()]
        out.print("witness: " + "; ".join(parts))
        if "H_star" in w:
            out.print(f"  H* = {w['H_star']}, B = {w['B']}")
    if result.get("identity"):
        idt = result["identity"]
        out.print(f"identity: {'holds' if idt['holds'] else 'does not hold'}: {idt['what']}")
    s = result.get("sequences")
    if s:
        out.print(f"sequences ({s['how']}, {lengths_text(s)}): {s['agree']}/{s['checked']} agree with F*"
                  + (f", {s['in_R']} in R" if result["theorem"] not in ("3.3", "3.6") else "")
                  + (f"; ties between the two best classes: {s.get('ties', 0)}" if len(result.get("labels") or {}) > 2
                     else f"; ties mu.p = 0: {s.get('ties', 0)}") + f"; outside supp(P[X]): {s.get('outside_support', 0)}"
                  + ("" if s.get("certified", True) else " [uncertified float verdicts]")
                  + (f"; decided by: {', '.join(f'{k} {v}' for k, v in s['decided_by'].items())}"
                     if s.get("decided_by") else ""))
    print_labels(out, result)
    rob = result.get("robustness")
    if rob and rob.get("radius") is not None:
        ties = rob.get("zero_margin_sequences") or 0
        off = rob.get("radius_off_zero_margins")
        if ties and off is not None:
            # a tie (margin 0, label 1 by the >= rule) has radius 0 by definition: say so, and give
            # the radius that the other verdicts have
            out.print(f"robustness: {ties} sequence(s) sit exactly on the threshold (margin 0, radius 0); "
                      f"every other verdict holds for any read-out within {off:.3g} in the sup norm")
        else:
            out.print(f"robustness: smallest margin |b . g| = {rob['min_margin']:.3g}, radius {rob['radius']:.3g} "
                      f"(sup norm: every verdict holds for any read-out within it)")
        if "transfer" in rob:
            t = rob["transfer"]
            out.print(f"  carries over to the given float model, proven, on {t['agreement_carries']} of "
                      f"{t['sequences']} sequences (change bound inside both margins)")
    ce = result.get("counterexample")
    if ce:
        out.print(f"[bold]{evidence_heading(ce['kind'])}[/bold]: {evidence_name(ce['kind'])}")
        if ce["kind"] == "disagreement":
            out.print(f"  sequence {ce['sequence']}: F*(x) = {ce['expected']} but F(x) = {ce['got']}")
            if "exact_check" in ce:
                ex = ce["exact_check"]
                out.print("  checked exactly: " + ("a real disagreement" if ex["disagrees"] else
                          f"NOT a disagreement (exact F*(x) = {ex['expected']}, F(x) = {ex['got']}); "
                          "the float verdict was wrong"))
        elif ce["kind"] == "no-linear-head":
            out.print(f"  {len(ce['sequences'])} sequences {ce['sequences']} with labels {ce['labels']}")
            out.print(f"  {ce['what']}")
            for name in ("y", "z"):
                vals = ce["certificate"][name]
                shown = [v if len(v) <= 12 else f"<{len(v)}-digit integer>" for v in vals]
                out.print(f"  {name} = [{', '.join(shown)}]")
            out.print("  (--json prints every exact value and the features G_1(x'_k); "
                      f"certificate checked independently: {ce.get('checked')})")
        else:
            out.print(f"  {ce.get('what', '')}")
            if ce["kind"] == "no-basis-set":
                c = ce["construction"]
                out.print(f"  construction: {c['how']}")
                out.print(f"    B = {c['B']}, H* = {c['H_star']}: agrees with F* on {c['agree']}/{c['checked']} "
                          f"sequences ({c['sequences']}; labels {c['labels']})")
                fam = ce["prompt_family"]
                out.print(f"  prompt family u = 1_B: {fam['certified']} of {fam['subsets']} B certified "
                          f"({fam['covered']} tried)")
            elif isinstance(ce.get("construction"), dict) and ce["construction"].get("what"):
                out.print(f"  construction: {ce['construction']['what']}")
            srch = ce.get("search")
            if srch:
                out.print(f"  {srch['what']}: prompt+head test accuracy "
                          f"{srch['prompt+head']['test_accuracy']:.3f}, head only "
                          f"{srch['head only']['test_accuracy']:.3f}, majority {srch['majority_baseline']:.3f}")
                out.print(f"  reading: {srch['interpretation']}")
            elif ce.get("search_hint"):
                out.print(f"  ({ce['search_hint']})")
    pe = result.get("prompt_evidence")
    if pe:
        out.print(f"  about the given prompt: {pe['what']}")
    if "seconds" in result:
        out.print(f"time: {result['seconds']:.2f} s")
