"""Lemma B.1 (the prompt is a fake token) checked at every position, both halves: where
``Pr(Xhat_-i) > 0`` the conditional of the augmented HMM, where it is 0 the zero vector.

The left side is message passing (:func:`headprompt.models.inference.exact.tau` and ``gbar``);
the right side is a brute-force path sum of the HMM augmented with the fake token ``z~``
(emission ``u`` at time 1, real tokens ``(1 - u) ⊙ W[z]`` there), :mod:`.paths`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ....models.hmm.values import HMM
from ....models.inference import exact as ie
from ....models.generate.generators import prompt_friendly_hmm, stationary_distribution
from .paths import ones, path_joint

__all__ = ["check_lemma_b1", "small_instance", "zero_norm_instance", "stationary"]


def small_instance(seed: int = 0, hidden: int = 3, vocab: int = 2) -> HMM:
    """A small exact instance with a binary task (the generator of Theorem 3.6)."""
    return prompt_friendly_hmm(hidden, vocab, rng=np.random.default_rng(seed))[0]


def zero_norm_instance() -> HMM:
    """An ergodic three-state HMM with zeros (0 -> 1 -> 2 -> {0, 2}; token 0 from states 0 and 1,
    token 1 from states 1 and 2; uniform ``P[H_0]``): with the prompt ``u = (1, 0, 0)`` the
    chain is pinned for two steps, so many ``Xhat_-i`` are impossible while ``x`` is not, and
    Lemma B.1's zero-norm half is exercised."""
    h = "1/2"
    return HMM.create([[0, 0, h], [1, 0, 0], [0, 1, h]], [[1, h, 0], [0, h, 1]],
                      ["1/3", "1/3", "1/3"], [1, -1, 0])


def stationary(hmm: HMM) -> HMM:
    """The same chain started from its exact stationary distribution."""
    return HMM.create(hmm.A, hmm.W, stationary_distribution(hmm.A), hmm.mu)


def check_lemma_b1(hmm: HMM, u, sequences, *, fake=None, zero_value=None) -> tuple[bool, str, dict]:
    """Lemma B.1 at every position ``i`` of ``ehat(x) = (u, e(∅), e(x_1), ..., e(x_T))``:

    - (B.2) ``tau_i(ehat(x)) = P[H_i, Xhat_-i = (z~, ∅, x)_-i]`` for every ``i``, including the
      prompt position (there ``Xhat_1`` is summed over ``z~`` and the real tokens);
    - for ``i > 1`` (0-based ``i >= 1``) with ``Pr(Xhat_-i) > 0``:
      ``Gbar_i(ehat(x)) = P[Xhat_i | Xhat_-i]``, each token's joint a separate path sum;
    - for every ``i`` with ``Pr(Xhat_-i) = 0``: ``Gbar_i(ehat(x)) = 0``.

    ``fake`` (default ``u``) is the emission column of ``z~`` and ``zero_value`` (default the zero
    vector) what the lemma says at zero norm: any other choice states a wrong lemma, which this
    check must refute. Returns ``(holds, detail, counts)``; an empty ``sequences`` fails.
    """
    n, X = hmm.num_states, hmm.num_tokens
    W = [list(r) for r in hmm.W]
    u = [Fraction(v) for v in u]
    fake = list(u) if fake is None else [Fraction(v) for v in fake]
    zero_value = [Fraction(0)] * X if zero_value is None else list(zero_value)
    first = [f + 1 - v for f, v in zip(fake, u)]          # Xhat_1 summed over z~ and the tokens
    counts = {"sequences": len(sequences), "positions": 0, "positive": 0, "zero_norm": 0}
    if not sequences:
        return False, "vacuous: no sequences given, nothing was checked", counts
    for seq in sequences:
        emb = [u, ones(n)] + [W[z] for z in seq]
        weights = [fake, ones(n)] + [W[z] for z in seq]
        for i in range(len(emb)):
            counts["positions"] += 1
            free = list(weights)
            free[i] = first if i == 0 else ones(n)
            joint = path_joint(hmm.A, W, hmm.pi0, free, keep=i + 1)
            got_tau = ie.tau(hmm, emb, i)
            if got_tau != joint:
                return False, (f"x = {list(seq)}, position {i + 1}: tau = {got_tau} but "
                               f"P[H_i, Xhat_-i] of the augmented HMM = {joint}"), counts
            total = sum(joint)
            got = ie.gbar(hmm, emb, i)
            if total == 0:
                counts["zero_norm"] += 1
                if got != zero_value:
                    return False, (f"x = {list(seq)}, position {i + 1}: Pr(Xhat_-i) = 0 and Gbar_i = {got}, "
                                   f"but the lemma says {zero_value}"), counts
                continue
            if i == 0:
                continue
            counts["positive"] += 1
            want = []
            for z in range(X):
                w = list(weights)
                w[i] = W[z]
                want.append(path_joint(hmm.A, W, hmm.pi0, w) / total)
            if got != want:
                return False, (f"x = {list(seq)}, position {i + 1}: Gbar_i = {got} but P[Xhat_i | Xhat_-i] "
                               f"of the augmented HMM = {want}"), counts
    return True, (f"tau equal at all {counts['positions']} positions of {len(sequences)} sequences; "
                  f"Gbar_i = P[Xhat_i | Xhat_-i] at {counts['positive']} positions, Gbar_i = 0 at "
                  f"{counts['zero_norm']} zero-norm positions"), counts
