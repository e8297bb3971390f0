"""The path boundary: ``verify theorem 3.3`` on three families of instances at sizes on both sides
of the dense path's limit (1,000 states or tokens) and of 2,000, to show no cliff where the
path changes (issue 38 item 1).

Each instance is written as ``.npz`` (exact int64 numerators over per-column denominators) and
checked by the command line in a fresh process under ``/usr/bin/time -v``: wall seconds, CPU
seconds, peak resident memory, the path the run took (the report's ``"path"`` entry), the
verdict, and the 1-minute load average before the run (the machine is shared: compare ratios
of neighbouring sizes within one run).

Families (``|X| = |H| = N``; every one has the 3 x 3 core block of ``W`` that is singular
modulo the prime ``2^61 - 1`` though not over Q, ``M / p`` with ``M = [[p-2, 1, 1], [1, p-2, 1],
[1, 1, p-2]]``, so a rank taken modulo that prime alone cannot prove Assumption 3.1):

- ``sparse``: ``A`` with 2-4 successors per state (a self loop, the next state, two random),
  ``W`` the core and the identity on the other states;
- ``blocked``: ``A`` block-diagonal in blocks of 32 states (dense random positive integers)
  linked in a ring, ``W`` the core then random column-diagonally dominant 4 x 4 blocks (nonsingular);
- ``dense``: every entry of ``A`` positive (random integers 1..9 over the column sum), ``W``
  as for ``sparse``.

    python benchmarks/boundary.py [--families sparse,blocked,dense] [--sizes 900,1000,1001,1100]
        [--out benchmarks/results/boundary] [--force dense|large] [--force-dense sparse:1000]

``--force`` runs every size on one path whatever the cost model predicts (the rates of
``verify/runtime/cost.py`` were fitted to such runs: ``benchmarks/results/boundary/calibration/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import timed_command  # noqa: E402  (benchmarks/scale.py: the one /usr/bin/time reader)

__all__ = ["family_entries", "write_family", "run_one", "FAMILIES"]

PRIME = 2 ** 61 - 1
FAMILIES = ("sparse", "blocked", "dense")
DEFAULT_SIZES = "900,990,1000,1001,1010,1100,1900,1990,2000,2001,2010,2100"


def _columns_over_sums(num: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer numerators and each column's denominator (its sum): a column-stochastic matrix."""
    return num.astype(np.int64), num.sum(axis=0).astype(np.int64)


def _core_w(n: int, rng: np.random.Generator, blocked: bool) -> tuple[np.ndarray, np.ndarray]:
    W = np.zeros((n, n), dtype=np.int64)
    den = np.ones(n, dtype=np.int64)
    W[:3, :3] = 1
    W[np.arange(3), np.arange(3)] = PRIME - 2
    den[:3] = PRIME
    h = 3
    while h < n:
        size = min(4, n - h) if blocked else 1
        # a column-diagonally dominant block (diagonal 20..29, the rest 1..3): nonsingular, so
        # every size of the family satisfies Assumption 3.1 and the verdicts compare
        block = rng.integers(1, 4, size=(size, size)) + np.diag(rng.integers(20, 30, size=size))
        W[h:h + size, h:h + size] = block
        den[h:h + size] = W[h:h + size, h:h + size].sum(axis=0)
        h += size
    return W, den


def _transitions(family: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    A = np.zeros((n, n), dtype=np.int64)
    if family == "sparse":
        for h in range(n):
            for g in {h, (h + 1) % n, int(rng.integers(n)), int(rng.integers(n))}:
                A[g, h] = 1
    elif family == "blocked":
        for lo in range(0, n, 32):
            hi = min(n, lo + 32)
            A[lo:hi, lo:hi] = rng.integers(1, 10, size=(hi - lo, hi - lo))
            A[hi % n, hi - 1] += 1                    # a ring through the blocks: irreducible
    else:
        A = rng.integers(1, 10, size=(n, n)).astype(np.int64)
    return _columns_over_sums(A)


def family_entries(family: str, n: int, seed: int = 5) -> dict:
    """The ``.npz`` entries of the ``family`` instance with ``n`` states and ``n`` tokens."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    A, dA = _transitions(family, n, rng)
    W, dW = _core_w(n, rng, family == "blocked")
    out = {"kind": np.array("hmm"), "pi0": np.ones(n, dtype=np.int64), "pi0.den": np.array([n], dtype=np.int64),
           "mu": rng.choice([-1, 1], size=n).astype(np.int64), "mu.den": np.array([1], dtype=np.int64)}
    for name, mat, den in (("A", A, dA), ("W", W, dW)):
        if np.count_nonzero(mat) <= 0.25 * mat.size:
            sp = sparse.csc_array(mat)
            out.update({f"{name}.data": sp.data.astype(np.int64), f"{name}.indices": sp.indices.astype(np.int64),
                        f"{name}.indptr": sp.indptr.astype(np.int64), f"{name}.format": np.array("csc"),
                        f"{name}.shape": np.array(mat.shape, dtype=np.int64)})
        else:
            out[name] = mat
        out[f"{name}.den"] = den
    return out


def write_family(family: str, n: int, path: str | Path, seed: int = 5) -> None:
    from headprompt.models.hmm.npz import write_npz

    write_npz(path, family_entries(family, n, seed))


_FORCE = ("import sys; from headprompt.verify.runtime import cost, paths; paths.PATH_PREFERENCE = {pref}; "
          "cost.MAX_LARGE_BYTES = 1 << 60; cost.MAX_SECONDS = 1 << 30; from headprompt.verify.cli import main; "
          "sys.argv = ['verify'] + sys.argv[1:]; main()")


def run_one(path: str, extra: list[str], *, force: str | None = None) -> dict:
    """One run of the command line; ``force``: ``"dense"`` or ``"large"``, that path whatever the
    cost model predicts (its preference raised past, or lowered below, any estimate), to time
    that path's own work."""
    load = os.getloadavg()[0]
    pref = {"dense": "1e12", "large": "0.0"}.get(force or "")
    head = ["-c", _FORCE.format(pref=pref)] if pref else ["-m", "headprompt.verify"]
    proc, used = timed_command([sys.executable, *head, "theorem", "3.3", "--hmm", str(path), "--json", *extra])
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    seqs = report.get("sequences") or {}
    path_entry = report.get("path") or {}
    return {"exit": proc.returncode, "load_before": round(load, 2), **used,
            "path": path_entry.get("chosen"), "predicted_s": path_entry.get("seconds"),
            "estimates": {k: (v or {}).get("seconds") for k, v in (path_entry.get("estimates") or {}).items()},
            "verdict": report.get("verdict"), "checked": seqs.get("checked"), "agree": seqs.get("agree"),
            "fallbacks": seqs.get("exact_fallbacks"),
            "stderr_tail": proc.stderr.strip().splitlines()[-1:] if proc.returncode else []}


def worst_ratio(rows: list[dict], key: str = "wall_s") -> tuple[float, tuple[int, int] | None]:
    """The largest ratio of ``key`` (wall or CPU seconds) between neighbouring sizes of one family
    (either direction); sizes more than 25% apart (the gap between two windows) are not neighbours."""
    worst, where = 1.0, None
    for a, b in zip(rows, rows[1:]):
        if a[key] and b[key] and a["exit"] == b["exit"] == 0 and b["hidden"] <= 1.25 * a["hidden"]:
            r = max(a[key] / b[key], b[key] / a[key])
            if r > worst:
                worst, where = r, (a["hidden"], b["hidden"])
    return round(worst, 2), where


def render(result: dict) -> str:
    lines = ["| family | N | path | predicted s | wall s | CPU s | peak MB | load | verdict | checked/agree | "
             "exact fallbacks |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for fam, rows in result["families"].items():
        for r in rows:
            lines.append(f"| {fam} | {r['hidden']} | {r['path']} | {r['predicted_s']} | {r['wall_s']} | {r['cpu_s']} | "
                         f"{r['peak_mb']} | {r['load_before']} | {r['verdict']} | {r['checked']}/{r['agree']} | "
                         f"{r['fallbacks']} |")
    for r in result.get("forced_dense", []):
        lines.append(f"| {r['family']} | {r['hidden']} | dense (forced) | {r['predicted_s']} | {r['wall_s']} | "
                     f"{r['cpu_s']} | {r['peak_mb']} | {r['load_before']} | {r['verdict']} | "
                     f"{r['checked']}/{r['agree']} | {r['fallbacks']} |")
    lines.append("")
    for fam, rows in result["families"].items():
        (wall, at_w), (cpu, at_c) = worst_ratio(rows), worst_ratio(rows, "cpu_s")
        lines.append(f"- {fam}: largest ratio between neighbouring sizes: wall {wall}"
                     + (f" ({at_w[0]} -> {at_w[1]})" if at_w else "") + f", CPU {cpu}"
                     + (f" ({at_c[0]} -> {at_c[1]})" if at_c else ""))
    lines += ["", f"machine: {result['machine']}; the 1-minute load average before each run is in 'load' (2 cores, "
                  "shared with other work), so compare neighbouring rows, which ran minutes apart"]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--sizes", default=DEFAULT_SIZES)
    ap.add_argument("--out", default="benchmarks/results/boundary")
    ap.add_argument("--extra", default="", help="more verify options, e.g. '--samples 1000'")
    ap.add_argument("--force-dense", default="", help="family:N pairs also run on the dense path whatever the "
                                                      "cost model predicts, e.g. sparse:1000")
    ap.add_argument("--force", choices=("dense", "large"), default=None,
                    help="run the whole sweep on this path whatever the cost model predicts (calibration)")
    ap.add_argument("--render", action="store_true", help="only rewrite table.md from the saved results.json")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.render:
        (out / "table.md").write_text(render(json.loads((out / "results.json").read_text())))
        return
    families: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fam in args.families.split(","):
            families[fam] = []
            for n in (int(s) for s in args.sizes.split(",")):
                path = Path(tmp) / f"{fam}-{n}.npz"
                write_family(fam, n, path)
                row = {"family": fam, "hidden": n, **({"forced": args.force} if args.force else {}),
                       **run_one(str(path), args.extra.split(), force=args.force)}
                print(json.dumps(row), flush=True)
                families[fam].append(row)
                path.unlink()
    forced = []
    with tempfile.TemporaryDirectory() as tmp:
        for pair in filter(None, args.force_dense.split(",")):
            fam, n = pair.split(":")
            path = Path(tmp) / f"{fam}-{n}.npz"
            write_family(fam, int(n), path)
            row = {"family": fam, "hidden": int(n), "forced": "dense", **run_one(str(path), args.extra.split(),
                                                                                 force="dense")}
            print(json.dumps(row), flush=True)
            forced.append(row)
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
    result = {"command": "verify theorem 3.3 --hmm FAMILY-N.npz --json " + args.extra,
              "machine": f"{cpu}, {os.cpu_count()} cores", "families": families,
              "forced_dense": forced}
    (out / "results.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "table.md").write_text(render(result))
    print(render(result))


if __name__ == "__main__":
    main()
