"""``verify theorem 3.6`` on block-sparse HMMs of language-model size: time, CPU and peak memory.

Runs the command line (a fresh process per size, as a user would) under ``/usr/bin/time -v``
and records wall-clock seconds, CPU seconds (user + system), peak resident memory, the cost
estimate the run printed before any work, the verdict and the counts; then the scaling exponent
of wall and CPU time against ``|H|`` (least squares on logs) and the machine: CPU model, cores,
load average before each run, and the BLAS kernel threadpoolctl reports.

    python benchmarks/scale.py [--sizes 1024:1000,4096:1000,16384:10000] [--out benchmarks/results/scale]

The machine this project runs on is shared: the load average is recorded beside each run, and
CPU seconds are the figure that load changes least.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_SIZES = "1024:1000,2048:2000,4096:1000,8192:5000,16384:10000"


def machine() -> dict:
    import numpy  # noqa: F401  (loads the BLAS that the runs use, so threadpoolctl can see it)
    from threadpoolctl import threadpool_info

    cpu = ""
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
    except OSError:
        pass
    blas = [{k: p.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
            for p in threadpool_info() if p.get("user_api") == "blas"]
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "blas": blas,
            "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")}}


def timed_command(cmd: list[str]) -> tuple[subprocess.CompletedProcess, dict]:
    """Run ``cmd`` under ``/usr/bin/time -v``: the finished process and ``{"wall_s", "cpu_s"
    (user + system), "peak_mb" (maximum resident set)}``."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as timing:
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", timing.name, *cmd], capture_output=True, text=True)
        text = timing.read()

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: (.+)", text)
        return m.group(1).strip() if m else "nan"

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(p) for p in wall.split(":")] if wall != "nan" else [math.nan]
    rss = field("Maximum resident set size (kbytes)")
    return proc, {"wall_s": round(sum(p * 60 ** i for i, p in enumerate(reversed(parts))), 2),
                  "cpu_s": round(float(field("User time (seconds)")) + float(field("System time (seconds)")), 2),
                  "peak_mb": round(int(rss) / 1024, 1) if rss != "nan" else math.nan}


def run_one(hidden: int, vocab: int, extra: list[str]) -> dict:
    load = os.getloadavg()[0]
    proc, used = timed_command([sys.executable, "-m", "headprompt.verify", "theorem", "3.6",
                                "--hidden", str(hidden), "--vocab", str(vocab), "--json", *extra])
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    seqs = report.get("sequences") or {}
    return {"hidden": hidden, "vocab": vocab, "exit": proc.returncode, "load_before": round(load, 2),
            "wall_s": used["wall_s"], "cpu_s": used["cpu_s"], "peak_rss_mb": used["peak_mb"],
            "estimate_s": (report.get("cost") or {}).get("estimated_seconds"),
            "estimate_mb": round((report.get("cost") or {}).get("estimated_bytes", 0) / 2 ** 20, 1),
            "verdict": report.get("verdict"), "mode": report.get("mode"), "checked": seqs.get("checked"),
            "agree": seqs.get("agree"), "decided_by": seqs.get("decided_by"), "labels": report.get("labels"),
            "stderr_tail": proc.stderr.strip().splitlines()[-1:] if proc.returncode else []}


def exponent(rows: list[dict], key: str) -> float | None:
    pts = [(math.log(r["hidden"]), math.log(r[key])) for r in rows if r.get(key) and r["exit"] == 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="hidden:vocab pairs, comma separated")
    ap.add_argument("--out", default="benchmarks/results/scale")
    ap.add_argument("--extra", default="", help="more verify options, e.g. '--samples 1000'")
    ap.add_argument("--render", action="store_true", help="only rewrite table.md from the saved results.json")
    args = ap.parse_args()
    out = Path(args.out)
    if args.render:
        result = json.loads((out / "results.json").read_text())
        if not result["machine"].get("blas"):          # a first version read the BLAS before loading numpy
            result["machine"]["blas"] = machine()["blas"]
            result["machine"]["blas_read_at_render"] = True
        rows = result["runs"]
    else:
        rows = []
        for pair in args.sizes.split(","):
            h, v = (int(x) for x in pair.split(":"))
            row = run_one(h, v, args.extra.split())
            print(json.dumps(row), flush=True)
            rows.append(row)
        result = {"command": "verify theorem 3.6 --hidden H --vocab K --json " + args.extra, "machine": machine(),
                  "runs": rows, "exponent_wall_vs_hidden": exponent(rows, "wall_s"),
                  "exponent_cpu_vs_hidden": exponent(rows, "cpu_s")}
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["| |H| | |X| | exit | verdict | wall s | CPU s | peak MB | estimate s | estimate MB | load | checked/agree |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['hidden']} | {r['vocab']} | {r['exit']} | {r['verdict']} | {r['wall_s']} | {r['cpu_s']} | "
                     f"{r['peak_rss_mb']} | {r['estimate_s']} | {r['estimate_mb']} | {r['load_before']} | "
                     f"{r['checked']}/{r['agree']} |")
    blas = "; ".join(f"{b['internal_api']} {b['version']} {b['architecture']} ({b['num_threads']} threads)"
                     for b in result["machine"]["blas"])
    lines += ["", f"scaling exponent vs |H|: wall {result['exponent_wall_vs_hidden']}, CPU "
              f"{result['exponent_cpu_vs_hidden']} (|X| varies with |H| too; see the sizes)",
              f"machine: {result['machine']['cpu']}, {result['machine']['cores']} cores; BLAS: {blas}",
              "the machine was shared with other work during the runs: 'load' is the 1-minute load average "
              "before each run (2 cores), so wall seconds are inflated and CPU seconds are the steadier figure; "
              "exit 0 with verdict verified is a certified verdict (every sequence decided by the a priori "
              "bound or exactly)"]
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
