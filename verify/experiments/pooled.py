"""The pooled test of one claim (:func:`pooled_test`), its interval, detectable effect and
prospective trial count, and the verdicts of a run's family after Holm's adjustment
(:func:`adjust_family`). The rule itself is :mod:`.rule`; the statistics module
(:mod:`.stats`) describes it and re-exports these names.
"""

from __future__ import annotations

import math

import numpy as np

from .rule import FLIPS, holm, rule_pvalues

__all__ = ["pooled_test", "verdict_after", "adjust_family", "detectable_effect", "trials_needed", "ALPHA", "POWER",
           "EFFECT", "METHOD"]

ALPHA = 0.05      # two-sided level of every pooled test (the interval is 95%)
POWER = 0.80      # the power at which the smallest detectable effect is reported
EFFECT = 0.05     # the stated effect size (accuracy points) prospective trial counts are for
SIM_TABLES = 1000  # simulated tables of a detectable effect (power SE 1.3 points at 80%)
TRIALS_TABLES = 200  # simulated tables per power evaluation of a prospective trial count
SIM_FLIPS = 1023  # sign patterns of the flip component in power simulations (beyond exact enumeration)
MAX_TRIALS = 200  # the largest trials per setting a prospective count reports
METHOD = ("stratified mean paired difference; p = max(sign-flip of the studentized mean (exact up to 12 "
          "pairs, else 4,095 seeded patterns), Hall's skewness-corrected t (skewness widened by one SE), "
          "t with a skewness allowance of 1); interval by inverting the test")


def _table(groups: dict) -> tuple[np.ndarray, list[int]]:
    sets = [np.asarray(v, dtype=float).ravel() for v in groups.values()]
    if any(len(v) == 0 for v in sets):
        raise ValueError("pooled_test: a setting with no paired differences")
    if any(not np.all(np.isfinite(v)) for v in sets):
        raise ValueError("pooled_test: a paired difference that is not finite")
    return (np.concatenate(sets) if sets else np.zeros(0)), [len(v) for v in sets]


def _bound(d: np.ndarray, sizes: list[int], est: float, scale: float, side: int, alpha: float,
           seed: int) -> float | None:
    """The end of the 95% interval on ``side`` (-1 lower, +1 upper): the farthest shift ``theta``
    whose one-sided p (data minus ``theta``) is still at least ``alpha / 2``: a bracket among
    shifts of ``scale * 4^j`` (``j < 16``), then four grids of 33 shifts (relative precision
    about ``4 / 32^4``); ``None`` when no shift is rejected."""
    which = "p_up" if side < 0 else "p_down"

    def reject(thetas: np.ndarray) -> np.ndarray:
        return rule_pvalues(d[None, :] - thetas[:, None], sizes, seed=seed)[which] < alpha / 2

    steps = est + side * scale * 2.0 ** np.arange(0, 32, 2)
    hit = reject(steps)
    if not hit.any():
        return None
    j = int(np.argmax(hit))
    near, far = (est if j == 0 else float(steps[j - 1])), float(steps[j])
    for _ in range(4):
        grid = np.linspace(near, far, 33)
        hit = reject(grid)
        j = int(np.argmax(hit))          # hit[-1] is True (far rejects)
        near, far = float(grid[j - 1]) if j > 0 else near, float(grid[j])
    return near


def _sim_noise(sds: np.ndarray, sizes: list[int], reps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, 7, *sizes])
    return np.concatenate([rng.normal(0.0, s, (reps, n)) for s, n in zip(sds, sizes)], axis=1)


def _power(noise: np.ndarray, sizes: list[int], effects, alpha: float, seed: int) -> np.ndarray:
    """The rule's rate of ``supported`` on ``noise + effect`` for each of ``effects``."""
    effects = np.atleast_1d(np.asarray(effects, dtype=float))
    out = np.empty(len(effects))
    for i, effect in enumerate(effects):          # one effect at a time: (reps, patterns) arrays stay small
        r = rule_pvalues(noise + effect, sizes, seed=seed, flips=SIM_FLIPS)
        out[i] = np.mean((r["p"] < alpha) & (r["estimate"] > 0))
    return out


def _setting_sds(d: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Each setting's observed SD; settings with one trial get the root mean within-setting
    variance (the variance of all differences when every setting has one trial, as the rule
    pools them)."""
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    parts = [d[starts[i]:starts[i + 1]] for i in range(len(sizes))]
    var = [float(p.var(ddof=1)) if len(p) > 1 else None for p in parts]
    known = [v for v in var if v is not None]
    pooled = float(np.mean(known)) if known else float(d.var(ddof=1)) if len(d) > 1 else 0.0
    return np.sqrt([pooled if v is None else v for v in var])


def _thresholds(noise: np.ndarray, sizes: list[int], alpha: float, seed: int, steps: int = 9) -> np.ndarray:
    """For each simulated table (row of ``noise``), the smallest shift ``delta`` at which the rule
    says ``supported`` on ``noise + delta`` (``inf`` where no shift up to ``est + 512 se`` does): a
    bracket from the table's own estimate and standard error, then ``steps`` bisections (precision
    ``8 se / 2^steps``). The rule's power at an effect ``e`` on these tables is the fraction of
    thresholds at or below ``e``."""
    def supported(deltas: np.ndarray) -> np.ndarray:
        out = np.empty(len(noise), dtype=bool)
        for i in range(0, len(noise), 500):            # (500, patterns) arrays at a time
            r = rule_pvalues(noise[i:i + 500] + deltas[i:i + 500, None], sizes, seed=seed, flips=SIM_FLIPS)
            out[i:i + 500] = (r["p"] < alpha) & (r["estimate"] > 0)
        return out

    est = noise.sum(1) / noise.shape[1]
    se = rule_pvalues(noise, sizes, seed=seed, flips=1)["se"]        # the rule's se; a shift leaves it alone
    lo, width = -est, 8 * se                         # est + delta = 0: never supported
    hi = lo + width
    ok = supported(hi)
    for _ in range(6):                                # widen where the bracket's top is not yet supported
        if ok.all():
            break
        width = np.where(ok, width, 2 * width)
        hi = np.where(ok, hi, lo + width)
        ok = supported(hi)
    for _ in range(steps):
        mid = (lo + hi) / 2
        yes = supported(mid)
        lo, hi = np.where(yes, lo, mid), np.where(yes, mid, hi)
    return np.where(ok, hi, np.inf)


def detectable_effect(sds, sizes: list[int], *, alpha: float = ALPHA, power: float = POWER, seed: int = 0,
                      reps: int = SIM_TABLES) -> float | None:
    """The smallest positive mean difference the rule calls ``supported`` with probability
    ``power``, simulated at the design: settings of ``sizes`` trials, normal noise with standard
    deviations ``sds`` per setting, ``reps`` seeded tables. Each table's own threshold (the
    smallest shift the rule supports, :func:`_thresholds`) is found by bisection, and the effect
    is their ``power`` quantile (the smallest shift that ``ceil(power * reps)`` tables support):
    the rule's simulated power there is ``power`` exactly, and its true power is within one
    binomial standard error ``sqrt(power (1 - power) / reps)`` (1.3 points at 1,000 tables) of
    it. ``None`` when the noise is zero or no effect reaches the power (too few pairs)."""
    sds = np.asarray(sds, dtype=float)
    if sum(sizes) < 2 or not np.any(sds > 0):
        return None
    thresholds = np.sort(_thresholds(_sim_noise(sds, sizes, reps, seed), sizes, alpha, seed))
    q = thresholds[math.ceil(power * reps) - 1]
    return float(max(q, 0.0)) if np.isfinite(q) else None


def trials_needed(sds, settings: int, effect: float = EFFECT, *, alpha: float = ALPHA, power: float = POWER,
                  seed: int = 0, reps: int = TRIALS_TABLES, start: int = 2) -> int | None:
    """Trials per setting at which the rule says ``supported`` with probability ``power`` when
    the mean difference is ``effect`` (a stated size, not an estimate), simulated with normal
    noise of standard deviation ``sds`` (one per setting, or one for all); ``None`` above
    ``MAX_TRIALS`` or for zero noise."""
    sds = np.broadcast_to(np.asarray(sds, dtype=float), (settings,))
    if not np.any(sds > 0) or effect <= 0:
        return None

    def ok(n: int) -> bool:
        sizes = [n] * settings
        return bool(_power(_sim_noise(sds, sizes, reps, seed), sizes, effect, alpha, seed)[0] >= power)

    lo, hi = max(start, 2) - 1, max(start, 2)
    while not ok(hi):
        if hi >= MAX_TRIALS:
            return None
        lo, hi = hi, min(2 * hi, MAX_TRIALS)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _decide(out: dict, p: float | None, alpha: float, adjusted: bool) -> dict:
    """``verdict`` and ``reason`` from ``p`` (the raw or the family-adjusted p-value)."""
    est = out["estimate"]
    if out.get("reason_fixed"):
        return {**out, "verdict": "inconclusive", "reason": out["reason_fixed"]}
    if p is not None and p < alpha and est != 0:
        return {**out, "verdict": "supported" if est > 0 else "contradicted", "reason": None}
    if adjusted and out["p"] is not None and out["p"] < alpha:
        return {**out, "verdict": "inconclusive",
                "reason": f"not significant after Holm's adjustment over the run's {out['family_size']} tests "
                          f"(p = {out['p']:.2g}, adjusted p = {p:.2g})"}
    if out["min_reachable_p"] is not None and out["min_reachable_p"] >= alpha:
        return {**out, "verdict": "inconclusive",
                "reason": f"cannot reach p < {alpha:g}: with {out['nonzero']} nonzero differences the smallest "
                          f"p the sign-flip test can give is {out['min_reachable_p']:.3g}; needs at least "
                          f"{_min_nonzero(alpha)} nonzero pairs"}
    if out.get("zero_variance"):
        return {**out, "verdict": "inconclusive",
                "reason": f"the paired differences are constant within each setting and differ in sign across "
                          f"settings: the sign-flip test of their sum gives p = {out['p']:.2g}"
                          + (f" (Holm-adjusted p = {p:.2g})" if adjusted else "")
                          + "; zero spread gives no detectable effect or trial count"}
    need = out.get("trials_needed")
    tail = ("" if not out.get("trials_checked") else
            f"about {need} trials per setting give 80% power for an effect of {out['effect']:g}" if need else
            f"more than {MAX_TRIALS} trials per setting would be needed for 80% power at an effect of "
            f"{out['effect']:g}")
    mde = out.get("mde")
    shown = f"p = {out['p']:.2g}" + (f", Holm-adjusted p = {p:.2g}" if adjusted else "")
    shown += f", detectable effect (80% power) {mde:.3f}" if mde else ""
    ci = out.get("ci95")
    # "no difference detected" needs the data's own interval to exclude the stated effect too: the
    # simulated power assumes normal noise at the within-setting spread, which skewed or
    # between-setting-heterogeneous differences (a wide inverted interval) can break
    narrow = ci is not None and -out["effect"] < ci[0] and ci[1] < out["effect"]
    if _powered(out) and narrow:
        return {**out, "verdict": "inconclusive",
                "reason": f"no difference detected: {shown}; the design already has 80% power for an effect "
                          f"of {out['effect']:g} and the 95% interval excludes it"}
    if _powered(out) and ci is not None:
        return {**out, "verdict": "inconclusive",
                "reason": f"underpowered on these data: {shown}, but the 95% interval "
                          f"[{ci[0]:+.3f}, {ci[1]:+.3f}] does not exclude an effect of {out['effect']:g} "
                          f"(the simulated power assumes normal noise at the within-setting spread)"}
    return {**out, "verdict": "inconclusive", "reason": f"underpowered: {shown}" + (f"; {tail}" if tail else "")}


def _powered(out: dict) -> bool:
    """Whether the run's own design already gives the rule 80% power at the stated effect (its
    detectable effect, simulated at that design, is at most the effect)."""
    return out.get("mde") is not None and out["mde"] <= out["effect"]


def _min_nonzero(alpha: float) -> int:
    return int(math.floor(1 + math.log2(2 / alpha))) if alpha > 0 else 0


def pooled_test(groups: dict, *, alpha: float = ALPHA, seed: int = 0, effect: float = EFFECT) -> dict:
    """The pooled test of the mean paired difference over ``groups`` ``{setting: [d_t, ...]}``
    (module docstring). Returns ``verdict``, ``reason``, ``estimate``, ``ci95`` (``None`` when
    the test cannot reach ``alpha`` or the differences have zero spread: ``ci95_note`` says
    which), ``p`` (two-sided; also ``p_value``), ``p_adjusted`` (``p``
    until :func:`verdict_after`), ``detectable_effect`` (also ``mde``), ``min_reachable_p``,
    ``trials_needed`` (per setting, for ``effect``; only when inconclusive), ``effect``,
    ``method``, ``n_pairs`` / ``pairs``, ``n_settings`` / ``settings``, ``se``, ``df`` (Welch),
    ``nonzero``, ``zero_variance``, the components ``p_flip``, ``p_hall``, ``p_skew``, and
    ``wilcoxon_p`` (``None``: no longer part of the rule). Deterministic for a given ``seed``.

    Raises:
        ValueError: a setting with no differences, or a difference that is not finite.
    """
    d, sizes = _table(groups)
    n, k = len(d), len(sizes)
    out = {"test": METHOD, "method": METHOD, "pairs": n, "settings": k, "n_pairs": n, "n_settings": k,
           "df": None, "estimate": None, "ci95": None, "p_value": None, "p": None, "p_adjusted": None, "se": None,
           "mde": None, "detectable_effect": None, "min_reachable_p": None, "trials_needed": None,
           "effect": effect, "alpha": alpha, "nonzero": int(np.count_nonzero(d)), "zero_variance": None,
           "p_flip": None, "p_hall": None, "p_skew": None, "wilcoxon_p": None, "family_size": 1, "seed": seed,
           "setting_sds": None, "trials_checked": False,
           "ci95_note": None}
    if n == 0:
        return _decide({**out, "reason_fixed": "no (setting, trial) pairs count toward the claim"}, None, alpha, False)
    out["estimate"] = est = math.fsum(d) / n
    if n == 1:
        return _decide({**out, "reason_fixed": "one pair gives no test; needs at least 2 trials"}, None, alpha, False)
    r = rule_pvalues(d[None, :], sizes, seed=seed)
    zero_var = bool(r["zero_variance"][0])
    p = float(r["p"][0])
    m = out["nonzero"]
    floor = 2.0 ** (1 - m) if m else 1.0
    if not r["exact_flips"]:
        floor = max(floor, 2.0 / (FLIPS + 1))
    out.update(p=p, p_value=p, p_adjusted=p, zero_variance=zero_var, min_reachable_p=min(1.0, floor),
               df=None if zero_var else float(r["df"][0]), se=float(r["se"][0]),
               p_flip=float(r["p_flip"][0]), p_hall=None if zero_var else float(r["p_hall"][0]),
               p_skew=None if zero_var else float(r["p_skew"][0]))
    if zero_var:
        # the sign-flip p stands (the test needs no spread), but an interval for the mean does not:
        # inverting a sign test on constant data gives the point (or the range of the setting
        # constants), which would claim a precision no sample without spread can show
        out["ci95_note"] = "no interval: the differences are constant within each setting (zero spread)"
    elif out["min_reachable_p"] >= alpha:
        out["ci95_note"] = f"no interval: with {m} nonzero differences no shift reaches p < {alpha:g}"
    if m == 0:
        return _decide({**out, "reason_fixed": "no difference: every paired difference is 0"}, p, alpha, False)
    spread = float(np.max(d) - np.min(d))
    scale = out["se"] if out["se"] > 0 else max(spread, abs(est), 1e-12)
    if out["min_reachable_p"] < alpha and not zero_var:     # otherwise no shift is rejected: no interval
        lo = _bound(d, sizes, est, scale, -1, alpha, seed)
        hi = _bound(d, sizes, est, scale, +1, alpha, seed)
        out["ci95"] = [min(lo, est), max(hi, est)] if lo is not None and hi is not None else None
    if zero_var:
        if est == 0.0:
            return _decide({**out, "reason_fixed": "no difference: the paired differences are constant within "
                                                   "each setting and cancel (mean 0)"}, p, alpha, False)
    else:
        out["setting_sds"] = [float(x) for x in _setting_sds(d, sizes)]
        out["mde"] = out["detectable_effect"] = detectable_effect(out["setting_sds"], sizes, alpha=alpha, seed=seed)
    res = _decide(out, p, alpha, False)
    if res["verdict"] == "inconclusive" and not zero_var and res["min_reachable_p"] < alpha and not _powered(out):
        out["trials_needed"] = trials_needed(out["setting_sds"], k, effect, alpha=alpha, seed=seed,
                                             start=max(2, math.ceil(n / k)))
        out["trials_checked"] = True
        res = _decide(out, p, alpha, False)
    return res


def verdict_after(pooled: dict, p_adjusted: float | None, *, alpha: float | None = None,
                  family_size: int | None = None) -> dict:
    """A copy of ``pooled`` with ``p_adjusted`` and the verdict and reason decided from it."""
    alpha = pooled.get("alpha", ALPHA) if alpha is None else alpha
    out = {**pooled, "p_adjusted": p_adjusted, "family_size": family_size or pooled.get("family_size", 1)}
    if pooled.get("reason_fixed") or p_adjusted is None:
        return out
    res = _decide(out, p_adjusted, alpha, True)
    if (res["verdict"] == "inconclusive" and res["reason"].startswith(("underpowered", "no difference detected"))
            and not out.get("trials_checked") and not _powered(out)
            and out.get("setting_sds")):
        out["trials_needed"] = trials_needed(out["setting_sds"], out["settings"], out["effect"], alpha=alpha,
                                             seed=out.get("seed", 0),
                                             start=max(2, math.ceil(out["pairs"] / out["settings"])))
        out["trials_checked"] = True
        res = _decide(out, p_adjusted, alpha, True)
    return res


def adjust_family(pooled_list: list, *, alpha: float | None = None) -> list:
    """Holm over the p-values of one run's family (its claims and controls), then each verdict
    from its adjusted p-value (:func:`verdict_after`); tests without a p-value stay as they are."""
    adjusted = holm([p.get("p") for p in pooled_list])
    size = sum(a is not None for a in adjusted)
    return [verdict_after(p, a, alpha=alpha, family_size=size) for p, a in zip(pooled_list, adjusted)]


