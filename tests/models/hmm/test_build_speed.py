"""Building instances is cheap where nothing new needs checking, and as strict as ever where it
does: a model derived from a checked one (``with_task``, ``dataclasses.replace``) keeps its
arrays and checks only what is new; user arrays are checked in full, with the same messages as
the plain reference checks below; the faster generator and conversions give the very same
numbers as the reference (slow) paths kept here. No timing asserts."""

from __future__ import annotations

import dataclasses
import pickle
import re
from fractions import Fraction as Fr

import numpy as np
import pytest

from headprompt.models import exceptions as exc
from headprompt.models.generate import generators
from headprompt.models.generate.generators import prompt_friendly_hmm, random_exact_hmm
from headprompt.models.hmm.rational import shown_exact
from headprompt.models.hmm import arrays, memory
from headprompt.models.hmm.integer import integer_hmm
from headprompt.models.hmm.limits import FLOAT_TOLERANCE
from headprompt.models.hmm.rational import common_denominator, round_to_denominator
from headprompt.models.hmm.values import HMM, MemoryHMM


# ---- reference (slow) paths: the plain code the fast paths must agree with -----------------

def ref_nonnegative(arr: np.ndarray, name: str) -> None:
    neg = np.argwhere(arr < 0)
    if len(neg):
        idx = tuple(int(i) for i in neg[0])
        raise exc.ValidationError(f"{name}: entry {list(idx)} is {shown_exact(arr[idx])}, expected a nonnegative "
                                  "probability")


def ref_stochastic(arr: np.ndarray, name: str, exact: bool) -> None:
    sums = np.asarray(arr.sum(axis=0), dtype=arr.dtype)
    for idx in np.ndindex(sums.shape):
        s = sums[idx]
        ok = (s == 1) if exact else abs(float(s) - 1.0) <= FLOAT_TOLERANCE
        if not ok:
            where = f"column {list(idx) if len(idx) > 1 else idx[0]}" if idx else "the vector"
            shown = shown_exact(s) if exact else repr(float(s))     # the one way a value is shown
            raise exc.ValidationError(f"{name}: {where} sums to {shown}, expected exactly 1"
                                      + ("" if exact else f" (within {FLOAT_TOLERANCE})"))


def ref_round_to_denominator(probs, max_denominator, *, axis=0):
    probs = np.asarray(probs, dtype=float)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise exc.InputError("round_to_denominator: entries must be finite and nonnegative")
    moved = np.moveaxis(probs, axis, -1)
    out = np.empty(moved.shape, dtype=object)
    for idx in np.ndindex(moved.shape[:-1]):
        p = moved[idx]
        total = p.sum()
        if total <= 0:
            raise exc.InputError("round_to_denominator: a vector is all zero")
        support = p > 0
        if support.sum() > max_denominator:
            raise exc.InputError(f"round_to_denominator: support {int(support.sum())} exceeds "
                                 f"the denominator {max_denominator}")
        counts = np.where(support, np.maximum(np.rint(p / total * max_denominator), 1), 0).astype(np.int64)
        while counts.sum() != max_denominator:
            diff = max_denominator - counts.sum()
            j = int(np.argmax(np.where(counts > 1, counts, 0) if diff < 0 else counts))
            step = max(diff, 1 - counts[j]) if diff < 0 else diff
            counts[j] += step
        out[idx] = [Fr(int(c), max_denominator) for c in counts]
    return np.moveaxis(out, -1, axis)


def _message(check, *args) -> str | None:
    try:
        check(*args)
    except exc.ValidationError as e:
        return str(e)
    return None


def _same_entries(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes, dtypes, types and values entry by entry (floats bit for bit)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype != object:
        return a.tobytes() == b.tobytes()
    return all(type(x) is type(y) and x == y for x, y in zip(a.flat, b.flat))


def _small_exact(mu=None) -> HMM:
    return HMM.create([["1/2", "1/3"], ["1/2", "2/3"]], [["1/4", "1/2"], ["3/4", "1/2"]], ["1/3", "2/3"], mu)


@pytest.fixture
def count_checks(monkeypatch):
    """Counts the calls of the two probability checks."""
    calls = {"nonnegative": 0, "stochastic": 0}
    nonneg, stoch = arrays._check_nonnegative, arrays._check_stochastic

    def counted_nonneg(*a, **k):
        calls["nonnegative"] += 1
        return nonneg(*a, **k)

    def counted_stoch(*a, **k):
        calls["stochastic"] += 1
        return stoch(*a, **k)

    for module in (memory, arrays):             # the checks live in arrays.py; memory.py calls some directly
        monkeypatch.setattr(module, "_check_nonnegative", counted_nonneg)
        monkeypatch.setattr(module, "_check_stochastic", counted_stoch)
    return calls


# ---- derived models: no re-validation, same arrays ------------------------------------------

@pytest.mark.parametrize("exact", [True, False])
def test_with_task_keeps_arrays_and_does_not_check_them_again(count_checks, exact):
    base = random_exact_hmm(6, 4, rng=np.random.default_rng(1))
    if not exact:
        base = base.to_float()
    count_checks.update(nonnegative=0, stochastic=0)            # (building base checked its arrays)
    derived = base.with_task([1, -1, 2, 0, 0, -3])
    assert count_checks == {"nonnegative": 0, "stochastic": 0}
    assert derived.A is base.A and derived.W is base.W and derived.pi0 is base.pi0
    assert derived.exact == exact and derived.mu.tolist() == [1, -1, 2, 0, 0, -3]
    assert all(type(v) is Fr for v in derived.mu) if exact else derived.mu.dtype == np.float64
    again = derived.with_task([0, 0, 0, 0, 0, 1])
    assert again.A is base.A and count_checks == {"nonnegative": 0, "stochastic": 0}
    # a user's arrays are checked (counter sanity)
    HMM.create(base.A.tolist(), base.W.tolist(), base.pi0.tolist(), exact=exact)
    assert count_checks == {"nonnegative": 3, "stochastic": 3}


def test_replace_and_constructor_reuse_checked_arrays(count_checks):
    base = random_exact_hmm(5, 3, rng=np.random.default_rng(2))
    count_checks.update(nonnegative=0, stochastic=0)
    mu = np.array([Fr(1), Fr(-1), Fr(0), Fr(2), Fr(1, 3)], dtype=object)
    replaced = dataclasses.replace(base, mu=mu)
    rebuilt = HMM(base.A, base.W, base.pi0, mu)
    assert count_checks == {"nonnegative": 0, "stochastic": 0}
    for m in (replaced, rebuilt):
        assert m.A is base.A and m.W is base.W and m.pi0 is base.pi0
        assert m.mu is not mu and m.mu.tolist() == mu.tolist() and not m.mu.flags.writeable
    # a new pi0 (with_stationary_start's path) is checked, the kept A and W are not
    HMM(base.A, base.W, np.array([Fr(1, 5)] * 5, dtype=object))
    assert count_checks == {"nonnegative": 1, "stochastic": 1}


def test_derived_models_are_values():
    base = _small_exact()
    a, b = base.with_task([1, -1]), _small_exact([1, -1])
    assert a == b and hash(a) == hash(b) and a != base
    assert base.mu is None                                     # the original is untouched
    with pytest.raises(ValueError):
        a.A[0, 0] = Fr(1)                                      # still read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.mu = None
    assert pickle.loads(pickle.dumps(a)) == a


@pytest.mark.parametrize("mu, error", [
    ([1, -1, 2], exc.ValidationError),                         # wrong length
    ([[1, -1]], exc.ValidationError),                          # one class row: k >= 2 needed
    ([float("nan"), 1], exc.ExactnessError),                   # NaN in exact mode
    ([0.5, -1], exc.ExactnessError),                           # a float in exact mode
    (["x", 1], exc.ExactnessError),
    ([[1, 2], [3]], exc.InputError),                           # ragged
])
def test_with_task_still_rejects_a_bad_mu(mu, error):
    base = _small_exact()
    with pytest.raises(error) as info:
        base.with_task(mu)
    assert isinstance(info.value, exc.InputError)


@pytest.mark.parametrize("mu", [[float("nan"), 1.0], [1.0, float("inf")], [1.0], ["a", 1.0]])
def test_float_with_task_still_rejects_a_bad_mu(mu):
    with pytest.raises(exc.InputError):
        _small_exact().to_float().with_task(mu)


def test_with_task_shares_task_free_derived_objects():
    base = random_exact_hmm(5, 3, rng=np.random.default_rng(3))
    ih, f = integer_hmm(base), base.to_float()
    derived = base.with_task([1, -1, 0, 0, 1])
    assert integer_hmm(derived) is ih
    g = derived.to_float()
    assert g.A is f.A and g.W is f.W and g.pi0 is f.pi0
    assert g.mu.tolist() == [1.0, -1.0, 0.0, 0.0, 1.0]
    assert derived.to_float() is g                             # built once per model
    assert "hash" not in derived._cache or derived._cache["hash"] != base._cache.get("hash")


# ---- user input stays exactly as strict -----------------------------------------------------

@pytest.mark.parametrize("A, W, pi0, message", [
    ([["1/2", "1/3"], ["1/2", "1/3"]], [[1, 1]], ["1/2", "1/2"], "A: column 1 sums to 2/3, expected exactly 1"),
    ([["3/2", 0], ["-1/2", 1]], [[1, 1]], ["1/2", "1/2"], "A: entry [1, 0] is -1/2, expected a nonnegative probability"),
    ([[1, 0], [0, 1]], [[1, 1]], ["1/2", "1/3"], "pi0: the vector sums to 5/6, expected exactly 1"),
    ([[1, 0], [0, 1]], [["1/3", 1], ["1/3", 0]], ["1/2", "1/2"], "W: column 0 sums to 2/3, expected exactly 1"),
    ([[1, 0], [0, 1]], [[1, 1, 1]], ["1/2", "1/2"], "W: expected shape (1, 2)"),
])
def test_create_is_as_strict_as_before(A, W, pi0, message):
    with pytest.raises(exc.ValidationError, match=re.escape(message)):
        HMM.create(A, W, pi0)


def test_float_create_still_refuses_nan_and_loose_columns():
    with pytest.raises(exc.ValidationError, match="is nan"):
        HMM.create([[1.0, 0.0], [0.0, float("nan")]], [[1.0, 1.0]], [0.5, 0.5], exact=False)
    with pytest.raises(exc.ValidationError, match=r"A: column 0 sums to 1\.001"):
        HMM.create([[0.5, 0.0], [0.501, 1.0]], [[1.0, 1.0]], [0.5, 0.5], exact=False)


def test_an_unfrozen_and_edited_array_is_checked_again():
    base = random_exact_hmm(3, 2, rng=np.random.default_rng(4))
    A = base.A
    A.setflags(write=True)                                     # someone goes around the freeze
    A[0, 0] += 1
    with pytest.raises(exc.ValidationError, match="A: column 0 sums to 2"):
        HMM(A, base.W, base.pi0)


def test_a_read_only_user_array_is_checked_and_copied():
    A = np.array([[Fr(1, 2), Fr(1)], [Fr(1, 3), Fr(0)]], dtype=object)
    A.setflags(write=False)
    with pytest.raises(exc.ValidationError, match="A: column 0 sums to 5/6"):
        HMM(A, np.array([[Fr(1), Fr(1)]], dtype=object), np.array([Fr(1, 2)] * 2, dtype=object))
    good = np.array([[Fr(1, 2), Fr(1)], [Fr(1, 2), Fr(0)]], dtype=object)
    good.setflags(write=False)
    h = HMM(good, np.array([[Fr(1), Fr(1)]], dtype=object), np.array([Fr(1, 2)] * 2, dtype=object))
    assert h.A is not good


def test_memory_models_keep_their_checks_and_reuse_arrays(count_checks):
    W3 = [[[1, 0], [0, 0]], [[0, 0], [1, 0]], [[0, "1/2"], [0, 0]], [[0, "1/2"], [0, 1]]]
    m = MemoryHMM.create(1, 2, 2, [[0, 1], [1, 0]], W3, ["1/2", "1/2"], ["1/2", "1/2"], mu=[1, -1])
    assert count_checks == {"nonnegative": 4, "stochastic": 4}
    r = dataclasses.replace(m, mu=np.array([Fr(2), Fr(-1)], dtype=object))
    assert count_checks == {"nonnegative": 4, "stochastic": 4}
    assert r.W is m.W and r.pM is m.pM and r != m
    assert m.to_float() is m.to_float() and m.to_float().W.tolist() == m.W.astype(float).tolist()
    bad = [row[:] for row in W3]
    bad[3] = [[0, "1/3"], [0, 1]]
    with pytest.raises(exc.ValidationError, match=r"W: column \[0, 1\] sums to 5/6, expected exactly 1"):
        MemoryHMM.create(1, 2, 2, [[0, 1], [1, 0]], bad, ["1/2", "1/2"], ["1/2", "1/2"])


def _random_rational_array(rng, shape, kind):
    size = int(np.prod(shape))
    if kind == "one_denominator":
        d = int(rng.integers(1, 50))
        vals = [Fr(int(v), d) for v in rng.integers(-3, 3 * d, size)]
    elif kind == "many_denominators":
        vals = [Fr(int(n), int(d)) for n, d in zip(rng.integers(-5, 40, size), rng.integers(1, 97, size))]
    elif kind == "ints_and_fractions":
        vals = [int(v) if i % 3 else Fr(int(v), 7) for i, v in enumerate(rng.integers(-2, 9, size))]
    elif kind == "huge_denominators":                         # no small common denominator: the general path
        vals = [Fr(1, int(p)) * Fr(1, 2 ** int(rng.integers(0, 5000))) for p in rng.integers(2, 10**6, size)]
    else:                                                      # columns that sum to exactly 1
        cols = [round_to_denominator(rng.random(shape[0]), int(rng.integers(shape[0], 60)))
                for _ in range(size // shape[0])]
        return np.stack(cols, axis=1).reshape(shape)
    return np.array(vals, dtype=object).reshape(shape)


@pytest.mark.parametrize("kind", ["one_denominator", "many_denominators", "ints_and_fractions",
                                  "huge_denominators", "stochastic"])
@pytest.mark.parametrize("shape", [(4,), (3, 5), (4, 2, 3), (1, 1)])
def test_fast_checks_give_the_reference_verdict_and_message(kind, shape):
    rng = np.random.default_rng(hash((kind, shape)) % 2**32)
    for _ in range(5):
        arr = _random_rational_array(rng, shape, kind)
        assert _message(arrays._check_nonnegative, arr, "X") == _message(ref_nonnegative, arr, "X")
        assert _message(arrays._check_stochastic, arr, "X", True) == _message(ref_stochastic, arr, "X", True)


def test_checks_of_object_arrays_holding_other_things_take_the_general_path():
    arr = np.array([[0.5, Fr(1, 2)], [0.5, Fr(1, 3)]], dtype=object)       # floats in an object array
    assert _message(arrays._check_stochastic, arr, "A", True) == _message(ref_stochastic, arr, "A", True)
    with pytest.raises(exc.ValidationError):
        HMM(arr, np.array([[Fr(1), Fr(1)]], dtype=object), np.array([Fr(1, 2)] * 2, dtype=object))
    ok = np.array([[0.5, True], [0.5, False]], dtype=object)
    assert _message(arrays._check_stochastic, ok, "A", True) == _message(ref_stochastic, ok, "A", True)


# ---- conversions and the generator give the same numbers as the reference paths -------------

def test_float_form_is_astype_float_bit_for_bit():
    rng = np.random.default_rng(5)
    vals = [Fr(int(n), int(d)) for n, d in zip(rng.integers(-10**6, 10**6, 300), rng.integers(1, 10**6, 300))]
    vals += [Fr(1, 3), Fr(2, 3), Fr(10**40 + 1, 10**40), Fr(1, 10**320), Fr(7, 2**1080), Fr(-1, 10)]
    arr = np.array(vals, dtype=object).reshape(2, -1)
    assert _same_entries(arrays._to_float64(arr), arr.astype(float))
    mixed = np.array([Fr(1, 3), 2, Fr(5, 7)], dtype=object)
    assert _same_entries(arrays._to_float64(mixed), mixed.astype(float))
    hmm = random_exact_hmm(7, 5, rng=rng).with_task([1, -2, 3, 0, Fr(1, 3), 0, 0])
    f = hmm.to_float()
    for a, b in zip(f._value_fields(), hmm._value_fields()):
        assert _same_entries(a, b.astype(float))


def test_common_denominator_matches_the_plain_definition():
    rng = np.random.default_rng(6)
    vals = [Fr(int(n), int(d)) for n, d in zip(rng.integers(-50, 50, 200), rng.integers(1, 300, 200))]
    import math
    assert common_denominator(vals) == math.lcm(*(v.denominator for v in vals))
    assert common_denominator([Fr(1, 4), Fr(1, 6), 3]) == 12 and common_denominator([]) == 1


@pytest.mark.parametrize("seed", range(6))
def test_round_to_denominator_is_the_reference(seed):
    rng = np.random.default_rng(seed)
    probs = rng.random((int(rng.integers(2, 40)), int(rng.integers(1, 30))))
    probs[rng.random(probs.shape) < 0.5] = 0
    probs[0] += 0.01
    for den in (probs.shape[0], 100, 4000, 10**12):
        for axis in (0, 1) if probs[:, 0].all() else (0,):
            try:
                expected = ref_round_to_denominator(probs, den, axis=axis)
            except exc.InputError as e:
                with pytest.raises(exc.InputError, match=str(e)):
                    round_to_denominator(probs, den, axis=axis)
                continue
            assert _same_entries(round_to_denominator(probs, den, axis=axis), expected)
    with pytest.raises(exc.InputError, match="support 3 exceeds the denominator -1"):
        round_to_denominator(np.array([0.2, 0.3, 0.5]), -1)


@pytest.mark.parametrize("seed, hidden, vocab, classes", [(0, 5, 4, None), (1, 30, 10, None),
                                                          (7, 60, 12, None), (3, 40, 20, 3)])
def test_generated_instances_are_those_of_the_reference_path(monkeypatch, seed, hidden, vocab, classes):
    fast, fast_info = prompt_friendly_hmm(hidden, vocab, rng=np.random.default_rng(seed), classes=classes)
    monkeypatch.setattr(generators, "round_to_denominator", ref_round_to_denominator)
    slow, slow_info = prompt_friendly_hmm(hidden, vocab, rng=np.random.default_rng(seed), classes=classes)
    assert fast_info == slow_info
    for a, b in zip(fast._value_fields(), slow._value_fields()):
        assert _same_entries(a, b)
    # and what the recipe promises
    assert fast.exact and fast.num_states == hidden and fast.num_tokens == vocab
    for arr in (fast.A, fast.W, fast.pi0):
        assert all(type(v) is Fr and v >= 0 for v in arr.flat)
        assert all(s == 1 for s in np.atleast_1d(arr.sum(axis=0)))
    assert all(v > 0 for v in fast.W.flat) and all(v > 0 for v in fast.pi0)


def _digest(hmm: HMM) -> str:
    import hashlib

    m = hashlib.sha256()
    for a in (hmm.A, hmm.W, hmm.pi0, hmm.mu):
        m.update(repr(a.shape).encode())
        for v in a.flat:
            m.update(f"{v.numerator}/{v.denominator};".encode())
    return m.hexdigest()[:16]


# digests of prompt_friendly_hmm's instances as the code before the faster generator (commit
# a510988) drew them, with its own H*, B and tie; column_support 1, 6 and |H| cover the
# support-drawing loop's edge cases (nothing to add, several, every state)
@pytest.mark.parametrize("seed, hidden, vocab, column_support, digest, H_star, B, tie", [
    (0, 5, 4, 3, "5c04adb2a5f54851", [3, 4], [2, 4], [2, 2]),
    (1, 12, 6, 3, "1f163350a75b6a40", [1, 4, 11], [8, 11], [4, 4]),
    (2, 20, 8, 1, "cad7c6bfb29d67d1", [5, 7, 11, 18], [6, 18], [7, 0]),
    (3, 20, 8, 6, "536129412c8caf9e", [2, 12, 18, 19], [12, 16], [7, 1]),
    (4, 40, 10, 40, "bc7efdebffcd0632", [10, 16, 23, 26, 38], [16, 31], [9, 6]),
])
def test_generated_instances_are_those_drawn_before(seed, hidden, vocab, column_support, digest, H_star, B, tie):
    hmm, info = prompt_friendly_hmm(hidden, vocab, rng=np.random.default_rng(seed), column_support=column_support)
    assert (_digest(hmm), info["H_star"], info["B"], info["tie_sequence"]) == (digest, H_star, B, tie)
    # the recipe: a column outside B has its cycle successor plus draws up to column_support
    # nonzeros; one of them (the self-loop state) starts from two
    support = (hmm.A != 0).sum(axis=0)
    k = min(column_support, hidden)
    others = [h for h in range(hidden) if h not in B]
    assert sorted(int(support[h]) for h in others) == sorted([max(1, k)] * (len(others) - 1) + [max(2, k)])
    assert sum(hmm.A[h, h] != 0 for h in others) >= 1
    assert set().union(*(np.flatnonzero(hmm.A[:, b]).tolist() for b in B)) == set(H_star)


# ---- supports and the float image of the bound chain, decided exactly -----------------------

def _tiny_instance():
    """An exact HMM with a transition of 10^-400, which rounds to 0.0 in float64."""
    tiny = Fr(1, 10 ** 400)
    return HMM.create([[1 - tiny, Fr(1, 2)], [tiny, Fr(1, 2)]], [[Fr(1, 3), Fr(1, 2)], [Fr(2, 3), Fr(1, 2)]],
                      [Fr(1, 2), Fr(1, 2)])


def test_transition_support_is_exact_even_where_the_float_is_zero():
    from headprompt.models.generate.generators import prompt_friendly_hmm

    h = _tiny_instance()
    assert float(h.A[1, 0]) == 0.0 and h.transition_support().tolist() == [[True, True], [True, True]]
    g, _ = prompt_friendly_hmm(40, 5, rng=np.random.default_rng(3))
    want = [[g.A[r, c] != 0 for c in range(40)] for r in range(40)]          # plain exact comparisons
    assert g.transition_support().tolist() == want


def test_bound_chain_from_the_shared_float_form_equals_the_entrywise_path():
    from headprompt.models.generate.generators import prompt_friendly_hmm
    from headprompt.models.inference import bounds

    for h in (prompt_friendly_hmm(30, 4, rng=np.random.default_rng(5))[0], _tiny_instance()):
        chain = bounds._build_bound_chain(h)
        for name in ("A", "W", "pi0"):
            ref, ok = bounds._to_normal_floats(getattr(h, name))
            assert np.array_equal(np.asarray(getattr(h.to_float(), name), dtype=float), ref)
            assert bounds._normal_from_float_form(getattr(h, name), ref) == ok
    assert not bounds._normal_from_float_form(_tiny_instance().A, np.asarray(_tiny_instance().to_float().A, dtype=float))
