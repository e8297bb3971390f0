"""Sequence sets for verification: exhaustive, sampled from the HMM, and adversarial ones
whose ``mu . P[H_0 | X = x]`` is zero or tiny (ties are real cases at the threshold)."""

from __future__ import annotations

import itertools

import numpy as np

from ..models import inference_float as iff
from ..models.exceptions import InputError
from ..models.hmm import HMM
from ..models.sampling import sample

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
    return [tuple(int(z) for z in row) for row in tokens]


def _margin(hmm: HMM, tokens: np.ndarray) -> np.ndarray:
    mu = np.asarray(hmm.mu, dtype=float)
    post = iff.posterior_h0(hmm.to_float(), tokens)
    margin = np.abs(post @ mu) / max(np.abs(mu).sum(), 1e-300)
    return np.where(post.sum(axis=1) > 0, margin, np.inf)        # impossible sequences last


def adversarial(hmm: HMM, count: int, length: int, *, rng: np.random.Generator,
                pool: int = 2000, rounds: int = 3) -> list[tuple[int, ...]]:
    """Sequences near the threshold: every sequence of length <= 2, plus ``count`` sequences of
    ``length`` tokens found by greedy token substitution minimising ``|mu . P[H_0 | x]|`` (in
    float, only to find candidates; verdicts are decided elsewhere)."""
    X = hmm.num_tokens
    short = exhaustive(X, min(2, length))
    tokens, _ = sample(hmm.to_float(), pool, length, rng=rng)
    best = tokens[np.argsort(_margin(hmm, tokens))[:count]].copy()
    for _ in range(rounds):
        for pos in range(length):
            variants = np.repeat(best[:, None, :], X, axis=1)          # [count, X, length]
            variants[:, :, pos] = np.arange(X)[None, :]
            margins = _margin(hmm, variants.reshape(-1, length)).reshape(len(best), X)
            best[:, pos] = np.argmin(margins, axis=1)
    found = [tuple(int(z) for z in row) for row in best]
    return list(dict.fromkeys(short + found))
