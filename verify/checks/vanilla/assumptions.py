"""Exact checks of the paper's assumptions, each returning holds / a plain reason / evidence.

- 3.1 (non-degeneracy): ``W`` has linearly independent columns (exact rank); evidence when it
  fails: a nonzero ``v`` with ``W v = 0``.
- 3.2 (regularity): the support graph of ``A`` is strongly connected (irreducible) and
  aperiodic (gcd of cycle lengths 1), and ``P[H_0]`` has full support.
- 3.5 (relaxed non-degeneracy): the complete search of :func:`find_essential_sets`.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ....models.hmm.linalg import nullspace_vector, rank
from ....constructions.vanilla import find_essential_sets
from ....models.exceptions import ConstructionError, LimitError
from ....models.hmm.values import HMM
from ....models.hmm.rational import format_fraction

__all__ = ["check_31", "check_32", "check_35", "support_graph_period", "reachable", "ergodicity", "CHECKS"]


def check_31(hmm: HMM) -> dict:
    """Assumption 3.1: ``rank W = |H|``."""
    n, r = hmm.num_states, rank(hmm.W)
    if r == n:
        return {"holds": True, "why": f"rank W = {r} = |H|: the columns of W are linearly independent"}
    v = nullspace_vector(hmm.W)
    return {"holds": False,
            "why": f"rank W = {r} < |H| = {n}" + (" (|H| > |X|: impossible with this vocabulary)"
                                                 if n > hmm.num_tokens else ""),
            "null_vector": [format_fraction(x) for x in v]}


def reachable(adjacency: list[list[int]], start: int) -> set[int]:
    """States reachable from ``start`` along edges ``h -> g`` of ``adjacency[h]``."""
    seen, queue = {start}, deque([start])
    while queue:
        h = queue.popleft()
        for g in adjacency[h]:
            if g not in seen:
                seen.add(g)
                queue.append(g)
    return seen


def support_graph_period(adjacency: list[list[int]]) -> int:
    """The period of a strongly connected graph: gcd over edges ``h -> g`` of
    ``level(h) + 1 - level(g)`` with BFS levels from state 0."""
    level = {0: 0}
    queue = deque([0])
    while queue:
        h = queue.popleft()
        for g in adjacency[h]:
            if g not in level:
                level[g] = level[h] + 1
                queue.append(g)
    period = 0
    for h, succ in enumerate(adjacency):
        for g in succ:
            period = math.gcd(period, level[h] + 1 - level[g])
    return period


def check_32(hmm: HMM) -> dict:
    """Assumption 3.2: the chain is ergodic (irreducible and aperiodic) and ``P[H_0] > 0``."""
    from scipy import sparse

    graph = sparse.csr_array(hmm.transition_support().T.astype(np.int8))     # row h: edges h -> g
    zeros = [h for h in range(hmm.num_states) if hmm.pi0[h] == 0]
    return ergodicity(graph, zeros)


def ergodicity(graph, zero_states: list[int]) -> dict:
    """Assumption 3.2 on the support graph (CSR, row ``h`` lists the ``g`` with ``A[g, h] > 0``):
    strongly connected components in one pass (``scipy.sparse.csgraph``); when there are
    several, the first state ``h`` that misses some state and the first state it misses (one
    more search each); the period from one breadth-first search (the gcd over edges ``h -> g``
    of ``level(h) + 1 - level(g)``); then ``P[H_0] > 0`` (``zero_states`` are its zeros)."""
    from scipy.sparse import csgraph

    n = graph.shape[0]
    count, label = csgraph.connected_components(graph, directed=True, connection="strong")
    if count > 1:
        from_0 = np.zeros(n, dtype=bool)
        from_0[csgraph.breadth_first_order(graph, 0, directed=True, return_predecessors=False)] = True
        # every state of 0's component reaches all that 0 reaches; any other state cannot reach 0
        h = 0 if not from_0.all() else int(np.flatnonzero(label != label[0])[0])
        seen = np.zeros(n, dtype=bool)
        seen[csgraph.breadth_first_order(graph, h, directed=True, return_predecessors=False)] = True
        missing = int(np.flatnonzero(~seen)[0])
        return {"holds": False, "why": f"the chain is not irreducible: state {missing} cannot "
                                       f"be reached from state {h}",
                "unreachable": [h, missing]}
    level = csgraph.shortest_path(graph, method="D", unweighted=True, indices=0)
    src = np.repeat(np.arange(n), np.diff(graph.indptr))
    diffs = (level[src] + 1 - level[graph.indices]).astype(np.int64)
    period = int(np.gcd.reduce(np.abs(diffs))) if diffs.size else 0
    if period != 1:
        return {"holds": False, "why": f"the chain is periodic with period {period}, so not ergodic",
                "period": period}
    if zero_states:
        return {"holds": False, "why": f"P[H_0] does not have full support: P[H_0][{zero_states[0]}] = 0",
                "zero_states": zero_states}
    return {"holds": True, "why": "the support graph of A is strongly connected and aperiodic, "
                                  "and P[H_0] > 0 on every state"}


def check_35(hmm: HMM) -> dict:
    """Assumption 3.5 by complete search; evidence ``H_star`` and ``B`` or the blocking reason.

    With ``mu = 0`` it holds vacuously (``B = H* = []``; README, "mu = 0").

    Raises:
        LimitError: the complete search is too large for this instance (it cannot decide).
    """
    try:
        sets = find_essential_sets(hmm)
    except ConstructionError as exc:
        raise LimitError(f"Assumption 3.5 cannot be decided on this instance ({exc}); the complete search "
                         f"over {hmm.num_states} states is too large: use a smaller instance, or give the "
                         "prompt and head with --witness (checked without the assumption)") from None
    if sets.found and not sets.H_star:
        return {"holds": True, "H_star": [], "B": [], "_sets": sets,
                "why": "mu = 0: supp(mu) is empty, so Assumption 3.5 holds vacuously with B = H* = []; "
                       "F* = 1 on every sequence, so any check of this task is vacuous"}
    if sets.found:
        return {"holds": True, "H_star": list(sets.H_star), "B": list(sets.B),
                "why": f"H* = {list(sets.H_star)} is the one-step reach of B = {list(sets.B)}, "
                       f"W[:, H*] has independent columns and supp(mu) ⊆ H*"
                       + ("" if sets.minimal else f" (a valid pair; the search for a smaller H* stopped "
                                                  f"after {sets.nodes} nodes)"),
                "_sets": sets}
    return {"holds": False, "why": sets.reason, "blocking": list(sets.blocking),
            "rank_W": sets.rank_W, "_sets": sets}


# assumption id -> exact checker (read by the registry)
CHECKS = {"3.1": check_31, "3.2": check_32, "3.5": check_35}
