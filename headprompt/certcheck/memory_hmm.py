"""A memory-augmented HMM (Section 4 and Appendix C of the paper) read from a certificate, with
its lifted chain over memory configurations, forward and backward messages, reverse lifting
``phi`` and the attention features ``Gbar`` (SPEC section 1's layout: lifted state
``c |H| + h``, ``W[x][m][h]``)."""

from __future__ import annotations

from fractions import Fraction

from .exact import scaled, scaled_rows, stochastic
from .fields import field, known_keys, matrix, of_list, size, task_rows, vector
from .outcomes import Unreadable
from .work import LIMITS, METER, digits, digits_of, fraction_ops, int_ops, matrix_work, memory_cost

__all__ = ["Memory"]


class Memory:
    """A memory-augmented HMM (``kind: "memory-hmm"``), checked to be stochastic, with its lifted
    chain: state ``c * |H| + h`` for memory configuration ``c`` (``m_1..m_N`` lexicographic,
    ``m_1`` most significant) and hidden state ``h = j |S| + s``. Sizes are bounded before any
    power is taken."""

    def __init__(self, block):
        known_keys(block, ("kind", "cells", "memory_values", "syntax_states", "target_cell", "A", "W", "pi0", "pM", "mu"),
              "instance")
        self.N = size(field(block, "cells", "instance"), "instance.cells", LIMITS["cells"])
        self.M = size(field(block, "memory_values", "instance"), "instance.memory_values", LIMITS["states"])
        self.S = size(field(block, "syntax_states", "instance"), "instance.syntax_states", LIMITS["states"])
        n = self.n = self.N * self.S
        configs = 1
        for _ in range(self.N):
            configs *= self.M
            if configs * n > LIMITS["lifted_states"]:
                raise Unreadable(f"instance: the lifted chain has more than {LIMITS['lifted_states']} states")
        self.j = size(field(block, "target_cell", "instance"), "instance.target_cell", self.N - 1, 0)
        self.A = matrix(field(block, "A", "instance"), n, n, "instance.A")
        W = of_list(field(block, "W", "instance"), None, "instance.W", "token slices")
        if not 1 <= len(W) <= LIMITS["tokens"]:
            raise Unreadable(f"instance.W: expected 1..{LIMITS['tokens']} tokens")
        matrix_work(self.M * n, self.M * n, len(W), "instance: the ranks of the emission columns")
        self.W = [matrix(W[x], self.M, n, f"instance.W[{x}]") for x in range(len(W))]
        self.m = len(self.W)
        self.pi0 = vector(field(block, "pi0", "instance"), n, "instance.pi0")
        self.configs = [()]
        for _ in range(self.N):
            self.configs = [c + (v,) for c in self.configs for v in range(self.M)]
        self.pM = vector(field(block, "pM", "instance"), len(self.configs), "instance.pM")
        self.mu_rows, self.binary = task_rows(field(block, "mu", "instance"), self.M, "instance.mu")
        self.mu = [Fraction(int(any(row[v] for row in self.mu_rows))) for v in range(self.M)]   # supp(mu) marker
        for h in range(n):
            stochastic(scaled([self.A[r][h] for r in range(n)])[0], scaled([self.A[r][h] for r in range(n)])[1],
                        f"instance.A column {h}")
            for v in range(self.M):
                ints, D = scaled([self.W[x][v][h] for x in range(self.m)])
                stochastic(ints, D, f"instance.W column (m={v}, h={h})")
        for name, vec in (("pi0", self.pi0), ("pM", self.pM)):
            stochastic(*scaled(vec), f"instance.{name}")
        self.L = len(self.configs) * n
        self.support = [[i for i in range(n) if self.A[i][h]] for h in range(n)]
        # integer forms: every message below is exact up to one positive factor per position,
        # which cancels in every ratio (Gbar, the posterior) and support test (R) it is used in
        Ai, DA = scaled_rows(self.A)
        self.cols = [[(i, Ai[i][h]) for i in range(n) if Ai[i][h]] for h in range(n)]
        flat, self.DW = scaled([v for x in self.W for row in x for v in row])
        self.Wi = [[flat[(x * self.M + v) * n:(x * self.M + v + 1) * n] for v in range(self.M)] for x in range(self.m)]
        pMi, pi0i = scaled(self.pM)[0], scaled(self.pi0)[0]
        self.start = [pMi[c] * pi0i[h] for c in range(len(self.configs)) for h in range(n)]
        self.mui, self.Dmu = scaled_rows(self.mu_rows)
        self.growth = digits_of(DA * self.DW * self.L)

    def cell(self, h):
        return h // self.S

    def lifted_emission(self, z):
        """``eta(e(z))`` (times ``DW``): ``W[z, m_j, (j, s)]`` on lifted state ``(m_1..m_N, (j, s))``."""
        return [self.Wi[z][c[self.cell(h)]][h] for c in self.configs for h in range(self.n)]

    def step(self, vec):
        """``Atil v`` (times the denominator of ``A``): the syntax chain moves, the memory stays."""
        out = []
        for c in range(len(self.configs)):
            block = vec[c * self.n:(c + 1) * self.n]
            row = [0] * self.n
            for h, col in enumerate(self.cols):
                if block[h]:
                    for i, a in col:
                        row[i] += a * block[h]
            out += row
        return out

    def back(self, beta, weights):
        """``Atil^T (weights ⊙ beta)`` (times the denominator of ``A``)."""
        out = []
        for c in range(len(self.configs)):
            wb = [weights[c * self.n + i] * beta[c * self.n + i] for i in range(self.n)]
            out += [sum(a * wb[i] for i, a in col) for col in self.cols]
        return out

    def messages(self, inputs):
        """``(joint at H_0, [tau_1..tau_t])`` for nonnegative integer lifted inputs
        ``v_1..v_t``, each up to a positive factor: ``tau_i = pre_i ⊙ beta_i`` (``pre_i``:
        forward message into position ``i`` with every other input applied; ``beta_i``: backward
        message out of it)."""
        backs = [[1] * self.L]
        for v in reversed(inputs):
            backs.append(self.back(backs[-1], v))
        backs.reverse()
        joint = [p * b for p, b in zip(self.start, backs[0])]
        taus, alpha = [], self.start
        for i, v in enumerate(inputs):
            pre = self.step(alpha)
            taus.append([p * b for p, b in zip(pre, backs[i + 1])])
            alpha = [p * w for p, w in zip(pre, v)]
        return joint, taus

    def _fold(self, w):
        """``sum_{c: c_j(h) = m} w[(c, h)]`` for every ``(m, h)``: the reverse lifting without its
        constant factor ``|M|^-(N-1)`` (integers stay integers)."""
        out = [0] * (self.M * self.n)
        for ci, c in enumerate(self.configs):
            for h in range(self.n):
                if w[ci * self.n + h]:
                    out[c[self.cell(h)] * self.n + h] += w[ci * self.n + h]
        return out

    def phi(self, w):
        """Reverse lifting: ``phi(w)[(m, h)] = |M|^-(N-1) sum_{c: c_j(h) = m} w[(c, h)]``."""
        scale = Fraction(1, self.M ** (self.N - 1))
        return [v * scale for v in self._fold(w)]

    def gbar(self, tau):
        """``Gbar = W phi(tau) / ||phi(tau)||_1`` over tokens, exactly (0 when the norm is 0); a
        positive factor on ``tau`` cancels."""
        G, norm = self.gbar_ints(tau)
        return [Fraction(v, norm) for v in G] if norm else [Fraction(0)] * self.m

    def gbar_ints(self, tau):
        """``(G, N)`` in integers with ``Gbar = G / N`` (``N = 0``: ``G = 0``, ``Gbar = 0``)."""
        p = self._fold(tau)
        norm = sum(p) * self.DW
        if norm == 0:
            return [0] * self.m, 0
        nz = [(v, h, p[v * self.n + h]) for v in range(self.M) for h in range(self.n) if p[v * self.n + h]]
        METER.charge(int_ops(self.m * len(nz), digits(norm), digits(self.DW)) + fraction_ops(self.m, digits(norm)),
                     "the features Gbar")
        return [sum(self.Wi[z][v][h] * t for v, h, t in nz) for z in range(self.m)], norm

    def flat_emission(self, z):
        """``e(z)`` over ``(m, h)``, ``m`` major."""
        return [self.W[z][v][h] for v in range(self.M) for h in range(self.n)]

    def task_scores(self, joint):
        """``[mu_c . P[M_j* | x]]`` (0 when ``Pr(x) = 0``); a positive factor on ``joint`` cancels."""
        total = sum(joint)
        if total == 0:
            return [Fraction(0)] * len(self.mui)
        marg = [0] * self.M
        for ci, c in enumerate(self.configs):
            marg[c[self.j]] += sum(joint[ci * self.n:(ci + 1) * self.n])
        return [Fraction(sum(m * p for m, p in zip(row, marg)), total * self.Dmu) for row in self.mui]

    def task_margin(self, joint):
        """``mu . P[M_j* | x]`` of a binary task."""
        return self.task_scores(joint)[0]

    def budget(self, seqs):
        self.lengths = getattr(self, "lengths", []) + [len(s) for s in seqs]
        over = memory_cost(self.lengths, self.L, self.n, self.growth, self.m)
        if over:
            raise Unreadable(f"the listed sequences need {over}")

    def column(self, v, h):
        return [self.W[x][v][h] for x in range(self.m)]

    def relevant(self, theorem, S_star):
        """``(U, rest)`` column labels ``(m, h)`` of the non-degeneracy assumption for ``S*``:
        ``U`` over ``m in M'`` and ``h in H* = {j*} x S*``; ``rest`` the other relevant columns
        (``M' = M`` for 4.2, ``supp(mu)`` in the target cell for 4.5 / C.5)."""
        M_all = list(range(self.M))
        M_rec = M_all if theorem == "4.3" else [v for v in M_all if self.mu[v] != 0]
        H_star = {self.j * self.S + s for s in S_star}
        U = [(v, h) for h in sorted(H_star) for v in M_rec]
        rest = [(v, h) for h in range(self.n) if h not in H_star
                for v in (M_rec if self.cell(h) == self.j else M_all)]
        return U, rest
