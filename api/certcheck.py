"""Re-check a ``verify theorem --certificate`` file with the Python standard library alone.

    python -m headprompt.certcheck FILE        (or: python api/certcheck.py FILE)

Exit 0: every claim was re-derived from the instance and holds. Exit 1: a claim fails (one
line names the first). Exit 2: the file is unreadable or not a certificate. Nothing printed in
the certificate is trusted: the checker recomputes ``P[H_0 | x]``, ``F*(x)``, the head's input
``G`` (Theorem 3.3: ``G_1(∅, x)``; Theorem 3.6: ``Gbar_2(u, e(∅), e(x))``) by its own
forward-backward pass in ``fractions.Fraction``, and compares. The format is documented field
by field in docs/certificates.md. Conventions (SPEC section 1): ``A[h', h] = P[H' = h' | H = h]``
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
    if theorem not in ("3.3", "3.6"):
        raise Unreadable(f"theorem {theorem!r}: this checker re-derives Theorems 3.3 and 3.6")
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
