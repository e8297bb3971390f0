"""Figure 3's statistics: accuracy rows with intervals, the quality gate per setting, and (re-exported
from :mod:`.pooled`) the pooled verdicts on paired differences and the family adjustment; the
tested claims and controls themselves are :mod:`.claims`.

Intervals (95%), description only:
- an accuracy row (mean test accuracy over trials): a Student-t interval for the MEAN on the
  logit scale (delta method: ``logit(m) +- t_{0.975, n-1} s / (sqrt(n) m (1 - m))``, mapped
  back), so it lies inside (0, 1) without clipping and the mean is strictly inside it; a
  single trial gives the point; with 2 trials (1 df) the interval is nearly ``(0, 1)``: the
  row says so (``ci95_note``) and the figure draws no band for it (:mod:`.plot`).
- a paired difference per setting (e.g. prompt - head on the same trial's task): Student-t over
  trials on the raw differences; one trial gives no interval (``null``).

The decision (stated before any run, SPEC "Experiments"): each claim "a beats b" is decided by
ONE pooled test of the mean paired difference over all (setting, trial) pairs of the claim,
settings as strata (:func:`pooled_test`; the rule itself is :mod:`.rule`): the estimate is the
trial-weighted mean ``sum_s n_s mean_s / n``; the two-sided p-value is the largest of three
(an exact sign-flip test of the stratified studentized mean, Hall's skewness-corrected t with
the skewness widened by one standard error, and the t with a skewness allowance of 1), so the
rule keeps its level (5%, two-sided: "supported" or "contradicted" under a zero mean at most
5% of the time) on skewed, tied, heavy-tailed, heteroscedastic and unbalanced differences of the
calibration table's families (``benchmarks/calibration.py``; the table is in
``benchmarks/results/calibration/``), not on the table's adversarial designs, where a rare,
large difference of one sign is often not drawn at all (up to 7.2%; no test with useful power can
hold 5% there, and the table shows the cap): see :mod:`.rule`. The 95%
interval inverts the same test, so it excludes 0 exactly when ``p < 0.05`` and contains the
estimate; there is none (``ci95_note`` says why) when the differences have zero spread or the
test cannot reach 5%. ``supported``: ``p < alpha`` with a positive estimate; ``contradicted``: with a
negative one; otherwise ``inconclusive`` with the reason. A run's claims and controls form one
family: :func:`adjust_family` applies Holm's step-down adjustment (:func:`holm`) and decides
each verdict from its adjusted p-value (:func:`verdict_after`).

Reported with each test: the smallest detectable effect (the effect at which THIS rule says
"supported" with 80% probability, simulated at the run's design: the same settings and trials,
normal noise with each setting's observed spread; the 80% quantile of 1,000 simulated tables' own
thresholds, so its true power is 80% within a standard error of 1.3 points), the minimum reachable p (the sign-flip
test's ``2^(1 - m)`` with ``m`` nonzero differences; with ``m <= 5`` no p below 0.05 exists and
the reason says so), and, when inconclusive, the trials per setting that give 80% power against
the stated effect ``EFFECT`` (a fixed size of interest, never the observed estimate).
"""

from __future__ import annotations

import math

import numpy as np

from .pooled import ALPHA, EFFECT, METHOD, POWER, adjust_family, detectable_effect, pooled_test, trials_needed, \
    verdict_after
from .rule import holm

__all__ = ["accuracy_interval", "interval_note", "paired_interval", "pooled_test", "summarize", "quality_by_setting",
           "majority_by_setting", "verdict_text", "holm", "verdict_after", "adjust_family", "detectable_effect",
           "trials_needed", "ALPHA", "POWER", "EFFECT", "METHOD"]


def _t(n: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1))


def accuracy_interval(values, n_test: int) -> tuple[float, float]:
    """95% interval of the mean accuracy over trials (module docstring): inside (0, 1), the mean
    strictly inside unless every trial has the same accuracy (then the point). Centred at the
    logit of the mean itself (which lies strictly inside (0, 1) whenever the trials differ), never
    at a clamped stand-in: a centre moved to ``1 - 1 / (2 n_test)`` gave bands that missed means
    such as 0.998. ``n_test`` (the test set's size) is accepted for the callers and not needed.

    Raises:
        ValueError: an accuracy outside [0, 1] or not finite."""
    v = np.asarray(values, dtype=float)
    if not np.all((v >= 0) & (v <= 1)):
        raise ValueError(f"accuracy_interval: accuracies must lie in [0, 1], got {v.tolist()!r}")
    m = float(v.mean())
    if len(v) < 2 or float(v.max()) == float(v.min()):
        return m, m
    m = min(max(m, float(v.min())), float(v.max()))        # rounding of the mean stays inside the data
    centre = math.log(m / (1 - m))
    half = _t(len(v)) * float(v.std(ddof=1)) / math.sqrt(len(v)) / (m * (1 - m))
    from scipy.special import expit

    lo, hi = expit(centre - half), expit(centre + half)   # no overflow for wide intervals
    return float(lo), float(hi)


def interval_note(trials: int) -> str | None:
    """Why a row's interval says little: one trial (no interval) or two (1 degree of freedom)."""
    if trials == 1:
        return "1 trial: no interval"
    if trials == 2:
        return "2 trials: the t interval has 1 degree of freedom and is nearly uninformative"
    return None


def paired_interval(diffs) -> tuple[float, float] | None:
    """Student-t 95% interval of the mean paired difference; ``None`` for one trial or for
    differences without spread (a zero-width interval would claim a precision the trials do
    not show)."""
    d = np.asarray(diffs, dtype=float)
    if len(d) < 2 or float(d.max()) == float(d.min()):
        return None
    half = _t(len(d)) * float(d.std(ddof=1)) / math.sqrt(len(d))
    return float(d.mean() - half), float(d.mean() + half)


def verdict_text(pooled: dict) -> str:
    """``supported`` / ``contradicted`` / ``inconclusive (reason)``."""
    return pooled["verdict"] + (f" ({pooled['reason']})" if pooled.get("reason") else "")


def _setting(r: dict, keys: tuple) -> tuple:
    return tuple(r[k] for k in keys)


def _order(values: tuple) -> tuple:
    """Sort key for settings: numbers numerically, strings alphabetically."""
    return tuple((1, v, "") if isinstance(v, (int, float)) else (0, 0, str(v)) for v in values)


def summarize(records: list, keys: tuple, n_test: int) -> list:
    """One row per (setting, method, model): mean test accuracy, 95% interval, trial count, and
    ``ci95_note`` where the interval says little (1 or 2 trials)."""
    groups: dict = {}
    for r in records:
        groups.setdefault((_setting(r, keys), r["method"], r["model"]), []).append(r["accuracy"])
    rows = []
    for (values, method, model), accs in sorted(groups.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1:])):
        lo, hi = accuracy_interval(accs, n_test)
        row = {"setting": dict(zip(keys, values)), "method": method, "model": model,
               "accuracy": float(np.mean(accs)), "ci95": [lo, hi], "trials": len(accs)}
        note = interval_note(len(accs))
        rows.append({**row, "ci95_note": note} if note else row)
    return rows


def majority_by_setting(records: list, keys: tuple) -> list:
    """Mean majority-class test accuracy per setting (the line any classifier must beat)."""
    groups: dict = {}
    for r in records:
        groups.setdefault(_setting(r, keys), {})[r["trial"]] = r["majority"]
    return [{"setting": dict(zip(keys, s)), "accuracy": float(np.mean(list(v.values()))), "trials": len(v)}
            for s, v in sorted(groups.items(), key=lambda kv: _order(kv[0]))]


def quality_by_setting(results: list, keys: tuple) -> list:
    """The pretrained MLMs' quality per setting: every trial's gate figures, their means, the
    worst TV, and whether every trial passed."""
    groups: dict = {}
    for res in results:
        r0 = res["records"][0]
        groups.setdefault(_setting(r0, keys), []).append({"trial": r0["trial"], **{
            k: res["quality"][k] for k in ("tv", "tv_first", "mlm_loss", "exact_loss", "loss_gap", "passed",
                                           "threshold", "steps", "budget", "stopped")}})
    out = []
    for s, trials in sorted(groups.items(), key=lambda kv: _order(kv[0])):
        trials.sort(key=lambda t: t["trial"])
        out.append({"setting": dict(zip(keys, s)), "trials": trials,
                    "tv_mean": float(np.mean([t["tv"] for t in trials])),
                    "tv_max": float(np.max([t["tv"] for t in trials])),
                    "loss_gap_mean": float(np.mean([t["loss_gap"] for t in trials])),
                    "passed": all(t["passed"] for t in trials), "threshold": trials[0]["threshold"]})
    return out
