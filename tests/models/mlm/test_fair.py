"""The fair baselines: the converged linear head reaches the logistic-regression optimum
(oracle: scipy's L-BFGS-B on the same loss, written here independently in numpy), separable
data are fitted exactly, the searches select on validation accuracy, and a search whose optimum
lies outside its starting grid is extended until the selection is interior (oracle: the curve's
known argmax)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from headprompt.models.mlm.fair import (L2_START, L2_STRONGER, L2_WEAKER, LR_HIGHER, LR_LOWER, LR_START,
                                        SEARCH_BUDGET, edge_of, extended_search, fit_logistic, head_fair)
from headprompt.verify.experiments.search_edges import edge_table, parse_searched


def _scipy_fit(x, y, l2):
    def f(theta):
        w, b = theta[:-1], theta[-1]
        z = x @ w + b
        loss = np.mean(np.logaddexp(0, z) - y * z) + 0.5 * l2 * w @ w
        p = 1 / (1 + np.exp(-z))
        g = np.append(x.T @ (p - y) / len(y) + l2 * w, np.mean(p - y))
        return loss, g

    res = minimize(f, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B",
                   options={"maxiter": 10000, "gtol": 1e-12, "ftol": 1e-15})
    return res.x[:-1], res.x[-1], res.fun


@pytest.mark.parametrize("l2", [1.0, 1e-2, 1e-4])
def test_converged_head_reaches_the_scipy_optimum(l2):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((400, 6))
    y = (x @ rng.standard_normal(6) + 0.8 * rng.standard_normal(400) > 0).astype(float)
    w, b, loss = fit_logistic(x, y, l2)
    w_ref, b_ref, loss_ref = _scipy_fit(x, y, l2)
    assert loss <= loss_ref + 1e-9
    np.testing.assert_allclose(np.append(w, b), np.append(w_ref, b_ref), atol=2e-4 * max(1, np.abs(w_ref).max()))


def test_separable_data_are_fitted_exactly_where_few_adam_epochs_need_not():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 5))
    y = (x[:, 0] - 0.5 * x[:, 3] > 0.2).astype(float)     # separable through a margin-free cut
    w, b, _ = fit_logistic(x, y, 1e-4)
    assert np.mean((x @ w + b > 0) == (y > 0.5)) == 1.0


def test_head_fair_selects_the_strength_with_the_best_validation_accuracy():
    rng = np.random.default_rng(1)
    feats = {s: rng.standard_normal((n, 4)) for s, n in (("train", 60), ("val", 200), ("test", 200))}
    direction = np.array([1.0, -1.0, 0.5, 0.0])
    labels = {s: (f @ direction + 0.5 * rng.standard_normal(len(f)) > 0).astype(np.int64) for s, f in feats.items()}
    out = head_fair(feats, labels)
    assert set(f"l2={v:g}" for v in L2_START) <= set(out["searched"])
    assert out["val"] == max(out["searched"].values())
    assert out["searched"][out["selected"]] == out["val"]
    # the accuracies are those of an independent scipy fit at the selected strength
    l2 = float(out["selected"].removeprefix("l2="))
    mean, std = feats["train"].mean(0), np.maximum(feats["train"].std(0), 1e-4)
    w, b, _ = _scipy_fit((feats["train"] - mean) / std, labels["train"].astype(float), l2)
    pred = ((feats["test"] - mean) / std @ w + b > 0)
    assert abs(np.mean(pred == labels["test"]) - out["test"]) <= 1 / 200
    assert LR_START[0] == 1.0                            # the paper's lr first


@pytest.mark.parametrize("curve, selected, expected", [
    ([0.5, 0.6, 0.7], "c", ("high", True)),           # still climbing at the last point
    ([0.7, 0.6, 0.5], "a", ("low", True)),
    ([0.7, 0.7, 0.5], "a", ("low", False)),           # a tie with the neighbour: the tie rule chose
    ([0.5, 0.7, 0.6], "b", ("", False)),              # interior
    ([0.9], "a", ("", False)),                        # a search of one has no edge
])
def test_edge_of_on_synthetic_validation_curves(curve, selected, expected):
    searched = list(zip("abc", curve))
    assert edge_of(selected, searched) == expected


def test_edge_table_counts_rows_as_written_in_results_csv():
    rows = [{"model": "exact", "method": "head-fair", "selected": "l2=0.0001",
             "searched": "l2=1:0.9000 l2=0.01:0.9100 l2=0.0001:0.9200"},        # high edge, beats
            {"model": "exact", "method": "head-fair", "selected": "l2=1",
             "searched": "l2=1:0.9000 l2=0.01:0.9000 l2=0.0001:0.8000"},        # low edge, tie
            {"model": "exact", "method": "head-fair", "selected": "l2=0.01",
             "searched": "l2=1:0.9000 l2=0.01:0.9500 l2=0.0001:0.8000"},        # interior
            {"model": "exact", "method": "head-fair", "selected": "l2=0",
             "searched": "l2=1:0.9000 l2=0.01:0.9500 l2=0:0.9600"},             # the path's end
            {"model": "exact", "method": "head", "selected": "", "searched": ""}]
    assert parse_searched(rows[0]["searched"])[2] == ("l2=0.0001", 0.92)
    (t,) = edge_table(rows)
    assert (t["selections"], t["on_edge"], t["edge_beats"], t["edges"]) == (4, 2, 1, {"low": 1, "high": 1})
    assert t["path_end"] == 1


def test_extended_search_reaches_an_optimum_outside_the_initial_grid():
    peak = 0.03                                        # below LR_START's lowest factor 1.0
    calls = []

    def evaluate(v):
        calls.append(v)
        return {"train": 0.0, "val": 1.0 - abs(np.log10(v) - np.log10(peak)), "test": 0.0}

    out = extended_search(evaluate, LR_START, LR_LOWER, LR_HIGHER, label=lambda v: f"f={v:g}", prefer=(1.0,))
    assert out["value"] == peak and out["edge"] == "" and not out["edge_beats"]
    axis = [float(k[2:]) for k in out["searched"]]
    assert axis == sorted(axis) and axis.index(peak) not in (0, len(axis) - 1)
    assert len(calls) == len(set(calls)) <= SEARCH_BUDGET


def test_extended_search_stops_at_its_budget_and_says_it_is_on_an_edge():
    out = extended_search(lambda v: {"val": v, "train": 0, "test": 0}, LR_START, LR_LOWER, LR_HIGHER,
                          label=lambda v: f"f={v:g}", budget=5)
    assert len(out["searched"]) == 5 and out["value"] == LR_HIGHER[1]
    assert (out["edge"], out["edge_beats"]) == ("high", True)


def test_a_tie_at_the_edge_is_extended_once_and_keeps_the_preferred_configuration():
    out = extended_search(lambda v: {"val": 0.5, "train": 0, "test": 0}, LR_START, LR_LOWER, LR_HIGHER,
                          label=lambda v: f"f={v:g}", prefer=(1.0,))
    assert out["value"] == 1.0 and out["edge"] == "" and len(out["searched"]) == len(LR_START) + 1


def test_head_fair_walks_the_path_to_weaker_l2_when_the_data_want_it():
    # a noiseless linear rule in 30 dimensions from 80 training points: strong L2 shrinks it
    # toward the majority, so validation keeps improving as l2 falls below L2_START's end
    rng = np.random.default_rng(4)
    d = 30
    direction = rng.standard_normal(d)
    feats = {s: rng.standard_normal((n, d)) * np.linspace(0.05, 3, d) for s, n in
             (("train", 80), ("val", 500), ("test", 500))}
    labels = {s: (f @ direction > 0).astype(np.int64) for s, f in feats.items()}
    out = head_fair(feats, labels)
    vals = list(out["searched"].values())
    keys = list(out["searched"])
    strengths = [float(k[3:]) for k in keys]
    assert strengths == sorted(strengths, reverse=True)             # axis order: strongest first
    assert out["val"] == max(vals)
    if out["edge"] == "high":                                       # on the weak edge only at the path's end
        assert strengths[-1] in (L2_WEAKER[-1],) or len(keys) == SEARCH_BUDGET
    assert set(strengths) <= set(L2_START) | set(L2_WEAKER) | set(L2_STRONGER)
