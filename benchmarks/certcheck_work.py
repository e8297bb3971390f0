"""The checker's worst files per kind, timed (issue 37 item 4).

    python benchmarks/certcheck_work.py [--out benchmarks/results/certcheck/work.md] [--quick]

Builds, per kind, certificates of growing size (the slow files of issue 37 and their scaled-up
versions), runs the checker on each in a fresh interpreter under a timeout, and prints a table:
kind, size, bytes, the work the checker metered (``LIMITS["metered_work"]`` units, see
``headprompt/certcheck/work.py``), seconds (reading included) and exit code, with the machine's
description. Every file must be decided (0, 1 or 2) in under 10 s; the refusal threshold
``LIMITS["metered_work"]`` is set from this table.

Kinds:

- ``no-linear-head, |X| tokens``: a Theorem 3.3 no-linear-head certificate over a 2-state HMM
  with 4,096 tokens, every row combined (the per-row features over every token); y and z are
  arbitrary, so the file is rejected after all the work (the worst case for time).
- ``3.3 construction``: a true Theorem 3.3 certificate (3.1 holds with the Moore-Penrose left
  inverse, the witness the paper's construction) over 4,096 tokens: the construction's
  recognition (which once built a 4,096 x 4,096 matrix).
- ``4.3 attention``: a Theorem 4.3 ``refuted`` certificate whose every row lies in ``R``
  (``H*`` the whole cell), with a random attention head of ``|M| |H|`` value rows: the
  ``Theta_V`` products at every position. Printed values are filled in by the checker's own
  recomputation (this builds a timing file, not a test of correctness); where that recomputation
  is itself stopped by the meter, the rows after it keep placeholder values, so the file is
  rejected at the first of them (exit 1) after the same work.
- ``4.3 ranks``: a Theorem 4.3 ``assumptions-fail`` certificate claiming Assumption 4.2 holds
  with ``H*`` the whole cell: exact ranks of ``|M| |H|`` emission columns with long entries.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAD = {"format": "headprompt-certificate", "version": 2}
RUNNER = """
import json, sys, time
start = time.perf_counter()
from headprompt.certcheck import check_file, Rejected, Unreadable
from headprompt.certcheck.work import METER
try:
    check_file(sys.argv[1]); code, why = 0, ""
except Rejected as exc:
    code, why = 1, str(exc)
except Unreadable as exc:
    code, why = 2, str(exc)
print(json.dumps({"code": code, "seconds": time.perf_counter() - start, "metered": METER.spent, "why": why[:160]}))
"""


def _dist(rng, k, digits=1):
    """A random probability vector of ``k`` entries with numerators of about ``digits`` digits."""
    raw = [rng.randrange(10 ** (digits - 1), 10 ** digits) for _ in range(k)]
    total = sum(raw)
    return [Fraction(v, total) for v in raw]


def _s(values):
    return [str(v) for v in values]


def nlh_tokens(rows: int, tokens: int = 4096, length: int = 3, seed: int = 0) -> dict:
    rng = random.Random(seed)
    W = [_dist(rng, tokens) for _ in range(2)]                     # columns
    return {**HEAD, "theorem": "3.3", "claim": "no-linear-head",
            "instance": {"kind": "hmm", "A": [["1/3", "3/4"], ["2/3", "1/4"]],
                         "W": [[str(W[h][x]) for h in range(2)] for x in range(tokens)],
                         "pi0": ["1/2", "1/2"], "mu": ["1", "-1"]},
            "sequences": [[rng.randrange(tokens) for _ in range(length)] for _ in range(rows)],
            "certificate": {"y": ["1"] * rows, "z": ["0"] * (rows // 2) + ["2"] * (rows - rows // 2)}}


def nlh_labelled(rows: int, tokens: int = 4096, length: int = 3, seed: int = 0) -> dict:
    """:func:`nlh_tokens` with y on the label-0 rows and z on the label-1 rows (labels by the
    checker's own recomputation: a timing file), so the Motzkin combination over every row is
    computed before the file is rejected (the sum is not zero)."""
    from headprompt.certcheck.vanilla_hmm import Vanilla

    cert = nlh_tokens(rows, tokens, length, seed)
    inst = Vanilla(cert["instance"])
    seqs = [tuple(s) for s in cert["sequences"]]
    labels = [0] * rows
    for k, beta in inst.betas(seqs):
        nums, _ = inst.task(beta)
        labels[k] = int(nums[0] >= 0)
    cert["certificate"] = {"y": ["1" if v == 0 else "0" for v in labels], "z": ["0" if v == 0 else "1" for v in labels]}
    return cert


def _vanilla_rows(A, W, pi0, mu, pre, b, seqs):
    """Printed rows of a binary vanilla certificate, by exact backward recursion (Fractions)."""
    n = len(pi0)
    out = []
    for x in seqs:
        beta = [Fraction(1)] * n
        for z in reversed(x):
            wb = [W[z][g] * beta[g] for g in range(n)]
            beta = [sum(A[g][h] * wb[g] for g in range(n)) for h in range(n)]
        post = [p * v for p, v in zip(pi0, beta)]
        task = sum(m * p for m, p in zip(mu, post)) / sum(post)
        tau = [p * v for p, v in zip(pre, beta)]
        head = sum(b[t] * sum(W[t][h] * tau[h] for h in range(n)) for t in range(len(W))) / sum(tau)
        out.append({"x": list(x), "task_margin": str(task), "head_margin": str(head), "F_star": int(task >= 0),
                    "F": int(head >= 0)})
    return out


def construction_33(tokens: int = 4096, rows: int = 20, seed: int = 1) -> dict:
    rng = random.Random(seed)
    cols = [_dist(rng, tokens) for _ in range(2)]
    W = [[cols[h][x] for h in range(2)] for x in range(tokens)]
    A = [[Fraction(1, 3), Fraction(3, 4)], [Fraction(2, 3), Fraction(1, 4)]]
    pi0, mu = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1), Fraction(-1)]
    G = [[sum(W[x][i] * W[x][j] for x in range(tokens)) for j in range(2)] for i in range(2)]
    det = G[0][0] * G[1][1] - G[0][1] * G[1][0]
    Ginv = [[G[1][1] / det, -G[0][1] / det], [-G[1][0] / det, G[0][0] / det]]
    L = [[sum(Ginv[i][j] * W[x][j] for j in range(2)) for x in range(tokens)] for i in range(2)]
    p1 = [sum(A[g][h] * pi0[h] for h in range(2)) for g in range(2)]
    b = [sum(mu[h] * pi0[h] / p1[h] * L[h][x] for h in range(2)) for x in range(tokens)]
    seqs = [[rng.randrange(tokens) for _ in range(2)] for _ in range(rows)]
    return {**HEAD, "theorem": "3.3", "claim": "theorem",
            "instance": {"kind": "hmm", "A": [_s(r) for r in A], "W": [_s(r) for r in W], "pi0": _s(pi0),
                         "mu": _s(mu)},
            "verdict": "verified",
            "assumptions": {"3.1": {"holds": True, "left_inverse": [_s(r) for r in L]}},
            "witness": {"b": _s(b), "u": None, "source": "construction"}, "covers": "listed",
            "sequences": _vanilla_rows(A, W, pi0, mu, p1, b, seqs)}


def _memory_instance(rng, M, S, X, digits=1):
    A = [_dist(rng, S) for _ in range(S)]                          # columns
    Wc = {(v, h): _dist(rng, X, digits) for v in range(M) for h in range(S)}
    return {"kind": "memory-hmm", "cells": 1, "memory_values": M, "syntax_states": S, "target_cell": 0,
            "A": [[str(A[h][g]) for h in range(S)] for g in range(S)],
            "W": [[[str(Wc[v, h][x]) for h in range(S)] for v in range(M)] for x in range(X)],
            "pi0": _s(_dist(rng, S)), "pM": _s(_dist(rng, M)), "mu": ["1", "-1"] + ["0"] * (M - 2)}


def attention_43(M: int, S: int, X: int, rows: int, length: int = 3, seed: int = 2) -> dict:
    rng = random.Random(seed)
    inst = _memory_instance(rng, M, S, X)
    small = lambda k: [str(Fraction(rng.randrange(-9, 10), rng.randrange(1, 10))) for _ in range(k)]  # noqa: E731
    n = S
    seqs = [[rng.randrange(X) for _ in range(length)] for _ in range(rows)]
    cert = {**HEAD, "theorem": "4.3", "claim": "theorem", "instance": inst, "verdict": "refuted", "assumptions": {},
            "witness": {"q": ["0"] * (n + 1), "Theta_K": [small(X) for _ in range(n + 1)], "beta": [small(n + 1)],
                        "Theta_V": [small(X) for _ in range(M * n)], "b": small(M * n), "u": None,
                        "H_star": list(range(n)), "source": "given"},
            "covers": "listed",
            "sequences": [{"x": x, "in_R": True, "Z": list(range(len(x))), "task_margin": "0", "head_output": "0",
                           "attended": list(range(len(x))), "F_star": 0, "F": 0} for x in seqs]}
    return _fill_memory(cert)


def _fill_memory(cert: dict) -> dict:
    """Print the checker's own recomputed values into the rows (a timing file, not a proof)."""
    from headprompt.certcheck import theorem_memory as tm
    from headprompt.certcheck.memory_hmm import Memory

    def same_value(printed, num, den, where, what):
        k, key = int(where.split("[")[1].split("]")[0]), where.rsplit(".", 1)[1]
        cert["sequences"][k][key] = "0" if den == 0 else str(Fraction(num, den))

    def labels_printed(row, star, got, where):
        row["F_star"], row["F"] = star, got

    saved = tm.same_value, tm.labels_printed
    tm.same_value, tm.labels_printed = same_value, labels_printed
    try:
        tm.memory_theorem(cert, "4.3", Memory(cert["instance"]))
    except Exception:                      # refused or rejected part-way: the rest stays as printed
        pass
    finally:
        tm.same_value, tm.labels_printed = saved
    return cert


def ranks_43(M: int, S: int, X: int, digits: int, seed: int = 3) -> dict:
    rng = random.Random(seed)
    inst = _memory_instance(rng, M, S, X, digits)
    return {**HEAD, "theorem": "4.3", "claim": "theorem", "instance": inst, "verdict": "assumptions-fail",
            "assumptions": {"4.2": {"holds": True, "H_star": list(range(S))}}}


CASES = [
    ("no-linear-head, 4,096 tokens", "300 rows", lambda: nlh_tokens(300)),
    ("no-linear-head, 4,096 tokens", "3,000 rows", lambda: nlh_tokens(3000)),
    ("no-linear-head, 4,096 tokens", "20,000 rows", lambda: nlh_tokens(20000)),
    ("no-linear-head, 4,096 tokens, y and z on the labels", "3,000 rows", lambda: nlh_labelled(3000)),
    ("no-linear-head, 4,096 tokens, y and z on the labels", "20,000 rows", lambda: nlh_labelled(20000)),
    ("3.3 construction", "X = 4,096, 20 rows", lambda: construction_33()),
    ("4.3 attention", "M = 2, H = 10, X = 32, 50 rows", lambda: attention_43(2, 10, 32, 50)),
    ("4.3 attention", "M = 5, H = 20, X = 128, 50 rows", lambda: attention_43(5, 20, 128, 50)),
    ("4.3 attention", "M = 5, H = 50, X = 256, 200 rows", lambda: attention_43(5, 50, 256, 200)),
    ("4.3 ranks", "M = 2, H = 16, X = 32, 100-digit entries", lambda: ranks_43(2, 16, 32, 100)),
    ("4.3 ranks", "M = 4, H = 16, X = 64, 100-digit entries", lambda: ranks_43(4, 16, 64, 100)),
    ("4.3 ranks", "M = 4, H = 16, X = 64, 240-digit entries (1,000,000 digits)", lambda: ranks_43(4, 16, 64, 240)),
]
QUICK = {0, 3, 5, 6, 9}


def machine() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return (f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, load average {load[0]:.1f} at the start, one checker at a time")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the table (Markdown) here")
    parser.add_argument("--quick", action="store_true", help="the smallest file of each kind only")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    sys.set_int_max_str_digits(0)
    lines = [f"Machine: {machine()}.", "",
             "| kind | size | bytes | metered work | seconds | exit | why (exit 1, 2) |", "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for k, (kind, size, build) in enumerate(CASES):
            if args.quick and k not in QUICK:
                continue
            path = Path(tmp) / f"case{k}.json"
            path.write_text(json.dumps(build()))
            start = time.perf_counter()
            try:
                done = subprocess.run([sys.executable, "-c", RUNNER, str(path)], capture_output=True, text=True,
                                      timeout=args.timeout, cwd=ROOT)
                result = json.loads(done.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                result = {"code": "timeout", "seconds": time.perf_counter() - start, "metered": "?", "why": ""}
            line = (f"| {kind} | {size} | {path.stat().st_size:,} | {result['metered']:,} | {result['seconds']:.2f} | "
                    f"{result['code']} | {result['why'].replace('|', '/')[:120]} |")
            lines.append(line)
            print(line, flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
