"""Witnesses for the vanilla-HMM theorems (paper Section 3), built exactly.

Theorem 3.3 (linear head on ``G_1(x')``, ``x' = (∅, x)``; proof in Appendix A):
    ``b = mu^T D^{-1} W^+`` with ``D = diag(P[H_1] / P[H_0])`` and ``W^+ W = I``,
    so that ``b . G_1(x') = r_x mu . P[H_0 | X = x]`` with ``r_x > 0`` (Claim A.1).

Theorem 3.6 (prompt ``u`` plus linear head on ``Gbar_2(ehat(x))``; proof in Appendix B.1):
    ``u = 1_B`` for the basis set ``B`` of Assumption 3.5, ``c = A (u ⊙ P[H_1])`` with
    ``supp(c) = H*``, and ``Gbar_2(ehat(x)) = r_x W diag(1/P[H_0]) (c ⊙ P[H_0 | X = x])``
    (Lemma B.2), so ``b = mu_{H*}^T diag(P[H_0] / c)_{H*} (W_{:, H*})^+`` gives
    ``b . Gbar_2(ehat(x)) = r_x mu . P[H_0 | X = x]``.

A task with ``k`` classes (``mu`` a ``k x |H|`` matrix) gets ``k`` heads, the rows of ``b``
(``k x |X|``): the binary construction applied to each row ``mu_c`` (Theorem 3.6: one prompt
``u = 1_B`` with ``supp(mu_c) ⊆ H*`` for every ``c``). Then ``b_c . G = r_x mu_c . P[H_0 | x]``
with one ``r_x > 0`` for every ``c``, so ``argmax_c`` (and its ties) is preserved exactly.

Witnesses are plain data citing the claim they support; ``verify/`` checks them independently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..models.exceptions import ConstructionError
from ..models.hmm.values import HMM
from ..models.inference.exact import transition_apply
from ..models.hmm.linalg import ColumnIndependence, left_inverse, rank
from ..models.hmm.task import is_multiclass

from .witnesses import LinearHeadWitness, PromptWitness

__all__ = ["ConstructionError", "LinearHeadWitness", "PromptWitness", "EssentialSets",
           "theorem_33_witness", "theorem_36_witness", "find_essential_sets"]


@dataclass(frozen=True)
class EssentialSets:
    """Result of the complete search for Assumption 3.5's ``H*`` and ``B``.

    ``found`` is True with a valid pair, or False with ``reason`` (the requirement no ``B``
    meets) and ``blocking`` (the states of ``supp(mu)`` that no admissible column covers, or,
    when every state is coverable, every combination was refuted by dependence).
    """

    found: bool
    H_star: tuple[int, ...] = ()
    B: tuple[int, ...] = ()
    reason: str = ""
    blocking: tuple[int, ...] = ()
    nodes: int = 0
    rank_W: int = 0
    candidates: dict = field(default_factory=dict)
    minimal: bool = True                 # False: the pair is valid, its |H*| not proven smallest


def _require_task(hmm: HMM) -> np.ndarray:
    if hmm.mu is None:
        raise ConstructionError("the instance has no task vector mu; give one (HMM.with_task, or \"mu\" in "
                                "the instance file)")
    if not hmm.exact:
        raise ConstructionError("constructions are exact; convert the HMM explicitly first "
                                "(headprompt.models.hmm.rationalize.rationalize)")
    return hmm.mu


def theorem_33_witness(hmm: HMM) -> LinearHeadWitness:
    """The Theorem 3.3 head ``b = mu^T D^{-1} W^+`` (Appendix A), exactly.

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, 0], [0, 1]], [['3/4', '1/4'], ['1/4', '3/4']], ['1/2', '1/2'], [1, -1])
    >>> [str(v) for v in theorem_33_witness(h).b]
    ['2', '-2']

    Raises:
        ConstructionError: ``W`` has dependent columns (Assumption 3.1), or ``P[H_0]`` or
            ``P[H_1]`` has a zero entry (Assumption 3.2), naming the state.
    """
    mu = _require_task(hmm)
    if is_multiclass(mu):               # one head per class, the same construction on each row
        heads = [theorem_33_witness(hmm.with_task(row)) for row in mu]
        return LinearHeadWitness(b=np.array([w.b for w in heads], dtype=object),
                                 left_inverse=heads[0].left_inverse, D=heads[0].D)
    n = hmm.num_states
    r = rank(hmm.W)
    if r < n:
        raise ConstructionError(f"Assumption 3.1 fails: rank W = {r} < |H| = {n}, so W has no left "
                                "inverse W^+")
    p0, p1 = hmm.pi0, hmm.hidden_marginal_1()
    for name, p in (("P[H_0]", p0), ("P[H_1]", p1)):
        zeros = [h for h in range(n) if p[h] == 0]
        if zeros:
            raise ConstructionError(f"Assumption 3.2 fails: {name}[{zeros[0]}] = 0, so "
                                    "D = diag(P[H_1]/P[H_0]) is undefined or singular")
    Wp = left_inverse(hmm.W)
    D = np.array([p1[h] / p0[h] for h in range(n)], dtype=object)
    b = np.array([mu[h] / D[h] for h in range(n)], dtype=object).dot(Wp)
    return LinearHeadWitness(b=b, left_inverse=Wp, D=D)


def _support(column) -> frozenset[int]:
    return frozenset(int(h) for h in np.nonzero(np.asarray([v != 0 for v in column]))[0])


def _task_support(mu) -> frozenset[int]:
    """``supp(mu)``; for a ``k``-row task the union of the rows' supports (every class reads it)."""
    if is_multiclass(mu):
        return frozenset().union(*(_support(row) for row in mu))
    return _support(mu)


def find_essential_sets(hmm: HMM, *, max_nodes: int = 200_000, improve_nodes: int = 300) -> EssentialSets:
    """Complete exact search for ``(H*, B)`` of Assumption 3.5.

    Requirements: ``H* = ∪_{h in B} supp(A[:, h])``; the columns ``W[:, H*]`` are linearly
    independent (so ``|H*| <= rank W``); ``supp(mu) ⊆ H*``. Since independence is inherited
    by subsets and the union grows with ``B``, it suffices to cover ``supp(mu)`` minimally:
    branch on the first uncovered state of ``supp(mu)`` over every column that covers it and
    keeps the union independent. This finds a pair whenever one exists (any valid ``B'``
    contains a branch's choices, and their union is a subset of ``H*(B')``) and otherwise
    proves that none does. Branch and bound returns a pair with the smallest ``|H*|`` (then
    the smallest ``|B|``) when it finishes within ``improve_nodes`` nodes after the first pair;
    otherwise it returns the best pair found with ``minimal = False`` (any valid pair serves
    Theorem 3.6; the search for a smaller one is what can grow exponentially).

    Raises:
        ConstructionError: ``max_nodes`` nodes were searched before any pair was found.

    Returns:
        EssentialSets with the pair found, or with the reason no ``B`` works.
    """
    mu = _require_task(hmm)
    n = hmm.num_states
    target = sorted(_task_support(mu))
    columns = ColumnIndependence(hmm.W)
    rank_W = columns.rank()
    mask = hmm.transition_support()
    supports = [frozenset(np.flatnonzero(mask[:, h]).tolist()) for h in range(n)]
    independent_cache: dict[frozenset, bool] = {frozenset(): True}

    def independent(states: frozenset) -> bool:
        if states not in independent_cache:
            independent_cache[states] = len(states) <= rank_W and columns.independent(states)
        return independent_cache[states]

    # a column is admissible only if its own support is independent
    admissible = [h for h in range(n) if independent(supports[h])]
    covering = {s: sorted((h for h in admissible if s in supports[h]), key=lambda h: (len(supports[h]), h))
                for s in target}
    uncoverable = tuple(s for s in target if not covering[s])
    if uncoverable:
        s = uncoverable[0]
        reason = (f"state {s} is in supp(mu) but every column of A that reaches it (h with "
                  f"A[{s}, h] > 0) has a support whose W-columns are linearly dependent, so no "
                  f"B can put {s} into an independent H*")
        if not any(s in supports[h] for h in range(n)):
            reason = f"state {s} is in supp(mu) but no column of A reaches it (row {s} of A is zero)"
        return EssentialSets(False, reason=reason, blocking=uncoverable, rank_W=rank_W,
                             candidates={int(k): v for k, v in covering.items()})
    nodes = 0
    best: list = []                      # [(|H*|, |B|), B] of the smallest pair found so far
    first_found_at: list = []            # the node count when the first pair was found

    class _Stop(Exception):
        pass

    def search(B: tuple[int, ...], union: frozenset) -> None:
        nonlocal nodes
        nodes += 1
        if best and nodes > first_found_at[0] + improve_nodes:
            raise _Stop                  # a valid pair is in hand; stop improving it
        if nodes > max_nodes:
            raise ConstructionError(f"Assumption 3.5 search exceeded {max_nodes} nodes; "
                                    "the instance is too large for a complete search")
        if best and (len(union), len(B)) >= best[0]:
            return                       # branch and bound: cannot beat the best pair
        missing = [s for s in target if s not in union]
        if not missing:
            best[:] = [(len(union), len(B)), B]
            first_found_at[:] = first_found_at or [nodes]
            return
        # most of supp(mu) newly covered first, then fewest states added: a good first pair
        # makes the bound prune early (the order changes the speed, not the result)
        left = frozenset(missing)
        order = sorted(covering[missing[0]],
                       key=lambda h: (-len(supports[h] & left), len(supports[h] - union), h))
        for h in order:
            new = union | supports[h]
            if best and (len(new), len(B) + 1) >= best[0]:
                continue                 # the bound first: it is free, the rank is not
            if independent(new):
                search(B + (h,), new)

    minimal = True
    try:
        search((), frozenset())
    except _Stop:
        minimal = False
    B = best[1] if best else None
    if B is None:
        return EssentialSets(False, reason=(f"every set B covering supp(mu) = {target} reaches an "
                                            "H* whose W-columns are linearly dependent "
                                            f"(rank W = {rank_W}); searched {nodes} partial choices"),
                             nodes=nodes, rank_W=rank_W, candidates={int(k): v for k, v in covering.items()})
    H_star = frozenset().union(*(supports[h] for h in B)) if B else frozenset()
    return EssentialSets(True, H_star=tuple(sorted(H_star)), B=tuple(sorted(B)), nodes=nodes,
                         rank_W=rank_W, minimal=minimal)


def theorem_36_witness(hmm: HMM, sets: EssentialSets | None = None) -> PromptWitness:
    """The Theorem 3.6 prompt ``u = 1_B`` and head ``b`` (Appendix B.1), exactly.

    Raises:
        ConstructionError: Assumption 3.5 has no ``(H*, B)`` (the reason is in the message), or
            ``P[H_0]``/``P[H_1]`` vanish where the construction divides by them.
    """
    mu = _require_task(hmm)
    sets = find_essential_sets(hmm) if sets is None else sets
    if not sets.found:
        raise ConstructionError(f"Assumption 3.5 fails: {sets.reason}")
    if is_multiclass(mu):               # one prompt u = 1_B (B covers every row), one head per row
        heads = [theorem_36_witness(hmm.with_task(row), sets) for row in mu]
        return PromptWitness(u=heads[0].u, b=np.array([w.b for w in heads], dtype=object),
                             H_star=sets.H_star, B=sets.B)
    n = hmm.num_states
    p0, p1 = hmm.pi0, hmm.hidden_marginal_1()
    u = np.array([Fraction(1) if h in sets.B else Fraction(0) for h in range(n)], dtype=object)
    c = transition_apply(hmm, u * p1)
    H_star = list(sets.H_star)
    if sorted(_support(c)) != H_star:
        bad = sorted(set(H_star) - _support(c))
        raise ConstructionError(f"Assumption 3.2 fails: P[H_1] vanishes on part of B, so "
                                f"supp(A(u ⊙ P[H_1])) misses {bad} of H*")
    for h in H_star:
        if p0[h] == 0:
            raise ConstructionError(f"Assumption 3.2 fails: P[H_0][{h}] = 0 for h in H*, so "
                                    "diag(1/P[H_0]) is undefined")
    if not H_star:
        return PromptWitness(u=u, b=np.array([Fraction(0)] * hmm.num_tokens, dtype=object),
                             H_star=(), B=sets.B)
    Wp = left_inverse(hmm.W[:, H_star])                 # |H*| x |X|
    coeff = np.array([mu[h] * p0[h] / c[h] for h in H_star], dtype=object)
    return PromptWitness(u=u, b=coeff.dot(Wp), H_star=sets.H_star, B=sets.B)
