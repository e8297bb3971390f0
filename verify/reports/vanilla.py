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
from ..evidence.certificates import (check_no_linear_head_certificate, find_no_linear_head_certificate,
                           prompt_family_certificates)
from ..checks.vanilla.check import check_sequences, decide_direct, identity_check
from .render import lengths_checked, lengths_text, progress_bar
from .requests import DETAILS
from ..runtime.cost import check_work
from .instances import instance_witness_note, load_task_instance, resolve_witness, save_checked_instance
from .verdicts import label_counts, settle_verdict
from .rationalized import rationalized_source
from ..checks.multiclass import multiclass_mode
from ..checks.registry import check_assumptions
from ..evidence.robustness import robustness_block

__all__ = ["theorem", "load_or_generate", "read_witness", "render", "counterexample_for",
           "no_basis_set_evidence"]

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
    instance (:func:`~headprompt.verify.reports.instances`, the one reader)."""
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


def counterexample_for(hmm: HMM, theorem_id: str, failed: dict, *, seed: int = 0,
                       construction_error: str | None = None) -> dict | None:
    """Concrete evidence for a failed assumption (the certificates and searches are for binary
    tasks: a ``k``-row task gets a note instead)."""
    if is_multiclass(hmm.mu):
        return {"kind": "none-found", "what": f"Assumption(s) {', '.join(sorted(failed))} fail; the "
                "certificates and constructions without the assumption are for binary tasks, so no evidence "
                f"is searched for this {num_classes(hmm.mu)}-class task (check one row, or a difference "
                "mu_d - mu_c, as a binary task)"}
    if "3.1" in failed:
        pool = seqs.exhaustive(hmm.num_tokens, 2)
        cert = find_no_linear_head_certificate(hmm, pool)
        if cert is None:
            pool = pool + seqs.sampled(hmm, 2000, 6, rng=np.random.default_rng(seed + 7))
            cert = find_no_linear_head_certificate(hmm, pool)
        if cert is None:
            return {"kind": "none-found", "what": "Assumption 3.1 fails; conclusion not refuted within "
                    f"this search ({len(pool)} sequences: no Motzkin certificate, so some linear head "
                    "may fit them all)"}
        ok, why = check_no_linear_head_certificate(hmm, cert)
        cert["checked"] = ok
        cert["what"] = ("no linear head b can give F*(x) = 1(b . G_1(x') >= 0) on these sequences: " + why
                        if ok else f"certificate failed its own check: {why}")
        return cert
    if "3.5" in failed:
        return no_basis_set_evidence(hmm, failed["3.5"], seed=seed)
    if "3.2" in failed:
        evidence = {k: v for k, v in failed["3.2"].items() if k not in ("holds", "why")}
        if construction_error:
            return {"kind": "construction-breaks", "what": construction_error, "evidence": evidence,
                    "construction": _relaxed_construction(hmm, theorem_id)}
        return {"kind": "construction-survives",
                "what": f"Assumption 3.2 fails ({failed['3.2']['why']}), but the construction only "
                        "divides by P[H_0] and P[H_1] (and c on H*), which are positive where needed here; "
                        "the witness was built and checked anyway (see sequences)",
                "evidence": evidence}
    if construction_error:
        return {"kind": "construction-breaks", "what": construction_error}
    return None


EVIDENCE_SEQUENCES = 200        # exhaustive short sequences for construction-level evidence
FAMILY_SECONDS = 3.0            # time budget of the per-B certificates in a report


def _short_sequences(num_tokens: int, limit: int = EVIDENCE_SEQUENCES) -> list[tuple[int, ...]]:
    L = 1
    while L < 3 and sum(num_tokens ** k for k in range(1, L + 2)) <= limit:
        L += 1
    return seqs.exhaustive(num_tokens, L)


def _given_prompt_evidence(hmm: HMM, u) -> dict:
    """For a refuted user prompt: is the prompt itself hopeless? A Motzkin certificate (checked
    exactly) that no linear head works with ``u`` on the short sequences, or a note that some
    head may work with it (only ``b`` was wrong)."""
    pool = _short_sequences(hmm.num_tokens)
    cert = find_no_linear_head_certificate(hmm, pool, prompt=list(u))
    if cert is None:
        return {"kind": "none-found", "what": f"no certificate on the {len(pool)} short sequences: some linear "
                                              "head may work with this prompt (the given b is what fails)"}
    ok, why = check_no_linear_head_certificate(hmm, cert)
    cert["checked"] = ok
    cert["what"] = f"no linear head works with this prompt u: {why}" if ok else f"certificate failed its check: {why}"
    return cert


def _relaxed_construction(hmm: HMM, theorem_id: str) -> dict:
    """The paper's recipe applied anyway (pseudo-inverses; ``constructions/relaxed.py``),
    checked exactly on every short sequence: what breaks, not only that a step is undefined."""
    from ..evidence.construction import construction_check

    pool = _short_sequences(hmm.num_tokens)
    chk = construction_check(hmm, theorem_id, pool)
    d = chk["disagreement"]
    what = (f"{chk['how']}: disagrees with F* on {d['sequence']} (F* = {d['expected']}, F = {d['got']}; "
            "checked exactly)" if d is not None else
            f"{chk['how']}: agrees with F* on all {chk['checked']} short sequences checked")
    return {"how": chk["how"], "checked": chk["checked"], "agree": chk["agree"], "labels": chk["labels"],
            "disagreement": d, "what": what}


def no_basis_set_evidence(hmm: HMM, failed35: dict, *, seed: int = 0, search: bool = False,
                          search_steps: int = 150, progress=None) -> dict:
    """Construction-level evidence when Assumption 3.5 fails (in seconds): the paper's recipe
    applied without the assumption (``constructions/relaxed.py``) checked exactly on every
    short sequence, a certificate that no linear head works with its prompt, and certificates
    for the prompt family ``u = 1_B`` within a time budget. ``search`` adds the numerical
    search of :mod:`headprompt.verify.evidence.search` (opt-in; minutes on large instances)."""
    from ..evidence.construction import construction_check

    pool = _short_sequences(hmm.num_tokens)
    chk = construction_check(hmm, "3.6", pool)
    w = chk["witness"]
    construction = {"how": chk["how"], "B": list(w.B), "H_star": list(w.H_star), "u": format_array(w.u),
                    "b": format_array(w.b), "checked": chk["checked"], "agree": chk["agree"],
                    "labels": chk["labels"], "disagreement": chk["disagreement"],
                    "sequences": f"every sequence of length <= {max(len(s) for s in pool)}"}
    cert = find_no_linear_head_certificate(hmm, pool, prompt=list(w.u))
    if cert is not None:
        ok, why = check_no_linear_head_certificate(hmm, cert)
        cert["checked"] = ok
        cert["what"] = (f"no linear head works with the construction's prompt u = 1_B, B = {list(w.B)}: " + why
                        if ok else f"certificate failed its own check: {why}")
    family = prompt_family_certificates(hmm, pool, first=tuple(w.B), seconds=FAMILY_SECONDS)
    parts = [failed35["why"]]
    if chk["disagreement"] is not None:
        d = chk["disagreement"]
        parts.append(f"the paper's recipe without the assumption gives a prompt and head that disagree with F* on "
                     f"{d['sequence']} (F* = {d['expected']}, F = {d['got']}; checked exactly)")
    else:
        parts.append(f"the paper's recipe without the assumption still agrees with F* on all {chk['checked']} "
                     "short sequences checked")
    if cert is not None and cert["checked"]:
        parts.append("an exact certificate shows that no linear head works with its prompt")
    parts.append(family["what"])
    out = {"kind": "no-basis-set", "what": "; ".join(parts), "blocking_states": failed35.get("blocking", []),
           "construction": construction, "prompt_certificate": cert, "prompt_family": family,
           "statement_refuted_for_family": bool(family["all"])}
    if search:
        from ..evidence.search import optimize_prompt_and_head

        out["search"] = optimize_prompt_and_head(hmm, samples=1000, steps=search_steps, seed=seed, progress=progress)
    else:
        out["search"] = None
        out["search_hint"] = ("a numerical search over every prompt u in [0, 1]^|H| is opt-in: "
                              "verify counterexample 3.6 --hmm FILE --search")
    return out


def theorem(args) -> dict:
    """The report dict of ``verify theorem 3.3|3.6`` (SPEC section 4)."""
    tid = args.id
    from .scale import theorem_at_scale, use_scale_path

    if use_scale_path(args):              # above 1,000 states or tokens: the sparse exact form
        return theorem_at_scale(args)
    if getattr(args, "ray", None):
        raise InputError(f"{args.option('ray') if hasattr(args, 'option') else '--ray'} splits the checks of the "
                         "large-model path (above 1,000 states or tokens); this instance is checked in one process")
    hmm, instance = load_or_generate(args, tid)
    file_witness_note = instance_witness_note(args, tid, hmm)      # a malformed one: exit 2 before the work
    conversion = instance.pop("_conversion", None)
    mode, mode_note = check_work(args, hmm)
    hmm.check_task_range()               # every mode samples and bounds with a float form of mu
    if mode == "float":                  # float arithmetic cannot hold 3e500, and 1e-400 would become 0
        hmm.check_float64()
    if is_multiclass(hmm.mu):
        mode, mode_note = multiclass_mode(args, hmm, mode, mode_note)
    results = check_assumptions(hmm, tid)
    sets = results.get("3.5", {}).pop("_sets", None)
    failed = {k: v for k, v in results.items() if not v["holds"]}
    report = {"theorem": tid, "verdict": None, "mode": mode, **({"mode_note": mode_note} if mode_note else {}),
              "certified": mode != "float",
              "instance": instance, "assumptions": results, "witness": None, "identity": None,
              "sequences": None, "labels": None, "vacuous": None, "counterexample": None}
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
                report["prompt_evidence"] = _given_prompt_evidence(hmm, u)
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
    from .render import console, evidence_name, print_header, print_labels

    out = console()
    print_header(out, result)
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
        out.print(f"[bold]counterexample[/bold]: {evidence_name(ce['kind'])}")
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
