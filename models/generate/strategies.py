"""Hypothesis strategies for random HMMs and memory HMMs, for your own property tests.

Every option is keyword-only and accepts a value or a strategy; bad values raise
``hypothesis.errors.InvalidArgument`` when the strategy is built (a strategy's draws are
checked when drawn). Two kinds of instance:

- generic: :func:`hmms` / :func:`memory_hmms` without ``theorem``: rational columns with
  integer weights ``0..max_weight`` normalised exactly; ``sparsity`` is the chance that an
  entry of ``A`` or ``W`` is zero (each column keeps a nonzero), ``start_sparsity`` the same
  for ``pi0``;
- by construction: with ``theorem="3.6"`` (or any of 3.3, 3.6, 4.3, 4.6, C.6) the instance
  satisfies every assumption of the theorem in ``satisfy`` (default: all) and violates the
  one in ``violate``, *by how it is built* (``models/families.py``), never by rejection, so
  ``assume`` is never needed and Hypothesis shrinks sizes, weights and structure::

    from hypothesis import given
    from headprompt.models.generate.strategies import hmms       # or headprompt.strategies.hmms

    @given(hmms(theorem="3.6"))                      # 3.2 and 3.5 hold, |H| may exceed |X|
    def test_prompt_tuning(hmm): ...

    @given(hmms(theorem="3.6", violate="3.5"))       # 3.2 holds, 3.5 fails
    def test_without_35(hmm): ...

``st.from_type(HMM)`` and ``st.from_type(MemoryHMM)`` draw generic instances with a task.
Exact instances hold :class:`Fraction` entries; ``exact=False`` gives the same numbers as
float64.

A drawn task is never vacuous by default: ``mu`` is chosen from the model's own posteriors so
that both labels occur among the sequences ``headprompt.check`` reads by default
(:mod:`.label_tasks`), so a property test asserting a verdict also asserts something;
``allow_one_label=True`` keeps the drawn task (which may take one label everywhere)::

    @given(hmms(theorem="3.6"))
    def test_prompt_tuning(hmm):
        report = headprompt.check(hmm, "3.6")
        assert report.verdict == "verified" and not report.to_dict()["vacuous"]
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

import numpy as np
from hypothesis import assume, strategies as st
from hypothesis.errors import InvalidArgument

from . import families
from ..hmm.values import HMM, MemoryHMM
from .strategy_tasks import _planted, _with_classes
from .strategy_options import (MAX_SIZE, _MEMORY, _VANILLA, _check_bool, _check_flag, _check_int, _check_prob,
                               _check_two_labels_possible, _draw,
                               _theorem_sets)

__all__ = ["stochastic_columns", "hmms", "memory_hmms", "token_sequences", "theorem_instances",
           "MAX_SIZE"]



# ---------------------------------------------------------------- generic strategies

class _DrawChooser:
    """A :class:`families.Chooser` answering with hypothesis draws (so choices shrink)."""

    def __init__(self, draw):
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return lo if lo == hi else self._draw(st.integers(lo, hi))


def stochastic_columns(rows: int | st.SearchStrategy, cols: int | st.SearchStrategy, *,
                       sparsity: float | st.SearchStrategy = 0.0,
                       max_weight: int | st.SearchStrategy = 6,
                       exact: bool | st.SearchStrategy = True) -> st.SearchStrategy[np.ndarray]:
    """``rows x cols`` column-stochastic matrices: integer weights ``0..max_weight`` per column
    normalised exactly (Fractions, or float64 when not ``exact``); each entry is zero with
    probability ``sparsity``, and each column keeps at least one nonzero.

    Raises:
        InvalidArgument: sizes below 1, a sparsity outside [0, 1), a weight bound below 1.
    """
    _check_int("rows", rows, 1, MAX_SIZE ** 3)
    _check_int("cols", cols, 1, MAX_SIZE ** 3)
    _check_prob("sparsity", sparsity)
    _check_int("max_weight", max_weight, 1)
    _check_bool("exact", exact)
    return _stochastic_columns(rows, cols, sparsity, max_weight, exact)


@st.composite
def _stochastic_columns(draw, rows, cols, sparsity, max_weight, exact):
    r = _draw(draw, rows, lambda v: _check_int("rows", v, 1, MAX_SIZE ** 3))
    c = _draw(draw, cols, lambda v: _check_int("cols", v, 1, MAX_SIZE ** 3))
    p = _draw(draw, sparsity, lambda v: _check_prob("sparsity", v))
    w_max = _draw(draw, max_weight, lambda v: _check_int("max_weight", v, 1))
    ex = _draw(draw, exact, lambda v: _check_bool("exact", v))
    out = np.empty((r, c), dtype=object)
    for j in range(c):
        weights = [0 if p and draw(st.floats(0, 1, exclude_max=True)) < p else draw(st.integers(1, w_max))
                   for _ in range(r)]
        if sum(weights) == 0:
            weights[draw(st.integers(0, r - 1))] = 1
        total = sum(weights)
        out[:, j] = [Fraction(w, total) for w in weights]
    return out if ex else out.astype(float)


def _task(draw, size: int, exact: bool) -> np.ndarray:
    mu = np.array([Fraction(draw(st.integers(-3, 3))) for _ in range(size)], dtype=object)
    return mu if exact else mu.astype(float)


def hmms(*, num_states: int | st.SearchStrategy | None = None,
         num_tokens: int | st.SearchStrategy | None = None,
         sparsity: float | st.SearchStrategy = 0.0, start_sparsity: float | st.SearchStrategy = 0.0,
         exact: bool | st.SearchStrategy = True, with_task: bool | st.SearchStrategy = False,
         max_weight: int | st.SearchStrategy = 6, theorem: str | None = None,
         satisfy: Iterable[str] | None = None, violate: str | None = None,
         classes: int | st.SearchStrategy | None = None,
         allow_one_label: bool = False) -> st.SearchStrategy[HMM]:
    """Vanilla HMMs (SPEC section 1).

    A drawn task is never vacuous by default: ``mu`` is chosen from the model's own posteriors
    so that both labels (every class) occur among the sequences ``headprompt.check`` reads by
    default (:mod:`.label_tasks`: planted on possible sequences of length 1 and 2), on the
    support the family's assumptions read; default sizes are those where that is possible
    (at least 2 states and 2 tokens). ``allow_one_label=True`` keeps the task as drawn
    (integers in -3..3, or the family's own ``mu``), which may take one label everywhere.

    ``classes = k`` (2..8) gives a ``k``-row task (``F* = argmax_c mu_c . p``, ties to the
    largest class; implies ``with_task``): generic rows in -3..3; with a ``theorem``, row 0 is
    the family's own ``mu`` and the other rows are drawn on its support, so ``supp`` of the
    task (the union of the rows') and with it every assumption's status is unchanged.

    Generic (no ``theorem``): ``num_states`` defaults to 1..4 and ``num_tokens`` to 1..3;
    ``with_task`` adds a task ``mu`` (integers in -3..3 with ``allow_one_label``).

    With ``theorem="3.3"`` or ``"3.6"``: every assumption in ``satisfy`` (default: all of the
    theorem's) holds and ``violate`` fails by construction; the instance has a task. Default
    sizes are drawn so that the request is feasible (``|H| <= |X|`` when 3.1 must hold, at
    least 2 states when something must fail); ``sparsity`` and ``start_sparsity`` are not used.
    Sizes you fix that cannot meet the request raise ``InvalidArgument`` (strategies for sizes
    are filtered, so keep them feasible).

    Raises:
        InvalidArgument: any invalid option (named, with the value found).
    """
    for name, v in (("num_states", num_states), ("num_tokens", num_tokens)):
        if v is not None:
            _check_int(name, v, 1, MAX_SIZE * 10)
    _check_prob("sparsity", sparsity)
    _check_prob("start_sparsity", start_sparsity)
    _check_bool("exact", exact)
    _check_bool("with_task", with_task)
    _check_int("max_weight", max_weight, 1)
    if classes is not None:
        _check_int("classes", classes, 2, 8)
    _check_flag("allow_one_label", allow_one_label)
    plant = not allow_one_label
    holds = _theorem_sets(theorem, satisfy, violate, _VANILLA, "hmms")
    if holds is not None and isinstance(num_states, int) and isinstance(num_tokens, int):
        why = families.feasible_vanilla(num_states, num_tokens, holds)
        if why:
            raise InvalidArgument(f"hmms(theorem={theorem!r}, num_states={num_states}, "
                                  f"num_tokens={num_tokens}): {why}")
    if plant:
        _check_two_labels_possible("hmms", {"num_states": (num_states, "hidden states"),
                                            "num_tokens": (num_tokens, "tokens")})
    if holds is not None:
        base = _family_hmms(num_states, num_tokens, exact, max_weight, holds)
    else:
        lo = 2 if plant else 1
        base = _generic_hmms(st.integers(lo, 4) if num_states is None else num_states,
                             st.integers(lo, 3) if num_tokens is None else num_tokens,
                             sparsity, start_sparsity, exact, with_task if classes is None else True, max_weight)
    if classes is not None:
        return _with_classes(base, classes, holds is not None, plant)
    return _planted(base, holds is not None) if plant else base


@st.composite
def _generic_hmms(draw, num_states, num_tokens, sparsity, start_sparsity, exact, with_task, max_weight):
    n = _draw(draw, num_states, lambda v: _check_int("num_states", v, 1, MAX_SIZE * 10))
    x = _draw(draw, num_tokens, lambda v: _check_int("num_tokens", v, 1, MAX_SIZE * 10))
    ex = _draw(draw, exact, lambda v: _check_bool("exact", v))
    p = _draw(draw, sparsity, lambda v: _check_prob("sparsity", v))
    w = _draw(draw, max_weight, lambda v: _check_int("max_weight", v, 1))
    A = draw(stochastic_columns(n, n, sparsity=p, max_weight=w, exact=ex))
    W = draw(stochastic_columns(x, n, sparsity=p, max_weight=w, exact=ex))
    pi0 = draw(stochastic_columns(n, 1, sparsity=start_sparsity, max_weight=w, exact=ex))[:, 0]
    mu = _task(draw, n, ex) if _draw(draw, with_task, lambda v: _check_bool("with_task", v)) else None
    return HMM(A, W, pi0, mu)


@st.composite
def _family_hmms(draw, num_states, num_tokens, exact, max_weight, holds):
    fails = any(h is False for h in holds.values())
    if num_states is None:
        n = draw(st.integers(2 if fails else 1, 4))
    else:
        n = _draw(draw, num_states, lambda v: _check_int("num_states", v, 1, MAX_SIZE * 10))
    if num_tokens is None:
        lo = n if holds.get("3.1") is True else (2 if n >= 2 else 1)
        x = draw(st.integers(lo, max(lo, 3)))
    else:
        x = _draw(draw, num_tokens, lambda v: _check_int("num_tokens", v, 1, MAX_SIZE * 10))
    assume(families.feasible_vanilla(n, x, holds) is None)       # only user-given size strategies
    ex = _draw(draw, exact, lambda v: _check_bool("exact", v))
    w = _draw(draw, max_weight, lambda v: _check_int("max_weight", v, 1))
    hmm, _ = families.vanilla_family(_DrawChooser(draw), num_states=n, num_tokens=x, holds=holds,
                                     max_weight=w, exact=ex)
    return hmm


def memory_hmms(*, cells: int | st.SearchStrategy | None = None,
                memory_values: int | st.SearchStrategy | None = None,
                syntax_states: int | st.SearchStrategy | None = None,
                num_tokens: int | st.SearchStrategy | None = None,
                sparsity: float | st.SearchStrategy = 0.0, exact: bool | st.SearchStrategy = True,
                product_prior: bool | st.SearchStrategy = st.booleans(),
                max_weight: int | st.SearchStrategy = 6, theorem: str | None = None,
                satisfy: Iterable[str] | None = None, violate: str | None = None,
                allow_one_label: bool = False) -> st.SearchStrategy[MemoryHMM]:
    """Memory-augmented HMMs (SPEC section 1) with a task ``mu`` and a joint or product prior.

    The task is never vacuous by default: ``mu`` is chosen from the model's own posteriors
    ``P[M_j* | X = x]`` so that both labels occur among the sequences ``headprompt.check``
    reads by default (for a theorem family, sequences that start with its trigger token, which
    are in ``R``), on the support the family's assumptions read (:mod:`.label_tasks`); generic
    default sizes start at 2 memory values and 2 tokens. ``allow_one_label=True`` keeps the
    task as drawn.

    Generic (no ``theorem``): ``cells`` 1..2, ``memory_values`` 1..3, ``syntax_states`` 1..2,
    ``num_tokens`` 1..3 by default. With ``theorem="4.3"``, ``"4.6"`` or ``"C.6"``: the
    theorem's assumptions in ``satisfy`` hold and ``violate`` fails by construction (4.6: one
    cell); default sizes are feasible by construction.

    Raises:
        InvalidArgument: any invalid option.
    """
    for name, v in (("cells", cells), ("memory_values", memory_values), ("syntax_states", syntax_states),
                    ("num_tokens", num_tokens)):
        if v is not None:
            _check_int(name, v, 1, MAX_SIZE)
    _check_prob("sparsity", sparsity)
    _check_bool("exact", exact)
    _check_bool("product_prior", product_prior)
    _check_int("max_weight", max_weight, 1)
    _check_flag("allow_one_label", allow_one_label)
    plant = not allow_one_label
    if plant:
        _check_two_labels_possible("memory_hmms", {"memory_values": (memory_values, "memory values"),
                                                   "num_tokens": (num_tokens, "tokens")})
    holds = _theorem_sets(theorem, satisfy, violate, _MEMORY, "memory_hmms")
    if holds is not None:
        if theorem == "4.6" and isinstance(cells, int) and cells != 1:
            raise InvalidArgument(f"memory_hmms(theorem='4.6', cells={cells}): Theorem 4.6 is about one memory cell")
        family = _family_memory(theorem, cells, memory_values, syntax_states, num_tokens, exact,
                                product_prior, max_weight, holds, with_trigger=plant)
        return _planted(family, True, trigger="drawn") if plant else family
    lo = 2 if plant else 1
    d = lambda v, lo, hi: st.integers(lo, hi) if v is None else v           # noqa: E731
    base = _generic_memory(d(cells, 1, 2), d(memory_values, lo, 3), d(syntax_states, 1, 2),
                           d(num_tokens, lo, 3), sparsity, exact, product_prior, max_weight)
    return _planted(base, False) if plant else base


@st.composite
def _generic_memory(draw, cells, memory_values, syntax_states, num_tokens, sparsity, exact,
                    product_prior, max_weight):
    chk = lambda name: (lambda v: _check_int(name, v, 1, MAX_SIZE))          # noqa: E731
    N, M = _draw(draw, cells, chk("cells")), _draw(draw, memory_values, chk("memory_values"))
    S, X = _draw(draw, syntax_states, chk("syntax_states")), _draw(draw, num_tokens, chk("num_tokens"))
    ex = _draw(draw, exact, lambda v: _check_bool("exact", v))
    p = _draw(draw, sparsity, lambda v: _check_prob("sparsity", v))
    w = _draw(draw, max_weight, lambda v: _check_int("max_weight", v, 1))
    H = N * S
    kw = dict(sparsity=p, max_weight=w, exact=ex)
    A = draw(stochastic_columns(H, H, **kw))
    W = draw(stochastic_columns(X, M * H, **kw)).reshape(X, M, H)
    pi0 = draw(stochastic_columns(H, 1, max_weight=w, exact=ex))[:, 0]
    mu = _task(draw, M, ex)
    target = draw(st.integers(0, N - 1))
    if _draw(draw, product_prior, lambda v: _check_bool("product_prior", v)):
        cells_prior = draw(stochastic_columns(M, N, **kw)).T
        return MemoryHMM.create(N, M, S, A, W, pi0, pM_cells=cells_prior, mu=mu, target_cell=target, exact=ex)
    pM = draw(stochastic_columns(M ** N, 1, **kw))[:, 0]
    return MemoryHMM(N, M, S, A, W, pi0, pM, mu, target)


@st.composite
def _family_memory(draw, theorem, cells, memory_values, syntax_states, num_tokens, exact, product_prior,
                   max_weight, holds, with_trigger: bool = False):
    """A memory family's model (``(model, its trigger token or None)`` with ``with_trigger``)."""
    chk = lambda name: (lambda v: _check_int(name, v, 1, MAX_SIZE))          # noqa: E731
    names = families.THEOREM_ASSUMPTIONS[theorem]
    breaks_nondeg = holds.get(names[1]) is False
    breaks_regular = holds.get(names[0]) is False
    if cells is None:
        N = 1 if theorem == "4.6" else draw(st.integers(1, 2))
    else:
        N = _draw(draw, cells, chk("cells"))
    M = draw(st.integers(2 if breaks_nondeg else 1, 3)) if memory_values is None else _draw(draw, memory_values, chk("memory_values"))
    S = draw(st.integers(2 if breaks_regular else 1, 2)) if syntax_states is None else _draw(draw, syntax_states, chk("syntax_states"))
    X = draw(st.integers(M + 2, M + 3)) if num_tokens is None else _draw(draw, num_tokens, chk("num_tokens"))
    feasible = families.feasible_memory(theorem, cells=N, memory_values=M, syntax_states=S, num_tokens=X,
                                        holds=holds, support_size=2 if breaks_nondeg else 1)
    assume(feasible is None and (not breaks_regular or N * S >= 2))     # only user-given size strategies
    ex = _draw(draw, exact, lambda v: _check_bool("exact", v))
    w = _draw(draw, max_weight, lambda v: _check_int("max_weight", v, 1))
    pp = _draw(draw, product_prior, lambda v: _check_bool("product_prior", v))
    model, info = families.memory_family(_DrawChooser(draw), theorem, cells=N, memory_values=M, syntax_states=S,
                                         num_tokens=X, holds=holds, max_weight=w, exact=ex, product_prior=pp)
    return (model, info.get("trigger")) if with_trigger else model


def theorem_instances(theorem: str, *, violate: str | None = None, max_hidden: int = 4,
                      max_vocab: int = 3, exact: bool = True, max_weight: int = 4,
                      classes: int | None = None) -> st.SearchStrategy:
    """Instances of the theorem's model kind that satisfy all its assumptions (or all but
    ``violate``, which fails) by construction, with sizes bounded by ``max_hidden`` (hidden
    states; memory HMMs: syntax states) and ``max_vocab`` (tokens; memory HMMs get at least the
    tokens their recoverable block needs). ``classes = k`` (2..8) adds ``k - 1`` task rows on
    ``supp(mu)`` (so assumptions that read ``supp(mu)`` are unchanged). Used by ``verify explore``.

    Raises:
        InvalidArgument: an unknown theorem or assumption, or bounds below 1.
    """
    if classes is not None:
        _check_int("classes", classes, 2, 8)
        return _with_classes(theorem_instances(theorem, violate=violate, max_hidden=max_hidden,
                                               max_vocab=max_vocab, exact=exact, max_weight=max_weight),
                             classes, True)
    _check_int("max_hidden", max_hidden, 1, MAX_SIZE)
    _check_int("max_vocab", max_vocab, 1, MAX_SIZE)
    if theorem in _VANILLA:
        holds = _theorem_sets(theorem, None, violate, _VANILLA, "theorem_instances")
        fails = violate is not None
        lo_n = 2 if fails else 1
        if max_hidden < lo_n:
            raise InvalidArgument(f"max_hidden={max_hidden}: breaking an assumption needs at least {lo_n} states")

        @st.composite
        def sized(draw):
            n = draw(st.integers(lo_n, max_hidden))
            lo_x = n if holds.get("3.1") is True else min(2, max_vocab)
            if lo_x > max_vocab:
                n = max_vocab
                lo_x = n
            x = draw(st.integers(lo_x, max(lo_x, max_vocab)))
            if families.feasible_vanilla(n, x, holds) is not None:      # e.g. 3.5 dense needs |H| > |X|
                x = lo_x
            hmm, _ = families.vanilla_family(_DrawChooser(draw), num_states=n, num_tokens=x, holds=holds,
                                             max_weight=max_weight, exact=exact)
            return hmm
        return sized()
    if theorem in _MEMORY:
        holds = _theorem_sets(theorem, None, violate, _MEMORY, "theorem_instances")
        names = families.THEOREM_ASSUMPTIONS[theorem]
        lo_s = 2 if holds.get(names[0]) is False else 1
        return _family_memory(theorem, None, None, st.integers(lo_s, max(lo_s, min(max_hidden, 3))), None,
                              exact, st.booleans(), max_weight, holds)
    raise InvalidArgument(f"theorem={theorem!r}: expected one of {', '.join(_VANILLA + _MEMORY)}")


def token_sequences(num_tokens: int | st.SearchStrategy, *, min_length: int | st.SearchStrategy = 1,
                    max_length: int | st.SearchStrategy = 4) -> st.SearchStrategy[list[int]]:
    """Token sequences over ``0..num_tokens-1`` of length ``min_length..max_length``.

    Raises:
        InvalidArgument: ``num_tokens`` below 1, lengths below 0, or ``min_length > max_length``.
    """
    _check_int("num_tokens", num_tokens, 1)
    _check_int("min_length", min_length, 0)
    _check_int("max_length", max_length, 0)
    if isinstance(min_length, int) and isinstance(max_length, int) and min_length > max_length:
        raise InvalidArgument(f"min_length={min_length} > max_length={max_length}")

    @st.composite
    def sequences(draw):
        x = _draw(draw, num_tokens, lambda v: _check_int("num_tokens", v, 1))
        lo = _draw(draw, min_length, lambda v: _check_int("min_length", v, 0))
        hi = _draw(draw, max_length, lambda v: _check_int("max_length", v, 0))
        if lo > hi:
            raise InvalidArgument(f"min_length={lo} > max_length={hi}")
        return draw(st.lists(st.integers(0, x - 1), min_size=lo, max_size=hi))
    return sequences()


st.register_type_strategy(HMM, hmms(with_task=True))        # both labels planted (the defaults)
st.register_type_strategy(MemoryHMM, memory_hmms())
