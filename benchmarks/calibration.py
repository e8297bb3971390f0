"""Benchmark: the level and power of Figure 3's verdict rule (verify.experiments.rule) on
synthetic paired-difference tables with a known mean.

Run by hand (not by tests), from the repository root:

    python -m benchmarks.calibration --save benchmarks/results/calibration/table
    python -m benchmarks.calibration --quick          # smoke test: few designs, 400 tables each

Each null design draws ``--reps`` tables of paired differences whose trial-weighted mean is
exactly 0, with ``k`` settings (strata) of ``n`` trials, and runs the rule exactly as
``pooled_test`` does (same sign patterns, same seed): the rate of "supported" (p < 0.05 with a
positive estimate), of "contradicted", and their sum, each with its Monte Carlo standard
error ``sqrt(r (1 - r) / reps)``. The rule states a two-sided level of 5%: the sum must be at
or below 5% within Monte Carlo error in every null design. Columns ``t``, ``flip``, ``Hall``
and ``skew`` give the same rate for the plain stratified t-test and for each of the rule's three
components alone (the rule rejects only when all three do). Power designs shift the
differences by an effect in units of the noise scale.

Null designs (setting ``s`` of ``k`` has noise scale ``1 + 3 s / (k - 1)`` unless "equal"):
  normal       normal, equal scales              normal-het   normal, scales 1..4
  t3           Student t with 3 df (heavy tails) exp-right    Exp(1) - 1 (skewness +2)
  exp-left     1 - Exp(1) (skewness -2)          zero-right   65% exact zeros, else
               Gamma(4.4) - 4.4 (skewness +1.6 overall, like the committed token-only controls)
  zero-left    its mirror                        binomial     (Bin(500, p) - Bin(500, p)) / 500,
               p = level of the setting + N(0, 0.05) per trial (ties, two equal methods)
  cancel       normal with setting means +1, -1, ... (0 for a last odd one): they cancel
  rare-failure-q  "the prompt occasionally fails badly": -1 with probability q (q = 0.1, 0.2, 0.33),
               else +q / (1 - q), plus N(0, 0.1) noise: mean 0, most trials a small win, a rare large
               loss (issue 36); reported in its own section, since no test of the trials' mean holds
               its level here when a table is likely to hold no failure at all
  unbalanced-* settings of n, n/2, n, n/3, ... trials (at least 2), normal-het, exp-right and zero-right
Every rate is stated per direction: "supported" (a false claim that the prompt wins, the error
a reader of a positive verdict risks) and "contradicted" separately, each against the one-sided
2.5%; the column ``rule p<.02`` gives the false-"supported" rate of the same rule at p < 0.02
(a stricter variant) and the power section gives its price in power.
Adversarial designs (reported apart, each with the excess it forces on any test):
  exp-dominant setting 0: (Exp(1) - 1) x 10 with 5 trials, settings 1..k-1: N(0, 1) with n trials
               (one small skewed setting carries most of the variance; added by the issue-26 audit)
  chi2-right   chi-square(1) - 1 (skewness 2.8)
  three-point  -1 (25%), 0 (65%), +2.5 (10%): mean 0, skewness 1.6 like zero-right, but the
               positive side is one rare value
  In each, the null's positive side has a rare region ("the tail": setting 0's draws above its
  mean; chi-square(1) - 1 above 1; the value 2.5), and a table that holds at most j tail draws
  (event E_j) cannot show it. For ANY test phi, P_null(reject) >= P(E_j) x P(reject | E_j), and the
  tables conditioned on E_j form a law whose mean is negative (shown in SE units): a test that keeps
  the level alpha on the null must have power at most alpha / P(E_j) against that law ("cap"). The
  section prints P(E_j), the rule's and the t-test's rejection rate given E_j, the law's mean,
  and the cap, so the table shows whether the excess is forced: where the rule's conditional rate
  is above the cap, holding 5% would mean being blinder to that alternative than the cap allows
  (Bahadur and Savage 1956: no test bounds its level for every skewed distribution).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from headprompt.verify.experiments.rule import EXACT_FLIPS, FLIPS, GAMMA_MAX, HALL_ALLOWANCE, rule_pvalues

ALPHA = 0.05
KS = (1, 2, 4, 7)
NS = (2, 3, 5, 10, 20)
NULLS = ("normal", "normal-het", "t3", "exp-right", "exp-left", "zero-right", "zero-left", "binomial", "cancel")
RARE_FAILURE = ("rare-failure-0.1", "rare-failure-0.2", "rare-failure-0.33")
STRICT = 0.02      # the stricter variant's threshold
UNBALANCED = ("normal-het", "exp-right", "zero-right")
ADVERSARIAL = ("exp-dominant", "chi2-right", "three-point")   # reported apart (module docstring)


def sizes_of(k: int, n: int, unbalanced: bool) -> list[int]:
    if not unbalanced:
        return [n] * k
    return [n if s % 2 == 0 else max(2, n // (2 + s // 2)) for s in range(k)]


def draw(dist: str, sizes: list[int], reps: int, rng: np.random.Generator) -> np.ndarray:
    """``(reps, sum(sizes))`` null differences (settings concatenated)."""
    k = len(sizes)
    cols = []
    for s, n in enumerate(sizes):
        scale = 1.0 if dist == "normal" else 1.0 + 3.0 * s / max(k - 1, 1)
        shape = (reps, n)
        if dist in ("normal", "normal-het"):
            x = rng.normal(0, 1, shape)
        elif dist == "t3":
            x = rng.standard_t(3, shape)
        elif dist in ("exp-right", "exp-left"):
            x = rng.exponential(1, shape) - 1
            x = x if dist == "exp-right" else -x
        elif dist == "chi2-right":
            x = rng.chisquare(1, shape) - 1
        elif dist == "three-point":
            u = rng.random(shape)
            x = np.where(u < 0.25, -1.0, np.where(u < 0.9, 0.0, 2.5))
        elif dist in ("zero-right", "zero-left"):
            x = np.where(rng.random(shape) < 0.65, 0.0, rng.gamma(4.4, 1, shape) - 4.4)
            x = x if dist == "zero-right" else -x
        elif dist == "binomial":
            p = np.clip(0.55 + 0.4 * s / max(k - 1, 1) + rng.normal(0, 0.05, shape), 0.01, 0.99)
            x, scale = (rng.binomial(500, p) - rng.binomial(500, p)) / 500, 1.0
        elif dist == "exp-dominant":
            x, scale = (rng.exponential(1, shape) - 1 if s == 0 else rng.normal(0, 1, shape)), (10.0 if s == 0 else 1.0)
        elif dist.startswith("rare-failure-"):
            q = float(dist.rsplit("-", 1)[1])
            x = np.where(rng.random(shape) < q, -1.0, q / (1 - q)) + rng.normal(0, 0.1, shape)
            scale = 1.0
        elif dist == "cancel":
            mean = 0.0 if (k % 2 == 1 and s == k - 1) else (1.0 if s % 2 == 0 else -1.0)
            x, scale = rng.normal(mean, 1, shape), 1.0
        else:
            raise ValueError(dist)
        cols.append(x * scale)
    return np.concatenate(cols, axis=1)


def tail_mask(dist: str, sizes: list[int], d: np.ndarray) -> np.ndarray:
    """Which draws of an adversarial design's tables ``d`` (as ``draw`` returns them) fall in its
    rare positive region (module docstring): a boolean array of ``d``'s shape."""
    k = len(sizes)
    scale = np.concatenate([np.full(n, 1.0 + 3.0 * s / max(k - 1, 1)) for s, n in enumerate(sizes)])
    if dist == "three-point":
        return d > 0
    if dist == "chi2-right":
        return d > scale
    if dist == "exp-dominant":
        mask = np.zeros(d.shape, bool)
        mask[:, :sizes[0]] = d[:, :sizes[0]] > 0
        return mask
    raise ValueError(dist)


def t_pvalue(r: dict) -> np.ndarray:
    """The plain stratified t-test's two-sided p on ``rule_pvalues``' output (the sign-flip test
    where every setting is constant)."""
    from scipy import stats

    return np.where(r["zero_variance"], r["p_flip"],
                    2 * stats.t.sf(np.abs(r["t"]), np.nan_to_num(r["df"], nan=1.0)))


def rates(d: np.ndarray, sizes: list[int], chunk: int = 500) -> dict:
    """Rejection counts of the rule and of the plain t and sign-flip tests (per direction)."""
    out = {m: [0, 0] for m in ("rule", "t", "flip", "hall", "skew", "strict")}
    for i in range(0, len(d), chunk):
        r = rule_pvalues(d[i:i + chunk], sizes)
        pos = r["estimate"] > 0
        zero = r["zero_variance"]
        for m, p in (("rule", r["p"]), ("flip", r["p_flip"]), ("hall", np.where(zero, r["p_flip"], r["p_hall"])),
                     ("skew", np.where(zero, r["p_flip"], r["p_skew"])), ("t", t_pvalue(r))):
            rej = np.nan_to_num(p, nan=1.0) < ALPHA
            out[m][0] += int((rej & pos).sum())
            out[m][1] += int((rej & ~pos).sum())
        strict = np.nan_to_num(r["p"], nan=1.0) < STRICT
        out["strict"][0] += int((strict & pos).sum())
        out["strict"][1] += int((strict & ~pos).sum())
    return out


def fmt_rate(count: int, reps: int) -> str:
    r = count / reps
    return f"{100 * r:5.2f} ({100 * np.sqrt(max(r * (1 - r), 1 / reps) / reps):.2f})"


def machine() -> dict:
    info = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0],
            "numpy": np.__version__}
    try:
        import scipy
        info["scipy"] = scipy.__version__
        from threadpoolctl import threadpool_info
        info["threadpools"] = [{k: p.get(k) for k in ("internal_api", "version", "num_threads")}
                               for p in threadpool_info()]
    except ImportError:   # pragma: no cover
        pass
    try:
        info["sched_affinity"] = len(os.sched_getaffinity(0))
        info["loadavg"] = os.getloadavg()
    except (AttributeError, OSError):   # pragma: no cover
        pass
    return info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="tables per null design (default 2000)")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--adversarial-reps", type=int, default=6000,
                        help="tables per adversarial design (default 6000: they are conditioned on rare events)")
    parser.add_argument("--quick", action="store_true", help="a few designs, 400 tables each")
    parser.add_argument("--save", help="write PREFIX.txt (the table) and PREFIX.json (config, machine, rows)")
    args = parser.parse_args(argv)
    reps = 400 if args.quick else args.reps
    adv_reps = 1000 if args.quick else args.adversarial_reps
    ks, ns = ((1, 4), (3, 10)) if args.quick else (KS, NS)
    rng = np.random.default_rng(args.seed)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    t0 = time.time()
    lines, rows = [], []
    head = (f"{'design':<22}{'k':>3}{'n':>4}   {'rule: supported':>15} {'contradicted':>13} {'total':>13}"
            f"   {'t total':>13} {'flip total':>13} {'Hall total':>13} {'skew total':>13}"
            f"   {'rule p<.02: supp.':>17}")

    def emit(kind: str, dist: str, k: int, n: int, sizes: list[int], effect: float = 0.0) -> None:
        d = draw(dist, sizes, reps, rng)
        if effect:
            d = d + effect
        c = rates(d, sizes)
        row = {"kind": kind, "design": dist, "k": k, "n": n, "sizes": sizes, "effect": effect, "reps": reps,
               **{f"{m}_{w}": c[m][j] for m in c for j, w in enumerate(("supported", "contradicted"))}}
        rows.append(row)
        total = {m: c[m][0] + c[m][1] for m in c}
        line = (f"{dist + (f' +{effect:g}' if effect else ''):<22}{k:>3}{n:>4}   {fmt_rate(c['rule'][0], reps):>15} "
                f"{fmt_rate(c['rule'][1], reps):>13} {fmt_rate(total['rule'], reps):>13}   "
                f"{fmt_rate(total['t'], reps):>13} {fmt_rate(total['flip'], reps):>13} "
                f"{fmt_rate(total['hall'], reps):>13} {fmt_rate(total['skew'], reps):>13}"
                f"   {fmt_rate(c['strict'][0], reps):>17}")
        lines.append(line)
        print(line, flush=True)

    def section(title: str) -> None:
        lines.extend(["", title, head])
        print("\n" + title + "\n" + head, flush=True)

    section("NULL designs (mean 0): rejection rate % (Monte Carlo SE) at alpha = 0.05, two-sided")
    for dist in (NULLS if not args.quick else ("normal-het", "exp-right", "zero-right")):
        for k in ks:
            for n in ns:
                emit("null", dist, k, n, [n] * k)
    section("NULL designs, the prompt occasionally fails badly (rare-failure-q; module docstring): per direction")
    for dist in (RARE_FAILURE if not args.quick else ("rare-failure-0.2",)):
        for k in ks:
            for n in ns:
                emit("null-rare-failure", dist, k, n, [n] * k)
    section("NULL designs, unbalanced settings (sizes n, n/2, n, n/3, ...; at least 2)")
    for dist in (UNBALANCED if not args.quick else ("exp-right",)):
        for k in [k for k in ks if k > 1]:
            for n in ns:
                emit("null-unbalanced", dist, k, n, sizes_of(k, n, True))
    adv_head = (f"{'design':<22}{'k':>3}{'n':>4}   {'rule total':>13} {'t total':>13}   "
                + "   ".join(f"{'P(E' + str(j) + ')':>7} {'rule|E':>6} {'t|E':>6} {'mean/sd':>7} {'oracle':>6} {'cap':>6}"
                             for j in (0, 1)))

    def emit_adversarial(dist: str, k: int, n: int, sizes: list[int]) -> None:
        from scipy import stats

        d = draw(dist, sizes, adv_reps, rng)
        est, p_rule, p_t = [], [], []
        for i in range(0, adv_reps, 500):
            r = rule_pvalues(d[i:i + 500], sizes)
            est.append(r["estimate"])
            p_rule.append(np.nan_to_num(r["p"], nan=1.0))
            p_t.append(np.nan_to_num(t_pvalue(r), nan=1.0))
        est, rej, rej_t = np.concatenate(est), np.concatenate(p_rule) < ALPHA, np.concatenate(p_t) < ALPHA
        tails = tail_mask(dist, sizes, d).sum(1)
        row = {"kind": "adversarial", "design": dist, "k": k, "n": n, "sizes": sizes, "reps": adv_reps,
               "rule_supported": int((rej & (est > 0)).sum()), "rule_contradicted": int((rej & ~(est > 0)).sum()),
               "t_total": int(rej_t.sum()), "events": [],
               "strict_supported": int(((np.concatenate(p_rule) < STRICT) & (est > 0)).sum()),
               "strict_total": int((np.concatenate(p_rule) < STRICT).sum())}
        cells = []
        for j in (0, 1):
            e = tails <= j
            pe = float(e.mean())
            ev = {"at_most_tail_draws": j, "tables": int(e.sum()), "p_event": pe, "cap": min(1.0, ALPHA / pe) if pe else None}
            if e.sum() >= 20:
                z = float(est[e].mean() / est[e].std()) if est[e].std() > 0 else float("-inf")
                oracle = float(stats.norm.cdf(abs(z) - 1.959964) + stats.norm.cdf(-abs(z) - 1.959964))
                ev.update(rule_given=float(rej[e].mean()), t_given=float(rej_t[e].mean()), mean_over_sd=z, oracle=oracle)
                cells.append(f"{100 * pe:7.2f} {100 * ev['rule_given']:6.1f} {100 * ev['t_given']:6.1f} {z:7.2f} "
                             f"{100 * oracle:6.1f} {100 * ev['cap']:6.1f}")
            else:
                cells.append(f"{100 * pe:7.2f} {'(fewer than 20 tables)':>42}")
            row["events"].append(ev)
        rows.append(row)
        total = row["rule_supported"] + row["rule_contradicted"]
        line = (f"{dist:<22}{k:>3}{n:>4}   {fmt_rate(total, adv_reps):>13} {fmt_rate(row['t_total'], adv_reps):>13}   "
                + "   ".join(cells))
        lines.append(line)
        print(line, flush=True)

    title = ("ADVERSARIAL designs (reported apart; module docstring): rate % (MC SE); E_j = at most j draws in the "
             "rare positive region; rule|E, t|E: rejection % given E_j; mean/sd: the estimate's mean over its sd given "
             "E_j; oracle: a known-variance z-test's power at that mean/sd; cap: alpha / P(E_j), the most power "
             "against the E_j law a test keeping 5% on this null can have")
    lines.extend(["", title, adv_head])
    print("\n" + title + "\n" + adv_head, flush=True)
    for dist in (ADVERSARIAL if not args.quick else ("exp-dominant", "three-point")):
        for k in ks:
            if dist == "exp-dominant" and k == 1:
                continue
            for n in ns:
                emit_adversarial(dist, k, n, [5] + [n] * (k - 1) if dist == "exp-dominant" else [n] * k)
    section("POWER: effect in units of the noise scale (rate of 'supported')")
    for dist in ("normal", "exp-right"):
        for k, n in ((1, 10), (4, 5), (4, 10), (7, 5)) if not args.quick else ((4, 10),):
            for effect in (0.5, 1.0):
                emit("power", dist, k, n, [n] * k, effect)
    seconds = time.time() - t0
    nulls = [r for r in rows if r["kind"] in ("null", "null-unbalanced")]
    worst = max(nulls, key=lambda r: r["rule_supported"] + r["rule_contradicted"])
    wr = (worst["rule_supported"] + worst["rule_contradicted"]) / reps
    se = np.sqrt(wr * (1 - wr) / reps)
    verdict = "within" if wr <= ALPHA + 2 * se else "ABOVE"
    summary = (f"worst null design: {worst['design']} k={worst['k']} n={worst['n']} sizes={worst['sizes']}: "
               f"{100 * wr:.2f}% (MC SE {100 * se:.2f}%), {verdict} the 5% level + 2 SE; "
               f"{len(nulls)} null designs x {reps} tables; {seconds:.0f} s")
    for kinds, label in ((("null", "null-unbalanced"), "null designs"), (("null-rare-failure",), "rare-failure designs"),
                         (("power",), None)):
        group = [r for r in rows if r["kind"] in kinds]
        if not group or label is None:
            continue
        ws = max(group, key=lambda r: r["rule_supported"])
        wc = max(group, key=lambda r: r["rule_contradicted"])
        summary += (f"\none-sided, {label}: worst false 'supported' {100 * ws['rule_supported'] / ws['reps']:.2f}% "
                    f"({ws['design']} k={ws['k']} n={ws['n']}; nominal 2.5%; at p < 0.02: "
                    f"{100 * ws['strict_supported'] / ws['reps']:.2f}%), worst false 'contradicted' "
                    f"{100 * wc['rule_contradicted'] / wc['reps']:.2f}% ({wc['design']} k={wc['k']} n={wc['n']})")
    price = [r for r in rows if r["kind"] == "power"]
    if price:
        summary += "\nprice of p < 0.02 in power (rate of 'supported'): " + "; ".join(
            f"{r['design']} k={r['k']} n={r['n']} +{r['effect']:g}: {100 * r['rule_supported'] / r['reps']:.0f}% -> "
            f"{100 * r['strict_supported'] / r['reps']:.0f}%" for r in price)
    for name in sorted({r["design"] for r in rows if r["kind"] == "adversarial"}, key=ADVERSARIAL.index):
        rows_s = [r for r in rows if r["kind"] == "adversarial" and r["design"] == name]
        ws = max(rows_s, key=lambda r: r["rule_supported"] + r["rule_contradicted"])
        rs = (ws["rule_supported"] + ws["rule_contradicted"]) / adv_reps
        summary += (f"\nadversarial {name}: worst k={ws['k']} n={ws['n']} sizes={ws['sizes']}: {100 * rs:.2f}% "
                    f"(MC SE {100 * np.sqrt(rs * (1 - rs) / adv_reps):.2f}%; false 'supported' "
                    f"{100 * ws['rule_supported'] / adv_reps:.2f}%, 'contradicted' "
                    f"{100 * ws['rule_contradicted'] / adv_reps:.2f}%; at p < 0.02 in total "
                    f"{100 * ws['strict_total'] / adv_reps:.2f}%)")
        for ev in ws["events"]:
            if "rule_given" in ev:
                summary += (f"\n  tables with at most {ev['at_most_tail_draws']} tail draws (P = {100 * ev['p_event']:.1f}%, "
                            f"mean {ev['mean_over_sd']:+.2f} sd): the rule rejects {100 * ev['rule_given']:.0f}% of them "
                            f"({100 * ev['p_event'] * ev['rule_given']:.2f} points of the rate), a known-variance z-test "
                            f"{100 * ev['oracle']:.0f}%; a test keeping 5% on this null may reject at most "
                            f"{100 * ev['cap']:.0f}%")
    lines.extend(["", summary])
    print("\n" + summary)
    if args.save:
        prefix = Path(args.save)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        config = {"reps": reps, "adversarial_reps": adv_reps, "seed": args.seed, "alpha": ALPHA, "ks": list(ks), "ns": list(ns), "quick": args.quick,
                  "rule": {"gamma_max": GAMMA_MAX, "hall_allowance": HALL_ALLOWANCE, "flips": FLIPS,
                           "exact_flips": EXACT_FLIPS}, "commit": commit,
                  "command": "python -m benchmarks.calibration " + " ".join(argv if argv is not None else sys.argv[1:])}
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        header = [f"# calibration of the verdict rule, {stamp}, {seconds:.0f} s", f"# config: {json.dumps(config)}",
                  f"# machine: {json.dumps(machine())}"]
        prefix.with_suffix(".txt").write_text("\n".join(header + lines) + "\n")
        record = {"time": stamp, "seconds": round(seconds, 1), "config": config, "machine": machine(),
                  "summary": summary, "rows": rows}
        prefix.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
