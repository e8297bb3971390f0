"""Appendix C's lemmas and claims on memory-augmented HMMs, each side from brute-force sums over
memories and hidden paths (:func:`.paths.memory_path_joint`) against the message-passing code on
the lifted chain: Lemma C.7, Proposition C.8, Proposition C.11, Claims C.14 and C.15.

Every check returns ``(holds, detail, counts)`` and fails on an input where it could not have
failed (no sequence, or none of the kind the statement is about).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

import numpy as np

from ....models.hmm.values import MemoryHMM
from ....models.inference import exact as ie
from ....models.generate.generators import stationary_distribution
from .paths import memory_path_joint, ones

__all__ = ["paper_prompt", "two_cell_instance", "support_instance", "check_lemma_c7", "check_prop_c8",
           "check_prop_c11", "check_claim_c14", "check_claim_c15"]


def paper_prompt(mhmm) -> list[Fraction]:
    """The prompt of eq. (C.6) over the lifted states, ``u = 1(m_j* in supp(mu))`` (the
    construction's :func:`~headprompt.constructions.memory.prompt_vector`)."""
    from ....constructions.memory import prompt_vector

    return list(prompt_vector(mhmm, [m for m in range(mhmm.memory_values) if mhmm.mu[m] != 0]))


def two_cell_instance(mu=(1, -1, 0)) -> MemoryHMM:
    """``N = 2`` cells, ``|M| = 3``, one syntax state per cell (``|H| = 2``), ``|X| = 5``, target
    cell ``j* = 1``, a non-product joint prior ``pM`` and a stationary start. Cell 0 emits tokens
    3, 4; cell 1 emits tokens 0, 1 when ``m_1 in {0, 1}`` and token 2 only when ``m_1 = 2``. With
    ``mu = (1, -1, 0)`` every ``x`` holding token 2 has ``Pr(x) > 0`` but ``Pr(xhat) = 0`` under
    the prompt of (C.6): the sequences Claim C.15 is about."""
    q, t, h = "3/4", "1/4", "1/2"
    cell0 = {0: (q, t), 1: (t, q), 2: (h, h)}                      # tokens 3, 4
    cell1 = {0: (q, t, 0), 1: (t, q, 0), 2: (0, 0, 1)}             # tokens 0, 1, 2
    W = [[[0] * 2 for _ in range(3)] for _ in range(5)]
    for m in range(3):
        W[3][m][0], W[4][m][0] = cell0[m]
        W[0][m][1], W[1][m][1], W[2][m][1] = cell1[m]
    A = [["1/3", h], ["2/3", h]]
    pi0 = stationary_distribution(np.array([[Fraction(1, 3), Fraction(1, 2)], [Fraction(2, 3), Fraction(1, 2)]],
                                           dtype=object))
    pM = [Fraction(k, 18) for k in (1, 2, 3, 2, 1, 2, 3, 2, 2)]
    return MemoryHMM.create(2, 3, 1, A, W, list(pi0), pM, mu=list(mu), target_cell=1)


def support_instance(mhmm: MemoryHMM) -> MemoryHMM:
    """``mhmm`` (one cell, ``|M| = 3``) with ``mu``'s last entry set to 0, so ``supp(mu)`` is a
    proper subset of ``M`` and the prompt of (C.6) is zero somewhere."""
    return replace(mhmm, mu=np.array([mhmm.mu[0], mhmm.mu[1], Fraction(0)], dtype=object))


def _configs(mhmm):
    return list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))


def check_lemma_c7(mhmm, u, sequences, *, fake=None, factor=None, zero_value=None) -> tuple[bool, str, dict]:
    """Lemma C.7 (memory analogue of Lemma B.1) at every position ``i`` of
    ``ehat(x) = (u, eta(e(x_1)), ..., eta(e(x_T)))``, ``u`` over the lifted states:

    - (C.5) ``tau_i(ehat(x)) = P[M, H_i, Xhat_-i]`` over the lifted states (message passing on
      the lifted chain against sums over memories and paths);
    - ``phi(tau_i) = |M|^-(N-1) P[M_{j(h)} = m, H_i = h, Xhat_-i]``: the reverse lifting's factor
      (``factor``, default ``|M|^-(N-1)``; it cancels in ``Gbar`` but not here);
    - ``Gbar_i(ehat(x)) = P[Xhat_i | Xhat_-i]`` for ``i >= 1`` where ``Pr(Xhat_-i) > 0``, and
      ``= zero_value`` (default 0) where it is 0.

    ``fake`` (default ``u``) is the fake token's emission; a different one, factor or zero value
    states a wrong lemma, which this check refutes.
    """
    L = len(mhmm.pM) * mhmm.num_states
    n, X, M = mhmm.num_states, mhmm.num_tokens, mhmm.memory_values
    u = [Fraction(v) for v in u]
    fake = list(u) if fake is None else [Fraction(v) for v in fake]
    factor = Fraction(1, M ** (mhmm.cells - 1)) if factor is None else Fraction(factor)
    zero_value = [Fraction(0)] * X if zero_value is None else list(zero_value)
    lifted, configs = mhmm.lift(), _configs(mhmm)
    counts = {"sequences": len(sequences), "positions": 0, "positive": 0, "zero_norm": 0, "cells": mhmm.cells}
    if not sequences:
        return False, "vacuous: no sequences given, nothing was checked", counts
    for seq in sequences:
        emb = [u] + [list(lifted.W[z]) for z in seq]
        weights = [("lifted", fake)] + [("token", z) for z in seq]
        for i in range(len(emb)):
            counts["positions"] += 1
            free = list(weights)
            free[i] = ("lifted", [f + 1 - v for f, v in zip(fake, u)] if i == 0 else ones(L))
            joint = memory_path_joint(mhmm, free, keep=i + 1)
            where = f"x = {list(seq)}, position {i + 1}"
            got_tau = ie.tau(lifted, emb, i)
            if got_tau != joint:
                return False, f"{where}: tau over the lifted states differs from P[M, H_i, Xhat_-i]", counts
            marg = [Fraction(0)] * (M * n)                       # P[M_{j(h)} = m, H_i = h, Xhat_-i]
            for c, ms in enumerate(configs):
                for h in range(n):
                    marg[ms[mhmm.cell_of(h)] * n + h] += joint[c * n + h]
            if ie.reverse_lift(mhmm, got_tau) != [factor * v for v in marg]:
                return False, f"{where}: phi(tau_i) != {factor} * P[M_(j_i), H_i, Xhat_-i]", counts
            total = sum(joint)
            got = ie.prompt_gbar(mhmm, u, list(seq), i)
            if total == 0:
                counts["zero_norm"] += 1
                if got != zero_value:
                    return False, f"{where}: Pr(Xhat_-i) = 0 and Gbar_i = {got}, but the lemma says {zero_value}", counts
                continue
            if i == 0:
                continue
            counts["positive"] += 1
            want = []
            for z in range(X):
                w = list(weights)
                w[i] = ("token", z)
                want.append(memory_path_joint(mhmm, w) / total)
            if got != want:
                return False, f"{where}: Gbar_i = {got} but P[Xhat_i | Xhat_-i] of the augmented memory HMM = {want}", counts
    return True, (f"tau and phi(tau) (factor {factor}) equal at all {counts['positions']} positions of "
                  f"{len(sequences)} sequences, {mhmm.cells} cells; Gbar_i = P[Xhat_i | Xhat_-i] at "
                  f"{counts['positive']} positions, 0 at {counts['zero_norm']} zero-norm positions"), counts


def check_prop_c8(mhmm, sequences, shifts: int = 2) -> tuple[bool, str, dict]:
    """Proposition C.8: with a stationary start, ``P[M, H_i, X_{i+1:i+t} = x] = P[M, H_0, X_{1:t} = x]``
    for ``i = 1..shifts``, each side a vector over the lifted states ``(m_1..m_N, h)`` from sums
    over memories and paths (positions ``1..i`` free)."""
    L = len(mhmm.pM) * mhmm.num_states
    counts = {"sequences": len(sequences), "shifts": shifts, "cells": mhmm.cells}
    if not sequences or shifts < 1:
        return False, "vacuous: no sequences or shifts given, nothing was checked", counts
    for seq in sequences:
        tokens = [("token", z) for z in seq]
        base = memory_path_joint(mhmm, tokens, keep=0)
        for i in range(1, shifts + 1):
            other = memory_path_joint(mhmm, [("lifted", ones(L))] * i + tokens, keep=i)
            if other != base:
                return False, f"x = {list(seq)}: P[M, H_{i}, X_({i + 1}:) = x] != P[M, H_0, X = x]", counts
    return True, f"shift-invariant over (M, H) on {len(sequences)} sequences, shifts 1..{shifts}", counts


def check_prop_c11(mhmm, u, sequences) -> tuple[bool, str, dict]:
    """Proposition C.11: with the prompt ``u`` as the first input, for every later position
    ``i`` with ``Pr(Xhat_-i = xhat_-i) > 0``, ``supp(P[M_j* | Xhat_-i = xhat_-i]) ⊆ supp(mu)``
    (brute-force sums over memories and hidden paths, position ``i`` left free). A prompt that
    is not zero off ``supp(mu)`` can break it, and this check then says where."""
    L = len(mhmm.pM) * mhmm.num_states
    support = {m for m in range(mhmm.memory_values) if mhmm.mu[m] != 0}
    configs = _configs(mhmm)
    counts = {"sequences": len(sequences), "pairs": 0}
    for seq in sequences:
        for i in range(1, len(seq) + 1):
            weights = [("lifted", list(u))] + [("token", z) for z in seq]
            weights[i] = ("lifted", ones(L))
            parts = memory_path_joint(mhmm, weights, by_config=True)
            if sum(parts) == 0:
                continue
            counts["pairs"] += 1
            found = {configs[c][mhmm.target_cell] for c, p in enumerate(parts) if p}
            if not found <= support:
                return False, (f"x = {list(seq)}, position {i}: P[M_j* | Xhat_-i] puts mass on memory "
                               f"values {sorted(found - support)} outside supp(mu) = {sorted(support)}"), counts
    if not counts["pairs"]:
        return False, "vacuous: no position with Pr(Xhat_-i) > 0 among the sequences given", counts
    return True, f"supports inside supp(mu) = {sorted(support)} at {counts['pairs']} (sequence, position) pairs", counts


def _task(mhmm, mu=None):
    mu = mhmm.mu if mu is None else mu
    return [Fraction(mu[ms[mhmm.target_cell]]) for ms in _configs(mhmm)]


def check_claim_c14(mhmm, u, sequences) -> tuple[bool, str, dict]:
    """Claim C.14: for ``xhat = (z~, x)`` with ``Pr(Xhat = xhat) > 0``,
    ``mu . P[M_j* | Xhat = xhat] = mu . P[M_j* | X = x] / Pr(Xhat_1 = z~ | Xhat_{2:} = x)``, each
    side from brute-force sums over memories and hidden paths (the prompt position free for the
    denominator; ``X = x`` on the chain without a prompt). It rests on stationarity
    (Proposition C.8) and on ``u`` being 1 on ``supp(mu)``: a scaled prompt breaks it."""
    L = len(mhmm.pM) * mhmm.num_states
    task = _task(mhmm)
    counts = {"sequences": len(sequences), "possible": 0}
    for seq in sequences:
        tokens = [("token", z) for z in seq]
        hat = memory_path_joint(mhmm, [("lifted", list(u))] + tokens, by_config=True)
        if sum(hat) == 0:
            continue
        counts["possible"] += 1
        rest = memory_path_joint(mhmm, [("lifted", ones(L))] + tokens)          # Pr(Xhat_{2:} = x)
        plain = memory_path_joint(mhmm, tokens, by_config=True)
        lhs = sum(t * p for t, p in zip(task, hat)) / sum(hat) * (sum(hat) / rest)
        rhs = sum(t * p for t, p in zip(task, plain)) / sum(plain)
        if lhs != rhs:
            return False, (f"x = {list(seq)}: mu . P[M_j* | Xhat] Pr(z~ | Xhat_2:) = {lhs} but "
                           f"mu . P[M_j* | X = x] = {rhs}"), counts
    if not counts["possible"]:
        return False, "vacuous: no sequence with Pr(Xhat = xhat) > 0 among those given", counts
    return True, f"equal on {counts['possible']} sequences with Pr(xhat) > 0", counts


def check_claim_c15(mhmm, u, sequences, *, mu=None, zero_value=None) -> tuple[bool, str, dict]:
    """Claim C.15, both parts, with the prompt ``u`` of (C.6):

    1. every ``x`` with ``Pr(X = x) > 0`` and ``Pr(Xhat = (z~, x)) = 0`` (both brute-force sums)
       has ``mu . P[M_j* | X = x] = 0``, by brute force and by the message-passing posterior;
    2. every ``x`` and position ``i >= 1`` with ``Pr(Xhat_-i) = 0`` has ``Gbar_i(ehat(x)) = 0``.

    ``mu`` (default the instance's) is the task in the claimed identity and ``zero_value`` the
    claimed ``Gbar``: changing either states a wrong claim. Fails (vacuous) when no sequence of
    part 1 is among ``sequences``; ``counts["claim"]`` is how many there are.
    """
    L = len(mhmm.pM) * mhmm.num_states
    task = _task(mhmm, mu)
    mu_vec = [Fraction(v) for v in (mhmm.mu if mu is None else mu)]
    zero_value = [Fraction(0)] * mhmm.num_tokens if zero_value is None else list(zero_value)
    counts = {"sequences": len(sequences), "claim": 0, "zero_positions": 0}
    for seq in sequences:
        tokens = [("token", z) for z in seq]
        plain = memory_path_joint(mhmm, tokens, by_config=True)
        if sum(plain) != 0 and memory_path_joint(mhmm, [("lifted", list(u))] + tokens) == 0:
            counts["claim"] += 1
            brute = sum(t * p for t, p in zip(task, plain)) / sum(plain)
            coded = sum(m * p for m, p in zip(mu_vec, ie.memory_posterior(mhmm, list(seq))))
            if brute != 0 or coded != 0:
                return False, (f"x = {list(seq)}: Pr(x) > 0 = Pr(xhat) but mu . P[M_j* | X = x] = {brute} "
                               f"(message passing: {coded})"), counts
        for i in range(1, len(seq) + 1):
            weights = [("lifted", list(u))] + tokens
            weights[i] = ("lifted", ones(L))
            if memory_path_joint(mhmm, weights) != 0:
                continue
            counts["zero_positions"] += 1
            got = ie.prompt_gbar(mhmm, u, list(seq), i)
            if got != zero_value:
                return False, f"x = {list(seq)}, position {i + 1}: Pr(Xhat_-i) = 0 but Gbar_i = {got}", counts
    if not counts["claim"]:
        return False, ("vacuous: no sequence with Pr(x) > 0 and Pr(xhat) = 0 among the "
                       f"{len(sequences)} given"), counts
    return True, (f"{counts['claim']} sequences with Pr(x) > 0 and Pr(xhat) = 0, each with mu . P[M_j* | x] = 0; "
                  f"Gbar_i = 0 at all {counts['zero_positions']} positions with Pr(Xhat_-i) = 0"), counts
