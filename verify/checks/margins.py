"""Per-sequence margins for reports (:meth:`headprompt.verify.api.TheoremReport.rows`).

A report's rows give, per checked sequence, the task margin ``mu . P[H_0 | x]`` (or
``mu . P[M_j* | x]``) and the head margin (the head's output before the threshold). By default
they are float64 values with a *certified* error bound (the a priori bound of
:mod:`headprompt.models.inference.bounds`): ``|exact - value| <= bound``; a row whose bound
cannot prove the signs (near-ties, underflow) is computed exactly instead. On demand they are
exact fractions (integer messages shared along suffixes). Sequences go through in chunks, so
memory stays bounded whatever the count.

Vanilla HMMs (Theorems 3.3, 3.6), from the backward message ``beta(x)[h] ∝ Pr(x | H_0 = h)``::

    mu . P[H_0 | x] = (mu ⊙ P[H_0]) . beta / (P[H_0] . beta)
    b . Gbar        = (W^T b ⊙ pre) . beta / (pre . beta)       (0 when pre . beta = 0)

with ``pre`` the forward message into the read position
(:func:`~headprompt.verify.checks.vanilla.check.read_position_prior`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ...models.hmm.values import HMM
from ...models.inference import bounds as ib
from ...models.inference import exact as ie
from ...models.inference import floats as iff
from ...models.inference.exact import head_weights, integer_hmm, scaled_integer_vector
from .vanilla.check import read_position_prior

__all__ = ["ratio_with_bound", "vanilla_margins", "CHUNK"]

CHUNK = 2048
"""Sequences per batch of the float kernel and of the exact route (bounded memory)."""


def ratio_with_bound(num: np.ndarray, num_bound: np.ndarray, den: np.ndarray, den_count: int):
    """``(value, bound)`` of ``a / b`` from a computed ``num = fl(a)`` with ``|num - a| <= num_bound``
    and a computed nonnegative ``den = b (1 + theta)``, ``|theta| <= gamma_den_count``; ``0`` with
    bound ``0`` where ``den == 0`` (an exact zero, :mod:`bounds` item 6).

    ``a/b - num/den = (a theta - (num - a)(1 + theta)) / den`` up to the factor
    ``1 / (1 + theta)``, so ``|a/b - num/den| <= (|num| e + num_bound) / (den (1 - e))`` with
    ``e = e_k`` of :func:`~headprompt.models.inference.bounds.ratio_error_factor`; the float
    division and the bound's own evaluation add a few roundings, covered by
    :func:`~headprompt.models.inference.bounds.round_up`.
    """
    num, num_bound, den = (np.asarray(v, dtype=float) for v in (num, num_bound, den))
    live = den > 0
    safe = np.where(live, den, 1.0)
    value = np.where(live, num / safe, 0.0)
    e = ib.ratio_error_factor(int(den_count)) if den_count else 0.0
    raw = (np.abs(num) * e * (1 + e) + num_bound * (1 + e)) / (safe * (1 - e)) + ib.UNIT_ROUNDOFF * np.abs(value)
    bound = np.where(live, ib.round_up(raw * (1 + 8 * ib.UNIT_ROUNDOFF), raw), 0.0)
    return value, bound


def _rows(hmm: HMM, theorem: str, b, u) -> list:
    pre = read_position_prior(hmm, theorem, u)
    return [head_weights(hmm, b) * pre, hmm.mu * hmm.pi0, pre, hmm.pi0]


def vanilla_margins(hmm: HMM, theorem: str, b, u, sequences: Sequence[Sequence[int]], *, exact: bool = False):
    """Per sequence ``(possible, task, task_bound, head, head_bound)``: floats with certified
    bounds, or (``exact``, and for every row the bound does not settle) exact ``Fraction``
    values with bound ``0``. ``task``/``head`` are ``None`` when ``Pr(x) = 0``.

    Raises:
        LimitError: the exact rows would exceed the time or memory limit of exact checks
            (:func:`~headprompt.verify.runtime.cost.check_fallback`), sized before any work.
    """
    from ..runtime.cost import check_fallback

    seqs = [tuple(int(z) for z in s) for s in sequences]
    out: list = [None] * len(seqs)
    redo = list(range(len(seqs)))
    rows = _rows(hmm, theorem, b, u)
    if not exact:
        redo = _float_margins(hmm, rows, seqs, out)
    if redo:
        check_fallback(len(redo), max(len(seqs[k]) for k in redo), hmm.num_states, model=hmm)
        _exact_margins(hmm, rows, seqs, redo, out)
    return out


def _float_margins(hmm: HMM, rows: list, seqs: list, out: list) -> list[int]:
    """Fill ``out`` where the bound proves both signs; return the indices left for exact."""
    pos, neg, rmin, usable = ib.split_rows(rows)
    chain = ib.bound_chain(hmm)
    usable = usable and chain.usable
    if not usable:                 # no bound is claimed (e.g. a head weight past float64): all exact,
        return list(range(len(seqs)))      # without inf * 0 products in the float pass
    floor = chain.floor_for(rmin)
    H = hmm.num_states
    groups: dict[int, list[int]] = {}
    for k, s in enumerate(seqs):
        groups.setdefault(len(s), []).append(k)
    redo = []
    for t, where in sorted(groups.items()):
        count = ib.backward_count(t, H) + 1 + H
        for i in range(0, len(where), CHUNK):
            part = where[i:i + CHUNK]
            tokens = np.array([seqs[k] for k in part], dtype=np.int64).reshape(len(part), t)
            m = iff.scaled_messages(chain.A, chain.AT, chain.pi0, chain.W, np.ascontiguousarray(tokens.T),
                                    forward=False, store=False, track=True, every=chain.every)
            P, N = m["beta0"] @ pos, m["beta0"] @ neg                   # [n, 4], nonnegative
            _, decided, bound = ib.certified_signs(P, N, count)
            task, task_b = ratio_with_bound(P[:, 1] - N[:, 1], bound[:, 1], P[:, 3], count)
            head, head_b = ratio_with_bound(P[:, 0] - N[:, 0], bound[:, 0], P[:, 2], count)
            ok = (m["minpos"] >= floor) & usable & decided[:, 0] & decided[:, 1]
            ok &= (task == 0) | (np.abs(task) > task_b)
            ok &= (head == 0) | (np.abs(head) > head_b)
            for r, k in enumerate(part):
                if not ok[r]:
                    redo.append(k)
                elif P[r, 3] == 0:
                    out[k] = (False, None, 0.0, None, 0.0)
                else:
                    out[k] = (True, float(task[r]), float(task_b[r]), float(head[r]), float(head_b[r]))
    return redo


def _exact_margins(hmm: HMM, rows: list, seqs: list, redo: list[int], out: list) -> None:
    ih = integer_hmm(hmm)
    ints, scales = [], []
    for r in rows:
        v, d = scaled_integer_vector([Fraction(x) for x in r])
        ints.append(v)
        scales.append(int(d))
    matrix = flint.fmpz_mat(ints)
    s0, s1, s2, s3 = scales
    for i in range(0, len(redo), CHUNK):
        where: dict[tuple, list[int]] = {}
        for k in redo[i:i + CHUNK]:
            where.setdefault(seqs[k], []).append(k)
        for seq, beta in ie.shared_backward_messages(ih, list(where)):
            v = matrix * beta
            v0, v1, v2, v3 = (int(v[r, 0]) for r in range(4))
            if v3 == 0:
                row = (False, None, 0.0, None, 0.0)
            else:
                head = Fraction(v0 * s2, v2 * s0) if v2 else Fraction(0)
                row = (True, Fraction(v1 * s3, v3 * s1), 0.0, head, 0.0)
            for k in where[seq]:
                out[k] = row
