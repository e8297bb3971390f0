"""The pooled verdict rule (verify.experiments.stats.pooled_test) on hostile but legal tables:
differences near the float limits (1e300, 1e-300, 5e-324), few nonzero differences among many
pairs (seeded random sign patterns), adjusted p-values handed to verdict_after, and malformed
input. Each property is checked against an independent computation: the exact mean and the
exact sign-flip p of constant tables with fractions.Fraction, and scale invariance."""

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from headprompt.verify.experiments.rule import rule_pvalues
from headprompt.verify.experiments.stats import adjust_family, pooled_test, verdict_after

pytestmark = pytest.mark.filterwarnings("error")


def _exact_mean(groups) -> float:
    d = [Fraction(float(x)) for v in groups.values() for x in v]
    return float(sum(d) / len(d))


def _exact_flip_p(d) -> float:
    """Two-sided sign-flip p of the sum over all 2^N patterns, in exact arithmetic."""
    d = [Fraction(float(x)) for x in d]
    total = sum(d)
    sums = [sum(s * x for s, x in zip(signs, d)) for signs in itertools.product((1, -1), repeat=len(d))]
    return min(1.0, 2 * min(sum(s >= total for s in sums), sum(s <= total for s in sums)) / 2 ** len(d))


@pytest.mark.parametrize("c", [1e-300, 5e-324, 1e300, 1.7e308])
def test_constant_tables_at_any_scale_give_the_exact_sign_flip_p(c):
    """[c] * 7 (and two settings of c and c / 2, or 2 c below the normal range): every difference positive, so the sign-flip p
    is 2 / 2^7 at any scale; an absolute tie tolerance gave p = 1 for 5e-324 (and said the
    differences differ in sign), squares of 1e300 overflowed, and math.fsum raised at 1.7e308."""
    for groups in ({0: [c] * 7}, {0: [c] * 4, 1: [c / 2 if c > 1e-300 else 2 * c] * 3}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = pooled_test(groups)
        d = [x for v in groups.values() for x in v]
        assert r["p"] == _exact_flip_p(d) == 2 / 2 ** 7
        assert r["estimate"] == _exact_mean(groups) > 0
        assert r["verdict"] == "supported" and r["zero_variance"]


def test_tiny_and_huge_tables_match_the_same_table_at_unit_scale():
    base = {0: [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], 1: [1.0, 3.0, 1.0], 2: [0.5, -0.25, 2.5]}
    ref = pooled_test(base)
    for c in (1e-300, 2.0 ** -1000, 1e-200, 1e200, 1e300):
        groups = {s: [x * c for x in v] for s, v in base.items()}
        r = pooled_test(groups)
        assert r["estimate"] == _exact_mean(groups)
        assert not r["zero_variance"] and "constant" not in (r["reason"] or "")
        assert r["p"] == pytest.approx(ref["p"], rel=1e-9) and r["verdict"] == ref["verdict"]
        lo, hi = r["ci95"]
        assert lo <= r["estimate"] <= hi and np.isfinite([lo, hi]).all()
        assert lo == pytest.approx(ref["ci95"][0] * c, rel=1e-6) and hi == pytest.approx(ref["ci95"][1] * c, rel=1e-6)
        assert r["se"] == pytest.approx(ref["se"] * c, rel=1e-9)
    # a power of 2 is exact: the same p to the last bit
    assert pooled_test({s: [x * 2.0 ** -1000 for x in v] for s, v in base.items()})["p"] == ref["p"]


def test_huge_differences_neither_overflow_nor_raise():
    groups = {0: [1.7e308, 1.6e308, 1.75e308], 1: [-1.7e308, 1.7e308, 1.0e308, 1.2e308]}
    r = pooled_test(groups)
    assert r["estimate"] == _exact_mean(groups)
    assert 0 <= r["p"] <= 1
    if r["ci95"] is not None:
        assert r["ci95"][0] <= r["estimate"] <= r["ci95"][1]
    mix = {0: [1e300, 1e-300, 1e300, -1e-300, 5e299, 1e-300]}
    r = pooled_test(mix)
    assert r["estimate"] == _exact_mean(mix) and 0 <= r["p"] <= 1


def test_random_sign_patterns_never_go_below_the_minimum_reachable_p():
    """5 nonzero differences among 20 pairs: no sign-flip p can be below 2^(1 - 5) = 0.0625, but
    4,095 random patterns drew too few of the identity's ties at seed 149 (p 0.048: "supported")."""
    d = np.array([1.0] * 5 + [0.0] * 15)
    ps = np.array([rule_pvalues(d, [20], seed=s)["p"][0] for s in range(300)])
    assert ps.min() >= 2 * 0.5 ** 5
    r = pooled_test({0: list(d)}, seed=149)
    assert r["verdict"] == "inconclusive" and r["reason"].startswith("cannot reach p < 0.05")
    assert r["p"] >= r["min_reachable_p"] == 2 * 0.5 ** 5
    six = pooled_test({0: [1.0] * 6 + [0.0] * 14}, seed=149)          # 6 nonzero: 0.03125 is reachable
    assert six["verdict"] == "supported" and six["p"] >= 2 * 0.5 ** 6


def test_no_verdict_from_fewer_than_six_nonzero_differences_whatever_p_is_handed_in():
    for groups in ({0: [0.1, 0.2]}, {0: [0.0] * 9 + [0.01, 0.03]}, {0: [0.1, 0.3], 1: [0.2, 0.2, 0.25]}):
        r = pooled_test(groups)
        for p_adj in (0.0, 1e-6, 0.01):
            v = verdict_after(r, p_adj)
            assert v["verdict"] == "inconclusive" and v["reason"].startswith("cannot reach p < 0.05")
        assert all(f["verdict"] == "inconclusive" for f in adjust_family([r, r]))


def test_zero_variance_reasons_are_true_of_the_data():
    # constant per setting, all positive, the small constant below the sum's tie tolerance: the
    # sign-flip test treats it as a tie (p 0.25 >= the exact 2^-5), and the reason must not say
    # that the settings differ in sign
    r = pooled_test({0: [1.0] * 3, 1: [1e-13] * 3})
    assert r["p"] >= _exact_flip_p([1.0] * 3 + [1e-13] * 3)
    if r["verdict"] == "inconclusive":
        assert "differ in sign" not in r["reason"] and "cancel" not in r["reason"]
    mixed = pooled_test({0: [0.1] * 4, 1: [-0.03] * 4})
    assert "differ in sign" in mixed["reason"] and mixed["p"] == _exact_flip_p([0.1] * 4 + [-0.03] * 4)
    # the mean of 6 x 5e-324 and 13 zeros rounds to 0 though the sum does not: no "cancel"
    r = pooled_test({0: [5e-324] * 6, 1: [0.0] * 13})
    assert r["estimate"] == _exact_mean({0: [5e-324] * 6, 1: [0.0] * 13}) == 0.0
    assert r["verdict"] == "inconclusive" and "cancel" not in r["reason"] and "every paired" not in r["reason"]
    cancel = pooled_test({0: [0.25] * 3, 1: [-0.375] * 2})
    assert "cancel" in cancel["reason"] and cancel["estimate"] == 0.0


def test_container_types_and_negative_zero():
    lists = {0: [1, 2, 0, 1, 3], 1: [3, 1, 2]}
    ref = pooled_test(lists)
    for groups in ({0: (1, 2, 0, 1, 3), 1: (3, 1, 2)}, {0: np.array([1, 2, 0, 1, 3]), 1: np.array([3.0, 1.0, 2.0])},
                   {0: [Fraction(1), 2.0, 0, np.int64(1), 3], 1: [3, 1, 2]}):
        r = pooled_test(groups)
        assert r["p"] == ref["p"] and r["estimate"] == ref["estimate"] == _exact_mean(lists)
    z = pooled_test({0: [-0.0, 0.0, -0.0], 1: [0.0, -0.0]})
    assert z["nonzero"] == 0 and z["reason"] == "no difference: every paired difference is 0"
    r = pooled_test({0: [-0.0] * 5 + [0.1] * 5})
    assert r["nonzero"] == 5 and r["verdict"] == "inconclusive"


@pytest.mark.parametrize("groups, problem", [
    ({0: [0.1, float("nan")]}, "not finite"), ({0: [float("inf"), 0.1]}, "not finite"),
    ({0: [10 ** 400, 1]}, "not finite"), ({0: ["a", 0.1]}, "not a real number"),
    ({0: ["0.1", "0.2"]}, "not a real number"), ({0: [None, 0.1]}, "not a real number"),
    ({0: [1 + 1j, 0.2]}, "not a real number"), ({0: None}, "expected a list"), ({0: "0.1"}, "expected a list"),
    ({0: {"a": 1}}, "expected a list"), ({0: []}, "no paired differences"),
    ({0: [0.1, 0.2], 1: np.zeros(0)}, "no paired differences"), ({0: [[0.1, 0.2], [0.3]]}, "ragged or nested"),
    ({0: [[0.1, 0.2], [0.3, 0.4]]}, "shape"), ({0: 0.3}, "expected a flat list"),
    ([0.1, 0.2], "expected a dict"), (None, "expected a dict"), (np.ones(3), "expected a dict"),
])
def test_bad_input_is_a_one_line_value_error(groups, problem):
    with pytest.raises(ValueError, match=problem) as err:
        pooled_test(groups)
    assert str(err.value).startswith("pooled_test: ") and "\n" not in str(err.value)


def test_degenerate_designs_and_reproducibility():
    assert pooled_test({})["reason"] == "no (setting, trial) pairs count toward the claim"
    assert pooled_test({0: [0.2]})["p"] is None
    many = {s: [0.01 * (s + 1)] for s in range(8)}          # one trial each: pooled into one stratum
    r = pooled_test(many)
    assert r["estimate"] == _exact_mean(many) and r["ci95"][0] <= r["estimate"] <= r["ci95"][1]
    rng = np.random.default_rng(0)
    big = {0: list(rng.normal(0.02, 0.05, 100)), 1: [0.1, 0.2], 2: [0.05, 0.0]}
    a, b = pooled_test(big), pooled_test(big)
    assert a["p"] == b["p"] and a["ci95"] == b["ci95"] and a["verdict"] == b["verdict"]
