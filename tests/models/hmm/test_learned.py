"""Learned HMMs: hmmlearn round trips (hmmlearn's own forward-backward as the oracle), the
pi0 solve, the explicit rationalization and its change bound (path sums as the oracle)."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from fractions import Fraction as Fr
from types import SimpleNamespace

import numpy as np
import pytest

hmmlearn_hmm = pytest.importorskip("hmmlearn.hmm")

from headprompt.models.inference import floats as iff  # noqa: E402
from headprompt.models.exceptions import ExactnessError, InputError  # noqa: E402
from headprompt.models.generate.generators import random_exact_hmm  # noqa: E402
from headprompt.models.hmm.values import HMM, MemoryHMM  # noqa: E402
from headprompt.models.hmm.learned import StartLawWarning, closest_initial, initial_from_start  # noqa: E402
from headprompt.models.hmm.rationalize import rationalize  # noqa: E402
from headprompt.verify.cli.main import main  # noqa: E402
from tests import oracle  # noqa: E402


def _column(x):
    return np.asarray(x, dtype=int).reshape(-1, 1)


def _sequences(num_tokens, length, count, seed):
    rng = np.random.default_rng(seed)
    return [list(map(int, rng.integers(num_tokens, size=length))) for _ in range(count)]


# ---------------------------------------------------------------- hmmlearn round trips

def test_to_hmmlearn_matches_path_sums():
    """hmmlearn's score and predict_proba on our model equal Pr(x) and P[H_k | x] by path sums."""
    h = random_exact_hmm(3, 3, rng=np.random.default_rng(0))
    model = h.to_hmmlearn()
    for x in _sequences(3, 4, 5, seed=1):
        assert model.score(_column(x)) == pytest.approx(math.log(oracle.joint_probability(h, x)), abs=1e-10)
        post = model.predict_proba(_column(x))                  # row t-1: P[H_t | X]
        for k in range(1, 5):
            assert post[k - 1] == pytest.approx([float(v) for v in oracle.path_posterior(h, x, k)], abs=1e-10)


def test_from_hmmlearn_matches_hmmlearn_inference():
    """A model fitted by hmmlearn, converted: our float posteriors and G_i equal hmmlearn's
    (predict_proba, and G_i(x)[z] proportional to exp(score(x with x_i = z)))."""
    truth = random_exact_hmm(3, 4, rng=np.random.default_rng(2)).to_hmmlearn(random_state=0)
    X, _ = truth.sample(600, random_state=np.random.default_rng(0).integers(10**6))
    fitted = hmmlearn_hmm.CategoricalHMM(n_components=3, n_features=4, n_iter=15, random_state=1).fit(X, [6] * 100)
    # a fitted start law need not be reachable in one step (then there is no pi0, as tested
    # below); make it reachable so that the conversion is defined
    fitted.startprob_ = fitted.transmat_.T @ np.array([0.2, 0.3, 0.5])
    ours = HMM.from_hmmlearn(fitted)
    assert np.allclose(ours.A @ ours.pi0, fitted.startprob_, atol=1e-9)
    assert np.array_equal(ours.A, fitted.transmat_.T) and np.array_equal(ours.W, fitted.emissionprob_.T)
    for x in _sequences(4, 5, 4, seed=3):
        post = fitted.predict_proba(_column(x))
        for k in range(1, 6):
            assert iff.posterior_hidden(ours, [x], k)[0] == pytest.approx(post[k - 1], abs=1e-9)
        G = iff.conditionals(ours, [x])[0]
        for i in range(5):
            scores = [fitted.score(_column(x[:i] + [z] + x[i + 1:])) for z in range(4)]
            w = np.exp(np.array(scores) - max(scores))
            assert G[i] == pytest.approx(w / w.sum(), abs=1e-9)


def test_round_trip_keeps_the_model():
    h = random_exact_hmm(3, 2, rng=np.random.default_rng(5)).to_float()
    back = HMM.from_hmmlearn(h.to_hmmlearn())
    assert np.allclose(back.A, h.A) and np.allclose(back.W, h.W) and np.allclose(back.pi0, h.pi0, atol=1e-9)


def test_pi0_solve_and_when_none_exists():
    A = np.array([[0.5, 0.2, 0.1], [0.3, 0.6, 0.2], [0.2, 0.2, 0.7]])
    pi0 = np.array([0.2, 0.3, 0.5])
    assert initial_from_start(A, A @ pi0) == pytest.approx(pi0, abs=1e-12)
    to_zero = np.array([[1.0, 1.0], [0.0, 0.0]])                 # every state moves to state 0
    with pytest.raises(InputError, match="no pi0 in the simplex"):
        initial_from_start(to_zero, [0.5, 0.5])
    model = HMM.create(to_zero, [[0.5, 0.5], [0.5, 0.5]], [0.5, 0.5], exact=False).to_hmmlearn()
    model.startprob_ = np.array([0.5, 0.5])
    with pytest.warns(StartLawWarning, match="total variation 0.5") as record:     # not refused
        h = HMM.from_hmmlearn(model)
    assert record[0].message.distance == pytest.approx(0.5) and list(h.pi0) == pytest.approx([1, 0], abs=1e-9)
    with pytest.raises(InputError, match="startprob_"):
        HMM.from_hmmlearn(model, pi0=[0.5, 0.5])


def _sample(model, count, length, rng):
    """``count`` sequences of ``length`` tokens from a float hmmlearn model, drawn here by
    inverse-CDF sampling (independent of hmmlearn's sampler): ``(count * length, 1)``."""
    start, T, E = model.startprob_, model.transmat_, model.emissionprob_
    h = (rng.random(count)[:, None] > np.cumsum(start)[None, :]).sum(axis=1)
    out = np.empty((count, length), dtype=int)
    for t in range(length):
        out[:, t] = (rng.random(count)[:, None] > np.cumsum(E[h], axis=1)).sum(axis=1)
        h = (rng.random(count)[:, None] > np.cumsum(T[h], axis=1)).sum(axis=1)
    return np.minimum(out, E.shape[1] - 1).reshape(-1, 1)


def _tv(p, q):
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


def _fits():
    """The two fits of issue 19: one long sequence (10,000 tokens) and 2,000 sequences of
    length 10, both from a true 4-state HMM (few EM steps: the conversion, not EM, is tested)."""
    truth = random_exact_hmm(4, 3, rng=np.random.default_rng(7)).to_hmmlearn()
    rng = np.random.default_rng(8)
    one = hmmlearn_hmm.CategoricalHMM(n_components=4, n_features=3, n_iter=15, random_state=0)
    many = hmmlearn_hmm.CategoricalHMM(n_components=4, n_features=3, n_iter=4, random_state=0)
    return [one.fit(_sample(truth, 1, 10_000, rng)), many.fit(_sample(truth, 2000, 10, rng), [10] * 2000)]


@pytest.fixture(scope="module")
def fits():
    return _fits()


def test_from_hmmlearn_reads_both_fits_three_ways(fits):
    """Each reading gives a valid float HMM with A = transmat_.T, W = emissionprob_.T and: "h0"
    pi0 = startprob_; "stationary" A pi0 = pi0; "h1" P[H_1] = startprob_ or, if no pi0 reaches
    it, a warning whose distance is TV(A pi0, startprob_) and no point of the simplex (Dirichlet
    draws and vertices, an independent search) comes closer."""
    rng = np.random.default_rng(0)
    for fitted in fits:
        for start in ("h0", "stationary", "h1"):
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                h = HMM.from_hmmlearn(fitted, start=start, mu=[1, -1, 0.5, 0])
            assert not h.exact and np.array_equal(h.A, fitted.transmat_.T)
            assert np.array_equal(h.W, fitted.emissionprob_.T) and list(h.mu) == [1, -1, 0.5, 0]
            assert np.all(h.pi0 >= 0) and h.pi0.sum() == pytest.approx(1, abs=1e-12)
            if start == "h0":
                assert h.pi0 == pytest.approx(fitted.startprob_, abs=1e-12) and not record
            elif start == "stationary":
                assert h.A @ h.pi0 == pytest.approx(h.pi0, abs=1e-9) and not record
            else:
                distance = _tv(h.A @ h.pi0, fitted.startprob_)
                if record:
                    assert [type(w.message) for w in record] == [StartLawWarning]
                    assert record[0].message.distance == pytest.approx(distance, abs=1e-9)
                else:
                    assert distance < 1e-9
                others = list(rng.dirichlet(np.ones(4) * 0.3, size=3000)) + list(np.eye(4))
                assert min(_tv(h.A @ p, fitted.startprob_) for p in others) >= distance - 1e-9


def test_to_hmmlearn_round_trips_a_fitted_model(fits):
    """HMM -> hmmlearn -> HMM keeps A, W and P[H_1] (no warning: P[H_1] is reachable), and
    hmmlearn's own score on the exported model is Pr(x) of the converted one (path sums)."""
    for fitted in fits:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StartLawWarning)
            h = HMM.from_hmmlearn(fitted)
        exported = h.to_hmmlearn()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            back = HMM.from_hmmlearn(exported)
        assert np.array_equal(back.A, h.A) and np.array_equal(back.W, h.W)
        assert back.hidden_marginal_1() == pytest.approx(h.hidden_marginal_1(), abs=1e-9)
        x = [0, 2, 1, 1]
        assert exported.score(_column(x)) == pytest.approx(math.log(oracle.joint_probability(h, x)), abs=1e-9)


def test_closest_initial_on_a_reachable_law():
    A = np.array([[0.5, 0.2, 0.1], [0.3, 0.6, 0.2], [0.2, 0.2, 0.7]])
    pi0, distance = closest_initial(A, A @ np.array([0.1, 0.0, 0.9]))
    assert distance < 1e-12 and A @ pi0 == pytest.approx(A @ np.array([0.1, 0.0, 0.9]), abs=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(start="H1"), r"start: expected one of 'auto', 'h1', 'h0', 'stationary', found 'H1'"),
    (dict(start="h0", pi0=[0.5, 0.5]), r"give either pi0= or start='h0'"),
    (dict(pi0=[0.9, 0.1]), r"pi0: A pi0 differs from the model's startprob_"),
    (dict(mu=[1, 2, 3]), r"mu"),
])
def test_from_hmmlearn_refuses_bad_arguments(kwargs, match):
    model = random_exact_hmm(2, 2, rng=np.random.default_rng(3)).to_hmmlearn()
    with pytest.raises(InputError, match=match):
        HMM.from_hmmlearn(model, **kwargs)
    with pytest.raises(InputError, match="expected a fitted hmmlearn CategoricalHMM"):
        HMM.from_hmmlearn(hmmlearn_hmm.CategoricalHMM(n_components=2))


# ---------------------------------------------------------------- rationalize

def _learned_like(seed, num_states=3, num_tokens=2, tiny=0.003):
    """A float HMM with structural near-zeros (as EM leaves them) and inexact column sums."""
    rng = np.random.default_rng(seed)

    def cols(rows, n):
        M = rng.dirichlet(np.ones(rows), size=n).T
        M[rng.integers(rows), np.arange(n)] = tiny * rng.random(n)
        return M / M.sum(axis=0)

    return HMM.create(cols(num_states, num_states), cols(num_tokens, num_states),
                      rng.dirichlet(np.ones(num_states)) * 0.9 + 0.1 / num_states, [1.0, -0.5, 0.25][:num_states],
                      exact=False)


def test_rationalize_prunes_and_is_exactly_stochastic():
    f = _learned_like(0)
    with pytest.raises(ExactnessError, match="rationalize"):
        f.to_exact()
    r = rationalize(f, prune_below=0.01, max_denominator=1000)
    q = r.model
    assert q.exact and r.pruned >= 1
    for name in ("A", "W"):
        given, new = getattr(f, name), getattr(q, name)
        for h in range(new.shape[1]):
            assert sum(new[:, h]) == 1                                   # exactly
            for x in range(new.shape[0]):
                if given[x, h] < 0.01 * given[:, h].sum():
                    assert new[x, h] == 0                                # pruned to an exact zero
                else:
                    assert new[x, h] > 0 and 1000 % new[x, h].denominator == 0
    assert sum(q.pi0) == 1 and all(v > 0 for v in q.pi0)
    assert list(q.mu) == [1, Fr(-1, 2), Fr(1, 4)] and r.mu_change == 0
    # the reported largest entry change is the largest one, measured exactly
    change = max(abs(Fr(float(a)) - b) for name in ("A", "W", "pi0")
                 for a, b in zip(getattr(f, name).flat, getattr(q, name).flat))
    assert r.max_entry_change == change
    json.dumps(r.to_dict())


def test_rationalize_keeps_exact_entries_and_handles_memory_models():
    h = random_exact_hmm(3, 2, rng=np.random.default_rng(1))
    assert rationalize(h, prune_below=0).model == h
    back = rationalize(h.to_float(), prune_below=0)         # a float copy of an exact model comes back
    assert back.model == h and back.max_entry_change < 1e-15
    W = [[[1, 0], [0, 0]], [[0, 0], [1, 0]], [[0, 0.5], [0, 0]], [[0, 0.5], [0, 1]]]
    m = MemoryHMM.create(1, 2, 2, [[0.9995, 0.5], [0.0005, 0.5]], W, [0.5, 0.5], [1 / 3, 2 / 3], exact=False)
    r = rationalize(m, prune_below=0.001, max_denominator=100)
    assert r.model.A[1, 0] == 0 and list(r.model.pM) == [Fr(1, 3), Fr(2, 3)]    # 1/3 stored as 0.333...
    assert r.tv["A"] == Fr(0.0005) / (Fr(0.9995) + Fr(0.0005))     # the pruned mass of column 0


@pytest.mark.parametrize("bad", [dict(prune_below=1.5), dict(prune_below=-0.1), dict(max_denominator=0),
                                 dict(prune_below="x")])
def test_rationalize_refuses_bad_settings(bad):
    with pytest.raises(InputError):
        rationalize(_learned_like(0), **bad)


def _reference(f):
    """The learned model the bound speaks about: its float entries, columns divided exactly
    by their sums (computed here, independently of the package)."""
    def norm(M):
        M = np.vectorize(Fr, otypes=[object])(M)
        return M / M.sum(axis=0)
    return SimpleNamespace(A=norm(f.A), W=norm(f.W), pi0=norm(f.pi0), num_states=f.num_states,
                           num_tokens=f.num_tokens)


def _bound_violations(f, r, length, scale=Fr(1)):
    """Every (what, sequence, true change, claimed bound) where the claimed bound (times
    ``scale``) is below the true sup-norm change, measured exactly by path sums."""
    P, Q = _reference(f), r.model
    bad, nontrivial = [], 0

    def compare(what, x, true, L, event):
        nonlocal nontrivial
        bound = r.conditional_bound(L, event) * scale
        nontrivial += bound < scale
        if true > bound:
            bad.append((what, x, true, bound))

    for x in itertools.product(range(f.num_tokens), repeat=length):
        x = list(x)
        true = max(abs(a - b) for a, b in zip(oracle.path_posterior(P, x), oracle.path_posterior(Q, x)))
        compare("posterior", x, true, length, oracle.joint_probability(Q, x))
        for i in range(length):
            gp, gq = oracle.path_conditional(P, x, i), oracle.path_conditional(Q, x, i)
            event = sum(oracle.joint_probability(Q, x[:i] + [z] + x[i + 1:]) for z in range(f.num_tokens))
            compare(f"G_{i + 1}", x, max(abs(a - b) for a, b in zip(gp, gq)), length, event)
        # Theorem 3.6's read-out Gbar_2(u, e(empty), e(x)) for a prompt u in [0, 1]^H
        u = [Fr(1), Fr(0), Fr(1, 2)][:f.num_states]
        emb_p = [u, [1] * f.num_states] + [list(P.W[z]) for z in x]
        emb_q = [u, [1] * f.num_states] + [list(Q.W[z]) for z in x]
        gp, gq = oracle.path_gbar(P.A, P.W, P.pi0, emb_p, 1), oracle.path_gbar(Q.A, Q.W, Q.pi0, emb_q, 1)
        event = sum(oracle.path_tau(Q.A, Q.pi0, emb_q, 1))
        compare("prompt", x, max(abs(a - b) for a, b in zip(gp, gq)), length + 2, event)
    return bad, nontrivial


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_change_bound_holds_against_exact_path_sums(seed):
    f = _learned_like(seed)
    r = rationalize(f, prune_below=0.01, max_denominator=2000)
    bad, nontrivial = _bound_violations(f, r, length=2)
    assert not bad, bad[:3]
    assert nontrivial > 0                       # the bound says something (< 1) somewhere


def test_a_wrong_bound_is_caught():
    """The same check rejects the bound divided by 1000."""
    f = _learned_like(0)
    r = rationalize(f, prune_below=0.01, max_denominator=2000)
    bad, _ = _bound_violations(f, r, length=2, scale=Fr(1, 1000))
    assert bad


# ---------------------------------------------------------------- the command line

def test_cli_rationalize(tmp_path, capsys):
    f = _learned_like(4)
    path = tmp_path / "learned.json"
    path.write_text(json.dumps({"kind": "hmm", "A": f.A.tolist(), "W": f.W.tolist(), "pi0": f.pi0.tolist(),
                                "mu": f.mu.tolist()}))
    assert main(["posterior", "--hmm", str(path), "--seq", "0 1 1"]) == 2           # refused as it is
    assert "sums to" in capsys.readouterr().err
    # pruning may make a sequence impossible (outside_support, exit 2): take the first possible one
    for seq in ("0 1 1", "0 0 0", "1 1 1", "0 1 0", "1 0 1", "1 0 0", "0 0 1", "1 1 0"):
        code = main(["posterior", "--hmm", str(path), "--seq", seq, "--rationalize", "0.01", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert code == (2 if out["outside_support"] else 0)
        if code == 0:
            break
    assert code == 0
    assert out["rationalized"]["pruned_entries"] >= 1 and len(out["rationalized"]["G_change_at_most"]) == 3
    assert 0 < out["rationalized"]["posterior_change_at_most"] <= 1
    code = main(["assumptions", "3.3", "--hmm", str(path), "--rationalize", "--json"])
    assert code in (0, 3) and "rationalized" in json.loads(capsys.readouterr().out)


def test_dynamax_round_trip_and_posteriors_agree():
    """to_dynamax / from_dynamax keep A, W and pi0 (start law read as P[H_1]); dynamax's smoother
    on the converted model gives our P[H_1..T | x] (to its own 1e-8 clipping, see the smoothing
    benchmark's notes)."""
    pytest.importorskip("dynamax")
    import jax

    jax.config.update("jax_enable_x64", True)
    from headprompt.models.generate.generators import prompt_friendly_hmm
    from headprompt.models.inference import floats

    h = prompt_friendly_hmm(5, 3, rng=np.random.default_rng(2))[0].to_float()
    model, params = h.to_dynamax()
    back = HMM.from_dynamax(params, mu=h.mu)
    assert np.allclose(back.A, h.A) and np.allclose(back.W, h.W) and np.allclose(back.pi0, h.pi0, atol=1e-9)
    seq = np.array([0, 2, 1, 1, 0])
    post = model.smoother(params, seq[:, None]).smoothed_probs
    ours = floats.posterior_marginals(h, seq[None, :])[0]
    assert np.allclose(np.asarray(post), ours, atol=1e-6)
    with pytest.raises(InputError, match="initial.probs"):
        HMM.from_dynamax(params, pi0=[1, 0, 0, 0, 0])
    with pytest.raises(InputError, match="from_dynamax"):
        HMM.from_dynamax(object())


# ---------------------------------------------------------------- float32 fits (issue 27)

def _float32_tables(seed, hidden=4, vocab=5):
    """Row-stochastic float32 tables normalised in float32, as dynamax's fit_em leaves them: rows
    sum to 1 only within float32 rounding (about 1e-7), far outside float64's 1e-9."""
    rng = np.random.default_rng(seed)

    def stochastic(shape):
        x = (rng.random(shape) + 0.1).astype(np.float32)
        return x / x.sum(axis=-1, keepdims=True, dtype=np.float32)

    return stochastic(hidden), stochastic((hidden, hidden)), stochastic((hidden, vocab))


def _dynamax_params(start, trans, emit):
    """An object with the fields of dynamax's ParamsCategoricalHMM (initial.probs,
    transitions.transition_matrix, emissions.probs of shape (|H|, 1, |X|))."""
    return SimpleNamespace(initial=SimpleNamespace(probs=start),
                           transitions=SimpleNamespace(transition_matrix=trans),
                           emissions=SimpleNamespace(probs=emit[:, None, :]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float32_fits_are_renormalised_and_the_move_is_reported(seed):
    from headprompt.models.hmm.learned import RenormalizedWarning

    start, trans, emit = _float32_tables(seed)
    assert np.abs(trans.astype(np.float64).sum(axis=1) - 1).max() > 1e-9      # what create() refuses
    for build in (lambda: HMM.from_dynamax(_dynamax_params(start, trans, emit), start="h0"),
                  lambda: HMM.from_hmmlearn(SimpleNamespace(startprob_=start, transmat_=trans, emissionprob_=emit),
                                            start="h0")):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model = build()
        moved = [w.message for w in seen if isinstance(w.message, RenormalizedWarning)]
        assert len(moved) == 1 and "float32" in str(moved[0])
        r = moved[0].renormalization
        # the renormalised columns sum to 1 in float64, and the reported distances are the
        # column total variations recomputed here from the float32 tables
        assert np.allclose(model.A.sum(axis=0), 1, atol=1e-15, rtol=0)
        given_A = trans.astype(np.float64).T
        assert r.tv["A"] == pytest.approx(max(_tv(given_A[:, h], model.A[:, h]) for h in range(4)), rel=1e-9)
        assert r.tv["W"] == pytest.approx(max(_tv(emit.astype(np.float64)[h], model.W[:, h]) for h in range(4)),
                                          rel=1e-9)
        assert 0 < r.tv["A"] < 1e-6 and r.path_tv(10) == pytest.approx(r.tv["start"] + 10 * (r.tv["A"] + r.tv["W"]))
        assert r.conditional_bound(10, 0.5) == pytest.approx(min(1.0, 4 * r.path_tv(10)))


def test_sums_beyond_the_source_tolerance_are_refused():
    start, trans, emit = _float32_tables(3)
    bad = trans.copy()
    bad[1] *= np.float32(0.99)
    with pytest.raises(InputError, match=r"^dynamax transitions.transition_matrix: a probability table sums to "):
        HMM.from_dynamax(_dynamax_params(start, bad, emit), start="h0")
    with pytest.raises(InputError, match="emissionprob_: entries must be finite and nonnegative"):
        HMM.from_hmmlearn(SimpleNamespace(startprob_=start, transmat_=trans, emissionprob_=-emit), start="h0")


def test_a_float64_hmmlearn_fit_is_kept_as_given(fits):
    from headprompt.models.hmm.learned import RenormalizedWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours = HMM.from_hmmlearn(fits[1], start="h0")
    assert not [w for w in seen if isinstance(w.message, RenormalizedWarning)]
    assert np.array_equal(ours.A, fits[1].transmat_.T) and np.array_equal(ours.W, fits[1].emissionprob_.T)


def test_theorem_in_float_mode_accepts_a_float_instance_file(tmp_path, capsys, fits):
    """``verify theorem --mode float`` reads a float file as ``verify posterior --mode float``
    does: uncertified (exit 5), the exact renormalisation reported; exact mode still refuses it."""
    model = HMM.from_hmmlearn(fits[1], start="h0", mu=[1, -1, 0, 0])
    path = tmp_path / "fit.json"
    model.save(path)
    assert main(["theorem", "3.6", "--hmm", str(path), "--mode", "float", "--json", "--samples", "50"]) == 5
    out = json.loads(capsys.readouterr().out)
    assert out["certified"] is False and out["instance"]["rationalized"]["pruned_entries"] == 0
    assert main(["posterior", "--hmm", str(path), "--mode", "float", "--seq", "0 1"]) == 5
    capsys.readouterr()
    assert main(["theorem", "3.6", "--hmm", str(path), "--samples", "50"]) == 2
    assert "--rationalize" in capsys.readouterr().err


def test_an_hmmlearn_model_holding_float32_tables_converts(fits):
    """A real hmmlearn CategoricalHMM whose fitted tables are stored as float32 (rows then miss 1
    by ~1e-8, outside float64's tolerance): converted, renormalised, and hmmlearn's own posteriors
    on it agree with ours to float32 accuracy."""
    from headprompt.models.hmm.learned import RenormalizedWarning

    m = hmmlearn_hmm.CategoricalHMM(n_components=4, n_features=3, init_params="")
    m.transmat_ = fits[1].transmat_.astype(np.float32)
    m.startprob_ = (m.transmat_.T.astype(np.float64) @ np.full(4, 0.25)).astype(np.float32)   # reachable: P[H_1]
    m.emissionprob_ = fits[1].emissionprob_.astype(np.float32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours = HMM.from_hmmlearn(m)
    assert any(isinstance(w.message, RenormalizedWarning) for w in seen)
    x = [0, 2, 1, 1]
    post = m.predict_proba(_column(x))
    assert iff.posterior_hidden(ours, [x], 2)[0] == pytest.approx(post[1], abs=1e-6)
