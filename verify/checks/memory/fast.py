"""The float kernel of the memory checker: decisions from scaled float messages, proven by the
a priori bound of :mod:`models.inference.bounds` (certified mode) or not (float mode); what the
bound cannot decide is redone exactly (:func:`.decisions.exact_decisions`)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ....models.inference import bounds as ib
from ....models.inference import floats as iff
from ....models.hmm.values import MemoryHMM
from ....models.hmm.task import labels
from ..margins import ratio_with_bound
from .decisions import Functionals, MemoryDecision, exact_decisions

__all__ = ["fast_decisions", "FLOAT_TIE_TOLERANCE"]

FLOAT_TIE_TOLERANCE = 1e-9

CHUNK_ENTRIES = 1 << 22
"""Sequences go through the float kernel in batches of at most this many ``position x sequence x
lifted state`` entries (32 MiB per float array), so memory stays bounded at any sequence count."""

def _rational(ints, scale) -> list[Fraction]:
    return [Fraction(int(v), int(scale)) for v in ints]


class _FloatHead:
    """The witness's functionals over lifted states as split float rows for the float kernel,
    with the exact constants the certified argmax needs (see :func:`fast_decisions`)."""

    def __init__(self, mhmm: MemoryHMM, fn: Functionals, prompt_u):
        lifted = mhmm.lift()
        key = _rational(fn.key, fn.key_scale)
        # reference key value: the largest on H* (where the construction's key is constant; with a
        # prompt, on the lifted states the prompt keeps), so
        # that score_i = kappa + q.beta_i + (E+_i - E-_i) / N_i with E+- = (key - kappa)+- . tau_i
        # both exactly 0 when tau_i lives where key = kappa
        kept = [True] * len(key) if prompt_u is None else [Fraction(v) != 0 for v in prompt_u]
        on = [k for k, o, keep in zip(key, fn.outside, kept) if not o and keep]
        self.kappa = max(on) if on else max(key)
        X = mhmm.num_tokens
        values = [_rational(fn.value[z], fn.value_scale[z]) for z in range(X)]
        if fn.prompt_value is not None:
            values.append(_rational(*fn.prompt_value))
        rows = ([[Fraction(v) for v in fn.outside], [k - self.kappa for k in key], list(fn.task)]
                + values)
        pos, neg, rmin, ok = ib.split_rows(rows)
        self.outside = pos[:, 0].copy()
        self.key_pos, self.key_neg = pos[:, 1].copy(), neg[:, 1].copy()
        self.task_pos, self.task_neg = pos[:, 2].copy(), neg[:, 2].copy()
        self.value_pos, self.value_neg = np.ascontiguousarray(pos[:, 3:]), np.ascontiguousarray(neg[:, 3:])
        table = ib.bound_chain(lifted).W
        if prompt_u is not None:
            u = ib.split_rows([[Fraction(v) for v in prompt_u]])[0][:, 0]
            ok = ok and bool(np.all((u == 0) | (u >= ib.SMALLEST_NORMAL)))
            table = np.vstack([table, u])
        self.chain = ib.bound_chain(lifted).with_table(table)
        self.usable = ok and self.chain.usable
        self.rmin = rmin
        L = lifted.num_states
        # underflow guard with rescaling at every step: tau entries (products of two messages)
        # times a functional, and their ratios to ||tau|| <= L, stay normal
        wmin = table[table > 0].min() if (table > 0).any() else 1.0
        self.floor = max(self.chain.floor_at(1), self.chain.floor_for(rmin * wmin),
                         float(np.sqrt(32 * ib.SMALLEST_NORMAL * L / rmin)))
        self.qbeta = [Fraction(v) for v in fn.q_beta]

    def constants(self, positions: int):
        """Per position: exact point values (zero norm: ``q.beta_i``; ``E+-_i = 0``:
        ``kappa + q.beta_i``) as ranks in their total order, and float enclosures."""
        qb = [self.qbeta[min(i, len(self.qbeta) - 1)] for i in range(positions)]
        vals = qb + [self.kappa + v for v in qb]
        order = sorted(set(vals))
        rank = np.array([order.index(v) for v in vals]).reshape(2, positions)
        f = np.array([float(v) for v in vals])
        lo = np.nextafter(f, -np.inf).reshape(2, positions)
        hi = np.nextafter(f, np.inf).reshape(2, positions)
        return rank, lo, hi


def fast_decisions(mhmm, witness, fn: Functionals, seqs, evaluate_outside_R, certified: bool,
                   margins: bool = False, progress=None):
    """Decisions from the float kernel, grouped by length; certified ones are proven by the a
    priori bound (:mod:`models.inference_bounds`) or redone exactly.

    Per position ``i`` of the head's input, with ``tau_i`` from the kernel (``N_i = ||tau_i||``,
    ``E+-_i = (key - kappa)+- . tau_i >= 0``, ``kappa`` the largest key on ``H*``):
    ``score_i = kappa + q.beta_i + (E+_i - E-_i) / N_i``, exactly ``q.beta_i`` when ``N_i = 0``
    and exactly ``kappa + q.beta_i`` when ``E+_i = E-_i = 0`` (zeros are exact, item 6): such *point* scores are compared
    exactly (ranks of rationals), the others as intervals. The attended set is certified when
    every position whose upper bound reaches the largest lower bound is a point (the set is
    then the points of the top rank) or when only one position does. ``Attn``'s sign is the
    sign of ``sum_att (v+ . tau_i) / N_i - sum_att (v- . tau_i) / N_i``, a difference of two
    nonnegative sums; ``F*``'s is that of ``(task+ - task-) . alpha_{t-1}``.
    """
    head = _FloatHead(mhmm, fn, witness.u)
    chain = head.chain
    prompt = witness.u is not None
    X = mhmm.num_tokens
    L = chain.num_states
    path = "bound" if certified else "float (uncertified)"
    groups: dict[int, list[int]] = {}
    for k, s in enumerate(seqs):
        groups.setdefault(len(s), []).append(k)
    out: list = [None] * len(seqs)
    chunk = max(1, CHUNK_ENTRIES // (L * max(groups, default=1)))      # bounded memory: [t, n, L] arrays
    batches = [(t, where[i:i + chunk]) for t, where in sorted(groups.items()) for i in range(0, len(where), chunk)]
    for t, where in batches:
        tokens = np.array([seqs[k] for k in where], dtype=np.int64)          # [n, t]
        n = len(where)
        idx = np.ascontiguousarray(tokens.T)
        plain = iff.scaled_messages(chain.A, chain.AT, chain.pi0, chain.W, idx, track=certified, every=1)
        tau = plain["pre"] * plain["beta"]                                    # [t, n, L]
        mass = tau.sum(axis=2)
        Z = (mass > 0) & (tau @ head.outside == 0)                           # [t, n], exact zeros
        alpha = plain["alpha"]
        possible = alpha.sum(axis=1) > 0
        sP, sN = alpha @ head.task_pos, alpha @ head.task_neg
        if prompt:
            idx_p = np.vstack([np.full((1, n), X), idx])
            run = iff.scaled_messages(chain.A, chain.AT, chain.pi0, chain.W, idx_p, track=certified, every=1)
            tau_h = run["pre"] * run["beta"]
            col = np.vstack([np.full((1, n), X), idx])                        # value row per position
        else:
            run, tau_h, col = plain, tau, idx
        th = tau_h.shape[0]
        N = tau_h.sum(axis=2)                                                 # [th, n]
        Ep, En = tau_h @ head.key_pos, tau_h @ head.key_neg
        Vp = np.take_along_axis(tau_h @ head.value_pos, col[:, :, None], axis=2)[:, :, 0]
        Vn = np.take_along_axis(tau_h @ head.value_neg, col[:, :, None], axis=2)[:, :, 0]
        live = N > 0
        safeN = np.where(live, N, 1.0)
        rp, rn = Ep / safeN, En / safeN
        p, q = np.where(live, Vp / safeN, 0.0), np.where(live, Vn / safeN, 0.0)
        rank, plo, phi = head.constants(th)
        qb = np.array([float(head.qbeta[min(i, len(head.qbeta) - 1)]) for i in range(th)])[:, None]
        kappa = float(head.kappa)
        if not certified:
            score = np.where(live, kappa + qb + rp - rn, qb)
            top = score.max(axis=0)
            att = score >= top - FLOAT_TIE_TOLERANCE * (1 + np.abs(top))
            S = (att * (p - q)).sum(axis=0)
            star = sP - sN
            got, expected, tie, ok = labels(S) == 1, labels(star) == 1, star == 0, np.ones(n, dtype=bool)
        else:
            cnt = np.array([ib.forward_count(i, L) + ib.backward_count(th - 1 - i, L) + 1 for i in range(th)])
            k_ratio = int(2 * cnt.max() + 2 * L + 2)
            point_zero, point_d = ~live, live & (Ep == 0) & (En == 0)
            is_point = point_zero | point_d
            r, rmag = rp - rn, rp + rn
            e = ib.ratio_error_factor(k_ratio) * rmag
            c_lo = np.nextafter(kappa + qb, -np.inf)                          # float enclosure of kappa + q.beta_i
            c_hi = np.nextafter(kappa + qb, np.inf)
            c_lo = ib.round_down(c_lo, np.abs(kappa) + np.abs(qb))
            c_hi = ib.round_up(c_hi, np.abs(kappa) + np.abs(qb))
            lo = ib.round_down(c_lo + r - e, np.abs(c_lo) + rmag + e)
            hi = ib.round_up(c_hi + r + e, np.abs(c_hi) + rmag + e)
            lo = np.where(point_zero, plo[0][:, None], np.where(point_d, plo[1][:, None], lo))
            hi = np.where(point_zero, phi[0][:, None], np.where(point_d, phi[1][:, None], hi))
            rk = np.where(point_zero, rank[0][:, None], np.where(point_d, rank[1][:, None], -1))
            cand = hi >= lo.max(axis=0)
            single = cand.sum(axis=0) == 1
            points = ~(cand & ~is_point).any(axis=0)
            top_rank = np.where(cand, rk, -1).max(axis=0)
            att = np.where(single, cand, cand & (rk == top_rank))
            head_ok = single | points
            Sp, Sq = (att * p).sum(axis=0), (att * q).sum(axis=0)
            S_sign, S_ok, S_bound = ib.certified_signs(Sp, Sq, k_ratio + th)
            star_sign, star_ok, star_bound = ib.certified_signs(sP, sN, ib.forward_count(t - 1, L) + 3 + L)
            got, expected, tie = labels(S_sign) == 1, labels(star_sign) == 1, star_sign == 0
            guard = np.minimum(plain["minpos"], run["minpos"]) >= head.floor
            need_head = possible & (Z.any(axis=0) | evaluate_outside_R)
            ok = guard & head.usable & (~need_head | (head_ok & S_ok & star_ok))
            if margins:         # values with bounds; a sign the bound cannot prove is redone exactly
                asum = alpha.sum(axis=1)
                task_v, task_e = ratio_with_bound(sP - sN, star_bound, asum,
                                                  ib.forward_count(t - 1, L) + 3 + L)
                natt = np.maximum(att.sum(axis=0), 1)
                head_v, head_e = ratio_with_bound(Sp - Sq, S_bound, natt.astype(float), 0)
        for r_, k in enumerate(where):
            if not ok[r_]:
                continue
            z = tuple(int(i) for i in np.flatnonzero(Z[:, r_])) if possible[r_] else ()
            d = MemoryDecision(seqs[k], bool(possible[r_]), z, certified_by=path)
            if possible[r_] and (z or evaluate_outside_R):
                d.expected, d.tie = int(expected[r_]), bool(tie[r_])
                d.got, d.attended = int(got[r_]), tuple(int(i) for i in np.flatnonzero(att[:, r_]))
                if margins and certified:
                    d.float_margins = (float(task_v[r_]), float(task_e[r_]), float(head_v[r_]), float(head_e[r_]))
            out[k] = d
        if progress is not None:
            progress(len(where))
    redo = [k for k, d in enumerate(out) if d is None]
    if redo:
        from ...runtime.cost import check_fallback

        check_fallback(len(redo), max(len(seqs[k]) for k in redo), mhmm.lift().num_states, memory=True,
                       model=mhmm)
    for k, d in zip(redo, exact_decisions(mhmm, witness, fn, [seqs[k] for k in redo], evaluate_outside_R,
                                          margins=margins)):
        d.certified_by = "exact-fallback"
        out[k] = d
    return out

