"""Re-check a headprompt certificate with the Python standard library alone.

    python -m headprompt.certcheck FILE        (or: python headprompt/certcheck.py FILE)
    python -m headprompt.certcheck --separation FILE FILE   (the two halves of a separation:
        each checked in full, and both about the same instance; :func:`check_separation`)

Exit 0: accepted, every claim re-derived from the instance (the line says exactly what is
proven). Exit 1: rejected (one line naming the first claim that fails; ``rejected: vacuous: ...``
when a claim would hold only vacuously). Exit 2: unreadable (not a regular file, over a size
limit, not strict JSON, a missing or malformed field). Nothing printed in the certificate is
trusted: the checker recomputes every posterior, label, feature, rank, left inverse, kernel
vector and support-graph property it relies on.

What is checked (docs/certificates.md has the field-by-field format and the proofs):

- The theorem id fixes the claim's shape: Theorems 3.3 and 3.6 need a vanilla HMM
  (``kind: "hmm"``), 4.3, 4.6 and C.6 a memory-augmented HMM, 4.6 with one cell. 3.3 reads
  ``G_1(∅, x)``; 3.6 reads ``Gbar_2(u, e(∅), e(x))`` with the certificate's prompt
  ``u in [0, 1]^|H|``.
- ``claim: "theorem"``: the verdict ``verified`` (the witness computes ``F*`` on every sequence
  with ``Pr(x) > 0``, by an exact identity, or on the listed sequences), ``refuted`` (the witness
  disagrees with ``F*`` on a listed sequence) or ``assumptions-fail`` (an assumption of the
  theorem fails, with evidence). Every assumption of the theorem is in ``assumptions`` and is
  re-derived: 3.1 (a left inverse of ``W``, or a kernel vector), 3.2 and 4.4 (recomputed from
  the support of ``A`` and ``pi0``), 3.5 (``B``, ``H*`` and a left inverse of ``W[:, H*]``, or a
  blocking state with kernel vectors), 4.2/4.5/C.5 (exact ranks, or per-state evidence).
- ``claim: "no-linear-head"``: Motzkin's transposition theorem on recomputed features: no
  linear head on the theorem's features fits ``F*`` on the listed sequences (for the one prompt
  given, for 3.6). ``claim: "no-prompt-and-head"`` (3.6): no prompt and head at all.

Conventions (SPEC section 1): ``A[h'][h] = P[H' = h' | H = h]``, ``W[x][h] = P[X = x | H = h]``,
``pi0 = P[H_0]``, ``P[H_1] = A pi0``; a binary task is ``F*(x) = 1(mu . P[H_0 | x] >= 0)``, a task
with ``k >= 2`` rows ``F*(x) = argmax_c mu_c . P[H_0 | x]`` (ties to the largest class); heads
likewise. Arithmetic is on integers: each matrix is scaled by one common denominator.

This file imports only the standard library, so it can be audited and run without headprompt.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from fractions import Fraction

__all__ = ["check", "check_file", "check_separation", "main", "loads", "Rejected", "Vacuous", "Unreadable", "FORMAT", "VERSION",
           "LIMITS", "backward_cost", "memory_cost", "digits_of", "limb_work", "parse_work"]

FORMAT = "headprompt-certificate"
VERSION = 2

LIMITS = {
    "file_bytes": 64 * 2 ** 20,        # the largest certificate verify writes is about 11 MB
    "number_digits": 200_000,          # digits of one integer (numerator or denominator)
    "digit_work": 2 * 10 ** 11,        # sum of digits^2 over all digit runs of the file (int(str) is
                                       # quadratic: about 1.2e-11 s per unit), counted before parsing: < 3 s
    "states": 4096,                    # |H| (vanilla), |M| |H| (memory)
    "tokens": 4096,                    # |X|
    "classes": 64,
    "cells": 64,
    "lifted_states": 4096,             # |M|^N |H| of a memory instance
    "rows": 20_000,                    # listed sequences
    "length": 100_000,                 # tokens of one sequence
    "steps": 3 * 10 ** 8,              # vanilla backward passes: sum_x |x| (nonzeros of A + |H|)
    "limb_work": 10 ** 10,             # the same weighted by the sizes of the integers multiplied (in
                                       # 9-digit limbs, schoolbook): about 4 s on a shared core
    "memory_steps": 3 * 10 ** 7,       # memory: sum_x (|x| + 1) x lifted states x (|H| + 1) x 3
    "matrix_work": 2 * 10 ** 8,        # one product or elimination: rows x columns x inner size
}
"""Every size is checked against these before any work; over a limit is exit 2 (unreadable)."""

THEOREMS = {"3.3": ("hmm", ("3.1", "3.2")), "3.6": ("hmm", ("3.2", "3.5")),
            "4.3": ("memory-hmm", ("3.2", "4.2")), "4.6": ("memory-hmm", ("4.4", "4.5")),
            "C.6": ("memory-hmm", ("4.4", "C.5"))}
"""theorem -> (instance kind, its assumptions), as the paper states them."""

FEATURES = {"3.3": "G_1(∅, x)", "3.6": "Gbar_2(u, e(∅), e(x))", "4.3": "G_1(∅, x) of the memory-augmented HMM",
            "4.6": "G_1(∅, x) of the memory-augmented HMM", "C.6": "G_1(∅, x) of the memory-augmented HMM"}


_ORIGIN = {"construction": "the paper's construction, as its writer says", "given": "a given witness"}


class Rejected(Exception):
    """A claim of the certificate does not hold (the message names it). Exit 1."""


class Vacuous(Rejected):
    """The claim would hold only vacuously (nothing it could have failed on). Exit 1."""


class Unreadable(Exception):
    """The certificate cannot be read: over a limit, not strict JSON, a field missing or malformed. Exit 2."""


# ---------------------------------------------------------------- strict reading

_RATIONAL = re.compile(r"(-?)(0|[1-9][0-9]*)(?:/([1-9][0-9]*))?", re.ASCII)
"""Canonical numerals only: no leading zeros, no ``+``, no spaces; ``-0``, ``p/1`` and fractions
not in lowest terms are refused after the match (``str`` of a ``Fraction`` is canonical)."""

_LONG_DIGITS = re.compile(rb"[0-9]{64,}")
_ASCII_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u00[2-7][0-9a-fA-F]")
"""A ``\\u`` escape of a printable ASCII character (``"\\u0031"`` for ``"1"``): no JSON writer
needs one, and it would let a number or a name be spelled two ways."""


class _Reader:
    """Strict JSON: no duplicate keys, no floats or constants, bounded digits and nesting."""

    def __init__(self):
        self.work = 0

    def digits(self, n: int, where: str) -> None:
        if n > LIMITS["number_digits"]:
            raise Unreadable(f"{where}: a number of {n} digits is over the limit of {LIMITS['number_digits']}")
        self.work += n * n
        if self.work > LIMITS["digit_work"]:
            raise Unreadable("the numbers of this file are over the total digit limit")

    def parse_int(self, text: str) -> int:
        if text == "-0":
            raise Unreadable("the JSON integer -0 is not canonical (write 0)")
        self.digits(len(text.lstrip("-")), "a JSON integer")
        return int(text)

    @staticmethod
    def parse_float(text: str):
        raise Unreadable(f"the JSON number {text[:40]} is not an integer: rationals are strings like \"3/7\"")

    @staticmethod
    def parse_constant(text: str):
        raise Unreadable(f"{text} is not a number")

    @staticmethod
    def pairs(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise Unreadable(f"duplicate key {key!r}")
            out[key] = value
        return out


_READER = _Reader()


def parse_work(data: bytes) -> int:
    """An upper bound on the digits² work of parsing every number in ``data``: each run of
    64 or more ASCII digits counts its length squared, shorter runs 64 per digit."""
    long = sum((m.end() - m.start()) ** 2 for m in _LONG_DIGITS.finditer(data))
    return long + 64 * sum(data.count(d) for d in b"0123456789")


def loads(data: bytes | str):
    """Parse a certificate's bytes strictly (ASCII JSON; see :class:`_Reader`); the digits of
    the whole file are bounded before any number is parsed."""
    global _READER
    if isinstance(data, str):
        try:
            data = data.encode("ascii")
        except UnicodeEncodeError:
            raise Unreadable("not ASCII: a certificate is ASCII JSON (verify writes it so)") from None
    if len(data) > LIMITS["file_bytes"]:
        raise Unreadable(f"over {LIMITS['file_bytes']} bytes")
    escape = _ASCII_ESCAPE.search(data)
    if escape:
        shown = "\\u" + escape.group()[-4:].decode()
        raise Unreadable(f"the escape {shown} spells a printable ASCII character: write the character itself")
    work = parse_work(data)
    if work > LIMITS["digit_work"]:
        raise Unreadable(f"its numbers need {work} digit² units of parsing, over the limit of {LIMITS['digit_work']} "
                         "(the sum over digit runs of their length squared)")
    try:
        data = data.decode("ascii")
    except UnicodeDecodeError:
        raise Unreadable("not ASCII: a certificate is ASCII JSON (verify writes it so)") from None
    _READER = _Reader()
    try:
        return json.loads(data, object_pairs_hook=_Reader.pairs, parse_int=_READER.parse_int,
                          parse_float=_Reader.parse_float, parse_constant=_Reader.parse_constant)
    except RecursionError:
        raise Unreadable("nesting too deep") from None
    except ValueError as exc:
        raise Unreadable(f"not JSON: {str(exc)[:200]}") from None


def read_file(path: str):
    """The parsed certificate at ``path``: a regular file, at most ``LIMITS["file_bytes"]``."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise Unreadable(exc.strerror or "cannot stat") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable("not a regular file")
    if info.st_size > LIMITS["file_bytes"]:
        raise Unreadable(f"{info.st_size} bytes, over the limit of {LIMITS['file_bytes']}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Unreadable(exc.strerror or "cannot open") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable("not a regular file")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > LIMITS["file_bytes"]:
                raise Unreadable(f"over the limit of {LIMITS['file_bytes']} bytes")
            chunks.append(chunk)
    finally:
        os.close(fd)
    return loads(b"".join(chunks))


def digits_of(bound: int) -> int:
    """Decimal digits of ``bound`` (an upper estimate, from its bit length)."""
    return bound.bit_length() * 30103 // 100000 + 1


def limb_work(lengths, per: int, growth: int) -> int:
    """Schoolbook work, in products of 9-digit limbs, of ``per`` multiply-adds per position of
    each sequence, where the integers at depth ``t`` have about ``t * growth`` digits and are
    multiplied by entries of at most ``growth`` digits: ``sum_t (t growth / 9 + 1)(growth / 9 + 2)``
    per multiply-add (the product grows with the digits of both factors; the ``+ 2`` counts the
    addition and the allocation, which dominate for small entries: measured, 1e10 of these take
    3.8 s with 3000-digit entries and 4.3 s with 2-digit ones on a shared core)."""
    entry = growth // 9 + 2
    return sum(per * entry * (growth * (t * (t + 1) // 2) // 9 + t) for t in lengths)


def _over_limb_work(lengths, per, growth) -> str:
    work = limb_work(lengths, per, growth)
    if work > LIMITS["limb_work"]:
        return (f"{work} limb products (integers of up to {max(lengths, default=0) * growth} digits times entries "
                f"of {growth} digits), over the limit of {LIMITS['limb_work']}")
    return ""


def backward_cost(lengths, nonzeros: int, states: int, growth: int) -> str:
    """What over the limits the vanilla backward passes of sequences of these lengths need
    (``""`` when within): steps, and steps weighted by the sizes of the integers multiplied (a
    step at depth ``t`` multiplies numbers of about ``t * growth`` digits by entries of up to
    ``growth`` digits; ``growth = log10(DA DW |H|)``)."""
    per = nonzeros + states
    steps = sum(lengths) * per
    if steps > LIMITS["steps"]:
        return f"{steps} backward steps, over the limit of {LIMITS['steps']}"
    return _over_limb_work(lengths, per, growth)


def memory_cost(lengths, lifted: int, states: int, growth: int = 1, tokens: int = 1) -> str:
    """The same for a memory-augmented HMM's lifted chain (``""`` when within); ``growth`` is
    ``log10`` of the denominators of ``A`` and ``W`` times the lifted states. Besides the
    backward steps, every position ``i`` of a length-``t`` row multiplies a forward message of
    ``i g`` digits by a backward one of ``(t - i) g`` digits (``tau_i``, per lifted state, twice
    with a prompt) and reduces ``|X| (|H| + 1)`` fractions of about ``t g`` digits (``Gbar``, the
    attention scores; gcd is quadratic): ``t^3 / 3 (g / 9 + 1)^2 (2 lifted + |X| (|H| + 1))``."""
    per = lifted * (states + 1) * 3
    steps = sum(t + 1 for t in lengths) * per
    if steps > LIMITS["memory_steps"]:
        return f"about {steps} lifted-chain steps, over the limit of {LIMITS['memory_steps']}"
    over = _over_limb_work([t + 1 for t in lengths], per, growth)
    if over:
        return over
    cubic = sum((t + 1) ** 3 // 3 for t in lengths) * (growth // 9 + 1) ** 2 * (2 * lifted + tokens * (states + 1))
    if cubic > LIMITS["limb_work"]:
        return (f"{cubic} limb products for the forward-backward products and fractions at every position "
                f"(integers of up to {max(lengths, default=0) * growth} digits), over the limit of {LIMITS['limb_work']}")
    return ""


def matrix_work(rows: int, cols: int, inner: int, what: str) -> None:
    """Refuse a matrix product or elimination over the work limit."""
    if rows * cols * inner > LIMITS["matrix_work"]:
        raise Unreadable(f"{what} needs {rows * cols * inner} operations, over the limit of {LIMITS['matrix_work']}")


def _field(d, key, where):
    if not isinstance(d, dict) or key not in d:
        raise Unreadable(f"{where}: missing field {key!r}")
    return d[key]


def _q(text, where) -> Fraction:
    """One rational from a string ``"-3/7"`` (ASCII digits only) or a JSON integer."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise Unreadable(f"{where}: expected a rational as a string like \"3/7\", found {str(text)[:40]!r}")
    if isinstance(text, int):
        return _ZERO if text == 0 else Fraction(text)
    if text == "0":
        return _ZERO
    match = _RATIONAL.fullmatch(text)
    if match is None:
        raise Unreadable(f"{where}: {text[:40]!r} is not a rational \"p\" or \"p/q\" (ASCII digits)")
    sign, num, den = match.groups()
    if sign and num == "0":
        raise Unreadable(f"{where}: {text[:40]!r} is not canonical (write 0)")
    _READER.digits(len(num), where)
    if den is None:
        return Fraction(-int(num) if sign else int(num))
    _READER.digits(len(den), where)
    d = int(den)
    value = Fraction(-int(num) if sign else int(num), d)
    if value.denominator != d or d == 1:
        raise Unreadable(f"{where}: {text[:40]!r} is not in lowest terms with a denominator above 1 "
                         f"(write {value})"[:300])
    return value


_ZERO = Fraction(0)


def _list(v, n, where, what="entries"):
    if not isinstance(v, list) or (n is not None and len(v) != n):
        raise Unreadable(f"{where}: expected a list of {n} {what}")
    return v


def _vec(v, n, where):
    return [_q(t, f"{where}[{i}]") for i, t in enumerate(_list(v, n, where, "rationals"))]


def _mat(m, rows, cols, where):
    return [_vec(r, cols, f"{where}[{i}]") for i, r in enumerate(_list(m, rows, where, "rows"))]


def _size(v, where, limit, low=1):
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= limit:
        raise Unreadable(f"{where}: expected an integer in {low}..{limit}")
    return v


def _indices(v, n, where):
    """A list of distinct indices in ``0..n-1`` (sorted on return)."""
    v = _list(v, None, where, "indices")
    if any(isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < n for h in v) or len(set(v)) != len(v):
        raise Unreadable(f"{where}: expected distinct indices in 0..{n - 1}")
    return sorted(v)


def _bool(v, where):
    if not isinstance(v, bool):
        raise Unreadable(f"{where}: expected true or false")
    return v


def _tokens(seq, m, where):
    if not isinstance(seq, list) or not seq or len(seq) > LIMITS["length"]:
        raise Unreadable(f"{where}: expected a nonempty list of at most {LIMITS['length']} tokens")
    for z in seq:
        if isinstance(z, bool) or not isinstance(z, int) or not 0 <= z < m:
            raise Unreadable(f"{where}: expected tokens in 0..{m - 1}")
    return tuple(seq)


def _rows(v, where):
    v = _list(v, None, where, "rows")
    if len(v) > LIMITS["rows"]:
        raise Unreadable(f"{where}: {len(v)} rows, over the limit of {LIMITS['rows']}")
    return v


def _keys(d, allowed, where):
    if not isinstance(d, dict):
        raise Unreadable(f"{where}: expected an object")
    extra = sorted(set(d) - set(allowed))
    if extra:
        raise Unreadable(f"{where}: unknown field {extra[0]!r}")


# ---------------------------------------------------------------- exact integer linear algebra

def scaled(values):
    """``(ints, D)`` with ``values[i] = ints[i] / D``, ``D`` the lcm of the denominators."""
    D = 1
    for v in values:
        if v.denominator != 1:
            D = math.lcm(D, v.denominator)
            if D.bit_length() > LIMITS["number_digits"] * 4:
                raise Unreadable("a common denominator is over the digit limit")
    return [v.numerator * (D // v.denominator) for v in values], D


def scaled_rows(rows):
    flat, D = scaled([v for r in rows for v in r])
    width = len(rows[0]) if rows else 0
    return [flat[i * width:(i + 1) * width] for i in range(len(rows))], D


def rank(columns) -> int:
    """Rank of rational column vectors (fraction-free elimination on integers)."""
    rows = [scaled(c)[0] for c in columns if any(c)]
    r = 0
    width = len(rows[0]) if rows else 0
    for col in range(width):
        pivot = next((i for i in range(r, len(rows)) if rows[i][col]), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        p = rows[r]
        for i in range(r + 1, len(rows)):
            f = rows[i][col]
            if f:
                row = [p[col] * rows[i][k] - f * p[k] for k in range(width)]
                g = math.gcd(*row)
                rows[i] = [v // g for v in row] if g > 1 else row
        r += 1
    return r


def left_inverse_ok(L, columns) -> bool:
    """``L C = I`` exactly, for ``C`` given by its columns (rationals)."""
    if len(L) != len(columns):
        return False
    Li, DL = scaled_rows(L)
    Ci, DC = scaled_rows(columns)
    one = DL * DC
    for a, row in enumerate(Li):
        for b, col in enumerate(Ci):
            if sum(x * y for x, y in zip(row, col) if x) != (one if a == b else 0):
                return False
    return True


# ---------------------------------------------------------------- support graph (3.2, 4.4)

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


# ---------------------------------------------------------------- labels

def label(scores, binary: bool) -> int:
    """``1(s >= 0)`` for one binary score; else the argmax with ties to the largest class."""
    if binary:
        return 1 if scores[0] >= 0 else 0
    top = max(scores)
    return max(c for c, s in enumerate(scores) if s == top)


def task_rows(value, n, where):
    """``mu``: a vector (binary task) or ``k >= 2`` rows. Returns ``(rows, binary)``."""
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        if not 2 <= len(value) <= LIMITS["classes"]:
            raise Unreadable(f"{where}: a task with several classes has 2..{LIMITS['classes']} rows")
        return _mat(value, len(value), n, where), False
    return [_vec(value, n, where)], True


def _stochastic(ints, D, where):
    if any(v < 0 for v in ints) or sum(ints) != D:
        raise Rejected(f"{where} is not a probability distribution")



# ---------------------------------------------------------------- vanilla HMMs (3.3, 3.6)

class Vanilla:
    """A vanilla HMM (``kind: "hmm"``) read from ``instance``, checked to be stochastic, with
    every matrix scaled to integers by one common denominator (``A = Aint / DA`` and so on)."""

    def __init__(self, block):
        _keys(block, ("kind", "A", "W", "pi0", "mu"), "instance")
        A = _list(_field(block, "A", "instance"), None, "instance.A", "rows")
        n = len(A)
        if not 1 <= n <= LIMITS["states"]:
            raise Unreadable(f"instance.A: expected 1..{LIMITS['states']} states")
        W = _list(_field(block, "W", "instance"), None, "instance.W", "rows")
        m = len(W)
        if not 1 <= m <= LIMITS["tokens"]:
            raise Unreadable(f"instance.W: expected 1..{LIMITS['tokens']} tokens")
        self.n, self.m = n, m
        self.A = _mat(A, n, n, "instance.A")
        self.W = _mat(W, m, n, "instance.W")
        self.pi0 = _vec(_field(block, "pi0", "instance"), n, "instance.pi0")
        self.mu, self.binary = task_rows(_field(block, "mu", "instance"), n, "instance.mu")
        Aint, self.DA = scaled_rows(self.A)
        self.Wint, self.DW = scaled_rows(self.W)
        self.pint, self.Dp = scaled(self.pi0)
        for h in range(n):
            _stochastic([Aint[i][h] for i in range(n)], self.DA, f"instance.A column {h}")
            _stochastic([self.Wint[x][h] for x in range(m)], self.DW, f"instance.W column {h}")
        _stochastic(self.pint, self.Dp, "instance.pi0")
        self.cols = [[(i, Aint[i][h]) for i in range(n) if Aint[i][h]] for h in range(n)]
        self.support = [[i for i, _ in col] for col in self.cols]          # h -> states it moves to
        self.nnz = sum(len(c) for c in self.cols)
        muint, self.Dmu = scaled_rows(self.mu)
        self.R = [[c[h] * self.pint[h] for h in range(n)] for c in muint]   # mu_c ⊙ pi0, times Dmu Dp
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
        total = sum(p * b for p, b in zip(self.pint, beta) if p)
        return [sum(r * b for r, b in zip(row, beta) if r) for row in self.R], self.Dmu * total

    def columns(self, states):
        return [[self.W[x][h] for x in range(self.m)] for h in states]


def _same(printed, num, den, where, what):
    """The printed rational equals ``num / den`` (``den > 0``), or ``0`` when ``den = 0``."""
    p = _q(printed, where)
    if (den == 0 and p != 0) or (den != 0 and p.numerator * den != num * p.denominator):
        value = Fraction(0) if den == 0 else Fraction(num, den)
        shown = str(value) if len(str(value.denominator)) < 60 else f"a rational with a {len(str(value.denominator))}-digit denominator"
        raise Rejected(f"{where}: {what} is {shown}, not the printed value")


def _same_ints(printed, values) -> bool:
    """A printed list of integers (booleans are not integers) equal to ``values``."""
    return (isinstance(printed, list) and len(printed) == len(values)
            and all(type(p) is int and p == v for p, v in zip(printed, values)))


def _labels_printed(row, star, got, where):
    for key, value in (("F_star", star), ("F", got)):
        v = _field(row, key, where)
        if isinstance(v, bool) or not isinstance(v, int):     # a type error, not a false claim
            raise Unreadable(f"{where}.{key}: expected a JSON integer label, found {json.dumps(v)[:20]}")
        if v != value:
            raise Rejected(f"{where}: labels: {key} is {value}, not the printed {v}")


def _assumption_names(block, theorem):
    """The theorem's assumptions present in ``block``; another theorem's is a false claim."""
    names = THEOREMS[theorem][1]
    if isinstance(block, dict):
        foreign = sorted(set(block) - set(names))
        if foreign:
            raise Rejected(f"assumptions: {foreign[0]} is not an assumption of Theorem {theorem} "
                           f"(its assumptions are {', '.join(names)})")
    _keys(block, names, "assumptions")
    return [name for name in names if name in block]


def _vanilla_assumptions(inst, block, theorem):
    """Re-derive each assumption of the theorem present in ``block`` from its evidence.
    Returns ``{name: holds}``."""
    names = _assumption_names(block, theorem)
    out = {}
    for name in names:
        where = f"assumptions.{name}"
        entry = _field(block, name, "assumptions")
        holds = _bool(_field(entry, "holds", where), f"{where}.holds")
        if name == "3.2":
            _keys(entry, ("holds", "why"), where)
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
        _keys(entry, ("holds", "left_inverse", "why"), where)
        matrix_work(inst.n, inst.n, inst.m, f"{where}: checking W† W = I")
        L = _mat(_field(entry, "left_inverse", where), inst.n, inst.m, f"{where}.left_inverse")
        if not left_inverse_ok(L, inst.columns(range(inst.n))):
            raise Rejected(f"{where}: left_inverse W† does not satisfy W† W = I")
        inst.evidence["3.1"] = (list(range(inst.n)), L)
        return
    _keys(entry, ("holds", "null_vector", "why"), where)
    v, _ = scaled(_vec(_field(entry, "null_vector", where), inst.n, f"{where}.null_vector"))
    if not any(v) or any(sum(w * a for w, a in zip(row, v)) for row in inst.Wint):
        raise Rejected(f"{where}: null_vector is not a nonzero v with W v = 0")


def _assumption_35(inst, entry, holds, where):
    supp_mu = {h for row in inst.mu for h in range(inst.n) if row[h]}
    if holds:
        _keys(entry, ("holds", "B", "H_star", "left_inverse", "why"), where)
        B = _indices(_field(entry, "B", where), inst.n, f"{where}.B")
        H_star = _indices(_field(entry, "H_star", where), inst.n, f"{where}.H_star")
        reach = sorted({g for h in B for g in inst.support[h]})
        if reach != H_star:
            raise Rejected(f"{where}: H* is not the one-step reach of B (that is {reach[:20]})")
        if not H_star:
            raise Vacuous(f"{where}: H* is empty (mu = 0), so Assumption 3.5 holds only vacuously")
        if not supp_mu <= set(H_star):
            raise Rejected(f"{where}: supp(mu) is not inside H*")
        matrix_work(len(H_star), len(H_star), inst.m, f"{where}: checking L W[:, H*] = I")
        L = _mat(_field(entry, "left_inverse", where), len(H_star), inst.m, f"{where}.left_inverse")
        if not left_inverse_ok(L, inst.columns(H_star)):
            raise Rejected(f"{where}: left_inverse does not satisfy L W[:, H*] = I")
        inst.evidence["3.5"] = (H_star, L, B)
        return
    _keys(entry, ("holds", "state", "null_vectors", "why"), where)
    s = _field(entry, "state", where)
    if isinstance(s, bool) or not isinstance(s, int) or s not in supp_mu:
        raise Rejected(f"{where}: state is not a state of supp(mu)")
    given = _list(_field(entry, "null_vectors", where), None, f"{where}.null_vectors")
    covered = set()
    for i, item in enumerate(given):
        w = f"{where}.null_vectors[{i}]"
        _keys(item, ("column", "v"), w)
        h = _field(item, "column", w)
        if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < inst.n or h in covered:
            raise Unreadable(f"{w}.column: expected a state not listed before")
        if s not in inst.support[h]:
            raise Rejected(f"{w}: column is not a state h with A[{s}][h] > 0")
        supp = inst.support[h]
        v, _ = scaled(_vec(_field(item, "v", w), len(supp), f"{w}.v"))
        if not any(v) or any(sum(row[g] * a for g, a in zip(supp, v)) for row in inst.Wint):
            raise Rejected(f"{w}: v is not a nonzero vector on supp(A[:, {h}]) with W v = 0")
        covered.add(h)
    missing = [h for h in range(inst.n) if s in inst.support[h] and h not in covered]
    if missing:
        raise Rejected(f"{where}: column {missing[0]} reaches state {s} but has no null vector")


def _state(held, theorem, via=None):
    """``("3.1 holds, 3.2 not certified", every assumption holds)``; ``via`` maps an assumption
    to how it was shown where that was not the certificate's own entry."""
    names = THEOREMS[theorem][1]
    via = via or {}
    text = ", ".join((f"{n} holds{f' ({via[n]})' if n in via else ''}" if held[n] else _fails(n, short=True))
                     if n in held else f"{n} not certified" for n in names)
    return text, all(held.get(n) is True for n in names)


_NONDEGENERACY = ("4.2", "4.5", "C.5")


def _fails(name, short=False):
    """What a failing assumption means: a non-degeneracy assumption (4.2, 4.5, C.5) holds
    trivially with ``H*`` empty, so its certified failure is that no nonempty ``H*`` works."""
    if name in _NONDEGENERACY:
        return f"no nonempty H* = {{j*}} x S* satisfies {'' if short else 'Assumption '}{name}"
    return f"{name} fails" if short else f"Assumption {name} fails"


def _failing(held):
    return "; ".join(_fails(name) for name, h in held.items() if not h)


def _motzkin_pattern(y, z, labels, where):
    if any(v < 0 for v in y + z):
        raise Rejected(f"{where}: y or z has a negative entry")
    if any(y[i] for i in range(len(y)) if labels[i] == 1) or any(z[i] for i in range(len(z)) if labels[i] == 0):
        raise Rejected(f"{where}: y must vanish on label-1 rows and z on label-0 rows")
    if not any(y):
        raise Rejected(f"{where}: y is all zero")


def _motzkin_rows(entry, m, where):
    seqs = [_tokens(s, m, f"{where}.sequences[{i}]")
            for i, s in enumerate(_rows(_field(entry, "sequences", where), f"{where}.sequences"))]
    if not seqs:
        raise Vacuous(f"{where}: no sequences")
    cert = _field(entry, "certificate", where)
    _keys(cert, ("y", "z"), f"{where}.certificate")
    y = _vec(_field(cert, "y", where), len(seqs), f"{where}.certificate.y")
    z = _vec(_field(cert, "z", where), len(seqs), f"{where}.certificate.z")
    return seqs, y, z


def _prompt(value, n, where):
    u = _vec(value, n, where)
    if any(not 0 <= v <= 1 for v in u):
        raise Rejected(f"{where}: a prompt entry is outside [0, 1]")
    return u


def vanilla_motzkin(inst, theorem, entry, where):
    """A no-linear-head certificate on the theorem's features; returns the claim proven."""
    _keys(entry, ("sequences", "labels", "certificate", "prompt"), where)
    if not inst.binary:
        raise Unreadable(f"{where}: Motzkin certificates are about binary tasks")
    seqs, y, z = _motzkin_rows(entry, inst.m, where)
    u = None
    if theorem == "3.3":
        if "prompt" in entry:
            raise Rejected(f"{where}: Theorem 3.3 reads G_1(∅, x); a prompt has no place in its certificate")
    else:
        if entry.get("prompt") is None:
            raise Rejected(f"{where}: Theorem 3.6 reads Gbar_2(u, e(∅), e(x)); the certificate names no prompt u")
        u = _prompt(entry["prompt"], inst.n, f"{where}.prompt")
        if not any(u):
            raise Vacuous(f"{where}: the prompt u = 0 makes every feature 0")
    matrix_work(len(seqs), inst.m, inst.n, f"{where}: the features")
    pre, Dpre = scaled(inst.pre(theorem, u))
    total = [Fraction(0)] * inst.m
    labels = [None] * len(seqs)
    for k, beta in inst.betas(seqs):
        labels[k] = _motzkin_label(inst, beta, k, where)
        coef = y[k] - z[k]
        if not coef:
            continue
        tau = [p * b for p, b in zip(pre, beta)]
        norm = sum(tau)
        if norm:
            for x in range(inst.m):
                total[x] += coef * Fraction(sum(w * t for w, t in zip(inst.Wint[x], tau) if t), norm)
    if "labels" in entry and not _same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    _motzkin_pattern(y, z, labels, where)
    if any(total):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")
    count = len(set(seqs))
    if u is None:
        return f"no linear head b on G_1(∅, x) gives F* on these {count} sequences"
    return (f"for the prompt u = [{', '.join(str(v) for v in u[:8])}{', ...' if len(u) > 8 else ''}] "
            f"no linear head b on Gbar_2(u, e(∅), e(x)) gives F* on these {count} sequences")


def _motzkin_label(inst, beta, k, where) -> int:
    """``F*`` of a Motzkin row of a vanilla instance from its backward message; a row with
    ``Pr(x) = 0`` is rejected (its label is not defined)."""
    nums, den = inst.task(beta)
    if den == 0:
        raise Rejected(f"{where}: sequence {k} has probability 0")
    return label([nums[0]], True)


def no_prompt_and_head(inst, entry, where):
    """Theorem 3.6, every prompt: ``W diag(d) A diag(A pi0) = 0`` with
    ``d = sum_k (y_k - z_k) beta_k``; then ``sum_k (y_k - z_k) W tau_k(u) = 0`` for every ``u``."""
    if _field(entry, "prompts", where) != "all":
        raise Unreadable(f"{where}.prompts: expected \"all\"")
    if not inst.binary:
        raise Unreadable(f"{where}: Motzkin certificates are about binary tasks")
    seqs, y, z = _motzkin_rows(entry, inst.m, where)
    matrix_work(inst.nnz + inst.n, inst.m, 1, f"{where}: W diag(d) A diag(A pi0)")
    d = [Fraction(0)] * inst.n
    labels = [None] * len(seqs)
    for k, beta in inst.betas(seqs):
        labels[k] = _motzkin_label(inst, beta, k, where)
        coef = Fraction(y[k] - z[k]) / (inst.DA * inst.DW) ** len(seqs[k])
        if coef:
            for h in range(inst.n):
                if beta[h]:
                    d[h] += coef * beta[h]
    if "labels" in entry and not _same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    _motzkin_pattern(y, z, labels, where)
    p1 = inst.step(inst.pi0)
    for g in range(inst.n):
        if not p1[g]:
            continue
        v = {i: d[i] * a for i, a in inst.cols[g] if d[i]}
        for x in range(inst.m):
            if sum(inst.W[x][i] * c for i, c in v.items()):
                raise Rejected(f"{where}: W diag(d) A diag(A pi0) is not zero (row {x}, column {g})")
    return (f"no prompt u in [0, 1]^|H| and no linear head b on Gbar_2(u, e(∅), e(x)) give F* on these "
            f"{len(set(seqs))} sequences")


def is_construction(inst, theorem, b_rows, u) -> bool | None:
    """Whether the witness is exactly the paper's construction (SPEC section 1's reading), from
    the re-derived left inverse: 3.3 ``b_c = mu_c^T diag(P[H_0] / P[H_1]) W^+``; 3.6 ``u = 1_B``
    and ``b_c = mu_c,H*^T diag(P[H_0] / c)_H* (W_:,H*)^+`` with ``c = A (u ⊙ P[H_1])``. The left
    inverse must be the Moore-Penrose one: ``W_S L`` symmetric (with ``L W_S = I``). ``None``
    when this cannot be decided from the certificate: no left inverse, one that is not the
    Moore-Penrose one, a prompt that is not ``1_B`` for the certificate's ``B`` (the
    construction with another basis set), a zero divisor, or too much work."""
    if theorem == "3.3" and "3.1" in inst.evidence:
        states, L = inst.evidence["3.1"]
        c = inst.pre("3.3", None)
    elif theorem == "3.6" and "3.5" in inst.evidence:
        states, L, B = inst.evidence["3.5"]
        if u != [Fraction(int(h in B)) for h in range(inst.n)]:
            return None
        c = inst.pre("3.6", u)
    else:
        return None
    if any(c[h] == 0 or inst.pi0[h] == 0 for h in states) or inst.m * inst.m * len(states) > LIMITS["matrix_work"]:
        return None
    Li, _ = scaled_rows(L)
    WL = [[sum(inst.Wint[x][h] * Li[i][y] for i, h in enumerate(states)) for y in range(inst.m)]
          for x in range(inst.m)]
    if any(WL[x][y] != WL[y][x] for x in range(inst.m) for y in range(x)):
        return None
    for mu, b in zip(inst.mu, b_rows):
        coeff = [mu[h] * inst.pi0[h] / c[h] for h in states]
        if [sum(k * L[i][x] for i, k in enumerate(coeff) if k) for x in range(inst.m)] != b:
            return False
    return True


def _head(inst, witness, theorem, where):
    """``(L rows, denominator factor, pre ints)``: head scores are ``sum_h L_c[h] beta[h]`` over
    ``Db DW sum_h pre[h] beta[h]``, with ``L_c = (W^T b_c) ⊙ pre`` in integers."""
    k = len(inst.mu)
    raw = _field(witness, "b", where)
    b = [_vec(raw, inst.m, f"{where}.b")] if inst.binary else _mat(raw, k, inst.m, f"{where}.b")
    u = None
    if theorem == "3.3":
        if _field(witness, "u", where) is not None:
            raise Rejected(f"{where}.u: Theorem 3.3 reads G_1(∅, x); its witness has no prompt")
    else:
        u = _prompt(_field(witness, "u", where), inst.n, f"{where}.u")
    matrix_work(len(b), inst.n, inst.m, "the head read on the hidden states (W^T b)")
    pre, Dpre = scaled(inst.pre(theorem, u))
    bint, Db = scaled_rows(b)
    L = [[sum(bc[x] * inst.Wint[x][h] for x in range(inst.m) if bc[x]) * pre[h] for h in range(inst.n)]
         for bc in bint]
    return L, Db * inst.DW, pre, Dpre, (b, u)


def _vanilla_theorem(cert, theorem, inst):
    verdict = _field(cert, "verdict", "certificate")
    held = _vanilla_assumptions(inst, _field(cert, "assumptions", "certificate"), theorem)
    state, all_hold = _state(held, theorem)
    if verdict == "assumptions-fail":
        failing = [name for name, h in held.items() if not h]
        if not failing:
            raise Rejected("assumptions-fail: every assumption of the theorem holds (re-derived)")
        motzkin = _list(cert.get("motzkin", []), None, "motzkin", "certificates")
        claims = [vanilla_motzkin(inst, theorem, c, f"motzkin[{k}]") for k, c in enumerate(motzkin)]
        line = f"accepted: Theorem {theorem} assumptions-fail: Assumption {', '.join(failing)} fails (re-derived; {state})"
        if claims and theorem == "3.3":
            line += f"; {claims[0]}, so Theorem 3.3's conclusion fails on this instance"
        elif claims:
            line += "; " + "; ".join(claims[:3]) + (f"; and {len(claims) - 3} more prompts" if len(claims) > 3 else "")
        return line
    if verdict not in ("verified", "refuted"):
        raise Unreadable(f"verdict {str(verdict)[:40]!r}: expected verified, refuted or assumptions-fail")
    witness = _field(cert, "witness", "certificate")
    _keys(witness, ("b", "u", "source"), "witness")
    source = _field(witness, "source", "witness")
    if source not in ("construction", "given"):
        raise Unreadable("witness.source: expected \"construction\" or \"given\"")
    L, Dhead, pre, Dpre, (b_rows, u) = _head(inst, witness, theorem, "witness")
    covers = _field(cert, "covers", "certificate")
    if covers not in ("identity", "listed"):
        raise Unreadable("covers: expected \"identity\" or \"listed\"")
    if covers == "identity":
        if verdict != "verified":
            raise Rejected("covers: an identity covers every sequence, so the verdict cannot be refuted")
        ident = _field(cert, "identity", "certificate")
        _keys(ident, ("lambda", "what"), "identity")
        lam = _q(_field(ident, "lambda", "identity"), "identity.lambda")
        if lam <= 0:
            raise Rejected(f"identity: lambda = {lam} is not positive")
        left, right = inst.Dmu * inst.Dp * lam.denominator, lam.numerator * Dhead * Dpre
        for c, (Lc, Rc) in enumerate(zip(L, inst.R)):
            for h in range(inst.n):
                if Lc[h] * left != Rc[h] * right:
                    raise Rejected(f"identity: (W^T b{'' if inst.binary else f'_{c}'})[{h}] pre[{h}] is not "
                                   f"lambda mu[{h}] P[H_0 = {h}]")
    rows = _rows(_field(cert, "sequences", "certificate"), "sequences")
    seqs = []
    for k, row in enumerate(rows):
        where = f"sequences[{k}]"
        _keys(row, ("x", "task_margin", "head_margin", "task_scores", "head_scores", "F_star", "F"), where)
        seqs.append(_tokens(_field(row, "x", where), inst.m, f"{where}.x"))
    seen, bad, possible = set(), [], set()
    for k, beta in inst.betas(seqs):
        row, where = rows[k], f"sequences[{k}]"
        tnum, tden = inst.task(beta)
        norm = sum(p * b for p, b in zip(pre, beta) if p)
        hnum = [sum(a * b for a, b in zip(Lc, beta) if a) for Lc in L] if norm else [0] * len(L)
        hden = Dhead * norm
        if inst.binary:
            _same(_field(row, "task_margin", where), tnum[0], tden, f"{where}.task_margin", "the task margin mu . P[H_0 | x]")
            _same(_field(row, "head_margin", where), hnum[0], hden, f"{where}.head_margin", "the head margin b . G")
        else:
            for key, nums, den in (("task_scores", tnum, tden), ("head_scores", hnum, hden)):
                vals = _list(_field(row, key, where), len(nums), f"{where}.{key}")
                for c, (v, num) in enumerate(zip(vals, nums)):
                    _same(v, num, den, f"{where}.{key}[{c}]", "the score")
        star, got = label(tnum, inst.binary), label(hnum, inst.binary)
        _labels_printed(row, star, got, where)
        if tden == 0:
            continue
        seen.add(star)
        possible.add(tuple(seqs[k]))
        if star != got:
            if verdict == "verified":
                raise Rejected(f"{where}: F(x) = {got} disagrees with F*(x) = {star} on x = {list(seqs[k])[:20]}")
            bad.append(k)
    parts = "b" if theorem == "3.3" else "b, u"
    origin = _ORIGIN[source]
    if source == "construction":
        status = is_construction(inst, theorem, b_rows, u)
        if status is False:           # a false claim about whose witness this is: never accepted
            raise Rejected("witness.source says \"construction\", but b is not the paper's construction "
                           "re-derived from the certified Moore-Penrose left inverse (say \"given\")")
        if status:
            origin = "the paper's construction, re-derived from the certified left inverse"
    who = f"the witness ({parts}; {origin})"
    if verdict == "refuted":
        if not bad:
            raise Rejected("refuted: no listed sequence with Pr(x) > 0 has F(x) != F*(x)")
        x = list(seqs[bad[0]])
        tail = (f"Theorem {theorem}'s assumptions hold (re-derived: {state}), and {who} disagrees with F* on "
                f"x = {x[:20]}{' ...' if len(x) > 20 else ''} (Pr(x) > 0)")
        if not all_hold:
            tail = f"{who} disagrees with F* on x = {x[:20]} (Pr(x) > 0); assumptions: {state}"
        return f"accepted: Theorem {theorem} refuted: {tail} (the witness is refuted, not the theorem)"
    classes = 2 if inst.binary else len(inst.mu)
    if not seen:
        raise Vacuous(f"no listed sequence has Pr(x) > 0 ({len(seqs)} listed): the claim is about nothing")
    if len(seen) < classes:
        missing = sorted(set(range(classes)) - seen)
        raise Vacuous(f"no listed sequence with Pr(x) > 0 has F*(x) = {missing[0]}: the claim could not have "
                      "failed on that class")
    scope = ("every sequence x with Pr(x) > 0 (by the identity)" if covers == "identity"
             else f"the {len(possible)} listed sequences with Pr(x) > 0 (of {len(set(seqs))} listed)")
    return (f"accepted: Theorem {theorem} verified: {who} gives F(x) = F*(x) "
            f"on {scope}, {len(seqs)} sequences recomputed, {classes} classes occur; assumptions re-derived: {state}")


# ---------------------------------------------------------------- memory-augmented HMMs (4.3, 4.6, C.6)

class Memory:
    """A memory-augmented HMM (``kind: "memory-hmm"``), checked to be stochastic, with its lifted
    chain: state ``c * |H| + h`` for memory configuration ``c`` (``m_1..m_N`` lexicographic,
    ``m_1`` most significant) and hidden state ``h = j |S| + s``. Sizes are bounded before any
    power is taken."""

    def __init__(self, block):
        _keys(block, ("kind", "cells", "memory_values", "syntax_states", "target_cell", "A", "W", "pi0", "pM", "mu"),
              "instance")
        self.N = _size(_field(block, "cells", "instance"), "instance.cells", LIMITS["cells"])
        self.M = _size(_field(block, "memory_values", "instance"), "instance.memory_values", LIMITS["states"])
        self.S = _size(_field(block, "syntax_states", "instance"), "instance.syntax_states", LIMITS["states"])
        n = self.n = self.N * self.S
        configs = 1
        for _ in range(self.N):
            configs *= self.M
            if configs * n > LIMITS["lifted_states"]:
                raise Unreadable(f"instance: the lifted chain has more than {LIMITS['lifted_states']} states")
        self.j = _size(_field(block, "target_cell", "instance"), "instance.target_cell", self.N - 1, 0)
        self.A = _mat(_field(block, "A", "instance"), n, n, "instance.A")
        W = _list(_field(block, "W", "instance"), None, "instance.W", "token slices")
        if not 1 <= len(W) <= LIMITS["tokens"]:
            raise Unreadable(f"instance.W: expected 1..{LIMITS['tokens']} tokens")
        matrix_work(self.M * n, self.M * n, len(W), "instance: the ranks of the emission columns")
        self.W = [_mat(W[x], self.M, n, f"instance.W[{x}]") for x in range(len(W))]
        self.m = len(self.W)
        self.pi0 = _vec(_field(block, "pi0", "instance"), n, "instance.pi0")
        self.configs = [()]
        for _ in range(self.N):
            self.configs = [c + (v,) for c in self.configs for v in range(self.M)]
        self.pM = _vec(_field(block, "pM", "instance"), len(self.configs), "instance.pM")
        self.mu_rows, self.binary = task_rows(_field(block, "mu", "instance"), self.M, "instance.mu")
        self.mu = [Fraction(int(any(row[v] for row in self.mu_rows))) for v in range(self.M)]   # supp(mu) marker
        for h in range(n):
            _stochastic(scaled([self.A[r][h] for r in range(n)])[0], scaled([self.A[r][h] for r in range(n)])[1],
                        f"instance.A column {h}")
            for v in range(self.M):
                ints, D = scaled([self.W[x][v][h] for x in range(self.m)])
                _stochastic(ints, D, f"instance.W column (m={v}, h={h})")
        for name, vec in (("pi0", self.pi0), ("pM", self.pM)):
            _stochastic(*scaled(vec), f"instance.{name}")
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

    def phi(self, w):
        """Reverse lifting: ``phi(w)[(m, h)] = |M|^-(N-1) sum_{c: c_j(h) = m} w[(c, h)]``."""
        out = [0] * (self.M * self.n)
        for ci, c in enumerate(self.configs):
            for h in range(self.n):
                if w[ci * self.n + h]:
                    out[c[self.cell(h)] * self.n + h] += w[ci * self.n + h]
        scale = Fraction(1, self.M ** (self.N - 1))
        return [v * scale for v in out]

    def gbar(self, tau):
        """``Gbar = W phi(tau) / ||phi(tau)||_1`` over tokens, exactly (0 when the norm is 0); a
        positive factor on ``tau`` cancels."""
        p = [0] * (self.M * self.n)
        for ci, c in enumerate(self.configs):
            for h in range(self.n):
                if tau[ci * self.n + h]:
                    p[c[self.cell(h)] * self.n + h] += tau[ci * self.n + h]
        norm = sum(p) * self.DW
        if norm == 0:
            return [Fraction(0)] * self.m
        nz = [(v, h, p[v * self.n + h]) for v in range(self.M) for h in range(self.n) if p[v * self.n + h]]
        return [Fraction(sum(self.Wi[z][v][h] * t for v, h, t in nz), norm) for z in range(self.m)]

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


def _memory_assumptions(inst, block, theorem):
    """Re-derive each assumption present; returns ``({name: holds}, H*)`` (``H*`` when
    non-degeneracy holds)."""
    names = _assumption_names(block, theorem)
    out, H_star = {}, None
    for name in names:
        where = f"assumptions.{name}"
        entry = _field(block, name, "assumptions")
        holds = _bool(_field(entry, "holds", where), f"{where}.holds")
        if name in ("3.2", "4.4"):
            _keys(entry, ("holds", "why"), where)
            really, why = regularity(inst.support, inst.pi0)
            if really and name == "4.4" and [sum(a * p for a, p in zip(row, inst.pi0)) for row in inst.A] != inst.pi0:
                really, why = False, "pi0 is not stationary (A pi0 != pi0)"
            if really != holds:
                raise Rejected(f"{where}: Assumption {name} {'holds' if really else 'fails'} ({why}), not as claimed")
        elif holds:
            _keys(entry, ("holds", "H_star", "S_star", "why"), where)
            H_star = _indices(_field(entry, "H_star", where), inst.n, f"{where}.H_star")
            _nondegenerate(inst, theorem, H_star, name, where)
        else:
            _keys(entry, ("holds", "evidence", "why"), where)
            _degenerate(inst, theorem, _list(_field(entry, "evidence", where), None, f"{where}.evidence"), name, where)
        out[name] = holds
    return out, H_star


def _nondegenerate(inst, theorem, H_star, name, where):
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
    if rank(U + rest) != rU + rank(rest):
        raise Rejected(f"{where}: Assumption {name}: the span of the H* columns meets the other columns' span")


def _degenerate(inst, theorem, evidence, name, where):
    """Every syntax state ``s`` fails alone (dependent columns, or a common nonzero vector of the
    two spans), so no nonempty ``S*`` works (a failing state makes every ``S*`` with it fail)."""
    done = set()
    for i, item in enumerate(evidence):
        w = f"{where}.evidence[{i}]"
        s = _field(item, "s", w)
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < inst.S or s in done:
            raise Unreadable(f"{w}.s: expected a syntax state not listed before")
        U, rest = inst.relevant(theorem, [s])
        kind = _field(item, "kind", w)
        if kind == "dependent":
            _keys(item, ("s", "kind", "columns", "null_vector", "what"), w)
            if [tuple(c) if isinstance(c, list) else c for c in _list(_field(item, "columns", w), None, w)] != U:
                raise Rejected(f"{w}: columns are not the columns of S* = {{{s}}}")
            v = _vec(_field(item, "null_vector", w), len(U), f"{w}.null_vector")
            comb = [sum(a * inst.W[x][m][h] for a, (m, h) in zip(v, U)) for x in range(inst.m)]
            if not any(v) or any(comb):
                raise Rejected(f"{w}: null_vector is not a nonzero v with U v = 0")
        elif kind == "shared":
            _keys(item, ("s", "kind", "U_columns", "a", "V_columns", "c", "w", "what"), w)
            if [tuple(c) if isinstance(c, list) else c for c in _list(_field(item, "U_columns", w), None, w)] != U:
                raise Rejected(f"{w}: U_columns are not the columns of S* = {{{s}}}")
            V = [tuple(c) if isinstance(c, list) else c for c in _list(_field(item, "V_columns", w), None, w)]
            if not set(V) <= set(rest):
                raise Rejected(f"{w}: V_columns are not among the other relevant columns")
            a = _vec(_field(item, "a", w), len(U), f"{w}.a")
            c = _vec(_field(item, "c", w), len(V), f"{w}.c")
            left = [sum(k * inst.W[x][m][h] for k, (m, h) in zip(a, U)) for x in range(inst.m)]
            right = [sum(k * inst.W[x][m][h] for k, (m, h) in zip(c, V)) for x in range(inst.m)]
            if left != right or not any(left):
                raise Rejected(f"{w}: U a = V c != 0 does not hold")
        else:
            raise Unreadable(f"{w}.kind: expected \"dependent\" or \"shared\"")
        done.add(s)
    if done != set(range(inst.S)):
        raise Rejected(f"{where}: syntax state {min(set(range(inst.S)) - done)} has no evidence")


def _memory_theorem(cert, theorem, inst):
    verdict = _field(cert, "verdict", "certificate")
    held, H_asm = _memory_assumptions(inst, _field(cert, "assumptions", "certificate"), theorem)
    state, all_hold = _state(held, theorem)
    if verdict == "assumptions-fail":
        failing = [name for name, h in held.items() if not h]
        if not failing:
            raise Rejected("assumptions-fail: every assumption of the theorem holds (re-derived)")
        return f"accepted: Theorem {theorem} assumptions-fail: {_failing(held)} (re-derived; {state})"
    if verdict not in ("verified", "refuted"):
        raise Unreadable(f"verdict {str(verdict)[:40]!r}: expected verified, refuted or assumptions-fail")
    w = _field(cert, "witness", "certificate")
    _keys(w, ("q", "Theta_K", "beta", "Theta_V", "b", "u", "H_star", "source", "notes"), "witness")
    source = _field(w, "source", "witness")
    if source not in ("construction", "given"):
        raise Unreadable("witness.source: expected \"construction\" or \"given\"")
    n, X = inst.n, inst.m
    q = _vec(_field(w, "q", "witness"), n + 1, "witness.q")
    K = _mat(_field(w, "Theta_K", "witness"), n + 1, X, "witness.Theta_K")
    beta_rows = _rows(_field(w, "beta", "witness"), "witness.beta")
    if not beta_rows:
        raise Unreadable("witness.beta: expected at least one row of |H| + 1 rationals")
    beta = _mat(beta_rows, len(beta_rows), n + 1, "witness.beta")
    V = _mat(_field(w, "Theta_V", "witness"), inst.M * n, X, "witness.Theta_V")
    raw = _field(w, "b", "witness")
    heads = ([_vec(raw, inst.M * n, "witness.b")] if inst.binary
             else _mat(raw, len(inst.mu_rows), inst.M * n, "witness.b"))
    u = _field(w, "u", "witness")
    if (u is None) != (theorem == "4.3"):
        raise Rejected("witness.u: Theorem 4.3 reads no prompt; Theorems 4.6 and C.6 need one")
    if u is not None:
        u = _prompt(u, inst.L, "witness.u")
    H_star = _indices(_field(w, "H_star", "witness"), n, "witness.H_star")
    name = THEOREMS[theorem][1][1]
    if H_asm is None:
        _nondegenerate(inst, theorem, H_star, name, "witness.H_star")
        if name not in held:         # the certificate lists no entry for it, but the witness's H* satisfies it
            held = {**held, name: True}
            state, all_hold = _state(held, theorem, {name: "shown with the witness's H*"})
    elif H_star != H_asm:                    # another set: it must satisfy the assumption too
        _nondegenerate(inst, theorem, H_star, name, "witness.H_star")
    if _field(cert, "covers", "certificate") != "listed":
        raise Unreadable("covers: a memory-theorem certificate covers the listed sequences")
    rows = _rows(_field(cert, "sequences", "certificate"), "sequences")
    seqs = [_tokens(_field(r, "x", f"sequences[{k}]"), X, f"sequences[{k}].x") for k, r in enumerate(rows)]
    inst.budget(seqs)
    outside = [0 if h in H_star else 1 for _ in inst.configs for h in range(n)]
    bad, in_R, seen = [], 0, set()
    for k, (row, seq) in enumerate(zip(rows, seqs)):
        where = f"sequences[{k}]"
        _keys(row, ("x", "in_R", "Z", "task_margin", "head_output", "attended", "F_star", "F") if inst.binary
              else ("x", "in_R", "Z", "attended", "F_star", "F"), where)
        plain = [inst.lifted_emission(z) for z in seq]
        joint, taus = inst.messages(plain)
        possible = sum(joint) > 0
        Z = [i for i, t in enumerate(taus) if possible and sum(t) > 0
             and sum(o * v for o, v in zip(outside, t)) == 0]
        member = bool(Z)
        if _field(row, "in_R", where) is not member or not _same_ints(_field(row, "Z", where), Z):
            raise Rejected(f"{where}: x in R is {member} with positions Z = {Z[:20]} (tau_i supported on H*), "
                           "not as printed")
        if not member:
            continue
        in_R += 1
        stars = inst.task_scores(joint)
        if u is None:
            head_taus, values = taus, [inst.flat_emission(z) for z in seq]
        else:
            head_taus = inst.messages([scaled(u)[0]] + plain)[1]
            values = [inst.phi(u)] + [inst.flat_emission(z) for z in seq]
        scores, outs = [], []
        for i, (tau, v) in enumerate(zip(head_taus, values)):
            g = inst.gbar(tau)
            brow = beta[min(i, len(beta) - 1)]
            scores.append(sum(q[r] * (sum(K[r][z] * g[z] for z in range(X)) + brow[r]) for r in range(n + 1)))
            value = [sum(V[r][z] * g[z] for z in range(X)) * v[r] for r in range(inst.M * n)]
            outs.append([sum(b[r] * value[r] for r in range(inst.M * n)) for b in heads])
        top = max(scores)
        attended = [i for i, s in enumerate(scores) if s == top]
        head = [sum(outs[i][c] for i in attended) / len(attended) for c in range(len(heads))]
        if inst.binary:
            star, out = stars[0], head[0]
            _same(_field(row, "task_margin", where), star.numerator, star.denominator, f"{where}.task_margin",
                  "the task margin mu . P[M_j* | x]")
            _same(_field(row, "head_output", where), out.numerator, out.denominator, f"{where}.head_output",
                  "the attention output")
        if not _same_ints(_field(row, "attended", where), attended):
            raise Rejected(f"{where}: the head attends to {attended[:20]}, not as printed")
        s_label, h_label = label(stars, inst.binary), label(head, inst.binary)
        _labels_printed(row, s_label, h_label, where)
        seen.add(s_label)
        if s_label != h_label:
            if verdict == "verified":
                raise Rejected(f"{where}: F(x) = {h_label} disagrees with F*(x) = {s_label} on x = {list(seq)[:20]} in R")
            bad.append(k)
    who = f"the witness (attention head{'' if u is None else ' and prompt'}; {_ORIGIN[source]})"
    if verdict == "refuted":
        if not bad:
            raise Rejected("refuted: no listed sequence in R has F(x) != F*(x)")
        x = list(seqs[bad[0]])
        if all_hold:
            return (f"accepted: Theorem {theorem} refuted: its assumptions hold (re-derived: {state}), and {who} "
                    f"disagrees with F* on x = {x[:20]} in R (the witness is refuted, not the theorem)")
        return (f"accepted: Theorem {theorem} refuted: {who} disagrees with F* on x = {x[:20]} in R; assumptions: "
                f"{state} (the witness is refuted, not the theorem)")
    classes = 2 if inst.binary else len(inst.mu_rows)
    if not in_R:
        raise Vacuous(f"no listed sequence lies in R ({len(seqs)} listed): the claim is about nothing")
    if len(seen) < classes:
        raise Vacuous(f"{in_R} listed sequences lie in R and none has F*(x) = {min(set(range(classes)) - seen)}: "
                      "the claim could not have failed on that label")
    return (f"accepted: Theorem {theorem} verified: {who} gives "
            f"F(x) = F*(x) on the {in_R} listed sequences in R (of {len(set(seqs))} listed, membership recomputed); "
            f"assumptions re-derived: {state}")


def memory_motzkin(inst, theorem, entry, where):
    """No linear head on ``G_1(∅, x)`` of the memory model fits ``F*`` on the listed sequences."""
    _keys(entry, ("sequences", "labels", "certificate"), where)
    if not inst.binary:
        raise Unreadable(f"{where}: Motzkin certificates are about binary tasks")
    seqs, y, z = _motzkin_rows(entry, inst.m, where)
    inst.budget(seqs)
    total = [Fraction(0)] * inst.m
    labels = []
    filler = [1] * inst.L
    for k, seq in enumerate(seqs):
        plain = [inst.lifted_emission(t) for t in seq]
        joint = inst.messages(plain)[0]
        if sum(joint) == 0:
            raise Rejected(f"{where}: sequence {k} has probability 0")
        labels.append(label([inst.task_margin(joint)], True))
        if y[k] - z[k]:
            g = inst.gbar(inst.messages([filler] + plain)[1][0])
            for x in range(inst.m):
                total[x] += (y[k] - z[k]) * g[x]
    if "labels" in entry and not _same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    _motzkin_pattern(y, z, labels, where)
    if any(total):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")
    return (f"no linear head b on G_1(∅, x) of this memory-augmented HMM gives F* on these {len(set(seqs))} "
            f"sequences (the linear-head baseline; this says nothing against Theorem {theorem}, whose head is attention)")


# ---------------------------------------------------------------- dispatch

_TOP = ("format", "version", "theorem", "claim", "instance", "notes")


def check(cert) -> str:
    """Re-derive every claim of a parsed certificate; return the one-line statement accepted.

    Raises:
        Rejected (Vacuous): a claim fails (holds only vacuously). Unreadable: malformed.
    """
    return _with_digits(lambda: _check(cert))


def _check(cert) -> str:
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise Unreadable(f"not a {FORMAT} file (field \"format\")")
    version = cert.get("version")
    if isinstance(version, bool) or version != VERSION:
        raise Unreadable(f"version {json.dumps(version)[:20]}: this checker reads "
                         f"version {VERSION} (the JSON integer) "
                         "(rewrite the certificate with this headprompt's verify)")
    theorem = _field(cert, "theorem", "certificate")
    if not isinstance(theorem, str) or theorem not in THEOREMS:
        raise Unreadable(f"theorem {str(theorem)[:20]!r}: expected one of {', '.join(THEOREMS)}")
    claim = _field(cert, "claim", "certificate")
    if not isinstance(claim, str):
        raise Unreadable("claim: expected theorem, no-linear-head or no-prompt-and-head (a string)")
    block = _field(cert, "instance", "certificate")
    kind = _field(block, "kind", "instance")
    if not isinstance(kind, str) or kind not in ("hmm", "memory-hmm"):
        raise Unreadable("instance.kind: expected \"hmm\" or \"memory-hmm\"")
    if kind != THEOREMS[theorem][0]:
        raise Rejected(f"Theorem {theorem} is about {'vanilla' if THEOREMS[theorem][0] == 'hmm' else 'memory-augmented'} "
                       f"HMMs; the instance is {kind!r}")
    inst = Vanilla(block) if kind == "hmm" else Memory(block)
    if theorem == "4.6" and inst.N != 1:
        raise Rejected(f"Theorem 4.6 is about one memory cell; the instance has {inst.N} (Theorem C.6 covers several)")
    if claim == "theorem":
        if cert.get("verdict") == "assumptions-fail":     # each verdict has its own fields, no others
            allowed = ("verdict", "assumptions") + (("motzkin",) if kind == "hmm" else ())
        else:
            allowed = ("verdict", "assumptions", "witness", "covers", "sequences", "sequences_checked_by_verify")
            allowed += ("identity",) if cert.get("covers") == "identity" else ()
        _keys(cert, _TOP + allowed, "certificate")
        return (_vanilla_theorem if kind == "hmm" else _memory_theorem)(cert, theorem, inst)
    if claim == "no-linear-head":
        _keys(cert, _TOP + ("sequences", "labels", "certificate", "prompt"), "certificate")
        entry = {k: cert[k] for k in ("sequences", "labels", "certificate", "prompt") if k in cert}
        said = (vanilla_motzkin(inst, theorem, entry, "certificate") if kind == "hmm"
                else memory_motzkin(inst, theorem, entry, "certificate"))
        if theorem == "3.3":
            said += ": Theorem 3.3's conclusion fails on this instance"
        return f"accepted: {said} (Theorem {theorem}'s features {FEATURES[theorem]})"
    if claim == "no-prompt-and-head":
        if theorem != "3.6":
            raise Rejected("a no-prompt-and-head certificate is about Theorem 3.6's prompts")
        _keys(cert, _TOP + ("sequences", "labels", "certificate", "prompts"), "certificate")
        said = no_prompt_and_head(inst, cert, "certificate")
        return f"accepted: {said}: Theorem 3.6's conclusion fails on this instance"
    raise Unreadable(f"claim {str(claim)[:30]!r}: expected theorem, no-linear-head or no-prompt-and-head")


def check_file(path: str) -> str:
    """Read (strictly, bounded) and check the certificate at ``path``."""
    return _with_digits(lambda: _check(read_file(path)))


# a separation: (theorem of the half that works, theorem of the no-linear-head half, what each says)
_SEPARATIONS = {"hmm": ("3.6", "3.3", "a prompt and a linear head compute F*",
                        "no linear head on G_1(∅, x) computes F* (none fits the listed sequences)"),
                "memory-hmm": ("4.3", "4.3", "an attention head computes F*",
                               "no linear head on the memory model's G_1(∅, x) computes F* (none fits the listed sequences)")}


def _same_instance(first, second) -> bool:
    """Whether two parsed instances are the same model, value by value (exact)."""
    if type(first) is not type(second):
        return False
    names = ("n", "m", "A", "W", "pi0", "mu") if isinstance(first, Vanilla) else (
        "N", "M", "S", "j", "A", "W", "pi0", "pM", "mu_rows")
    return all(getattr(first, k) == getattr(second, k) for k in names)


def check_separation(first, second) -> str:
    """Check the two halves of a separation (parsed certificates, in either order): each is
    checked in full as :func:`check` does, and together they must be one certificate that a head
    works (Theorem 3.6 ``verified``, or Theorem 4.3 ``verified`` for a memory HMM) and one that no
    linear head does (``no-linear-head``: Theorem 3.3's features, or Theorem 4.3's) **on the
    same instance**, exactly; two true certificates about two different instances prove no
    separation.

    Raises:
        Rejected (Vacuous), Unreadable: as :func:`check`, for either half or for the pair.
    """
    lines = []
    for k, cert in enumerate((first, second)):
        try:
            lines.append(check(cert))
        except (Rejected, Unreadable) as exc:
            raise type(exc)(f"half {k + 1}: {exc}") from None
    kinds = [cert["instance"]["kind"] for cert in (first, second)]
    if kinds[0] != kinds[1]:
        raise Rejected(f"the halves are about a {kinds[0]!r} and a {kinds[1]!r} instance: not one instance")
    works, fails, says_works, says_fails = _SEPARATIONS[kinds[0]]
    role = {}
    for k, cert in enumerate((first, second)):
        if cert["claim"] == "theorem" and cert["theorem"] == works and cert.get("verdict") == "verified":
            role.setdefault("works", k)
        elif cert["claim"] == "no-linear-head" and cert["theorem"] == fails:
            role.setdefault("fails", k)
    if set(role) != {"works", "fails"}:
        raise Rejected(f"a separation on a {kinds[0]!r} instance needs one Theorem {works} certificate with verdict "
                       f"verified and one no-linear-head certificate with Theorem {fails}'s features; found "
                       + " and ".join(f"{c['claim']} (Theorem {c['theorem']}{', ' + str(c.get('verdict')) if c['claim'] == 'theorem' else ''})"
                                      for c in (first, second)))
    parsed = [Vanilla(c["instance"]) if kinds[0] == "hmm" else Memory(c["instance"]) for c in (first, second)]
    if not _same_instance(*parsed):
        raise Rejected("the two halves are about different instances (their A, W, pi0, mu or memory fields differ): "
                       "each may be true, but together they separate nothing")
    scope = {"identity": " on every sequence x with Pr(x) > 0",
             "listed": " on the listed sequences" + (" in R" if kinds[0] == "memory-hmm" else "")}
    says_works += scope.get((first, second)[role["works"]].get("covers"), "")
    return (f"accepted: separation on one instance: {says_works} and {says_fails}; "
            f"[{lines[role['works']]}] [{lines[role['fails']]}]")


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    usage = ("usage: python -m headprompt.certcheck FILE | --separation FILE FILE   (exit 0 accepted, 1 rejected "
             "or vacuous, 2 unreadable)")
    if args and args[0] == "--separation":
        if len(args) != 3:
            return _emit(usage, 2, sys.stderr)
        return _run(lambda: _with_digits(lambda: check_separation(read_file(args[1]), read_file(args[2]))),
                    " ".join(args[1:]))
    if len(args) != 1 or args[0] in ("-h", "--help"):
        asked = bool(args) and args[0] in ("-h", "--help")
        return _emit(usage, 0 if asked else 2, sys.stdout if asked else sys.stderr)
    return _run(lambda: check_file(args[0]), args[0])


def _with_digits(work):
    """Run ``work`` with Python's limit on int-string digits lifted (certificates hold long
    exact numbers; their size is bounded by the documented limits instead)."""
    old = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    if old is not None:
        sys.set_int_max_str_digits(0)
    try:
        return work()
    finally:
        if old is not None:
            sys.set_int_max_str_digits(old)


def _run(work, what: str) -> int:
    try:
        line, code, stream = work(), 0, sys.stdout
    except Vacuous as exc:
        line, code, stream = f"rejected: vacuous: {exc}", 1, sys.stdout
    except Rejected as exc:
        line, code, stream = f"rejected: {exc}", 1, sys.stdout
    except (Unreadable, OSError, ValueError, RecursionError, MemoryError, TypeError, KeyError, IndexError,
            AttributeError) as exc:
        line, code, stream = f"unreadable: {what}: {str(exc)[:300]}", 2, sys.stderr
    return _emit(line, code, stream)


def _emit(line: str, code: int, stream) -> int:
    """Write the one line and return ``code``; if it cannot be written (a closed pipe, a full
    device) exit 2: a verdict nobody could read is not reported as one (0 and 1 are verdicts)."""
    try:
        print(line, file=stream)
        stream.flush()
        return code
    except (OSError, ValueError, AttributeError):
        _silence(stream)
    try:
        print("certcheck: cannot write the result (output closed or full)", file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        _silence(sys.stderr)
    return 2


def _silence(stream) -> None:
    """Point ``stream``'s descriptor at /dev/null, so the interpreter's last flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass

if __name__ == "__main__":
    sys.exit(main())
