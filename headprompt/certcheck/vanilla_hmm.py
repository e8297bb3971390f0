"""A vanilla HMM (Section 3 of the paper) read from a certificate: stochastic matrices scaled to
integers, and the backward messages ``beta`` of listed sequences (shapes: ``A`` is
``|H| x |H|``, ``W`` is ``|X| x |H|``, ``pi0`` and each row of ``mu`` have ``|H|`` entries)."""

from __future__ import annotations

from fractions import Fraction

from .exact import scaled, scaled_rows, stochastic
from .fields import field, known_keys, matrix, of_list, task_rows, vector
from .outcomes import Unreadable
from .work import LIMITS, METER, backward_cost, digits, digits_of, int_ops, matrix_work

__all__ = ["Vanilla"]


class Vanilla:
    """A vanilla HMM (``kind: "hmm"``) read from ``instance``, checked to be stochastic, with
    every matrix scaled to integers by one common denominator (``A = Aint / DA`` and so on)."""

    def __init__(self, block):
        known_keys(block, ("kind", "A", "W", "pi0", "mu"), "instance")
        A = of_list(field(block, "A", "instance"), None, "instance.A", "rows")
        n = len(A)
        if not 1 <= n <= LIMITS["states"]:
            raise Unreadable(f"instance.A: expected 1..{LIMITS['states']} states")
        W = of_list(field(block, "W", "instance"), None, "instance.W", "rows")
        m = len(W)
        if not 1 <= m <= LIMITS["tokens"]:
            raise Unreadable(f"instance.W: expected 1..{LIMITS['tokens']} tokens")
        self.n, self.m = n, m
        self.A = matrix(A, n, n, "instance.A")
        self.W = matrix(W, m, n, "instance.W")
        self.pi0 = vector(field(block, "pi0", "instance"), n, "instance.pi0")
        self.mu, self.binary = task_rows(field(block, "mu", "instance"), n, "instance.mu")
        Aint, self.DA = scaled_rows(self.A)
        self.Wint, self.DW = scaled_rows(self.W)
        self.pint, self.Dp = scaled(self.pi0)
        for h in range(n):
            stochastic([Aint[i][h] for i in range(n)], self.DA, f"instance.A column {h}")
            stochastic([self.Wint[x][h] for x in range(m)], self.DW, f"instance.W column {h}")
        stochastic(self.pint, self.Dp, "instance.pi0")
        self.cols = [[(i, Aint[i][h]) for i in range(n) if Aint[i][h]] for h in range(n)]
        self.support = [[i for i, _ in col] for col in self.cols]          # h -> states it moves to
        self.nnz = sum(len(c) for c in self.cols)
        muint, self.Dmu = scaled_rows(self.mu)
        self.R = [[c[h] * self.pint[h] for h in range(n)] for c in muint]   # mu_c ⊙ pi0, times Dmu Dp
        self.wcols = [[(x, self.Wint[x][h]) for x in range(m) if self.Wint[x][h]] for h in range(n)]
        self.wdigits = digits(self.DW)
        self.evidence = {}             # re-derived left inverses, for recognising the paper's construction

    def step(self, vec):
        """``A v`` in rationals (used once or twice per certificate)."""
        out = [Fraction(0)] * self.n
        for h, col in enumerate(self.cols):
            if vec[h]:
                for i, a in col:
                    out[i] += a * vec[h]
        return [v / self.DA for v in out]

    def pre(self, theorem, u):
        """Forward message into the read position: ``A pi0`` (3.3), ``A (u ⊙ A pi0)`` (3.6)."""
        p1 = self.step(self.pi0)
        return p1 if theorem == "3.3" else self.step([a * b for a, b in zip(u, p1)])

    def back(self, beta, z):
        """One backward step in integers: ``A^T (W[z] ⊙ beta)`` times ``DA DW``."""
        wb = [w * b for w, b in zip(self.Wint[z], beta)]
        return [sum(a * wb[i] for i, a in col) for col in self.cols]

    def growth(self):
        """Decimal digits the backward message gains per step (at most ``log10(DA DW |H|)``)."""
        return digits_of(self.DA * self.DW * self.n)

    def budget(self, seqs):
        """Refuse before work when every sequence recomputed so far and these need too much."""
        self.lengths = getattr(self, "lengths", []) + [len(s) for s in seqs]
        over = backward_cost(self.lengths, self.nnz, self.n, self.growth())
        if over:
            raise Unreadable(f"the listed sequences need {over}")

    def betas(self, seqs):
        """Yield ``(k, beta_k)`` for every sequence, ``beta_k[h] = P[x_k | previous state h]``
        times ``(DA DW)^len(x_k)``; sequences sharing a suffix share its backward steps."""
        self.budget(seqs)
        order = sorted(range(len(seqs)), key=lambda k: seqs[k][::-1])
        path, stack = [], [[1] * self.n]
        longest = max((len(s) for s in seqs), default=0)
        share = longest * longest * self.n * self.growth() <= 4 * 10 ** 8     # the stack's digits
        for k in order:
            r = seqs[k][::-1]
            common = 0
            if share:
                while common < len(path) and common < len(r) and path[common] == r[common]:
                    common += 1
            del path[common:]
            del stack[common + 1:]
            beta = stack[-1]
            for z in r[common:]:
                beta = self.back(beta, z)
                if share:
                    path.append(z)
                    stack.append(beta)
            yield k, beta

    def task(self, beta):
        """``(scores numerators, common positive denominator)`` of ``mu_c . P[H_0 | x]``; the
        denominator is 0 when ``Pr(x) = 0``."""
        METER.charge(int_ops(self.n * (len(self.R) + 1), digits(max(beta)), digits(self.Dp * self.Dmu)),
                     "the task's scores")
        total = sum(p * b for p, b in zip(self.pint, beta) if p)
        return [sum(r * b for r, b in zip(row, beta) if r) for row in self.R], self.Dmu * total

    def feature(self, tau):
        """``(W tau, ||tau||_1)`` in integers (times ``DW``): the feature is ``W tau / ||tau||_1``
        (0 when ``tau = 0``); only the nonzeros of ``W`` on the support of ``tau`` are touched."""
        acc = [0] * self.m
        METER.charge(int_ops(sum(len(self.wcols[h]) for h, t in enumerate(tau) if t), digits(max(tau, key=abs)), self.wdigits),
                     "the features W tau")
        for h, t in enumerate(tau):
            if t:
                for x, w in self.wcols[h]:
                    acc[x] += w * t
        return acc, sum(tau)

    def feature_budget(self, seqs, where):
        """Refuse before work when the features of these rows need too much."""
        matrix_work(len(seqs), self.m, self.n, f"{where}: the features")

    def columns(self, states):
        return [[self.W[x][h] for x in range(self.m)] for h in states]
