"""Independent oracles: brute-force sums over all hidden paths, in exact Fractions.

Nothing here uses message passing or the package's inference code; only the model value types
are read. Use on tiny instances (cost ``|H|^(t+1)`` per call). The one exception is
:func:`hmmlearn_marginals`: hmmlearn's own forward-backward, an independent library, for sizes
where path sums are out of reach.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def path_tau(A, pi0, embeddings, i):
    """``tau_i(v)[h]`` by the definition (SPEC section 1): a sum over hidden paths."""
    n, t = len(pi0), len(embeddings)
    out = [Fraction(0)] * n
    for path in itertools.product(range(n), repeat=t + 1):
        p = Fraction(pi0[path[0]])
        for j in range(1, t + 1):
            p *= A[path[j], path[j - 1]]
            if j - 1 != i:
                p *= embeddings[j - 1][path[j]]
            if p == 0:
                break
        out[path[i + 1]] += p
    return out


def path_gbar(A, W, pi0, embeddings, i):
    """``Gbar_i(v) = W tau_i / ||tau_i||_1`` from :func:`path_tau` (zero vector if the norm is 0)."""
    tau = path_tau(A, pi0, embeddings, i)
    total = sum(tau)
    if total == 0:
        return [Fraction(0)] * len(W)
    return [sum(W[x][h] * tau[h] for h in range(len(tau))) / total for x in range(len(W))]


def joint_probability(hmm, tokens, hidden_index=None):
    """``Pr(X = x)`` or the vector ``Pr(H_k = h, X = x)`` by path sums."""
    n = hmm.num_states
    vec = [Fraction(0)] * n
    total = Fraction(0)
    for path in itertools.product(range(n), repeat=len(tokens) + 1):
        p = Fraction(hmm.pi0[path[0]])
        for j, z in enumerate(tokens, start=1):
            p *= hmm.A[path[j], path[j - 1]] * hmm.W[z, path[j]]
            if p == 0:
                break
        total += p
        if hidden_index is not None:
            vec[path[hidden_index]] += p
    return total if hidden_index is None else vec


def path_posterior(hmm, tokens, k=0):
    """``P[H_k | X = x]`` by path sums (zero vector when ``Pr(X = x) = 0``)."""
    vec = joint_probability(hmm, tokens, k)
    total = sum(vec)
    return [v / total if total else Fraction(0) for v in vec]


def path_conditional(hmm, tokens, i):
    """``G_i(x) = P[X_i | X_{-i}]`` from joint probabilities: ``Pr(X_i = z, x_{-i}) / Pr(x_{-i})``."""
    joint = [joint_probability(hmm, tokens[:i] + [z] + tokens[i + 1:]) for z in range(hmm.num_tokens)]
    total = sum(joint)
    return [j / total if total else Fraction(0) for j in joint]


def memory_joint(mhmm, tokens):
    """``Pr(M = m, X = x)`` for every memory configuration (lexicographic), straight from the
    memory HMM's definition (paper Section 4), without the lifted chain."""
    n = mhmm.num_states
    out = []
    for c, ms in enumerate(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells)):
        total = Fraction(0)
        for path in itertools.product(range(n), repeat=len(tokens) + 1):
            p = Fraction(mhmm.pM[c]) * mhmm.pi0[path[0]]
            for j, z in enumerate(tokens, start=1):
                h = path[j]
                p *= mhmm.A[h, path[j - 1]] * mhmm.W[z, ms[h // mhmm.syntax_states], h]
                if p == 0:
                    break
            total += p
        out.append((ms, total))
    return out


def memory_posterior(mhmm, tokens, cell):
    """``P[M_cell | X = x]`` by sums over memories and hidden paths."""
    probs = [Fraction(0)] * mhmm.memory_values
    for ms, p in memory_joint(mhmm, tokens):
        probs[ms[cell]] += p
    total = sum(probs)
    return [p / total if total else Fraction(0) for p in probs]


def memory_conditional(mhmm, tokens, i):
    """``P[X_i | X_{-i}]`` of a memory HMM from joint probabilities."""
    joint = [sum(p for _, p in memory_joint(mhmm, tokens[:i] + [z] + tokens[i + 1:]))
             for z in range(mhmm.num_tokens)]
    total = sum(joint)
    return [j / total if total else Fraction(0) for j in joint]


def as_lists(arr):
    return np.asarray(arr, dtype=object).tolist()


# ---------------------------------------------------------------- assumptions by brute force

def sympy_rank(columns):
    """Rank of the matrix with the given columns (sympy, exact; independent of python-flint)."""
    import sympy

    if not columns:
        return 0
    return sympy.Matrix([[sympy.Rational(str(c[r])) for c in columns] for r in range(len(columns[0]))]).rank()


def is_ergodic_chain(A, pi0):
    """Assumption 3.2 by Wielandt's bound: the support of ``A`` is primitive (some power with
    exponent ``(n-1)^2 + 1`` is entrywise positive) and ``pi0 > 0``."""
    n = len(pi0)
    S = np.array([[1 if A[g][h] != 0 else 0 for h in range(n)] for g in range(n)], dtype=np.int64)
    P = np.eye(n, dtype=np.int64)
    for _ in range((n - 1) ** 2 + 1):
        P = np.minimum(P @ S, 1)
    return bool(P.min() > 0) and all(p > 0 for p in pi0)


def assumption_35(hmm):
    """Assumption 3.5 over every B: some reach H* of B covers supp(mu) with independent W columns."""
    n = hmm.num_states
    target = {h for h in range(n) if hmm.mu[h] != 0}
    for k in range(n + 1):
        for B in itertools.combinations(range(n), k):
            H = sorted({g for h in B for g in range(n) if hmm.A[g, h] != 0})
            if target <= set(H) and sympy_rank([list(hmm.W[:, h]) for h in H]) == len(H):
                return True
    return False


def memory_nondegenerate(mhmm, memory_subset=None):
    """Assumption 4.2 (``memory_subset=None``) or 4.5/C.5 (``memory_subset = supp(mu)``) over
    every ``S*``: the recoverable columns are independent and their span meets the span of
    the other relevant columns only in 0 (SPEC and the paper's Section 4 / C.3 reading)."""
    S, j, n = mhmm.syntax_states, mhmm.target_cell, mhmm.num_states
    M_all = list(range(mhmm.memory_values))
    M_rec = M_all if memory_subset is None else list(memory_subset)
    col = lambda m, h: list(mhmm.W[:, m, h])                        # noqa: E731
    for k in range(1, S + 1):
        for S_star in itertools.combinations(range(S), k):
            H = [j * S + s for s in S_star]
            U = [col(m, h) for h in H for m in M_rec]
            V = [col(m, h) for h in range(n) if h not in H
                 for m in (M_rec if h // S == j else M_all)]
            if sympy_rank(U) == len(U) and sympy_rank(U + V) == len(U) + sympy_rank(V):
                return True
    return False


def vanilla_decisions(hmm, theorem, b, u, sequences):
    """``{x: (F*(x), F(x))}`` by path sums for every possible sequence (Theorem 3.3 reads
    ``G_1((∅, x))``, Theorem 3.6 ``Gbar_2(u, e(∅), e(x))``; ``e(∅)`` = all ones)."""
    filler = [Fraction(1)] * hmm.num_states
    out = {}
    for seq in sequences:
        seq = list(seq)
        if joint_probability(hmm, seq) == 0:
            continue
        post = path_posterior(hmm, seq, 0)
        emb = [list(hmm.W[z]) for z in seq]
        if theorem == "3.3":
            g = path_gbar(hmm.A, hmm.W, hmm.pi0, [filler] + emb, 0)
        else:
            g = path_gbar(hmm.A, hmm.W, hmm.pi0, [list(u), filler] + emb, 1)
        out[tuple(seq)] = (int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0),
                           int(sum(Fraction(x) * y for x, y in zip(b, g)) >= 0))
    return out


def hmmlearn_marginals(hmm, tokens):
    """P[H_1..T | x] for a batch ``tokens`` ``[n, T]`` from hmmlearn's float64 forward-backward
    (``implementation="scaling"``; an independent library, skipped when not installed), with the
    package's convention mapped to hmmlearn's: ``startprob_ = A pi0``, ``transmat_ = A^T``."""
    import pytest

    hmmlearn = pytest.importorskip("hmmlearn.hmm")
    from headprompt.models.inference.floats import float_arrays

    A, AT, W, pi0 = float_arrays(hmm)
    model = hmmlearn.CategoricalHMM(n_components=hmm.num_states, n_features=hmm.num_tokens,
                                    init_params="", params="", implementation="scaling")
    model.startprob_, model.transmat_, model.emissionprob_ = A @ pi0, AT.copy(), W.T.copy()
    n, t = tokens.shape
    return model.predict_proba(tokens.reshape(-1, 1), [t] * n).reshape(n, t, -1)
