"""The Python API under a hostile notebook user (found by an audit): bad input is a project
error (``HeadpromptError``, one line), never a ``TypeError``/``ZeroDivisionError``/leaked
warning; nothing is printed to stdout; plots work on the ``Agg`` backend."""

import warnings
from fractions import Fraction

import numpy as np
import pytest

import headprompt
from headprompt import HMM, InputError

pytestmark = pytest.mark.filterwarnings("error")

SMALL = dict(hidden=4, vocab=3, samples=30, length=3)


def _tiny_product_model():
    """Exact entries 1e-300 in A and 1e-320 in W: their float product underflows to 0."""
    A = [[Fraction(1) - Fraction(1, 10**300), "1/2", "1/3"], ["1e-300", "1/2", "1/3"], [0, 0, "1/3"]]
    W = [[Fraction(1) - Fraction(2, 10**320), "1/2", "1/4"], ["1e-320", "1/2", "1/4"], ["1e-320", 0, "1/2"]]
    return HMM.create(A, W, ["1/3"] * 3, [1, -1, "1/2"])


@pytest.mark.parametrize("mode", [None, "certified", "float"])
@pytest.mark.parametrize("theorem", ["3.3", "3.6"])
def test_entries_whose_product_underflows_are_checked_not_crashed(theorem, mode, capsys):
    # was ZeroDivisionError in the bound chain's guard (8 * 2^-1022 / (amin * wmin) ** every)
    # and a RuntimeWarning (log2 of 0) in the rescaling interval, on exact and float models
    report = headprompt.check(_tiny_product_model(), theorem, mode=mode, samples=40, length=4)
    assert report.to_dict()["verdict"] in ("verified", "refuted", "assumptions-fail")
    assert report.rows()
    assert capsys.readouterr().out == ""


def test_hmmlearn_fit_with_near_zero_probabilities_in_float_mode(capsys):
    hmm_mod = pytest.importorskip("hmmlearn.hmm")
    model = hmm_mod.CategoricalHMM(n_components=3, random_state=0, n_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(np.random.default_rng(0).integers(0, 4, size=(200, 1)))
    t = model.transmat_.copy()
    t[0] = [1 - 2e-300, 1e-300, 1e-300]
    e = model.emissionprob_.copy()
    e[1] = [1 - 3e-320, 1e-320, 1e-320, 1e-320]
    model.transmat_, model.emissionprob_ = t, e
    hmm = HMM.from_hmmlearn(model, start="h0", mu=[1, -1, 0.5])
    report = headprompt.check(hmm, "3.6", mode="float", samples=50, length=3)
    assert report.verdict.endswith("(uncertified)") and not report.proven
    assert capsys.readouterr().out == ""


def test_rescale_interval_and_guard_on_an_underflowing_product():
    from headprompt.models.inference.bounds import _guard
    from headprompt.models.inference.floats import rescale_interval

    A = np.array([[1 - 1e-300, 0.5], [1e-300, 0.5]])
    W = np.array([[1 - 1e-320, 1.0], [1e-320, 0.0]])
    assert rescale_interval(A, W) == 1
    assert _guard(1e-300, 1e-320, 1) == np.inf
    assert _guard(0.5, 0.25, 2) == 8 * 2.0 ** -1022 / (0.5 * 0.25) ** 2
