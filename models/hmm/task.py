"""The downstream task ``F*`` (SPEC section 1), defined once for every model kind and backend.

Vanilla HMM: ``F*(x) = 1(mu . P[H_0 | X_{1:T} = x] >= 0)``; memory HMM:
``F*(x) = 1(mu . P[M_{j*} | X_{1:T} = x] >= 0)``. The *margin* is the signed dot product
``mu . p``; the label is ``1(margin >= 0)``: the threshold includes 0, so an exact tie
(``margin == 0``) has label 1. Every caller (checkers, certificates, searches, tuning) reads the
label through these functions, so the tie rule lives in one place.

The same rule decides a head's output ``F(x) = 1(b . g >= 0)``.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["task_margin", "label", "labels", "is_tie"]


def task_margin(mu: Iterable[Any], posterior: Iterable[Any]) -> Any:
    """``mu . p`` in the arithmetic of its inputs (exact for ``Fraction``/``fmpq`` entries).

    >>> from fractions import Fraction as F
    >>> task_margin([1, -1], [F(1, 3), F(1, 3)])
    Fraction(0, 1)
    """
    return sum(m * p for m, p in zip(mu, posterior))


def label(margin: Any) -> int:
    """``1(margin >= 0)`` for one margin (exact or float): ties are label 1.

    >>> label(0), label(-1e-300), label(2)
    (1, 0, 1)
    """
    return int(margin >= 0)


def labels(margins: Any) -> Any:
    """Elementwise ``1(margin >= 0)`` for a numpy array or torch tensor of margins, as the
    same library's integer (numpy: ``int8``) or, for torch, float (for losses) array.

    >>> labels(np.array([-1.0, 0.0, 0.5]))
    array([0, 1, 1], dtype=int8)
    """
    if isinstance(margins, np.ndarray) or not hasattr(margins, "float"):
        return (np.asarray(margins) >= 0).astype(np.int8)
    return (margins >= 0).float()


def is_tie(margin: Any) -> bool:
    """Whether the margin sits exactly on the threshold (only meaningful for exact margins)."""
    return bool(margin == 0)
