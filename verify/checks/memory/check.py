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
from typing import Iterable, Sequence

import numpy as np

from ....constructions.witnesses import AttentionWitness
from ....models.inference import exact as ie
from ....models.exceptions import InputError, InternalError
from ....models.hmm.values import MemoryHMM
from ....models.hmm.task import is_multiclass
from .decisions import (Functionals, MemoryCheckResult, MemoryDecision, class_decisions, exact_decisions,
                        region_positions)
from .direct import decide_direct, identity_check
from .fast import FLOAT_TIE_TOLERANCE, fast_decisions

__all__ = ["MemoryDecision", "MemoryCheckResult", "check_sequences", "region_positions",
           "decide_direct", "identity_check", "cross_check", "FLOAT_TIE_TOLERANCE"]


def check_sequences(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int],
                    sequences: Iterable[Sequence[int]], *, mode: str = "exact", keep: bool = False,
                    evaluate_outside_R: bool = False, progress=None, margins: bool = False) -> MemoryCheckResult:
    """Decide ``x in R`` and, on ``R``, ``F(x) = F*(x)`` for every sequence.

    ``mode``: ``exact`` (integers and Fractions end to end), ``certified`` (the float kernel
    with the a priori bound of :mod:`models.inference_bounds`, see :func:`fast_decisions`;
    what the bound cannot decide is redone exactly, in one batch) or ``float`` (the same
    kernel, uncertified; maximizers within ``FLOAT_TIE_TOLERANCE`` relative count as ties).
    ``result.decided_by`` counts the sequences each path decided. With
    ``evaluate_outside_R`` the head is evaluated on every possible sequence (for tests); the
    counts still only count sequences in ``R``. With ``margins`` (binary tasks) every evaluated
    decision carries its margins: exact fractions (``task_margin``, ``head_margin``) from the
    exact route, floats with certified bounds (``float_margins``) from the certified kernel.

    Raises:
        InputError: an unknown mode, a witness whose shapes do not fit, or a sequence with a
            token outside the vocabulary.
    """
    if mode not in ("exact", "certified", "float"):
        raise InputError(f"--mode {mode!r}: expected exact, certified or float")
    _check_witness_shapes(mhmm, witness)
    seqs = [tuple(ie.check_tokens(s, mhmm.num_tokens)) for s in sequences]
    if is_multiclass(mhmm.mu):          # k classes: decided exactly in every mode
        decisions = class_decisions(mhmm, witness, H_star, seqs, evaluate_outside_R)
    else:
        fn = Functionals(mhmm, witness, H_star)
        if mode == "exact":
            decisions = exact_decisions(mhmm, witness, fn, seqs, evaluate_outside_R, margins)
        else:                            # the kernel reports progress per batch itself
            decisions = fast_decisions(mhmm, witness, fn, seqs, evaluate_outside_R, mode == "certified",
                                       margins, progress=progress)
            progress = None
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


