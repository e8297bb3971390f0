"""Brute-force sums over hidden paths (and memories), written from the models' definitions and
independent of the message-passing code they check. Exact (``Fraction``); tiny instances only.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

__all__ = ["path_joint", "memory_path_joint", "words", "ones"]


def ones(n: int) -> list[Fraction]:
    """The weight of an unobserved position (every emission column sums to 1 over the tokens)."""
    return [Fraction(1)] * n


def words(vocab: int, length: int) -> list[tuple[int, ...]]:
    """Every token sequence of length ``1..length`` over ``0..vocab-1``, shortest first."""
    return [s for t in range(1, length + 1) for s in itertools.product(range(vocab), repeat=t)]


def path_joint(A, W, pi0, emissions, keep: int | None = None):
    """``sum over paths h_0..h_T of pi0[h_0] prod_j A[h_j, h_{j-1}] e_j[h_j]`` where
    ``emissions[j-1]`` is the weight vector ``e_j`` of position ``j`` (a token's column ``W[x]``,
    a prompt ``u``, or all ones for a free position). With ``keep = k`` the vector over
    ``h_k`` (``k = 0`` the silent start) instead of the total. Cost ``|H|^(T+1)``."""
    n = len(pi0)
    out = [Fraction(0)] * n
    for path in itertools.product(range(n), repeat=len(emissions) + 1):
        p = Fraction(pi0[path[0]])
        for j, e in enumerate(emissions, start=1):
            p *= Fraction(A[path[j]][path[j - 1]]) * Fraction(e[path[j]])
            if p == 0:
                break
        out[path[0 if keep is None else keep]] += p
    return out if keep is not None else sum(out)


def memory_path_joint(mhmm, weights, *, by_config: bool = False, keep: int | None = None):
    """``sum_m pM[m] sum_paths pi0[h_0] prod_j A[h_j, h_{j-1}] w_j(m, h_j)`` straight from the
    memory HMM's definition (Section 4): ``weights[j-1]`` is ``("token", z)`` (weight
    ``W[z, m_{cell(h)}, h]``) or ``("lifted", v)`` (weight ``v[c |H| + h]`` over the lifted
    states, ``c`` the configuration's index). With ``by_config`` the list of the
    per-configuration sums (lexicographic ``m_1..m_N``); with ``keep = k`` the vector over the
    lifted states ``(c, h_k)``, index ``c |H| + h_k``. Cost ``|M|^N |H|^(T+1)``."""
    n, S = mhmm.num_states, mhmm.syntax_states
    configs = list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))
    parts, lifted = [], [Fraction(0)] * (len(configs) * n)
    for c, ms in enumerate(configs):
        part = Fraction(0)
        if mhmm.pM[c] != 0:
            for path in itertools.product(range(n), repeat=len(weights) + 1):
                p = Fraction(mhmm.pM[c]) * Fraction(mhmm.pi0[path[0]])
                for j, (kind, val) in enumerate(weights, start=1):
                    h = path[j]
                    p *= Fraction(mhmm.A[h, path[j - 1]])
                    p *= Fraction(mhmm.W[val, ms[h // S], h]) if kind == "token" else Fraction(val[c * n + h])
                    if p == 0:
                        break
                part += p
                if keep is not None and p:
                    lifted[c * n + path[keep]] += p
        parts.append(part)
    if keep is not None:
        return lifted
    return parts if by_config else sum(parts, Fraction(0))
