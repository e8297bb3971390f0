"""Fair baselines: a linear head fitted to convergence, and an equal validation-selected search
that is extended until its selection is interior.

The paper's protocol (AdamW, lr 0.01, 5 epochs, :func:`.tuning.tune`) leaves the linear head far
from the optimum of its convex problem, so beside it every run reports:

- ``head-fair``: L2-regularised logistic regression on the head's features (the output at the
  ``[MASK]``, standardised with training-split statistics), fitted to convergence with
  full-batch L-BFGS (float64, strong Wolfe line search) for each L2 strength searched; the
  strength with the best validation accuracy is kept (ties: the lower validation loss, then the
  strongest, the simplest model). The loss is ``mean BCE(x w + b, y) + l2 / 2 * |w|^2`` (the
  bias is not penalised). The search starts on :data:`L2_START` and walks the regularisation
  path outward (:data:`L2_WEAKER` down to ``l2 = 0``, the unregularised end of the path, and
  :data:`L2_STRONGER`) while the selection sits on an edge.
- ``prompt-fair``, ``attention-fair``, ``attention-tokens-fair``: the paper's method tuned with
  learning rates ``factor x`` the paper's, starting on :data:`LR_START` (the paper's own
  configuration first) and extended outward (:data:`LR_LOWER`, :data:`LR_HIGHER`) while the
  selection sits on an edge; the best validation accuracy is kept (ties: the paper's
  configuration, then the first tried).
- ``prompt-refit``: the selected prompt of ``prompt-fair`` kept fixed and its linear head
  re-fitted to convergence on the prompted features exactly as ``head-fair`` is (the same path
  search): both methods end in a head solved to the same standard.

Both searches have the same budget (:data:`SEARCH_BUDGET` configurations at most). Every search
reports the selected configuration (``selected``), the validation accuracy of every
configuration tried in the order of its axis (``searched``: weakest-to-strongest learning rate,
strongest-to-weakest L2), and where the selection ended (``edge``: ``""`` interior, ``"low"`` or
``"high"`` the first or last configuration of the axis; ``edge_beats``: it also has a strictly
better validation accuracy than its one neighbour, so the search would have gone on past its
budget or past the end of the path). :func:`.search_edges.edge_of` reads the same from
``results.csv``.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from .tuning import DownstreamTask, TuneConfig, tune

__all__ = ["SEARCH_BUDGET", "L2_START", "L2_WEAKER", "L2_STRONGER", "LR_START", "LR_LOWER", "LR_HIGHER",
           "FAIR_METHODS", "logistic_loss", "fit_logistic", "edge_of", "extended_search", "head_fair",
           "tune_fair", "prompt_refit"]

SEARCH_BUDGET = 9                                   # configurations at most, every method alike
L2_START = (1.0, 1e-1, 1e-2, 1e-3, 1e-4)            # strongest first (the tie rule keeps the strongest)
L2_WEAKER = (1e-5, 1e-6, 1e-8, 0.0)                 # past the weak edge, outward; 0 ends the path
L2_STRONGER = (10.0, 100.0, 1e3, 1e4)               # past the strong edge, outward
LR_START = (1.0, 3.0, 10.0)                         # multiples of the paper's lr; 1.0 (the paper's) first
LR_LOWER = (0.3, 0.1, 0.03, 0.01)                   # past the low edge, outward
LR_HIGHER = (30.0, 100.0, 300.0)                    # past the high edge, outward
FAIR_METHODS = {"head-fair": "head", "prompt-fair": "prompt", "attention-fair": "attention",
                "attention-tokens-fair": "attention-tokens"}


def logistic_loss(w: torch.Tensor, b: torch.Tensor, x: torch.Tensor, y: torch.Tensor, l2: float) -> torch.Tensor:
    """``mean BCE(x w + b, y) + l2 / 2 * |w|^2`` for features ``x`` ``[n, d]``, labels ``y`` ``[n]``."""
    return F.binary_cross_entropy_with_logits(x @ w + b, y) + 0.5 * l2 * (w * w).sum()


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, *, max_rounds: int = 20) -> tuple[np.ndarray, float, float]:
    """Minimise :func:`logistic_loss` over ``(w, b)`` by full-batch L-BFGS (float64) until the
    gradient's largest entry is below ``1e-9``, or a round of 500 iterations lowers the loss by
    no more than ``1e-9``, or ``max_rounds`` rounds (at ``l2 = 0`` on separable
    data the optimum is at infinity and the rounds bound the norm);
    returns ``(w [d], b, loss)``."""
    X = torch.as_tensor(x, dtype=torch.float64)
    Y = torch.as_tensor(y, dtype=torch.float64)
    params = torch.zeros(X.shape[1] + 1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([params], lr=1.0, max_iter=500, tolerance_grad=1e-10, tolerance_change=1e-15,
                            history_size=20, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = logistic_loss(params[:-1], params[-1], X, Y, l2)
        loss.backward()
        return loss

    previous = float("inf")
    for _ in range(max_rounds):
        opt.step(closure)
        loss = float(closure().detach())
        # converged: the gradient vanishes, or a round of 500 iterations no longer moves the loss
        # (weak L2 on nearly separable data: the optimum is far out along a flat valley)
        if float(params.grad.abs().max()) < 1e-9 or previous - loss <= 1e-9:
            break
        previous = loss
    with torch.no_grad():
        loss = float(logistic_loss(params[:-1], params[-1], X, Y, l2))
    w = params.detach().numpy()
    return w[:-1].copy(), float(w[-1]), loss


def edge_of(selected: str, searched: list[tuple[str, float]]) -> tuple[str, bool]:
    """Where ``selected`` sits on its search's axis ``searched`` (``[(config, val accuracy)]`` in
    axis order): ``("", False)`` interior (or a search of one), ``("low" | "high", beats)`` the
    first or last configuration, ``beats`` whether its validation accuracy is strictly above its
    one neighbour's."""
    names = [k for k, _ in searched]
    if selected not in names or len(names) < 2:
        return "", False
    i = names.index(selected)
    if 0 < i < len(names) - 1:
        return "", False
    j = 1 if i == 0 else len(names) - 2
    return ("low" if i == 0 else "high"), searched[i][1] > searched[j][1]


def extended_search(evaluate: Callable[[float], dict], start: tuple, lower: tuple, higher: tuple, *,
                    label: Callable[[float], str], prefer: tuple = (), budget: int = SEARCH_BUDGET) -> dict:
    """Search ``start`` (in axis order), then while the selection is the first (last)
    configuration of the axis and the budget allows, add the next value of ``lower``
    (``higher``) past that edge and select again.

    ``evaluate(value)`` returns accuracies ``{"train", "val", "test", ...}`` (optionally
    ``val_loss``). Selection: the best validation accuracy; ties: the lower ``val_loss`` when
    given, then a value in ``prefer``, then the first tried. Returns the selected evaluation
    with ``selected``, ``searched`` (``{config: val accuracy}`` in axis order), ``edge``,
    ``edge_beats`` (:func:`edge_of`) and ``value``.
    """
    axis = list(start)
    results = {v: evaluate(v) for v in axis}
    order = list(axis)                                # the order tried (the last tie-break)
    low, high = list(lower), list(higher)

    def select() -> float:
        return max(axis, key=lambda v: (results[v]["val"], -results[v].get("val_loss", 0.0), v in prefer,
                                        -order.index(v)))

    best = select()
    while len(axis) < budget:
        i = axis.index(best)
        if i == 0 and low:
            v = low.pop(0)
            axis.insert(0, v)
        elif i == len(axis) - 1 and high:
            v = high.pop(0)
            axis.append(v)
        else:
            break
        results[v] = evaluate(v)
        order.append(v)
        best = select()
    searched = [(label(v), results[v]["val"]) for v in axis]
    edge, beats = edge_of(label(best), searched)
    return {**results[best], "selected": label(best), "searched": dict(searched), "edge": edge,
            "edge_beats": beats, "value": best}


def _numpy(t) -> np.ndarray:
    return t.detach().cpu().double().numpy() if isinstance(t, torch.Tensor) else np.asarray(t, dtype=float)


def head_fair(features: dict, labels: dict, *, start: tuple = L2_START, weaker: tuple = L2_WEAKER,
              stronger: tuple = L2_STRONGER, budget: int = SEARCH_BUDGET) -> dict:
    """``head-fair`` (module docstring) on ``features`` ``{split: [n, X]}`` and ``labels``
    ``{split: [n]}`` (splits ``train``, ``val`` and any others, e.g. ``test``, ``iid``):
    accuracies per split, ``val_loss``, ``predictions`` per split, ``selected``, ``searched``,
    ``edge``, ``edge_beats``."""
    splits = list(features)
    feats = {s: _numpy(features[s]) for s in splits}
    ys = {s: _numpy(labels[s]) for s in splits}
    mean, std = feats["train"].mean(0), np.maximum(feats["train"].std(0), 1e-4)
    z = {s: (feats[s] - mean) / std for s in splits}

    def evaluate(l2: float) -> dict:
        w, b, _ = fit_logistic(z["train"], ys["train"], l2)
        logits = {s: z[s] @ w + b for s in splits}
        preds = {s: (logits[s] > 0).astype(np.int64) for s in splits}
        acc = {s: float((preds[s] == (ys[s] > 0.5)).mean()) for s in splits}
        val_loss = float(np.mean(np.logaddexp(0, logits["val"]) - ys["val"] * logits["val"]))
        return {**acc, "val_loss": val_loss, "predictions": preds}

    # strongest first on the axis: "lower" is stronger, "higher" weaker; the tie rule's last
    # resort (the first tried) keeps the strongest of the start grid
    out = extended_search(evaluate, start, stronger, weaker, label=lambda v: f"l2={v:g}", budget=budget)
    return out


def tune_fair(backbone, task: DownstreamTask, method: str, config: TuneConfig, *, seed: int,
              features: dict | None = None, known: dict | None = None, progress: bool = False,
              budget: int = SEARCH_BUDGET) -> dict:
    """The fair version of ``method`` (a key of :data:`FAIR_METHODS`; module docstring):
    :func:`extended_search`'s return. ``known`` is the paper protocol's result on the same task
    and seed (:func:`.tuning.tune`'s return), reused for the paper's configuration instead of
    training it again (the same computation)."""
    base = FAIR_METHODS[method]
    if base == "head":
        if features is None:
            features = {s: backbone.mask_outputs(task.tokens[s]) for s in task.tokens}
        return head_fair(features, task.labels, budget=budget)

    def evaluate(factor: float) -> dict:
        if factor == 1.0 and known is not None:
            return known
        lr = config.learning_rate * factor
        return tune(backbone, task, base, dataclasses.replace(config, learning_rate=lr), seed=seed,
                    features=features, progress=progress)

    out = extended_search(evaluate, LR_START, LR_LOWER, LR_HIGHER, prefer=(1.0,), budget=budget,
                          label=lambda f: f"lr={config.learning_rate * f:g}")
    return out


def prompt_refit(prompted: dict, labels: dict, budget: int = SEARCH_BUDGET) -> dict:
    """``prompt-refit`` (module docstring): :func:`head_fair` on the prompted features
    ``{split: [n, X]}`` of the selected prompt (:func:`.tuning.tune` returns them as
    ``prompted``)."""
    return head_fair(prompted, labels, budget=budget)
