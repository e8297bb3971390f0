"""The pooled test of one claim (:func:`pooled_test`), its interval, detectable effect and
prospective trial count, and the verdicts of a run's family after Holm's adjustment
(:func:`adjust_family`). The rule itself is :mod:`.rule`; the statistics module
(:mod:`.stats`) describes it and re-exports these names.
"""

from __future__ import annotations

import decimal
import math
import numbers
import warnings
from collections.abc import Mapping
from fractions import Fraction

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


def _setting(key, v) -> np.ndarray:
    """One setting's differences as floats; ``ValueError`` (one line naming the setting and the
    problem) for anything but a flat, non-empty sequence of finite real numbers."""
    where = f"pooled_test: setting {key!r}"
    if v is None or isinstance(v, (str, bytes, Mapping)):
        raise ValueError(f"{where}: expected a list of paired differences, got {type(v).__name__}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # older numpy warns on ragged lists instead of raising
            a = np.asarray(v)
    except (ValueError, TypeError, Warning):
        raise ValueError(f"{where}: expected a flat list of numbers, got a ragged or nested one") from None
    if a.ndim != 1:
        raise ValueError(f"{where}: expected a flat list of paired differences, got "
                         + (type(v).__name__ if a.ndim == 0 else f"shape {a.shape}"))
    if len(a) == 0:
        raise ValueError(f"{where}: no paired differences")
    odd = ([x for x in a if not isinstance(x, (numbers.Real, decimal.Decimal))] if a.dtype.kind == "O" else
           [] if a.dtype.kind in "biuf" else [a[0]])       # strings, None, complex numbers, dates
    if odd:
        raise ValueError(f"{where}: a paired difference that is not a real number: {odd[0]!r}")
    try:
        with np.errstate(over="ignore"):
            a = a.astype(float)
    except (OverflowError, ValueError, TypeError):
        a = np.array([math.inf])
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: a paired difference that is not finite (NaN, infinite or beyond the float range)")
    return a


def _table(groups: dict) -> tuple[np.ndarray, list[int]]:
    if not isinstance(groups, Mapping):
        raise ValueError(f"pooled_test: expected a dict {{setting: [paired differences]}}, got {type(groups).__name__}")
    sets = [_setting(k, v) for k, v in groups.items()]
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


def _trials(sds, settings: int, effect: float, **kw) -> int | None:
    """:func:`trials_needed` with the SDs and the effect times the power of 2 that brings the
    largest SD into [0.5, 1) (exact; the rule and the simulation are scale-free): SDs of 1e-300
    do not vanish nor 1e300 overflow. An effect above 2^900 SDs is held there (the noise is below
    rounding either way); ``None`` for zero or infinite SDs (no effect of ``effect`` is detectable
    against the latter)."""
    sds = np.asarray(sds, dtype=float)
    top = float(np.max(sds)) if sds.size else 0.0
    if not 0 < top < math.inf or not effect > 0:
        return None
    e = math.frexp(top)[1]
    with np.errstate(under="ignore"):
        return trials_needed(np.ldexp(sds, -e), settings, min(_ldexp(effect, -e), 2.0 ** 900), **kw)


def _ldexp(x: float, e: int) -> float:
    """``x * 2^e`` as a float: ``inf`` past the float range, 0 below it (no warning)."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(x, e))


def _decide(out: dict, p: float | None, alpha: float, adjusted: bool) -> dict:
    """``verdict`` and ``reason`` from ``p`` (the raw or the family-adjusted p-value)."""
    est = out["estimate"]
    if out.get("reason_fixed"):
        return {**out, "verdict": "inconclusive", "reason": out["reason_fixed"]}
    if out["min_reachable_p"] is not None and out["min_reachable_p"] >= alpha:
        # before the p-value: no table with this many nonzero differences reaches alpha, so a smaller
        # p (a Monte Carlo draw, or an adjusted p handed to verdict_after) cannot make a verdict
        return {**out, "verdict": "inconclusive", "reason": _unreachable(out, alpha)}
    if p is not None and p < alpha and est != 0:
        return {**out, "verdict": "supported" if est > 0 else "contradicted", "reason": None}
    if adjusted and out["p"] is not None and out["p"] < alpha:
        return {**out, "verdict": "inconclusive",
                "reason": f"not significant after Holm's adjustment over the run's {out['family_size']} tests "
                          f"(p = {out['p']:.2g}, adjusted p = {p:.2g})"}
    if out.get("zero_variance"):
        note = out.get("constant_note", "constant within each setting and differ in sign across settings")
        return {**out, "verdict": "inconclusive",
                "reason": f"the paired differences are {note}: the sign-flip test of their sum gives p = {out['p']:.2g}"
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


def _unreachable(out: dict, alpha: float) -> str:
    return (f"cannot reach p < {alpha:g}: with {out['nonzero']} nonzero differences the smallest p the sign-flip "
            f"test can give is {out['min_reachable_p']:.3g}; needs at least {_min_nonzero(alpha)} nonzero pairs")


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
        ValueError: ``groups`` is not a dict; a setting that is not a flat, non-empty list (tuple,
            array) of real numbers; a difference that is not finite (one line naming the problem).
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
    total = sum(map(Fraction, d.tolist()), Fraction(0))      # exact (math.fsum overflows near 1e308)
    out["estimate"] = est = float(total / n)
    if n == 1:
        return _decide({**out, "reason_fixed": "one pair gives no test; needs at least 2 trials"}, None, alpha, False)
    # the rule, the interval search and the simulations are scale-free: they run on the differences
    # times the power of 2 that brings the largest |d| into [0.5, 1) (exact), so 1e300 does not
    # overflow and 1e-300 does not vanish; what they give in the data's units is scaled back (inf
    # beyond 1.8e308)
    e = math.frexp(float(np.max(np.abs(d))))[1]
    with np.errstate(under="ignore"):
        u = np.ldexp(d, -e)
    r = rule_pvalues(u[None, :], sizes, seed=seed)
    zero_var = bool(r["zero_variance"][0])
    p = float(r["p"][0])
    m = out["nonzero"]
    floor = 2.0 ** (1 - m) if m else 1.0
    if not r["exact_flips"]:
        floor = max(floor, 2.0 / (FLIPS + 1))
    out.update(p=p, p_value=p, p_adjusted=p, zero_variance=zero_var, min_reachable_p=min(1.0, floor),
               df=None if zero_var else float(r["df"][0]), se=_ldexp(r["se"][0], e),
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
    if est == 0.0 and total != 0:
        return _decide({**out, "reason_fixed": "the mean paired difference is nonzero but rounds to 0 (below the "
                                               "smallest double, 5e-324): no sign to decide"}, p, alpha, False)
    if zero_var:
        parts = np.split(d, np.cumsum(sizes)[:-1])
        nz = d[d != 0]
        out["constant_note"] = (
            "constant within each setting"
            + ("" if all(v.max() == v.min() for v in parts) else
               " to double precision (each spread is below 1e-150 of the largest difference)")
            + (" and differ in sign across settings" if nz.min() < 0 < nz.max() else ""))
    se_u, est_u = float(r["se"][0]), _ldexp(est, -e)
    scale = se_u if se_u > 0 else max(float(np.max(u) - np.min(u)), abs(est_u), 1e-12)
    if out["min_reachable_p"] < alpha and not zero_var:     # otherwise no shift is rejected: no interval
        lo = _bound(u, sizes, est_u, scale, -1, alpha, seed)
        hi = _bound(u, sizes, est_u, scale, +1, alpha, seed)
        out["ci95"] = [min(_ldexp(lo, e), est), max(_ldexp(hi, e), est)] if lo is not None and hi is not None else None
    if zero_var:
        if total == 0:
            return _decide({**out, "reason_fixed": "no difference: the paired differences are constant within "
                                                   "each setting and cancel (mean 0)"}, p, alpha, False)
    else:
        sds_u = _setting_sds(u, sizes)
        out["setting_sds"] = [_ldexp(x, e) for x in sds_u]
        mde_u = detectable_effect(sds_u, sizes, alpha=alpha, seed=seed)
        out["mde"] = out["detectable_effect"] = None if mde_u is None else _ldexp(mde_u, e)
    res = _decide(out, p, alpha, False)
    if res["verdict"] == "inconclusive" and not zero_var and res["min_reachable_p"] < alpha and not _powered(out):
        out["trials_needed"] = _trials(sds_u, k, _ldexp(effect, -e), alpha=alpha, seed=seed,
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
        out["trials_needed"] = _trials(out["setting_sds"], out["settings"], out["effect"], alpha=alpha,
                                       seed=out.get("seed", 0), start=max(2, math.ceil(out["pairs"] / out["settings"])))
        out["trials_checked"] = True
        res = _decide(out, p_adjusted, alpha, True)
    return res


def adjust_family(pooled_list: list, *, alpha: float | None = None) -> list:
    """Holm over the p-values of one run's family (its claims and controls), then each verdict
    from its adjusted p-value (:func:`verdict_after`); tests without a p-value stay as they are."""
    adjusted = holm([p.get("p") for p in pooled_list])
    size = sum(a is not None for a in adjusted)
    return [verdict_after(p, a, alpha=alpha, family_size=size) for p, a in zip(pooled_list, adjusted)]


