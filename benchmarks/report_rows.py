"""Benchmark: ``TheoremReport.rows()`` on the README's examples, rows per second and peak memory.

Run by hand:  python benchmarks/report_rows.py [--exact]

For each case: the check's time, the first ``rows()`` call (floats with certified bounds),
the second call (cached), and with ``--exact`` ``rows(exact=True)``; rows per second and the
process's peak resident memory after each step (``resource.getrusage``, so it only grows).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import headprompt

CASES = [
    ("3.6", dict(hidden=25)),
    ("3.3", dict(hidden=8, vocab=10)),
    ("4.3", dict(memory=3, cells=2)),
    ("4.6", dict()),
]


def _peak_mib() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024 if sys.platform != "darwin" else kib / 2 ** 20


def _timed(call):
    start = time.perf_counter()
    out = call()
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exact", action="store_true", help="also time rows(exact=True)")
    args = parser.parse_args(argv)
    print(f"{'case':<28} {'check s':>8} {'rows':>7} {'rows() s':>9} {'rows/s':>9} {'again s':>8} "
          f"{'exact s':>8} {'peak MiB':>9}")
    for theorem, options in CASES:
        report, t_check = _timed(lambda: headprompt.check(None, theorem, **options))
        rows, t_rows = _timed(report.rows)
        _, t_again = _timed(report.rows)
        t_exact = ""
        if args.exact:
            _, t = _timed(lambda: report.rows(exact=True))
            t_exact = f"{t:.2f}"
        name = f"{theorem} " + " ".join(f"{k}={v}" for k, v in options.items())
        rate = len(rows) / t_rows if t_rows > 0 and rows else 0
        print(f"{name:<28} {t_check:>8.2f} {len(rows):>7} {t_rows:>9.3f} {rate:>9.0f} {t_again:>8.3f} "
              f"{t_exact:>8} {_peak_mib():>9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
