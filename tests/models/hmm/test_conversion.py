"""Fitted models judged as fitted (issue 35, item 1): a conversion never invents the zero that
makes Assumption 3.2 fail, a fit of a chain that fails 3.2 still fails it, and every converted
model carries a plain-data record of its conversion (``model.conversion``).

The fits are real: hmmlearn (and dynamax when installed) fitted on sequences sampled here, by
an inverse-CDF sampler independent of both libraries. Assumption 3.2 is judged by the real
check (``headprompt.check``) and, independently, by scipy's strongly connected components of
the fitted transition graph and the signs of ``pi0``.
"""

import json
import warnings
from fractions import Fraction

import numpy as np
import pytest

hmmlearn_hmm = pytest.importorskip("hmmlearn.hmm")

import headprompt  # noqa: E402
from headprompt.models.hmm.conversion import Conversion, PrunedEntry, StartReading  # noqa: E402
from headprompt.models.hmm.rationalize import rationalize  # noqa: E402
from headprompt.models.hmm.start_law import StartLawWarning, interior_initial  # noqa: E402
from headprompt.models.hmm.values import HMM  # noqa: E402

# a 4-state chain with pi0 > 0 (every transition positive: irreducible, aperiodic: 3.2 holds)
# and 5 tokens, so that 3.1 can hold too; A[to, from], column-stochastic
A_TRUE = np.array([[0.7, 0.1, 0.1, 0.2], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.6]])
W_TRUE = np.array([[0.7, 0.05, 0.05, 0.1], [0.1, 0.7, 0.05, 0.05], [0.1, 0.1, 0.8, 0.05],
                   [0.05, 0.1, 0.05, 0.7], [0.05, 0.05, 0.05, 0.1]])
# a left-to-right chain (state 3 absorbing: not irreducible, 3.2 fails) and the zero pattern a
# fit keeps (EM never makes a zero transition positive), hmmlearn's row-stochastic way
LEFT_TO_RIGHT = np.array([[0.6, 0, 0, 0], [0.4, 0.6, 0, 0], [0, 0.4, 0.6, 0], [0, 0, 0.4, 1.0]])
LEFT_TO_RIGHT_INIT = np.array([[0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0.5, 0.5], [0, 0, 0, 1.0]])
MU = [1, -1, 0.5, -0.5]


def _sample(A, W, pi0, count, length, rng):
    """``count`` sequences of ``length`` tokens (``H_0 ~ pi0`` emits nothing), ``(count*length, 1)``."""
    out = np.empty((count, length), dtype=int)
    h = (rng.random(count)[:, None] > np.cumsum(pi0)[None, :]).sum(axis=1)
    for t in range(length):
        h = (rng.random(count)[:, None] > np.cumsum(A[:, h].T, axis=1)).sum(axis=1)
        out[:, t] = (rng.random(count)[:, None] > np.cumsum(W[:, h].T, axis=1)).sum(axis=1)
    return np.minimum(out, W.shape[0] - 1).reshape(-1, 1)


def _strongly_connected(A) -> bool:
    from scipy.sparse.csgraph import connected_components

    return connected_components(np.asarray(A) > 0, directed=True, connection="strong")[0] == 1


def _judged_32(model) -> dict:
    return headprompt.check(model, "3.3", mode="float", samples=50, length=4).to_dict()["assumptions"]["3.2"]


@pytest.fixture(scope="module")
def fits():
    """(a hmmlearn fit on 5,000 tokens of the chain that satisfies 3.2, a fit of the
    left-to-right chain from 200 sequences of 30 tokens)."""
    rng = np.random.default_rng(1)
    good = hmmlearn_hmm.CategoricalHMM(n_components=4, random_state=0).fit(
        _sample(A_TRUE, W_TRUE, np.full(4, 0.25), 1, 5000, rng))
    bad = hmmlearn_hmm.CategoricalHMM(n_components=4, init_params="se", random_state=0)
    bad.transmat_ = LEFT_TO_RIGHT_INIT.copy()
    bad.fit(_sample(LEFT_TO_RIGHT, W_TRUE, np.array([1.0, 0, 0, 0]), 200, 30, rng), [30] * 200)
    return good, bad


def _convert(fit, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = HMM.from_hmmlearn(fit, mu=MU, **kwargs)
    return model, [w.message for w in seen]


def test_the_fit_of_a_regular_chain_is_not_reported_failing_32(fits):
    good, _ = fits
    assert _strongly_connected(good.transmat_.T) and good.transmat_.min() > 0        # the fit is regular
    # the case of the issue: startprob_ of one long sequence is (nearly) one-hot, so the closest
    # pi0 with A pi0 = startprob_ is a vertex of the simplex, with zeros the fit does not have
    model, seen = _convert(good)
    record = model.conversion
    assert record.source == "hmmlearn" and record.start_requested == "auto"
    assert record.reading("h1").zeros, "the h1 reading of this fit has zeros (the trap of the issue)"
    assert record.start == "stationary" and not record.reading("stationary").zeros
    assert np.all(model.pi0 > 0) and np.allclose(model.A @ model.pi0, model.pi0, atol=1e-9)
    assert any(isinstance(w, StartLawWarning) and "stationary" in str(w) for w in seen)
    assert _judged_32(model)["holds"] is True
    # the old reading is still there on request, and then fails 3.2 for the conversion's sake
    h1, _ = _convert(good, start="h1")
    assert h1.conversion.start == "h1" and list(h1.conversion.reading("h1").zeros)
    judged = _judged_32(h1)
    assert judged["holds"] is False and "full support" in judged["why"]


def test_the_fit_of_a_reducible_chain_still_fails_32(fits):
    _, bad = fits
    assert not _strongly_connected(bad.transmat_.T)                      # EM kept the zero pattern
    for start in ("auto", "h1", "h0", "stationary"):
        model, _ = _convert(bad, start=start)
        assert model.conversion.start_requested == start
        assert start == "auto" or model.conversion.start == start
        judged = _judged_32(model)
        assert judged["holds"] is False and "irreducible" in judged["why"], (start, judged)


def test_every_reading_is_recorded_with_its_pi0(fits):
    good, _ = fits
    model, _ = _convert(good)
    record = model.conversion
    names = [r.reading for r in record.readings]
    assert names == ["h1", "h0", "stationary"]
    A, start = good.transmat_.T, good.startprob_
    for r in record.readings:
        pi0 = np.array(r.pi0)
        assert pi0.min() >= 0 and pi0.sum() == pytest.approx(1, abs=1e-12)
        assert r.distance == pytest.approx(0.5 * np.abs(A @ pi0 - start).sum(), abs=1e-12)
        assert list(r.zeros) == [h for h in range(4) if pi0[h] == 0]
    assert record.reading("h0").pi0 == pytest.approx(start / start.sum(), abs=1e-15)
    assert np.array(record.reading(record.start).pi0) == pytest.approx(model.pi0, abs=0)
    assert [r.reading for r in record.alternatives] == [n for n in names if n != record.start]
    assert json.loads(json.dumps(record.to_dict()))["start"]["used"] == record.start
    # each start= option gives the reading it names; a given pi0 is recorded as "given"
    for start in ("h1", "h0", "stationary"):
        m, _ = _convert(good, start=start)
        assert m.conversion.start == start and m.pi0 == pytest.approx(m.conversion.reading(start).pi0, abs=0)
    exported = model.to_hmmlearn()
    back, seen = _convert(exported, pi0=model.pi0)
    assert back.conversion.start == "given" and back.conversion.readings[0].distance < 1e-9 and not seen


def test_an_exact_start_law_keeps_h1_and_takes_the_most_interior_solution():
    # A sends states 0 and 1 to the same law: every pi0 with pi0[0] + pi0[1] = 1/2 reaches it;
    # the closest-point LP may return a vertex (pi0[0] = 0), the interior one never
    A = np.array([[0.5, 0.5, 0.2], [0.3, 0.3, 0.3], [0.2, 0.2, 0.5]])
    pi0 = np.array([0.25, 0.25, 0.5])
    model = HMM.create(A, np.eye(3), pi0, exact=False).to_hmmlearn()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = HMM.from_hmmlearn(model)
    # the best smallest entry is 1/4 (pi0 = (1/4, 1/4, 1/2)); the midpoint keeps at least half of it
    assert back.conversion.start == "h1" and back.pi0.min() >= 0.125 - 1e-9
    assert back.A @ back.pi0 == pytest.approx(A @ pi0, abs=1e-9)
    inner = interior_initial(A, A @ pi0)
    assert inner.min() >= 0.125 - 1e-9 and A @ inner == pytest.approx(A @ pi0, abs=1e-9)
    assert interior_initial([[1.0, 1.0], [0.0, 0.0]], [0.5, 0.5]) is None


def test_renormalisation_is_recorded_per_matrix(fits):
    good, _ = fits
    f32 = hmmlearn_hmm.CategoricalHMM(n_components=4, init_params="")
    f32.startprob_ = good.startprob_.astype(np.float32)
    f32.transmat_ = good.transmat_.astype(np.float32)
    f32.emissionprob_ = good.emissionprob_.astype(np.float32)
    model, _ = _convert(f32)
    record = model.conversion
    assert record.dtype == "float32"
    for key, table in (("A", f32.transmat_.T), ("W", f32.emissionprob_.T), ("start", f32.startprob_[:, None])):
        t = table.astype(np.float64)
        sums = t.sum(axis=0)
        expected = np.abs(t / sums - t).max() if np.abs(sums - 1).max() > 1e-9 else 0.0
        assert record.renormalized[key] == pytest.approx(expected, rel=1e-12, abs=1e-300), key
    assert max(record.renormalized.values()) > 0
    plain, _ = _convert(good)
    assert plain.conversion.renormalized == {"start": 0.0, "A": 0.0, "W": 0.0}


def test_rationalize_names_the_pruned_entry_that_breaks_32():
    # a cycle 0 -> 1 -> 2 -> 0 whose only way back to 0 is a tiny 0.0004: pruning it leaves a
    # reducible chain, and the record names A[0, 2] (A[to, from])
    A = np.array([[0.5, 0.0, 0.0004], [0.5, 0.5, 0.0], [0.0, 0.5, 0.9996]])
    W = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
    model = HMM.create(A, W, [0.3, 0.3, 0.4], [1, -1, 0], exact=False)
    assert _judged_32(model)["holds"] is True
    r = rationalize(model, prune_below=1e-3, max_denominator=1000)
    record = r.model.conversion
    assert record.rationalized and record.source == "model"
    # the oracle: every positive entry whose column, normalised exactly, puts it below 1e-3
    expected = [("A", (to, fr)) for fr in range(3) for to in range(3)
                if 0 < Fraction(A[to, fr]) / sum(map(Fraction, A[:, fr])) < Fraction(1, 1000)]
    assert [(p.matrix, p.index) for p in record.pruned] == expected == [("A", (0, 2))]
    assert record.pruned_in("A")[0].value == pytest.approx(0.0004, rel=1e-9)
    judged = _judged_32(r.model)
    assert judged["holds"] is False and "irreducible" in judged["why"]
    assert "A[0, 2]" in record.describe()
    assert r.pruned == len(record.pruned)


def test_rationalize_extends_the_record_of_a_fit(fits):
    good, _ = fits
    model, _ = _convert(good)
    r = rationalize(model, prune_below=0.0, max_denominator=10**6)
    record = r.model.conversion
    assert record.source == "hmmlearn" and record.start == model.conversion.start
    assert record.readings == model.conversion.readings and record.rationalized and record.pruned == ()
    assert set(record.rationalization_change) == {"A", "W", "pi0"}
    assert max(record.rationalization_change.values()) <= 1e-6


def test_the_record_survives_derivation_but_not_the_value():
    fit = HMM.create(A_TRUE, W_TRUE, np.full(4, 0.25), exact=False).to_hmmlearn()
    model, _ = _convert(fit)
    assert model.with_task([1, 0, 0, -1]).conversion is model.conversion
    assert model.to_float().conversion is model.conversion
    import pickle

    again = pickle.loads(pickle.dumps(model))
    assert again == model and again.conversion == model.conversion
    plain = HMM(model.A, model.W, model.pi0, model.mu)
    assert plain == model and hash(plain) == hash(model) and plain.conversion is None
    with pytest.raises(headprompt.models.exceptions.ValidationError, match="expected a Conversion"):
        plain.with_conversion({"source": "x"})


def test_records_are_plain_data():
    r = Conversion(source="hmmlearn", start="h1", start_requested="h1",
                   readings=(StartReading("h1", (0.5, 0.5), 0.0, ()),),
                   pruned=(PrunedEntry("A", (0, 1), 0.0001),))
    assert json.loads(json.dumps(r.to_dict())) == r.to_dict()
    assert r.to_dict()["pruned"] == [{"matrix": "A", "index": [0, 1], "value": 0.0001}]


# ---------------------------------------------------------------- dynamax (when installed)

def _dynamax_fit(A, W, pi0, tokens, *, fix_transitions):
    import jax
    import jax.numpy as jnp
    import jax.random as jr
    from dynamax.hidden_markov_model import CategoricalHMM

    model = CategoricalHMM(A.shape[0], 1, W.shape[0])
    kw = {}
    if fix_transitions:
        kw["transition_matrix"] = jnp.asarray(A.T)
    params, props = model.initialize(jr.PRNGKey(0), **kw)
    if fix_transitions:
        props.transitions.transition_matrix.trainable = False
    params, _ = model.fit_em(params, props, jnp.asarray(tokens), num_iters=30, verbose=False)
    jax.block_until_ready(params)
    return params


def test_dynamax_fits_both_ways():
    pytest.importorskip("dynamax")
    rng = np.random.default_rng(2)
    good = _dynamax_fit(A_TRUE, W_TRUE, None, _sample(A_TRUE, W_TRUE, np.full(4, 0.25), 1, 5000, rng),
                        fix_transitions=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HMM.from_dynamax(good, mu=MU)
    record = model.conversion
    assert record.source == "dynamax" and record.dtype == "float32"
    assert _strongly_connected(np.asarray(good.transitions.transition_matrix).T)
    assert not record.reading(record.start).zeros and np.all(model.pi0 > 0)
    assert _judged_32(model)["holds"] is True
    seqs = _sample(LEFT_TO_RIGHT, W_TRUE, np.array([1.0, 0, 0, 0]), 200, 30, rng).reshape(200, 30, 1)
    bad = _dynamax_fit(LEFT_TO_RIGHT, W_TRUE, None, seqs, fix_transitions=True)
    assert not _strongly_connected(np.asarray(bad.transitions.transition_matrix).T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failing = HMM.from_dynamax(bad, mu=MU)
    judged = _judged_32(failing)
    assert judged["holds"] is False and "irreducible" in judged["why"]
