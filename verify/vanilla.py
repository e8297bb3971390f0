"""The checker for Theorems 3.3 and 3.6: exact identities and per-sequence verdicts.

It never trusts the builder: it recomputes ``P[H_0]``, ``P[H_1]`` and the forward message of
the prompt from the instance, and decides every sequence from message passing.

For a sequence ``x`` let ``beta(x)[h] = Pr(X_{1:t} = x | H_0 = h)`` (the backward message; the
chain is time-homogeneous, so it is also ``Pr(x | H_1 = h)`` for the shifted ``x'`` and
``Pr(x | H_2 = h)`` after the prompt). Message passing gives, with ``pre`` the forward message
into the read position (``A P[H_0]`` for Theorem 3.3's ``G_1(x')``, ``c = A(u ⊙ A P[H_0])`` for
Theorem 3.6's ``Gbar_2(ehat(x))``)::

    tau = pre ⊙ beta(x),   b . Gbar = (W^T b ⊙ pre) . beta / (pre . beta)
    mu . P[H_0 | x] = (mu ⊙ P[H_0]) . beta / (P[H_0] . beta)

so four integer dot products with ``beta(x)`` decide ``F(x)``, ``F*(x)``, the zero-norm case
and ``Pr(x) > 0``. Backward messages of sequences that share a suffix are shared (a trie).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ..models import inference_exact as ie
from ..models.hmm import HMM
from ..models.inference_exact import integer_hmm, scaled_integer_vector

__all__ = ["read_position_prior", "Decision", "CheckResult", "check_sequences", "identity_check",
           "decide_direct"]


def read_position_prior(hmm: HMM, theorem: str, u: Sequence[Fraction] | None) -> np.ndarray:
    """The forward message ``pre`` into the read position, from the definitions.

    Theorem 3.3 reads ``G_1((∅, x))``: ``pre = A pi0``. Theorem 3.6 reads ``Gbar_2`` of
    ``(u, e(∅), e(x))``: ``pre = A (u ⊙ (A pi0))``.
    """
    p1 = hmm.A.dot(hmm.pi0)
    if theorem == "3.3":
        return p1
    return hmm.A.dot(np.asarray(u, dtype=object) * p1)


@dataclass
class Decision:
    sequence: tuple[int, ...]
    possible: bool
    expected: int            # F*(x)
    got: int                 # F(x)
    tie: bool                # mu . P[H_0 | x] == 0
    zero_norm: bool          # ||tau||_1 == 0, so Gbar = 0
    identity: bool           # b . Gbar == lambda * r_x * mu . P[H_0 | x]
    certified_by: str = "exact"


@dataclass
class CheckResult:
    checked: int = 0
    agree: int = 0
    outside_support: int = 0
    ties: int = 0
    zero_norm: int = 0
    identity_agree: int = 0
    exact_fallbacks: int = 0
    first_disagreement: Decision | None = None
    decisions: list = field(default_factory=list)


def identity_check(hmm: HMM, theorem: str, b: Sequence, u: Sequence | None) -> dict:
    """Whether ``b^T W diag(pre) = lambda * mu^T diag(P[H_0])`` for one ``lambda > 0``: then
    ``b . Gbar = lambda r_x mu . P[H_0 | x]`` with ``r_x = Pr(x) / ||tau||_1 > 0`` for every
    ``x`` at once (Theorem 3.3: ``mu^T D^-1 W^+ W D = mu^T``; Theorem 3.6: Lemma B.2 with
    ``supp(c) = H*``)."""
    pre = read_position_prior(hmm, theorem, u)
    lhs = np.asarray(b, dtype=object).dot(hmm.W) * pre
    rhs = hmm.mu * hmm.pi0
    ratios = {lhs[h] / rhs[h] for h in range(hmm.num_states) if rhs[h] != 0}
    zeros_ok = all(lhs[h] == 0 for h in range(hmm.num_states) if rhs[h] == 0)
    lam = next(iter(ratios)) if len(ratios) == 1 else None
    holds = zeros_ok and lam is not None and lam > 0
    if not any(rhs[h] != 0 for h in range(hmm.num_states)):
        holds, lam = all(v == 0 for v in lhs), Fraction(1)
    read = "G_1(x')" if theorem == "3.3" else "Gbar_2(ehat(x))"
    what = (f"b^T W diag(pre) = {lam} * mu^T diag(P[H_0]) exactly, with pre = "
            + ("A P[H_0]" if theorem == "3.3" else "A(u ⊙ A P[H_0])")
            + f"; hence b . {read} = {lam} * r_x * mu . P[H_0 | X = x], r_x = Pr(x)/||tau||_1 > 0, "
              "for every x in supp(P[X])") if holds else (
        "b^T W diag(pre) is not a positive multiple of mu^T diag(P[H_0]); agreement then rests "
        "on the sequences checked alone")
    return {"holds": bool(holds), "what": what, "lambda": lam if holds else None}


class _Rows:
    """Integer rows ``[W^T b ⊙ pre, mu ⊙ pi0, pre, pi0]`` and their positive scales."""

    def __init__(self, hmm: HMM, theorem: str, b, u, lam):
        pre = read_position_prior(hmm, theorem, u)
        rows = [np.asarray(b, dtype=object).dot(hmm.W) * pre, hmm.mu * hmm.pi0, pre, hmm.pi0]
        self.ints, self.scales = [], []
        for r in rows:
            ints, d = scaled_integer_vector([Fraction(v) for v in r])
            self.ints.append(ints)
            self.scales.append(d)
        self.matrix = flint.fmpz_mat(self.ints)
        self.lam = lam
        self.float_rows = np.array([[float(v) for v in r] for r in rows])

    def decide(self, seq, v0, v1, v2, v3, how="exact") -> Decision:
        sF, sS = self.scales[0], self.scales[1]
        lam = self.lam if self.lam is not None else Fraction(1)
        identity = (v0 * sS * lam.denominator == v1 * sF * lam.numerator) and v2 > 0 and v3 > 0
        return Decision(tuple(seq), possible=v3 > 0, expected=int(v1 >= 0), got=int(v0 >= 0),
                        tie=v1 == 0, zero_norm=v2 == 0, identity=bool(identity), certified_by=how)


def _backward_exact(ih, seqs):
    """Integer backward messages ``beta(x)`` for each sequence, sharing suffixes."""
    cache = {(): flint.fmpz_mat([[1]] * ih.num_states)}

    def beta(seq):
        k = 0                                   # seq[k:] is the longest cached suffix
        while seq[k:] not in cache:
            k += 1
        vec = cache[seq[k:]]
        for j in range(k - 1, -1, -1):
            vec = ih.backward[seq[j]] * vec
            cache[seq[j:]] = vec
        return vec

    for s in sorted(seqs, key=len):
        yield s, beta(s)


def check_sequences(hmm: HMM, theorem: str, b, u, sequences, *, mode: str = "exact",
                    lam: Fraction | None = None, keep: bool = False, progress=None) -> CheckResult:
    """Decide ``F(x) = F*(x)`` for every sequence (those with ``Pr(x) = 0`` are counted apart).

    Modes: ``exact`` (integers end to end), ``certified`` (arb balls at 64 bits; any decision
    whose ball touches 0 is redone exactly), ``float`` (float64, uncertified).
    """
    rows = _Rows(hmm, theorem, b, u, lam)
    result = CheckResult()
    ih = integer_hmm(hmm)
    if mode == "float":
        decisions = _float_decisions(hmm, rows, sequences)
    elif mode == "certified":
        decisions = _certified_decisions(hmm, ih, rows, sequences, result)
    else:
        decisions = _exact_decisions(ih, rows, sequences)
    for d in decisions:
        if progress is not None:
            progress()
        if not d.possible:
            result.outside_support += 1
            continue
        result.checked += 1
        result.ties += d.tie
        result.zero_norm += d.zero_norm
        result.identity_agree += d.identity
        if d.expected == d.got:
            result.agree += 1
        elif result.first_disagreement is None:
            result.first_disagreement = d
        if keep:
            result.decisions.append(d)
    return result


def _exact_decisions(ih, rows: _Rows, sequences):
    for seq, beta in _backward_exact(ih, sequences):
        v = rows.matrix * beta
        yield rows.decide(seq, *(int(v[r, 0]) for r in range(4)))


def _certified_decisions(hmm, ih, rows: _Rows, sequences, result: CheckResult):
    prec = 64
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        A = hmm.A
        Wd = hmm.W
        back = [flint.arb_mat([[flint.arb(flint.fmpq(A[g, h].numerator, A[g, h].denominator)) *
                                flint.arb(flint.fmpq(Wd[z, g].numerator, Wd[z, g].denominator))
                                for g in range(hmm.num_states)] for h in range(hmm.num_states)])
                for z in range(hmm.num_tokens)]          # A^T diag(W[z]): entry (h, g) = A[g,h] W[z,g]
        R = flint.arb_mat([[flint.arb(v) for v in r] for r in rows.ints])
        cache = {(): flint.arb_mat([[1]] * hmm.num_states)}
        for seq in sorted(sequences, key=len):
            k = 0
            while seq[k:] not in cache:
                k += 1
            vec = cache[seq[k:]]
            for j in range(k - 1, -1, -1):
                vec = back[seq[j]] * vec
                cache[seq[j:]] = vec
            v = R * vec
            balls = [v[r, 0] for r in range(4)]
            # F, F*, zero-norm and support need signs of v0, v1 and positivity of v2, v3;
            # the identity needs an exact comparison, so it is decided exactly when asked.
            decided = all(not ball.contains(0) for ball in balls)
            if decided:
                d = Decision(tuple(seq), possible=bool(balls[3] > 0), expected=int(bool(balls[1] > 0)),
                             got=int(bool(balls[0] > 0)), tie=False, zero_norm=False, identity=False,
                             certified_by="ball")
                d.identity = _exact_identity(ih, rows, seq)
                yield d
            else:
                result.exact_fallbacks += 1
                beta = _exact_beta(ih, seq)
                vv = rows.matrix * beta
                yield rows.decide(seq, *(int(vv[r, 0]) for r in range(4)), how="exact-fallback")
    finally:
        flint.ctx.prec = old


def _exact_beta(ih, seq):
    vec = flint.fmpz_mat([[1]] * ih.num_states)
    for z in reversed(seq):
        vec = ih.backward[z] * vec
    return vec


def _exact_identity(ih, rows, seq) -> bool:
    v = rows.matrix * _exact_beta(ih, seq)
    return rows.decide(seq, *(int(v[r, 0]) for r in range(4))).identity


def _float_decisions(hmm: HMM, rows: _Rows, sequences):
    f = hmm.to_float()
    A, W = np.ascontiguousarray(f.A), np.asarray(f.W)
    by_length: dict[int, list] = {}
    for s in sequences:
        by_length.setdefault(len(s), []).append(s)
    for length, group in sorted(by_length.items()):
        tokens = np.array(group, dtype=np.int64)
        b = np.ones((len(group), hmm.num_states))
        for j in range(length - 1, -1, -1):
            b = (W[tokens[:, j]] * b) @ A
            s = b.sum(axis=1, keepdims=True)
            b = b / np.where(s > 0, s, 1.0)
        v = b @ rows.float_rows.T                         # [n, 4]
        for seq, (v0, v1, v2, v3) in zip(group, v):
            yield Decision(tuple(seq), possible=bool(v3 > 0), expected=int(v1 >= 0), got=int(v0 >= 0),
                           tie=bool(v1 == 0), zero_norm=bool(v2 == 0), identity=False,
                           certified_by="float (uncertified)")


def decide_direct(hmm: HMM, theorem: str, b, u, seq) -> tuple[int, int, bool]:
    """``(F*(x), F(x), possible)`` computed the slow, general way: ``ie.posterior_h0`` and
    ``ie.gbar`` on the actual embedding sequence (``(e(∅), e(x))`` or ``(u, e(∅), e(x))``).
    Used to cross-check the fast path on a sample and to print counterexamples."""
    post = ie.posterior_h0(hmm, seq)
    possible = any(v != 0 for v in post)
    f_star = int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0)
    emb = [list(hmm.W[z]) for z in seq]
    filler = [Fraction(1)] * hmm.num_states          # e(∅): any vector (its own position is ignored)
    if theorem == "3.3":
        g = ie.gbar(hmm, [filler] + emb, 0)
    else:
        g = ie.gbar(hmm, [list(u), filler] + emb, 1)
    f = int(sum(Fraction(bb) * gg for bb, gg in zip(b, g)) >= 0)
    return f_star, f, possible
