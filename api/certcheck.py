"""Re-check a ``verify theorem --certificate`` file with the Python standard library alone.

    python -m headprompt.certcheck FILE        (or: python api/certcheck.py FILE)

Exit 0: every claim was re-derived from the instance and holds. Exit 1: a claim fails (one
line names the first). Exit 2: the file is unreadable or not a certificate. Nothing printed in
the certificate is trusted: the checker recomputes ``P[H_0 | x]``, ``F*(x)``, the head's input
``G`` (Theorem 3.3: ``G_1(∅, x)``; Theorem 3.6: ``Gbar_2(u, e(∅), e(x))``) by its own
forward-backward pass in ``fractions.Fraction``, and compares. Theorems 4.3, 4.6 and C.6
(memory-augmented HMMs) are re-derived on the lifted chain ``(m_1..m_N, h)``: membership in ``R``
(eq. 4.3), ``mu . P[M_j* | x]``, ``Gbar_i`` through the reverse lifting ``phi``, the argmax
attention head, and the rank condition that makes ``H*`` the non-degeneracy assumption's set.
The format is documented field by field in docs/certificates.md. Conventions (SPEC section 1): ``A[h', h] = P[H' = h' | H = h]``
(columns sum to 1), ``W[x, h] = P[X = x | H = h]``, ``pi0 = P[H_0]``, ``P[H_1] = A pi0``,
``F*(x) = 1(mu . P[H_0 | x] >= 0)`` and the head's label ``1(b . G >= 0)`` (ties are label 1).

This file imports only the standard library, so it can be audited and run without headprompt.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction

__all__ = ["check", "main", "Rejected", "FORMAT", "VERSION"]

FORMAT = "headprompt-certificate"
VERSION = 1


class Rejected(Exception):
    """A claim of the certificate does not hold (the message names it)."""


class Unreadable(Exception):
    """The certificate cannot be read (not JSON, a missing or malformed field)."""


def _q(text, where):
    """One rational from its string (``"3/7"``, ``"-2"``); integers are accepted too."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise Unreadable(f"{where}: expected a rational as a string like \"3/7\", found {text!r}")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise Unreadable(f"{where}: {text!r} is not a rational") from None


def _vec(v, n, where):
    if not isinstance(v, list) or (n is not None and len(v) != n):
        raise Unreadable(f"{where}: expected a list of {n} rationals")
    return [_q(t, f"{where}[{i}]") for i, t in enumerate(v)]


def _mat(m, rows, cols, where):
    if not isinstance(m, list) or len(m) != rows:
        raise Unreadable(f"{where}: expected {rows} rows")
    return [_vec(r, cols, f"{where}[{i}]") for i, r in enumerate(m)]


def _field(d, key, where):
    if not isinstance(d, dict) or key not in d:
        raise Unreadable(f"{where}: missing field {key!r}")
    return d[key]


class Instance:
    """An HMM read from the certificate's ``instance`` block, checked to be stochastic."""

    def __init__(self, block):
        self.A = _field(block, "A", "instance")
        n = len(self.A) if isinstance(self.A, list) else 0
        if n == 0:
            raise Unreadable("instance.A: expected a nonempty square matrix")
        self.A = _mat(self.A, n, n, "instance.A")
        W = _field(block, "W", "instance")
        if not isinstance(W, list) or not W:
            raise Unreadable("instance.W: expected a nonempty |X| x |H| matrix")
        self.W = _mat(W, len(W), n, "instance.W")
        self.pi0 = _vec(_field(block, "pi0", "instance"), n, "instance.pi0")
        self.mu = _vec(_field(block, "mu", "instance"), n, "instance.mu")
        self.n, self.m = n, len(self.W)
        for name, mat in (("A", self.A), ("W", self.W)):
            for h in range(n):
                col = [mat[r][h] for r in range(len(mat))]
                if any(v < 0 for v in col) or sum(col) != 1:
                    raise Rejected(f"instance.{name}: column {h} is not a probability distribution")
        if any(v < 0 for v in self.pi0) or sum(self.pi0) != 1:
            raise Rejected("instance.pi0 is not a probability distribution")

    def step(self, vec):
        """``A v``: the forward message one step on."""
        return [sum(self.A[i][h] * vec[h] for h in range(self.n) if vec[h]) for i in range(self.n)]

    def back(self, beta, weights):
        """``A^T (weights ⊙ beta)``: the backward message one step back."""
        wb = [weights[i] * beta[i] for i in range(self.n)]
        return [sum(self.A[i][h] * wb[i] for i in range(self.n) if wb[i]) for h in range(self.n)]

    def beta(self, seq):
        """``beta[h] = P[X_{1:T} = x | H_0 = h]`` (equally: given the state just before ``x``)."""
        b = [Fraction(1)] * self.n
        for z in reversed(seq):
            b = self.back(b, self.W[z])
        return b

    def task_margin(self, beta):
        """``(mu . P[H_0 | x], Pr(x))``; the margin is 0 when ``Pr(x) = 0``."""
        joint = [self.pi0[h] * beta[h] for h in range(self.n)]
        total = sum(joint)
        if total == 0:
            return Fraction(0), total
        return sum(m * j for m, j in zip(self.mu, joint)) / total, total

    def pre(self, theorem, u):
        """Forward message into the read position: ``A pi0`` (3.3), ``A (u ⊙ A pi0)`` (3.6)."""
        p1 = self.step(self.pi0)
        if theorem == "3.3":
            return p1
        return self.step([u[h] * p1[h] for h in range(self.n)])

    def head_margin(self, b, pre, beta):
        """``b . W tau / ||tau||_1`` with ``tau = pre ⊙ beta`` (0 when the norm is 0)."""
        tau = [pre[h] * beta[h] for h in range(self.n)]
        norm = sum(tau)
        if norm == 0:
            return Fraction(0)
        return sum(b[z] * sum(self.W[z][h] * tau[h] for h in range(self.n)) for z in range(self.m)) / norm


def _label(margin):
    return 1 if margin >= 0 else 0


def _tokens(seq, m, where):
    if not isinstance(seq, list) or not seq or any(isinstance(z, bool) or not isinstance(z, int)
                                                   or not 0 <= z < m for z in seq):
        raise Unreadable(f"{where}: expected a nonempty list of tokens in 0..{m - 1}")
    return seq


def _check_identity(inst, cert, theorem, b, u):
    """``(W^T b) ⊙ pre = lambda mu ⊙ pi0`` with ``lambda > 0``: then ``b . W tau`` is ``lambda``
    times ``mu . (pi0 ⊙ beta) = Pr(x) mu . P[H_0 | x]`` for every ``x`` (the read position's
    backward message is ``beta`` of ``x``), so ``F = F*`` on every sequence (paper: Theorem 3.3's
    proof; Lemma B.2 for 3.6)."""
    ident = _field(cert, "identity", "certificate")
    lam = _q(_field(ident, "lambda", "identity"), "identity.lambda")
    if lam <= 0:
        raise Rejected(f"identity: lambda = {lam} is not positive")
    pre = inst.pre(theorem, u)
    lhs = [sum(inst.W[z][h] * b[z] for z in range(inst.m)) * pre[h] for h in range(inst.n)]
    rhs = [inst.mu[h] * inst.pi0[h] for h in range(inst.n)]
    for h in range(inst.n):
        if lhs[h] != lam * rhs[h]:
            raise Rejected(f"identity: (W^T b)[{h}] pre[{h}] = {lhs[h]} but lambda mu[{h}] P[H_0 = {h}] "
                           f"= {lam * rhs[h]}")
    for key, mine in (("lhs", lhs), ("rhs", rhs)):
        if key in ident and _vec(ident[key], inst.n, f"identity.{key}") != mine:
            raise Rejected(f"identity.{key}: the printed terms are not the recomputed ones")
    return pre


def _check_sequences(inst, cert, theorem, b, pre, verdict):
    rows = _field(cert, "sequences", "certificate")
    if not isinstance(rows, list):
        raise Unreadable("sequences: expected a list")
    disagreements = 0
    for k, row in enumerate(rows):
        where = f"sequences[{k}]"
        seq = _tokens(_field(row, "x", where), inst.m, f"{where}.x")
        beta = inst.beta(seq)
        star, prob = inst.task_margin(beta)
        head = inst.head_margin(b, pre, beta)
        if _q(_field(row, "task_margin", where), f"{where}.task_margin") != star:
            raise Rejected(f"{where}: task margin mu . P[H_0 | x] is {star}, not {row['task_margin']}")
        if _q(_field(row, "head_margin", where), f"{where}.head_margin") != head:
            raise Rejected(f"{where}: head margin b . G is {head}, not {row['head_margin']}")
        if _field(row, "F_star", where) != _label(star) or _field(row, "F", where) != _label(head):
            raise Rejected(f"{where}: labels F*(x) = {_label(star)}, F(x) = {_label(head)} are not the printed "
                           f"{row.get('F_star')}, {row.get('F')}")
        if prob != 0 and _label(star) != _label(head):
            if verdict == "verified":
                raise Rejected(f"{where}: F(x) = {_label(head)} disagrees with F*(x) = {_label(star)} on x = {seq}")
            disagreements += 1
    if verdict == "refuted" and disagreements == 0:
        raise Rejected("refuted: no listed sequence with Pr(x) > 0 has F(x) != F*(x)")
    return len(rows)


def _check_motzkin(inst, cert, k):
    """A no-linear-head certificate: ``y >= 0`` (not all 0) on label-0 rows, ``z >= 0`` on
    label-1 rows, ``sum y g - sum z g = 0``, with ``g`` and the labels recomputed."""
    where = f"motzkin[{k}]"
    seqs = _field(cert, "sequences", where)
    c = _field(cert, "certificate", where)
    y = _vec(_field(c, "y", where), len(seqs), f"{where}.y")
    z = _vec(_field(c, "z", where), len(seqs), f"{where}.z")
    u = cert.get("prompt")
    theorem = "3.3" if u is None else "3.6"
    u = None if u is None else _vec(u, inst.n, f"{where}.prompt")
    pre = inst.pre(theorem, u)
    total = [Fraction(0)] * inst.m
    labels = []
    for i, seq in enumerate(seqs):
        seq = _tokens(seq, inst.m, f"{where}.sequences[{i}]")
        beta = inst.beta(seq)
        star, prob = inst.task_margin(beta)
        if prob == 0:
            raise Rejected(f"{where}: sequence {seq} has probability 0")
        labels.append(_label(star))
        tau = [pre[h] * beta[h] for h in range(inst.n)]
        norm = sum(tau)
        g = [sum(inst.W[x][h] * tau[h] for h in range(inst.n)) / norm if norm else Fraction(0)
             for x in range(inst.m)]
        for x in range(inst.m):
            total[x] += (y[i] - z[i]) * g[x]
    if "labels" in cert and cert["labels"] != labels:
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels}")
    if any(v < 0 for v in y + z):
        raise Rejected(f"{where}: y or z has a negative entry")
    if any(y[i] != 0 for i in range(len(y)) if labels[i] == 1) or any(z[i] != 0 for i in range(len(z))
                                                                       if labels[i] == 0):
        raise Rejected(f"{where}: y must vanish on label-1 rows and z on label-0 rows")
    if all(v == 0 for v in y):
        raise Rejected(f"{where}: y is all zero")
    if any(total):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")


# ---------------------------------------------------------------- memory-augmented HMMs (4.3, 4.6, C.6)

def _rank(columns):
    """Rank of a list of rational column vectors (Gaussian elimination over Fraction)."""
    rows = [list(c) for c in columns]          # rank of the transpose is the same
    rank, width = 0, len(rows[0]) if rows else 0
    for col in range(width):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(rank + 1, len(rows)):
            if rows[r][col] != 0:
                f = rows[r][col] / rows[rank][col]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[rank])]
        rank += 1
    return rank


class MemoryInstance:
    """A memory-augmented HMM read from ``instance`` (``kind: "memory-hmm"``), checked to be
    stochastic, with its lifted chain: state ``c * |H| + h`` for memory configuration ``c``
    (``m_1..m_N`` lexicographic, ``m_1`` most significant) and hidden state ``h = j |S| + s``."""

    def __init__(self, block):
        def size(key):
            v = _field(block, key, "instance")
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise Unreadable(f"instance.{key}: expected a positive integer")
            return v

        self.N, self.M, self.S = size("cells"), size("memory_values"), size("syntax_states")
        n = self.n = self.N * self.S
        if self.M ** self.N * n > 4096:
            raise Unreadable("instance: the lifted chain has more than 4096 states; this checker is for "
                             "certificates of small instances")
        self.j = _field(block, "target_cell", "instance")
        if isinstance(self.j, bool) or not isinstance(self.j, int) or not 0 <= self.j < self.N:
            raise Unreadable(f"instance.target_cell: expected an integer in 0..{self.N - 1}")
        self.A = _mat(_field(block, "A", "instance"), n, n, "instance.A")
        W = _field(block, "W", "instance")
        if not isinstance(W, list) or not W:
            raise Unreadable("instance.W: expected a nonempty |X| x |M| x |H| array")
        self.W = [_mat(W[x], self.M, n, f"instance.W[{x}]") for x in range(len(W))]
        self.m = len(self.W)
        self.pi0 = _vec(_field(block, "pi0", "instance"), n, "instance.pi0")
        self.configs = [()]
        for _ in range(self.N):
            self.configs = [c + (v,) for c in self.configs for v in range(self.M)]
        self.pM = _vec(_field(block, "pM", "instance"), len(self.configs), "instance.pM")
        self.mu = _vec(_field(block, "mu", "instance"), self.M, "instance.mu")
        for h in range(n):
            col = [self.A[r][h] for r in range(n)]
            if any(v < 0 for v in col) or sum(col) != 1:
                raise Rejected(f"instance.A: column {h} is not a probability distribution")
            for v in range(self.M):
                col = [self.W[x][v][h] for x in range(self.m)]
                if any(c < 0 for c in col) or sum(col) != 1:
                    raise Rejected(f"instance.W: column (m={v}, h={h}) is not a probability distribution")
        for name, vec in (("pi0", self.pi0), ("pM", self.pM)):
            if any(v < 0 for v in vec) or sum(vec) != 1:
                raise Rejected(f"instance.{name} is not a probability distribution")
        self.L = len(self.configs) * n

    def cell(self, h):
        return h // self.S

    def lifted_emission(self, z):
        """``eta(e(z))``: ``W[z, m_j, (j, s)]`` on lifted state ``(m_1..m_N, (j, s))``."""
        return [self.W[z][c[self.cell(h)]][h] for c in self.configs for h in range(self.n)]

    def step(self, vec):
        """``Atil v``: the syntax chain moves, the memory stays."""
        out = []
        for c in range(len(self.configs)):
            block = vec[c * self.n:(c + 1) * self.n]
            out += [sum(self.A[i][h] * block[h] for h in range(self.n) if block[h]) for i in range(self.n)]
        return out

    def back(self, beta, weights):
        """``Atil^T (weights ⊙ beta)``."""
        out = []
        for c in range(len(self.configs)):
            wb = [weights[c * self.n + i] * beta[c * self.n + i] for i in range(self.n)]
            out += [sum(self.A[i][h] * wb[i] for i in range(self.n) if wb[i]) for h in range(self.n)]
        return out

    def messages(self, inputs):
        """``(joint at H_0, [tau_1..tau_t])`` for lifted input embeddings ``v_1..v_t``:
        ``tau_i = pre_i ⊙ beta_i`` with ``pre_i`` the forward message into position ``i`` (all
        other inputs applied) and ``beta_i`` the backward message out of it."""
        start = [self.pM[c] * self.pi0[h] for c in range(len(self.configs)) for h in range(self.n)]
        backs = [[Fraction(1)] * self.L]
        for v in reversed(inputs):
            backs.append(self.back(backs[-1], v))
        backs.reverse()                          # backs[i] = beta after position i (0 = H_0)
        joint = [p * b for p, b in zip(start, backs[0])]
        taus, alpha = [], start
        for i, v in enumerate(inputs):
            pre = self.step(alpha)
            taus.append([p * b for p, b in zip(pre, backs[i + 1])])
            alpha = [p * w for p, w in zip(pre, v)]
        return joint, taus

    def phi(self, w):
        """Reverse lifting: ``phi(w)[(m, h)] = |M|^-(N-1) sum_{c: c_j(h) = m} w[(c, h)]``."""
        out = [Fraction(0)] * (self.M * self.n)
        for ci, c in enumerate(self.configs):
            for h in range(self.n):
                if w[ci * self.n + h]:
                    out[c[self.cell(h)] * self.n + h] += w[ci * self.n + h]
        scale = Fraction(1, self.M ** (self.N - 1))
        return [v * scale for v in out]

    def gbar(self, tau):
        """``Gbar = W phi(tau) / ||phi(tau)||_1`` over tokens (0 when the norm is 0)."""
        p = self.phi(tau)
        norm = sum(p)
        if norm == 0:
            return [Fraction(0)] * self.m
        return [sum(self.W[z][v][h] * p[v * self.n + h] for v in range(self.M) for h in range(self.n)
                    if p[v * self.n + h]) / norm for z in range(self.m)]

    def flat_emission(self, z):
        """``e(z)`` over ``(m, h)``, ``m`` major."""
        return [self.W[z][v][h] for v in range(self.M) for h in range(self.n)]

    def task_margin(self, joint):
        """``mu . P[M_j* | x]`` (0 when ``Pr(x) = 0``)."""
        total = sum(joint)
        if total == 0:
            return Fraction(0)
        return sum(self.mu[c[self.j]] * joint[ci * self.n + h] for ci, c in enumerate(self.configs)
                   for h in range(self.n) if joint[ci * self.n + h]) / total


def _check_nondegeneracy(inst, theorem, H_star):
    """``H* = {j*} x S*`` with the columns ``W_(m,h)`` (``m in M'``, ``h in H*``) independent and
    their span meeting the other relevant columns' span only in 0 (Assumption 4.2 with
    ``M' = M``; 4.5 / C.5 with ``M' = supp(mu)``)."""
    if any(isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < inst.n for h in H_star):
        raise Unreadable("witness.H_star: expected hidden states in 0..|H|-1")
    if any(inst.cell(h) != inst.j for h in H_star):
        raise Rejected(f"witness.H_star: {H_star} is not inside the target cell {inst.j}")
    M_all = list(range(inst.M))
    M_rec = M_all if theorem == "4.3" else [v for v in M_all if inst.mu[v] != 0]
    col = lambda v, h: [inst.W[x][v][h] for x in range(inst.m)]
    U = [col(v, h) for h in sorted(set(H_star)) for v in M_rec]
    rest = [col(v, h) for h in range(inst.n) if h not in H_star
            for v in (M_rec if inst.cell(h) == inst.j else M_all)]
    name = {"4.3": "4.2", "4.6": "4.5", "C.6": "C.5"}[theorem]
    rU, rV = _rank(U), _rank(rest)
    if rU != len(U):
        raise Rejected(f"Assumption {name}: the columns W_(m,h), h in H* = {H_star}, are not independent "
                       f"(rank {rU} of {len(U)})")
    if _rank(U + rest) != rU + rV:
        raise Rejected(f"Assumption {name}: the span of the H* = {H_star} columns meets the other columns' span")


def _check_memory(cert, theorem, verdict):
    inst = MemoryInstance(_field(cert, "instance", "certificate"))
    if verdict not in ("verified", "refuted"):
        raise Unreadable(f"verdict {verdict!r}: a memory-theorem certificate is verified or refuted")
    w = _field(cert, "witness", "certificate")
    n, X = inst.n, inst.m
    q = _vec(_field(w, "q", "witness"), n + 1, "witness.q")
    K = _mat(_field(w, "Theta_K", "witness"), n + 1, X, "witness.Theta_K")
    beta_rows = _field(w, "beta", "witness")
    if not isinstance(beta_rows, list) or not beta_rows:
        raise Unreadable("witness.beta: expected at least one row of |H| + 1 rationals")
    beta = _mat(beta_rows, len(beta_rows), n + 1, "witness.beta")
    V = _mat(_field(w, "Theta_V", "witness"), inst.M * n, X, "witness.Theta_V")
    b = _vec(_field(w, "b", "witness"), inst.M * n, "witness.b")
    u = _field(w, "u", "witness")
    if (u is None) != (theorem == "4.3"):
        raise Rejected("witness.u: Theorem 4.3 reads no prompt; Theorems 4.6 and C.6 need one")
    if u is not None:
        u = _vec(u, inst.L, "witness.u")
        if any(not 0 <= v <= 1 for v in u):
            raise Rejected("witness.u: a prompt entry is outside [0, 1]")
    H_star = _field(w, "H_star", "witness")
    if not isinstance(H_star, list):
        raise Unreadable("witness.H_star: expected a list of hidden states")
    _check_nondegeneracy(inst, theorem, H_star)
    if _field(cert, "covers", "certificate") != "listed":
        raise Unreadable("covers: a memory-theorem certificate covers the listed sequences")
    rows = _field(cert, "sequences", "certificate")
    if not isinstance(rows, list):
        raise Unreadable("sequences: expected a list")
    outside = [0 if h in H_star else 1 for _ in inst.configs for h in range(n)]
    disagreements, in_R = 0, 0
    for k, row in enumerate(rows):
        where = f"sequences[{k}]"
        seq = _tokens(_field(row, "x", where), X, f"{where}.x")
        plain = [inst.lifted_emission(z) for z in seq]
        joint, taus = inst.messages(plain)
        possible = sum(joint) > 0
        Z = [i for i, t in enumerate(taus) if possible and sum(t) > 0
             and sum(o * v for o, v in zip(outside, t)) == 0]
        member = bool(Z)
        if _field(row, "in_R", where) is not member or _field(row, "Z", where) != Z:
            raise Rejected(f"{where}: x in R is {member} with positions Z = {Z} (tau_i supported on H*), "
                           f"not the printed {row.get('in_R')}, {row.get('Z')}")
        if not member:
            continue
        in_R += 1
        star = inst.task_margin(joint)
        if u is None:
            head_taus, values = taus, [inst.flat_emission(z) for z in seq]
        else:
            head_taus = inst.messages([u] + plain)[1]
            values = [inst.phi(u)] + [inst.flat_emission(z) for z in seq]
        scores, outs = [], []
        for i, (tau, v) in enumerate(zip(head_taus, values)):
            g = inst.gbar(tau)
            brow = beta[min(i, len(beta) - 1)]
            scores.append(sum(q[r] * (sum(K[r][z] * g[z] for z in range(X)) + brow[r]) for r in range(n + 1)))
            outs.append(sum(b[r] * sum(V[r][z] * g[z] for z in range(X)) * v[r] for r in range(inst.M * n)))
        top = max(scores)
        attended = [i for i, s in enumerate(scores) if s == top]
        head = sum(outs[i] for i in attended) / len(attended)
        if _q(_field(row, "task_margin", where), f"{where}.task_margin") != star:
            raise Rejected(f"{where}: task margin mu . P[M_j* | x] is {star}, not {row['task_margin']}")
        if _q(_field(row, "head_output", where), f"{where}.head_output") != head:
            raise Rejected(f"{where}: attention output is {head}, not {row['head_output']}")
        if _field(row, "attended", where) != attended:
            raise Rejected(f"{where}: the head attends to {attended}, not {row['attended']}")
        if _field(row, "F_star", where) != _label(star) or _field(row, "F", where) != _label(head):
            raise Rejected(f"{where}: labels F*(x) = {_label(star)}, F(x) = {_label(head)} are not the printed "
                           f"{row.get('F_star')}, {row.get('F')}")
        if _label(star) != _label(head):
            if verdict == "verified":
                raise Rejected(f"{where}: F(x) = {_label(head)} disagrees with F*(x) = {_label(star)} on x = {seq} in R")
            disagreements += 1
    if verdict == "refuted" and disagreements == 0:
        raise Rejected("refuted: no listed sequence in R has F(x) != F*(x)")
    return f"accepted: Theorem {theorem} {verdict} on the {len(rows)} listed sequences ({in_R} in R, recomputed)"


def check(cert) -> str:
    """Re-derive every claim of a parsed certificate; return a one-line summary.

    Raises:
        Rejected: a claim fails. Unreadable: a field is missing or malformed.
    """
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise Unreadable(f"not a {FORMAT} file (field \"format\")")
    if cert.get("version") != VERSION:
        raise Unreadable(f"version {cert.get('version')!r}: this checker reads version {VERSION}")
    theorem = _field(cert, "theorem", "certificate")
    verdict = _field(cert, "verdict", "certificate")
    if theorem in ("4.3", "4.6", "C.6"):
        return _check_memory(cert, theorem, verdict)
    if theorem not in ("3.3", "3.6"):
        raise Unreadable(f"theorem {theorem!r}: this checker re-derives Theorems 3.3, 3.6, 4.3, 4.6 and C.6")
    inst = Instance(_field(cert, "instance", "certificate"))
    if verdict == "assumptions-fail":
        certs = _field(cert, "motzkin", "certificate")
        if not isinstance(certs, list) or not certs:
            raise Unreadable("motzkin: expected a nonempty list of certificates")
        for k, c in enumerate(certs):
            _check_motzkin(inst, c, k)
        return f"accepted: {len(certs)} Motzkin certificate(s) that no linear head fits F* (Theorem {theorem})"
    if verdict not in ("verified", "refuted"):
        raise Unreadable(f"verdict {verdict!r}: expected verified, refuted or assumptions-fail")
    w = _field(cert, "witness", "certificate")
    b = _vec(_field(w, "b", "witness"), inst.m, "witness.b")
    u = None if theorem == "3.3" else _vec(_field(w, "u", "witness"), inst.n, "witness.u")
    if u is not None and any(not 0 <= v <= 1 for v in u):
        raise Rejected("witness.u: a prompt entry is outside [0, 1]")
    covers = _field(cert, "covers", "certificate")
    if covers == "identity":
        if verdict != "verified":
            raise Rejected("covers: an identity covers every sequence, so the verdict cannot be refuted")
        pre = _check_identity(inst, cert, theorem, b, u)
    elif covers == "listed":
        pre = inst.pre(theorem, u)
    else:
        raise Unreadable(f"covers {covers!r}: expected \"identity\" or \"listed\"")
    count = _check_sequences(inst, cert, theorem, b, pre, verdict)
    scope = ("every sequence with Pr(x) > 0, by the identity" if covers == "identity"
             else f"the {count} listed sequences")
    return f"accepted: Theorem {theorem} {verdict} on {scope} ({count} sequences recomputed)"


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: python -m headprompt.certcheck FILE   (exit 0 accepted, 1 rejected, 2 unreadable)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    try:
        with open(args[0], encoding="utf-8") as fh:
            cert = json.load(fh)
        print(check(cert))
        return 0
    except Rejected as exc:
        print(f"rejected: {exc}")
        return 1
    except (OSError, ValueError, Unreadable, RecursionError) as exc:
        print(f"unreadable: {args[0]}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
