"""The downstream task ``F*`` (SPEC section 1), defined once for every model kind and backend.

Vanilla HMM: ``F*(x) = 1(mu . P[H_0 | X_{1:T} = x] >= 0)``; memory HMM:
``F*(x) = 1(mu . P[M_{j*} | X_{1:T} = x] >= 0)``. The *margin* is the signed dot product
``mu . p``; the label is ``1(margin >= 0)``: the threshold includes 0, so an exact tie
(``margin == 0``) has label 1. Every caller (checkers, certificates, searches, tuning) reads the
label through these functions, so the tie rule lives in one place.

The same rule decides a head's output ``F(x) = 1(b . g >= 0)``.

Several classes (SPEC section 1): ``mu`` is a ``k x |H|`` matrix (``k >= 2``) and
``F*(x) = argmax_c mu_c . p`` with ties to the *largest* class index, so ``k = 2`` with rows
``(mu_0, mu_1)`` is the binary rule with ``mu_1 - mu_0`` (``1(m_1 - m_0 >= 0)``). The scores
``mu_c . p`` are :func:`task_scores`, the label :func:`class_label` (one score vector) or
:func:`class_labels` (an ``[n, k]`` array); :func:`task_label` decides either kind of task.
A multiclass head is a ``k x |X|`` matrix ``b`` with ``F(x) = argmax_c b_c . g``, decided by the
same functions.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["task_margin", "label", "labels", "is_tie", "num_classes", "is_multiclass", "task_scores",
           "class_label", "class_labels", "task_label", "class_names"]


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


def is_multiclass(mu: Any) -> bool:
    """Whether ``mu`` is a ``k x n`` matrix (several classes) rather than a vector."""
    return mu is not None and np.ndim(mu) == 2


def num_classes(mu: Any) -> int:
    """``k`` for a ``k x n`` task matrix, 2 for a binary task vector."""
    return int(np.shape(mu)[0]) if is_multiclass(mu) else 2


def class_names(mu: Any) -> list[str]:
    """The label names of a task, ``["0", "1", ..., "k-1"]`` (report keys)."""
    return [str(c) for c in range(num_classes(mu))]


def task_scores(mu: Any, posterior: Iterable[Any]) -> list[Any]:
    """``[mu_c . p for each row c]`` of a ``k x n`` task, in the arithmetic of its inputs.

    >>> from fractions import Fraction as F
    >>> task_scores([[1, 0], [0, 1]], [F(1, 3), F(2, 3)])
    [Fraction(1, 3), Fraction(2, 3)]
    """
    post = list(posterior)
    return [task_margin(row, post) for row in mu]


def class_label(scores: Iterable[Any]) -> int:
    """``argmax_c scores[c]`` with ties to the largest ``c`` (exact for exact scores).

    >>> class_label([1, 3, 3]), class_label([2, 0]), class_label([0, 0])
    (2, 0, 1)
    """
    best, arg = None, -1
    for c, v in enumerate(scores):
        if best is None or v >= best:
            best, arg = v, c
    if arg < 0:
        raise ValueError("class_label: no scores")
    return arg


def class_labels(scores: Any) -> np.ndarray:
    """Row-wise :func:`class_label` of an ``[n, k]`` numpy array of scores, as ``int64``
    (the last maximum of each row: ties to the largest class).

    >>> class_labels(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]]))
    array([2, 0])
    """
    s = np.asarray(scores)
    k = s.shape[1]
    return (k - 1 - np.argmax(s[:, ::-1], axis=1)).astype(np.int64)


def task_label(mu: Any, posterior: Iterable[Any]) -> int:
    """``F*`` of one posterior: ``1(mu . p >= 0)`` for a vector ``mu``, :func:`class_label` of
    :func:`task_scores` for a ``k x n`` matrix. Exact for exact inputs.

    >>> task_label([1, -1], [0.5, 0.5]), task_label([[1, -1], [0, 0]], [0.5, 0.5])
    (1, 1)
    """
    if is_multiclass(mu):
        return class_label(task_scores(mu, posterior))
    return label(task_margin(mu, posterior))
