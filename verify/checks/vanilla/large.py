"""Assumptions and witnesses of Theorems 3.3 and 3.6 on large exact HMMs, each with a proof.

- 3.1 (``rank W = |H|``): impossible when ``|H| > |X|``; otherwise the columns of ``W`` split
  into blocks with disjoint supports (:func:`column_blocks`) and each block's integer
  numerators have full column rank modulo a prime (a proof over Q), else its exact integer rank.
- 3.2: strongly connected components of the support graph of ``A`` in one pass (Tarjan/Pearce,
  ``scipy.sparse.csgraph``), the period from one breadth-first search (the gcd over edges
  ``h -> g`` of ``level(h) + 1 - level(g)``), and ``pi0 > 0``.
- 3.5: a basis set ``B`` (the generator's, a saved hint, or a greedy cover of ``supp(mu)``),
  verified: ``H*`` is the union of ``supp(A[:, b])``, ``W[:, H*]`` has independent columns (as
  for 3.1) and ``supp(mu) ⊆ H*``. A failure is proven only when some state of ``supp(mu)`` has no
  admissible predecessor; otherwise an unsuccessful greedy search is refused as undecided.
- Witnesses: ``b = coeff^T W_S^+`` with ``W_S`` the columns ``S`` (``H*``, or all states for 3.3)
  computed block by block: ``b = N z`` with ``N`` the integer numerators and
  ``(N^T N) z = diag(den) coeff`` solved exactly (``W_S^+ = (W_S^T W_S)^{-1} W_S^T``).
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
from scipy import sparse

from ....models.exceptions import LimitError
from ....models.hmm.large import LargeHMM, exact_matvec, exact_rmatvec
from ....models.hmm.linalg import column_blocks, integer_columns_independent

__all__ = ["check_31_large", "check_32_large", "check_35_large", "independent_states", "head_for",
           "MAX_BLOCK_COLUMNS", "MAX_GREEDY"]

MAX_BLOCK_COLUMNS = 1500
"""Columns of one block of ``W`` whose independence or pseudo-inverse is computed exactly (a dense
fitted ``W`` is one block of every column: at 1,500 columns and 2,000 tokens the exact head takes
about 3.5 minutes and 1.3 GB, ``benchmarks/results/scale/unseen.md``)."""

MAX_GREEDY = 16384
"""States of ``supp(mu)`` the greedy basis-set search covers (each step checks only the blocks of
``W`` that the new columns join, so the search is linear in the blocks it touches)."""


def _column_rows(model: LargeHMM, states) -> list[np.ndarray]:
    W = model.W
    return [W.indices[W.indptr[h]:W.indptr[h + 1]] for h in states]


def independent_states(model: LargeHMM, states) -> tuple[bool, int]:
    """Whether ``W[:, states]`` has linearly independent columns (proven, block by block), and
    the number of blocks. Raises LimitError for a block too large to decide."""
    states = [int(h) for h in states]
    blocks = column_blocks(_column_rows(model, states))
    W = model.W
    for cols, rows in blocks:
        if len(cols) > len(rows):
            return False, len(blocks)
        if len(cols) > MAX_BLOCK_COLUMNS:
            raise LimitError(f"W has {len(cols)} columns linked through shared tokens (a dense W, as a fitted model's "
                             f"usually is); above 1,000 states the exact ranks and the witness are computed per group of "
                             f"linked columns, at most {MAX_BLOCK_COLUMNS} (block-sparse emissions), so this check is "
                             "refused (a W with |H| > |X| fails Assumption 3.1 by counting)")
        where = {r: i for i, r in enumerate(rows)}
        columns = []
        for c in cols:
            h = states[c]
            col = [0] * len(rows)
            for r, v in zip(W.indices[W.indptr[h]:W.indptr[h + 1]].tolist(), W.data[W.indptr[h]:W.indptr[h + 1]].tolist()):
                col[where[r]] = v
            columns.append(col)
        if not integer_columns_independent(columns, len(rows)):
            return False, len(blocks)
    return True, len(blocks)


def check_31_large(model: LargeHMM) -> dict:
    """Assumption 3.1: ``rank W = |H|``, proven block by block."""
    n, X = model.num_states, model.num_tokens
    if n > X:
        return {"holds": False, "why": f"rank W <= |X| = {X} < |H| = {n} (|H| > |X|: impossible with this "
                                       "vocabulary)"}
    ok, blocks = independent_states(model, range(n))
    if ok:
        return {"holds": True, "why": f"rank W = {n} = |H|: W splits into {blocks} blocks of disjoint support, each "
                                      "of full column rank modulo the prime 2^61 - 1 (or exactly), so over Q"}
    return {"holds": False, "why": f"rank W < |H| = {n}: a block of W has linearly dependent columns (exact rank)"}


def check_32_large(model: LargeHMM) -> dict:
    """Assumption 3.2 in one pass over the support graph (:func:`.assumptions.ergodicity`)."""
    from .assumptions import ergodicity

    n = model.num_states
    graph = sparse.csr_array((np.ones(model.A.nnz, dtype=np.int8), model.A.indices, model.A.indptr),
                             shape=(n, n))       # row h lists supp(A[:, h]): edges h -> g
    return ergodicity(graph, [h for h, v in enumerate(model.pi0.tolist()) if v == 0][:20])


def _reach(model: LargeHMM, B) -> list[int]:
    sup = set()
    for b in B:
        sup.update(model.A.indices[model.A.indptr[b]:model.A.indptr[b + 1]].tolist())
    return sorted(sup)


def check_35_large(model: LargeHMM, hint=None) -> dict:
    """Assumption 3.5 with a verified pair ``(B, H*)``: the hint (generator, saved meta) when it
    passes, else a greedy cover of ``supp(mu)`` by admissible columns (module docstring)."""
    target = [h for h, v in enumerate(model.mu.tolist()) if v != 0]
    if not target:
        return {"holds": True, "H_star": [], "B": [], "why": "mu = 0: Assumption 3.5 holds vacuously with B = H* = []"}
    in_target = set(target)

    def verified(B, how):
        H_star = _reach(model, B)
        if in_target <= set(H_star) and independent_states(model, H_star)[0]:
            return {"holds": True, "H_star": H_star, "B": sorted(set(B)),
                    "why": f"H* ({len(H_star)} states) is the one-step reach of B = {sorted(set(B))} ({how}), "
                           "W[:, H*] has independent columns (proven block by block: rank modulo the prime "
                           "2^61 - 1, or exact) and supp(mu) ⊆ H*"}
        return None

    if hint:
        found = verified([int(b) for b in hint], "the saved or generated basis set, verified here")
        if found:
            return found
    if len(target) > model.num_tokens:
        return {"holds": False, "blocking": target[:20],
                "why": f"supp(mu) has {len(target)} states but H* ⊇ supp(mu) needs independent W-columns, at most "
                       f"|X| = {model.num_tokens} of them: no B works (counting)"}
    try:                                   # H* ⊇ supp(mu): dependent W-columns on supp(mu) already refute
        own = independent_states(model, target)[0]
    except LimitError:
        own = True                         # undecided here; the searches below may still decide
    if not own:
        return {"holds": False, "blocking": target[:20],
                "why": "the columns W[:, supp(mu)] are linearly dependent (exact rank, block by block), and every "
                       "admissible H* contains supp(mu): no B works"}
    if len(target) > MAX_GREEDY:
        raise LimitError(f"supp(mu) has {len(target)} states; the basis-set search covers at most {MAX_GREEDY} "
                         "(give mu on fewer states)")
    preds = sparse.csr_array(model.A)                     # row g: the h with A[g, h] > 0
    sizes = np.diff(model.A.indptr)                       # |supp(A[:, h])|
    bound = min(model.num_tokens, model.num_states)       # an independent set of W-columns has <= |X| states
    greedy, covered, blocked = [], set(), None
    covered_at: dict[int, list[int]] = {}      # row of W -> the covered states using it

    def joined(sup) -> list[int]:
        """``sup`` with every covered state linked to it through shared rows of ``W``, transitively:
        the blocks of ``W[:, covered | sup]`` that hold a column of ``sup``. The others are blocks
        of ``covered`` alone, already proven independent, so these decide the union."""
        out, todo, seen = set(sup), [r for rows in _column_rows(model, sup) for r in rows.tolist()], set()
        while todo:
            r = todo.pop()
            if r in seen:
                continue
            seen.add(r)
            for h in covered_at.get(r, ()):
                if h not in out:
                    out.add(h)
                    todo.extend(_column_rows(model, [h])[0].tolist())
        return sorted(out)
    for s in target:
        if s in covered:
            continue
        # a column whose support has more than |X| states is inadmissible (counting alone proves it)
        cands = [h for h in preds.indices[preds.indptr[s]:preds.indptr[s + 1]].tolist() if sizes[h] <= bound]
        left = in_target - covered                 # most of supp(mu) newly covered, then fewest states added
        reach = {h: set(_reach(model, [h])) for h in cands}
        cands.sort(key=lambda h: (-len(reach[h] & left), len(reach[h] - covered), h))
        chosen = None
        for h in cands[:50]:
            sup = reach[h]
            if independent_states(model, sup)[0] and independent_states(model, joined(sup - covered))[0]:
                chosen = h
                break
        if chosen is None:
            if len(cands) <= 50 and not any(independent_states(model, sorted(reach[h]))[0] for h in cands):
                blocked = s                        # every column reaching s is inadmissible: proven
            break
        greedy.append(chosen)
        added = sorted(reach[chosen] - covered)
        for h, rows in zip(added, _column_rows(model, added)):
            for r in rows.tolist():
                covered_at.setdefault(r, []).append(h)
        covered |= reach[chosen]
    else:
        found = verified(greedy, "a greedy cover of supp(mu)")
        if found:
            return found
    if blocked is not None:
        return {"holds": False, "blocking": [blocked],
                "why": f"state {blocked} is in supp(mu) but every column of A that reaches it has a support whose "
                       f"W-columns are linearly dependent (more than |X| = {model.num_tokens} states, or a dependent "
                       "block; or no column reaches it), so no B can put it into an independent H*"}
    raise LimitError("Assumption 3.5 could not be decided at this size: the greedy basis-set search found no B "
                     "and the complete search is exponential; give a smaller instance, or save the instance with "
                     "meta.instance.B (a basis set to verify)")


def head_for(model: LargeHMM, states: list[int], coeff: dict[int, Fraction]) -> tuple[list[Fraction], list]:
    """``b`` with ``W_S^T b = coeff`` on ``S = states`` (``W_S^+`` of independent columns):
    ``(b as Fractions over the tokens, groups)``, computed per block of ``W_S`` and only for the
    blocks where ``coeff`` is nonzero (the others contribute 0). ``groups`` holds per block
    ``(token rows, integer numerators, denominator)``: the blocks' denominators differ, and one
    common denominator for all of ``b`` could have millions of digits."""
    W = model.W
    b = [Fraction(0)] * model.num_tokens
    groups = []
    for cols, rows in column_blocks(_column_rows(model, states)):
        block = [states[c] for c in cols]
        if all(coeff.get(h, 0) == 0 for h in block):
            continue
        sub = W[:, np.asarray(block, dtype=np.int64)][np.asarray(rows, dtype=np.int64)]   # rows x block, CSC
        N = flint.fmpz_mat(len(rows), len(block), [int(v) for v in sub.toarray().ravel().tolist()])
        scaled = [Fraction(coeff.get(h, 0)) * int(model.dW[h]) for h in block]
        rhs = flint.fmpq_mat(len(block), 1, [flint.fmpq(v.numerator, v.denominator) for v in scaled])
        # Dixon's p-adic lifting: the Gram matrix of a dense block of a fitted W has entries of 70
        # bits and the solution thousands of digits, where fraction-free elimination is slower
        z = flint.fmpq_mat(N.transpose() * N).solve(rhs, algorithm="dixon")
        bz = flint.fmpq_mat(N) * z
        # one denominator per block, and the reduced fractions as they are (flint keeps them
        # coprime): no gcd of numbers of thousands of digits in Python
        entries = [bz[i, 0] for i in range(len(rows))]
        d = flint.fmpz(1)
        for v in entries:
            d = d.lcm(v.q)
        groups.append((rows, [int(v.p * (d // v.q)) for v in entries], int(d)))
        for r, v in zip(rows, entries):
            b[r] = _coprime_fraction(int(v.p), int(v.q))
    return b, groups


def _coprime_fraction(p: int, q: int) -> Fraction:
    """``Fraction(p, q)`` for ``p, q`` already coprime (``q > 0``), without a gcd of numbers of
    thousands of digits where the running Python allows it (``_from_coprime_ints`` from 3.12,
    ``_normalize=False`` before); the public constructor otherwise."""
    make = getattr(Fraction, "_from_coprime_ints", None)
    if make is not None:
        return make(p, q)
    try:
        return Fraction(p, q, _normalize=False)
    except TypeError:                      # pragma: no cover - a Python with neither
        return Fraction(p, q)


def head_weights_large(model: LargeHMM, groups: list) -> list[Fraction]:
    """``W^T b`` exactly, one Fraction per hidden state, from the block groups of :func:`head_for`
    (each block's integer products over the nonzeros of its rows of ``W``, then one Fraction per
    column and block)."""
    W_rows = model.W.tocsr()
    out: list = [Fraction(0)] * model.num_states
    for rows, ints, d in groups:
        sub = W_rows[np.asarray(rows, dtype=np.int64)].tocsc()
        y, _ = exact_rmatvec(sub, model.dW, np.asarray(ints, dtype=object))
        for h in np.flatnonzero(np.diff(sub.indptr)).tolist():
            if y[h]:
                out[h] += Fraction(int(y[h]), int(model.dW[h]) * d)
    return out


def prompt_prior(model: LargeHMM, B: list[int]) -> list[Fraction]:
    """``c = A (u ⊙ P[H_1])`` with ``u = 1_B``, exactly."""
    p1, d1 = model.prior_h1()
    u = np.zeros(model.num_states, dtype=object)
    u[B] = p1[B]
    y, d = exact_matvec(model.A, model.dA, u)
    return [Fraction(int(v), d * d1) for v in y.tolist()]
