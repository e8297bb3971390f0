"""Sequence sets for verification: exhaustive, sampled from the HMM, and adversarial ones
whose ``mu . P[H_0 | X = x]`` is zero or tiny (ties are real cases at the threshold)."""

from __future__ import annotations

import itertools

import numpy as np

from ...models.inference import floats as iff
from ...models.exceptions import InputError
from ...models.hmm.values import HMM
from ...models.generate.sampling import sample

__all__ = ["exhaustive", "sampled", "adversarial", "near_ties", "near_tie_reach", "MAX_EXHAUSTIVE", "NEAR_TIE_MAX_STATES",
           "NEAR_TIE_BUDGET"]

MAX_EXHAUSTIVE = 2_000_000


def exhaustive(num_tokens: int, max_length: int) -> list[tuple[int, ...]]:
    """Every sequence of length ``1..max_length``.

    Raises:
        InputError: when there would be more than ``MAX_EXHAUSTIVE`` sequences.
    """
    total = sum(num_tokens ** k for k in range(1, max_length + 1))
    if max_length < 1 or total > MAX_EXHAUSTIVE:
        raise InputError(f"--exhaustive --length {max_length}: {total} sequences over {num_tokens} "
                         f"tokens; the limit is {MAX_EXHAUSTIVE} (use a shorter --length or --samples)")
    return [seq for k in range(1, max_length + 1) for seq in itertools.product(range(num_tokens), repeat=k)]


def sampled(hmm: HMM, count: int, length: int, *, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """``count`` sequences of ``length`` tokens drawn from the HMM (so all have ``Pr(x) > 0``)."""
    tokens, _ = sample(hmm.to_float(), count, length, rng=rng)
    return list(map(tuple, tokens.tolist()))


def _margins(hmm: HMM, tokens: np.ndarray) -> np.ndarray:
    """``|mu . P[H_0 | x]| / ||mu||_1`` per row (``inf`` where ``Pr(x) = 0``), in float."""
    _, _, _, pi0 = iff.float_arrays(hmm)
    mu = np.asarray(hmm.mu, dtype=float)
    post = iff.posterior_h0(hmm, tokens)
    margin = np.abs(post @ mu) / max(np.abs(mu).sum(), 1e-300)
    return np.where(post.sum(axis=1) > 0, margin, np.inf)        # impossible sequences last


def adversarial(hmm: HMM, count: int, length: int, *, rng: np.random.Generator,
                pool: int = 2000, rounds: int = 3) -> list[tuple[int, ...]]:
    """Sequences near the threshold: every sequence of length <= 2, plus ``count`` sequences of
    ``length`` tokens found by greedy token substitution minimising ``|mu . P[H_0 | x]|`` (in
    float, only to find candidates; verdicts are decided elsewhere). A ``k``-row task splits
    ``count`` over the pairs of classes (the margin of ``mu_d - mu_c``).

    Each sweep visits the positions left to right and puts there the token with the smallest
    margin, the others fixed. With ``beta_j`` the backward message after position ``j``
    (computed once per sweep: the suffix has not changed yet) and ``l_j`` the functionals
    ``mu ⊙ pi0`` and ``pi0`` carried forward through the new prefix
    (``l_{j+1} = W_{x_j} ⊙ (A l_j)``), the margin of token ``z`` at ``j`` is
    ``(A l_j) . (W_z ⊙ beta_j)``: all ``|X|`` candidates of all sequences in two small products.
    """
    X = hmm.num_tokens
    short = exhaustive(X, min(2, length)) if X ** min(2, length) <= 10_000 else []
    if hmm.mu is None or count < 1:
        return short
    if np.ndim(hmm.mu) == 2:            # k classes: near the boundary mu_d . p = mu_c . p of each pair
        k = hmm.mu.shape[0]
        pairs = [(c, d) for c in range(k) for d in range(c + 1, k)]
        found = [s for c, d in pairs for s in adversarial(hmm.with_task(hmm.mu[d] - hmm.mu[c]),
                                                          max(1, count // len(pairs)), length, rng=rng,
                                                          pool=pool, rounds=rounds)]
        return list(dict.fromkeys(found))
    A, AT, W, pi0 = iff.float_arrays(hmm)
    WT = np.ascontiguousarray(W.T)
    mu = np.asarray(hmm.mu, dtype=float)
    tokens, _ = sample(hmm.to_float(), max(pool, count), length, rng=rng)
    best = np.ascontiguousarray(tokens[np.argsort(_margins(hmm, tokens))[:count]])
    n, H = len(best), len(pi0)
    start = np.stack([mu * pi0, pi0])                                  # [2, H]
    with iff.single_thread_blas():
        for _ in range(rounds):
            beta = iff.scaled_messages(A, AT, pi0, W, np.ascontiguousarray(best.T), forward=False)["beta"]
            left = np.broadcast_to(start, (n, 2, H)).reshape(2 * n, H).copy()   # rows (sequence, functional)
            for pos in range(length):
                g = (left @ AT).reshape(n, 2, H)                           # A l_j, as rows
                s = ((g * beta[pos][:, None, :]).reshape(2 * n, H) @ WT).reshape(n, 2, X)
                with np.errstate(divide="ignore", invalid="ignore"):
                    margin = np.where(s[:, 1] > 0, np.abs(s[:, 0]) / s[:, 1], np.inf)
                best[:, pos] = np.argmin(margin, axis=1)
                g *= W[best[:, pos]][:, None, :]                            # l_{j+1}
                scale = g[:, 1].max(axis=1)
                g /= np.where(scale > 0, scale, 1.0)[:, None, None]
                left = g.reshape(2 * n, H)
    found = list(map(tuple, best.tolist()))
    return list(dict.fromkeys(short + found))


NEAR_TIE_MAX_STATES = 64
"""Above this many hidden states the exact near-tie search is skipped (its exact posteriors
would cost more than the check itself)."""

NEAR_TIE_BUDGET = 200_000_000
"""Exact work allowed to the near-tie search, in exact multiply-adds (``|H|^2`` per token step
of every candidate): about two seconds. Lengths past the budget are not searched, and the
report's ``lengths`` only lists the lengths whose sequences were checked."""


def near_tie_reach(hmm: HMM, max_length: int, *, beam: int = 8, exhaustive_up_to: int = 512) -> int:
    """The longest length ``t <= max_length`` that :func:`near_ties` searches: lengths ``1..t``
    fit in :data:`NEAR_TIE_BUDGET` (0 when the search does not apply). Decided from sizes alone,
    so a run is reproducible on any machine."""
    if hmm.mu is None or np.ndim(hmm.mu) != 1 or hmm.num_states > NEAR_TIE_MAX_STATES:
        return 0
    X, H2, spent, reach = hmm.num_tokens, hmm.num_states ** 2, 0, 0
    for t in range(1, max_length + 1):
        candidates = X ** t if X ** t <= exhaustive_up_to else 2 * beam * X
        spent += candidates * t * H2
        if spent > NEAR_TIE_BUDGET:
            break
        reach = t
    return reach


def near_ties(hmm: HMM, max_length: int, *, beam: int = 8, keep: int = 4,
              exhaustive_up_to: int = 512) -> list[tuple[int, ...]]:
    """For every length ``1..max_length`` (up to :func:`near_tie_reach`), the sequences whose ``|mu . P[H_0 | X = x]|`` is
    smallest without being 0 (and up to ``keep`` exact ties), ranked in exact rational
    arithmetic, so that a margin of ``1e-40`` is as visible as one of ``0.1`` (a float ranking
    cannot tell such a near-tie from a tie).

    Length ``t`` searches every sequence when there are at most ``exhaustive_up_to`` of them,
    else a beam: the ``beam`` best sequences of length ``t - 1`` (smallest nonzero margin first,
    then ties) extended by every token. Impossible sequences (``Pr(x) = 0``) are skipped. Binary
    tasks only (an empty list otherwise, or when ``|H|`` exceeds :data:`NEAR_TIE_MAX_STATES`).

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, 0], [0, 1]], [['3/4', '1/4'], ['1/4', '3/4']], ['1/2', '1/2'], mu=[1, -1])
    >>> near_ties(h, 2, keep=1)     # per length: the smallest nonzero |margin|, then a tie ((0, 1))
    [(0,), (0, 0), (0, 1)]
    """
    from ...models.inference import exact as ie

    max_length = near_tie_reach(hmm, max_length, beam=beam, exhaustive_up_to=exhaustive_up_to)
    if max_length < 1:
        return []
    mu = list(hmm.mu)
    X = hmm.num_tokens
    out: list[tuple[int, ...]] = []
    frontier: list[tuple[int, ...]] = [()]
    for t in range(1, max_length + 1):
        if X ** t <= exhaustive_up_to:
            candidates = list(itertools.product(range(X), repeat=t))
        else:
            candidates = list(dict.fromkeys(s + (z,) for s in frontier for z in range(X)))
        scored = []
        for seq in candidates:
            post = ie.posterior_h0(hmm, seq)
            if not any(post):
                continue
            scored.append((abs(sum(m * p for m, p in zip(mu, post))), seq))
        nonzero = sorted((s for s in scored if s[0] != 0), key=lambda s: (s[0], s[1]))
        ties = sorted(s[1] for s in scored if s[0] == 0)
        out += [seq for _, seq in nonzero[:keep]] + ties[:keep]
        frontier = [seq for _, seq in nonzero[:beam]] + ties[:beam]
        if not frontier:
            break
    return list(dict.fromkeys(out))
