"""The fair baselines: the converged linear head reaches the logistic-regression optimum
(oracle: scipy's L-BFGS-B on the same loss, written here independently in numpy), separable
data are fitted exactly, and the searches select on validation accuracy."""

import numpy as np
import pytest
from scipy.optimize import minimize

from headprompt.models.mlm.fair import L2_GRID, LR_FACTORS, fit_logistic, head_fair


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
    assert set(out["searched"]) == {f"l2={v:g}" for v in L2_GRID}
    assert out["val"] == max(out["searched"].values())
    assert out["searched"][out["selected"]] == out["val"]
    assert len(LR_FACTORS) == len(L2_GRID) and LR_FACTORS[0] == 1.0   # an equal search; the paper's lr first
