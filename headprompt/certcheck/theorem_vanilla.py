"""``claim: "theorem"`` for vanilla HMMs: Theorem 3.3 (a linear head on ``G_1(∅, x)``) and
Theorem 3.6 (a prompt ``u`` in ``[0, 1]^|H|`` and a linear head on ``Gbar_2(u, e(∅), e(x))``).

Verdicts. ``verified`` with ``covers: "identity"``: the witness gives ``F = F*`` on **every**
``x`` with ``Pr(x) > 0``; with ``covers: "listed"``: on the listed sequences with
``Pr(x) > 0`` only, every class occurring among them. ``refuted``: the witness disagrees with
``F*`` on a listed sequence with ``Pr(x) > 0`` (it refutes that witness, not the theorem).
``assumptions-fail``: an assumption fails (:mod:`.assumptions`), with optional Motzkin
certificates (:mod:`.no_linear_head`).

Soundness of the identity. The checker verifies ``(W^T b_c)[h] pre[h] = lambda mu_c[h] pi0[h]``
for every class ``c`` and state ``h`` with one ``lambda > 0``, exactly (``pre = A pi0`` for 3.3,
``A (u ⊙ A pi0)`` for 3.6). With ``beta[h] = P[X_{1:T} = x | previous state h]`` (the read
position's backward message is ``H_0``'s: the chain is time-homogeneous) and
``tau = pre ⊙ beta``, ``b_c . W tau = sum_h (W^T b_c)[h] pre[h] beta[h] = lambda sum_h mu_c[h]
pi0[h] beta[h] = lambda Pr(x) mu_c . P[H_0 | x]``. Dividing by ``||tau||_1 > 0`` keeps every sign
and order; ``||tau||_1 = 0`` makes every head score 0 and then every task score is 0 as well
(ties: label 1, or the largest class), so ``F = F*`` for every ``x``.

A witness labelled ``"construction"`` is recomputed from the certified Moore-Penrose left
inverse as the paper's proofs build it (:func:`is_construction`); a provable mismatch is a
false claim (rejected), an undecidable one is reported "as its writer says".
"""

from __future__ import annotations

from fractions import Fraction

from .assumptions import assumption_state, vanilla_assumptions
from .exact import label, scaled, scaled_rows
from .fields import (distinct_rows, field, known_keys, labels_printed, listed_rows, matrix, of_list, prompt_vector, rational,
                     same_value, tokens, vector)
from .no_linear_head import vanilla_motzkin
from .outcomes import Accepted, Rejected, Unreadable, Vacuous
from .theorems import ORIGIN
from .work import LIMITS, METER, digits, int_ops, matrix_work

__all__ = ["is_construction", "head_on_states", "vanilla_theorem"]


def is_construction(inst, theorem, b_rows, u) -> bool | None:
    """Whether the witness is exactly the paper's construction (SPEC section 1's reading), from
    the re-derived left inverse: 3.3 ``b_c = mu_c^T diag(P[H_0] / P[H_1]) W^+``; 3.6 ``u = 1_B``
    and ``b_c = mu_c,H*^T diag(P[H_0] / c)_H* (W_:,H*)^+`` with ``c = A (u ⊙ P[H_1])``. The left
    inverse must be the Moore-Penrose one: ``W_S L`` symmetric (with ``L W_S = I``). ``None``
    when this cannot be decided from the certificate: no left inverse, one that is not the
    Moore-Penrose one, a prompt that is not ``1_B`` for the certificate's ``B`` (the
    construction with another basis set), a zero divisor, or too much work."""
    if theorem == "3.3" and "3.1" in inst.evidence:
        states, L = inst.evidence["3.1"]
        c = inst.pre("3.3", None)
    elif theorem == "3.6" and "3.5" in inst.evidence:
        states, L, B = inst.evidence["3.5"]
        if u != [Fraction(int(h in B)) for h in range(inst.n)]:
            return None
        c = inst.pre("3.6", u)
    else:
        return None
    k = len(states)
    if any(c[h] == 0 or inst.pi0[h] == 0 for h in states) or k * k * inst.m > LIMITS["matrix_work"]:
        return None
    # Moore-Penrose: with L W_S = I, W_S L is symmetric iff G L = W_S^T for G = W_S^T W_S (then
    # L = G^-1 W_S^T; conversely a symmetric idempotent W_S L is the orthogonal projection onto
    # the columns of W_S, so W_S^T W_S L = W_S^T). k x k x |X| work: no |X| x |X| matrix is built.
    Li, DL = scaled_rows(L)
    METER.charge(int_ops(k * k * inst.m * 2 + k * inst.m * len(inst.mu), digits(DL) + inst.wdigits, digits(DL)),
                 "recognising the construction")
    cols = [[inst.Wint[x][h] for x in range(inst.m)] for h in states]
    G = [[sum(a * b for a, b in zip(cols[i], cols[j]) if a) for j in range(k)] for i in range(k)]
    for i in range(k):
        for y in range(inst.m):
            if sum(G[i][j] * Li[j][y] for j in range(k) if G[i][j]) != cols[i][y] * inst.DW * DL:
                return None
    for mu, b in zip(inst.mu, b_rows):
        coeff, Dc = scaled([mu[h] * inst.pi0[h] / c[h] for h in states])
        for x in range(inst.m):
            if sum(a * Li[i][x] for i, a in enumerate(coeff) if a) * b[x].denominator != b[x].numerator * Dc * DL:
                return False
    return True


def head_on_states(inst, witness, theorem, where):
    """``(L rows, denominator factor, pre ints)``: head scores are ``sum_h L_c[h] beta[h]`` over
    ``Db DW sum_h pre[h] beta[h]``, with ``L_c = (W^T b_c) ⊙ pre`` in integers."""
    k = len(inst.mu)
    raw = field(witness, "b", where)
    b = [vector(raw, inst.m, f"{where}.b")] if inst.binary else matrix(raw, k, inst.m, f"{where}.b")
    u = None
    if theorem == "3.3":
        if field(witness, "u", where) is not None:
            raise Rejected(f"{where}.u: Theorem 3.3 reads G_1(∅, x); its witness has no prompt")
    else:
        u = prompt_vector(field(witness, "u", where), inst.n, f"{where}.u")
    matrix_work(len(b), inst.n, inst.m, "the head read on the hidden states (W^T b)")
    pre, Dpre = scaled(inst.pre(theorem, u))
    bint, Db = scaled_rows(b)
    L = [[sum(bc[x] * inst.Wint[x][h] for x in range(inst.m) if bc[x]) * pre[h] for h in range(inst.n)]
         for bc in bint]
    return L, Db * inst.DW, pre, Dpre, (b, u)


def vanilla_theorem(cert, theorem, inst):
    verdict = field(cert, "verdict", "certificate")
    held = vanilla_assumptions(inst, field(cert, "assumptions", "certificate"), theorem)
    state, all_hold = assumption_state(held, theorem)
    if verdict == "assumptions-fail":
        failing = [name for name, h in held.items() if not h]
        if not failing:
            raise Rejected("assumptions-fail: every assumption of the theorem holds (re-derived)")
        motzkin = of_list(cert.get("motzkin", []), None, "motzkin", "certificates")
        claims = [vanilla_motzkin(inst, theorem, c, f"motzkin[{k}]") for k, c in enumerate(motzkin)]
        line = f"accepted: Theorem {theorem} assumptions-fail: Assumption {', '.join(failing)} fails (re-derived; {state})"
        if claims and theorem == "3.3":
            line += f"; {claims[0]}, so Theorem 3.3's conclusion fails on this instance"
        elif claims:
            line += "; " + "; ".join(claims[:3]) + (f"; and {len(claims) - 3} more prompts" if len(claims) > 3 else "")
        return Accepted(line)
    if verdict not in ("verified", "refuted"):
        raise Unreadable(f"verdict {str(verdict)[:40]!r}: expected verified, refuted or assumptions-fail")
    witness = field(cert, "witness", "certificate")
    known_keys(witness, ("b", "u", "source"), "witness")
    source = field(witness, "source", "witness")
    if source not in ("construction", "given"):
        raise Unreadable("witness.source: expected \"construction\" or \"given\"")
    L, Dhead, pre, Dpre, (b_rows, u) = head_on_states(inst, witness, theorem, "witness")
    covers = field(cert, "covers", "certificate")
    if covers not in ("identity", "listed"):
        raise Unreadable("covers: expected \"identity\" or \"listed\"")
    if covers == "identity":
        if verdict != "verified":
            raise Rejected("covers: an identity covers every sequence, so the verdict cannot be refuted")
        ident = field(cert, "identity", "certificate")
        known_keys(ident, ("lambda", "what"), "identity")
        lam = rational(field(ident, "lambda", "identity"), "identity.lambda")
        if lam <= 0:
            raise Rejected(f"identity: lambda = {lam} is not positive")
        left, right = inst.Dmu * inst.Dp * lam.denominator, lam.numerator * Dhead * Dpre
        for c, (Lc, Rc) in enumerate(zip(L, inst.R)):
            for h in range(inst.n):
                if Lc[h] * left != Rc[h] * right:
                    raise Rejected(f"identity: (W^T b{'' if inst.binary else f'_{c}'})[{h}] pre[{h}] is not "
                                   f"lambda mu[{h}] P[H_0 = {h}]")
    rows = listed_rows(field(cert, "sequences", "certificate"), "sequences")
    seqs = []
    for k, row in enumerate(rows):
        where = f"sequences[{k}]"
        known_keys(row, ("x", "task_margin", "head_margin", "task_scores", "head_scores", "F_star", "F"), where)
        seqs.append(tokens(field(row, "x", where), inst.m, f"{where}.x"))
    rows, seqs, repeated = distinct_rows(rows, seqs)
    seen, bad, possible = set(), [], set()
    Ldigits = max((digits(v) for Lc in L for v in Lc), default=1)
    for k, beta in inst.betas(seqs):
        row, where = rows[k], f"sequences[{k}]"
        tnum, tden = inst.task(beta)
        METER.charge(int_ops(inst.n * (len(L) + 1), digits(max(beta)), Ldigits), "the head's scores")
        norm = sum(p * b for p, b in zip(pre, beta) if p)
        hnum = [sum(a * b for a, b in zip(Lc, beta) if a) for Lc in L] if norm else [0] * len(L)
        hden = Dhead * norm
        if inst.binary:
            same_value(field(row, "task_margin", where), tnum[0], tden, f"{where}.task_margin", "the task margin mu . P[H_0 | x]")
            same_value(field(row, "head_margin", where), hnum[0], hden, f"{where}.head_margin", "the head margin b . G")
        else:
            for key, nums, den in (("task_scores", tnum, tden), ("head_scores", hnum, hden)):
                vals = of_list(field(row, key, where), len(nums), f"{where}.{key}")
                for c, (v, num) in enumerate(zip(vals, nums)):
                    same_value(v, num, den, f"{where}.{key}[{c}]", "the score")
        star, got = label(tnum, inst.binary), label(hnum, inst.binary)
        labels_printed(row, star, got, where)
        if tden == 0:
            continue
        seen.add(star)
        possible.add(tuple(seqs[k]))
        if star != got:
            if verdict == "verified":
                raise Rejected(f"{where}: F(x) = {got} disagrees with F*(x) = {star} on x = {list(seqs[k])[:20]}")
            bad.append(k)
    parts = "b" if theorem == "3.3" else "b, u"
    origin = ORIGIN[source]
    if source == "construction":
        status = is_construction(inst, theorem, b_rows, u)
        if status is False:           # a false claim about whose witness this is: never accepted
            raise Rejected("witness.source says \"construction\", but b is not the paper's construction "
                           "re-derived from the certified Moore-Penrose left inverse (say \"given\")")
        if status:
            origin = "the paper's construction, re-derived from the certified left inverse"
    who = f"the witness ({parts}; {origin})"
    if verdict == "refuted":
        if not bad:
            raise Rejected("refuted: no listed sequence with Pr(x) > 0 has F(x) != F*(x)")
        x = list(seqs[bad[0]])
        tail = (f"Theorem {theorem}'s assumptions hold (re-derived: {state}), and {who} disagrees with F* on "
                f"x = {x[:20]}{' ...' if len(x) > 20 else ''} (Pr(x) > 0)")
        if not all_hold:
            tail = f"{who} disagrees with F* on x = {x[:20]} (Pr(x) > 0); assumptions: {state}"
        return Accepted(f"accepted: Theorem {theorem} refuted: {tail} (the witness is refuted, not the theorem)")
    classes = 2 if inst.binary else len(inst.mu)
    if not seen:
        raise Vacuous(f"no listed sequence has Pr(x) > 0 ({len(seqs)} listed): the claim is about nothing")
    if len(seen) < classes:
        missing = sorted(set(range(classes)) - seen)
        raise Vacuous(f"no listed sequence with Pr(x) > 0 has F*(x) = {missing[0]}: the claim could not have "
                      "failed on that class")
    scope = ("every sequence x with Pr(x) > 0 (by the identity)" if covers == "identity"
             else f"the {len(possible)} listed sequences with Pr(x) > 0 (of {len(seqs)} listed)")
    said = f", {repeated} repeated row{'s' if repeated > 1 else ''} counted once" if repeated else ""
    return Accepted(f"accepted: Theorem {theorem} verified: {who} gives F(x) = F*(x) "
                    f"on {scope}, {len(seqs)} distinct sequences recomputed{said}, {classes} classes occur; "
                    f"assumptions re-derived: {state}", covers=possible, every=covers == "identity")
