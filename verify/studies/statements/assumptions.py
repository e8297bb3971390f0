"""Assumption rows: an assumption is a hypothesis, so what ``verify statements`` checks is the
toolkit's checker for it. Each checker (:mod:`headprompt.verify.checks.vanilla.assumptions`,
:mod:`headprompt.verify.checks.memory.assumptions`) is compared with an oracle written here from
the paper's wording alone (sympy ranks, explicit search over every candidate set, reachability
sets of the support graph) on a seeded random family of small instances drawn so that the
assumption holds on some and fails on others. A family on which either outcome never occurs
makes the row vacuous (a failure).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Callable

import numpy as np

from ....models.hmm.values import HMM, MemoryHMM
from ....models.generate.generators import stationary_distribution
from ....models.exceptions import InputError

__all__ = ["sympy_rank", "ergodic", "oracle_31", "oracle_32", "oracle_35", "oracle_nondegenerate",
           "oracle_44", "FAMILIES", "ORACLES", "check_assumption"]


def sympy_rank(columns) -> int:
    """Exact rank of the matrix with these columns (sympy, no shared linear algebra)."""
    import sympy

    cols = [list(c) for c in columns]
    if not cols:
        return 0
    return sympy.Matrix([[sympy.Rational(Fraction(c[r]).numerator, Fraction(c[r]).denominator)
                          for c in cols] for r in range(len(cols[0]))]).rank()


def ergodic(A, pi0) -> bool:
    """Assumption 3.2 from the graph alone: the set of states reached in exactly ``k`` steps from
    each state is all of them at ``k = (n-1)^2 + 1`` (Wielandt: the support is primitive, which
    for a finite chain is irreducible and aperiodic), and ``P[H_0] > 0``."""
    n = len(pi0)
    succ = [{g for g in range(n) if A[g][h] != 0} for h in range(n)]
    reach = [set(s) for s in succ]
    for _ in range((n - 1) ** 2):
        reach = [set().union(*(succ[g] for g in r)) for r in reach]
    return all(len(r) == n for r in reach) and all(Fraction(p) > 0 for p in pi0)


def oracle_31(hmm) -> bool:
    """Assumption 3.1: the columns of ``W`` are linearly independent."""
    return sympy_rank(hmm.W.T.tolist()) == hmm.num_states


def oracle_32(hmm) -> bool:
    return ergodic(hmm.A.tolist(), list(hmm.pi0))


def oracle_35(hmm) -> bool:
    """Assumption 3.5 over every ``B``: ``H* = union of supp(A[:, h]), h in B``, covers
    ``supp(mu)`` and ``W[:, H*]`` has independent columns."""
    n = hmm.num_states
    needed = {h for h in range(n) if hmm.mu[h] != 0}
    for B in itertools.chain.from_iterable(itertools.combinations(range(n), k) for k in range(n + 1)):
        H_star = sorted({g for h in B for g in range(n) if hmm.A[g, h] != 0})
        if needed.issubset(H_star) and sympy_rank([hmm.W[:, h] for h in H_star]) == len(H_star):
            return True
    return False


def oracle_nondegenerate(mhmm, restricted: bool) -> bool:
    """Assumption 4.2 (``restricted`` False) or 4.5 / C.5 (True: ``m`` in ``M* = supp(mu)`` for
    the target cell's states) over every nonempty ``S*``: the columns
    ``W[:, m, (j*, s)]``, ``s in S*``, are independent and their span meets the span of the
    other relevant columns only in 0 (``rank [U | V] = |U| + rank V``)."""
    S, j = mhmm.syntax_states, mhmm.target_cell
    every = range(mhmm.memory_values)
    star = [m for m in every if mhmm.mu[m] != 0] if restricted else list(every)
    for k in range(1, S + 1):
        for S_star in itertools.combinations(range(S), k):
            inside = {j * S + s for s in S_star}
            U = [mhmm.W[:, m, h] for h in sorted(inside) for m in star]
            V = [mhmm.W[:, m, h] for h in range(mhmm.num_states) if h not in inside
                 for m in (star if mhmm.cell_of(h) == j else every)]
            if sympy_rank(U) == len(U) and sympy_rank(U + V) == len(U) + sympy_rank(V):
                return True
    return False


def oracle_44(mhmm) -> bool:
    """Assumption 4.4: 3.2 on the syntax chain and ``A P[H_0] = P[H_0]`` exactly."""
    n = mhmm.num_states
    image = [sum(Fraction(mhmm.A[g, h]) * Fraction(mhmm.pi0[h]) for h in range(n)) for g in range(n)]
    return ergodic(mhmm.A.tolist(), list(mhmm.pi0)) and image == [Fraction(p) for p in mhmm.pi0]


ORACLES: dict[str, Callable] = {
    "3.1": oracle_31, "3.2": oracle_32, "3.5": oracle_35,
    "4.2": lambda m: oracle_nondegenerate(m, False), "4.4": oracle_44,
    "4.5": lambda m: oracle_nondegenerate(m, True), "C.5": lambda m: oracle_nondegenerate(m, True),
}


# ------------------------------------------------------------------ random families

def _column(rng, size: int, zeros: float) -> list[Fraction]:
    """A random rational distribution with some zeros (never all)."""
    w = [int(rng.integers(1, 4)) if rng.random() >= zeros else 0 for _ in range(size)]
    if not any(w):
        w[int(rng.integers(size))] = 1
    return [Fraction(v, sum(w)) for v in w]


def _pool_columns(rng, size: int, count: int, pool: int) -> list[list[Fraction]]:
    """``count`` columns drawn with replacement from ``pool`` random distributions, so that equal
    (dependent) columns are common."""
    choices = [_column(rng, size, 0.4) for _ in range(pool)]
    return [choices[int(rng.integers(pool))] for _ in range(count)]


def _transitions(rng, n: int, zeros: float, cycles: float = 0.0) -> list[list[Fraction]]:
    """Random columns with zeros; with probability ``cycles`` a cyclic permutation (a periodic,
    irreducible chain) instead."""
    if rng.random() < cycles:
        return [[Fraction(int(g == (h + 1) % n)) for h in range(n)] for g in range(n)]
    cols = [_column(rng, n, zeros) for _ in range(n)]
    return [[cols[h][g] for h in range(n)] for g in range(n)]


def _mu(rng, size: int) -> list[int]:
    mu = [int(rng.choice([-2, -1, 0, 0, 1, 2])) for _ in range(size)]
    if not any(mu):
        mu[int(rng.integers(size))] = 1
    return mu


def _vanilla(rng, kind: str) -> HMM:
    n = {"3.1": 3, "3.2": int(rng.integers(2, 5)), "3.5": 4}[kind]
    X = 3
    A = _transitions(rng, n, 0.3 if kind == "3.2" else 0.5, 0.25 if kind == "3.2" else 0.0)
    pi0 = _column(rng, n, 0.1 if kind == "3.2" else 0.0)
    W = _pool_columns(rng, X, n, 6 if kind == "3.1" else 4)
    return HMM.create(A, [[W[h][x] for h in range(n)] for x in range(X)], pi0, _mu(rng, n))


def _memory(rng, kind: str) -> MemoryHMM:
    cells = {"4.2": int(rng.integers(1, 3)), "4.4": 1, "4.5": 1, "C.5": 2}[kind]
    M, S, X = (3 if kind == "4.5" else 2), 2, 4
    n = cells * S
    A = _transitions(rng, n, 0.3 if kind == "4.4" else 0.0, 0.2 if kind == "4.4" else 0.0)
    pi0 = _column(rng, n, 0.0)
    if kind == "4.4" and rng.random() < 0.8:
        try:
            pi0 = list(stationary_distribution(np.array(A, dtype=object)))
        except InputError:
            pass
    cols = _pool_columns(rng, X, M * n, 5)
    W = [[[cols[m * n + h][x] for h in range(n)] for m in range(M)] for x in range(X)]
    pM = [Fraction(1, M ** cells)] * (M ** cells)
    return MemoryHMM.create(cells, M, S, A, W, pi0, pM, mu=_mu(rng, M), target_cell=int(rng.integers(cells)))


FAMILIES: dict[str, tuple[str, Callable]] = {
    "3.1": ("|H| = |X| = 3, W's columns drawn from 6 random distributions (repeats make it fail)", _vanilla),
    "3.2": ("|H| in 2..4, A with random zeros or a cyclic permutation (reducible or periodic chains), P[H_0] with random zeros", _vanilla),
    "3.5": ("|H| = 4, |X| = 3, sparse A, W's columns from 4 random distributions, random supp(mu)", _vanilla),
    "4.2": ("1 or 2 cells, |M| = |S| = 2, |X| = 4, W's columns from 5 random distributions", _memory),
    "4.4": ("one cell, |M| = |S| = 2, A with random zeros or a cycle, P[H_0] stationary on 80% of draws", _memory),
    "4.5": ("one cell, |M| = 3, |S| = 2, |X| = 4, random supp(mu), W's columns from 5 distributions", _memory),
    "C.5": ("2 cells, |M| = |S| = 2, |X| = 4, random supp(mu) and target cell, W's columns from 5", _memory),
}
"""Assumption id -> (what the random family is, builder ``(rng, id) -> instance``)."""


def check_assumption(aid: str, *, count: int = 24, seed: int = 0, checker: Callable | None = None,
                     oracle: Callable | None = None, instances=None) -> tuple[bool, str, dict]:
    """Run the toolkit's checker for assumption ``aid`` (default from the checker tables) and the
    oracle on ``count`` seeded instances of :data:`FAMILIES` (or the given ``instances``).
    Holds when they agree on every instance and the assumption both held and failed at least
    once; the counts say how often."""
    if checker is None:
        from ...checks.memory.assumptions import CHECKS as MEMORY
        from ...checks.vanilla.assumptions import CHECKS as VANILLA
        checker = (VANILLA if aid in ("3.1", "3.2", "3.5") else MEMORY)[aid]
    oracle = oracle or ORACLES[aid]
    if instances is None:
        rng = np.random.default_rng(seed)
        instances = [FAMILIES[aid][1](rng, aid) for _ in range(count)]
    counts = {"instances": len(instances), "holding": 0, "failing": 0}
    for k, inst in enumerate(instances):
        want, got = bool(oracle(inst)), bool(checker(inst)["holds"])
        if want != got:
            return False, (f"instance {k}: the checker says {'holds' if got else 'fails'}, the oracle "
                           f"{'holds' if want else 'fails'}"), counts
        counts["holding" if want else "failing"] += 1
    if not counts["holding"] or not counts["failing"]:
        return False, (f"vacuous: the assumption {'never held' if not counts['holding'] else 'never failed'} "
                       f"on the {len(instances)} instances, so agreement shows nothing"), counts
    return True, (f"checker agrees with the oracle on {counts['holding']} holding and {counts['failing']} "
                  f"failing instances"), counts
