"""Memory-HMM families that satisfy or break each assumption of Theorems 4.3, 4.6 and C.6 *by
construction* (assumptions 3.2, 4.2, 4.4, 4.5, C.5); the conventions (choosers, ``holds``)
are those of :mod:`.families`.

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

from fractions import Fraction
from typing import Mapping

import numpy as np

from ..exceptions import InputError
from ..hmm.values import MemoryHMM
from ..paper import THEOREM_ASSUMPTIONS
from .choices import Chooser, _anchored, _check_size, _column, _normalise, _order, _pick, _task_value, _to_kind

__all__ = ["memory_family", "feasible_memory"]


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
