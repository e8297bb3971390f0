"""Instance generators: the paper's Appendix D recipe, exact rational random instances, and
structured instances that satisfy a chosen assumption.

Appendix D reading (the text is terse; documented in the README's notes): a transition column
mix is a convex combination of ``|H|`` random permutation matrices with weights
``softmax(U[0,1] logits / 0.01)``; ``pi0`` is ``softmax(U[0,1] logits / 10.0)``; each hidden
state's emission distribution (a column of ``W``) is ``softmax(U[0,1] logits / 0.01)`` over the
tokens. Exact versions round every column to a bounded denominator and re-normalise exactly,
keeping its support.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from ..hmm.values import HMM, MemoryHMM
from ..hmm.linalg import rank, solve
from ..hmm.rational import denominator_for, round_to_denominator
from ..hmm.rationalize import rationalize
# the task draws live in .tasks; exported here too, under the import path callers use
from .tasks import MIN_LABEL_SHARE, _task_text, class_share, draw_class_task, draw_task, task_with_tie

__all__ = ["softmax_temperature", "permutation_mixture", "appendix_d_hmm", "appendix_d_memory_hmm", "hidden_memory_hmm",
           "prompt_friendly_hmm", "full_rank_hmm", "task_with_tie", "with_stationary_start",
           "random_exact_hmm", "sparse_transitions", "stationary_distribution",
           "draw_task", "draw_class_task", "class_share", "MIN_LABEL_SHARE"]

def _round(probs: np.ndarray, max_denominator: int) -> np.ndarray:
    """``round_to_denominator`` along axis 0 with a denominator that scales with the vector
    length (:func:`models.rational.denominator_for`)."""
    probs = np.asarray(probs, dtype=float)
    return round_to_denominator(probs, denominator_for(probs.shape[0], max_denominator))


def softmax_temperature(size: int, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """``softmax(logits / temperature)`` with logits i.i.d. uniform on ``[0, 1]``."""
    z = rng.random(size) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def permutation_mixture(num_states: int, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """A convex combination of ``num_states`` random permutation matrices (doubly stochastic)."""
    weights = softmax_temperature(num_states, temperature, rng)
    out = np.zeros((num_states, num_states))
    for w in weights:
        out[rng.permutation(num_states), np.arange(num_states)] += w
    return out


def _check_sizes(**sizes: int) -> None:
    for name, v in sizes.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"{name}: expected a positive integer, found {v!r}")


def appendix_d_hmm(num_states: int, num_tokens: int = 10, *, rng: np.random.Generator,
                   exact: bool = False, max_denominator: int = 10**4) -> HMM:
    """A random HMM by the paper's Appendix D recipe (float, or exact when ``exact``)."""
    _check_sizes(num_states=num_states, num_tokens=num_tokens)
    A = permutation_mixture(num_states, 0.01, rng)
    pi0 = softmax_temperature(num_states, 10.0, rng)
    W = np.stack([softmax_temperature(num_tokens, 0.01, rng) for _ in range(num_states)], axis=1)
    hmm = HMM.create(A, W, pi0, exact=False)
    return rationalize(hmm, prune_below=0, max_denominator=max_denominator).model if exact else hmm


def appendix_d_memory_hmm(memory_values: int, syntax_states: int, num_tokens: int = 10, *,
                          rng: np.random.Generator, exact: bool = False,
                          max_denominator: int = 10**4) -> MemoryHMM:
    """A single-cell memory HMM by the Appendix D recipe: ``A`` a permutation mixture over the
    syntax states, each ``W[:, m, h]`` a temperature-0.01 softmax, ``pM`` and ``pi0``
    temperature-10 softmaxes."""
    _check_sizes(memory_values=memory_values, syntax_states=syntax_states, num_tokens=num_tokens)
    A = permutation_mixture(syntax_states, 0.01, rng)
    pi0 = softmax_temperature(syntax_states, 10.0, rng)
    pM = softmax_temperature(memory_values, 10.0, rng)
    W = np.stack([np.stack([softmax_temperature(num_tokens, 0.01, rng) for _ in range(syntax_states)], axis=1)
                  for _ in range(memory_values)], axis=1)              # [X, M, H]
    model = MemoryHMM.create(1, memory_values, syntax_states, A, W, pi0, pM, exact=False)
    return rationalize(model, prune_below=0, max_denominator=max_denominator).model if exact else model


def random_exact_hmm(num_states: int, num_tokens: int, *, rng: np.random.Generator,
                     max_denominator: int = 1000, density: float = 1.0) -> HMM:
    """A random exact HMM: Dirichlet(1) columns, each entry kept with probability ``density``
    (at least one per column), rounded to ``max_denominator`` and re-normalised exactly."""
    _check_sizes(num_states=num_states, num_tokens=num_tokens)

    def columns(rows: int, cols: int) -> np.ndarray:
        out = rng.dirichlet(np.ones(rows), size=cols).T
        mask = rng.random(out.shape) < density
        mask[rng.integers(rows, size=cols), np.arange(cols)] = True
        out = np.where(mask, out + 1e-3, 0.0)
        return out / out.sum(axis=0)

    return HMM(_round(columns(num_states, num_states), max_denominator),
               _round(columns(num_tokens, num_states), max_denominator),
               _round(rng.dirichlet(np.ones(num_states)), max_denominator))


def sparse_transitions(num_states: int, support_size: int, *, rng: np.random.Generator,
                       max_denominator: int = 1000) -> np.ndarray:
    """An exact column-stochastic ``A`` whose columns have ``support_size`` nonzeros, always
    including a random cycle through all states and a self-loop at state 0, so the chain is
    irreducible and aperiodic (ergodic, Assumption 3.2)."""
    _check_sizes(num_states=num_states, support_size=support_size)
    if support_size > num_states:
        raise InputError(f"support_size {support_size} exceeds num_states {num_states}")
    order = rng.permutation(num_states)
    nxt = np.empty(num_states, dtype=int)
    nxt[order] = np.roll(order, -1)
    A = np.zeros((num_states, num_states))
    for h in range(num_states):
        support = {int(nxt[h])} | ({0} if h == 0 else set())
        others = [g for g in rng.permutation(num_states) if g not in support]
        support |= set(int(g) for g in others[:max(0, support_size - len(support))])
        w = rng.dirichlet(np.ones(len(support)))
        A[sorted(support), h] = w
    return _round(A, max_denominator)


def stationary_distribution(A) -> np.ndarray:
    """The exact stationary distribution ``p = A p``, ``sum p = 1`` of an irreducible exact
    column-stochastic ``A``.

    Raises:
        InputError: when the stationary distribution is not unique (A not irreducible).
    """
    n = len(A)
    M = np.array(A, dtype=object) - np.eye(n, dtype=int).astype(object)
    aug = np.concatenate([M, np.ones((1, n), dtype=int).astype(object)], axis=0)   # (n+1, n)
    if rank(aug) < n:
        raise InputError("stationary distribution: not unique (the chain is not irreducible)")
    rhs = np.array([0] * n + [1], dtype=object)
    # the normal equations of the consistent system aug p = rhs have the unique solution p
    return solve(aug.T.dot(aug), aug.T.dot(rhs))


def _rational_columns(matrix: np.ndarray, max_denominator: int) -> np.ndarray:
    return _round(matrix / matrix.sum(axis=0, keepdims=True), max_denominator)


def _vanilla_task(hmm: HMM, support, *, rng: np.random.Generator, length: int = 8, screen: int = 400,
                  classes: int | None = None):
    """:func:`draw_task` (or :func:`draw_class_task` with ``classes``) for a vanilla HMM:
    ``F*`` reads ``P[H_0 | X = x]``."""
    from ..inference.exact import posterior_h0
    from ..inference.floats import posterior_h0 as float_posterior_h0
    from .sampling import sample

    f = hmm.to_float()
    tokens, _ = sample(f, screen, length, rng=rng)
    candidates = [tuple(int(z) for z in row[:2]) for row in tokens[:40]] + [tuple(int(z) for z in row) for row in tokens[:8]]
    if classes is not None:
        return draw_class_task(hmm.num_states, support, classes, rng=rng,
                               exact_posterior=lambda x: posterior_h0(hmm, x),
                               float_posteriors=lambda t: float_posterior_h0(f, t), tie_candidates=candidates,
                               screen=tokens)
    return draw_task(hmm.num_states, support, rng=rng, exact_posterior=lambda x: posterior_h0(hmm, x),
                     float_posteriors=lambda t: float_posterior_h0(f, t), tie_candidates=candidates,
                     screen=tokens)


def prompt_friendly_hmm(num_states: int, num_tokens: int = 10, *, rng: np.random.Generator,
                        essential_size: int | None = None, column_support: int = 3,
                        max_denominator: int = 100, classes: int | None = None) -> tuple[HMM, dict]:
    """An exact HMM satisfying Assumptions 3.2 and 3.5 by construction (Theorem 3.6).

    Recipe: a random cycle through all states plus a self-loop makes ``A`` irreducible and
    aperiodic; two columns ``B = {b1, b2}`` have supports exactly covering an essential set
    ``H*`` of ``essential_size`` states (default ``min(|X| // 2, |H|)``); every other column has
    ``column_support`` nonzeros; ``W`` has positive random columns, redrawn until
    ``W[:, H*]`` has exact full column rank; ``pi0`` has full support; ``mu`` is supported on
    ``H*`` with an exact tie (see :func:`task_with_tie`) on a length-2 sequence; with
    ``classes = k`` it has ``k`` rows (:func:`draw_class_task`).

    Returns:
        ``(hmm, info)`` where ``info`` records ``H_star``, ``B`` and the tie sequence.
    """
    _check_sizes(num_states=num_states, num_tokens=num_tokens)
    if num_states < 3:
        raise InputError(f"num_states {num_states}: Theorem 3.6 instances need at least 3 hidden states")
    k = essential_size or max(2, min(num_tokens // 2, num_states - 1))
    if k > num_tokens:
        raise InputError(f"essential set of {k} states cannot have independent columns in W with "
                         f"only {num_tokens} tokens")
    order = rng.permutation(num_states)
    nxt = np.empty(num_states, dtype=int)
    nxt[order] = np.roll(order, -1)
    B = [int(order[0]), int(order[1])]
    H_star = {int(nxt[b]) for b in B}
    others = [int(h) for h in rng.permutation(num_states) if h not in H_star]
    H_star |= set(others[: max(0, k - len(H_star))])
    rest = sorted(H_star - {int(nxt[b]) for b in B})
    A = np.zeros((num_states, num_states))
    for i, b in enumerate(B):            # split the remaining essential states between b1, b2
        A[[int(nxt[b])] + rest[i::2], b] = rng.dirichlet(np.ones(1 + len(rest[i::2])))
    loop = next(h for h in order if h not in B)
    for h in range(num_states):
        if h in B:
            continue
        support = {int(nxt[h])} | ({h} if h == loop else set())
        need, extra = max(0, column_support - len(support)), []
        for g in rng.permutation(num_states).tolist():        # the first `need` states not in support
            if len(extra) >= need:
                break
            if g not in support:
                extra.append(g)
        support |= set(extra)
        A[sorted(support), h] = rng.dirichlet(np.ones(len(support)))
    A = _round(A, max_denominator)
    H_sorted = sorted(H_star)
    for _ in range(100):
        W = _rational_columns(rng.random((num_tokens, num_states)) + 0.05, max_denominator)
        if rank(W[:, H_sorted]) == len(H_sorted):
            break
    else:  # pragma: no cover - probability zero
        raise InputError("could not draw emission columns with independent essential columns")
    pi0 = _round(rng.dirichlet(np.ones(num_states)) + 0.01, max_denominator)
    hmm = HMM(A, W, pi0)
    mu, facts = _vanilla_task(hmm, H_sorted, rng=rng, classes=classes)
    return hmm.with_task(mu), {"H_star": H_sorted, "B": sorted(B), **facts,
                               "recipe": "cycle + self-loop transitions, B's columns cover H*, "
                                         "positive W with independent H* columns, " + _task_text(facts)}


def full_rank_hmm(num_states: int, num_tokens: int = 10, *, rng: np.random.Generator,
                  max_denominator: int = 100, classes: int | None = None) -> tuple[HMM, dict]:
    """An exact HMM satisfying Assumptions 3.1 and 3.2 when ``|H| <= |X|`` (Theorem 3.3): dense
    positive ``A`` (ergodic), positive ``W`` redrawn until exactly full column rank, full-support
    ``pi0``, and ``mu`` over all states with an exact tie on a length-2 sequence. When
    ``|H| > |X|`` no such instance exists; then ``W`` is positive with rank ``|X|``."""
    _check_sizes(num_states=num_states, num_tokens=num_tokens)
    A = _rational_columns(rng.random((num_states, num_states)) + 0.05, max_denominator)
    for _ in range(100):
        W = _rational_columns(rng.random((num_tokens, num_states)) + 0.05, max_denominator)
        if rank(W) == min(num_states, num_tokens):
            break
    pi0 = _round(rng.dirichlet(np.ones(num_states)) + 0.01, max_denominator)
    hmm = HMM(A, W, pi0)
    mu, facts = _vanilla_task(hmm, range(num_states), rng=rng, classes=classes)
    return hmm.with_task(mu), {**facts,
                               "recipe": "dense positive A and W (W of full column rank when |H| <= |X|), "
                                         + _task_text(facts)}


def with_stationary_start(hmm: HMM) -> HMM:
    """The same exact HMM with ``pi0`` replaced by the stationary distribution of ``A``
    (``P[H_0] = A P[H_0]``, Assumption 4.4's stationarity).

    Raises:
        InputError: when ``A`` is not irreducible (no unique stationary distribution).
    """
    return HMM(hmm.A, hmm.W, stationary_distribution(hmm.A), hmm.mu)


def hidden_memory_hmm(memory_values: int, syntax_states: int = 4, num_tokens: int = 10, *,
                      rng: np.random.Generator, visit: float = 0.5, mixing: float = 0.02,
                      exact: bool = False, max_denominator: int = 10**4) -> MemoryHMM:
    """A single-cell memory HMM whose tokens alone hardly reveal the memory (Figure 3 right's
    variant, issue 18): the memory shows only in the emissions of one rarely visited syntax
    state ``0``, whose tokens look like those of state ``1``; only the order of the tokens says
    which positions were state ``0``.

    The syntax chain (``A[i, j] = P[H_{t+1} = i | H_t = j]``) is the cycle ``1 -> 2 -> .. ->
    S-1``, then ``S-1 -> 0`` with probability ``visit`` (else ``S-1 -> 1``) and ``0 -> 1``,
    mixed with the uniform chain by ``mixing`` (so it is ergodic, Assumption 3.2); ``pi0`` its
    (float) stationary distribution, ``pM`` a temperature-10 softmax. Tokens are split into
    ``S - 1`` blocks; state ``h >= 1`` emits on block ``h`` only (shared by every memory value,
    a temperature-1 softmax); ``W[:, m, 0]`` puts most of its mass on block ``1`` (random
    logits per ``m``) and a little on every token, so the columns ``W[:, m, 0]`` are
    independent and meet the span of the shared columns only in 0 (Assumption 4.2 with
    ``H* = {0}``, generically; check the drawn instance with ``verify assumptions 4.3``).

    Shapes: ``W`` ``[X, M, S]``, ``A`` ``[S, S]``. Raises ``InputError`` for sizes below 1,
    fewer than 3 syntax states, ``M + S - 1 > X`` (then 4.2 cannot hold), or ``visit`` /
    ``mixing`` outside ``(0, 1)``.
    """
    _check_sizes(memory_values=memory_values, syntax_states=syntax_states, num_tokens=num_tokens)
    if syntax_states < 3:
        raise InputError(f"syntax_states: expected at least 3, found {syntax_states}")
    if memory_values + syntax_states - 1 > num_tokens:
        raise InputError(f"memory_values + syntax_states - 1 = {memory_values + syntax_states - 1} exceeds "
                         f"num_tokens {num_tokens}: the columns W[:, m, 0] cannot be independent of the rest")
    for name, v in (("visit", visit), ("mixing", mixing)):
        if not 0 < v < 1:
            raise InputError(f"{name}: expected a number in (0, 1), found {v!r}")
    S, X, M = syntax_states, num_tokens, memory_values
    B = np.zeros((S, S))
    B[1, 0] = 1.0
    for h in range(1, S - 1):
        B[h + 1, h] = 1.0
    B[0, S - 1], B[1, S - 1] = visit, 1 - visit
    A = (1 - mixing) * B + mixing / S
    vals, vecs = np.linalg.eig(A)
    pi0 = np.abs(np.real(vecs[:, np.argmin(np.abs(vals - 1))]))
    pi0 /= pi0.sum()
    blocks = np.array_split(np.arange(X), S - 1)
    W = np.zeros((X, M, S))
    for h in range(1, S):
        W[blocks[h - 1], :, h] = softmax_temperature(len(blocks[h - 1]), 1.0, rng)[:, None]
    for m in range(M):
        logits = np.full(X, -3.0) + 0.5 * rng.standard_normal(X)
        logits[blocks[0]] = 2.0 * rng.standard_normal(len(blocks[0]))
        w = np.exp(logits - logits.max())
        W[:, m, 0] = w / w.sum()
    pM = softmax_temperature(M, 10.0, rng)
    model = MemoryHMM.create(1, M, S, A, W, pi0, pM, exact=False)
    return rationalize(model, prune_below=0, max_denominator=max_denominator).model if exact else model
