"""The tasks the Hypothesis strategies (:mod:`.strategies`) put on a drawn model: both labels
planted on sequences a default check reads (:func:`_planted`, by :mod:`.label_tasks`), or a
``k``-row task whose every class wins somewhere (:func:`_with_classes`), each on the support the
family's assumptions read."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
from hypothesis import assume, strategies as st

from ..hmm.values import MemoryHMM
from .label_tasks import class_task, short_sequences, task_posteriors, two_label_task
from .strategy_options import _check_int, _draw

__all__: list[str] = []


@st.composite
def _with_classes(draw, base, classes, keep_support: bool, plant: bool = False, trigger=None):
    """``base``'s model with a ``k``-row task on ``supp(mu)`` (``keep_support``: a theorem
    family's assumptions read it) or on every entry (states of an HMM, memory values of a
    memory HMM): with ``plant``, rows under which every class wins on some sequence the check
    reads (:func:`~.label_tasks.class_task`) where the posteriors allow it; otherwise row 0 is
    its ``mu`` and rows ``1..k-1`` are integers in -3..3."""
    model = draw(base)
    k = _draw(draw, classes, lambda v: _check_int("classes", v, 2, 8))
    mu = np.asarray(model.mu)
    size = len(mu)
    support = [h for h in range(size) if mu[h] != 0] if keep_support else list(range(size))
    rows = None
    if plant:
        signs = [draw(st.booleans()) for _ in support]
        rows = class_task(_candidate_posteriors(model, trigger), support, size, k, signs=signs)
    if rows is None:
        rows = [list(mu)]
        for _ in range(k - 1):
            rows.append([Fraction(draw(st.integers(-3, 3))) if h in support else Fraction(0) for h in range(size)])
    M = np.array(rows, dtype=object)
    if not model.exact:
        M = M.astype(float)
    if isinstance(model, MemoryHMM):
        return replace(model, mu=M)
    return model.with_task(M)


def _candidate_posteriors(model, trigger=None):
    """The posteriors ``F*`` reads on the short sequences a default check reads (possible ones:
    length 1 and 2; for a memory family with a trigger token, those starting with it, in ``R``)."""
    return task_posteriors(model, short_sequences(model.num_tokens, first=trigger))


@st.composite
def _planted(draw, base, keep_support: bool, trigger=None):
    """``base``'s model (or ``(model, trigger)`` pairs when ``trigger`` is ``"drawn"``) with a
    task that has both labels on sequences a default check reads (:mod:`.label_tasks`), on
    ``supp(mu)`` (``keep_support``: a family's assumptions read it) or, for a generic draw, on
    its drawn support where possible, else on every entry. A model whose posteriors allow no
    such task on those sequences (one state, one token, uninformative emissions) is not kept:
    rare at the default sizes, which start at 2."""
    drawn = draw(base)
    model, trigger = drawn if trigger == "drawn" else (drawn, trigger)
    if model.mu is None:
        return model
    mu = np.asarray(model.mu)
    size = len(mu)
    drawn_support = [h for h in range(size) if mu[h] != 0]
    supports = [drawn_support] if keep_support else [drawn_support, list(range(size))]
    posteriors = _candidate_posteriors(model, trigger)
    signs = [draw(st.booleans()) for _ in range(size)]
    start = draw(st.integers(0, 7))
    found = None
    for support in supports:          # a generic draw keeps its drawn support where it can
        found = found or two_label_task(posteriors, support, size, signs=signs[:len(support)], start=start)
    assume(found is not None)
    new = np.array(found[0], dtype=object)
    if not model.exact:
        new = new.astype(float)
    if isinstance(model, MemoryHMM):
        return replace(model, mu=new)
    return model.with_task(new)
