"""How good are the work estimates that pick the automatic mode (run by hand)?

For a few vanilla and memory sizes, runs ``verify theorem`` (through the Python API) in exact
and certified mode and prints the measured seconds beside the estimate ``check_work`` makes,
and which mode the automatic rule picks. The goal (issue 19): estimates within 2x of the
measured time, and the automatic mode picking the faster proof. Exact runs whose estimate is
above ``--max-exact`` seconds are skipped (their estimate is printed).

    python benchmarks/estimates.py [--max-exact 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from types import SimpleNamespace

from headprompt.verify.api import run_theorem
from headprompt.verify.runtime.cost import check_work, work_estimates
from headprompt.verify.reports.requests import TheoremRequest

CASES = [("3.6", {"hidden": 25}), ("3.6", {"hidden": 50}), ("3.6", {"hidden": 100}), ("3.6", {"hidden": 200}),
         ("3.6", {"hidden": 25, "length": 32}), ("3.6", {"hidden": 1000, "vocab": 100}),
         ("4.3", {}), ("4.6", {}), ("C.6", {})]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-exact", type=float, default=30.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for tid, opts in CASES:
        model = run_theorem(TheoremRequest.from_options(tid, samples=1, length=1, progress=False, **{
            k: v for k, v in opts.items() if k != "length"})).details["model"]
        length = opts.get("length") or 8
        exact, certified = work_estimates(model, 10_000 + 200 + model.num_tokens ** 2, length, exhaustive=False)
        est = {"exact": exact, "certified": certified}
        auto = check_work(SimpleNamespace(mode=None, length=opts.get("length"), samples=10_000, exhaustive=False), model)[0]
        row = {"theorem": tid, **opts, "auto": auto}
        for mode in ("certified", "exact"):
            row[f"{mode}_estimate"] = round(est[mode], 2)
            if mode == "exact" and est[mode] > args.max_exact:
                row["exact_measured"] = None
                continue
            start = time.perf_counter()
            run_theorem(TheoremRequest.from_options(tid, mode=mode, progress=False, **opts))
            row[f"{mode}_measured"] = round(time.perf_counter() - start, 2)
            row[f"{mode}_ratio"] = round(row[f"{mode}_estimate"] / row[f"{mode}_measured"], 2)
        faster = "certified" if row.get("exact_measured") is None or row["certified_measured"] < row["exact_measured"] else "exact"
        row["faster_measured"] = faster
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    meta = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M")}
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
    else:
        print(f"{'case':<34} {'auto':<10} {'cert est/meas':>16} {'exact est/meas':>18}")
        for r in rows:
            case = r["theorem"] + " " + " ".join(f"--{k} {v}" for k, v in r.items()
                                                 if k in ("hidden", "vocab", "length"))
            ex = (f"{r['exact_estimate']:.1f}/{r['exact_measured']:.1f}" if r.get("exact_measured") is not None
                  else f"{r['exact_estimate']:.0f}/skipped")
            print(f"{case:<34} {r['auto']:<10} {r['certified_estimate']:>7.1f}/{r['certified_measured']:<7.1f} {ex:>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
