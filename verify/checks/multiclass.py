"""Exact decisions for tasks with several classes (SPEC section 1; issue 20 section 3).

A ``k``-row task ``mu`` (``k >= 2``) has ``F*(x) = argmax_c mu_c . p(x)`` and a ``k``-row head
``b`` has ``F(x) = argmax_c b_c . g(x)``, both with ties to the largest class
(:mod:`headprompt.models.hmm.task`). The paper's heads are the binary construction applied to
each row, so that for every ``x`` in ``supp(P[X])``::

    b_c . g(x) = lambda * r_x * mu_c . p(x)        for every c, with one r_x > 0, lambda > 0

(Theorem 3.3: Claim A.1; Theorem 3.6: Lemma B.2; Theorems 4.3/4.6/C.6: Lemmas C.4 and C.9),
which preserves the argmax and its ties. The checker never relies on that: it decides both
argmaxes from exact integer dot products with the backward message ``beta(x)``.

For a row set ``R`` (``k`` head rows read on the hidden states, ``k`` task rows, then the
norm row and the support row) and an integer ``beta``, ``R beta`` holds every score up to a
positive factor that is common to the head rows and common to the task rows, so the argmaxes
and ties are those of the true scores. Every path (exact, certified, float) decides multiclass
tasks this way: the certified and float kernels stay binary.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from fractions import Fraction
from types import SimpleNamespace
from typing import Any, Sequence

import flint
import numpy as np

from ...models.exceptions import LimitError
from ...models.hmm.integer import scaled_integer_vector
from ...models.hmm.task import class_label, num_classes
from ...models.inference import exact as ie
from ..runtime.cost import check_work

__all__ = ["MulticlassRows", "multiclass_identity", "multiclass_columns", "multiclass_mode"]


def multiclass_mode(args: Any, model: Any, mode: str, note: str | None) -> tuple[str, str | None]:
    """The mode of a ``k``-class check: always ``exact`` (the certified and float kernels are
    binary). Another mode (asked for, or chosen automatically) becomes ``exact`` with a note,
    within the same work limit as an exact run (:func:`..common.check_work`).

    Raises:
        LimitError: the exact run is estimated beyond the limit (no certified way out here).
    """
    if mode == "exact":
        return mode, note
    given = ({f.name: getattr(args, f.name) for f in fields(args)} if is_dataclass(args) else dict(vars(args)))
    try:
        check_work(SimpleNamespace(**{**given, "mode": "exact"}), model)
    except LimitError as exc:
        raise LimitError(f"a task with {num_classes(model.mu)} classes is decided exactly on every path: "
                         + str(exc).replace(", or --mode certified (still a proof)", "")) from None
    return "exact", f"a task with {num_classes(model.mu)} classes is decided exactly on every path (the {mode} kernel is binary)"


def multiclass_identity(lhs_rows: Sequence[Sequence[Fraction]], rhs_rows: Sequence[Sequence[Fraction]],
                        *, read: str, pre: str, task: str) -> dict:
    """Whether ``lhs_c = lambda * rhs_c`` for every class ``c`` with one ``lambda > 0``
    (``lhs_c`` the head row ``c`` read on the hidden states times the read position's prior,
    ``rhs_c`` the task row ``c`` times the prior the task posterior divides by). Then
    ``b_c . g(x) = lambda r_x mu_c . p(x)`` for every ``c`` and ``x`` at once.

    Returns:
        ``{"holds", "what", "lambda"}`` as the binary identity checks (``lambda`` a Fraction
        or None).
    """
    ratios, zeros_ok, any_nonzero = set(), True, False
    for lhs, rhs in zip(lhs_rows, rhs_rows):
        for a, r in zip(lhs, rhs):
            if r != 0:
                any_nonzero = True
                ratios.add(Fraction(a) / Fraction(r))
            elif a != 0:
                zeros_ok = False
    lam = next(iter(ratios)) if len(ratios) == 1 else None
    holds = zeros_ok and lam is not None and lam > 0
    if not any_nonzero:
        holds, lam = zeros_ok, Fraction(1)
    k = len(rhs_rows)
    what = (f"for every class c = 0..{k - 1}: b_c^T W diag(pre) = {lam} * mu_c^T diag({task}) exactly, "
            f"with pre = {pre}; hence b_c . {read} = {lam} * r_x * mu_c . p(x) with one r_x > 0 for all c, "
            "so argmax_c (ties to the largest c) is the same for F and F*") if holds else (
        "the head rows are not one positive multiple of the task rows (row by row); agreement then "
        "rests on the sequences checked alone")
    return {"holds": bool(holds), "what": what, "lambda": lam if holds else None}


class MulticlassRows:
    """Integer rows ``[head_0 .. head_{k-1}, task_0 .. task_{k-1}, norm, support]`` over the
    hidden states (``head_c = W^T b_c ⊙ pre``, ``task_c = mu_c ⊙ prior``, ``norm = pre``,
    ``support = prior``), the head rows over one common denominator and the task rows over
    another, so that ``rows beta`` orders the classes as the exact scores do.

    Args:
        head: ``k`` rows of Fractions (length ``n``).  task: ``k`` rows of Fractions.
        norm, support: length-``n`` Fraction vectors.  lam: the identity's ``lambda`` or None.
    """

    def __init__(self, head, task, norm, support, lam: Fraction | None):
        self.k = len(task)
        if len(head) != self.k:
            raise ValueError(f"MulticlassRows: {len(head)} head rows for {self.k} task rows")
        flat_h, self.head_scale = scaled_integer_vector([Fraction(v) for row in head for v in row])
        flat_t, self.task_scale = scaled_integer_vector([Fraction(v) for row in task for v in row])
        n = len(norm)
        ints = [flat_h[c * n:(c + 1) * n] for c in range(self.k)] + [flat_t[c * n:(c + 1) * n] for c in range(self.k)]
        ints += [scaled_integer_vector([Fraction(v) for v in norm])[0],
                 scaled_integer_vector([Fraction(v) for v in support])[0]]
        self.matrix = flint.fmpz_mat(ints)
        self.lam = lam

    def decide(self, values: Sequence[int]) -> tuple[bool, int, int, bool, bool, bool]:
        """``(possible, F*(x), F(x), tie, zero_norm, identity)`` from ``rows beta`` (integers).
        ``tie``: the two largest task scores are equal (the rule's tie break decides)."""
        k = self.k
        heads, tasks = list(values[:k]), list(values[k:2 * k])
        norm, support = values[2 * k], values[2 * k + 1]
        expected, got = class_label(tasks), class_label(heads)
        top = sorted(tasks)[-2:]
        lam = self.lam if self.lam is not None else Fraction(1)
        identity = (all(h * self.task_scale * lam.denominator == t * self.head_scale * lam.numerator
                        for h, t in zip(heads, tasks)) and norm > 0 and support > 0)
        return support > 0, expected, got, top[0] == top[1], norm == 0, bool(identity)


def multiclass_columns(ih, rows: MulticlassRows, seq_list, how_code: int, *, steps=None) -> list[np.ndarray]:
    """Exact decisions ``[possible, expected, got, tie, zero_norm, identity, path]`` (numpy
    columns, input order) for token sequences, backward messages shared along suffixes.

    ``steps`` (optional): ``seq -> integer beta`` replacing :func:`ie.shared_backward_messages`
    (the memory checker passes its lifted chain's messages).
    """
    n = len(seq_list)
    cols = [np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool),
            np.full(n, how_code, dtype=np.int8)]
    where: dict[tuple, list[int]] = {}
    for i, s in enumerate(seq_list):
        where.setdefault(tuple(int(z) for z in s), []).append(i)
    pairs = steps(list(where)) if steps is not None else ie.shared_backward_messages(ih, list(where))
    for seq, beta in pairs:
        v = rows.matrix * beta
        d = rows.decide([int(v[r, 0]) for r in range(v.nrows())])
        for i in where[tuple(seq)]:
            for c in range(6):
                cols[c][i] = d[c]
    return cols
