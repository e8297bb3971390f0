"""Figure 3's statistics: accuracy rows with intervals, the quality gate per setting, pooled
verdicts on paired differences, the family adjustment, and the controls.

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
``benchmarks/results/calibration/``), not where one small skewed setting carries most of the
variance (up to 6.95%) or the skewness sits in one rare value (up to 7.55%): see :mod:`.rule`. The 95%
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
           "compare", "predictions", "controls", "majority_by_setting", "verdict_text", "holm", "verdict_after",
           "adjust_family", "detectable_effect", "trials_needed", "ALPHA", "POWER", "EFFECT", "METHOD"]

NUM_TOKENS = 10


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
    """Student-t 95% interval of the mean paired difference; ``None`` for one trial."""
    d = np.asarray(diffs, dtype=float)
    if len(d) < 2:
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


def _by_trial(records: list, x_key: str, **match) -> dict:
    """``{x: {trial: accuracy}}`` of the records matching ``match``."""
    out: dict = {}
    for r in records:
        if all(r.get(k) == v for k, v in match.items()):
            out.setdefault(r[x_key], {})[r["trial"]] = r["accuracy"]
    return out


def compare(records: list, x_key: str, a: dict, b: dict, *, claim_on=lambda x: True,
            gate: dict | None = None, uses_mlm: bool = False) -> dict:
    """Paired ``a - b`` per setting ``x`` (description: mean, 95% interval, whether it excludes 0,
    whether the setting counts: in the claim and, for the MLM, passed the gate) and the claim's
    pooled verdict over the (setting, trial) pairs that count (:func:`pooled_test`); ``held`` is
    ``verdict == "supported"``."""
    A, B = _by_trial(records, x_key, **a), _by_trial(records, x_key, **b)
    per, holds_on, fails_on, gated_out = [], [], [], []
    counted: dict = {}
    for x in sorted(set(A) & set(B)):
        trials = sorted(set(A[x]) & set(B[x]))
        diffs = [A[x][t] - B[x][t] for t in trials]
        ci = paired_interval(diffs)
        excludes = ci is not None and ci[0] > 0
        passed = True if not uses_mlm or gate is None else bool(gate.get(x, False))
        in_claim = bool(claim_on(x))
        counts = in_claim and passed
        per.append({"setting": x, "difference": float(np.mean(diffs)), "ci95": list(ci) if ci else None,
                    "trials": len(trials), "excludes_zero": excludes, "in_claim": in_claim,
                    "gate_passed": passed, "counts": counts})
        if in_claim and not passed:
            gated_out.append(x)
        elif counts:
            (holds_on if excludes else fails_on).append(x)
            counted[x] = diffs
    pooled = pooled_test(counted)
    return {"held": pooled["verdict"] == "supported", "verdict": verdict_text(pooled), "pooled": pooled,
            "holds_on": holds_on, "fails_on": fails_on, "excluded_by_gate": gated_out, "paired": per}


def _fmt(cmp: dict, x_label: str) -> str:
    parts = []
    for p in cmp["paired"]:
        x = p["setting"]
        ci = f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]" if p["ci95"] else "[no interval: 1 trial]"
        flag = "" if p["counts"] else (" (gate failed)" if p["in_claim"] else " (not in claim)")
        parts.append(f"{x}: {p['difference']:+.3f} {ci}{flag}")
    pt = cmp["pooled"]
    if pt["estimate"] is None:
        pooled = "no pairs count"
    else:
        ci = f"[{pt['ci95'][0]:+.3f}, {pt['ci95'][1]:+.3f}]" if pt["ci95"] else "[no interval]"
        pv = f"{pt['p']:.2g}" if pt["p"] is not None else "n/a"
        mde = f"{pt['mde']:.3f}" if pt["mde"] is not None else "n/a"
        pooled = (f"{pt['estimate']:+.3f} {ci} over {pt['pairs']} pairs in {pt['settings']} settings, "
                  f"p = {pv}, detectable effect (80% power) {mde}")
    return (f"pooled: {pooled}: {cmp['verdict']}. Described per {x_label} (mean, 95% t-interval over "
            f"trials): " + "; ".join(parts)
            + (f"; excluded by the quality gate: {cmp['excluded_by_gate']}" if cmp["excluded_by_gate"] else ""))


def _models(records: list) -> tuple:
    """The models (``mlm``, ``exact``) that have records (``--model exact`` runs only one)."""
    return tuple(m for m in ("mlm", "exact") if any(r["model"] == m for r in records))


def predictions(name: str, records: list, quality: list) -> list:
    """The paper's predictions, per model, as pooled verdicts (module docstring)."""
    out = []
    if name == "fig3-left":
        gate = {q["setting"]["hidden_states"]: q["passed"] for q in quality}
        for model in _models(records):
            cmp = compare(records, "hidden_states", {"model": model, "method": "prompt"},
                          {"model": model, "method": "head"}, claim_on=lambda h: h > NUM_TOKENS,
                          gate=gate, uses_mlm=model == "mlm")
            out.append({"claim": f"prompt tuning beats head tuning when |H| > |X| = {NUM_TOKENS} ({model})",
                        "evidence": "prompt - head " + _fmt(cmp, "|H|"), **cmp})
        return out
    gate = {}
    for q in quality:
        h = q["setting"]["hidden_total"]
        gate[h] = gate.get(h, True) and q["passed"]     # both the memory and the vanilla MLM
    for model in _models(records):
        cmp = compare(records, "hidden_total", {"model": model, "method": "attention", "data": "memory"},
                      {"model": model, "method": "head", "data": "vanilla"}, gate=gate, uses_mlm=model == "mlm")
        out.append({"claim": f"memory HMM + attention head beats vanilla HMM + linear head at equal |M||H| ({model})",
                    "evidence": "memory+attention - vanilla+linear " + _fmt(cmp, "|M||H|"),
                    **cmp})
    return out


def controls(name: str, records: list, quality: list) -> list:
    """fig3-right's controls: memory + attention against the same attention head on the vanilla
    data, and against a token-only attention head on the memory data (paired, per model)."""
    if name != "fig3-right":
        return []
    gate_mem = {q["setting"]["hidden_total"]: q["passed"] for q in quality if q["setting"]["data"] == "memory"}
    gate_van = {q["setting"]["hidden_total"]: q["passed"] for q in quality if q["setting"]["data"] == "vanilla"}
    out = []
    for model in _models(records):
        gate = {h: gate_mem.get(h, False) and gate_van.get(h, False) for h in gate_mem}
        cmp = compare(records, "hidden_total", {"model": model, "method": "attention", "data": "memory"},
                      {"model": model, "method": "attention", "data": "vanilla"}, gate=gate,
                      uses_mlm=model == "mlm")
        out.append({"control": "same attention head on the vanilla HMM's data", "model": model,
                    "beaten": cmp["held"], "evidence": "memory+attention - vanilla+attention " + _fmt(cmp, "|M||H|"),
                    **cmp})
    for model in _models(records):
        cmp = compare(records, "hidden_total", {"model": model, "method": "attention", "data": "memory"},
                      {"model": "none", "method": "attention-tokens", "data": "memory"}, gate=gate_mem,
                      uses_mlm=model == "mlm")
        out.append({"control": "token-only attention head (G replaced by a constant) on the memory data",
                    "model": model, "beaten": cmp["held"],
                    "evidence": "memory+attention - token-only attention " + _fmt(cmp, "|M||H|"), **cmp})
    return out
