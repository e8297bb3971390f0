"""Sequence sets for verification: exhaustive, sampled from the HMM, and adversarial ones
whose ``mu . P[H_0 | X = x]`` is zero or tiny (ties are real cases at the threshold)."""

from __future__ import annotations

import itertools

import numpy as np

from ...models.inference import floats as iff
from ...models.exceptions import InputError
from ...models.hmm.values import HMM
from ...models.generate.sampling import sample

__all__ = ["exhaustive", "sampled", "adversarial", "MAX_EXHAUSTIVE"]

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
