"""Block-sparse HMMs of language-model size (Chiu & Rush 2020 style), exact by construction.

HMM language models with ``2^14``-``2^16`` hidden states partition the states into classes and
the vocabulary into as many blocks, and let a state emit only the words of its class's block:
``W`` is block-diagonal up to a permutation, with ``|H| / C`` states and about ``|X| / C``
words per class. Transitions here are sparse as well: a random cycle through all states (an
irreducible chain), one self-loop (aperiodic) and a few random successors per state; one
*hub* state per class moves to every hub, and the states of ``H*`` (the task's support) move to
every hub too, so that every word sequence has a path from every state of ``H*`` and gives it
posterior mass (else most sequences would be exact ties of the task).

Every column is integer numerators over ``2^30`` summing to exactly ``2^30`` (``pi0`` over
``2^40``), all entries positive where nonzero, so the model is exact and its float form is the
same numbers (powers-of-two denominators, numerators below ``2^53``).

Theorem 3.6's Assumption 3.5 is planted: two states ``B = {b1, b2}`` whose transition columns
cover a set ``H*`` of states drawn from distinct classes, few per class (so ``W[:, H*]`` is
block-diagonal with independent columns, which the checker proves, never assumes), and ``mu``
is supported on ``H*`` with its threshold placed at the median of a float screen of sampled
sequences (both labels frequent).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import sparse

from ..exceptions import InputError
from ..hmm.large import LargeHMM

__all__ = ["block_hmm", "default_classes", "DENOMINATOR_BITS"]

DENOMINATOR_BITS = 30


def default_classes(num_states: int, num_tokens: int) -> int:
    """``C``: about 128 states per class and at least 8 words per block."""
    return max(1, min(num_tokens // 8, math.ceil(num_states / 128)))


def _integer_columns(weights: np.ndarray, counts: np.ndarray, bits: int) -> np.ndarray:
    """Positive float weights (consecutive runs of ``counts`` entries are columns) as positive
    integers summing to exactly ``2^bits`` per column (the surplus to each column's first entry)."""
    cols = np.repeat(np.arange(len(counts)), counts)
    sums = np.bincount(cols, weights=weights, minlength=len(counts))
    nums = np.maximum(np.floor(weights / sums[cols] * 2.0 ** bits), 1).astype(np.int64)
    totals = np.bincount(cols, weights=nums, minlength=len(counts)).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    nums[starts] += (1 << bits) - totals
    return nums


def block_hmm(num_states: int, num_tokens: int, *, rng: np.random.Generator, classes: int | None = None,
              successors: int = 4, essential_size: int | None = None, screen: int = 400,
              length: int = 8) -> LargeHMM:
    """A block-sparse exact HMM satisfying Assumptions 3.2 and 3.5 by construction (module
    docstring); ``info`` records ``B``, ``H_star``, ``classes`` and the recipe.

    Raises:
        InputError: sizes too small for the recipe.
    """
    H, X = num_states, num_tokens
    C = classes or default_classes(H, X)
    if H < 3 or X < 2 or C < 1 or X < C:
        raise InputError(f"block_hmm: needs |H| >= 3, |X| >= 2 and at least one word per class (|H| = {H}, "
                         f"|X| = {X}, classes = {C})")
    state_class = (np.arange(H) * C) // H                       # contiguous classes of states
    bounds = np.linspace(0, X, C + 1).astype(np.int64)          # token block of class c: bounds[c]..bounds[c+1]
    per_block = np.diff(bounds)
    # W: state h emits the words of its class's block only
    counts_W = per_block[state_class]
    rows_W = np.concatenate([np.arange(bounds[c], bounds[c + 1]) for c in state_class])
    W = sparse.csc_array((_integer_columns(rng.random(counts_W.sum()) + 0.05, counts_W, DENOMINATOR_BITS),
                          rows_W, np.concatenate([[0], np.cumsum(counts_W)])), shape=(X, H))
    # H*: essential states in distinct classes where possible, at most a quarter of a block each
    k = essential_size or int(min(64, max(2, X // 4), H - 2))
    cap = np.maximum(per_block // 4, 1)
    order = rng.permutation(H)
    H_star, used = [], np.zeros(C, dtype=np.int64)
    for h in order.tolist():
        c = state_class[h]
        if used[c] < cap[c]:
            H_star.append(h)
            used[c] += 1
            if len(H_star) == k:
                break
    rest = [h for h in order.tolist() if h not in set(H_star)]
    B = rest[:2]
    # A: a cycle through the states outside B's role, each column a few successors
    cycle = rng.permutation(H)
    nxt = np.empty(H, dtype=np.int64)
    nxt[cycle] = np.roll(cycle, -1)
    loop = next(h for h in cycle.tolist() if h not in B)
    cols_rows = []
    half = (len(H_star) + 1) // 2
    essential = set(H_star)
    hubs = np.searchsorted(state_class, np.arange(C)) + rng.integers(0, np.bincount(state_class, minlength=C))
    hub_set = set(hubs.tolist()) - set(B)
    for h in range(H):
        if h == B[0]:
            rows = set(H_star[:half])
        elif h == B[1]:
            rows = set(H_star[half:])
        else:
            rows = {int(nxt[h])} | ({h} if h == loop else set()) | set(rng.integers(0, H, successors - 1).tolist())
            if h in essential or h in hub_set:     # every hub: every word sequence is possible from h
                rows |= hub_set
        cols_rows.append(np.array(sorted(rows), dtype=np.int64))
    # B's columns must keep the cycle: b -> nxt[b] is needed for irreducibility
    H_set = set(H_star)
    for i, b in enumerate(B):
        if int(nxt[b]) not in H_set:
            H_star.append(int(nxt[b]))
            H_set.add(int(nxt[b]))
            cols_rows[b] = np.array(sorted(set(cols_rows[b].tolist()) | {int(nxt[b])}), dtype=np.int64)
    counts_A = np.array([len(r) for r in cols_rows], dtype=np.int64)
    A = sparse.csc_array((_integer_columns(rng.random(counts_A.sum()) + 0.05, counts_A, DENOMINATOR_BITS),
                          np.concatenate(cols_rows), np.concatenate([[0], np.cumsum(counts_A)])), shape=(H, H))
    pi0 = _integer_columns(rng.random(H) + 0.05, np.array([H]), 40)
    model = LargeHMM.create(A, np.full(H, 1 << DENOMINATOR_BITS), W, np.full(H, 1 << DENOMINATOR_BITS),
                            pi0, 1 << 40)
    mu, dmu, share = _task(model, sorted(H_star), rng=rng, screen=screen, length=length)
    info = {"B": sorted(B), "H_star": sorted(H_star), "classes": C, "label_shares": share,
            "recipe": f"block-sparse: {C} classes of states, each emitting only its own block of about "
                      f"{X // C} words; sparse A (a cycle through all states, a self-loop, {successors - 1} random "
                      f"successors per state, and one hub per class linked to every hub and reached from every state of H*; B's two columns cover H*, {len(H_star)} states of distinct classes); "
                      "integer numerators over 2^30 per column; mu on H* with its threshold between two distinct "
                      f"values of a float screen of {screen} sampled sequences, splitting it as evenly as they allow"}
    return LargeHMM(model.A, model.dA, model.W, model.dW, model.pi0, model.dpi, mu, dmu, info)


def _balanced_threshold(values: np.ndarray) -> float:
    """The midpoint between two consecutive distinct values that splits ``values`` closest to
    half and half (never a value itself: no sequence of the screen sits on the threshold)."""
    if values.size == 0:
        return 0.0
    v = np.sort(values)
    # values within float noise of each other are one value (the same atom computed twice):
    # a threshold between them would be an exact near-tie of the task, not a real split
    gap = np.diff(v) > 1e-6 * np.maximum(np.abs(v[1:]), 1.0)
    if not gap.any():
        return float(v[0]) - 1.0
    cut = np.flatnonzero(gap)                                 # split after v[cut]
    below = (cut + 1) / v.size                                # share strictly below each midpoint
    i = int(cut[np.argmin(np.abs(below - 0.5))])
    return float((v[i] + v[i + 1]) / 2)


def _task(model: LargeHMM, H_star: list[int], *, rng, screen: int, length: int):
    """``mu`` on ``H*``: random integer weights shifted by ``t 1_{H*}``, with ``t`` the median of
    ``m(x) / q(x)`` over sampled ``x`` (``m = mu . P[H_0 | x]``, ``q = P[H_0 in H* | x]``), so that
    the sign splits the screen as evenly as its distinct values allow (:func:`_balanced_threshold`); ``mu`` integers."""
    from ..inference.sparse import sample_large, posterior_h0_large

    base = np.zeros(model.num_states)
    base[H_star] = rng.integers(-100, 101, len(H_star))
    ind = np.zeros(model.num_states)
    ind[H_star] = 1.0
    tokens = sample_large(model, screen, length, rng=rng)
    post = posterior_h0_large(model, tokens)
    q = post @ ind
    ratio = (post @ base) / np.where(q > 0, q, 1.0)
    t = Fraction(_balanced_threshold(ratio[q > 0]))                    # a float, read exactly
    mu_fr = [Fraction(int(v)) - t * int(i) for v, i in zip(base.tolist(), ind.tolist())]
    d = math.lcm(*(f.denominator for f in mu_fr))
    mu = np.array([f.numerator * (d // f.denominator) for f in mu_fr], dtype=object)
    labels = (post @ np.array([float(v) for v in mu.tolist()]) >= 0)
    return mu, d, {"0": float(1 - labels.mean()), "1": float(labels.mean())}
