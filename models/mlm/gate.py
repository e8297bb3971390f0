"""The pretraining quality gate: how well a masked-LM computes the exact ``G_i``.

On held-out sequences sampled from the HMM, the MLM's softmax at a masked position (position 0,
where the downstream heads read, and one uniform position per sequence) is compared with the
exact conditional ``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` (``inference_float.conditionals``,
float64; a memory HMM through its lift): mean total-variation distance, and the gap between the
two negative log-likelihoods of the true token. A model passes when the mean TV is at most the
threshold (``PretrainConfig.gate_tv``, 0.05 by default).

The downstream gate (:func:`read_gate`) measures what the heads read: the TV at position 0
alone, on fresh held-out sequences of the downstream length, with an upper confidence bound
``mean + z * SE`` (``z`` = :data:`GATE_Z`, one-sided 95%; ``SE`` the standard error of the mean
over sequences); a model passes when the bound is at most the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .model import MLM, masked_predictions, sample_documents

__all__ = ["GateSet", "gate_set", "quality", "first_position_tv", "read_gate", "GATE_Z"]

GATE_Z = 1.645   # one-sided 95% normal quantile: the gate's upper confidence bound


@dataclass(frozen=True)
class GateSet:
    """Held-out sequences ``tokens`` ``[n, L]``, masked positions ``positions`` ``[n, 2]``
    (position 0, where the downstream heads read, and one uniform position in ``1..L-1``) and
    the exact ``G_i`` there, ``exact`` ``[n, 2, X]`` (float64, from ``inference_float``)."""

    tokens: np.ndarray
    positions: np.ndarray
    exact: np.ndarray


def gate_set(hmm, num_sequences: int, length: int, *, seed) -> GateSet:
    """Sample a :class:`GateSet` from ``hmm`` (a memory HMM is read through its lift)."""
    from ..inference import floats as inference_float
    from ..hmm.values import MemoryHMM

    base = list(seed) if isinstance(seed, (list, tuple)) else [seed]
    tokens = sample_documents(hmm, num_sequences, length, seed=[*base, 0x6A7E])
    rng = np.random.default_rng([*base, 0x9051])
    positions = np.stack([np.zeros(num_sequences, dtype=np.int64),
                          rng.integers(1, length, num_sequences)], axis=1)        # [n, 2]
    vanilla = (hmm.lift() if isinstance(hmm, MemoryHMM) else hmm).to_float()
    cond = inference_float.conditionals(vanilla, tokens)                           # [n, L, X]
    exact = np.take_along_axis(cond, positions[:, :, None], axis=1)                # [n, 2, X]
    return GateSet(tokens, positions, exact)


def quality(model: MLM, gate: GateSet, threshold: float = 0.05) -> dict:
    """How well ``model`` computes ``G_i`` on ``gate``'s held-out sequences.

    Returns ``tv`` (mean total-variation distance ``0.5 |p - G_i|_1`` over both masked positions
    of every sequence), ``tv_first`` (position 0 only, where the downstream heads read),
    ``tv_first_se`` (its standard error over sequences) and ``tv_first_bound`` (``tv_first +``
    :data:`GATE_Z` ``* tv_first_se``, the statistic pretraining stops on), ``mlm_loss`` and ``exact_loss`` (mean
    negative log-likelihood, nats, of the true token under the MLM and under the exact ``G_i``),
    ``loss_gap`` (their difference, >= 0 in expectation), ``passed`` (``tv <= threshold``),
    ``threshold`` and ``sequences``."""
    tokens = torch.as_tensor(gate.tokens)
    n = len(tokens)
    preds = torch.stack([masked_predictions(model, tokens, torch.as_tensor(gate.positions[:, j]))
                         for j in range(gate.positions.shape[1])], dim=1).double().numpy()   # [n, 2, X]
    tv = 0.5 * np.abs(preds - gate.exact).sum(-1)                                   # [n, 2]
    truth = np.take_along_axis(gate.tokens, gate.positions, axis=1)                  # [n, 2]
    pick = lambda p: np.take_along_axis(p, truth[:, :, None], axis=2)[..., 0]       # noqa: E731
    mlm_loss = float(-np.log(np.maximum(pick(preds), 1e-12)).mean())
    exact_loss = float(-np.log(np.maximum(pick(gate.exact), 1e-300)).mean())
    first = tv[:, 0]
    se = float(first.std(ddof=1) / np.sqrt(n)) if n > 1 else float("inf")
    return {"tv": float(tv.mean()), "tv_first": float(first.mean()), "tv_first_se": se,
            "tv_first_bound": float(first.mean()) + GATE_Z * se, "mlm_loss": mlm_loss,
            "exact_loss": exact_loss, "loss_gap": mlm_loss - exact_loss,
            "passed": bool(tv.mean() <= threshold), "threshold": float(threshold), "sequences": int(n)}


def first_position_tv(model: MLM, hmm, num_sequences: int, length: int, *, seed) -> np.ndarray:
    """Per-sequence TV ``[n]`` between the MLM's prediction at position 0 of ``length``-token
    held-out sequences and the exact ``G_0`` (sequences from ``seed``)."""
    from ..hmm.values import MemoryHMM
    from ..inference import floats as inference_float

    base = list(seed) if isinstance(seed, (list, tuple)) else [seed]
    tokens = sample_documents(hmm, num_sequences, length, seed=[*base, 0x6A70])
    vanilla = (hmm.lift() if isinstance(hmm, MemoryHMM) else hmm).to_float()
    exact = inference_float.conditionals(vanilla, tokens)[:, 0]                    # [n, X]
    t = torch.as_tensor(tokens)
    preds = masked_predictions(model, t, torch.zeros(len(t), dtype=torch.long)).double().numpy()
    return 0.5 * np.abs(preds - exact).sum(-1)


def read_gate(model: MLM, hmm, num_sequences: int, length: int, *, seed, threshold: float = 0.05,
              z: float = GATE_Z) -> dict:
    """The downstream gate (module docstring): ``tv0`` (mean TV at position 0), ``se``,
    ``bound`` (``tv0 + z * se``), ``passed`` (``bound <= threshold``), ``threshold``, ``z``,
    ``sequences``, ``length``."""
    tv = first_position_tv(model, hmm, num_sequences, length, seed=seed)
    mean = float(tv.mean())
    se = float(tv.std(ddof=1) / np.sqrt(len(tv))) if len(tv) > 1 else float("inf")
    bound = mean + z * se
    return {"tv0": mean, "se": se, "bound": bound, "passed": bool(bound <= threshold),
            "threshold": float(threshold), "z": float(z), "sequences": int(len(tv)), "length": int(length)}
