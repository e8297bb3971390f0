"""Instance families that satisfy or break each assumption of a theorem *by construction*.

A maker is a deterministic function of the integer choices it asks a :class:`Chooser` for:
:class:`RandomChooser` answers from a numpy generator (``verify theorem`` and ``verify
counterexample``), the hypothesis strategies answer with ``draw(st.integers(lo, hi))`` so that
Hypothesis shrinks every weight, size and structural choice towards its smallest value
(``models/strategies.py``). Nothing is rejected: every assumption asked to hold holds, and the
one asked to fail fails, because of how the instance is built (the docstrings say why).

``holds`` maps assumption ids to True (must hold) or False (must fail); an id left out is
decided by the chooser among the feasible options.

Vanilla HMMs (Theorems 3.3 and 3.6; assumptions 3.1, 3.2, 3.5):

- *anchored* emission columns: column ``h`` puts weight ``K`` on its own token ``t_h`` and
  small weights elsewhere with ``K`` larger than their sum, so the square block of the anchored
  columns on their tokens is strictly diagonally dominant and those columns are linearly
  independent (3.1 when every state is anchored; the ``H*`` of 3.5 otherwise);
- ergodic transitions: a cycle through all states plus one self-loop (irreducible and
  aperiodic, 3.2) and optional extra entries; ``pi0 > 0``;
- 3.5 holds: ``B = {b}`` whose column's support is exactly ``H*`` (anchored), ``supp(mu) ⊆
  H*``. This allows ``|H| > |X|`` (only ``|H*| <= |X|`` is needed);
- 3.5 fails: ``dense`` (every entry of ``A`` positive and ``|H| > |X|``: every nonempty ``B``
  reaches all of ``H``, whose columns are dependent) or ``twin`` (a state ``s`` in
  ``supp(mu)`` has an emission twin ``t``, ``W[:, t] = W[:, s]``, and every column reaching
  ``s`` also reaches ``t``, so every ``H*`` covering ``s`` is dependent);
- 3.1 fails: ``|H| > |X|``, or a twin column; 3.2 fails: ``absorbing`` (one column is a
  self-loop only: the chain is reducible) or ``pi0-zero`` (``P[H_0]`` has a zero).

Memory HMMs (Theorems 4.3, 4.6, C.6): :mod:`.memory_families` (exported here too); the choosers
and the column builders both use: :mod:`.choices`.

"""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping

import numpy as np

from ..exceptions import InputError
from ..hmm.values import HMM
from ..paper import MEMORY_ASSUMPTIONS, THEOREM_ASSUMPTIONS, VANILLA_ASSUMPTIONS
from .choices import (Chooser, RandomChooser, _anchored, _check_size, _column, _normalise, _order, _pick,
                      _task_value, _to_kind)
from .memory_families import feasible_memory, memory_family

__all__ = ["Chooser", "RandomChooser", "vanilla_family", "memory_family", "VANILLA_ASSUMPTIONS",
           "MEMORY_ASSUMPTIONS", "THEOREM_ASSUMPTIONS", "violation_ways", "failing_vanilla_instance",
           "feasible_vanilla", "feasible_memory"]



# ---------------------------------------------------------------- vanilla HMMs

def violation_ways(assumption: str, *, num_states: int, num_tokens: int, holds: Mapping[str, bool]
                   ) -> tuple[str, ...]:
    """How the makers can break ``assumption`` while keeping ``holds`` (empty: impossible)."""
    n, X = num_states, num_tokens
    if assumption == "3.1":
        return ("wide",) if n > X else (("twin",) if n >= 2 else ())
    if assumption == "3.2":
        if n < 2:
            return ()
        return ("pi0-zero",) if holds.get("3.5") is False else ("absorbing", "pi0-zero")
    if assumption == "3.5":
        if n < 2 or holds.get("3.1") is True:
            return ()
        ways = (("dense",) if n > X else ()) + ("twin",)
        return ways
    raise InputError(f"assumption {assumption!r}: vanilla instances know {', '.join(VANILLA_ASSUMPTIONS)}")


def feasible_vanilla(num_states: int, num_tokens: int, holds: Mapping[str, bool]) -> str | None:
    """Why no vanilla instance of these sizes can meet ``holds`` (None when one can)."""
    n, X = num_states, num_tokens
    if holds.get("3.1") is True and n > X:
        return f"Assumption 3.1 needs |H| <= |X| (rank W = |H|), found |H| = {n} > |X| = {X}"
    if holds.get("3.1") is True and holds.get("3.5") is False:
        return "Assumption 3.5 can only fail with 3.1 holding when 3.2 fails too; this family does not build that"
    for a, h in holds.items():
        if h is False and not violation_ways(a, num_states=n, num_tokens=X, holds=holds):
            return f"Assumption {a} cannot be made to fail with |H| = {n}, |X| = {X}"
    return None


def vanilla_family(ch: Chooser, *, num_states: int, num_tokens: int, holds: Mapping[str, bool],
                   max_weight: int = 4, exact: bool = True) -> tuple[HMM, dict]:
    """A vanilla HMM with a task meeting ``holds`` by construction (module docstring).

    >>> hmm, info = vanilla_family(RandomChooser(np.random.default_rng(0)), num_states=4, num_tokens=2,
    ...                            holds={"3.2": True, "3.5": True})
    >>> info["holds"], len(info["H_star"]) <= 2 < hmm.num_states, type(hmm.A[0, 0]).__name__
    ({'3.2': True, '3.5': True}, True, 'Fraction')

    Returns:
        ``(hmm, info)``; ``info`` records ``holds`` as decided, ``ways`` (how each failing
        assumption was broken), ``H_star`` and ``B`` when 3.5 holds, and a ``recipe`` line.

    Raises:
        InputError: sizes below 1, an unknown assumption, or a combination these sizes cannot
            meet (see :func:`feasible_vanilla`).
    """
    _check_size("num_states", num_states, 1)
    _check_size("num_tokens", num_tokens, 1)
    _check_size("max_weight", max_weight, 1)
    n, X = int(num_states), int(num_tokens)
    holds = dict(holds)
    for a in holds:
        if a not in VANILLA_ASSUMPTIONS:
            raise InputError(f"assumption {a!r}: vanilla instances know {', '.join(VANILLA_ASSUMPTIONS)}")
    holds = {a: holds.get(a) for a in VANILLA_ASSUMPTIONS}     # None: no guarantee either way
    why = feasible_vanilla(n, X, holds)
    if why:
        raise InputError(why)
    ways = {a: _pick(ch, violation_ways(a, num_states=n, num_tokens=X, holds=holds))
            for a, h in holds.items() if h is False}
    order = _order(ch, n)
    nxt = {order[i]: order[(i + 1) % n] for i in range(n)}
    info: dict = {"ways": dict(ways)}

    # --- the structure: B, H*, twins, the absorbing state, the self-loop
    B, H_star, twin = None, None, None
    if holds["3.5"] is True:
        b = order[0]
        cap = min(X, n - 1 if (ways.get("3.1") == "twin") else n)
        k = ch.integer(1, max(1, cap))
        others = [h for h in _order(ch, n) if h != nxt[b]]
        H_star = sorted({nxt[b]} | set(others[:k - 1]))
        B = [b]
        loop = nxt[b] if n >= 2 else b
    else:
        loop = order[0]
        if ways.get("3.5") == "twin":
            s = order[0]
            t = _pick(ch, [h for h in range(n) if h != s])
            twin = (s, t)
    absorbing = None
    if ways.get("3.2") == "absorbing":
        absorbing = _pick(ch, [h for h in range(n) if B is None or h not in B])

    # --- transitions
    A = np.full((n, n), Fraction(0), dtype=object)
    dense = ways.get("3.5") == "dense"
    for h in range(n):
        if h == absorbing:
            A[h, h] = Fraction(1)
            continue
        if B is not None and h in B:
            col = _column(ch, n, H_star, max_weight)
        elif dense:
            col = _column(ch, n, range(n), max_weight)
        else:
            support = {nxt[h]} | ({h} if h == loop else set())
            col = _column(ch, n, sorted(support), max_weight, extra=range(n))
            if twin is not None and col[twin[0]] != 0 and col[twin[1]] == 0:
                col = [c + (Fraction(1, 2) if g == twin[1] else 0) for g, c in enumerate(col)]
                total = sum(col)
                col = [c / total for c in col]
        A[:, h] = col

    # --- emissions
    W = np.full((X, n), Fraction(0), dtype=object)
    if holds["3.1"] is True:
        anchored = list(range(n))
    elif H_star is not None:
        anchored = list(H_star)
    else:
        anchored = []
    tokens = _order(ch, X)
    for i, h in enumerate(anchored):
        W[:, h] = _anchored(ch, X, tokens[i], max_weight)
    for h in range(n):
        if h not in anchored:
            col = _column(ch, X, [_pick(ch, range(X))], max_weight, extra=range(X))
            W[:, h] = col
    twin31 = None
    if ways.get("3.1") == "twin":
        a = _pick(ch, [h for h in range(n) if H_star is None or h not in H_star]) if H_star is not None and len(H_star) < n else None
        if a is None:
            a = order[-1]
        src = _pick(ch, [h for h in range(n) if h != a])
        W[:, a] = W[:, src]
        twin31 = (src, a)
    if twin is not None:
        W[:, twin[1]] = W[:, twin[0]]

    # --- start distribution and task
    pi0 = [ch.integer(1, max_weight) for _ in range(n)]
    if ways.get("3.2") == "pi0-zero":
        pi0[_pick(ch, range(n))] = 0
    pi0 = _normalise(pi0)
    mu = [Fraction(0)] * n
    support = H_star if H_star is not None else range(n)
    forced = twin[0] if twin is not None else (order[0] if holds["3.5"] is False else None)  # mu != 0 there
    for h in support:
        mu[h] = _task_value(ch, h == forced)

    hmm = HMM(_to_kind(A, exact), _to_kind(W, exact), _to_kind(pi0, exact), _to_kind(mu, exact))
    if H_star is not None:
        info.update(H_star=list(H_star), B=list(B))
    if twin is not None:
        info["twin"] = list(twin)
    if twin31 is not None:
        info["twin_31"] = list(twin31)
    if absorbing is not None:
        info["absorbing"] = absorbing
    info["holds"] = {a: h for a, h in holds.items() if h is not None}
    parts = [f"{a} {'holds' if h else 'fails (' + ways[a] + ')'}" for a, h in info["holds"].items()]
    info["recipe"] = ("by construction: " + ", ".join(parts) + "; cycle " + "->".join(map(str, order))
                      + (f" with a self-loop at {loop}" if absorbing is None else "")
                      + (f"; B = {B}, H* = {H_star} anchored" if B else ""))
    return hmm, info


def failing_vanilla_instance(theorem_id: str, hidden: int, vocab: int, *, rng: np.random.Generator
                             ) -> tuple[HMM, str]:
    """A generated instance of the given sizes on which the theorem's non-degeneracy assumption
    fails (3.3: 3.1; 3.6: 3.5) while 3.2 holds (``verify counterexample`` without ``--hmm``).

    Raises:
        InputError: sizes that cannot break it (one hidden state).
    """
    name = {"3.3": "3.1", "3.6": "3.5"}[theorem_id]
    holds = {"3.2": True, name: False}
    if theorem_id == "3.6":
        holds["3.1"] = False
    why = feasible_vanilla(hidden, vocab, holds)
    if why:
        raise InputError(f"hidden {hidden}, vocab {vocab}: {why}")
    hmm, info = vanilla_family(RandomChooser(rng), num_states=hidden, num_tokens=vocab, holds=holds,
                               max_weight=9)
    return hmm, "generated so that Assumption 3.2 holds and " + name + " fails, " + info["recipe"]
