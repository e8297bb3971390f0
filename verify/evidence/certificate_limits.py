"""The checker's limits applied to a certificate before it is written, and the writing
(:mod:`.certificate` builds it): verify never writes what ``python -m headprompt.certcheck``
would refuse to read (its documented limits: file bytes, digits of one number, digit² parsing
work, the backward passes' work)."""

from __future__ import annotations

import json
import math
import sys
from fractions import Fraction

import numpy as np

from ... import certcheck
from ...models.exceptions import InputError
from ...models.hmm.values import MemoryHMM

__all__ = ["within_limits", "write_json", "unbounded_digits"]


def _lengths(cert: dict) -> list[int]:
    rows = [r["x"] for r in cert.get("sequences", []) if isinstance(r, dict)]
    rows += [s for s in cert.get("sequences", []) if isinstance(s, list)]
    rows += [s for m in cert.get("motzkin", []) for s in m["sequences"]]
    return [len(r) for r in rows]


def _within_work(cert: dict, model) -> None:
    """Refuse to write a certificate whose recomputation the checker would refuse as too long."""
    lengths = _lengths(cert)
    den = lambda a: math.lcm(*(Fraction(v).denominator for v in np.ravel(a)))     # noqa: E731
    if isinstance(model, MemoryHMM):
        lifted = model.memory_values ** model.cells * model.num_states
        growth = certcheck.digits_of(den(model.A) * den(model.W) * lifted)
        over = certcheck.memory_cost(lengths, lifted, model.num_states, growth, model.W.shape[0])
    else:
        growth = certcheck.digits_of(den(model.A) * den(model.W) * model.num_states)
        nonzeros = int(np.count_nonzero(model.transition_support()))
        over = certcheck.backward_cost(lengths, nonzeros, model.num_states, growth)
    if over:
        raise InputError(f"--certificate: checking it would need {over}; check fewer or shorter sequences")


def within_limits(cert: dict, model=None) -> None:
    """Refuse to write what the checker would not read (its documented limits)."""
    if model is not None:
        _within_work(cert, model)
    limit = certcheck.LIMITS["number_digits"]

    def walk(v):
        if isinstance(v, str):
            if len(v) > limit:
                for part in v.lstrip("-").split("/"):
                    if len(part) > limit:
                        raise InputError(f"--certificate: a number of {len(part)} digits is over the checker's "
                                         f"limit of {limit}; check fewer or shorter sequences")
        elif isinstance(v, list):
            for w in v:
                walk(w)
        elif isinstance(v, dict):
            for w in v.values():
                walk(w)

    walk(cert)


def write_json(cert: dict, path) -> dict:
    text = json.dumps(cert, indent=1) + "\n"
    if len(text) > certcheck.LIMITS["file_bytes"]:
        raise InputError(f"--certificate: {len(text)} bytes is over the checker's limit of "
                         f"{certcheck.LIMITS['file_bytes']}")
    work = certcheck.parse_work(text.encode("ascii"))
    if work > certcheck.LIMITS["digit_work"]:
        raise InputError(f"--certificate: its numbers need {work} digit² units of parsing, over the checker's "
                         f"limit of {certcheck.LIMITS['digit_work']}; check fewer or shorter sequences")
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)
    return cert


def unbounded_digits(fn, *args):
    """``fn(*args)`` with Python's limit on int/str conversions lifted (margins of long
    sequences have tens of thousands of digits); the limit is restored after."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return fn(*args)
    finally:
        sys.set_int_max_str_digits(old)
