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

Memory HMMs (Theorems 4.3, 4.6, C.6; assumptions 3.2, 4.2, 4.4, 4.5, C.5):

- ``H* = {(j*, 0)}``; its columns ``W_(m, h*)``, ``m in M'`` (``M' = M`` for 4.3,
  ``M* = supp(mu)`` otherwise), are anchored on a private token block ``T*``; every column
  that enters ``Vbar`` lives on the other tokens, so the spans meet only in 0 (4.2/4.5/C.5);
- a trigger state ``h_t`` emits the trigger token (only it does) and moves to ``h*`` surely,
  so sequences in ``R`` (eq. 4.3) are common;
- non-degeneracy fails: ``|M'| >= 2``; every syntax state ``s != 0`` of the target cell emits
  the same column for every ``m in M'`` (dependent columns), and ``h*`` either does too
  (``same-columns``) or emits, for the last ``m in M'``, a column of another state
  (``shared``: its span meets ``Vbar``), so every ``S*`` fails while the memory stays
  visible in the tokens;
- 4.4 holds: ``pi0`` is the exact stationary distribution of the ergodic ``A``; fails:
  ``not-stationary`` (``pi0`` moved off it, still positive: for irreducible ``A`` the
  stationary distribution is unique) or ``absorbing`` (3.2 fails).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from ..exceptions import InputError
from ..hmm.values import HMM, MemoryHMM
from ..paper import MEMORY_ASSUMPTIONS, THEOREM_ASSUMPTIONS, VANILLA_ASSUMPTIONS

__all__ = ["Chooser", "RandomChooser", "vanilla_family", "memory_family", "VANILLA_ASSUMPTIONS",
           "MEMORY_ASSUMPTIONS", "THEOREM_ASSUMPTIONS", "violation_ways", "failing_vanilla_instance",
           "feasible_vanilla", "feasible_memory"]



class Chooser(Protocol):
    """Where a maker's choices come from: ``integer(lo, hi)`` returns an int in ``lo..hi``."""

    def integer(self, lo: int, hi: int) -> int: ...


@dataclass
class RandomChooser:
    """Choices from a numpy generator (uniform integers)."""

    rng: np.random.Generator

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


# ---------------------------------------------------------------- small helpers

def _pick(ch: Chooser, options: Sequence) -> Any:
    return options[ch.integer(0, len(options) - 1)]


def _order(ch: Chooser, n: int) -> list[int]:
    """A permutation of ``0..n-1`` (Fisher-Yates; all choices 0 give the identity)."""
    rest, out = list(range(n)), []
    while rest:
        out.append(rest.pop(ch.integer(0, len(rest) - 1)))
    return out


def _normalise(weights: Sequence[int]) -> list[Fraction]:
    total = sum(weights)
    return [Fraction(w, total) for w in weights]


def _column(ch: Chooser, size: int, support: Sequence[int], max_weight: int, *,
            extra: Sequence[int] = ()) -> list[Fraction]:
    """A stochastic column positive on ``support`` (weights ``1..max_weight``) and with
    optional entries on ``extra`` (weights ``0..max_weight``; 0 leaves them out)."""
    w = [0] * size
    for k in support:
        w[k] = ch.integer(1, max_weight)
    for k in extra:
        if k not in support:
            w[k] = ch.integer(0, max_weight)
    return _normalise(w)


def _anchored(ch: Chooser, size: int, anchor: int, max_weight: int, allowed: Sequence[int] | None = None
              ) -> list[Fraction]:
    """A column with weight ``K`` on ``anchor`` and small weights on ``allowed`` (default: every
    row), ``K`` larger than the sum of the others (strict diagonal dominance)."""
    rows = range(size) if allowed is None else allowed
    w = [0] * size
    for k in rows:
        if k != anchor:
            w[k] = ch.integer(0, max_weight)
    w[anchor] = sum(w) + ch.integer(1, max_weight)
    return _normalise(w)


def _task_value(ch: Chooser, nonzero: bool) -> Fraction:
    if nonzero:
        v = ch.integer(1, 6)
        return Fraction(v if v <= 3 else 3 - v)             # 1, 2, 3, -1, -2, -3
    return Fraction(ch.integer(-3, 3))


def _to_kind(arr, exact: bool):
    arr = np.array(arr, dtype=object)
    return arr if exact else arr.astype(float)


def _check_size(name: str, value: int, lo: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise InputError(f"{name}: expected an integer >= {lo}, found {value!r}")


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


# ---------------------------------------------------------------- memory HMMs

def feasible_memory(theorem_id: str, *, cells: int, memory_values: int, syntax_states: int,
                    num_tokens: int, holds: Mapping[str, bool], support_size: int | None = None) -> str | None:
    """Why no memory instance of these sizes can meet ``holds`` for the theorem (None if one can)."""
    N, M, S, X = cells, memory_values, syntax_states, num_tokens
    if theorem_id == "4.6" and N != 1:
        return "Theorem 4.6 is about one memory cell"
    nondeg = {"4.3": "4.2", "4.6": "4.5", "C.6": "C.5"}[theorem_id]
    k = M if theorem_id == "4.3" else (support_size or 1)
    if holds.get(nondeg) is False and (M < 2 or k < 2):
        return f"Assumption {nondeg} can only be made to fail with at least 2 recoverable memory values"
    need = k + 2 if N * S >= 2 else k
    if X < need:
        return (f"{k} recoverable memory values need {need} tokens (an anchored block, a trigger and a "
                f"filler), found |X| = {X}")
    regular = "3.2" if theorem_id == "4.3" else "4.4"
    if holds.get(regular) is False and N * S < 2 and (theorem_id == "4.3"):
        return "Assumption 3.2 cannot fail on a one-state chain"
    return None


def memory_family(ch: Chooser, theorem_id: str, *, cells: int, memory_values: int, syntax_states: int,
                  num_tokens: int, holds: Mapping[str, bool], max_weight: int = 4, exact: bool = True,
                  product_prior: bool | None = None) -> tuple[MemoryHMM, dict]:
    """A memory HMM with a task meeting ``holds`` (ids of the theorem's assumptions) by
    construction (module docstring).

    Raises:
        InputError: sizes below 1, an unknown theorem or assumption, or sizes that cannot meet
            ``holds`` (see :func:`feasible_memory`).
    """
    from .generators import stationary_distribution

    if theorem_id not in ("4.3", "4.6", "C.6"):
        raise InputError(f"theorem {theorem_id!r}: memory families exist for 4.3, 4.6 and C.6")
    for name, v in (("cells", cells), ("memory_values", memory_values), ("syntax_states", syntax_states),
                    ("num_tokens", num_tokens), ("max_weight", max_weight)):
        _check_size(name, v, 1)
    names = THEOREM_ASSUMPTIONS[theorem_id]
    holds = {a: holds.get(a, None) for a in names}
    for a, h in holds.items():
        if h is None:
            holds[a] = True
    for a in dict(holds):
        if a not in names:
            raise InputError(f"assumption {a!r}: Theorem {theorem_id} has {', '.join(names)}")
    N, M, S, X = int(cells), int(memory_values), int(syntax_states), int(num_tokens)
    nondeg, regular = names[1], names[0]
    prompt = theorem_id != "4.3"
    # the task first: M* = supp(mu) decides the recoverable block
    if prompt:
        lo = 2 if holds[nondeg] is False else 1
        if M < lo:
            raise InputError(feasible_memory(theorem_id, cells=N, memory_values=M, syntax_states=S,
                                             num_tokens=X, holds=holds, support_size=lo))
        k = ch.integer(lo, M)
        M_rec = sorted(_order(ch, M)[:k])
    else:
        M_rec = list(range(M))
        k = M
    why = feasible_memory(theorem_id, cells=N, memory_values=M, syntax_states=S, num_tokens=X,
                          holds=holds, support_size=k)
    if why:
        raise InputError(why)
    mu = [Fraction(0)] * M
    for m in range(M):
        if m in M_rec:
            mu[m] = _task_value(ch, prompt) if prompt else _task_value(ch, False)
    n = N * S
    j_star = ch.integer(0, N - 1)
    h_star = j_star * S
    h_t = None if n == 1 else (h_star + 1 if S >= 2 else ((j_star + 1) % N) * S)
    info_shared = None
    ways = {a: ("not-stationary" if a == "4.4" and n == 1 else
                _pick(ch, ("absorbing", "pi0-zero") if a == "3.2" else
                      ("not-stationary", "absorbing") if a == "4.4" else
                      ("shared", "same-columns") if n >= 2 else ("same-columns",)))
            for a, h in holds.items() if h is False}
    if ways.get("4.4") == "absorbing" and n < 2:
        ways["4.4"] = "not-stationary"
    # --- transitions: a cycle through all states with h_t -> h* surely, one self-loop
    rest = [h for h in _order(ch, n) if h not in (h_t, h_star)]
    cycle = ([h_t, h_star] if h_t is not None else [h_star]) + rest
    nxt = {cycle[i]: cycle[(i + 1) % n] for i in range(n)}
    loop = h_star if n == 1 or h_t is None else next(h for h in cycle if h != h_t)
    absorbing = None
    if "absorbing" in ways.values():
        absorbing = _pick(ch, [h for h in range(n) if h != h_t])
    A = np.full((n, n), Fraction(0), dtype=object)
    for h in range(n):
        if h == absorbing:
            A[h, h] = Fraction(1)
        elif h == h_t:
            A[h_star, h] = Fraction(1)
        else:
            support = {nxt[h]} | ({h} if h == loop else set())
            A[:, h] = _column(ch, n, sorted(support), max_weight, extra=range(n))
    # --- emissions: T* = tokens 0..k-1, trigger k, fillers k+1.. (when n >= 2)
    T_star = list(range(k))
    trigger = k if n >= 2 else None
    fillers = list(range(k + 1, X)) if n >= 2 else list(range(k, X))
    W = np.full((X, M, n), Fraction(0), dtype=object)
    for h in range(n):
        for m in range(M):
            if h == h_star and m in M_rec:
                col = _anchored(ch, X, T_star[M_rec.index(m)], max_weight, allowed=T_star)
            elif h == h_star:                               # m outside M*: anything but the trigger
                col = _column(ch, X, [_pick(ch, T_star + fillers)], max_weight,
                              extra=[z for z in range(X) if z != trigger])
            elif h == h_t:
                col = _column(ch, X, [trigger], max_weight, extra=fillers)
            else:
                col = _column(ch, X, [_pick(ch, fillers)], max_weight, extra=fillers)
            W[:, m, h] = col
    if holds[nondeg] is False:
        # every S* containing s != 0: W_(m, (j*, s)) equal for m in M' (dependent columns);
        # every S* containing 0: "shared" puts W_(M'[-1], h*) into Vbar (a column of another
        # state), "same-columns" makes h*'s columns equal too (the only way with one state)
        for s in range(S):
            h = j_star * S + s
            for m in M_rec[1:]:
                if s != 0 or ways[nondeg] == "same-columns":
                    W[:, m, h] = W[:, M_rec[0], h]
        if ways[nondeg] == "shared":
            other = _pick(ch, [h for h in range(n) if h != h_star])
            W[:, M_rec[-1], h_star] = W[:, M_rec[0], other]
            info_shared = [M_rec[0], other]
    # --- priors
    if product_prior is None:
        product_prior = bool(ch.integer(0, 1))
    pM_cells = None
    if product_prior:
        pM_cells = [_normalise([ch.integer(1, max_weight) for _ in range(M)]) for _ in range(N)]
    pM = None if product_prior else _normalise([ch.integer(1, max_weight) for _ in range(M ** N)])
    if prompt and holds[regular] and absorbing is None:
        pi0 = list(stationary_distribution(A))
    elif prompt and ways.get("4.4") == "not-stationary":
        pi0 = list(stationary_distribution(A))
        if n == 1:
            raise InputError("Assumption 4.4 cannot fail on a one-state chain by non-stationarity")
        a, b = _order(ch, n)[:2]
        eps = min(pi0) / 2
        pi0[a] += eps
        pi0[b] -= eps
    else:
        pi0 = [ch.integer(1, max_weight) for _ in range(n)]
        if ways.get("3.2") == "pi0-zero":
            pi0[_pick(ch, range(n))] = 0
        pi0 = _normalise(pi0)
    kind = lambda v: None if v is None else _to_kind(v, exact)          # noqa: E731
    model = MemoryHMM.create(N, M, S, kind(A), kind(W), kind(pi0), pM=kind(pM), pM_cells=kind(pM_cells),
                             mu=kind(mu), target_cell=j_star, exact=exact)
    info = {"holds": dict(holds), "ways": ways, "H_star": [h_star], "S_star": [0], "M_recoverable": M_rec,
            "trigger": trigger, "trigger_state": h_t, "target_cell": j_star,
            "recipe": (f"by construction: " + ", ".join(f"{a} {'holds' if h else 'fails (' + ways[a] + ')'}"
                                                         for a, h in holds.items())
                       + f"; H* = {{{h_star}}} anchored on tokens {T_star}, trigger token {trigger} "
                         f"(state {h_t}) moves to H* surely")}
    if info_shared is not None:
        info["shared_with"] = info_shared
    return model, info
