"""``claim: "theorem"`` for memory-augmented HMMs: Theorems 4.3 (an attention head on
``G_1(∅, x)``), 4.6 (one memory cell, a prompt and an attention head) and C.6 (several cells).

The claim is about the set ``R`` of sequences with a position ``i`` whose ``tau_i`` is
supported on ``H*`` (the witness's ``H*``, which must satisfy the theorem's non-degeneracy
assumption, re-derived with exact ranks). For every listed sequence the checker recomputes
membership in ``R`` and the positions ``Z``, and for those in ``R`` the task scores
``mu . P[M_j* | x]``, the attention scores, the positions attended and the head's output.
``verified`` (``covers: "listed"`` only): ``F = F*`` on the listed sequences in ``R``, every
label occurring among them; nothing is claimed outside ``R`` or beyond the listed sequences.
``refuted``: a listed sequence in ``R`` with ``F != F*`` (the witness is refuted, not the
theorem). ``assumptions-fail``: :mod:`.assumptions`.
"""

from __future__ import annotations

from fractions import Fraction

from .assumptions import assumption_state, failing_text, memory_assumptions, nondegenerate
from .exact import label, scaled, scaled_rows
from .fields import (distinct_rows, field, indices, known_keys, labels_printed, listed_rows, matrix, prompt_vector, same_ints,
                     same_value, tokens, vector)
from .outcomes import Accepted, Rejected, Unreadable, Vacuous
from .theorems import ORIGIN, THEOREMS
from .work import METER, digits, fraction_ops, int_ops

__all__ = ["memory_theorem"]


def memory_theorem(cert, theorem, inst):
    verdict = field(cert, "verdict", "certificate")
    held, H_asm = memory_assumptions(inst, field(cert, "assumptions", "certificate"), theorem)
    state, all_hold = assumption_state(held, theorem)
    if verdict == "assumptions-fail":
        failing = [name for name, h in held.items() if not h]
        if not failing:
            raise Rejected("assumptions-fail: every assumption of the theorem holds (re-derived)")
        return Accepted(f"accepted: Theorem {theorem} assumptions-fail: {failing_text(held)} (re-derived; {state})")
    if verdict not in ("verified", "refuted"):
        raise Unreadable(f"verdict {str(verdict)[:40]!r}: expected verified, refuted or assumptions-fail")
    w = field(cert, "witness", "certificate")
    known_keys(w, ("q", "Theta_K", "beta", "Theta_V", "b", "u", "H_star", "source", "notes"), "witness")
    source = field(w, "source", "witness")
    if source not in ("construction", "given"):
        raise Unreadable("witness.source: expected \"construction\" or \"given\"")
    n, X = inst.n, inst.m
    q = vector(field(w, "q", "witness"), n + 1, "witness.q")
    K = matrix(field(w, "Theta_K", "witness"), n + 1, X, "witness.Theta_K")
    beta_rows = listed_rows(field(w, "beta", "witness"), "witness.beta")
    if not beta_rows:
        raise Unreadable("witness.beta: expected at least one row of |H| + 1 rationals")
    beta = matrix(beta_rows, len(beta_rows), n + 1, "witness.beta")
    V = matrix(field(w, "Theta_V", "witness"), inst.M * n, X, "witness.Theta_V")
    raw = field(w, "b", "witness")
    heads = ([vector(raw, inst.M * n, "witness.b")] if inst.binary
             else matrix(raw, len(inst.mu_rows), inst.M * n, "witness.b"))
    u = field(w, "u", "witness")
    if (u is None) != (theorem == "4.3"):
        raise Rejected("witness.u: Theorem 4.3 reads no prompt; Theorems 4.6 and C.6 need one")
    if u is not None:
        u = prompt_vector(u, inst.L, "witness.u")
    H_star = indices(field(w, "H_star", "witness"), n, "witness.H_star")
    name = THEOREMS[theorem][1][1]
    if H_asm is None:
        nondegenerate(inst, theorem, H_star, name, "witness.H_star")
        if name not in held:         # the certificate lists no entry for it, but the witness's H* satisfies it
            held = {**held, name: True}
            state, all_hold = assumption_state(held, theorem, {name: "shown with the witness's H*"})
    elif H_star != H_asm:                    # another set: it must satisfy the assumption too
        nondegenerate(inst, theorem, H_star, name, "witness.H_star")
    if field(cert, "covers", "certificate") != "listed":
        raise Unreadable("covers: a memory-theorem certificate covers the listed sequences")
    rows = listed_rows(field(cert, "sequences", "certificate"), "sequences")
    seqs = [tokens(field(r, "x", f"sequences[{k}]"), X, f"sequences[{k}].x") for k, r in enumerate(rows)]
    rows, seqs, repeated = distinct_rows(rows, seqs)
    inst.budget(seqs)
    outside = [0 if h in H_star else 1 for _ in inst.configs for h in range(n)]
    bad, in_R, seen = [], [], set()
    (qi, Dq), (Ki, DK), (Vi, DV), (bi, Db), (betai, Dbeta) = (scaled(q), scaled_rows(K), scaled_rows(V),
                                                                scaled_rows(heads), scaled_rows(beta))
    vdigits = max(digits(v.numerator) + digits(v.denominator) for block in (q, *K, *V, *heads, *beta) for v in block)
    for k, (row, seq) in enumerate(zip(rows, seqs)):
        where = f"sequences[{k}]"
        known_keys(row, ("x", "in_R", "Z", "task_margin", "head_output", "attended", "F_star", "F") if inst.binary
              else ("x", "in_R", "Z", "attended", "F_star", "F"), where)
        plain = [inst.lifted_emission(z) for z in seq]
        joint, taus = inst.messages(plain)
        possible = sum(joint) > 0
        Z = [i for i, t in enumerate(taus) if possible and sum(t) > 0
             and sum(o * v for o, v in zip(outside, t)) == 0]
        member = bool(Z)
        if field(row, "in_R", where) is not member or not same_ints(field(row, "Z", where), Z):
            raise Rejected(f"{where}: x in R is {member} with positions Z = {Z[:20]} (tau_i supported on H*), "
                           "not as printed")
        if not member:
            continue
        in_R.append(seq)
        stars = inst.task_scores(joint)
        if u is None:
            head_taus, values = taus, [inst.flat_emission(z) for z in seq]
        else:
            head_taus = inst.messages([scaled(u)[0]] + plain)[1]
            values = [inst.phi(u)] + [inst.flat_emission(z) for z in seq]
        size = max(digits(max(t)) for t in head_taus) + digits(inst.DW)
        positions = len(head_taus)
        METER.charge(int_ops(positions * (X * (n + 1 + inst.M * n) + inst.M * n * (len(heads) + 1)), size, vdigits)
                     + fraction_ops(positions * (1 + len(heads)), size + vdigits),
                     f"{where}: the attention head (Theta_K, Theta_V, b)")
        scores, outs = [], []
        for i, (tau, v) in enumerate(zip(head_taus, values)):
            # in integers: Gbar = G / N, and each witness matrix over its own denominator; one
            # fraction per score and per output (exact: the denominators are positive)
            G, N = inst.gbar_ints(tau)
            N = N or 1
            brow = betai[min(i, len(betai) - 1)]
            vi, Dv = scaled(v)
            KG = [sum(k * x for k, x in zip(Kr, G) if k) for Kr in Ki]
            scores.append(Fraction(sum(qr * (kg * Dbeta + br * DK * N) for qr, kg, br in zip(qi, KG, brow)),
                                   Dq * DK * Dbeta * N))
            VG = [sum(a * x for a, x in zip(Vr, G) if a) * vr if vr else 0 for Vr, vr in zip(Vi, vi)]
            outs.append([Fraction(sum(c * w for c, w in zip(bc, VG) if c), Db * Dv * DV * N) for bc in bi])
        top = max(scores)
        attended = [i for i, s in enumerate(scores) if s == top]
        head = [sum(outs[i][c] for i in attended) / len(attended) for c in range(len(heads))]
        if inst.binary:
            star, out = stars[0], head[0]
            same_value(field(row, "task_margin", where), star.numerator, star.denominator, f"{where}.task_margin",
                  "the task margin mu . P[M_j* | x]")
            same_value(field(row, "head_output", where), out.numerator, out.denominator, f"{where}.head_output",
                  "the attention output")
        if not same_ints(field(row, "attended", where), attended):
            raise Rejected(f"{where}: the head attends to {attended[:20]}, not as printed")
        s_label, h_label = label(stars, inst.binary), label(head, inst.binary)
        labels_printed(row, s_label, h_label, where)
        seen.add(s_label)
        if s_label != h_label:
            if verdict == "verified":
                raise Rejected(f"{where}: F(x) = {h_label} disagrees with F*(x) = {s_label} on x = {list(seq)[:20]} in R")
            bad.append(k)
    who = f"the witness (attention head{'' if u is None else ' and prompt'}; {ORIGIN[source]})"
    if verdict == "refuted":
        if not bad:
            raise Rejected("refuted: no listed sequence in R has F(x) != F*(x)")
        x = list(seqs[bad[0]])
        if all_hold:
            return Accepted(f"accepted: Theorem {theorem} refuted: its assumptions hold (re-derived: {state}), and {who} "
                    f"disagrees with F* on x = {x[:20]} in R (the witness is refuted, not the theorem)")
        return Accepted(f"accepted: Theorem {theorem} refuted: {who} disagrees with F* on x = {x[:20]} in R; assumptions: "
                f"{state} (the witness is refuted, not the theorem)")
    classes = 2 if inst.binary else len(inst.mu_rows)
    if not in_R:
        raise Vacuous(f"no listed sequence lies in R ({len(seqs)} listed): the claim is about nothing")
    if len(seen) < classes:
        raise Vacuous(f"{len(in_R)} listed sequences lie in R and none has F*(x) = {min(set(range(classes)) - seen)}: "
                      "the claim could not have failed on that label")
    said = f", {repeated} repeated row{'s' if repeated > 1 else ''} counted once" if repeated else ""
    return Accepted(f"accepted: Theorem {theorem} verified: {who} gives "
                    f"F(x) = F*(x) on the {len(in_R)} listed sequences in R (of {len(seqs)} distinct listed{said}, "
                    f"membership recomputed); assumptions re-derived: {state}", covers=in_R)
