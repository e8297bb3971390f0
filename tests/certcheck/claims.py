"""An oracle for what an accepted certificate claims, independent of the checker.

Everything is computed from the paper's definitions by brute force: sums over hidden paths
(and memory configurations) in exact Fractions, ranks by sympy, ergodicity by Wielandt's
bound, Assumption 3.5 and the memory non-degeneracy assumptions by searching every set, and
"no linear head fits" by a floating-point linear program (scipy) on the path-sum features.
Nothing here imports the checker or the package's inference code. Tiny instances only.
"""

from __future__ import annotations

import functools
import itertools
import json
from fractions import Fraction

import numpy as np

from tests.oracle import sympy_rank

__all__ = ["claim_is_true"]


def _q(v):
    return Fraction(v) if not isinstance(v, list) else [_q(w) for w in v]


class Plain:
    """A vanilla HMM from a certificate's instance block (lists of Fractions)."""

    def __init__(self, block):
        self.A, self.W, self.pi0 = _q(block["A"]), _q(block["W"]), _q(block["pi0"])
        mu = block["mu"]
        self.multi = isinstance(mu[0], list)
        self.mu = _q(mu) if self.multi else [_q(mu)]
        self.n, self.m = len(self.pi0), len(self.W)
        for h in range(self.n):
            assert sum(self.A[i][h] for i in range(self.n)) == 1 and min(self.A[i][h] for i in range(self.n)) >= 0
            assert sum(self.W[x][h] for x in range(self.m)) == 1 and min(self.W[x][h] for x in range(self.m)) >= 0
        assert sum(self.pi0) == 1 and min(self.pi0) >= 0

    def tau(self, embeddings, i):
        """``tau_i(v)[h]`` by the definition: a sum over hidden paths ``h_0..h_t``."""
        out = [Fraction(0)] * self.n
        for path in itertools.product(range(self.n), repeat=len(embeddings) + 1):
            p = self.pi0[path[0]]
            for j in range(1, len(embeddings) + 1):
                if not p:
                    break
                p *= self.A[path[j]][path[j - 1]]
                if j - 1 != i:
                    p *= embeddings[j - 1][path[j]]
            out[path[i + 1]] += p
        return out

    def gbar(self, embeddings, i):
        t = self.tau(embeddings, i)
        s = sum(t)
        return [sum(self.W[x][h] * t[h] for h in range(self.n)) / s if s else Fraction(0) for x in range(self.m)]

    @functools.lru_cache(maxsize=None)
    def task(self, x):
        """``(Pr(x), [mu_c . P[H_0 | x]])`` by path sums."""
        x = tuple(x)
        post = [Fraction(0)] * self.n
        for path in itertools.product(range(self.n), repeat=len(x) + 1):
            p = self.pi0[path[0]]
            for j, z in enumerate(x, start=1):
                p *= self.A[path[j]][path[j - 1]] * self.W[z][path[j]]
            post[path[0]] += p
        total = sum(post)
        return total, [sum(m * p for m, p in zip(row, post)) / total if total else Fraction(0) for row in self.mu]

    def features(self, theorem, x, u=None):
        return self._features(theorem, tuple(x), None if u is None else tuple(u))

    @functools.lru_cache(maxsize=None)
    def _features(self, theorem, x, u):
        emb = [[self.W[z][h] for h in range(self.n)] for z in x]
        ones = [Fraction(1)] * self.n
        return self.gbar([ones] + emb, 0) if theorem == "3.3" else self.gbar([list(u), ones] + emb, 1)


def _label(scores, binary):
    if binary:
        return int(scores[0] >= 0)
    top = max(scores)
    return max(c for c, s in enumerate(scores) if s == top)


def _ergodic(A, pi0):
    n = len(pi0)
    S = np.array([[1 if A[g][h] != 0 else 0 for h in range(n)] for g in range(n)], dtype=np.int64)
    P = np.eye(n, dtype=np.int64)
    for _ in range((n - 1) ** 2 + 1):
        P = np.minimum(P @ S, 1)
    return bool(P.min() > 0) and all(p > 0 for p in pi0)


def _no_head(features, labels) -> bool:
    """True when no ``b`` has ``b.g >= 0`` on label-1 rows and ``b.g < 0`` on label-0 rows
    (scaled: ``b.g <= -1``), by a linear program in floats with a small slack."""
    from scipy.optimize import linprog

    G = np.array([[float(v) for v in g] for g in features])
    if any(l == 0 and not np.any(G[k]) for k, l in enumerate(labels)):
        return True                        # G = 0 reads label 1 whatever b is
    rows = [(-G[k] if l == 1 else G[k]) for k, l in enumerate(labels)]
    rhs = [1e-9 if l == 1 else -1.0 for l in labels]
    res = linprog(np.zeros(G.shape[1]), A_ub=np.array(rows), b_ub=np.array(rhs), bounds=(None, None),
                  method="highs")
    return res.status == 2                # infeasible


# ---------------------------------------------------------------- vanilla claims

def _assumptions_true(hmm, block) -> bool:
    """Each stated assumption (``holds`` true or false) is what brute force finds."""
    for name, entry in block.items():
        if name == "3.1":
            truth = sympy_rank([[hmm.W[x][h] for x in range(hmm.m)] for h in range(hmm.n)]) == hmm.n
        elif name == "3.2":
            truth = _ergodic(hmm.A, hmm.pi0)
        elif name == "3.5":
            target = {h for row in hmm.mu for h in range(hmm.n) if row[h]}
            truth = False
            for k in range(hmm.n + 1):
                for B in itertools.combinations(range(hmm.n), k):
                    H = sorted({g for h in B for g in range(hmm.n) if hmm.A[g][h]})
                    if H and target <= set(H) and sympy_rank([[hmm.W[x][h] for x in range(hmm.m)] for h in H]) == len(H):
                        truth = True
        else:
            return False
        if truth != entry["holds"]:
            return False
    return True


def _decisions(hmm, theorem, b, u, x):
    prob, star = hmm.task(x)
    g = hmm.features(theorem, x, u)
    head = [sum(bb * gg for bb, gg in zip(row, g)) for row in b]
    return prob, _label(star, not hmm.multi), _label(head, not hmm.multi)


def _is_construction(hmm, cert, b, u) -> bool:
    """SPEC section 1's reading of the proofs, with sympy's pseudo-inverse."""
    import sympy

    p1 = [sum(hmm.A[g][h] * hmm.pi0[h] for h in range(hmm.n)) for g in range(hmm.n)]
    if cert["theorem"] == "3.3":
        states, c = list(range(hmm.n)), p1
    else:
        entry = cert["assumptions"].get("3.5", {})
        states, B = entry.get("H_star", []), set(entry.get("B", []))
        if list(u) != [Fraction(int(h in B)) for h in range(hmm.n)]:
            return False
        c = [sum(hmm.A[g][h] * u[h] * p1[h] for h in range(hmm.n)) for g in range(hmm.n)]
    Ws = sympy.Matrix([[sympy.Rational(str(hmm.W[x][h])) for h in states] for x in range(hmm.m)])
    pinv = Ws.pinv()
    for mu, row in zip(hmm.mu, b):
        coeff = sympy.Matrix([[sympy.Rational(str(mu[h] * hmm.pi0[h] / c[h])) for h in states]])
        if [Fraction(str(v)) for v in coeff * pinv] != list(row):
            return False
    return True


def _all_short(m, longest):
    for t in range(1, longest + 1):
        yield from itertools.product(range(m), repeat=t)


@functools.lru_cache(maxsize=64)
def _plain(block_json):
    return Plain(json.loads(block_json))


def plain(block):
    return _plain(json.dumps(block, sort_keys=True))


def _vanilla_theorem(cert, line) -> bool:
    hmm = plain(cert["instance"])
    theorem, verdict = cert["theorem"], cert["verdict"]
    if not _assumptions_true(hmm, cert["assumptions"]):
        return False
    if verdict == "assumptions-fail":
        if all(e["holds"] for e in cert["assumptions"].values()):
            return False
        return all(_motzkin_true(hmm, theorem, entry) for entry in cert.get("motzkin", []))
    w = cert["witness"]
    b = [_q(w["b"])] if not hmm.multi else _q(w["b"])
    u = None if w.get("u") is None else _q(w["u"])
    if u is not None and any(not 0 <= v <= 1 for v in u):
        return False
    if theorem == "3.3" and u is not None:
        return False
    if "construction, re-derived" in line and not _is_construction(hmm, cert, b, u):
        return False
    listed = [tuple(r["x"]) for r in cert["sequences"]]
    if verdict == "refuted":
        return any(p and s != f for p, s, f in (_decisions(hmm, theorem, b, u, x) for x in listed))
    pool = set(listed) | (set(_all_short(hmm.m, 2 if theorem == "3.6" else 3)) if cert["covers"] == "identity" else set())
    seen = set()
    for x in pool:
        p, s, f = _decisions(hmm, theorem, b, u, x)
        if p and s != f:
            return False
        if p and x in listed:
            seen.add(s)
    return len(seen) == (len(hmm.mu) if hmm.multi else 2)


def _motzkin_true(hmm, theorem, entry, prompts=None) -> bool:
    seqs = [tuple(s) for s in entry["sequences"]]
    if not seqs:
        return False
    tasks = [hmm.task(x) for x in seqs]
    if any(p == 0 for p, _ in tasks):
        return False
    labels = [_label(s, True) for _, s in tasks]
    if prompts is None:
        u = entry.get("prompt")
        if theorem == "3.6" and (u is None or not any(Fraction(v) for v in u)):
            return False
        prompts = [None if u is None else _q(u)]
    for u in prompts:
        if u is not None and any(not 0 <= v <= 1 for v in u):
            return False
        if not _no_head([hmm.features(theorem, x, u) for x in seqs], labels):
            return False
    return True


def _prompt_family(n, rng):
    yield from ([Fraction(int(h in B)) for h in range(n)] for k in range(1, n + 1)
                for B in itertools.combinations(range(n), k))
    for _ in range(5):
        yield [Fraction(int(rng.integers(0, 8)), 7) for _ in range(n)]


# ---------------------------------------------------------------- memory claims

class Mem:
    """A memory-augmented HMM from a certificate's instance block, by brute force."""

    def __init__(self, block):
        self.N, self.M, self.S = block["cells"], block["memory_values"], block["syntax_states"]
        self.n, self.j = self.N * self.S, block["target_cell"]
        self.A, self.W, self.pi0 = _q(block["A"]), _q(block["W"]), _q(block["pi0"])
        self.pM = _q(block["pM"])
        self.multi = isinstance(block["mu"][0], list)
        self.mu_rows = _q(block["mu"]) if self.multi else [_q(block["mu"])]
        self.mu = [int(any(row[v] for row in self.mu_rows)) for v in range(self.M)]      # supp(mu)
        self.m = len(self.W)
        self.configs = list(itertools.product(range(self.M), repeat=self.N))
        for h in range(self.n):
            assert sum(self.A[i][h] for i in range(self.n)) == 1
            for v in range(self.M):
                assert sum(self.W[x][v][h] for x in range(self.m)) == 1
        assert sum(self.pM) == 1 and sum(self.pi0) == 1
        assert min(self.pM) >= 0 and min(self.pi0) >= 0

    def emit(self, z, c, h):
        return self.W[z][c[h // self.S]][h]

    def lifted(self, z):
        return [self.emit(z, c, h) for c in self.configs for h in range(self.n)]

    def tau(self, embeddings, i):
        out = [Fraction(0)] * (len(self.configs) * self.n)
        for ci, c in enumerate(self.configs):
            for path in itertools.product(range(self.n), repeat=len(embeddings) + 1):
                p = self.pM[ci] * self.pi0[path[0]]
                for k in range(1, len(embeddings) + 1):
                    if not p:
                        break
                    p *= self.A[path[k]][path[k - 1]]
                    if k - 1 != i:
                        p *= embeddings[k - 1][ci * self.n + path[k]]
                out[ci * self.n + path[i + 1]] += p
        return out

    def gbar(self, embeddings, i):
        t = self.tau(embeddings, i)
        phi = [Fraction(0)] * (self.M * self.n)
        for ci, c in enumerate(self.configs):
            for h in range(self.n):
                phi[c[h // self.S] * self.n + h] += t[ci * self.n + h] / self.M ** (self.N - 1)
        s = sum(phi)
        return t, [sum(self.W[x][v][h] * phi[v * self.n + h] for v in range(self.M) for h in range(self.n)) / s
                   if s else Fraction(0) for x in range(self.m)], phi

    def task(self, x):
        probs = [Fraction(0)] * self.M
        for ci, c in enumerate(self.configs):
            for path in itertools.product(range(self.n), repeat=len(x) + 1):
                p = self.pM[ci] * self.pi0[path[0]]
                for k, z in enumerate(x, start=1):
                    p *= self.A[path[k]][path[k - 1]] * self.emit(z, c, path[k])
                probs[c[self.j]] += p
        total = sum(probs)
        return total, [sum(m * p for m, p in zip(row, probs)) / total if total else Fraction(0) for row in self.mu_rows]

    def nondegenerate(self, name, H):
        M_all = list(range(self.M))
        M_rec = M_all if name == "4.2" else [v for v in M_all if self.mu[v]]
        col = lambda v, h: [self.W[x][v][h] for x in range(self.m)]      # noqa: E731
        U = [col(v, h) for h in H for v in M_rec]
        V = [col(v, h) for h in range(self.n) if h not in H for v in (M_rec if h // self.S == self.j else M_all)]
        return sympy_rank(U) == len(U) and sympy_rank(U + V) == len(U) + sympy_rank(V)

    def any_nondegenerate(self, name):
        if name != "4.2" and not any(self.mu):
            return False
        return any(self.nondegenerate(name, [self.j * self.S + s for s in S])
                   for k in range(1, self.S + 1) for S in itertools.combinations(range(self.S), k))


def _memory_assumptions_true(mem, block) -> bool:
    for name, entry in block.items():
        if name in ("3.2", "4.4"):
            truth = _ergodic(mem.A, mem.pi0)
            if name == "4.4":
                truth = truth and all(sum(mem.A[i][h] * mem.pi0[h] for h in range(mem.n)) == mem.pi0[i]
                                      for i in range(mem.n))
        elif entry["holds"]:
            H = entry["H_star"]
            truth = bool(H) and all(h // mem.S == mem.j for h in H) and mem.nondegenerate(name, H)
        else:
            truth = mem.any_nondegenerate(name)
        if truth != entry["holds"]:
            return False
    return True


@functools.lru_cache(maxsize=None)
def _memory_row(block_json, witness_json, theorem, x):
    """``(Pr(x) > 0, x in R, F*(x), F(x))`` by brute force."""
    mem = Mem(json.loads(block_json))
    w = json.loads(witness_json)
    H = set(w["H_star"])
    plain = [mem.lifted(z) for z in x]
    prob, star = mem.task(x)
    taus = [mem.tau(plain, i) for i in range(len(x))]
    in_R = bool(prob) and any(sum(t) and all(not t[ci * mem.n + h] for ci in range(len(mem.configs))
                                             for h in range(mem.n) if h not in H) for t in taus)
    if not in_R:
        return bool(prob), False, None, None
    q, K, V = _q(w["q"]), _q(w["Theta_K"]), _q(w["Theta_V"])
    heads = _q(w["b"]) if mem.multi else [_q(w["b"])]
    beta = _q(w["beta"])
    u = None if w.get("u") is None else _q(w["u"])
    inputs = plain if u is None else [u] + plain
    values = [[mem.W[z][v][h] for v in range(mem.M) for h in range(mem.n)] for z in x]
    if u is not None:
        values = [_phi(mem, u)] + values
    scores, outs = [], []
    for i in range(len(inputs)):
        g = mem.gbar(inputs, i)[1]
        br = beta[min(i, len(beta) - 1)]
        key = [sum(K[r][z] * g[z] for z in range(mem.m)) + br[r] for r in range(mem.n + 1)]
        scores.append(sum(a * c for a, c in zip(q, key)))
        val = [sum(V[r][z] * g[z] for z in range(mem.m)) * values[i][r] for r in range(mem.M * mem.n)]
        outs.append([sum(a * c for a, c in zip(b, val)) for b in heads])
    top = max(scores)
    att = [i for i, s in enumerate(scores) if s == top]
    head = [sum(outs[i][c] for i in att) / len(att) for c in range(len(heads))]
    return True, True, _label(star, not mem.multi), _label(head, not mem.multi)


def _phi(mem, w):
    out = [Fraction(0)] * (mem.M * mem.n)
    for ci, c in enumerate(mem.configs):
        for h in range(mem.n):
            out[c[h // mem.S] * mem.n + h] += w[ci * mem.n + h] / mem.M ** (mem.N - 1)
    return out


def _memory_theorem(cert, line) -> bool:
    mem = Mem(cert["instance"])
    theorem, verdict = cert["theorem"], cert["verdict"]
    if theorem == "4.6" and mem.N != 1:
        return False
    if not _memory_assumptions_true(mem, cert["assumptions"]):
        return False
    if verdict == "assumptions-fail":
        return not all(e["holds"] for e in cert["assumptions"].values())
    w = cert["witness"]
    name = {"4.3": "4.2", "4.6": "4.5", "C.6": "C.5"}[theorem]
    if not w["H_star"] or not mem.nondegenerate(name, w["H_star"]):
        return False
    if (w.get("u") is None) != (theorem == "4.3"):
        return False
    if w.get("u") is not None and any(not 0 <= Fraction(v) <= 1 for v in w["u"]):
        return False
    bj, wj = json.dumps(cert["instance"], sort_keys=True), json.dumps(w, sort_keys=True)
    rows = [_memory_row(bj, wj, theorem, tuple(r["x"])) for r in cert["sequences"]]
    if verdict == "refuted":
        return any(r[1] and r[2] != r[3] for r in rows)
    classes = set(range(len(mem.mu_rows) if mem.multi else 2))
    return all(r[2] == r[3] for r in rows if r[1]) and {r[2] for r in rows if r[1]} == classes


def _memory_motzkin(cert) -> bool:
    mem = Mem(cert["instance"])
    seqs = [tuple(s) for s in cert["sequences"]]
    feats, labels = [], []
    for x in seqs:
        prob, star = mem.task(x)
        if not prob or mem.multi:
            return False
        labels.append(int(star[0] >= 0))
        ones = [Fraction(1)] * (len(mem.configs) * mem.n)
        feats.append(mem.gbar([ones] + [mem.lifted(z) for z in x], 0)[1])
    return _no_head(feats, labels)


# ---------------------------------------------------------------- entry point

def claim_is_true(cert, line: str) -> bool:
    """Whether what ``line`` (an accepted line of the checker) states about ``cert`` is true."""
    if "vacuous" in line or not line.startswith("accepted: "):
        return False
    theorem, claim = cert["theorem"], cert["claim"]
    if f"Theorem {theorem}" not in line:
        return False
    memory = cert["instance"].get("kind") == "memory-hmm"
    if memory != (theorem in ("4.3", "4.6", "C.6")):
        return False
    if claim == "theorem":
        if f"{cert['verdict']}" not in line:
            return False
        return _memory_theorem(cert, line) if memory else _vanilla_theorem(cert, line)
    if claim == "no-linear-head":
        if memory:
            return _memory_motzkin(cert) and "says nothing against" in line
        hmm = plain(cert["instance"])
        if theorem == "3.3" and "prompt" in cert:
            return False
        return _motzkin_true(hmm, theorem, cert)
    if claim == "no-prompt-and-head":
        hmm = plain(cert["instance"])
        rng = np.random.default_rng(0)
        return theorem == "3.6" and _motzkin_true(hmm, "3.6", cert, prompts=list(_prompt_family(hmm.n, rng)))
    return False
