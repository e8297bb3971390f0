"""Generated memory-augmented HMM instances for Theorems 4.3, 4.6 and C.6 (their assumptions
hold by construction, with a task that is never vacuous by default), and the degenerate
variants ``verify counterexample`` uses.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..inference import exact as ie
from ..inference import floats as iff
from ..exceptions import InputError
from .generators import stationary_distribution
from .tasks import _task_text, draw_class_task, draw_task
from ..hmm.linalg import rank as exact_rank
from ..hmm.values import MemoryHMM
from .sampling import sample

__all__ = ["generate_instance", "break_nondegeneracy"]


def _stochastic(rng: np.random.Generator, size: int, lo: int = 1, hi: int = 9) -> list[Fraction]:
    w = [int(v) for v in rng.integers(lo, hi + 1, size=size)]
    return [Fraction(v, sum(w)) for v in w]


def generate_instance(theorem_id: str, memory: int, cells: int, syntax: int, vocab: int, *,
                      rng: np.random.Generator, classes: int | None = None) -> tuple[MemoryHMM, dict]:
    """An exact memory HMM satisfying the theorem's assumptions by construction, with ``R``
    nonempty on a good share of sampled sequences.

    Recipe (``H* = {j*} x {0}``, ``M'`` = all values for 4.3, a random ``M* = supp(mu)`` of
    ``|M| - 1`` values for 4.6/C.6, all of ``M`` when ``|M| <= 2``): tokens split into a recoverable block ``T*`` of
    ``|M'| + 1`` tokens (``|M'|`` when the vocabulary is tight), a trigger token and filler
    tokens. ``W_(m, (j*, 0))``, ``m in M'``, are random positive on ``T*``; a trigger state
    ``h_t`` (``(j*, 1)``, or a state of another cell) emits the trigger token (only it does) and
    moves to ``(j*, 0)`` surely, so ``x_{i-1} = trigger`` puts ``i`` in ``Z``; every other column
    is ``eps w0 + (1 - eps) r`` with one fixed direction ``w0`` on ``T*`` and random ``r`` on the
    fillers, so the spans meet only in 0 by an exact rank condition (checked). For 4.6/C.6 the
    columns ``W_(m, (j*, 0))``, ``m not in M*``, are random over all tokens (so Assumption 4.2
    typically fails while 4.5/C.5 hold) and ``P[H_0]`` is the exact stationary distribution.
    ``A`` has a cycle through all states plus a self-loop (ergodic); ``mu`` on ``M'`` is drawn by
    :func:`~.tasks.draw_task`: both labels on at least 10% of the screened sequences in
    ``R`` and an exact tie on a sequence in ``R``, both checked (the returned facts say so, or
    say why the sizes make it impossible). With ``classes = k`` ``mu`` has ``k`` rows on ``M'``
    (:func:`~.tasks.draw_class_task`: every class on a real share of those sequences).

    Raises:
        InputError: sizes that cannot satisfy the assumptions (naming the limit).
    """
    M, N, S, X = memory, cells, syntax, vocab
    prompt = theorem_id != "4.3"
    if theorem_id == "4.6" and N != 1:
        raise InputError(f"--cells {N}: Theorem 4.6 is about one memory cell (use C.6 for several)")
    j_star = int(rng.integers(N))
    n = N * S
    h_star = j_star * S
    # M* = supp(mu): |M| - 1 values (so that 4.2 may fail while 4.5/C.5 hold), all of M when
    # |M| = 2 (one value would leave F* a single label: a vacuous task)
    size = M if M <= 2 else M - 1
    M_rec = list(range(M)) if not prompt else sorted(int(m) for m in rng.choice(M, size=size, replace=False))
    k = len(M_rec)
    if X < k + 2 and n > 1:
        raise InputError(f"--vocab {X}: recoverable columns for {k} memory values need at least {k + 2} tokens "
                         "(k independent columns, a trigger and a filler token); raise --vocab or lower --memory")
    if X < k:
        raise InputError(f"--vocab {X}: {k} independent recoverable columns need at least {k} tokens; "
                         "raise --vocab or lower --memory")
    leak = X >= k + 3
    T_star = list(range(k + 1 if leak else k))
    trigger = len(T_star)
    fillers = list(range(trigger + 1, X))
    h_t = None
    if n > 1:
        h_t = j_star * S + 1 if S >= 2 else ((j_star + 1) % N) * S
    # transitions: a cycle through all states with h_t -> h_star, a self-loop off h_t
    order = [h for h in rng.permutation(n).tolist() if h not in (h_t, h_star)]
    cycle = ([h_t, h_star] if h_t is not None else [h_star]) + order
    nxt = {cycle[i]: cycle[(i + 1) % len(cycle)] for i in range(len(cycle))}
    loop = next((h for h in cycle if h != h_t), h_star)
    A = np.full((n, n), Fraction(0), dtype=object)
    for h in range(n):
        if h == h_t:
            A[h_star, h] = Fraction(1)
            continue
        support = {nxt[h]} | ({h} if h == loop else set())
        extra = [g for g in rng.permutation(n).tolist() if g not in support]
        support |= set(extra[:max(0, 2 - len(support) + 1)])
        for g, p in zip(sorted(support), _stochastic(rng, len(support))):
            A[g, h] = p
    w0 = _stochastic(rng, len(T_star))
    for attempt in range(50):
        W = np.full((X, M, n), Fraction(0), dtype=object)
        for m in range(M):
            for h in range(n):
                if h == h_star and m in M_rec:
                    col = dict(zip(T_star, _stochastic(rng, len(T_star))))
                elif h == h_star:                          # m outside M*: anything but the trigger
                    others = [z for z in range(X) if z != trigger] if n > 1 else list(range(X))
                    col = dict(zip(others, _stochastic(rng, len(others))))
                else:
                    eps = Fraction(int(rng.integers(1, 4)), 20) if leak else Fraction(0)
                    p_trig = Fraction(int(rng.integers(3, 8)), 10) if h == h_t else Fraction(0)
                    r = _stochastic(rng, len(fillers)) if fillers else []
                    col = {z: eps * w for z, w in zip(T_star, w0)}
                    rest = 1 - eps - p_trig
                    if not fillers:
                        p_trig += rest
                        rest = Fraction(0)
                    for z, p in zip(fillers, r):
                        col[z] = col.get(z, Fraction(0)) + rest * p
                    if p_trig:
                        col[trigger] = p_trig
                for z, p in col.items():
                    W[z, m, h] += p
        if _nondegenerate(W, M_rec, h_star, j_star, S, N, prompt):
            break
    else:  # pragma: no cover - probability zero
        raise InputError("could not draw emission columns satisfying the non-degeneracy assumption")
    pM = _stochastic(rng, M ** N)
    pi0 = np.array(_stochastic(rng, n), dtype=object)
    if prompt:
        pi0 = stationary_distribution(A)
    model = MemoryHMM(N, M, S, A, W, pi0, np.array(pM, dtype=object), None, j_star)
    mu, facts = _memory_task(model, M_rec, trigger if h_t is not None else None, rng=rng, classes=classes)
    model = MemoryHMM(N, M, S, A, W, pi0, model.pM, mu, j_star)
    what = ("Assumptions 3.2 and 4.2" if not prompt else f"Assumptions 4.4 and {'4.5' if theorem_id == '4.6' else 'C.5'}")
    return model, {"recipe": f"generated to satisfy {what}: H* = {{{j_star}}} x {{0}}, trigger token {trigger} "
                             f"(state {h_t}) moves to H* surely, recoverable block T* = {T_star}, filler tokens "
                             f"{fillers}, shared leak direction on T*, ergodic A" +
                             (", stationary P[H_0]" if prompt else "") + f", supp(mu) = {M_rec}; " + _task_text(facts),
                   **facts, "trigger": trigger, "target_cell": j_star}


def _nondegenerate(W, M_rec, h_star, j_star, S, N, prompt) -> bool:
    """Assumption 4.2 (C.5 with ``m in M_rec`` when ``prompt``) for ``S* = {0}``, by exact
    ranks: the recoverable columns are independent and their span meets the others' only in 0
    (the reports re-check the assumption independently)."""
    X, M, n = W.shape
    U = [W[:, m, h_star] for m in M_rec]
    rest = [W[:, m, h] for h in range(n) if h != h_star
            for m in (M_rec if prompt and h // S == j_star else range(M))]
    cols = lambda vs: np.stack(vs, axis=1) if vs else np.empty((X, 0), dtype=object)   # noqa: E731
    rU = exact_rank(cols(U))
    return rU == len(U) and exact_rank(cols(U + rest)) == rU + exact_rank(cols(rest))


def _memory_task(model: MemoryHMM, M_rec, trigger, *, rng, length: int = 8, screen: int = 400,
                 classes: int | None = None):
    """:func:`~.tasks.draw_task` for a memory HMM: ``F*`` reads ``P[M_j* | X = x]``; the
    screened sequences are those in ``R`` by construction (a trigger before the last position,
    so the next position is in ``Z``; every sequence when there is one hidden state)."""
    f = model.to_float()
    tokens, _, _ = sample(f, screen, length, rng=rng)
    if trigger is not None:
        tokens = tokens[(tokens[:, :-1] == trigger).any(axis=1)]
    candidates = []                        # short sequences in R: up to the token after a trigger
    for row in tokens[:60]:
        end = 2 if trigger is None else int(np.argmax(row[:-1] == trigger)) + 2
        candidates.append(tuple(int(z) for z in row[:end]))
    candidates = sorted(dict.fromkeys(candidates), key=len)
    if classes is not None:
        return draw_class_task(model.memory_values, M_rec, classes, rng=rng,
                               exact_posterior=lambda x: ie.memory_posterior(model, x),
                               float_posteriors=lambda t: iff.memory_posterior(f, t),
                               tie_candidates=candidates, screen=tokens)
    return draw_task(model.memory_values, M_rec, rng=rng,
                     exact_posterior=lambda x: ie.memory_posterior(model, x),
                     float_posteriors=lambda t: iff.memory_posterior(f, t),
                     tie_candidates=candidates, screen=tokens)


def break_nondegeneracy(model: MemoryHMM, prompt: bool) -> tuple[MemoryHMM, str]:
    """The same instance with the target cell's columns made degenerate, so that every syntax
    state fails non-degeneracy alone (hence no ``S*`` exists).

    Raises:
        InputError: when the sizes leave nothing to break (one column in all).
    """
    W = model.W.copy()
    S, j = model.syntax_states, model.target_cell
    rows = np.atleast_2d(model.mu)              # k classes: supp(mu) is the union of the rows'
    M_rec = [m for m in range(model.memory_values) if not prompt or any(r[m] != 0 for r in rows)]
    if len(M_rec) >= 2:
        for s in range(S):
            W[:, M_rec[1], j * S + s] = W[:, M_rec[0], j * S + s]
        how = f"W_(m={M_rec[1]}, h) := W_(m={M_rec[0]}, h) for every h in the target cell (dependent columns)"
    elif S >= 2:
        m = M_rec[0]
        for s in range(S):
            W[:, m, j * S + s] = W[:, m, j * S + (s + 1) % S] if s == 0 else W[:, m, j * S]
        how = "every syntax state of the target cell emits the same column (shared spans)"
    elif model.cells >= 2:
        m = M_rec[0]
        W[:, m, j * S] = W[:, 0, ((j + 1) % model.cells) * S]
        how = "the target cell's column equals a column of another cell (shared span)"
    else:
        raise InputError("a single emission column is always non-degenerate; use more memory values or states")
    return MemoryHMM(model.cells, model.memory_values, model.syntax_states, model.A, W, model.pi0, model.pM,
                     model.mu, model.target_cell, model.pM_cells), how


