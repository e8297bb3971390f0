"""The size limits and the work model: what the checker may spend on one file, bounded before
the work is done. Over a limit is exit 2 (:class:`Unreadable`), never a verdict.

Every count is an upper estimate of operations the checker will perform: digits² to parse the
numbers (``parse_work``), backward steps weighted by the sizes of the integers multiplied
(``backward_cost``, ``memory_cost``, in 9-digit limb products), and rows x columns x inner
size for one product or elimination (``matrix_work``). docs/certificates.md lists the limits
with the measurements they come from.
"""

from __future__ import annotations

import re

from .outcomes import Unreadable

__all__ = ["LIMITS", "parse_work", "digits_of", "limb_work", "backward_cost", "memory_cost", "matrix_work", "Meter",
           "METER", "int_ops", "fraction_ops", "digits"]


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
    "metered_work": 10 ** 7,           # everything else the checker computes, metered as it goes (see
                                       # Meter): under 10 s at load 15 on 2 cores (benchmarks/results/certcheck/)
}
"""Every size is checked against these before any work; over a limit is exit 2 (unreadable)."""


_LONG_DIGITS = re.compile(rb"[0-9]{64,}")


def parse_work(data: bytes) -> int:
    """An upper bound on the digits² work of parsing every number in ``data``: each run of
    64 or more ASCII digits counts its length squared, shorter runs 64 per digit."""
    long = sum((m.end() - m.start()) ** 2 for m in _LONG_DIGITS.finditer(data))
    return long + 64 * sum(data.count(d) for d in b"0123456789")


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


def digits(value: int) -> int:
    """Decimal digits of an integer (an upper estimate from its bit length; 1 for 0)."""
    return abs(value).bit_length() * 30103 // 100000 + 1


def int_ops(count: int, digits_a: int, digits_b: int = 1) -> int:
    """Metered units of ``count`` integer multiply-adds of ``digits_a``- by ``digits_b``-digit
    numbers: one unit for the interpreter's step (about 0.35 us on a loaded core), plus the
    schoolbook product in 9-digit limbs, ``limbs_a x limbs_b / 128`` units (measured: a
    100-limb by 100-limb multiply-add takes about 75 small steps)."""
    return count * (1 + (digits_a // 9 + 1) * (digits_b // 9 + 1) // 256)


def fraction_ops(count: int, digits_: int) -> int:
    """Metered units of ``count`` operations on ``Fraction`` values of ``digits_`` digits: each
    normalises by a gcd besides the products; measured about 20 small steps for small fractions,
    and ``limbs^2 / 64`` more for long ones."""
    return count * (20 + (digits_ // 9 + 1) ** 2 // 64)


class Meter:
    """Work metered as it is done: every computation that the size limits above do not bound
    in advance (features, the attention head, ranks, left inverses, the construction's
    recognition, the rows' scores) is charged here before it runs, with the sizes of its actual
    integers, so bit growth is weighed. Over ``LIMITS["metered_work"]`` for one certificate is
    exit 2, after at most that much work: every file is decided within the limit's time."""

    def __init__(self):
        self.spent = 0

    def reset(self) -> None:
        self.spent = 0

    def charge(self, units: int, what: str) -> None:
        self.spent += units
        if self.spent > LIMITS["metered_work"]:
            raise Unreadable(f"{what}: the certificate needs over {LIMITS['metered_work']} units of metered work "
                             f"(integers weighed by their digits; {self.spent} so far), over the limit")


METER = Meter()
"""The meter of the certificate being checked (reset by :func:`.certificate.judge`)."""
