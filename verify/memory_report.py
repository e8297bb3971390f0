"""Orchestration and rendering of ``verify theorem 4.3 | 4.6 | C.6`` and ``verify
counterexample`` for memory-augmented HMMs (SPEC section 4)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..constructions import witnesses
from ..constructions.memory import AttentionWitness, theorem_43_witness, theorem_c6_witness
from ..models import inference_exact as ie
from ..models.exceptions import ConstructionError, InputError
from ..models.generators import stationary_distribution
from ..models.hmm import MemoryHMM
from ..models.instances import save_instance
from ..models.rational import format_array
from ..models.sampling import sample

from . import memory_assumptions as masm
from . import sequences as seqs
from .memory_check import check_sequences, cross_check, identity_check
from .render import progress_bar
from .common import load_task_instance, settle_verdict
from .rationalized import rationalized_source

__all__ = ["theorem", "render", "counterexample", "generate_instance", "read_witness",
           "break_nondegeneracy", "sequence_set"]

DEFAULTS = {"memory": 3, "hidden": 3, "cells": {"4.3": 2, "4.6": 1, "C.6": 2}}


# ---------------------------------------------------------------- generated instances

def _stochastic(rng: np.random.Generator, size: int, lo: int = 1, hi: int = 9) -> list[Fraction]:
    w = [int(v) for v in rng.integers(lo, hi + 1, size=size)]
    return [Fraction(v, sum(w)) for v in w]


def generate_instance(theorem_id: str, memory: int, cells: int, syntax: int, vocab: int, *,
                      rng: np.random.Generator) -> tuple[MemoryHMM, dict]:
    """An exact memory HMM satisfying the theorem's assumptions by construction, with ``R``
    nonempty on a good share of sampled sequences.

    Recipe (``H* = {j*} x {0}``, ``M'`` = all values for 4.3, a random ``M* = supp(mu)`` of
    ``max(1, |M| - 1)`` values for 4.6/C.6): tokens split into a recoverable block ``T*`` of
    ``|M'| + 1`` tokens (``|M'|`` when the vocabulary is tight), a trigger token and filler
    tokens. ``W_(m, (j*, 0))``, ``m in M'``, are random positive on ``T*``; a trigger state
    ``h_t`` (``(j*, 1)``, or a state of another cell) emits the trigger token (only it does) and
    moves to ``(j*, 0)`` surely, so ``x_{i-1} = trigger`` puts ``i`` in ``Z``; every other column
    is ``eps w0 + (1 - eps) r`` with one fixed direction ``w0`` on ``T*`` and random ``r`` on the
    fillers, so the spans meet only in 0 by an exact rank condition (checked). For 4.6/C.6 the
    columns ``W_(m, (j*, 0))``, ``m not in M*``, are random over all tokens (so Assumption 4.2
    typically fails while 4.5/C.5 hold) and ``P[H_0]`` is the exact stationary distribution.
    ``A`` has a cycle through all states plus a self-loop (ergodic); ``mu`` is integer on
    ``M'`` with one coordinate moved to make an exact tie on a sequence in ``R``.

    Raises:
        InputError: sizes that cannot satisfy the assumptions (naming the limit).
    """
    M, N, S, X = memory, cells, syntax, vocab
    prompt = theorem_id != "4.3"
    if theorem_id == "4.6" and N != 1:
        raise InputError(f"--cells {N}: Theorem 4.6 is about one memory cell (use C.6 for several)")
    j_star = int(rng.integers(N))
    n = N * S
    h_star = j_star * S
    M_rec = list(range(M)) if not prompt else sorted(int(m) for m in rng.choice(M, size=max(1, M - 1), replace=False))
    k = len(M_rec)
    if X < k + 2 and n > 1:
        raise InputError(f"--vocab {X}: recoverable columns for {k} memory values need at least {k + 2} tokens "
                         "(k independent columns, a trigger and a filler token); raise --vocab or lower --memory")
    if n > 1 and X < k:
        raise InputError(f"--vocab {X}: need at least {k} tokens")
    leak = X >= k + 3
    T_star = list(range(k + 1 if leak else k))
    trigger = len(T_star)
    fillers = list(range(trigger + 1, X))
    h_t = None
    if n > 1:
        h_t = j_star * S + 1 if S >= 2 else ((j_star + 1) % N) * S
    # transitions: a cycle through all states with h_t -> h_star, a self-loop off h_t
    order = [h for h in rng.permutation(n).tolist() if h not in (h_t, h_star)]
    cycle = ([h_t, h_star] if h_t is not None else [h_star]) + order
    nxt = {cycle[i]: cycle[(i + 1) % len(cycle)] for i in range(len(cycle))}
    loop = next((h for h in cycle if h != h_t), h_star)
    A = np.full((n, n), Fraction(0), dtype=object)
    for h in range(n):
        if h == h_t:
            A[h_star, h] = Fraction(1)
            continue
        support = {nxt[h]} | ({h} if h == loop else set())
        extra = [g for g in rng.permutation(n).tolist() if g not in support]
        support |= set(extra[:max(0, 2 - len(support) + 1)])
        for g, p in zip(sorted(support), _stochastic(rng, len(support))):
            A[g, h] = p
    w0 = _stochastic(rng, len(T_star))
    for attempt in range(50):
        W = np.full((X, M, n), Fraction(0), dtype=object)
        for m in range(M):
            for h in range(n):
                if h == h_star and m in M_rec:
                    col = dict(zip(T_star, _stochastic(rng, len(T_star))))
                elif h == h_star:                          # m outside M*: anything but the trigger
                    others = [z for z in range(X) if z != trigger] if n > 1 else list(range(X))
                    col = dict(zip(others, _stochastic(rng, len(others))))
                else:
                    eps = Fraction(int(rng.integers(1, 4)), 20) if leak else Fraction(0)
                    p_trig = Fraction(int(rng.integers(3, 8)), 10) if h == h_t else Fraction(0)
                    r = _stochastic(rng, len(fillers)) if fillers else []
                    col = {z: eps * w for z, w in zip(T_star, w0)}
                    rest = 1 - eps - p_trig
                    if not fillers:
                        p_trig += rest
                        rest = Fraction(0)
                    for z, p in zip(fillers, r):
                        col[z] = col.get(z, Fraction(0)) + rest * p
                    if p_trig:
                        col[trigger] = p_trig
                for z, p in col.items():
                    W[z, m, h] += p
        pM = _stochastic(rng, M ** N)
        pi0 = _stochastic(rng, n)
        model = MemoryHMM(N, M, S, A, W, np.array(pi0, dtype=object), np.array(pM, dtype=object),
                          None, j_star)
        if prompt:
            model = MemoryHMM(N, M, S, A, W, stationary_distribution(A), model.pM, None, j_star)
        mu = np.array([Fraction(0)] * M, dtype=object)
        for m in M_rec:
            mu[m] = Fraction(int(rng.choice([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5])))
        model = MemoryHMM(N, M, S, model.A, model.W, model.pi0, model.pM, mu, j_star)
        check = masm.check_c5(model) if prompt else masm.check_42(model)
        if check["holds"]:
            break
    else:  # pragma: no cover - probability zero
        raise InputError("could not draw emission columns satisfying the non-degeneracy assumption")
    tie = _tie_sequence(model, trigger, rng) if h_t is not None else [int(rng.integers(X))]
    post = ie.memory_posterior(model, tie)
    support = [m for m in M_rec if post[m] != 0]
    if support:
        kk = max(support, key=lambda m: post[m])
        new = mu[kk] - sum(mu[m] * post[m] for m in M_rec) / post[kk]
        if new != 0:
            mu[kk] = new
            model = MemoryHMM(N, M, S, model.A, model.W, model.pi0, model.pM, mu, j_star)
    what = ("Assumptions 3.2 and 4.2" if not prompt else f"Assumptions 4.4 and {'4.5' if theorem_id == '4.6' else 'C.5'}")
    return model, {"recipe": f"generated to satisfy {what}: H* = {{{j_star}}} x {{0}}, trigger token {trigger} "
                             f"(state {h_t}) moves to H* surely, recoverable block T* = {T_star}, filler tokens "
                             f"{fillers}, shared leak direction on T*, ergodic A" +
                             (", stationary P[H_0], mu sparse on M*" if prompt else "") +
                             ", mu with an exact tie",
                   "tie_sequence": tie, "trigger": trigger, "target_cell": j_star}


def _tie_sequence(model: MemoryHMM, trigger: int, rng: np.random.Generator) -> list[int]:
    """A possible short sequence with the trigger token first (so the next position is in Z)."""
    tokens, _, _ = sample(model.to_float(), 200, 4, rng=rng)
    for row in tokens:
        seq = [trigger] + [int(z) for z in row[1:]]
        if sum(ie.memory_posterior(model, seq, 0)) > 0 and ie.posterior_h0(model.lift(), seq)[0] is not None:
            if any(v != 0 for v in ie.posterior_h0(model.lift(), seq)):
                return seq
    return [trigger, trigger]                              # pragma: no cover


def break_nondegeneracy(model: MemoryHMM, prompt: bool) -> tuple[MemoryHMM, str]:
    """The same instance with the target cell's columns made degenerate, so that every syntax
    state fails non-degeneracy alone (hence no ``S*`` exists).

    Raises:
        InputError: when the sizes leave nothing to break (one column in all).
    """
    W = model.W.copy()
    S, j = model.syntax_states, model.target_cell
    M_rec = [m for m in range(model.memory_values) if not prompt or model.mu[m] != 0]
    if len(M_rec) >= 2:
        for s in range(S):
            W[:, M_rec[1], j * S + s] = W[:, M_rec[0], j * S + s]
        how = f"W_(m={M_rec[1]}, h) := W_(m={M_rec[0]}, h) for every h in the target cell (dependent columns)"
    elif S >= 2:
        m = M_rec[0]
        for s in range(S):
            W[:, m, j * S + s] = W[:, m, j * S + (s + 1) % S] if s == 0 else W[:, m, j * S]
        how = "every syntax state of the target cell emits the same column (shared spans)"
    elif model.cells >= 2:
        m = M_rec[0]
        W[:, m, j * S] = W[:, 0, ((j + 1) % model.cells) * S]
        how = "the target cell's column equals a column of another cell (shared span)"
    else:
        raise InputError("a single emission column is always non-degenerate; use more memory values or states")
    return MemoryHMM(model.cells, model.memory_values, model.syntax_states, model.A, W, model.pi0, model.pM,
                     model.mu, model.target_cell, model.pM_cells), how


# ---------------------------------------------------------------- instance and witness input

def _sizes(args, tid: str) -> tuple[int, int, int]:
    memory = args.memory if args.memory is not None else DEFAULTS["memory"]
    cells = args.cells if args.cells is not None else DEFAULTS["cells"][tid]
    syntax = args.hidden if args.hidden is not None else DEFAULTS["hidden"]
    if memory ** cells * cells * syntax > 400:
        raise InputError(f"--memory {memory} --cells {cells} --hidden {syntax}: the lifted chain would have "
                         f"{memory ** cells * cells * syntax} states; the limit is 400")
    return memory, cells, syntax


def load_or_generate(args, tid: str) -> tuple[MemoryHMM, dict]:
    """The instance to check and the ``instance`` block of the report."""
    given = getattr(args, "model", None)
    if args.hmm or given is not None:
        source, conversion = rationalized_source(args.hmm or given, getattr(args, "rationalize", None))
        model = load_task_instance(source, tid, memory=True)
        if tid == "4.6" and model.cells != 1:
            raise InputError(f"{args.hmm or 'the instance'}: Theorem 4.6 is about one memory cell; the "
                             f"instance has {model.cells} (use C.6)")
        info = {"source": args.hmm or "object"}
        if conversion is not None:
            info["rationalized"] = conversion.to_dict()
    else:
        memory, cells, syntax = _sizes(args, tid)
        model, gen = generate_instance(tid, memory, cells, syntax, args.vocab, rng=np.random.default_rng(args.seed))
        info = {"source": "generated", "how": gen["recipe"], "tie_sequence": gen["tie_sequence"]}
    return model, {"cells": model.cells, "memory": model.memory_values, "syntax_states": model.syntax_states,
                   "hidden": model.num_states, "vocab": model.num_tokens, "target_cell": model.target_cell,
                   "lifted_states": model.lift().num_states, "seed": args.seed, **info}


def read_witness(path: str, tid: str, model: MemoryHMM) -> tuple[AttentionWitness, list[int] | None]:
    """A witness file (SPEC section 3) as an :class:`AttentionWitness`, validated against the
    instance; an optional ``"H_star"`` (flattened states) fixes the ``H*`` of ``R``
    (:func:`headprompt.constructions.witnesses.read_witness`, the one reader)."""
    return witnesses.read_witness(path, tid, model)


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
    from ..constructions.span import relevant_columns

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
    from .explore import construction_check

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
    try:
        out["construction"] = construction_evidence(model, tid)
    except ConstructionError as exc:
        out["construction"] = {"what": f"the construction cannot be carried out: {exc}", "disagreement": None}
    return out


def _failed_assumption_evidence(model: MemoryHMM, tid: str, failed: dict) -> dict:
    name = next((k for k in ("4.2", "4.5", "C.5") if k in failed), None)
    if name is not None:
        ev = failed[name].get("evidence")
        if ev:
            subset = None if name == "4.2" else [m for m in range(model.memory_values) if model.mu[m] != 0]
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
    results = masm.check_all(model, tid)
    failed = {k: v for k, v in results.items() if not v["holds"]}
    report = {"theorem": tid, "verdict": None, "mode": args.mode, "instance": instance,
              "assumptions": results, "witness": None, "identity": None, "sequences": None,
              "counterexample": None}
    nondeg = results.get("4.2") or results.get("4.5") or results.get("C.5")
    H_star = nondeg.get("H_star") if nondeg and nondeg["holds"] else None
    witness, construction_error = None, None
    if args.witness:
        witness, given_H = read_witness(args.witness, tid, model)
        H_star = given_H if given_H is not None else H_star
        if H_star is None:
            raise InputError(f"{args.witness}: R (eq. 4.3) needs a set H*, and the non-degeneracy assumption "
                             "finds none on this instance; add \"H_star\" (flattened hidden states) to the witness")
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
        bar, tick = progress_bar(len(sequences), f"checking Theorem {tid}")
        res = check_sequences(model, witness, H_star, sequences, mode=args.mode, progress=tick)
        if bar is not None:
            bar.close()
        if args.mode != "float":
            cross_check(model, witness, H_star, sequences, count=10, seed=args.seed)
        report["sequences"] = {"checked": res.checked, "agree": res.agree, "in_R": res.in_R,
                               "length": length, "how": how, "outside_R": res.outside_R,
                               "outside_support": res.outside_support, "ties": res.ties,
                               "attended_is_Z": res.attended_is_Z,
                               "share_in_R": round(res.in_R / res.checked, 4) if res.checked else 0.0,
                               "certified": args.mode != "float",
                               "verdicts_by": "float (uncertified)" if args.mode == "float" else "exact",
                               "decided_by": dict(res.decided_by)}
        if args.mode == "certified":
            report["sequences"]["verdicts_by"] = ("a priori rounding-error bound, exact where it "
                                                  "cannot decide")
        if res.first_disagreement is not None:
            d = res.first_disagreement
            report["counterexample"] = {"kind": "disagreement", "sequence": list(d.sequence),
                                        "expected": d.expected, "got": d.got,
                                        "attended": list(d.attended), "Z": list(d.Z)}
    failed = settle_verdict(report, witness_given=bool(args.witness), failed=failed,
                            construction_error=construction_error)
    if report["verdict"] == "assumptions-fail":
        report["counterexample"] = _assumption_counterexample(model, tid, failed)
    if args.out:
        wd = None
        if witness is not None:
            wd = witness.as_dict()
            wd["H_star"] = list(H_star)
        save_instance(model, args.out, witness=wd, meta={"theorem": tid, "instance": instance})
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
    from .render import console, print_header

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
        out.print(f"sequences ({s['how']}, length {s['length']}): {s['checked']} possible, {s['in_R']} in R "
                  f"({100 * s['share_in_R']:.1f}%), {s['agree']}/{s['in_R']} agree with F* on R; "
                  f"{s['outside_R']} outside R not counted; ties mu.p = 0 in R: {s['ties']}; "
                  f"attended set = Z on {s['attended_is_Z']}"
                  + (f"; decided by: {', '.join(f'{k} {v}' for k, v in s['decided_by'].items())}"
                     if s.get("decided_by") else "")
                  + ("" if s["certified"] else " [uncertified float verdicts]"))
    ce = result.get("counterexample")
    if ce:
        out.print(f"[bold]counterexample[/bold] ({ce['kind']}):")
        if ce["kind"] == "disagreement":
            out.print(f"  sequence {ce['sequence']}: F*(x) = {ce['expected']} but F(x) = {ce['got']} "
                      f"(attended {ce['attended']}, Z = {ce['Z']})")
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
