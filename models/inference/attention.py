"""The attention head of the memory-augmented HMM theorems (paper eq. 4.1-4.2), exactly.

A head is any object with the attributes ``q`` (``|H|+1``), ``Theta_K`` (``(|H|+1) x |X|``),
``beta`` (``r x (|H|+1)``: position embeddings for positions 1..r, later positions reuse the
last row), ``Theta_V`` (``|M||H| x |X|``) and ``b`` (``|M||H|``), e.g. the witnesses of
:mod:`headprompt.constructions.memory`. For inputs ``G_1..G_t`` (``G_i`` over tokens) and value
embeddings ``v_1..v_t``:

    score_i = q . (Theta_K G_i + beta_i)
    I       = argmax set of the scores (every maximiser; exact ties kept)
    Attn    = (1/|I|) sum_{i in I} V(G_i, v_i),   V(a, v) = b . ((Theta_V a) ⊙ v)

The prediction is ``1(Attn >= 0)``. :func:`softmax_attention` is the softmax head the argmax
head is the limit of (paper, below eq. 4.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, Sequence

import numpy as np

__all__ = ["AttentionHead", "AttentionResult", "beta_row", "attention", "softmax_attention"]


class AttentionHead(Protocol):
    """The parameters an attention head is read from (shapes in the module docstring)."""

    q: Any
    Theta_K: Any
    beta: Any
    Theta_V: Any
    b: Any


def beta_row(beta: np.ndarray, i: int) -> np.ndarray:
    """Position embedding of 0-based position ``i`` (rows past the end reuse the last row)."""
    return beta[min(i, len(beta) - 1)]


@dataclass(frozen=True)
class AttentionResult:
    """``output`` is ``Attn``; ``attended`` the 0-based positions averaged over (the argmax
    set); ``scores`` and ``values`` per position."""

    output: Any
    attended: tuple[int, ...]
    scores: list
    values: list


def attention(head: AttentionHead, G: Sequence[Sequence], value_embeddings: Sequence[Sequence]
              ) -> AttentionResult:
    """``Attn = (1/|I|) sum_{i in I} V(G_i, v_i)`` with ``I`` the set of all maximizers of
    ``q . (Theta_K G_i + beta_i)`` (eq. 4.1-4.2), exact ties kept; ``V(a, v) = b . ((Theta_V a)
    ⊙ v)``. ``value_embeddings[i]`` is ``e(x_i)`` (or ``phi`` of the lifted prompt input).
    Exact when every input is a Fraction or an int.

    >>> from types import SimpleNamespace as Head
    >>> w = Head(q=np.array([1, 0]), Theta_K=np.array([[1, 0], [0, 0]]),
    ...          beta=np.array([[0, 0]]), Theta_V=np.array([[1, 0]]), b=np.array([2]))
    >>> r = attention(w, [[Fraction(1, 2), Fraction(1, 2)], [1, 0], [1, 0]], [[1], [3], [-1]])
    >>> r.attended, r.output
    ((1, 2), Fraction(2, 1))
    """
    q, K, V, b = (np.asarray(getattr(head, k), dtype=object) for k in ("q", "Theta_K", "Theta_V", "b"))
    beta = np.asarray(head.beta, dtype=object)
    scores, values = [], []
    for i, (g, v) in enumerate(zip(G, value_embeddings)):
        g = np.asarray(g, dtype=object)
        scores.append(q.dot(K.dot(g) + beta_row(beta, i)))
        values.append(b.dot(V.dot(g) * np.asarray(v, dtype=object)))
    top = max(scores)
    attended = tuple(i for i, s in enumerate(scores) if s == top)
    total = sum((values[i] for i in attended), Fraction(0))
    output = Fraction(total) / len(attended) if isinstance(total, (int, Fraction)) else total / len(attended)
    return AttentionResult(output, attended, scores, values)


def softmax_attention(head: AttentionHead, G: Sequence[Sequence], value_embeddings: Sequence[Sequence],
                      *, query_scale: float) -> float:
    """The softmax head with the query scaled by ``query_scale`` (float64; temperature
    ``1 / query_scale``): ``sum_i softmax(query_scale * score)_i V_i``. As ``query_scale``
    grows it tends to :func:`attention`'s argmax average (paper, below eq. 4.2)."""
    q = np.asarray(head.q, dtype=float) * query_scale
    K = np.asarray(head.Theta_K, dtype=float)
    V = np.asarray(head.Theta_V, dtype=float)
    b = np.asarray(head.b, dtype=float)
    beta = np.asarray(head.beta, dtype=float)
    scores, values = [], []
    for i, (g, v) in enumerate(zip(G, value_embeddings)):
        g = np.asarray(g, dtype=float)
        scores.append(q @ (K @ g + beta_row(beta, i)))
        values.append(b @ ((V @ g) * np.asarray(v, dtype=float)))
    s = np.array(scores)
    w = np.exp(s - s.max())
    return float((w / w.sum()) @ np.array(values))
