"""Exact per-sequence decisions of Theorems 4.3, 4.6 and C.6 (the integer route of
:mod:`.check`): the decision records, the witness's integer functionals over lifted states, the
integer messages of the lifted chain and the exact head. The theory is in :mod:`.check`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ....constructions.witnesses import AttentionWitness
from ....models.inference import exact as ie
from ....models.hmm.values import MemoryHMM
from ....models.inference.exact import integer_hmm, scaled_integer_vector
from ....models.hmm.task import class_label, is_tie, label

__all__ = ["MemoryDecision", "MemoryCheckResult", "region_positions", "exact_decisions", "class_decisions",
           "class_rows", "Functionals"]


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
    task_margin: Fraction | None = None   # mu . P[M_j* | x], exactly (decide_direct; exact route with margins)
    head_margin: Fraction | None = None   # the head's output Attn before the threshold (the same)
    # float margins with certified error bounds (float kernel with margins=True):
    # (task, task bound, head, head bound); |exact - float| <= bound
    float_margins: tuple[float, float, float, float] | None = None

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


class Functionals:
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
        self.task_int, self.task_scale = _int_row(self.task)
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


def _exact_head(fn: Functionals, taus: list, tokens: Sequence[int], prompt: bool):
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



def exact_decisions(mhmm, witness, fn: Functionals, seqs, evaluate_outside_R, margins: bool = False):
    """Exact decisions, one sequence at a time; with ``margins`` each evaluated decision also
    carries ``task_margin = mu . P[M_j* | x]`` and ``head_margin = Attn`` as exact fractions."""
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
            if margins:
                d.task_margin = Fraction(int(star), int(sum(alpha)) * int(fn.task_scale))
                d.head_margin = total / len(d.attended)
        yield d


def class_rows(mhmm: MemoryHMM, witness: AttentionWitness) -> list[tuple[MemoryHMM, AttentionWitness]]:
    """Per class ``c`` of a ``k``-row task: the binary task ``mu_c`` with the head row ``b_c``
    (the attention parameters are shared, so every class attends to the same positions)."""
    return [(replace(mhmm, mu=m), replace(witness, b=b)) for m, b in zip(mhmm.mu, witness.b)]


def class_decisions(mhmm, witness, H_star, seqs, evaluate_outside_R):
    """Exact decisions of a ``k``-row task and head: ``F* = argmax_c mu_c . P[M_j* | x]`` and
    ``F = argmax_c Attn_c`` (ties to the largest class, :func:`models.hmm.task.class_label`),
    each score exact (task rows over their own denominators, divided back)."""
    fns = [Functionals(m, w, H_star) for m, w in class_rows(mhmm, witness)]
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

