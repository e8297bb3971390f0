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
  unbalanced-* settings of n, n/2, n, n/3, ... trials (at least 2), normal-het, exp-right and zero-right
  exp-dominant setting 0: (Exp(1) - 1) x 10 with 5 trials, settings 1..k-1: N(0, 1) with n trials
               (one small skewed setting carries most of the variance; added by the issue-26 audit:
               in 10% of tables its 5 values all fall below its mean, and the sample cannot show it)
Stress designs (outside the stated scope, reported apart):
  chi2-right   chi-square(1) - 1 (skewness 2.8)
  three-point  -1 (25%), 0 (65%), +2.5 (10%): mean 0, skewness 1.6 like zero-right, but the
               positive side is one rare value: 12% of samples of 20 hold no positive
               difference at all, and with 6 or more -1s every test of the sample says
               "contradicted" (Bahadur and Savage 1956: no test bounds its level for every
               distribution with a given skewness)
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
UNBALANCED = ("normal-het", "exp-right", "zero-right")
STRESS = ("chi2-right", "three-point")     # outside the stated scope, reported apart (module docstring)


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
        elif dist == "cancel":
            mean = 0.0 if (k % 2 == 1 and s == k - 1) else (1.0 if s % 2 == 0 else -1.0)
            x, scale = rng.normal(mean, 1, shape), 1.0
        else:
            raise ValueError(dist)
        cols.append(x * scale)
    return np.concatenate(cols, axis=1)


def rates(d: np.ndarray, sizes: list[int], chunk: int = 500) -> dict:
    """Rejection counts of the rule and of the plain t and sign-flip tests (per direction)."""
    from scipy import stats

    out = {m: [0, 0] for m in ("rule", "t", "flip", "hall", "skew")}
    for i in range(0, len(d), chunk):
        r = rule_pvalues(d[i:i + chunk], sizes)
        pos = r["estimate"] > 0
        zero = r["zero_variance"]
        for m, p in (("rule", r["p"]), ("flip", r["p_flip"]), ("hall", np.where(zero, r["p_flip"], r["p_hall"])),
                     ("skew", np.where(zero, r["p_flip"], r["p_skew"])),
                     ("t", np.where(r["zero_variance"], r["p_flip"],
                                    2 * stats.t.sf(np.abs(r["t"]), np.nan_to_num(r["df"], nan=1.0))))):
            rej = np.nan_to_num(p, nan=1.0) < ALPHA
            out[m][0] += int((rej & pos).sum())
            out[m][1] += int((rej & ~pos).sum())
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
    parser.add_argument("--quick", action="store_true", help="a few designs, 400 tables each")
    parser.add_argument("--save", help="write PREFIX.txt (the table) and PREFIX.json (config, machine, rows)")
    args = parser.parse_args(argv)
    reps = 400 if args.quick else args.reps
    ks, ns = ((1, 4), (3, 10)) if args.quick else (KS, NS)
    rng = np.random.default_rng(args.seed)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    t0 = time.time()
    lines, rows = [], []
    head = (f"{'design':<22}{'k':>3}{'n':>4}   {'rule: supported':>15} {'contradicted':>13} {'total':>13}"
            f"   {'t total':>13} {'flip total':>13} {'Hall total':>13} {'skew total':>13}")

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
                f"{fmt_rate(total['hall'], reps):>13} {fmt_rate(total['skew'], reps):>13}")
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
    section("NULL designs, unbalanced settings (sizes n, n/2, n, n/3, ...; at least 2)")
    for dist in (UNBALANCED if not args.quick else ("exp-right",)):
        for k in [k for k in ks if k > 1]:
            for n in ns:
                emit("null-unbalanced", dist, k, n, sizes_of(k, n, True))
    section("NULL designs, one dominant skewed setting: setting 0 (Exp(1) - 1) x 10 with 5 trials, the "
            "others N(0, 1) with n trials")
    for k in ([k for k in ks if k > 1] if not args.quick else (4,)):
        for n in ns if not args.quick else (10,):
            emit("null-dominant", "exp-dominant", k, n, [5] + [n] * (k - 1))
    section("STRESS (outside the stated scope: chi-square(1) - 1, skewness 2.8; three-point -1/0/+2.5, "
            "skewness 1.6, positive values 10%)")
    for dist in STRESS:
        for k in ks:
            for n in ns:
                emit("stress", dist, k, n, [n] * k)
    section("POWER: effect in units of the noise scale (rate of 'supported')")
    for dist in ("normal", "exp-right"):
        for k, n in ((1, 10), (4, 5), (4, 10), (7, 5)) if not args.quick else ((4, 10),):
            for effect in (0.5, 1.0):
                emit("power", dist, k, n, [n] * k, effect)
    seconds = time.time() - t0
    nulls = [r for r in rows if r["kind"].startswith("null")]
    worst = max(nulls, key=lambda r: r["rule_supported"] + r["rule_contradicted"])
    wr = (worst["rule_supported"] + worst["rule_contradicted"]) / reps
    se = np.sqrt(wr * (1 - wr) / reps)
    verdict = "within" if wr <= ALPHA + 2 * se else "ABOVE"
    summary = (f"worst null design: {worst['design']} k={worst['k']} n={worst['n']} sizes={worst['sizes']}: "
               f"{100 * wr:.2f}% (MC SE {100 * se:.2f}%), {verdict} the 5% level + 2 SE; "
               f"{len(nulls)} null designs x {reps} tables; {seconds:.0f} s")
    for name in STRESS:
        rows_s = [r for r in rows if r["kind"] == "stress" and r["design"] == name]
        ws = max(rows_s, key=lambda r: r["rule_supported"] + r["rule_contradicted"])
        rs = (ws["rule_supported"] + ws["rule_contradicted"]) / reps
        summary += (f"\nworst stress design {name}: k={ws['k']} n={ws['n']}: {100 * rs:.2f}% "
                    f"(MC SE {100 * np.sqrt(rs * (1 - rs) / reps):.2f}%)")
    lines.extend(["", summary])
    print("\n" + summary)
    if args.save:
        prefix = Path(args.save)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        config = {"reps": reps, "seed": args.seed, "alpha": ALPHA, "ks": list(ks), "ns": list(ns), "quick": args.quick,
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
