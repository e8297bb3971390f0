"""Regression tests for the red team's findings F1-F6 (/tmp/team/REDTEAM.md): the checker
decides wide-rational and huge-integer files quickly with exit 2 naming the limit, its accepted
line counts only sequences with Pr(x) > 0, non-canonical numerals are unreadable (and verify
never writes one), and a failed non-degeneracy assumption is worded as what was proven."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from fractions import Fraction

import pytest

import headprompt
from headprompt import certcheck

from .conftest import NO_42

HEAD = {"format": "headprompt-certificate", "version": certcheck.VERSION}


def _run(tmp_path, cert, timeout=15):
    path = tmp_path / "c.json"
    path.write_text(cert if isinstance(cert, str) else json.dumps(cert))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(path)], capture_output=True, text=True,
                          timeout=timeout)
    assert "Traceback" not in done.stderr + done.stdout
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - start


# ---------------------------------------------------------------- F1: cost grows with entry size

def _wide(digits, length):
    """A 1-state HMM whose emission probabilities have ``digits``-digit denominators, with a
    no-linear-head claim on one sequence of ``length`` copies of token 1."""
    D = 10 ** digits
    return dict(HEAD, theorem="3.3", claim="no-linear-head", sequences=[[1] * length],
                instance={"kind": "hmm", "A": [["1"]], "W": [[f"1/{D}"], [f"{D - 1}/{D}"]], "pi0": ["1"],
                          "mu": ["1"]},
                certificate={"y": ["1"], "z": ["0"]})


def test_wide_rationals_are_refused_before_work(tmp_path):
    # 2000 backward steps multiplying (3000 t)-digit integers by 3000-digit entries: minutes of
    # work on a 15 KB file before the fix; now refused from its sizes alone
    rc, out, took = _run(tmp_path, _wide(3000, 2000))
    assert rc == 2 and "limb products" in out and str(certcheck.LIMITS["limb_work"]) in out, out
    assert took < 10


def test_limb_work_is_quadratic_in_entry_digits():
    # the model's own scaling against the schoolbook count written out: integers of t g digits
    # (t g / 9 limbs) times entries of g digits (g / 9 limbs, plus the addition)
    for g, t in ((1, 50), (30, 20), (3001, 7)):
        by_hand = sum(2 * (k * g // 9 + 1) * (g // 9 + 2) for k in range(1, t + 1))
        assert abs(certcheck.limb_work([t], 2, g) - by_hand) <= 2 * (g // 9 + 2) * t
    assert certcheck.limb_work([1000], 2, 3001) > 300 * certcheck.limb_work([1000], 2, 10)


def test_narrow_rationals_of_the_same_length_are_still_checked(tmp_path):
    # the same shape with 1-digit denominators is within the limits and decided (exit 1: y g = 0
    # fails since g_x > 0 for the only sequence)
    cert = _wide(1, 2000)
    cert["instance"]["W"] = [["1/2"], ["1/2"]]
    rc, out, took = _run(tmp_path, cert)
    assert rc == 1 and "rejected" in out, out


@pytest.mark.parametrize("length", [100, 2000])
def test_wide_memory_chain_is_refused_before_work(tmp_path, length):
    # length 100: 42 s before the forward-backward products were counted (red team F1b)
    D = 10 ** 3000
    inst = {"kind": "memory-hmm", "cells": 1, "memory_values": 1, "syntax_states": 1, "target_cell": 0,
            "A": [["1"]], "W": [[[f"1/{D}"]], [[f"{D - 1}/{D}"]]], "pi0": ["1"], "pM": ["1"], "mu": ["1"]}
    cert = dict(HEAD, theorem="4.3", claim="no-linear-head", sequences=[[1] * length], instance=inst,
                certificate={"y": ["1"], "z": ["0"]})
    rc, out, took = _run(tmp_path, cert)
    assert rc == 2 and "limb products" in out, out
    assert took < 10


# ---------------------------------------------------------------- F2: parse work bounded before parsing

def test_many_huge_integers_end_quickly(tmp_path):
    number = "7" * 199_999
    text = json.dumps(dict(HEAD, theorem="3.3", claim="theorem")).rstrip("}") + ', "notes": [' + \
        ", ".join([number] * 40) + "]}"
    rc, out, took = _run(tmp_path, text)
    assert rc == 2 and "digit² units" in out, out
    assert took < 5


def test_parse_work_counts_digit_runs():
    data = b'{"a": "' + b"1" * 100 + b'/7", "b": 12, "c": [' + b"9" * 70 + b"]}"
    assert certcheck.parse_work(data) == 100 ** 2 + 70 ** 2 + 64 * (100 + 1 + 2 + 70)


def test_many_15000_digit_numbers_are_within_the_parse_limit():
    # a verify-written certificate with 15,000-digit margins: 4 such integers per row, 200 rows
    numbers = ", ".join(f'"{"3" * 15_000}/{"1" + "0" * 14_999}"' for _ in range(400))
    data = ('{"notes": [' + numbers + "]}").encode("ascii")
    assert certcheck.parse_work(data) <= certcheck.LIMITS["digit_work"]
    assert len(certcheck.loads(data)["notes"]) == 400


# ---------------------------------------------------------------- F3: only Pr(x) > 0 rows counted

# A: 0 -> 1, 1 -> 2, 2 -> {0, 2}; W = I; pi0 = (1/2, 1/2, 0). By hand: x = [1] forces H_0 = 0
# (Pr 1/2, task margin 1); x = [2] forces H_0 = 1 (Pr 1/2, margin -1); x = [0] needs H_0 = 2,
# where pi0 = 0 (Pr 0, margin 0 by convention, F* = 1). The head b = (0, -1, -1) reads
# tau = A pi0 ⊙ beta at H_1: for [1] tau = 0 (margin 0, F = 1), for [2] tau ∝ (0, 2, 1)
# (margin -1, F = 0), for [0] tau ∝ (0, 0, 1) (margin -1, F = 0 != F*).
IMPOSSIBLE_ROW = dict(HEAD, theorem="3.3", claim="theorem", verdict="verified", assumptions={}, covers="listed",
                      instance={"kind": "hmm", "A": [["0", "0", "1/2"], ["1", "0", "0"], ["0", "1", "1/2"]],
                                "W": [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]],
                                "pi0": ["1/2", "1/2", "0"], "mu": ["1", "-1", "0"]},
                      witness={"b": ["0", "-1", "-1"], "u": None, "source": "given"},
                      sequences=[{"x": [1], "task_margin": "1", "head_margin": "0", "F_star": 1, "F": 1},
                                 {"x": [2], "task_margin": "-1", "head_margin": "-1", "F_star": 0, "F": 0},
                                 {"x": [0], "task_margin": "0", "head_margin": "-1", "F_star": 1, "F": 0}])


def test_listed_count_is_of_sequences_with_positive_probability(tmp_path):
    rc, out, _ = _run(tmp_path, IMPOSSIBLE_ROW)
    assert rc == 0, out
    assert "on the 2 listed sequences with Pr(x) > 0 (of 3 listed)" in out, out
    assert "on the 3 listed" not in out


# ---------------------------------------------------------------- F5: canonical numerals only

@pytest.mark.parametrize("bad", ["01", "-0", "+1", " 1", "1 ", "1/01", "2/2", "2/4", "3/1", "-0/3", "00"])
def test_non_canonical_numerals_are_unreadable(tmp_path, bad):
    cert = json.loads(json.dumps(IMPOSSIBLE_ROW))
    cert["sequences"][0]["task_margin"] = bad
    rc, out, _ = _run(tmp_path, cert)
    assert rc == 2 and "unreadable" in out, (bad, out)


def test_json_minus_zero_is_unreadable(tmp_path):
    rc, out, _ = _run(tmp_path, json.dumps(IMPOSSIBLE_ROW).replace('"F_star": 0', '"F_star": -0'))
    assert rc == 2 and "-0" in out, out


@pytest.mark.parametrize("old, new", [('"task_margin": "1"', '"task_margin": "\\u0031"'),
                                      ('"theorem": "3.3"', '"theorem": "3\\u002e3"')])
def test_escaped_ascii_is_unreadable(tmp_path, old, new):
    # JSON would decode "\u0031" to "1": a second spelling of a number or a name (red team F5b)
    raw = json.dumps(IMPOSSIBLE_ROW)
    assert old in raw
    rc, out, _ = _run(tmp_path, raw.replace(old, new, 1))
    assert rc == 2 and "printable ASCII" in out, out


def test_escaped_non_ascii_text_is_still_read():
    assert certcheck.loads(b'{"notes": "G_1(\\u2205, x) \\\\u0031"}') == {"notes": "G_1(\u2205, x) \\u0031"}


def test_verify_writes_only_canonical_numerals(certificates):
    canonical = re.compile(r"-?(0|[1-9][0-9]*)(/[1-9][0-9]*)?")

    def walk(v):
        if isinstance(v, str) and re.fullmatch(r"[-+ 0-9/]+", v):
            yield v
        elif isinstance(v, list):
            for w in v:
                yield from walk(w)
        elif isinstance(v, dict):
            for w in v.values():
                yield from walk(w)

    seen = 0
    for cert in certificates.values():
        for text in walk(cert):
            seen += 1
            assert canonical.fullmatch(text) and str(Fraction(text)) == text and text != "-0", text
    assert seen > 100


# ---------------------------------------------------------------- F6: what a failed non-degeneracy means

def test_failed_nondegeneracy_is_worded_as_no_nonempty_H_star(tmp_path):
    # NO_42's emissions do not depend on the memory value, so for every syntax state the two
    # columns W[:, 0, h] and W[:, 1, h] are equal (dependent): no nonempty S* works
    W = NO_42["W"]
    assert all(W[x][0][h] == W[x][1][h] for x in range(len(W)) for h in range(2))
    inst = tmp_path / "no42.json"
    inst.write_text(json.dumps(NO_42))
    path = tmp_path / "f.json"
    headprompt.check(str(inst), "4.3", certificate=str(path), samples=10, length=2)
    done = subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(path)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no nonempty H* = {j*} x S* satisfies Assumption 4.2" in done.stdout
    assert "Assumption 4.2 fails" not in done.stdout and "4.2 fails" not in done.stdout
