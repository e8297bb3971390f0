"""The checker for Theorems 4.3, 4.6 and C.6: membership in ``R`` and ``F = F*`` per sequence.

It never trusts the builder: the witness is read as plain numbers ``(q, Theta_K, beta,
Theta_V, b[, u])`` and evaluated on the model outputs computed from the instance alone.

Set ``R`` (eq. 4.3): ``x in R`` iff ``Pr(X = x) > 0`` and some position ``i`` has
``supp(P[H_i | X_-i = x_-i]) ⊆ H*``. On the lifted chain ``Htil = (m_1..m_N, h)`` (SPEC
section 1), ``tau_i = pre_i ⊙ beta_i = P[Htil_i, X_-i = x_-i]`` up to one positive factor, so
``i`` qualifies iff ``sum over lifted states with h not in H* of tau_i`` is exactly 0 (and
``sum tau_i > 0``, implied by ``Pr(x) > 0``). Exact supports, integer arithmetic.

Head outputs. For a token functional ``f`` (length ``|X|``),
``f . Gbar_i = (W_lift^T f) . tau_i / ||tau_i||_1`` (SPEC: ``Gbar_i = W phi(tau_i) /
||phi(tau_i)||_1``, and ``phi`` sums over the other cells with the common factor
``|M|^-(N-1)`` which cancels), and ``Gbar_i = 0`` when the norm is 0. Hence

    score_i = (W_lift^T Theta_K^T q) . tau_i / ||tau_i|| + q . beta_i
    V_i     = (W_lift^T Theta_V^T (b ⊙ phi(v_i))) . tau_i / ||tau_i||

with ``v_i`` the (lifted) input embedding at position ``i``: ``eta(e(x_i))`` (so
``phi(v_i) = e(x_i)``) or the prompt ``u``. Theorem 4.3 reads ``(G_i(x), e(x_i))_{i=1..t}``;
Theorems 4.6/C.6 read ``(Gbar_i(ehat(x)), ehat_i(x))_{i=1..t+1}`` with ``ehat(x) = (u,
eta(e(x_1)), ..., eta(e(x_t)))``. ``Attn`` averages ``V_i`` over every maximizer of the score
(exact ties), ``F(x) = 1(Attn >= 0)``, ``F*(x) = 1(mu . P[M_j* | X = x] >= 0)``.

Sequences outside ``R`` are counted apart and never as a success or a failure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Iterable, Sequence

import flint
import numpy as np

from ....constructions.witnesses import AttentionWitness
from ....models.inference import bounds as ib
from ....models.inference.attention import attention
from ....models.inference import exact as ie
from ....models.inference import floats as iff
from ....models.exceptions import InputError, InternalError
from ....models.hmm.values import MemoryHMM
from ....models.inference.exact import integer_hmm, scaled_integer_vector
from ....models.hmm.task import class_label, is_multiclass, is_tie, label, labels, task_margin, task_scores

__all__ = ["MemoryDecision", "MemoryCheckResult", "check_sequences", "region_positions",
           "decide_direct", "identity_check", "FLOAT_TIE_TOLERANCE"]

FLOAT_TIE_TOLERANCE = 1e-9


@dataclass
class MemoryDecision:
    sequence: tuple[int, ...]
    possible: bool                  # Pr(X = x) > 0
    Z: tuple[int, ...]              # 0-based positions of x with supp P[H_i | X_-i] ⊆ H*
    expected: int | None = None     # F*(x)      (None when not evaluated)
    got: int | None = None          # F(x)
    attended: tuple[int, ...] = ()  # positions of the head's input averaged over
    tie: bool = False               # mu . P[M_j* | x] == 0
    certified_by: str = "exact"
    task_margin: Fraction | None = None   # mu . P[M_j* | x], exactly (decide_direct only)
    head_margin: Fraction | None = None   # the head's output before the threshold (decide_direct only)

    @property
    def in_R(self) -> bool:
        return self.possible and bool(self.Z)


@dataclass
class MemoryCheckResult:
    checked: int = 0                # sequences with Pr(x) > 0
    in_R: int = 0
    agree: int = 0                  # among in_R
    outside_support: int = 0
    outside_R: int = 0
    ties: int = 0                   # in R with mu . P = 0
    attended_is_Z: int = 0          # in R: attended set = Z (shifted by the prompt)
    decided_by: dict = field(default_factory=dict)      # path -> sequences it decided
    first_disagreement: MemoryDecision | None = None
    decisions: list = field(default_factory=list)


def _int_row(values) -> tuple[list[int], int]:
    return scaled_integer_vector([Fraction(v) for v in values])


class _Functionals:
    """Integer functionals over lifted states (each ``= ints / scale``, ``scale > 0``)."""

    def __init__(self, mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int]):
        lifted = mhmm.lift()
        W_lift = lifted.W                                            # |X| x L
        n, L = mhmm.num_states, lifted.num_states
        Wf = mhmm.emission_matrix()
        self.outside = [0 if (k % n) in set(H_star) else 1 for k in range(L)]
        mu = mhmm.mu
        j = mhmm.target_cell
        self.task = [mu[ms[j]] for ms in mhmm.memory_configurations() for _ in range(n)]
        self.task_int, _ = _int_row(self.task)
        key_tokens = np.asarray(witness.Theta_K, dtype=object).T.dot(np.asarray(witness.q, dtype=object))
        self.key, self.key_scale = _int_row(W_lift.T.dot(key_tokens))
        self.q_beta = [Fraction(np.asarray(witness.q, dtype=object).dot(r)) for r in witness.beta]
        ThetaV_T = np.asarray(witness.Theta_V, dtype=object).T                   # |X| x |M||H|
        b = np.asarray(witness.b, dtype=object)
        self.value, self.value_scale = [], []
        for z in range(mhmm.num_tokens):
            ints, d = _int_row(W_lift.T.dot(ThetaV_T.dot(b * Wf[z])))
            self.value.append(ints)
            self.value_scale.append(d)
        self.prompt_value = None
        if witness.u is not None:
            phi_u = ie.reverse_lift(mhmm, [Fraction(v) for v in witness.u])
            self.prompt_value = _int_row(W_lift.T.dot(ThetaV_T.dot(b * np.array(phi_u, dtype=object))))
        # float copies for the float mode
        self.f_outside = np.array(self.outside, dtype=float)
        self.f_key = np.array([float(v) for v in W_lift.T.dot(key_tokens)])
        self.f_value = np.array([[float(v) / s for v in row] for row, s in zip(self.value, self.value_scale)])
        self.f_qbeta = np.array([float(v) for v in self.q_beta])
        self.f_task = np.array([float(v) for v in self.task])

    def qbeta(self, i: int) -> Fraction:
        return self.q_beta[min(i, len(self.q_beta) - 1)]


def _dot(a: Sequence, b: Sequence):
    return sum((x * y for x, y in zip(a, b) if x), flint.fmpz(0))


class _Chain:
    """Integer messages on the lifted chain (:func:`models.inference_exact.integer_messages`);
    ``tau_i = pre_i ⊙ beta_i`` share one scale."""

    def __init__(self, mhmm: MemoryHMM, u: Sequence[Fraction] | None):
        self.ih = integer_hmm(mhmm.lift())
        self.prompt = None if u is None else ie.embedding_steps(self.ih, [[Fraction(v) for v in u]])[0]

    def taus(self, seq: Sequence[int], *, prompt: bool = False):
        """``(tau_i entries for every position, total mass Pr(x) up to scale)``."""
        steps = ([self.prompt] if prompt else []) + ie.token_steps(self.ih, seq)
        pre, beta, alpha = ie.integer_messages(self.ih, steps)
        taus = [[p * q for p, q in zip(_entries(a), _entries(b))] for a, b in zip(pre, beta)]
        return taus, _entries(alpha)


def _entries(col) -> list:
    return [col[r, 0] for r in range(col.nrows())]


def region_positions(taus: list, outside: Sequence[int]) -> tuple[int, ...]:
    """Positions whose ``tau_i`` has mass, all of it on ``H*`` (exact)."""
    return tuple(i for i, t in enumerate(taus) if sum(t) > 0 and _dot(outside, t) == 0)


def _exact_head(fn: _Functionals, taus: list, tokens: Sequence[int], prompt: bool):
    """``(Attn numerator sign input, attended)``: the exact argmax set and the sum of values."""
    scores = []
    for i, t in enumerate(taus):
        N = sum(t)
        s = fn.qbeta(i)
        if N > 0:
            s += Fraction(int(_dot(fn.key, t)), int(N) * fn.key_scale)
        scores.append(s)
    top = max(scores)
    attended = tuple(i for i, s in enumerate(scores) if s == top)
    total = Fraction(0)
    for i in attended:
        t = taus[i]
        N = sum(t)
        if N == 0:
            continue
        if prompt and i == 0:
            ints, d = fn.prompt_value
        else:
            z = tokens[i - 1] if prompt else tokens[i]
            ints, d = fn.value[z], fn.value_scale[z]
        total += Fraction(int(_dot(ints, t)), int(N) * d)
    return total, attended


def check_sequences(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int],
                    sequences: Iterable[Sequence[int]], *, mode: str = "exact", keep: bool = False,
                    evaluate_outside_R: bool = False, progress=None) -> MemoryCheckResult:
    """Decide ``x in R`` and, on ``R``, ``F(x) = F*(x)`` for every sequence.

    ``mode``: ``exact`` (integers and Fractions end to end), ``certified`` (the float kernel
    with the a priori bound of :mod:`models.inference_bounds`, see :func:`_fast_decisions`;
    what the bound cannot decide is redone exactly, in one batch) or ``float`` (the same
    kernel, uncertified; maximizers within ``FLOAT_TIE_TOLERANCE`` relative count as ties).
    ``result.decided_by`` counts the sequences each path decided. With
    ``evaluate_outside_R`` the head is evaluated on every possible sequence (for tests); the
    counts still only count sequences in ``R``.

    Raises:
        InputError: an unknown mode, a witness whose shapes do not fit, or a sequence with a
            token outside the vocabulary.
    """
    if mode not in ("exact", "certified", "float"):
        raise InputError(f"--mode {mode!r}: expected exact, certified or float")
    _check_witness_shapes(mhmm, witness)
    seqs = [tuple(ie.check_tokens(s, mhmm.num_tokens)) for s in sequences]
    if is_multiclass(mhmm.mu):          # k classes: decided exactly in every mode
        decisions = _class_decisions(mhmm, witness, H_star, seqs, evaluate_outside_R)
    else:
        fn = _Functionals(mhmm, witness, H_star)
        decisions = (_exact_decisions(mhmm, witness, fn, seqs, evaluate_outside_R) if mode == "exact"
                     else _fast_decisions(mhmm, witness, fn, seqs, evaluate_outside_R, mode == "certified"))
    result = MemoryCheckResult()
    prompt = witness.u is not None
    for d in decisions:
        if progress is not None:
            progress()
        result.decided_by[d.certified_by] = result.decided_by.get(d.certified_by, 0) + 1
        if keep:
            result.decisions.append(d)
        if not d.possible:
            result.outside_support += 1
            continue
        result.checked += 1
        if not d.in_R:
            result.outside_R += 1
            continue
        result.in_R += 1
        result.ties += d.tie
        shifted = tuple(i + 1 for i in d.Z) if prompt else d.Z
        result.attended_is_Z += d.attended == shifted
        if d.expected == d.got:
            result.agree += 1
        elif result.first_disagreement is None:
            result.first_disagreement = d
    return result


def _exact_decisions(mhmm, witness, fn: _Functionals, seqs, evaluate_outside_R):
    chain = _Chain(mhmm, witness.u)
    prompt = witness.u is not None
    for seq in seqs:
        taus, alpha = chain.taus(seq)
        possible = sum(alpha) > 0
        Z = region_positions(taus, fn.outside) if possible else ()
        d = MemoryDecision(seq, bool(possible), Z)
        if possible and (Z or evaluate_outside_R):
            star = _dot(fn.task_int, alpha)
            d.expected, d.tie = label(star), is_tie(star)
            head_taus = chain.taus(seq, prompt=True)[0] if prompt else taus
            total, d.attended = _exact_head(fn, head_taus, seq, prompt)
            d.got = label(total)
        yield d


def _class_rows(mhmm: MemoryHMM, witness: AttentionWitness) -> list[tuple[MemoryHMM, AttentionWitness]]:
    """Per class ``c`` of a ``k``-row task: the binary task ``mu_c`` with the head row ``b_c``
    (the attention parameters are shared, so every class attends to the same positions)."""
    return [(replace(mhmm, mu=m), replace(witness, b=b)) for m, b in zip(mhmm.mu, witness.b)]


def _class_decisions(mhmm, witness, H_star, seqs, evaluate_outside_R):
    """Exact decisions of a ``k``-row task and head: ``F* = argmax_c mu_c . P[M_j* | x]`` and
    ``F = argmax_c Attn_c`` (ties to the largest class, :func:`models.hmm.task.class_label`),
    each score exact (task rows over their own denominators, divided back)."""
    fns = [_Functionals(m, w, H_star) for m, w in _class_rows(mhmm, witness)]
    scales = [_int_row(fn.task)[1] for fn in fns]
    chain = _Chain(mhmm, witness.u)
    prompt = witness.u is not None
    for seq in seqs:
        taus, alpha = chain.taus(seq)
        possible = sum(alpha) > 0
        Z = region_positions(taus, fns[0].outside) if possible else ()
        d = MemoryDecision(seq, bool(possible), Z)
        if possible and (Z or evaluate_outside_R):
            stars = [Fraction(int(_dot(fn.task_int, alpha)), d_c) for fn, d_c in zip(fns, scales)]
            top = sorted(stars)[-2:]
            d.expected, d.tie = class_label(stars), top[0] == top[1]
            head_taus = chain.taus(seq, prompt=True)[0] if prompt else taus
            totals = []
            for fn in fns:
                total, d.attended = _exact_head(fn, head_taus, seq, prompt)
                totals.append(total)
            d.got = class_label(totals)
        yield d


def _rational(ints, scale) -> list[Fraction]:
    return [Fraction(int(v), int(scale)) for v in ints]


class _FloatHead:
    """The witness's functionals over lifted states as split float rows for the float kernel,
    with the exact constants the certified argmax needs (see :func:`_fast_decisions`)."""

    def __init__(self, mhmm: MemoryHMM, fn: _Functionals, prompt_u):
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


def _fast_decisions(mhmm, witness, fn: _Functionals, seqs, evaluate_outside_R, certified: bool):
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
    for t, where in sorted(groups.items()):
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
            S_sign, S_ok, _ = ib.certified_signs((att * p).sum(axis=0), (att * q).sum(axis=0), k_ratio + th)
            star_sign, star_ok, _ = ib.certified_signs(sP, sN, ib.forward_count(t - 1, L) + 3 + L)
            got, expected, tie = labels(S_sign) == 1, labels(star_sign) == 1, star_sign == 0
            guard = np.minimum(plain["minpos"], run["minpos"]) >= head.floor
            need_head = possible & (Z.any(axis=0) | evaluate_outside_R)
            ok = guard & head.usable & (~need_head | (head_ok & S_ok & star_ok))
        for r_, k in enumerate(where):
            if not ok[r_]:
                continue
            z = tuple(int(i) for i in np.flatnonzero(Z[:, r_])) if possible[r_] else ()
            d = MemoryDecision(seqs[k], bool(possible[r_]), z, certified_by=path)
            if possible[r_] and (z or evaluate_outside_R):
                d.expected, d.tie = int(expected[r_]), bool(tie[r_])
                d.got, d.attended = int(got[r_]), tuple(int(i) for i in np.flatnonzero(att[:, r_]))
            out[k] = d
    redo = [k for k, d in enumerate(out) if d is None]
    if redo:
        from ..common import check_fallback

        check_fallback(len(redo), max(len(seqs[k]) for k in redo), mhmm.lift().num_states, memory=True,
                       model=mhmm)
    for k, d in zip(redo, _exact_decisions(mhmm, witness, fn, [seqs[k] for k in redo], evaluate_outside_R)):
        d.certified_by = "exact-fallback"
        out[k] = d
    return out


def _check_witness_shapes(mhmm: MemoryHMM, w: AttentionWitness) -> None:
    n, X, M = mhmm.num_states, mhmm.num_tokens, mhmm.memory_values
    L = M ** mhmm.cells * n
    want = {"q": (n + 1,), "Theta_K": (n + 1, X), "Theta_V": (M * n, X),
            "b": (len(mhmm.mu), M * n) if is_multiclass(mhmm.mu) else (M * n,)}
    for name, shape in want.items():
        got = np.asarray(getattr(w, name)).shape
        if got != shape:
            raise InputError(f"witness {name}: expected shape {shape}, found {got}")
    beta = np.asarray(w.beta)
    if beta.ndim != 2 or beta.shape[1] != n + 1 or beta.shape[0] < 1:
        raise InputError(f"witness beta: expected rows of length {n + 1} (|H| + 1), found shape {beta.shape}")
    if w.u is not None and np.asarray(w.u).shape != (L,):
        raise InputError(f"witness u: expected {L} entries (one per lifted state (m_1..m_N, h)), "
                         f"found shape {np.asarray(w.u).shape}")


# ---------------------------------------------------------------- the slow, direct route

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
        outs = [attention(w, G, values) for _, w in _class_rows(mhmm, witness)]
        d.got, d.attended = class_label([Fraction(r.output) for r in outs]), outs[0].attended
        return d
    res = attention(witness, G, values)
    d.got, d.attended, d.head_margin = label(res.output), res.attended, Fraction(res.output)
    return d


def cross_check(mhmm, witness, H_star, sequences, *, count: int = 20, seed: int = 0) -> int:
    """Recompute a random sample of exact decisions the direct way; a mismatch is an internal
    error and raises ``InternalError``. Returns the number compared."""
    sample = random.Random(seed).sample(list(sequences), min(count, len(sequences)))
    fast = check_sequences(mhmm, witness, H_star, sample, keep=True, evaluate_outside_R=True)
    for d in fast.decisions:
        slow = decide_direct(mhmm, witness, H_star, d.sequence)
        if (d.possible, d.Z, d.expected, d.got, d.attended) != (slow.possible, slow.Z, slow.expected,
                                                                 slow.got, slow.attended):
            raise InternalError(f"fast and direct checks differ on {list(d.sequence)}")
    return len(sample)


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
