"""Claims about the theorems' assumptions, each re-derived from its evidence.

- **3.2 / 4.4** (regularity) are recomputed from the support of ``A`` and ``pi0``: the support
  graph strongly connected, the gcd of its cycle lengths 1, ``pi0 > 0`` (4.4 also
  ``A pi0 = pi0``). The certificate's ``holds`` must equal the recomputed value.
- **3.1 holds**: a left inverse ``L`` with ``L W = I`` exactly. **3.1 fails**: a nonzero ``v``
  with ``W v = 0``.
- **3.5 holds**: ``B``, ``H*`` = the one-step reach of ``B`` (recomputed), ``supp(mu)`` inside
  ``H*``, ``H*`` nonempty (empty is vacuous) and ``L W[:, H*] = I`` exactly.
- **3.5 fails**: a state ``s`` of ``supp(mu)`` and, for every column ``h`` of ``A`` that reaches
  ``s``, a nonzero ``v`` on ``supp(A[:, h])`` with ``W v = 0``. Soundness: any ``B`` whose reach
  covers ``s`` contains such an ``h``, so ``H*`` contains ``supp(A[:, h])``, whose ``W``-columns
  are then dependent and no left inverse of ``W[:, H*]`` exists.
- **4.2 / 4.5 / C.5 hold**: ``H* = {j*} x S*`` inside the target cell, nonempty, the relevant
  columns ``W_(m,h)`` for ``h`` in ``H*`` independent (exact rank) and their span meeting the
  other relevant columns' span only in 0 (``rank(U + rest) = rank(U) + rank(rest)``).
- **4.2 / 4.5 / C.5 fail**: every syntax state ``s`` fails alone, with a nonzero null vector of
  its columns (``dependent``) or a nonzero ``w = U a = V c`` in both spans (``shared``).
  Soundness: for a nonempty ``S*`` containing ``s``, the columns of the other states of ``S*``
  move from ``V`` into ``U``; a dependence among ``s``'s columns stays one, and a common vector
  ``U a = V c`` either stays common or, where ``V c`` uses columns now in ``U``, becomes a
  dependence of ``U``. So no nonempty ``S*`` satisfies the assumption (with ``H*`` empty it
  holds only trivially, which is how the failing line is worded).
"""

from __future__ import annotations

import math

from .exact import left_inverse_ok, rank, scaled
from .fields import boolean, field, indices, known_keys, matrix, of_list, vector
from .outcomes import Rejected, Unreadable, Vacuous
from .theorems import THEOREMS
from .work import METER, digits, fraction_ops, matrix_work

__all__ = ["regularity", "assumption_names", "vanilla_assumptions", "assumption_state", "fails_text",
           "failing_text", "memory_assumptions", "nondegenerate", "degenerate"]


def regularity(support_cols, pi0) -> tuple[bool, str]:
    """Assumption 3.2 from the support of ``A`` (``support_cols[h]`` = states ``h`` moves to):
    strongly connected, aperiodic (gcd of cycle lengths 1), ``pi0 > 0``."""
    n = len(support_cols)

    def reach(adj):
        seen, stack = {0}, [0]
        while stack:
            h = stack.pop()
            for g in adj[h]:
                if g not in seen:
                    seen.add(g)
                    stack.append(g)
        return seen

    rev = [[] for _ in range(n)]
    for h, succ in enumerate(support_cols):
        for g in succ:
            rev[g].append(h)
    if len(reach(support_cols)) != n or len(reach(rev)) != n:
        return False, "the support graph of A is not strongly connected"
    level, order = {0: 0}, [0]
    for h in order:
        for g in support_cols[h]:
            if g not in level:
                level[g] = level[h] + 1
                order.append(g)
    period = 0
    for h, succ in enumerate(support_cols):
        for g in succ:
            period = math.gcd(period, level[h] + 1 - level[g])
    if period != 1:
        return False, f"the chain is periodic (period {period})"
    if any(p <= 0 for p in pi0):
        return False, "pi0 is not positive on every state"
    return True, "A is irreducible and aperiodic, pi0 > 0"


def assumption_names(block, theorem):
    """The theorem's assumptions present in ``block``; another theorem's is a false claim."""
    names = THEOREMS[theorem][1]
    if isinstance(block, dict):
        foreign = sorted(set(block) - set(names))
        if foreign:
            raise Rejected(f"assumptions: {foreign[0]} is not an assumption of Theorem {theorem} "
                           f"(its assumptions are {', '.join(names)})")
    known_keys(block, names, "assumptions")
    return [name for name in names if name in block]


def vanilla_assumptions(inst, block, theorem):
    """Re-derive each assumption of the theorem present in ``block`` from its evidence.
    Returns ``{name: holds}``."""
    names = assumption_names(block, theorem)
    out = {}
    for name in names:
        where = f"assumptions.{name}"
        entry = field(block, name, "assumptions")
        holds = boolean(field(entry, "holds", where), f"{where}.holds")
        if name == "3.2":
            known_keys(entry, ("holds", "why"), where)
            really, why = regularity(inst.support, inst.pi0)
            if really != holds:
                raise Rejected(f"{where}: Assumption 3.2 {'holds' if really else 'fails'} ({why}), not as claimed")
        elif name == "3.1":
            _assumption_31(inst, entry, holds, where)
        else:
            _assumption_35(inst, entry, holds, where)
        out[name] = holds
    return out


def _assumption_31(inst, entry, holds, where):
    if holds:
        known_keys(entry, ("holds", "left_inverse", "why"), where)
        matrix_work(inst.n, inst.n, inst.m, f"{where}: checking W† W = I")
        L = matrix(field(entry, "left_inverse", where), inst.n, inst.m, f"{where}.left_inverse")
        if not left_inverse_ok(L, inst.columns(range(inst.n))):
            raise Rejected(f"{where}: left_inverse W† does not satisfy W† W = I")
        inst.evidence["3.1"] = (list(range(inst.n)), L)
        return
    known_keys(entry, ("holds", "null_vector", "why"), where)
    v, _ = scaled(vector(field(entry, "null_vector", where), inst.n, f"{where}.null_vector"))
    if not any(v) or any(sum(w * a for w, a in zip(row, v)) for row in inst.Wint):
        raise Rejected(f"{where}: null_vector is not a nonzero v with W v = 0")


def _assumption_35(inst, entry, holds, where):
    supp_mu = {h for row in inst.mu for h in range(inst.n) if row[h]}
    if holds:
        known_keys(entry, ("holds", "B", "H_star", "left_inverse", "why"), where)
        B = indices(field(entry, "B", where), inst.n, f"{where}.B")
        H_star = indices(field(entry, "H_star", where), inst.n, f"{where}.H_star")
        reach = sorted({g for h in B for g in inst.support[h]})
        if reach != H_star:
            raise Rejected(f"{where}: H* is not the one-step reach of B (that is {reach[:20]})")
        if not H_star:
            raise Vacuous(f"{where}: H* is empty (mu = 0), so Assumption 3.5 holds only vacuously")
        if not supp_mu <= set(H_star):
            raise Rejected(f"{where}: supp(mu) is not inside H*")
        matrix_work(len(H_star), len(H_star), inst.m, f"{where}: checking L W[:, H*] = I")
        L = matrix(field(entry, "left_inverse", where), len(H_star), inst.m, f"{where}.left_inverse")
        if not left_inverse_ok(L, inst.columns(H_star)):
            raise Rejected(f"{where}: left_inverse does not satisfy L W[:, H*] = I")
        inst.evidence["3.5"] = (H_star, L, B)
        return
    known_keys(entry, ("holds", "state", "null_vectors", "why"), where)
    s = field(entry, "state", where)
    if isinstance(s, bool) or not isinstance(s, int) or s not in supp_mu:
        raise Rejected(f"{where}: state is not a state of supp(mu)")
    given = of_list(field(entry, "null_vectors", where), None, f"{where}.null_vectors")
    covered = set()
    for i, item in enumerate(given):
        w = f"{where}.null_vectors[{i}]"
        known_keys(item, ("column", "v"), w)
        h = field(item, "column", w)
        if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < inst.n or h in covered:
            raise Unreadable(f"{w}.column: expected a state not listed before")
        if s not in inst.support[h]:
            raise Rejected(f"{w}: column is not a state h with A[{s}][h] > 0")
        supp = inst.support[h]
        v, _ = scaled(vector(field(item, "v", w), len(supp), f"{w}.v"))
        if not any(v) or any(sum(row[g] * a for g, a in zip(supp, v)) for row in inst.Wint):
            raise Rejected(f"{w}: v is not a nonzero vector on supp(A[:, {h}]) with W v = 0")
        covered.add(h)
    missing = [h for h in range(inst.n) if s in inst.support[h] and h not in covered]
    if missing:
        raise Rejected(f"{where}: column {missing[0]} reaches state {s} but has no null vector")


def assumption_state(held, theorem, via=None):
    """``("3.1 holds, 3.2 not certified", every assumption holds)``; ``via`` maps an assumption
    to how it was shown where that was not the certificate's own entry."""
    names = THEOREMS[theorem][1]
    via = via or {}
    text = ", ".join((f"{n} holds{f' ({via[n]})' if n in via else ''}" if held[n] else fails_text(n, short=True))
                     if n in held else f"{n} not certified" for n in names)
    return text, all(held.get(n) is True for n in names)


_NONDEGENERACY = ("4.2", "4.5", "C.5")


def fails_text(name, short=False):
    """What a failing assumption means: a non-degeneracy assumption (4.2, 4.5, C.5) holds
    trivially with ``H*`` empty, so its certified failure is that no nonempty ``H*`` works."""
    if name in _NONDEGENERACY:
        return f"no nonempty H* = {{j*}} x S* satisfies {'' if short else 'Assumption '}{name}"
    return f"{name} fails" if short else f"Assumption {name} fails"


def failing_text(held):
    return "; ".join(fails_text(name) for name, h in held.items() if not h)


def memory_assumptions(inst, block, theorem):
    """Re-derive each assumption present; returns ``({name: holds}, H*)`` (``H*`` when
    non-degeneracy holds)."""
    names = assumption_names(block, theorem)
    out, H_star = {}, None
    for name in names:
        where = f"assumptions.{name}"
        entry = field(block, name, "assumptions")
        holds = boolean(field(entry, "holds", where), f"{where}.holds")
        if name in ("3.2", "4.4"):
            known_keys(entry, ("holds", "why"), where)
            really, why = regularity(inst.support, inst.pi0)
            if really and name == "4.4" and [sum(a * p for a, p in zip(row, inst.pi0)) for row in inst.A] != inst.pi0:
                really, why = False, "pi0 is not stationary (A pi0 != pi0)"
            if really != holds:
                raise Rejected(f"{where}: Assumption {name} {'holds' if really else 'fails'} ({why}), not as claimed")
        elif holds:
            known_keys(entry, ("holds", "H_star", "S_star", "why"), where)
            H_star = indices(field(entry, "H_star", where), inst.n, f"{where}.H_star")
            nondegenerate(inst, theorem, H_star, name, where)
        else:
            known_keys(entry, ("holds", "evidence", "why"), where)
            degenerate(inst, theorem, of_list(field(entry, "evidence", where), None, f"{where}.evidence"), name, where)
        out[name] = holds
    return out, H_star


def nondegenerate(inst, theorem, H_star, name, where):
    if any(inst.cell(h) != inst.j for h in H_star):
        raise Rejected(f"{where}: H* = {H_star[:20]} is not inside the target cell {inst.j}")
    if not H_star:
        raise Vacuous(f"{where}: H* is empty, so R is empty and the theorem holds only vacuously")
    if theorem != "4.3" and not any(inst.mu):
        raise Vacuous(f"{where}: mu = 0, so Assumption {name} holds only vacuously")
    U, rest = inst.relevant(theorem, [h - inst.j * inst.S for h in H_star])
    U, rest = [inst.column(v, h) for v, h in U], [inst.column(v, h) for v, h in rest]
    rU = rank(U)
    if rU != len(U):
        raise Rejected(f"{where}: Assumption {name}: the columns W_(m,h), h in H*, are not independent (rank {rU} of {len(U)})")
    if rest and rank(U + rest) != rU + rank(rest):        # no other columns: nothing to meet (no second rank)
        raise Rejected(f"{where}: Assumption {name}: the span of the H* columns meets the other columns' span")


def degenerate(inst, theorem, evidence, name, where):
    """Every syntax state ``s`` fails alone (dependent columns, or a common nonzero vector of the
    two spans), so no nonempty ``S*`` works (a failing state makes every ``S*`` with it fail)."""
    done = set()
    for i, item in enumerate(evidence):
        w = f"{where}.evidence[{i}]"
        s = field(item, "s", w)
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < inst.S or s in done:
            raise Unreadable(f"{w}.s: expected a syntax state not listed before")
        U, rest = inst.relevant(theorem, [s])
        kind = field(item, "kind", w)
        if kind == "dependent":
            known_keys(item, ("s", "kind", "columns", "null_vector", "what"), w)
            if [tuple(c) if isinstance(c, list) else c for c in of_list(field(item, "columns", w), None, w)] != U:
                raise Rejected(f"{w}: columns are not the columns of S* = {{{s}}}")
            v = vector(field(item, "null_vector", w), len(U), f"{w}.null_vector")
            METER.charge(fraction_ops(2 * inst.m * len(U), max(digits(a.denominator) for a in v) + 20), w)
            comb = [sum(a * inst.W[x][m][h] for a, (m, h) in zip(v, U)) for x in range(inst.m)]
            if not any(v) or any(comb):
                raise Rejected(f"{w}: null_vector is not a nonzero v with U v = 0")
        elif kind == "shared":
            known_keys(item, ("s", "kind", "U_columns", "a", "V_columns", "c", "w", "what"), w)
            if [tuple(c) if isinstance(c, list) else c for c in of_list(field(item, "U_columns", w), None, w)] != U:
                raise Rejected(f"{w}: U_columns are not the columns of S* = {{{s}}}")
            V = [tuple(c) if isinstance(c, list) else c for c in of_list(field(item, "V_columns", w), None, w)]
            if not set(V) <= set(rest):
                raise Rejected(f"{w}: V_columns are not among the other relevant columns")
            a = vector(field(item, "a", w), len(U), f"{w}.a")
            c = vector(field(item, "c", w), len(V), f"{w}.c")
            METER.charge(fraction_ops(2 * inst.m * (len(U) + len(V)), max(digits(k.denominator) for k in a + c) + 20), w)
            left = [sum(k * inst.W[x][m][h] for k, (m, h) in zip(a, U)) for x in range(inst.m)]
            right = [sum(k * inst.W[x][m][h] for k, (m, h) in zip(c, V)) for x in range(inst.m)]
            if left != right or not any(left):
                raise Rejected(f"{w}: U a = V c != 0 does not hold")
        else:
            raise Unreadable(f"{w}.kind: expected \"dependent\" or \"shared\"")
        done.add(s)
    if done != set(range(inst.S)):
        raise Rejected(f"{where}: syntax state {min(set(range(inst.S)) - done)} has no evidence")
