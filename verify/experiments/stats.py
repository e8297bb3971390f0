"""Figure 3's statistics: accuracy rows with intervals, the quality gate per setting, pooled
verdicts on paired differences, and the controls.

Intervals (95%), description only:
- an accuracy row (mean test accuracy over trials): Student-t on the logit scale, mapped back,
  so it stays inside (0, 1) without clipping (accuracies are first moved into
  ``[1/(2n), 1 - 1/(2n)]``, ``n`` the test-split size); a single trial gives the point.
- a paired difference per setting (e.g. prompt - head on the same trial's task): Student-t over
  trials on the raw differences; one trial gives no interval (``null``).

The decision (stated before any run, SPEC "Experiments"): each claim "a beats b" is decided by
ONE pooled test over all (setting, trial) pairs of the claim whose MLM passed the quality gate
(:func:`pooled_test`):

- the fixed-effect model ``d[s, t] = delta_s + e[s, t]`` (setting as a fixed effect); the
  estimate is the trial-weighted mean ``delta = sum_s n_s mean_s / n`` of the paired
  differences, its standard error ``sqrt(s2 / n)`` with ``s2`` the pooled within-setting
  variance (``df = n - #settings``), and the 95% interval and two-sided p-value are Student-t;
- the distribution-free check: a Wilcoxon signed-rank test (two-sided, zeros dropped) on the
  same differences, each centred by nothing (under the null every difference is symmetric
  about 0);
- the verdict: ``supported`` when the interval lies above 0 and the Wilcoxon p-value is below
  0.05, ``contradicted`` when the interval lies below 0 and the Wilcoxon p-value is below 0.05,
  otherwise ``inconclusive``, with the reason: ``underpowered: needs about N trials`` per
  setting (``N`` the trials at which the smallest detectable effect equals the estimate),
  ``the t-test and the signed-rank test disagree``, or ``no difference`` (every difference 0);
- the smallest detectable effect (80% power, two-sided 5%): ``(t_{0.975, df} + t_{0.80, df}) *
  SE``.

A null effect is thus ``supported`` with probability at most 2.5% (the one-sided error of the
t-interval); ``tests/verify/experiments/test_stats.py`` checks it on synthetic tables.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["accuracy_interval", "paired_interval", "pooled_test", "summarize", "quality_by_setting", "compare",
           "predictions", "controls", "majority_by_setting", "verdict_text", "ALPHA", "POWER"]

NUM_TOKENS = 10
ALPHA = 0.05      # two-sided level of every pooled test (the interval is 95%)
POWER = 0.80      # the power at which the smallest detectable effect is reported


def _t(n: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1))


def accuracy_interval(values, n_test: int) -> tuple[float, float]:
    """95% interval of the mean accuracy over trials (t on the logit scale); inside (0, 1)."""
    v = np.asarray(values, dtype=float)
    m = float(v.mean())
    if len(v) < 2:
        return m, m
    eps = 1.0 / (2 * max(n_test, 1))
    z = np.log(np.clip(v, eps, 1 - eps) / (1 - np.clip(v, eps, 1 - eps)))
    if float(z.std()) == 0.0:
        return m, m
    half = _t(len(z)) * float(z.std(ddof=1)) / math.sqrt(len(z))
    lo, hi = z.mean() - half, z.mean() + half
    lo, hi = float(1 / (1 + math.exp(-lo))), float(1 / (1 + math.exp(-hi)))
    return min(lo, m), max(hi, m)


def paired_interval(diffs) -> tuple[float, float] | None:
    """Student-t 95% interval of the mean paired difference; ``None`` for one trial."""
    d = np.asarray(diffs, dtype=float)
    if len(d) < 2:
        return None
    half = _t(len(d)) * float(d.std(ddof=1)) / math.sqrt(len(d))
    return float(d.mean() - half), float(d.mean() + half)


def _tq(q: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(q, df))


def pooled_test(groups: dict) -> dict:
    """The pooled verdict on paired differences ``groups`` ``{setting: [d_t, ...]}`` (module
    docstring): ``{"verdict", "reason", "estimate", "ci95", "p_value", "se", "df", "pairs",
    "settings", "mde", "wilcoxon_p", "trials_needed"}``. ``ci95``, ``p_value``, ``se`` and
    ``mde`` are ``None`` when ``df = n - #settings`` is 0 (one trial per setting: no test).

    Raises:
        ValueError: a setting with no differences, or a difference that is not finite.
    """
    from scipy import stats

    sets = {k: np.asarray(v, dtype=float) for k, v in groups.items()}
    if any(len(v) == 0 for v in sets.values()):
        raise ValueError("pooled_test: a setting with no paired differences")
    if any(not np.all(np.isfinite(v)) for v in sets.values()):
        raise ValueError("pooled_test: a paired difference that is not finite")
    n, k = sum(len(v) for v in sets.values()), len(sets)
    out = {"test": "paired t with setting as a fixed effect + Wilcoxon signed-rank", "pairs": n,
           "settings": k, "df": max(n - k, 0), "estimate": None, "ci95": None, "p_value": None, "se": None,
           "mde": None, "wilcoxon_p": None, "trials_needed": None}
    if n == 0:
        return {**out, "verdict": "inconclusive", "reason": "no (setting, trial) pairs count toward the claim"}
    d = np.concatenate(list(sets.values()))
    est = float(d.mean())                                    # = sum_s n_s mean_s / n
    out["estimate"] = est
    nonzero = d[d != 0]
    if len(nonzero):
        out["wilcoxon_p"] = float(stats.wilcoxon(nonzero, zero_method="wilcox").pvalue) if len(nonzero) > 1 else 1.0
    df = n - k
    if df == 0:
        return {**out, "verdict": "inconclusive",
                "reason": "underpowered: one trial per setting gives no test; needs at least 2 trials"}
    ss = float(sum(((v - v.mean()) ** 2).sum() for v in sets.values()))
    se = math.sqrt(ss / df / n)
    out["se"] = se
    if se == 0.0:
        if est == 0.0:
            return {**out, "ci95": [0.0, 0.0], "p_value": 1.0, "mde": 0.0, "verdict": "inconclusive",
                    "reason": "no difference: every paired difference is 0"}
        # every setting's differences constant: the interval is the point (the t-test is exact)
        out.update(ci95=[est, est], p_value=0.0, mde=0.0)
    else:
        half = _tq(1 - ALPHA / 2, df) * se
        out.update(ci95=[est - half, est + half], p_value=float(2 * stats.t.sf(abs(est) / se, df)),
                   mde=(_tq(1 - ALPHA / 2, df) + _tq(POWER, df)) * se)
    lo, hi = out["ci95"]
    wil = out["wilcoxon_p"] is not None and out["wilcoxon_p"] < ALPHA
    if lo > 0 and wil:
        return {**out, "verdict": "supported", "reason": None}
    if hi < 0 and wil:
        return {**out, "verdict": "contradicted", "reason": None}
    if lo > 0 or hi < 0:
        return {**out, "verdict": "inconclusive",
                "reason": f"the t-test and the signed-rank test disagree (Wilcoxon p = {out['wilcoxon_p']})"}
    if est == 0.0 or out["mde"] == 0.0:
        return {**out, "verdict": "inconclusive", "reason": "no difference detected"}
    # trials per setting at which the smallest detectable effect would equal |estimate|
    need = math.ceil((n / k) * (out["mde"] / abs(est)) ** 2)
    out["trials_needed"] = max(need, math.ceil(n / k) + 1)
    return {**out, "verdict": "inconclusive",
            "reason": f"underpowered: needs about {out['trials_needed']} trials per setting"}


def verdict_text(pooled: dict) -> str:
    """``supported`` / ``contradicted`` / ``inconclusive (reason)``."""
    return pooled["verdict"] + (f" ({pooled['reason']})" if pooled.get("reason") else "")


def _setting(r: dict, keys: tuple) -> tuple:
    return tuple(r[k] for k in keys)


def _order(values: tuple) -> tuple:
    """Sort key for settings: numbers numerically, strings alphabetically."""
    return tuple((1, v, "") if isinstance(v, (int, float)) else (0, 0, str(v)) for v in values)


def summarize(records: list, keys: tuple, n_test: int) -> list:
    """One row per (setting, method, model): mean test accuracy, 95% interval, trial count."""
    groups: dict = {}
    for r in records:
        groups.setdefault((_setting(r, keys), r["method"], r["model"]), []).append(r["accuracy"])
    rows = []
    for (values, method, model), accs in sorted(groups.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1:])):
        lo, hi = accuracy_interval(accs, n_test)
        rows.append({"setting": dict(zip(keys, values)), "method": method, "model": model,
                     "accuracy": float(np.mean(accs)), "ci95": [lo, hi], "trials": len(accs)})
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
        pv = f"{pt['p_value']:.2g}" if pt["p_value"] is not None else "n/a"
        wp = f"{pt['wilcoxon_p']:.2g}" if pt["wilcoxon_p"] is not None else "n/a"
        mde = f"{pt['mde']:.3f}" if pt["mde"] is not None else "n/a"
        pooled = (f"{pt['estimate']:+.3f} {ci} over {pt['pairs']} pairs in {pt['settings']} settings, "
                  f"p = {pv}, Wilcoxon p = {wp}, detectable effect (80% power) {mde}")
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
