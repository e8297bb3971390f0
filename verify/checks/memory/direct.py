"""The slow, direct route of the memory checker (:func:`decide_direct`, for cross-checks and
counterexamples) and the exact identities that prove ``F = F*`` on all of ``R`` at once
(:func:`identity_check`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

from ....constructions.witnesses import AttentionWitness
from ....models.inference.attention import attention
from ....models.inference import exact as ie
from ....models.hmm.values import MemoryHMM
from ....models.hmm.task import class_label, is_multiclass, is_tie, label, task_margin, task_scores
from .decisions import MemoryDecision, class_rows

__all__ = ["decide_direct", "identity_check"]


def decide_direct(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int],
                  tokens: Sequence[int]) -> MemoryDecision:
    """The same decision the general way: ``G_i`` from ``ie.memory_gbar`` / ``ie.prompt_gbar``,
    ``R`` from ``tau_i`` of the lifted chain per position, the head from
    :func:`constructions.memory.attention`, ``F*`` from ``memory_posterior``."""
    seq = tuple(tokens)
    lifted = mhmm.lift()
    n = mhmm.num_states
    possible = ie.posterior_h0(lifted, seq) != [0] * lifted.num_states
    emb = [list(mhmm.emission_matrix()[z]) for z in seq]
    Z = []
    if possible:
        for i in range(len(seq)):
            t = ie.tau(lifted, [list(lifted.W[z]) for z in seq], i)
            if sum(t) > 0 and all(v == 0 for k, v in enumerate(t) if (k % n) not in set(H_star)):
                Z.append(i)
    d = MemoryDecision(seq, bool(possible), tuple(Z), certified_by="exact (direct)")
    if not possible:
        return d
    post = ie.memory_posterior(mhmm, seq)
    if is_multiclass(mhmm.mu):          # k classes: argmax of the exact scores (no single margin)
        stars = task_scores([[Fraction(m) for m in row] for row in mhmm.mu], post)
        top = sorted(stars)[-2:]
        d.expected, d.tie = class_label(stars), top[0] == top[1]
    else:
        star = task_margin([Fraction(m) for m in mhmm.mu], post)
        d.expected, d.tie, d.task_margin = label(star), is_tie(star), star
    if witness.u is None:
        G = [ie.memory_gbar(mhmm, emb, i) for i in range(len(seq))]
        values = emb
    else:
        G = [ie.prompt_gbar(mhmm, witness.u, seq, i) for i in range(len(seq) + 1)]
        values = [ie.reverse_lift(mhmm, [Fraction(v) for v in witness.u])] + emb
    if is_multiclass(mhmm.mu):
        outs = [attention(w, G, values) for _, w in class_rows(mhmm, witness)]
        d.got, d.attended = class_label([Fraction(r.output) for r in outs]), outs[0].attended
        return d
    res = attention(witness, G, values)
    d.got, d.attended, d.head_margin = label(res.output), res.attended, Fraction(res.output)
    return d


# ---------------------------------------------------------------- an identity for all x

def identity_check(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int]) -> dict:
    """Exact identities on the emission columns that prove ``F = F*`` on all of ``R`` at once.

    With ``a_(m,h) = (Theta_K^T q) . W_(m,h)`` and ``g_z = Theta_V^T (b ⊙ e(z))``, over the
    relevant columns ``Omega`` (every ``(m, h)`` for Theorem 4.3; for a prompt, ``m in M_u`` in
    the target cell and every ``m`` elsewhere):

    (K) ``a_(m,h) = kappa`` on ``H*`` and ``< kappa`` off ``H*``, ``q . beta_i`` equal for the
        read positions (all for 4.3; positions ``>= 2`` with a prompt), and for a prompt
        ``max(0, max_x (Theta_K^T q)_x) + q . beta_1 < min(0, min a) + q . beta_2``;
    (V) ``g_z . W_(m,h) = lambda mu_m W[z, m, h] 1(h in H*)`` for one ``lambda > 0`` (for 4.3
        only ``h in H*`` is needed);
    (U) for a prompt: ``u = 1(m_j* in M_u)`` with ``supp(mu) ⊆ M_u``, and ``P[H_0] = A P[H_0]``.

    Then the head attends exactly to ``Z`` (shifted by one with a prompt; Claim C.12) and
    ``V_i = lambda r_i mu . P[M_j* | X = x]`` with ``r_i > 0`` there (Lemmas C.4 / C.13), or
    every value is 0 and ``mu . P = 0`` when the prompt makes ``xhat`` impossible (Claim C.15).
    """
    n, X, M = mhmm.num_states, mhmm.num_tokens, mhmm.memory_values
    j = mhmm.target_cell
    Hs = set(H_star)
    # (V) holds row by row with one lambda for every class when mu has k rows
    b_all = np.asarray(witness.b, dtype=object)
    b_rows = list(b_all) if is_multiclass(mhmm.mu) else [b_all]
    mu_rows = list(mhmm.mu) if is_multiclass(mhmm.mu) else [mhmm.mu]
    q = np.asarray(witness.q, dtype=object)
    key = np.asarray(witness.Theta_K, dtype=object).T.dot(q)
    Wf = mhmm.emission_matrix()
    prompt = witness.u is not None
    why = []
    M_u = set(range(M))
    if prompt:
        configs = mhmm.memory_configurations()
        u = [Fraction(v) for v in witness.u]
        M_u = {ms[j] for c, ms in enumerate(configs) if u[c * n] == 1}
        expect = [Fraction(1) if ms[j] in M_u else Fraction(0) for ms in configs for _ in range(n)]
        if u != expect:
            why.append("u is not the 0/1 indicator of a set of values of m_j* (eq. C.6's form)")
        if any(row[m] != 0 and m not in M_u for row in mu_rows for m in range(M)):
            why.append("supp(mu) is not inside the set the prompt keeps")
        if list(mhmm.A.dot(mhmm.pi0)) != list(mhmm.pi0):
            why.append("P[H_0] is not stationary (Assumption 4.4), so Proposition C.8 is unavailable")
    omega = [(m, h) for h in range(n) for m in range(M) if mhmm.cell_of(h) != j or m in M_u]
    a = {(m, h): key.dot(Wf[:, m * n + h]) for m, h in omega}
    on = {a[c] for c in omega if c[1] in Hs}
    kappa = next(iter(on)) if len(on) == 1 else None
    if kappa is None:
        why.append("q . Theta_K W_(m,h) is not one constant on H*")
    elif any(a[c] >= kappa for c in omega if c[1] not in Hs):
        why.append("q . Theta_K W_(m,h) is not below its H* value off H*")
    qb = [q.dot(r) for r in witness.beta]
    read = qb[1:] if prompt else qb
    if prompt and len(qb) == 1:
        read = qb
    if len(set(read)) > 1:
        why.append("q . beta_i differs between read positions")
    if prompt and read:
        lo = min([Fraction(0)] + list(a.values())) + read[0]
        hi = max([Fraction(0)] + list(key)) + qb[0]
        if not hi < lo:
            why.append(f"the prompt position's score can reach {hi}, not below {lo}")
    ThV_T = np.asarray(witness.Theta_V, dtype=object).T
    lam = None
    ratios, bad = set(), False
    for (b, mu), z in ((pair, z) for pair in zip(b_rows, mu_rows) for z in range(X)):
        g = ThV_T.dot(b * Wf[z])
        for m, h in omega:
            if not prompt and h not in Hs:
                continue
            lhs = g.dot(Wf[:, m * n + h])
            rhs = Fraction(mu[m]) * mhmm.W[z, m, h] * (1 if h in Hs else 0)
            if rhs == 0:
                bad |= lhs != 0
            else:
                ratios.add(lhs / rhs)
    if bad or len(ratios) > 1 or (ratios and next(iter(ratios)) <= 0):
        why.append("b . ((Theta_V W_(m,h)) ⊙ e(z)) is not a positive multiple of mu_m W[z,m,h] on H*")
    elif ratios:
        lam = next(iter(ratios))
    else:
        lam = Fraction(1)
    holds = not why
    if holds:
        what = (f"exact identities hold: q.Theta_K W_(m,h) = {kappa} on H* and less off it, equal q.beta on the "
                f"read positions; b.((Theta_V W_(m,h)) ⊙ e(z)) = {lam} mu_m W[z,m,h] on H*"
                + ("; u = 1(m_j* in supp-set ⊇ supp(mu)), P[H_0] stationary" if prompt else "")
                + "; hence F = F* on every x in R (Lemmas C.2/C.4" + (", C.9/C.13)" if prompt else ")"))
    else:
        what = "; ".join(why) + "; agreement then rests on the sequences checked alone"
    return {"holds": holds, "what": what}
