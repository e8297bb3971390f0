"""Downstream splits whose validation and test sequences never occur in the training split.

Appendix D's HMMs are nearly deterministic, so independent draws repeat: a test sequence that
occurs verbatim in training measures memory, not generalisation. :func:`distinct_splits` draws
the training split, then draws validation and test candidates in rounds and keeps those that do
not occur in the training split, until each split is full or ``max_rounds`` rounds have been
drawn (then the split is shorter, and the report says so). :func:`overlap` measures the
fraction of a split found verbatim in another.
"""

from __future__ import annotations

import numpy as np

from ..generate.sampling import sample

__all__ = ["distinct_splits", "overlap"]


def _rows(tokens: np.ndarray) -> set:
    return {row.tobytes() for row in np.ascontiguousarray(tokens)}


def overlap(tokens: np.ndarray, reference: np.ndarray) -> float:
    """The fraction of the rows of ``tokens`` ``[n, T]`` that occur verbatim in ``reference``."""
    if len(tokens) == 0:
        return 0.0
    ref = _rows(reference)
    return float(np.mean([row.tobytes() in ref for row in np.ascontiguousarray(tokens)]))


def distinct_splits(model, sizes: dict, length: int, *, rng: np.random.Generator,
                    max_rounds: int = 50) -> tuple[dict, dict]:
    """Token splits ``{"train", "val", "test"}`` (``sizes`` per split, ``length`` tokens each)
    with no validation or test row equal to a training row; returns ``(tokens, report)`` with
    ``report`` holding per split ``rejected`` (candidates thrown away as copies of training
    rows), ``drawn`` and the final size (``size``), and whether any split came out ``short``."""
    model = model.to_float()
    train = sample(model, sizes["train"], length, rng=rng)[0]
    seen = _rows(train)
    tokens, report = {"train": train}, {"short": False}
    for split in ("val", "test"):
        need, kept, drawn, rejected = sizes[split], [], 0, 0
        for _ in range(max_rounds):
            if need <= 0:
                break
            batch = sample(model, max(2 * need, 64), length, rng=rng)[0]
            copies = np.array([row.tobytes() in seen for row in batch])
            drawn += len(batch)
            rejected += int(copies.sum())
            fresh = batch[~copies][:need]
            kept.append(fresh)
            need -= len(fresh)
        tokens[split] = np.concatenate(kept) if kept else np.empty((0, length), dtype=train.dtype)
        report[split] = {"size": int(len(tokens[split])), "requested": int(sizes[split]), "drawn": drawn,
                         "rejected": rejected}
        report["short"] = report["short"] or len(tokens[split]) < sizes[split]
    return tokens, report
