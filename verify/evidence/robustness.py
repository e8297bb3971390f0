"""How far a verified vanilla head's verdicts reach: margins and a robustness radius.

For a head ``b`` reading ``g(x)`` (Theorem 3.3: ``G_1(x')``; Theorem 3.6: ``Gbar_2(ehat(x))``)
the prediction is ``1(b . g(x) >= 0)``. If ``|b . g(x)| > 0`` and ``||g' - g(x)||_inf < r_x``
with ``r_x = |b . g(x)| / ||b||_1``, then ``|b . g' - b . g(x)| <= ||b||_1 ||g' - g(x)||_inf <
|b . g(x)|``, so ``b . g'`` has the sign of ``b . g(x)``: the head's verdict on ``x`` is the
same for every model whose read-out at ``x`` moves by less than ``r_x``. The radius of a
verified witness is ``min_x r_x`` over the counted sequences (0 when some ``b . g(x) = 0``).
Likewise ``F*(x) = 1(mu . p(x) >= 0)`` keeps its value when the posterior ``p(x)`` moves by
less than ``|mu . p(x)| / ||mu||_1`` (and ``mu`` itself by less than what is left).

With a :class:`~headprompt.models.hmm.rationalize.Rationalization`, each sequence's read-out and
posterior change between the learned model and the exact one is bounded by
``min(1, 2 delta_L / Q(B))`` (its eq. 2), so the report counts the sequences on which the
exact verdict provably carries over to the learned model.

All values are exact (integer message passing with the model's own backward matrices).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import flint
import numpy as np

from ...models.hmm.values import HMM
from ...models.inference.exact import head_weights, integer_hmm, shared_backward_messages
from ..checks.vanilla.check import read_position_prior

__all__ = ["SequenceMargins", "sequence_margins", "robustness_block", "sequence_probability"]


@dataclass(frozen=True)
class SequenceMargins:
    """Exact per-sequence quantities: ``head = b . g(x)``, ``read_probability = Q(B)`` (the
    exact probability of the event the read-out conditions on), ``task = mu . P[H_0 | x]`` and
    ``probability = Pr(x)``."""

    sequence: tuple[int, ...]
    head: Fraction
    read_probability: Fraction
    task: Fraction
    probability: Fraction


def sequence_margins(hmm: HMM, theorem: str, b: Sequence, u: Sequence | None,
                     sequences: Sequence[Sequence[int]]) -> list[SequenceMargins]:
    """:class:`SequenceMargins` for each sequence with ``Pr(x) > 0``, exactly.

    With ``beta(x)[h] = Pr(X_{1:t} = x | H_0 = h)`` (backward messages of the exact kernel)
    and ``pre`` the forward message into the read position (``A pi0`` for 3.3,
    ``A(u ⊙ A pi0)`` for 3.6): ``b . g = (W^T b ⊙ pre) . beta / (pre . beta)``,
    ``Q(B) = pre . beta``, ``mu . p = (mu ⊙ pi0) . beta / (pi0 . beta)``, ``Pr(x) = pi0 . beta``.
    """
    pre = read_position_prior(hmm, theorem, u)
    rows = [head_weights(hmm, b) * pre, pre, hmm.mu * hmm.pi0, hmm.pi0]
    den, values = _dot_backward(hmm, rows, sequences)
    out = []
    for seq, v, scale in values:
        prob = Fraction(v[3], den[3] * scale)
        if prob == 0:
            continue
        read = Fraction(v[1], den[1] * scale)
        head = Fraction(v[0] * den[1], den[0] * v[1]) if v[1] else Fraction(0)
        task = Fraction(v[2] * den[3], den[2] * v[3])
        out.append(SequenceMargins(seq, head, read, task, prob))
    return out


def _dot_backward(hmm: HMM, rows: list, sequences):
    """``(den, [(seq, [row_k . beta_int(seq)], scale)])`` with integer rows ``den_k row_k`` and
    ``beta_int = scale beta(seq)``; backward messages of shared suffixes are shared."""
    ih = integer_hmm(hmm)
    den = [math.lcm(*(Fraction(v).denominator for v in r)) for r in rows]
    R = flint.fmpz_mat([[int(Fraction(v) * d) for v in r] for r, d in zip(rows, den)])
    step = ih.dA * ih.dW                          # beta_int = step^t beta for a length-t sequence
    distinct = sorted({tuple(int(z) for z in s) for s in sequences}, key=lambda s: (len(s), s))
    out = [(seq, [int(x) for x in (R * vec).entries()], step ** len(seq))
           for seq, vec in shared_backward_messages(ih, distinct)]
    return den, out


def sequence_probability(hmm: HMM, sequences: Sequence[Sequence[int]]) -> dict:
    """``{x: Pr(X_{1:t} = x)}`` exactly (``pi0 . beta(x)``).

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, 0], [0, 1]], [['3/4', '1/4'], ['1/4', '3/4']], ['1/2', '1/2'])
    >>> sequence_probability(h, [[0, 0]])[(0, 0)]
    Fraction(5, 16)
    """
    den, values = _dot_backward(hmm, [hmm.pi0], sequences)
    return {seq: Fraction(v[0], den[0] * scale) for seq, v, scale in values}


def _candidates(hmm: HMM, theorem: str, b, u, sequences, messages=None) -> tuple[int, list]:
    """``(counted, candidates, unsure)``: how many sequences provably have ``Pr(x) > 0``, the
    sequences that
    can attain ``min |b . g|``, ``min |mu . p|`` or the smallest nonzero ``|b . g|``, found with
    the float kernel and the a priori bound of :mod:`models.inference_bounds` (every other
    sequence provably lies above them), so only these need exact values. Sequences the bound
    cannot place (underflow guard, an unusable instance) are candidates, and ``unsure``.

    ``messages``: the certified check's contractions of the same sequences' backward messages
    with the same rows (``CheckResult.messages``), reused instead of recomputed; its guard
    ``floor`` was set for all five rows, so it is at least the one these four rows need."""
    from ...models.inference import bounds as ib
    from ...models.inference import floats as iff
    from ..checks.vanilla.check import _Rows, _by_length

    seqs = [tuple(int(z) for z in s) for s in sequences]
    if messages is None:
        rows = _Rows(hmm, theorem, b, u, None)              # [W^T b ⊙ pre, mu ⊙ pi0, pre, pi0, .]
        chain = ib.bound_chain(hmm)
        messages = []
        for where, tokens in _by_length(seqs):
            m = iff.scaled_messages(chain.A, chain.AT, chain.pi0, chain.W, np.ascontiguousarray(tokens.T),
                                    forward=False, store=False, track=True, every=chain.every)
            messages.append((where, tokens.shape[1], m["beta0"] @ rows.pos, m["beta0"] @ rows.neg, m["minpos"],
                             rows.floor, rows.usable))
    counted, keep, unsure = 0, [], set()
    parts = []
    H = hmm.num_states
    for where, t, P, N, minpos, floor, usable in messages:
        k = ib.backward_count(t, H) + 1 + H
        sign, decided, bound = ib.certified_signs(P, N, k)
        ok = decided[:, [2, 3]].all(axis=1) & (minpos >= floor) & usable
        g = ib.gamma(k)
        slack = (1 + g) / (1 - g) * (1 + 8 * ib.UNIT_ROUNDOFF)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = []
            for num, den in ((0, 2), (1, 3)):               # |b . g| = |P0 - N0| / P2, |mu . p| = |P1 - N1| / P3
                mag = np.abs(P[:, num] - N[:, num])
                lo = np.where(decided[:, num], np.maximum(mag - bound[:, num], 0) / (P[:, den] * slack), 0.0)
                hi = (mag + bound[:, num]) * slack / P[:, den]
                out.append((lo, hi, decided[:, num] & (sign[:, num] != 0)))
        possible = sign[:, 3] > 0
        parts.append((where, ok, possible, out))
    lo_top = [np.inf, np.inf, np.inf]                        # smallest upper bounds: head, task, nonzero head
    for where, ok, possible, out in parts:
        live = ok & possible
        (hl, hh, hnz), (tl, th, _) = out
        lo_top[0] = min(lo_top[0], hh[live].min(initial=np.inf))
        lo_top[1] = min(lo_top[1], th[live].min(initial=np.inf))
        lo_top[2] = min(lo_top[2], hh[live & hnz].min(initial=np.inf))
    for where, ok, possible, out in parts:
        (hl, hh, hnz), (tl, th, _) = out
        counted += int((possible & ok).sum())
        pick = ~ok | (possible & ((hl <= lo_top[0]) | (tl <= lo_top[1]) | (hl <= lo_top[2]) | ~hnz))
        keep += [seqs[where[r]] for r in np.flatnonzero(pick)]
        unsure |= {seqs[where[r]] for r in np.flatnonzero(~ok)}
    return counted, keep, unsure


def _floor_float(x: Fraction) -> float:
    """The largest float not above ``x`` (a conservative reading of a radius)."""
    try:
        f = float(x)
    except OverflowError:                  # beyond float64: the largest float is below a positive x
        return sys.float_info.max if x > 0 else -math.inf
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def _l1(v) -> Fraction:
    return sum((abs(Fraction(x)) for x in v), Fraction(0))


def robustness_block(hmm: HMM, theorem: str, b: Sequence, u: Sequence | None,
                     sequences: Sequence[Sequence[int]], *, rationalization: Any = None,
                     messages: list | None = None) -> dict:
    """The ``"robustness"`` field of a vanilla theorem report (module docstring).

    ``min_margin`` is ``min |b . g(x)|`` over the counted sequences (``Pr(x) > 0``), ``radius``
    is ``min_margin / ||b||_1`` in the sup norm, both computed exactly and rounded down;
    ``task_radius`` is ``min |mu . p(x)| / ||mu||_1``. With a rationalization, ``transfer``
    counts the sequences on which both the head's verdict and ``F*`` provably carry over to
    the learned model. ``messages``: the certified check's per-length contractions of the same
    ``sequences`` (``CheckResult.messages``), reused instead of a second backward pass.
    """
    counted = None
    if rationalization is None and len(sequences) > 64:
        counted, sequences, unsure = _candidates(hmm, theorem, b, u, sequences, messages or None)
    margins = sequence_margins(hmm, theorem, b, u, sequences)
    if counted is not None:
        counted += sum(1 for m in margins if m.sequence in unsure)
    b_l1, mu_l1 = _l1(b), _l1(hmm.mu)
    if not margins:
        return {"min_margin": None, "radius": None, "norm": "sup", "what": "no counted sequence"}
    min_head = min(abs(m.head) for m in margins)
    min_task = min(abs(m.task) for m in margins)
    radius = min_head / b_l1 if b_l1 else Fraction(0)
    task_radius = min_task / mu_l1 if mu_l1 else Fraction(0)
    nonzero = [abs(m.head) for m in margins if m.head != 0]
    read = "G_1(x')" if theorem == "3.3" else "Gbar_2(ehat(x))"
    out = {"min_margin": _floor_float(min_head), "radius": _floor_float(radius), "norm": "sup",
           "task_radius": _floor_float(task_radius),
           "zero_margin_sequences": len(margins) - len(nonzero),
           "counted_sequences": len(margins) if counted is None else counted,
           "radius_off_zero_margins": _floor_float(min(nonzero) / b_l1) if nonzero and b_l1 else None,
           "what": (f"the head's verdict 1(b . g >= 0) on every one of the {len(margins) if counted is None else counted} "
                    f"counted sequences (those this check covered, not every sequence) is the same for any model whose "
                    f"{read} at that sequence is within radius of this one's in the sup norm (|b . g' - b . g| <= "
                    f"||b||_1 ||g' - g||_inf); F* likewise within task_radius of P[H_0 | X = x]"
                    + ("" if radius else "; radius 0: some counted sequence has b . g = 0 exactly (a tie, "
                                         "whose verdict any change can flip); radius_off_zero_margins is the "
                                         "radius over the other sequences"))}
    if rationalization is not None:
        out["transfer"] = _transfer(margins, theorem, b_l1, mu_l1, rationalization)
    return out


def _transfer(margins: list[SequenceMargins], theorem: str, b_l1: Fraction, mu_l1: Fraction, r: Any) -> dict:
    """Per sequence: does the rationalization bound stay inside the head's and the task's own
    margins? (Read position: ``L = T + 1`` for 3.3, ``T + 2`` for 3.6; posterior: ``L = T``.)"""
    extra = 1 if theorem == "3.3" else 2
    head_ok = task_ok = both = 0
    for m in margins:
        t = len(m.sequence)
        g_change = r.conditional_bound(t + extra, m.read_probability)
        p_change = r.conditional_bound(t, m.probability)
        h = abs(m.head) > b_l1 * g_change
        k = abs(m.task) > mu_l1 * p_change + r.mu_change      # |mu'.p' - mu.p| <= ||mu||_1 dp + max|dmu|
        head_ok += h
        task_ok += k
        both += h and k
    return {"sequences": len(margins), "head_verdict_carries": head_ok, "task_verdict_carries": task_ok,
            "agreement_carries": both,
            "what": ("sequences on which the change bound of the rationalization (2 delta_L / Q(B) per read-out) "
                     "stays below the head's margin |b . g| / ||b||_1 and the task's |mu . p| / ||mu||_1: on the "
                     "agreement_carries of them, head and F* agree on the learned model too, proven; on the "
                     "others the exact verdict is about the rationalized model only")}
