"""A conversion never decides a verdict silently (issue 35 item 1, SPEC section 5): where the
start reading of a fitted model or rationalize's pruning makes an assumption fail that the
source model satisfies, the verdict line, the assumption's ``why`` and the JSON say so and give
the verdict under the other readings. Assumption 3.2 is judged independently by
:func:`tests.oracle.is_ergodic_chain` (Fraction arithmetic, its own graph search)."""

import warnings
from fractions import Fraction

import numpy as np
import pytest

hmmlearn_hmm = pytest.importorskip("hmmlearn.hmm")

import headprompt  # noqa: E402
from headprompt.models.hmm.values import HMM  # noqa: E402
from tests import oracle  # noqa: E402

A_TRUE = np.array([[0.7, 0.1, 0.1, 0.2], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.6]])
W_TRUE = np.array([[0.7, 0.05, 0.05, 0.1], [0.1, 0.7, 0.05, 0.05], [0.1, 0.1, 0.8, 0.05],
                   [0.05, 0.1, 0.05, 0.7], [0.05, 0.05, 0.05, 0.1]])
MU = [1, -1, 0.5, -0.5]


def _tokens(A, W, pi0, length, rng):
    h = int(rng.choice(len(pi0), p=pi0))
    out = []
    for _ in range(length):
        h = int(rng.choice(A.shape[0], p=A[:, h]))
        out.append(int(rng.choice(W.shape[0], p=W[:, h])))
    return np.array(out).reshape(-1, 1)


@pytest.fixture(scope="module")
def fit():
    """A hmmlearn fit of one long sequence of a chain with every transition positive (3.2 holds)."""
    rng = np.random.default_rng(3)
    return hmmlearn_hmm.CategoricalHMM(n_components=4, random_state=0).fit(
        _tokens(A_TRUE, W_TRUE, np.full(4, 0.25), 5000, rng))


def _convert(fit, start):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HMM.from_hmmlearn(fit, mu=MU, start=start)


def _exact(values):
    q = [Fraction(v) for v in values]
    return [v / sum(q) for v in q]


def test_a_start_reading_that_invents_zeros_is_named_in_the_verdict(fit):
    model = _convert(fit, "h1")
    zeros = list(model.conversion.reading("h1").zeros)
    assert zeros, "this fit's h1 reading is a vertex of the simplex (the trap of issue 35)"
    report = headprompt.check(model, "3.3", rationalize=1e-9, samples=50, length=4)
    d = report.to_dict()
    assert d["verdict"] == "assumptions-fail" and d["assumptions"]["3.2"]["holds"] is False
    conv = d["conversion"]
    assert conv["decided"] is True and conv["record"]["start"]["used"] == "h1"
    assert "made by the conversion" in d["assumptions"]["3.2"]["why"]
    assert "start='stationary'" in d["assumptions"]["3.2"]["why"] and "3.2" in conv["note"]
    under = {r["reading"]: r for r in conv["readings"]}
    stationary = under["start='stationary'"]
    assert stationary["failed"] == [] and stationary["verdict"] == "verified"
    # the oracle: the fitted chain with the stationary reading's pi0 satisfies 3.2, with h1's it does not
    A = [[Fraction(v) for v in row] for row in model.A]
    assert oracle.is_ergodic_chain(A, _exact(model.conversion.reading("stationary").pi0))
    assert not oracle.is_ergodic_chain(A, _exact(model.conversion.reading("h1").pi0))
    text = str(report)
    assert "decided by the conversion, not the source model" in text and "under start='stationary'" in text


def test_the_default_reading_is_not_decided_by_the_conversion(fit):
    report = headprompt.check(_convert(fit, "auto"), "3.3", rationalize=1e-9, samples=50, length=4)
    d = report.to_dict()
    assert d["verdict"] == "verified" and not d["vacuous"]
    assert d["conversion"]["decided"] is False and d["conversion"]["record"]["start"]["requested"] == "auto"


def test_a_chain_that_fails_32_fails_under_every_reading():
    # a reducible chain (state 2 absorbing) given as a float model: no reading can repair 3.2
    A = np.array([[0.5, 0.0, 0.0], [0.3, 0.6, 0.0], [0.2, 0.4, 1.0]])
    W = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
    gen = hmmlearn_hmm.CategoricalHMM(n_components=3)
    gen.startprob_, gen.transmat_, gen.emissionprob_, gen.n_features = A @ [0.4, 0.3, 0.3], A.T, W.T, 3
    for start in ("auto", "h1", "h0", "stationary"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = HMM.from_hmmlearn(gen, mu=[1, -1, 0], start=start)
        d = headprompt.check(model, "3.3", rationalize=1e-9, samples=30, length=3).to_dict()
        assert d["assumptions"]["3.2"]["holds"] is False and "irreducible" in d["assumptions"]["3.2"]["why"]
        assert d["conversion"]["decided"] is False, start
        assert all("3.2" in r["failed"] for r in d["conversion"]["readings"]), start
        assert not oracle.is_ergodic_chain([[Fraction(v) for v in row] for row in A], [Fraction(1, 3)] * 3)


def test_a_pruned_transition_that_breaks_32_is_named():
    # the only way back to state 0 is A[0, 2] = 0.0004: rationalize=1e-3 prunes it
    A = np.array([[0.5, 0.0, 0.0004], [0.5, 0.5, 0.0], [0.0, 0.5, 0.9996]])
    W = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
    model = HMM.create(A, W, [0.3, 0.3, 0.4], [1, -1, 0], exact=False)
    d = headprompt.check(model, "3.3", rationalize=1e-3, samples=30, length=3).to_dict()
    assert d["verdict"] == "assumptions-fail" and d["conversion"]["decided"] is True
    why = d["assumptions"]["3.2"]["why"]
    assert "A[0, 2]" in why and "nothing pruned" in why
    kept = {r["reading"]: r for r in d["conversion"]["readings"]}["nothing pruned"]
    assert kept["failed"] == [] and kept["verdict"] in ("verified", "refuted")
    assert oracle.is_ergodic_chain([[Fraction(v) for v in row] for row in A], [Fraction(1, 3)] * 3)


def test_a_model_built_directly_has_no_conversion_block():
    A = [["1/2", "1/2"], ["1/2", "1/2"]]
    W = [["7/10", "1/5"], ["3/10", "4/5"]]
    d = headprompt.check(HMM.create(A, W, ["1/2", "1/2"], [1, -2]), "3.3", samples=20, length=3).to_dict()
    assert "conversion" not in d
