"""Benchmark: float smoothing (forward-backward posteriors) against peer libraries, same run.

Run by hand (not by tests), from the repository root:

    python -m benchmarks.smoothing --threads 2 --save benchmarks/results/smoothing/threads2
    python -m benchmarks.smoothing --threads 1 --save benchmarks/results/smoothing/threads1
    python -m benchmarks.smoothing --quick            # smoke test: 2 sizes, 1 repeat
    python -m benchmarks.smoothing --quick --json     # one JSON object on stdout
    python -m benchmarks.smoothing --openblas-own ... # OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (this run only)
    python -m benchmarks.smoothing --sizes issue28 --threads 1 --skip pomegr,hmml-log \
        --save benchmarks/results/smoothing/issue28-machine         # |H| 5..4096 (issue 28 item 3)
    python -m benchmarks.smoothing --sizes issue28 --threads 1 --repeat 5 --skip pomegr,hmml-log,hmml \
        --save benchmarks/results/smoothing/issue38-float32         # float32 vs dynamax32 (issue 38 item 2)
    python -m benchmarks.smoothing --sizes issue38 --threads 1 --repeat 9 --skip pomegr,hmml-log,hmml \
        --save benchmarks/results/smoothing/issue38-float32-fused-run3  # |H| 50..2,048 only

What each column computes (T = 129 tokens per sequence, a batch of n sequences, float64):

  ours-h0    headprompt.models.inference.floats.posterior_h0: P[H_0 | x], the quantity the
             theorems use. One backward pass only (T batched GEMMs); no forward pass.
  ours-all   floats.posterior_marginals: P[H_i | x] for i = 1..T, a full forward-backward pass
             (2T - 1 batched GEMMs, both passes in one loop: models/inference/forward_backward.py;
             its GEMM, numpy's OpenBLAS or torch's MKL by size, is printed beside each ratio).
             The same quantity and the same work as the peers below, so "peer / ours-all" is
             the like-for-like ratio.
  ours-all32 posterior_marginals(..., dtype="float32"): the same quantity in float32 on the kernel
             models/inference/float32.py picks by size (compiled with numba, or the BLAS loop),
             printed beside each float32 ratio with the fractions of the core's measured peaks
             (SGEMM flops, read bandwidth; benchmarks/smoothing_peaks.py) it and dynamax reach.
  hmml       hmmlearn CategoricalHMM(implementation="scaling").predict_proba, all n sequences in
             one call with `lengths`: P[H_1..T | x] (full forward-backward, per sequence in C++).
  hmml-log   the same with hmmlearn's default implementation="log" (about 10x slower; measured
             only for |H| <= 100 to keep the run short).
  dynamax    jax.jit(jax.vmap(dynamax.hidden_markov_model.hmm_smoother)) with jax_enable_x64:
             smoothed_probs = P[H_1..T | x] (filter + smoother), emission log-likelihood
             gathered inside the jitted function; compile time excluded (one warm-up call).
  dynamax32  the same jitted function on float32 arrays (jax's default precision; ours is float64).
  pomegr     pomegranate DenseHMM (float64): its public `forward` and `backward` on one emission
             matrix, normalised, i.e. what `predict_proba` returns, without the expected
             transition counts (an n x T x |H|^2 tensor) that its `predict_proba` also computes
             (`forward_backward` is EM's E-step); that extra work would make it far slower and
             need gigabytes at |H| = 1000, so timing `predict_proba` would not be like-for-like.

No peer has an API for P[H_0 | x] alone; from any of them one gets it from P[H_1 | x] as
P[H_0 = h | x] = pi0[h] sum_k A[k, h] P[H_1 = k | x] / (A pi0)[k] (A column-stochastic, the
package's convention: hmmlearn's startprob_ is A pi0 and transmat_ is A^T). So "peer / ours-h0"
compares each peer's cheapest public route to P[H_0 | x] (a full smoothing pass) with ours
(one backward pass): it is a fair ratio of what a user waits for, not of equal work.

Protocol: models from the Appendix D generator (appendix_d_hmm), |X| = 10 (100 at |H| = 1000),
sequences sampled from the model; for each (size, library) one warm-up call (whose output is
used for the correctness check), then all (size, library, repeat) runs in one list shuffled with
a fixed seed, so slow drifts of a shared machine spread over every library. Reported: the median
seconds per batch, microseconds per sequence, and ratios of medians. Correctness: max |difference|
of P[H_1 | x] (and of all T marginals, and of P[H_0 | x] derived as above) against ours; hmmlearn
must agree to 1e-8 (the script exits 1 otherwise).

Threads: --threads N sets threadpoolctl's limit for every pool (BLAS, OpenMP), torch's intra-op
threads and XLA's CPU threads (via XLA_FLAGS, before jax is imported; so run one process per
setting). The package's float kernels always run their GEMMs on one thread by design
(floats.single_thread_blas; torch's GEMM with torch.set_num_threads(1) for the call), whatever N
is; N changes the peers only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from datetime import datetime, timezone

from benchmarks.smoothing_peaks import (float32_table, gemm_flops, gemm_peak, machine_info, ours_gemm, ours_kernel32,
                                       read_bandwidth, sgemm_shape_rate)

# sizes: (|H|, |X|, batch n)
FULL_SIZES = [(5, 10, 256), (10, 10, 256), (25, 10, 256), (50, 10, 256), (100, 10, 256),
              (200, 10, 128), (400, 10, 64), (1000, 100, 16)]
# issue 28 item 3: 5 .. 4,096 states (--sizes issue28)
ISSUE28_SIZES = [(5, 10, 256), (10, 10, 256), (50, 10, 256), (100, 10, 256), (400, 10, 64),
                 (1000, 100, 16), (2048, 100, 8), (4096, 100, 4)]
BIG_H = 1000        # above this: hmmlearn untimed (run once on sequence 0, as the reference), fewer repeats
# issue 38 item 2: the sizes where float32 missed 1.5x dynamax32 in one run (--sizes issue38)
ISSUE38_SIZES = [(50, 10, 256), (100, 10, 256), (400, 10, 64), (1000, 100, 16), (2048, 100, 8)]
QUICK_SIZES = [(10, 10, 64), (100, 10, 32)]
T = 129
HMML_LOG_MAX_H = 100
LIBS = ["ours-h0", "ours-all", "ours-all32", "hmml", "hmml-log", "dynamax", "dynamax32", "pomegr"]
PEERS = ["hmml", "hmml-log", "dynamax", "dynamax32", "pomegr"]
TOL = 1e-8


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2, help="thread limit for BLAS/OpenMP/torch/XLA")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--length", type=int, default=T, metavar="T", help=f"tokens per sequence (default {T}, the paper's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the run order and the models")
    p.add_argument("--quick", action="store_true", help="2 small sizes, 1 repeat (smoke test)")
    p.add_argument("--sizes", choices=["full", "issue28", "issue38"], default="full",
                   help="full: |H| 5..1000; issue28: |H| 5..4096 (hmmlearn timed only up to 1000, "
                        "repeats halved above 1000); issue38: |H| 50, 100, 400, 1000, 2048 (as issue28)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--save", metavar="PREFIX", help="also write PREFIX.txt (table) and PREFIX.json")
    p.add_argument("--skip", default="", help="comma-separated libraries to leave out")
    p.add_argument("--render", metavar="JSON", help="only print the table of a saved JSON result")
    p.add_argument("--openblas-own", action="store_true",
                   help="unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this run only (OpenBLAS picks its "
                        "own kernel); the table says which kernel each run used")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin the process to --threads cores (XLA's CPU client then may use more "
                        "threads than its flags allow)")
    return p.parse_args()


def _git() -> dict:
    def run(*a):
        return subprocess.run(["git", *a], capture_output=True, text=True).stdout.strip()
    return {"commit": run("rev-parse", "HEAD"),
            "floats_py_modified": bool(run("status", "--porcelain", "models/inference/floats.py"))}


def main() -> int:
    args = _parse()
    if args.render:
        with open(args.render) as fh:
            print(_table(json.load(fh)), end="")
        return 0
    n_thr = args.threads
    if args.openblas_own:                  # this benchmark process only, before numpy loads OpenBLAS
        for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            os.environ.pop(var, None)
    # before numpy / torch / jax are imported
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen={'true' if n_thr > 1 else 'false'}"
                               f" intra_op_parallelism_threads={n_thr}").strip()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n_thr)
    # XLA's CPU client does not keep to the flags above (measured, jax 0.10.2 on an idle 2-core
    # machine, --threads 1: dynamax32 used 2.65 s of CPU in 1.50 s of wall at 1,000 states), so the
    # process is also pinned to n_thr cores: then no library, ours included, has more
    machine_cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pinned = None
    if not args.no_pin and machine_cpus:
        pinned = machine_cpus[:n_thr]
        if len(pinned) < len(machine_cpus):        # (already so under `taskset -c ...`)
            os.sched_setaffinity(0, pinned)

    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits

    from headprompt.models.generate.generators import appendix_d_hmm
    from headprompt.models.generate.sampling import sample
    from headprompt.models.inference import floats as iff

    skip = {s for s in args.skip.split(",") if s}
    global T
    T = args.length
    sizes = (QUICK_SIZES if args.quick else
             {"issue28": ISSUE28_SIZES, "issue38": ISSUE38_SIZES}.get(args.sizes, FULL_SIZES))
    repeat = 1 if args.quick else args.repeat
    repeats = {H: repeat if H <= BIG_H else max(2, (repeat + 1) // 2) for H, _, _ in sizes}
    versions = {"numpy": np.__version__}
    notes: list[str] = []

    # ---- peers, imported if they can be -------------------------------------------------
    try:
        import hmmlearn
        from hmmlearn.hmm import CategoricalHMM
        versions["hmmlearn"] = hmmlearn.__version__
    except ImportError as exc:
        CategoricalHMM = None
        notes.append(f"hmmlearn not importable ({exc}); hmmlearn columns skipped")
        skip |= {"hmml", "hmml-log"}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jaxlib
        import dynamax
        from dynamax.hidden_markov_model import hmm_smoother
        versions.update(jax=jax.__version__, jaxlib=jaxlib.__version__, dynamax=dynamax.__version__)
    except Exception as exc:
        notes.append(f"dynamax/jax not importable ({type(exc).__name__}: {exc}); dynamax skipped")
        skip.add("dynamax")
    try:
        import torch
        torch.set_num_threads(n_thr)
        versions["torch"] = torch.__version__
        import pomegranate
        from pomegranate.distributions import Categorical
        from pomegranate.hmm import DenseHMM
        versions["pomegranate"] = pomegranate.__version__
    except Exception as exc:
        notes.append(f"pomegranate not importable ({type(exc).__name__}: {exc}); pomegranate skipped")
        skip.add("pomegr")
    import scipy
    import threadpoolctl
    versions.update(scipy=scipy.__version__, threadpoolctl=threadpoolctl.__version__)
    for note in notes:
        log("note: " + note)

    limiter = threadpool_limits(limits=n_thr)          # every pool: BLAS and OpenMP
    pools = [{k: d.get(k) for k in ("user_api", "internal_api", "version", "num_threads", "architecture", "filepath")}
             for d in threadpool_info()]
    machine = machine_info()
    log(f"machine: {machine.get('Model name', '?')}, {machine['usable_cpus']} usable cores; "
        f"threads: {n_thr} (torch {versions.get('torch') and torch.get_num_threads()}); "
        f"load average {os.getloadavg()}")
    log("pools: " + "; ".join(f"{p['internal_api']} {p['version']} x{p['num_threads']}" for p in pools))

    # ---- instances and callables ----------------------------------------------------------
    cases = {}
    for H, X, n in sizes:
        ref = None
        rng = np.random.default_rng([args.seed, H])
        hmm = appendix_d_hmm(H, X, rng=rng)
        tokens, _ = sample(hmm, n, T, rng=rng)
        A, AT, W, pi0 = iff.float_arrays(hmm)
        start = A @ pi0
        fns = {"ours-h0": lambda hmm=hmm, tok=tokens: iff.posterior_h0(hmm, tok),
               "ours-all": lambda hmm=hmm, tok=tokens: iff.posterior_marginals(hmm, tok),
               "ours-all32": lambda hmm=hmm, tok=tokens: iff.posterior_marginals(hmm, tok, dtype="float32")}
        if CategoricalHMM is not None:
            for name, impl in (("hmml", "scaling"), ("hmml-log", "log")):
                if name == "hmml-log" and H > HMML_LOG_MAX_H:
                    continue
                m = CategoricalHMM(n_components=H, n_features=X, init_params="", params="",
                                   implementation=impl)
                m.startprob_, m.transmat_, m.emissionprob_ = start, AT.copy(), W.T.copy()
                fn = (lambda m=m, tok=tokens, n=n:
                      m.predict_proba(tok.reshape(-1, 1), [T] * n).reshape(n, T, -1))
                if name == "hmml" and H > BIG_H:   # untimed reference on sequence 0 only
                    ref = (lambda m=m, tok=tokens[:1]: m.predict_proba(tok.reshape(-1, 1), [T]).reshape(1, T, -1))
                else:
                    fns[name] = fn
        for name, dt in (("dynamax", np.float64), ("dynamax32", np.float32)):
            if name in skip or "dynamax" in skip:
                continue
            init_j, trans_j = jnp.asarray(start.astype(dt)), jnp.asarray(AT.astype(dt))
            logW_j = jnp.asarray(np.log(W).astype(dt))
            smooth = jax.jit(jax.vmap(
                lambda x, i=init_j, t=trans_j, lw=logW_j: hmm_smoother(i, t, lw[x]).smoothed_probs))
            fns[name] = lambda f=smooth, tok=tokens: f(jnp.asarray(tok)).block_until_ready()
        if "pomegr" not in skip:
            with torch.no_grad():
                pm = DenseHMM([Categorical(torch.tensor(W[:, h][None, :])) for h in range(H)],
                              edges=torch.tensor(AT), starts=torch.tensor(start),
                              ends=torch.full((H,), 1.0 / H, dtype=torch.float64)).double()

            def pomegr(pm=pm, tok=tokens):
                with torch.no_grad():
                    e = pm._emission_matrix(torch.from_numpy(tok[:, :, None]))
                    r = pm.forward(emissions=e) + pm.backward(emissions=e)
                    return torch.exp(r - torch.logsumexp(r, dim=2, keepdim=True))
            fns["pomegr"] = pomegr
        for s in skip:
            fns.pop(s, None)
        cases[H] = {"X": X, "n": n, "tokens": tokens, "A": A, "pi0": pi0, "fns": fns, "ref": ref}

    # ---- warm-up and correctness (same inputs for every library) --------------------------
    check: dict = {}
    failed = []
    peak_mb: dict = {}
    for H, c in cases.items():
        outs = {}
        for name, fn in c["fns"].items():
            t0 = time.perf_counter()
            outs[name] = np.asarray(fn(), dtype=np.float64)
            log(f"warm-up |H|={H:<4} {name:<8} {time.perf_counter() - t0:8.3f} s")
            tracemalloc.start()                     # peak of numpy's (and torch CPU's) allocations; XLA's unseen
            fn()
            peak_mb.setdefault(H, {})[name] = tracemalloc.get_traced_memory()[1] / 2 ** 20
            tracemalloc.stop()
        if c["ref"] is not None:
            t0 = time.perf_counter()
            outs["hmml"] = np.asarray(c["ref"]())
            log(f"reference |H|={H:<4} hmmlearn on sequence 0 {time.perf_counter() - t0:8.3f} s")
        ours_all, ours_h0 = outs["ours-all"], outs["ours-h0"]
        A, pi0 = c["A"], c["pi0"]
        row = {}
        for name in PEERS:
            if name not in outs:
                continue
            peer = outs[name]
            k = len(peer)                           # 1 for the untimed hmmlearn reference
            ours_all, ours_h0 = outs["ours-all"][:k], outs["ours-h0"][:k]
            h0 = pi0[None, :] * ((peer[:, 0] / (A @ pi0)[None, :]) @ A)
            h0 /= h0.sum(axis=1, keepdims=True)
            row[name] = {"H1": float(np.abs(peer[:, 0] - ours_all[:, 0]).max()),
                         "all": float(np.abs(peer - ours_all).max()),
                         "H0": float(np.abs(h0 - ours_h0).max())}
            if name.startswith("hmml") and max(row[name].values()) > TOL:
                failed.append(f"|H|={H} {name}: {row[name]}")
        ours_all, ours_h0 = outs["ours-all"], outs["ours-h0"]
        if "ours-all32" in outs:
            row["ours-all32 vs ours-all"] = float(np.abs(outs["ours-all32"] - ours_all).max())
        row["ours-h0 vs ours-all"] = float(np.abs(
            pi0[None, :] * ((ours_all[:, 0] / (A @ pi0)[None, :]) @ A)
            / (pi0[None, :] * ((ours_all[:, 0] / (A @ pi0)[None, :]) @ A)).sum(axis=1, keepdims=True)
            - ours_h0).max())
        check[H] = row

    # ---- timed runs, interleaved in a shuffled order --------------------------------------
    peak = gemm_peak("float64")   # this core's GEMM peaks and read bandwidth: the ceilings of every library
    speak, bandwidth = gemm_peak("float32"), read_bandwidth()
    log(f"one-thread DGEMM peak: " + ", ".join(f"{k} {v / 1e9:.1f} GFLOP/s" for k, v in peak.items())
        + "; SGEMM peak: " + ", ".join(f"{k} {v / 1e9:.1f} GFLOP/s" for k, v in speak.items())
        + f"; read bandwidth {bandwidth / 1e9:.1f} GB/s")
    shape_rate = ({H: sgemm_shape_rate(H, c["n"], T) for H, c in cases.items()}
                  if "ours-all32" in next(iter(cases.values()))["fns"] else {})
    log("sgemm alone on each shape: " + ", ".join(f"|H|={H} {v / 1e9:.1f} GFLOP/s" for H, v in shape_rate.items()))
    plan = [(H, name, r) for H, c in cases.items() for name in c["fns"] for r in range(repeats[H])]
    random.Random(args.seed).shuffle(plan)
    times: dict = {H: {name: [] for name in c["fns"]} for H, c in cases.items()}
    load_before = os.getloadavg()
    t_start, cpu_start = time.perf_counter(), time.process_time()
    for k, (H, name, r) in enumerate(plan):
        t0 = time.perf_counter()
        cases[H]["fns"][name]()
        dt = time.perf_counter() - t0
        times[H][name].append(dt)
        log(f"[{k + 1}/{len(plan)}] |H|={H:<4} {name:<8} rep {r} {dt:8.4f} s "
            f"(elapsed {time.perf_counter() - t_start:6.1f} s)")
    load_after = os.getloadavg()
    limiter.restore_original_limits()

    # ---- summary --------------------------------------------------------------------------
    rows = []
    for H, c in cases.items():
        med = {name: statistics.median(ts) for name, ts in times[H].items()}
        rows.append({
            "H": H, "X": c["X"], "T": T, "n": c["n"], "ours_gemm": ours_gemm(H, pools, c["n"]),
            "ours_kernel32": ours_kernel32(H, c["n"], pools),
            "median_s": med,
            "us_per_seq": {k: v / c["n"] * 1e6 for k, v in med.items()},
            "min_s": {k: min(v) for k, v in times[H].items()},
            "max_s": {k: max(v) for k, v in times[H].items()},
            "ratio_vs_ours_all": {p: med[p] / med["ours-all"] for p in PEERS if p in med},
            "ratio_vs_ours_h0": {p: med[p] / med["ours-h0"] for p in PEERS if p in med},
            "ratio_dynamax32_vs_ours_all32": (med["dynamax32"] / med["ours-all32"]
                                             if "dynamax32" in med and "ours-all32" in med else None),
            "peak_traced_mb": peak_mb.get(H, {}),
            "ours_all32_vs_ours_all_max_abs": check[H].get("ours-all32 vs ours-all"),
            "times_s": times[H],
            "max_abs_diff_vs_ours": check[H],
            "gemm_flops": gemm_flops(H, c["n"], T),
        })
    result = {
        "benchmark": "benchmarks/smoothing.py",
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": {"threads": n_thr, "pinned_cpus": pinned, "machine_cpus": os.cpu_count(),
                   "repeat": repeat, "repeats_by_H": repeats, "seed": args.seed, "T": T, "quick": args.quick,
                   "sizes": [{"H": H, "X": X, "n": n} for H, X, n in sizes],
                   "hmml_log_max_H": HMML_LOG_MAX_H, "hmml_timed_max_H": BIG_H, "skipped": sorted(skip),
                   "XLA_FLAGS": os.environ["XLA_FLAGS"],
                   "torch_threads": torch.get_num_threads() if "torch" in versions else None,
                   "package_kernel_blas_threads": 1,
                   "openblas_env": {k: os.environ.get(k, "(unset)") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}},
        "machine": machine, "blas_pools": pools, "versions": versions, "git": _git(),
        "load_average_before_after": [load_before, load_after],
        "timed_wall_s": time.perf_counter() - t_start, "timed_cpu_s": time.process_time() - cpu_start,
        "notes": notes, "correctness_tolerance_hmmlearn": TOL, "correctness_failed": failed,
        "rows": rows, "dgemm_peak_flops": peak, "sgemm_peak_flops": speak, "read_bandwidth_bytes_per_s": bandwidth,
        "sgemm_shape_flops": shape_rate,
    }
    table = _table(result)
    if args.save:
        os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
        with open(args.save + ".json", "w") as fh:
            json.dump(result, fh, indent=1)
            fh.write("\n")
        with open(args.save + ".txt", "w") as fh:
            fh.write(table)
        log(f"wrote {args.save}.json and {args.save}.txt")
    print(json.dumps(result) if args.json else table, end="\n" if args.json else "")
    if failed:
        log("CORRECTNESS FAILED: " + "; ".join(failed))
        return 1
    return 0


def _table(res: dict) -> str:
    cfg, mach = res["config"], res["machine"]
    libs = [lib for lib in LIBS if any(lib in r["median_s"] for r in res["rows"])]
    kernel = "; ".join(f"{p.get('internal_api')} {p.get('architecture') or '?'}"
                       for p in res.get("blas_pools", []) if p.get("user_api") == "blas") or "?"
    env = res.get("config", {}).get("openblas_env") or {}
    peers = [p for p in PEERS if p in libs]
    pin = "" if cfg.get("pinned_cpus") is None else f"; the process pinned to {len(cfg['pinned_cpus'])}"
    out = [f"smoothing benchmark, {res['date_utc']}, {mach.get('Model name', '?')} "
           f"({cfg.get('machine_cpus') or mach['usable_cpus']} usable cores{pin}), "
           f"threads={cfg['threads']}, T={cfg['T']}, "
           f"repeats={cfg.get('repeats_by_H') or cfg['repeat']} (shuffled, seed {cfg['seed']}), "
           f"commit {res['git']['commit'][:10]}",
           "versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()),
           f"load average before/after timed runs: {res['load_average_before_after']}",
           "", "median microseconds per sequence (batch of n):",
           f"{'|H|':>5} {'|X|':>4} {'n':>4} " + " ".join(f"{lib:>9}" for lib in libs)]
    for r in res["rows"]:
        out.append(f"{r['H']:>5} {r['X']:>4} {r['n']:>4} " + " ".join(
            f"{r['us_per_seq'][lib]:>9.1f}" if lib in r["us_per_seq"] else f"{'-':>9}" for lib in libs))
    for r in res["rows"]:      # ratios of the fastest repeat: less sensitive to a busy machine
        r["ratio_min_vs_ours_all"] = {p: r["min_s"][p] / r["min_s"]["ours-all"]
                                      for p in peers if p in r["min_s"]}
    for key, what in (("ratio_vs_ours_all", "median / ours-all median (same quantity, same work)"),
                      ("ratio_vs_ours_h0", "median / ours-h0 median (P[H_0|x]: our backward pass "
                                           "vs their full pass)"),
                      ("ratio_min_vs_ours_all", "fastest repeat / ours-all fastest repeat "
                                                "(secondary; robust to a busy machine)")):
        out += ["", f"ratio peer {what}; > 1 means we are faster:",
                f"{'|H|':>5} " + " ".join(f"{p:>9}" for p in peers)
                + "  BLAS kernel (threadpoolctl architecture); ours' GEMM"]
        for r in res["rows"]:
            out.append(f"{r['H']:>5} " + " ".join(
                f"{r[key][p]:>8.2f}x" if p in r[key] else f"{'-':>9}" for p in peers)
                + f"  {kernel}; ours: {r.get('ours_gemm', 'numpy')}")
    out += float32_table(res, kernel)
    out += ["", "the BLAS kernel column is numpy's and scipy's OpenBLAS (hmmlearn's numpy parts, ours where "
                "'ours: numpy'); jax/dynamax use XLA's own CPU kernels (Eigen), torch its own BLAS (MKL: "
                "pomegranate, and ours where 'ours: torch'); ours-h0 always runs on numpy's OpenBLAS"]
    out += ["OpenBLAS environment of this run: " + (", ".join(f"{k}={v}" for k, v in env.items())
                                                       if env else "not recorded")]
    peak = res.get("dgemm_peak_flops")
    if peak and "dynamax" in peers:
        top = max(peak.values())
        out += ["", f"the products' share of this core's one-thread DGEMM peak ({', '.join(f'{k} {v / 1e9:.1f}' for k, v in peak.items())} "
                    "GFLOP/s, measured in this run; 2 H^2 n (2T - 1) flops per batch):",
                f"{'|H|':>5} {'GFLOP':>7} {'ours-all':>9} {'dynamax':>9} {'1.5x dynamax needs':>19}"]
        for r in res["rows"]:
            f, med = r.get("gemm_flops"), r["median_s"]
            if f is None or "dynamax" not in med:
                continue
            need = 1.5 * f / med["dynamax"] / top
            out.append(f"{r['H']:>5} {f / 1e9:>7.2f} {f / med['ours-all'] / top:>9.0%} {f / med['dynamax'] / top:>9.0%} "
                       f"{need:>18.0%}{'  (above the peak: no float64 kernel doing these products can)' if need > 1 else ''}")
    out += ["", "max |difference| against ours (P[H_1|x] / all T marginals / derived P[H_0|x]):"]
    for r in res["rows"]:
        d = r["max_abs_diff_vs_ours"]
        out.append(f"{r['H']:>5} " + "  ".join(
            f"{p} {d[p]['H1']:.1e}/{d[p]['all']:.1e}/{d[p]['H0']:.1e}" for p in peers if p in d))
    if any(r["H"] > res["config"].get("hmml_timed_max_H", 10**9) for r in res["rows"]):
        out.append(f"(above |H| = {res['config']['hmml_timed_max_H']}: hmmlearn untimed, run once on "
                   "sequence 0 as the independent float64 reference; its differences are on that sequence)")
    out.append(f"hmmlearn within {res['correctness_tolerance_hmmlearn']:g}: "
               + ("yes" if not res["correctness_failed"] else "NO: " + "; ".join(res["correctness_failed"])))
    out += [f"note: {n}" for n in res["notes"]]
    cpu = res.get("timed_cpu_s")
    out.append(f"timed runs took {res['timed_wall_s']:.0f} s" + (f" wall, {cpu:.0f} s CPU" if cpu is not None else ""))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
