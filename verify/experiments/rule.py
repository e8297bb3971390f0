"""The verdict rule of Figure 3's claims: one test of the mean paired difference with settings
as strata, vectorised over tables that share a design (so the calibration benchmark and the
power simulations run exactly the rule that decides a run).

Data: paired differences ``d[s, t]`` (setting ``s``, trial ``t``), ``n_s`` trials per setting,
``N = sum n_s``. The null hypothesis is that the trial-weighted mean of the setting means,
``theta = sum_s n_s E[d_s] / N``, is 0; settings may differ in mean (cancelling under the null),
spread, skewness and ties.

- Estimate ``theta_hat = sum d / N``; standard error ``se = sqrt(sum_s n_s v_s) / N`` with
  ``v_s`` the within-setting sample variance (settings with one trial are pooled into one
  stratum first, so their differences count as noise: conservative); Welch-Satterthwaite
  ``df``; ``T = theta_hat / se``.
- Three one-sided p-values per direction, and the rule takes the LARGEST (a verdict needs all
  three):
  1. the sign-flip test of ``T`` (exact under symmetric differences of any scale: all ``2^N``
     sign patterns when ``N <= EXACT_FLIPS``, otherwise ``FLIPS`` seeded random patterns plus
     the identity); it gives the minimum reachable p ``2^(1 - m)``, ``m`` the nonzero
     differences (``2 / (FLIPS + 1)`` at least, with random patterns);
  2. Hall's (1992) skewness-corrected t, ``g(T) = ((1 + c T)^3 - 1) / (3 c) + gamma / (6 sqrt(N))``
     with ``c = gamma / (3 sqrt(N))`` (``c T`` held at ``-1/2`` below, where the cubic would
     flatten and floor the p-value: there ``g = 7 T / 12``), against ``t(df)``, where the pooled within-setting
     skewness ``gamma`` is widened by ``HALL_ALLOWANCE * sqrt(6 / N_v)`` (one standard error of
     a skewness estimate from ``N_v = (sum n_s v_s)^2 / sum n_s v_s^2`` pairs, Kish's effective
     count when settings differ in spread) toward the side that makes the tested direction harder;
  3. the t with a skewness allowance ``|gamma| <= GAMMA_MAX`` (the first Edgeworth term,
     ``P(T <= -x) ~ F_t(-x) + gamma / (6 sqrt(N_eff)) (2 x^2 + 1) phi(x)``, ``N_eff`` the
     effective number of pairs for the setting variances), which holds where the sample hides
     its skewness (mostly-zero, tied differences).
  The two-sided p is ``min(1, 2 min(p_up, p_down))``.
- Zero variance (every setting's differences constant): the sign-flip test of the sum alone.

Why this rule (benchmarks/calibration.py, benchmarks/results/calibration/): on 225 null designs
x 2,000 tables (skewed both ways, mostly-zero and tied, heavy-tailed, heteroscedastic,
cancelling, unbalanced, 1-7 settings x 2-20 trials) the stratified t-test rejects up to 12.5%,
the sign-flip test alone 10.2%, Hall's correction alone 10.8% (its sample skewness is fooled by
mostly-zero data), the skewness allowance alone 12.0% (small exponential samples); requiring all
three rejects at most 4.3% (Monte Carlo SE 0.45%). The price is power at small designs (normal
differences, 0.5 SD effect, 4 settings x 5 trials: 39% against the t-test's 54%), which the
reported detectable effect states. The level is shown for those families, not for every
skewed, heteroscedastic table (Bahadur and Savage 1956: no test of the sample can be). Three
adversarial designs are reported apart: one setting of 5 trials drawing (Exp(1) - 1) x 10 beside
N(0, 1) settings (up to 7.07%), chi-square(1) - 1 (7.13% at 2 x 5) and a three-point law -1, 0,
+2.5 with probabilities 0.25, 0.65, 0.1 (7.17% at 2 x 20). In each, the tables that hold none of
the rare positive values (10-19% of them) are a law with a mean 2.4-4 standard deviations below
zero, and any test that keeps 5% on the null may reject at most 0.05 / P(those tables) of them
(26-49%); the rule rejects 27-55%, close to that cap, against 67-98% for a z-test that knows the
variance (the calibration table's adversarial section). What a verdict assumes: no setting hides
a rare, large difference of the other sign that its trials happened not to draw.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["design_strata", "rule_pvalues", "flip_patterns", "holm", "EXACT_FLIPS", "FLIPS", "GAMMA_MAX",
           "HALL_ALLOWANCE"]

EXACT_FLIPS = 12      # enumerate all 2^N sign patterns up to this many pairs
FLIPS = 4095          # seeded random sign patterns beyond (plus the identity)
GAMMA_MAX = 1.0       # the skewness allowance of component 3
HALL_ALLOWANCE = 1.0  # component 2 widens the sample skewness by this many sqrt(6 / N_v)


def design_strata(sizes: list[int]) -> list[list[int]]:
    """Column indices of the strata the rule uses for settings of ``sizes`` trials (concatenated
    in order): settings with one trial are pooled into one stratum; a lone one joins the largest
    setting. ``[[0, 1], [2, 3, 4]]`` for ``[2, 3]``."""
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    cols = [list(range(starts[i], starts[i + 1])) for i in range(len(sizes))]
    multi = [c for c in cols if len(c) > 1]
    single = [c[0] for c in cols if len(c) == 1]
    if len(single) > 1 or (single and not multi):
        multi.append(single)
    elif single:
        max(multi, key=len).append(single[0])
    return multi


def flip_patterns(n: int, seed: int = 0, flips: int = FLIPS) -> tuple[np.ndarray, bool]:
    """Sign patterns ``(M, n)`` of the sign-flip test and whether they are all ``2^n`` of them
    (when ``n <= EXACT_FLIPS`` and ``2^n <= flips + 1``; otherwise ``flips`` seeded random ones,
    the identity counted separately)."""
    if n <= EXACT_FLIPS and 2 ** n <= flips + 1:
        return np.array(list(itertools.product((1.0, -1.0), repeat=n))), True
    # the top bit of PCG64's raw 64-bit outputs: a stream numpy keeps fixed across versions
    # (its distribution methods, e.g. Generator.choice, are not guaranteed to be)
    raw = np.random.PCG64(np.random.SeedSequence([seed, n])).random_raw((flips, n))
    return np.where(raw >> np.uint64(63), 1.0, -1.0), False


def _moments(d: np.ndarray, strata: list[list[int]]):
    """Per table (rows of ``d``, ``(R, N)``): estimate, se, df, the effective pairs for the
    skewness of the mean and for the pooled moments, and the pooled skewness."""
    n_all = d.shape[1]
    est = d.sum(1) / n_all
    acc = np.zeros(len(d))
    acc15 = np.zeros(len(d))
    acc2 = np.zeros(len(d))
    dfden = np.zeros(len(d))
    m2 = np.zeros(len(d))
    m3 = np.zeros(len(d))
    for cols in strata:
        x = d[:, cols]
        n = len(cols)
        const = x.max(1) == x.min(1)                  # exactly constant: no rounding residue
        r = np.where(const[:, None], 0.0, x - x.mean(1, keepdims=True))
        v = (r * r).sum(1) / (n - 1)
        acc += n * v
        acc15 += n * v ** 1.5
        acc2 += n * v * v
        dfden += (n * v / n_all ** 2) ** 2 / (n - 1)
        m2 += (r * r).sum(1)
        m3 += (r ** 3).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        neff2 = acc ** 2 / acc2          # Kish: the pairs the pooled moments effectively rest on
        se = np.sqrt(acc) / n_all
        df = (acc / n_all ** 2) ** 2 / dfden
        neff = acc ** 3 / acc15 ** 2
        gamma = m3 * math.sqrt(n_all) / m2 ** 1.5
    return est, se, df, neff, np.minimum(neff2, n_all), gamma


def _flip_stat(d: np.ndarray, strata: list[list[int]], pats: np.ndarray):
    """Studentized statistic and raw sum under every sign pattern: two ``(R, M)`` arrays.

    With ``a_s`` a stratum's flipped sum, ``sum_s n_s v_s = sum_s n_s (ss_s - a_s^2 / n_s) / (n_s - 1)``
    (``ss_s`` its sum of squares, unchanged by flips): a constant minus ``sum_s a_s^2 / (n_s - 1)``."""
    const = sum(len(c) * (d[:, c] ** 2).sum(1) / (len(c) - 1) for c in strata)
    s1 = np.zeros((len(d), len(pats)))
    acc = np.repeat(const[:, None], len(pats), axis=1)
    for cols in strata:
        a = d[:, cols] @ pats[:, cols].T                    # (R, M) flipped sums of the stratum
        s1 += a
        np.square(a, out=a)
        a *= 1.0 / (len(cols) - 1)
        acc -= a
    np.maximum(acc, 0.0, out=acc)
    np.sqrt(acc, out=acc)
    init = np.where(s1 > 0, np.inf, np.where(s1 < 0, -np.inf, 0.0))
    # below 1e-7 of sqrt(const) the spread is rounding noise of the cancellation: zero variance
    t = np.divide(s1, acc, out=init, where=acc > 1e-7 * np.sqrt(const)[:, None])   # (s1 / N) / (sqrt(acc) / N)
    return t, s1


def rule_pvalues(d: np.ndarray, sizes: list[int], *, seed: int = 0, flips: int = FLIPS,
                 gamma_max: float = GAMMA_MAX, hall_allowance: float = HALL_ALLOWANCE) -> dict:
    """The rule on ``R`` tables of one design: ``d`` ``(R, N)`` holds each table's differences,
    settings concatenated in the order of ``sizes`` (trials per setting). Returns arrays of
    length ``R``: ``estimate``, ``se``, ``df``, ``t``, ``p_up`` (evidence for a positive mean),
    ``p_down``, ``p`` (two-sided), ``zero_variance``, ``nonzero`` (count), and the components
    ``p_flip``, ``p_hall``, ``p_skew`` (two-sided each). Needs ``N >= 2``."""
    from scipy import stats

    d = np.atleast_2d(np.asarray(d, dtype=float))
    n_all = d.shape[1]
    # the rule is scale-free: each table is run times the power of 2 that brings its largest |d| into
    # [0.5, 1) (exact), so squares of 1e200 do not overflow, spreads of 1e-300 do not underflow to
    # zero variance, and the sum's tie tolerance below is relative; estimate and se are scaled back
    scale = np.frexp(np.abs(d).max(1))[1] if n_all else np.zeros(len(d), dtype=int)
    with np.errstate(under="ignore"):
        d = np.ldexp(d, -scale[:, None])
    strata = design_strata(sizes)
    est, se, df, neff, neff2, gamma = _moments(d, strata)
    zero_var = ~(se > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(zero_var, 0.0, est / se)
    # 1. sign flips (the studentized statistic; the raw sum where every setting is constant)
    pats, exact = flip_patterns(n_all, seed, flips)
    tf, sf = _flip_stat(d, strata, pats)
    total = d.sum(1)[:, None]
    tol = 1e-12 * (1 + np.abs(d).sum(1))[:, None]
    t_tol = (1e-9 * (1 + np.abs(t)))[:, None]               # the identity pattern always counts
    up_t, dn_t = (tf >= t[:, None] - t_tol).sum(1), (tf <= t[:, None] + t_tol).sum(1)
    up_s, dn_s = (sf >= total - tol).sum(1), (sf <= total + tol).sum(1)
    up, dn = np.where(zero_var, up_s, up_t), np.where(zero_var, dn_s, dn_t)
    m = len(pats)
    f_up, f_dn = (up / m, dn / m) if exact else ((1 + up) / (m + 1), (1 + dn) / (m + 1))
    if not exact:
        # the 2^(N - m) patterns that differ from the identity only on the N - m zero differences tie
        # with it, so the exact one-sided p is at least 2^-m; random patterns can draw fewer of them
        # (5 nonzero of 20: p 0.048 < 2^(1 - 5) at seed 149), which would cross a floor no table can
        floor = 0.5 ** (d != 0).sum(1)
        f_up, f_dn = np.maximum(f_up, floor), np.maximum(f_dn, floor)
    # 2. Hall's transformation with the skewness widened against the tested direction
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = np.nan_to_num(gamma)
        allow = hall_allowance * np.sqrt(6.0 / neff2)

        def hall(gm):
            # Hall's g(T) = ((1 + c T)^3 - 1) / (3 c) = T (1 + x + x^2 / 3), x = c T, c = gamma / (3 sqrt(N));
            # the cubic flattens toward its stationary point x = -1 (a floor on the p-value), so x is
            # held at -1/2 below: g = 7 T / 12 there (monotone in T and in gamma)
            x = np.maximum(gm / (3 * math.sqrt(n_all)) * t, -0.5)
            return t * (1 + x + x * x / 3) + gm / (6 * math.sqrt(n_all))

        h_up = stats.t.sf(hall(g - allow), df)
        h_dn = stats.t.cdf(hall(g + allow), df)
        # 3. worst-case skewness allowance (first Edgeworth term)
        corr = gamma_max / (6 * np.sqrt(neff)) * (2 * t * t + 1) * stats.norm.pdf(t)
        k_up = np.minimum(1.0, stats.t.sf(t, df) + corr)
        k_dn = np.minimum(1.0, stats.t.cdf(t, df) + corr)
    one = np.ones(len(d))
    h_up, h_dn, k_up, k_dn = (np.where(zero_var, 0.0, np.nan_to_num(x, nan=1.0)) for x in (h_up, h_dn, k_up, k_dn))
    p_up = np.maximum.reduce([f_up, h_up, k_up])
    p_dn = np.maximum.reduce([f_dn, h_dn, k_dn])

    def two(a, b):
        return np.minimum(one, 2 * np.minimum(a, b))

    with np.errstate(over="ignore"):     # an se beyond 1.8e308 (differences near the float limit) is inf
        est, se = np.ldexp(est, scale), np.where(zero_var, 0.0, np.ldexp(se, scale))
    return {"estimate": est, "se": se, "df": df, "t": t, "p_up": p_up, "p_down": p_dn,
            "p": two(p_up, p_dn), "p_flip": two(f_up, f_dn), "p_hall": np.where(zero_var, np.nan, two(h_up, h_dn)),
            "p_skew": np.where(zero_var, np.nan, two(k_up, k_dn)), "zero_variance": zero_var,
            "nonzero": (d != 0).sum(1), "exact_flips": exact}


def holm(pvalues):
    """Holm's step-down adjustment of a family of p-values, in the shape given (a list, or a
    dict keyed by test): the ``i``-th smallest of ``m`` becomes ``max_{j <= i} min(1, (m - j + 1)
    p_(j))``. ``None`` entries stay ``None`` and are not counted in ``m``."""
    keys = list(pvalues) if isinstance(pvalues, dict) else list(range(len(pvalues)))
    vals = [pvalues[k] for k in keys]
    live = sorted((v, i) for i, v in enumerate(vals) if v is not None)
    m = len(live)
    out: list = [None] * len(vals)
    running = 0.0
    for j, (v, i) in enumerate(live):
        running = max(running, min(1.0, (m - j) * float(v)))
        out[i] = running
    return dict(zip(keys, out)) if isinstance(pvalues, dict) else out
