"""Hostile input to the HMM construction API (``HMM.create``, ``HMM(...)``, ``HMM.save`` /
``HMM.load``): every refusal is an ``InputError`` with one message naming the problem, decided
before any large allocation."""

import re
import time
import tracemalloc
from decimal import Decimal
from fractions import Fraction as F

import numpy as np
import pytest

from headprompt import HMM, InputError
from headprompt.models.exceptions import LimitError
from headprompt.models.hmm.reading import DENSE_MAX_ENTRIES, DENSE_MAX_STATES
from headprompt.models.hmm.files import NPZ_MAX_DENSE_STATES, parse_instance


def _refused_fast(fn, match, *, seconds=0.5, megabytes=50):
    """``fn()`` raises a LimitError matching ``match`` within ``seconds``, and allocates at most
    ``megabytes`` on the way (a second run under tracemalloc, which counts numpy's buffers too)."""
    t0 = time.perf_counter()
    with pytest.raises(LimitError, match=match):
        fn()
    elapsed = time.perf_counter() - t0
    assert elapsed < seconds, elapsed
    if megabytes is None:
        return
    tracemalloc.start()
    try:
        with pytest.raises(LimitError, match=match):
            fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < megabytes * 2 ** 20, peak


def test_exact_state_limit_is_the_dense_npz_limit():
    assert DENSE_MAX_STATES["exact"] == NPZ_MAX_DENSE_STATES


def test_size_limit_exact_refused_before_converting():
    n = 30_000
    A = np.zeros((n, n), np.int8)          # the user's 900 MB; create must not add to it
    _refused_fast(lambda: HMM.create(A, [[1] * n], [1] + [0] * (n - 1)),
                  r"A is 30000 x 30000, 30000 hidden states; a dense exact HMM holds at most 2000 states.*LargeHMM")


def test_size_limit_exact_just_over():
    n = DENSE_MAX_STATES["exact"] + 1
    A = np.roll(np.eye(n, dtype=np.int64), 1, axis=0)
    _refused_fast(lambda: HMM.create(A, np.ones((1, n), np.int64), np.eye(1, n, dtype=np.int64)[0]),
                  rf"{n} hidden states; a dense exact HMM holds at most 2000 states .*; exact=False allows 16384")


def test_size_limit_float():
    n = DENSE_MAX_STATES["float"] + 1
    A = np.broadcast_to(np.float64(1 / n), (n, n))          # no memory behind it
    _refused_fast(lambda: HMM.create(A, np.ones((1, n)), np.full(n, 1 / n), exact=False),
                  r"a dense float HMM holds at most 16384 states.*LargeHMM")


def test_entry_limit_counts_all_arrays():
    W = np.broadcast_to(np.int64(1), (DENSE_MAX_ENTRIES["exact"], 3))
    _refused_fast(lambda: HMM.create(np.eye(3, dtype=np.int64), W, [1, 0, 0]),
                  r"more than 8,000,000 entries in A, W, pi0 together; that is the limit for a dense exact HMM")
    rows = [[1]] * (DENSE_MAX_ENTRIES["exact"] + 1)                 # nested lists: counted, not converted
    # counting 8 million Python lists takes about a second on a quiet core; 8 s leaves room for a
    # loaded CI machine (3.6 s measured at load 6 on 2 cores) and still catches a conversion
    _refused_fast(lambda: HMM.create([[1]], rows, [1]), r"more than 8,000,000 entries", seconds=8,
                  megabytes=None)


def test_within_limits_still_builds():
    n = 300
    A = np.roll(np.eye(n, dtype=np.int64), 1, axis=0)
    h = HMM.create(A, np.ones((1, n), np.int64), np.eye(1, n, dtype=np.int64)[0])
    assert h.exact and h.num_states == n
    f = HMM.create(A.astype(float), np.ones((1, n)), np.eye(1, n)[0], exact=False)
    assert not f.exact and f.num_states == n


@pytest.mark.parametrize("bad, found", [([[1, 0], [0, 1]], "list"), (None, "NoneType"), ("abc", "str"),
                                        ({}, "dict"), (1, "int")])
def test_constructor_wants_arrays(bad, found):
    W, pi0 = np.array([[1.0, 1.0]]), np.array([1.0, 0.0])
    with pytest.raises(InputError, match=rf"HMM: A: expected a numpy array .*found {found}; .*HMM.create"):
        HMM(bad, W, pi0)
    if bad is not None:                      # mu=None: no task
        with pytest.raises(InputError, match=rf"HMM: mu: expected a numpy array .*found {found}"):
            HMM(np.eye(2), W, pi0, bad)


def test_constructor_object_arrays_hold_rationals():
    W, pi0 = np.array([[F(1), F(1)]], dtype=object), np.array([F(1), F(0)], dtype=object)
    with pytest.raises(InputError, match=r"HMM: A\[0, 0\]: found str '1', but an exact model's object arrays hold "
                                         r"Fractions or integers"):
        HMM(np.array([["1", "0"], ["0", "1"]], dtype=object), W, pi0)
    with pytest.raises(InputError, match=r"A\[0, 0\]: found float 1.0"):
        HMM(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=object), W, pi0)
    assert HMM(np.array([[F(1), 0], [0, 1]], dtype=object), W, pi0).exact


def test_too_many_digits():
    with pytest.raises(LimitError, match=r"A\[0, 0\]: an integer of 5001 digits; the limit is 4000 digits per number"):
        HMM.create([[10 ** 5000, 0], [0, 1]], [[1, 1]], [1, 0])
    with pytest.raises(LimitError, match=r"A\[0, 0\]: an integer of 5001 digits"):
        HMM.create([[10 ** 5000, 0], [0, 1]], [[1, 1]], [1, 0], exact=False)
    with pytest.raises(LimitError, match=r"A\[0, 1\]: a rational whose denominator has 5001 digits"):
        HMM.create([[1, F(1, 10 ** 5000)], [0, 1]], [[1, 1]], [1, 0])
    with pytest.raises(LimitError, match=r"the number 1e999999999 would need 1000000000 digits exactly"):
        HMM.create([["1e999999999", 0], [0, 1]], [[1, 1]], [1, 0])
    with pytest.raises(LimitError, match=r"A\[0, 0\]: a decimal that would need 5001 digits"):
        HMM.create([[Decimal("1e-5000"), 0], [0, 1]], [[1, 1]], [1, 0])
    with pytest.raises(LimitError, match=r"mu\[0\]: an integer of 5001 digits"):
        HMM.create([[1]], [[1]], [1]).with_task([10 ** 5000])
    ok = F(1, 10 ** 3999)                    # 4,000 digits: accepted, as in an instance file
    assert HMM.create([[ok, 0], [1 - ok, 1]], [[1, 1]], [1, 0]).A[0, 0] == ok


def test_huge_values_reach_messages_without_crashing():
    one = np.array([[F(1), F(1)]], dtype=object)
    pi0 = np.array([F(1), F(0)], dtype=object)
    with pytest.raises(InputError, match=r"A: column 0 sums to an integer of 5001 digits, expected exactly 1"):
        HMM(np.array([[F(10 ** 5000), F(0)], [F(0), F(1)]], dtype=object), one, pi0)
    with pytest.raises(InputError, match=r"entry \[0, 0\] is a negative integer of 5001 digits"):
        HMM(np.array([[F(-10 ** 5000), F(0)], [F(0), F(1)]], dtype=object), one, pi0)
    h = HMM(np.eye(2, dtype=object) * F(1), one, pi0, np.array([F(10 ** 5000), F(0)], dtype=object))
    with pytest.raises(InputError, match=r"mu\[0\]: an integer of 5001 digits is beyond the float64 range"):
        h.check_task_range()


def test_self_containing_and_deep_lists():
    a = [[1, 0], [0, 1]]
    a[1].append(a)
    for exact in (True, False):
        with pytest.raises(InputError, match=r"A: a list that contains itself"):
            HMM.create(a, [[1, 1]], [1, 0], exact=exact)
    b = [1]
    b.append(b)
    with pytest.raises(InputError, match=r"mu: a list that contains itself"):
        HMM.create([[1]], [[1]], [1], b)
    deep = [1]
    for _ in range(40):
        deep = [deep]
    with pytest.raises(InputError, match=r"A: nested more than 32 deep"):
        HMM.create(deep, [[1]], [1])
    row = [F(1, 2), F(1, 2)]                 # one row object used twice is no cycle
    assert HMM.create([row, row], [[1, 1]], [1, 0]).num_states == 2


@pytest.mark.parametrize("path", [None, 5, b"x.json", ["x.json"]])
def test_save_and_load_want_a_path(path):
    h = HMM.create([[1]], [[1]], [1])
    with pytest.raises(InputError, match=r"path: expected a file path \(a str or pathlib.Path\), found "):
        h.save(path)
    with pytest.raises(InputError, match=r"path: expected a file path"):
        HMM.load(path)


def test_save_accepts_pathlib(tmp_path):
    h = HMM.create([[1]], [[1]], [1])
    h.save(tmp_path / "one.json")
    assert HMM.load(tmp_path / "one.json") == h


def test_float_mode_refuses_underflow_like_json():
    with pytest.raises(InputError) as from_json:
        parse_instance({"kind": "hmm", "A": [["1e-400", "0"], ["1", "1"]], "W": [[1, 1]], "pi0": [1, 0]}, exact=False)
    with pytest.raises(InputError, match=r"A\[0, 0\]: about 1e-400 would become 0 in float64 \(below about "
                                         r"4.9e-324\), changing the model; create it with exact=True") as from_api:
        HMM.create([["1e-400", "0"], ["1", "1"]], [[1, 1]], [1, 0], exact=False)
    json_text = str(from_json.value).removeprefix("instance: ")
    assert str(from_api.value).split("; ")[0] == json_text.split("; ")[0]
    with pytest.raises(InputError, match=r"A\[0, 0\]: about 1e400 is beyond the float64 range"):
        HMM.create([["1e400", "0"], ["0", "1"]], [[1, 1]], [1, 0], exact=False)
    with pytest.raises(InputError, match=r"A\[0, 0\]: about 1e400 is beyond the float64 range"):
        HMM.create([[10 ** 400, 0], [0, 1]], [[1, 1]], [1, 0], exact=False)
    with pytest.raises(InputError, match=r"expected real numbers, found an array of complex numbers"):
        HMM.create(np.eye(2, dtype=complex), [[1, 1]], [1, 0], exact=False)
    with pytest.raises(InputError, match=r"A: entry \[0, 0\] is nan, expected a finite number"):
        HMM.create([[np.nan, 0], [0, 1]], [[1, 1]], [1, 0], exact=False)


def test_float_mode_reads_exact_values_once():
    h = HMM.create([["0.1", 0.9], [0.9, F(1, 10)]], [[1, 1]], [Decimal("1"), 0], exact=False)
    assert h.A.tolist() == [[0.1, 0.9], [0.9, 0.1]] and h.pi0.tolist() == [1.0, 0.0]


def test_create_keeps_its_fresh_arrays():
    A = np.array([[0.5, 0.5], [0.5, 0.5]])
    h = HMM.create(A, [[1.0, 1.0]], [1.0, 0.0], exact=False)
    assert h.A is not A and not h.A.flags.writeable
    A[0, 0] = 7.0
    assert h.A[0, 0] == 0.5


def test_a_long_exact_sum_is_shown_short_on_every_path(tmp_path):
    """The shortening lives where a value is shown (rational.shown_exact), so a JSON instance
    (and HMM.create) say what the .npz path says: 1 + 5e-324 is a 324/324-digit fraction."""
    import json

    from headprompt.models.hmm.files import load_instance

    path = tmp_path / "sub.json"
    path.write_text(json.dumps({"kind": "hmm", "A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "W": [[1, 1, 1]],
                                "pi0": ["5e-324", "1", "0"], "mu": [1, -1, 0]}))
    for build in (lambda: load_instance(path), lambda: HMM.create([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 1, 1]], ["5e-324", "1", "0"])):
        with pytest.raises(InputError) as got:
            build()
        text = str(got.value)
        assert "sums to about 1.000000000 (1 + 5.00E-324, a 324/324-digit fraction)" in text
        assert not re.search(r"\d{49}", text)


# ------------------------------------------------ MemoryHMM.create: sizes decided before allocating

def _mem_create(cells, values, syntax=1, **kw):
    from headprompt import MemoryHMM

    n = cells * syntax if cells * syntax < 10 else 1         # the arrays never matter: refused first
    return MemoryHMM.create(cells, values, syntax, [[1] * n] * n, [[[1] * n]], [1] * n, **kw)


def test_memory_product_prior_that_would_expand_past_the_cap_is_refused():
    """pM_cells of 30 cells x 2 values is 60 numbers, but the joint prior it expands to has
    2^30 entries (the old code built all of them, one Python product each: hours)."""
    _refused_fast(lambda: _mem_create(30, 2, pM_cells=[["1/2", "1/2"]] * 30),
                  r"pM_cells \(30 cells x 2 memory values\) expands to a joint prior pM of \|M\|\^N = 2\^30 = "
                  r"1,073,741,824 entries; an exact memory HMM holds at most 8,000,000 entries")
    _refused_fast(lambda: _mem_create(8, 64, pM_cells=np.broadcast_to(np.float64(1 / 64), (8, 64)), exact=False),
                  r"64\^8 = 281,474,976,710,656 entries; a float memory HMM holds at most 600,000,000")
    _refused_fast(lambda: _mem_create(10 ** 9, 2, pM_cells=[[1, 0]]),
                  r"cells x syntax_states = 1000000000 x 1 hidden states; an exact memory HMM holds at most 2000")


def test_memory_joint_prior_and_arrays_counted_from_shapes():
    huge = DENSE_MAX_ENTRIES["exact"] + 1
    prior = np.broadcast_to(np.int64(0), (huge,))                 # no memory behind it
    _refused_fast(lambda: _mem_create(1, huge, pM=prior),
                  r"1 cells of 8000001 memory values need a joint prior pM of \|M\|\^N = 8000001\^1")
    W = np.broadcast_to(np.int64(1), (huge, 1, 1))
    from headprompt import MemoryHMM

    _refused_fast(lambda: MemoryHMM.create(1, 1, 1, [[1]], W, [1], [1]),
                  r"more than 8,000,000 entries in A, W, pi0, pM together; that is the limit for an exact memory HMM")


def test_memory_size_caps_sit_exactly_at_the_dense_caps():
    from headprompt.models.hmm.reading import check_memory_size

    cap = DENSE_MAX_ENTRIES["exact"]
    check_memory_size(1, cap, 1, {}, exact=True, expand_prior=True)               # at the cap: allowed
    with pytest.raises(LimitError):
        check_memory_size(1, cap + 1, 1, {}, exact=True, expand_prior=True)
    check_memory_size(DENSE_MAX_STATES["exact"], 1, 1, {}, exact=True, expand_prior=True)
    with pytest.raises(LimitError, match="2001 x 1 hidden states"):
        check_memory_size(DENSE_MAX_STATES["exact"] + 1, 1, 1, {}, exact=True, expand_prior=True)


def test_memory_instance_file_with_a_huge_product_prior_is_refused_fast():
    data = {"kind": "memory-hmm", "cells": 40, "memory_values": 2, "syntax_states": 1, "target_cell": 0,
            "A": [[1]], "W": [[[1]]], "pi0": [1], "pM_cells": [["1/2", "1/2"]] * 40}
    _refused_fast(lambda: parse_instance(data), r"memory_values 2, cells 40, syntax_states 1: the lifted chain")


def test_memory_product_prior_is_the_product_of_the_cells():
    """Within the caps the joint prior is still prod_j pM_cells[j, m_j], lexicographic in
    m_1..m_N (m_1 most significant), exactly; in float mode multiplied left to right."""
    import itertools

    from headprompt import MemoryHMM

    cells = [[F(1, 2), F(1, 2)], [F(1, 3), F(2, 3)], [F(1, 4), F(3, 4)]]
    n = 3
    A = [[int(i == j) for j in range(n)] for i in range(n)]
    W = [[[1] * n, [0] * n], [[0] * n, [1] * n]]
    m = MemoryHMM.create(3, 2, 1, A, W, [F(1, 3)] * n, pM_cells=cells, target_cell=0)
    for c, ms in enumerate(itertools.product(range(2), repeat=3)):
        assert m.pM[c] == cells[0][ms[0]] * cells[1][ms[1]] * cells[2][ms[2]]
    assert sum(m.pM) == 1
    fcells = [[0.1, 0.9], [0.3, 0.7], [0.65, 0.35]]
    f = MemoryHMM.create(3, 2, 1, A, W, [1 / 3] * n, pM_cells=fcells, target_cell=0, exact=False)
    for c, ms in enumerate(itertools.product(range(2), repeat=3)):
        assert f.pM[c] == (fcells[0][ms[0]] * fcells[1][ms[1]]) * fcells[2][ms[2]]
