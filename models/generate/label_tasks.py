"""Tasks with every label on sequences a check reads, chosen from the model's own posteriors.

A property test over a task that takes one label on every sequence it checks proves nothing
(``vacuous`` in a report). The Hypothesis strategies (:mod:`.strategies`) therefore choose
``mu`` *constructively*: from the exact posteriors ``p_x`` that ``F*`` reads (``P[H_0 | X = x]``
for an HMM, ``P[M_j* | X = x]`` for a memory HMM) of short sequences ``x`` that
``verify theorem`` checks by default (every possible sequence of length 1 and 2; for a memory
family, the sequences that start with its trigger token, which are in ``R``), restricted to
the task's support ``S`` (``q_x = p_x`` on ``S``):

- two labels (:func:`two_label_task`): for two sequences whose ``q`` are not positive multiples
  of each other, ``mu = a q_1 + b q_2`` with ``mu . q_1 = 1`` and ``mu . q_2 = -1`` (the 2 x 2
  Gram system), or ``mu = -q_1`` when ``q_2 = 0``; then ``F*(x_1) = 1`` and ``F*(x_2) = 0``;
- ``k`` classes (:func:`class_task`): for ``k`` sequences with linearly independent ``q``, rows
  ``mu_c`` with ``mu_c . q_d = [c = d]`` (the dual basis), so class ``c`` wins at ``x_c``.

A perturbation ``eps v`` (``v`` in ``{-1, 1}^S``, ``eps`` below half of every margin and of
every nonzero entry; ``|v . q| <= 1`` since ``q`` is part of a probability vector) makes every
entry on ``S`` nonzero, so ``supp(mu) = S`` exactly (the support the assumptions read) while
each planted label keeps its strict sign. The task is scaled to coprime integers.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..hmm.linalg import solve
from ..hmm.values import HMM, MemoryHMM

__all__ = ["short_sequences", "task_posteriors", "two_label_task", "class_task"]


def short_sequences(num_tokens: int, *, max_length: int = 2, first: int | None = None) -> list[tuple[int, ...]]:
    """Every sequence of length ``1..max_length`` over ``0..num_tokens-1`` (those starting with
    token ``first`` only, when given), shortest first."""
    return [seq for k in range(1, max_length + 1) for seq in itertools.product(range(num_tokens), repeat=k)
            if first is None or seq[0] == first]


def task_posteriors(model: HMM | MemoryHMM, sequences: Sequence[Sequence[int]]
                    ) -> list[tuple[tuple[int, ...], list[Fraction]]]:
    """``(x, p_x)`` for each possible sequence ``x`` (``Pr(X = x) > 0``): the posterior ``F*``
    reads, exactly for an exact model (a float model's float posteriors, as the binary
    rationals they are)."""
    from ..inference import exact as ie
    from ..inference import floats as iff

    memory = isinstance(model, MemoryHMM)
    out = []
    if model.exact:
        for x in sequences:
            p = ie.memory_posterior(model, x) if memory else ie.posterior_h0(model, x)
            if any(p):
                out.append((tuple(x), p))
        return out
    if not sequences:
        return out
    by_length: dict[int, list] = {}
    for x in sequences:
        by_length.setdefault(len(x), []).append(tuple(x))
    for xs in by_length.values():
        tokens = np.array(xs, dtype=np.int64)
        post = iff.memory_posterior(model, tokens) if memory else iff.posterior_h0(model, tokens)
        for x, p in zip(xs, np.asarray(post, dtype=float)):
            if np.isfinite(p).all() and p.sum() > 0.5:          # impossible sequences: zero or nan rows
                out.append((x, [Fraction(float(v)) for v in p]))
    return out


def _dot(a: Sequence[Fraction], b: Sequence[Fraction]) -> Fraction:
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def _separating(q1: list[Fraction], q2: list[Fraction]) -> list[Fraction] | None:
    """``mu`` on ``S`` with ``mu . q1 > 0 > mu . q2`` (the Gram construction), or None when
    ``q1`` and ``q2`` are positive multiples of each other (or both 0)."""
    if not any(q1) or not any(q2):
        if not any(q1) and not any(q2):
            return None
        if not any(q1):                     # mu . q1 = 0 (label 1), mu . q2 = -|q2|^2 < 0
            return [-v for v in q2]
        return None                         # handled by the caller's pair in the other order
    a, b, c = _dot(q1, q1), _dot(q1, q2), _dot(q2, q2)
    det = a * c - b * b
    if det == 0:
        return None
    alpha, beta = (c + b) / det, -(a + b) / det                 # G [alpha, beta] = [1, -1]
    return [alpha * u + beta * v for u, v in zip(q1, q2)]


def _perturbed(rows: list[list[Fraction]], margin: Fraction, signs: Sequence[int]) -> list[list[Fraction]]:
    """``rows + eps v`` (module docstring), every entry nonzero, then scaled together to coprime
    integers (a positive factor: no label changes)."""
    nonzero = [abs(v) for row in rows for v in row if v != 0]
    eps = min([margin] + nonzero) / 2
    out = [[v + eps * (1 if s else -1) for v, s in zip(row, signs)] for row in rows]
    den = math.lcm(*(v.denominator for row in out for v in row))
    ints = [[int(v * den) for v in row] for row in out]
    g = math.gcd(*(v for row in ints for v in row)) or 1
    return [[Fraction(v // g) for v in row] for row in ints]


def _on_support(rows_S: list[list[Fraction]], support: Sequence[int], size: int) -> list[list[Fraction]]:
    out = []
    for row in rows_S:
        full = [Fraction(0)] * size
        for s, v in zip(support, row):
            full[s] = v
        out.append(full)
    return out


def two_label_task(posteriors: Sequence[tuple[tuple[int, ...], list[Fraction]]], support: Sequence[int],
                   size: int, *, signs: Sequence[int], start: int = 0) -> tuple[list[Fraction], tuple] | None:
    """``(mu, (x_1, x_0))``: a task of length ``size`` with ``supp(mu) = support`` under which
    ``F*(x_1) = 1(mu . p >= 0) = 1`` and ``F*(x_0) = 0``, for two of the ``posteriors``
    (:func:`task_posteriors`), pairs tried from index ``start`` on; ``signs`` (one per support
    entry, truthy for +) orient the perturbation. None when no pair allows it (every ``q`` a
    positive multiple of one vector, or one sequence only).

    >>> p = [((0,), [Fraction(3, 4), Fraction(1, 4)]), ((1,), [Fraction(1, 4), Fraction(3, 4)])]
    >>> mu, (one, zero) = two_label_task(p, [0, 1], 2, signs=[1, 1])
    >>> _dot(mu, p[0][1]) >= 0 > _dot(mu, p[1][1]), one, zero
    (True, (0,), (1,))
    """
    support = [int(s) for s in support]
    if not support:
        return None
    qs = [(x, [p[s] for s in support]) for x, p in posteriors]
    n = len(qs)
    order = [(i, j) for i in range(n) for j in range(n) if i != j]
    if not order:
        return None
    shift = start % len(order)
    for i, j in order[shift:] + order[:shift]:
        (x1, q1), (x0, q0) = qs[i], qs[j]
        mu = _separating(q1, q0)
        if mu is None:
            continue
        margin = min(_dot(mu, q1), -_dot(mu, q0)) if any(q1) else -_dot(mu, q0)
        if margin <= 0:
            continue
        row = _perturbed([mu], margin, signs)[0]
        assert _dot(row, q1) >= 0 > _dot(row, q0), "a planted label lost its sign"     # the claim, checked
        return _on_support([row], support, size)[0], (x1, x0)
    return None


def class_task(posteriors: Sequence[tuple[tuple[int, ...], list[Fraction]]], support: Sequence[int], size: int,
               classes: int, *, signs: Sequence[int]) -> list[list[Fraction]] | None:
    """A ``classes x size`` task (rows supported on exactly ``support``) under which class ``c``
    is the strict argmax at the ``c``-th of ``classes`` posteriors whose restrictions to
    ``support`` are linearly independent (the dual basis, module docstring); None when the
    posteriors span fewer than ``classes`` dimensions on ``support``."""
    support = [int(s) for s in support]
    chosen: list[list[Fraction]] = []
    for _, p in posteriors:
        q = [p[s] for s in support]
        trial = chosen + [q]
        gram = np.array([[_dot(a, b) for b in trial] for a in trial], dtype=object)
        if _rank_full(gram):
            chosen = trial
        if len(chosen) == classes:
            break
    if len(chosen) < classes:
        return None
    k = len(chosen)
    gram = np.array([[_dot(a, b) for b in chosen] for a in chosen], dtype=object)
    rows = []
    for c in range(k):
        e = np.array([Fraction(int(c == d)) for d in range(k)], dtype=object)
        coef = solve(gram, e)                                   # mu_c = Q^T G^-1 e_c
        rows.append([sum((coef[d] * chosen[d][t] for d in range(k)), Fraction(0)) for t in range(len(support))])
    out = _perturbed(rows, Fraction(1, 2), signs)
    for c, q in enumerate(chosen):                              # the claim, checked: c wins strictly at x_c
        scores = [_dot(row, q) for row in out]
        assert max(range(k), key=lambda d: (scores[d], d)) == c and scores.count(scores[c]) == 1
    return _on_support(out, support, size)


def _rank_full(gram: np.ndarray) -> bool:
    from ..hmm.linalg import rank

    return rank(gram) == gram.shape[0]
