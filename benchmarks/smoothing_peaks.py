"""The core's measured peaks for the smoothing benchmark (benchmarks/smoothing.py), what each
run reaches of them, and the float32 table (issue 38 item 2).

Peaks, measured in the same run as the timings, on one thread:

  GEMM peak        best FLOP/s of a 2,000 x 2,000 GEMM, float64 and float32, numpy's BLAS and
                   torch's: the ceiling of any kernel doing the smoothing's products.
  read bandwidth   best bytes/s of a dot product of two 64 MiB float32 vectors (numpy's BLAS
                   sdot: a streamed read of 128 MiB, far out of cache): the ceiling of a
                   kernel that must stream ``A`` from memory.

A smoothing of ``n`` sequences of ``t`` tokens on ``H`` states does ``2 H^2 n (2t - 1)`` flops
in its products (:func:`gemm_flops`) and must read ``A`` (``4 H^2`` bytes in float32) at least
``t`` times when each step reads it once for both passes, ``2t - 1`` times when each pass
reads it (dynamax, the BLAS loop). Where a run misses 1.5x dynamax's float32, the table prints
the fractions of both peaks that 1.5x dynamax's time would need at the least traffic: above
100% of either, no float32 kernel on this core can reach it.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time

__all__ = ["machine_info", "gemm_flops", "gemm_peak", "read_bandwidth", "sgemm_shape_rate", "ours_gemm",
           "ours_kernel32", "float32_table"]


def machine_info() -> dict:
    """The machine: platform, CPU model and counts (lscpu), memory."""
    info: dict = {"platform": platform.platform(), "python": platform.python_version(),
                  "os_cpu_count": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0))}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
                               "Socket(s)"):
                info[key.strip()] = val.strip()
    except Exception as exc:  # pragma: no cover
        info["lscpu"] = f"unavailable: {exc}"
    try:
        with open("/proc/meminfo") as fh:
            info["MemTotal"] = fh.readline().split(":")[1].strip()
    except OSError:
        pass
    return info


def gemm_flops(H: int, n: int, t: int) -> float:
    """Floating-point operations of the products of one forward-backward smoothing of ``n``
    sequences of ``t`` tokens on ``H`` states: ``t`` forward and ``t - 1`` backward products of
    ``[H, H] x [H, n]``, ``2 H^2 n`` each (every library here does these; the elementwise work
    is O(H n) per step and left out)."""
    return 2.0 * H * H * n * (2 * t - 1)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def gemm_peak(dtype: str = "float64", size: int = 2000, repeats: int = 5) -> dict:
    """Best one-thread GEMM rate (FLOP/s) in ``dtype`` of numpy's BLAS and, if importable,
    torch's, on ``size x size`` matrices."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    a, b = np.random.default_rng(0).random((2, size, size)).astype(dtype)
    out = {}
    with threadpool_limits(1):
        runs = {"numpy": lambda: a @ b}
        try:
            import torch
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            runs["torch"] = lambda: ta @ tb
        except ImportError:
            torch = None
        for name, fn in runs.items():
            if name == "torch":
                before = torch.get_num_threads()
                torch.set_num_threads(1)
            fn()
            best = min(_timed(fn) for _ in range(repeats))
            if name == "torch":
                torch.set_num_threads(before)
            out[name] = 2.0 * size ** 3 / best
    return out


def read_bandwidth(mib: int = 64, repeats: int = 5) -> float:
    """Best one-thread read bandwidth (bytes/s): numpy's BLAS dot of two ``mib`` MiB float32
    vectors (both read once, streamed from memory)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    x, y = np.random.default_rng(1).random((2, mib * 2 ** 18), dtype=np.float32)
    with threadpool_limits(1):
        np.dot(x, y)
        best = min(_timed(lambda: np.dot(x, y)) for _ in range(repeats))
    return (x.nbytes + y.nbytes) / best


def sgemm_shape_rate(H: int, n: int, t: int, repeats: int = 3) -> float:
    """Best one-thread rate (FLOP/s) of the smoothing's products alone on their own shape:
    ``t`` products ``A x`` and ``t - 1`` products ``A^T y`` (``[H, H] x [H, n]``, numpy's
    sgemm, nothing else), as a BLAS loop does them: the ceiling of any smoothing whose products
    are BLAS calls on this shape (the core's SGEMM peak is measured on a square 2,000 GEMM)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(2)
    A = rng.random((H, H), dtype=np.float32)
    AT, x, out = np.ascontiguousarray(A.T), rng.random((H, n), dtype=np.float32), np.empty((H, n), np.float32)

    def loop():
        for _ in range(t):
            np.matmul(A, x, out=out)
        for _ in range(t - 1):
            np.matmul(AT, x, out=out)
    with threadpool_limits(1):
        loop()
        best = min(_timed(loop) for _ in range(repeats))
    return gemm_flops(H, n, t) / best


def ours_gemm(H: int, pools: list, n: int | None = None) -> str:
    """Whose GEMM ``posterior_marginals`` ran on at ``H`` states and ``n`` sequences (its dense
    fused kernel)."""
    from headprompt.models.inference import forward_backward as fb
    from headprompt.models.inference import streamed

    if n is not None and streamed.use_streamed(H, n):
        import numba
        return f"numba {numba.__version__}, one read of A per step (models/inference/streamed.py)"

    rows = fb.panel_rows(H)
    panels = f", panels of {rows} rows" if rows < H else ""
    if fb.gemm_backend(H) == "torch":
        import re

        import torch
        mkl = re.search(r"Math Kernel Library Version ([\w.-]+)", torch.__config__.show())
        return f"torch {torch.__version__} (MKL {mkl.group(1) if mkl else '?'}){panels}"
    numpy_blas = [p for p in pools if p.get("user_api") == "blas" and "numpy" in (p.get("filepath") or "")]
    arch = numpy_blas[0].get("architecture") if numpy_blas else "?"
    return f"numpy (OpenBLAS {arch}){panels}"


def ours_kernel32(H: int, n: int, pools: list) -> str:
    """Which kernel ``posterior_marginals(..., dtype="float32")`` ran at ``H`` states and ``n``
    sequences, with its library."""
    from headprompt.models.inference import float32 as f32

    kind = f32.float32_kernel(H, n)
    if kind == "blas":
        import numba
        import scipy
        return (f"numba {numba.__version__} blas (scipy {scipy.__version__}'s OpenBLAS sgemm per step and pass "
                "from compiled code, elementwise work fused)")
    if kind in ("columns", "rows"):
        import numba
        what = ("vectorised over sequences" if kind == "columns"
                else "one streamed read of A per step for both passes")
        return f"numba {numba.__version__} {kind} ({what})"
    blas = [p for p in pools if p.get("user_api") == "blas" and "numpy" in (p.get("filepath") or "")]
    sgemm = f"numpy sgemm (OpenBLAS {blas[0].get('architecture') if blas else '?'})"
    if kind == "steps":
        import numba
        return f"{sgemm} per step and pass, numba {numba.__version__} elementwise passes (one call per step)"
    return f"{sgemm}, one per step and pass"


def float32_table(res: dict, kernel: str) -> list[str]:
    """Lines of the float32 section: ours-all32 against dynamax32 and dynamax (float64), the
    kernel each ran on beside it, and the fractions of the measured peaks (see the module's
    docstring) each run reaches and 1.5x dynamax32 would need."""
    rows = [r for r in res["rows"] if "ours-all32" in r["median_s"] and "dynamax32" in r["median_s"]]
    if not rows:
        return []
    sg = res.get("sgemm_peak_flops") or {}
    bw = res.get("read_bandwidth_bytes_per_s")
    top = max(sg.values()) if sg else None
    peaks = (f"one-thread SGEMM peak {', '.join(f'{k} {v / 1e9:.1f}' for k, v in sg.items())} GFLOP/s; "
             f"read bandwidth {bw / 1e9:.1f} GB/s" if sg and bw else "peaks not measured")
    out = ["", f"float32 (dtype='float32'; dynamax32 at jax's float32, dynamax at float64): median ratios, > 1 means "
               f"ours-all32 is faster; peaks measured in this run: {peaks}; BLAS kernel (threadpoolctl): {kernel}",
           f"{'|H|':>5} {'n':>4} {'/dyn32':>7} {'/dyn64':>7} {'max diff':>9} "
           f"{'ours %flop':>10} {'ours %bw':>8} {'dyn32 %flop':>11} {'dyn32 %bw':>9} {'1.5x needs':>16} {'sgemm alone':>11}"
           "  ours-all32 kernel"]
    for r in rows:
        med, H, n, t = r["median_s"], r["H"], r["n"], r["T"]
        flops = gemm_flops(H, n, t)
        a_bytes = 4.0 * H * H
        one_read, two_reads = t * a_bytes, (2 * t - 1) * a_bytes
        ours_reads = one_read if "rows" in r.get("ours_kernel32", "") else two_reads
        ratio32 = med["dynamax32"] / med["ours-all32"]
        ratio64 = med["dynamax"] / med["ours-all32"] if "dynamax" in med else float("nan")
        if top and bw:
            f_ours, b_ours = flops / med["ours-all32"] / top, ours_reads / med["ours-all32"] / bw
            f_dyn, b_dyn = flops / med["dynamax32"] / top, two_reads / med["dynamax32"] / bw
            need_t = med["dynamax32"] / 1.5
            need = f"{flops / need_t / top:>6.0%} / {one_read / need_t / bw:>5.0%}" if ratio32 < 1.5 else f"{'met':>16}"
            fr = f"{f_ours:>10.0%} {b_ours:>8.0%} {f_dyn:>11.0%} {b_dyn:>9.0%} {need:>16}"
        else:
            fr = f"{'-':>10} {'-':>8} {'-':>11} {'-':>9} {'-':>16}"
        shape = (res.get("sgemm_shape_flops") or {}).get(str(H)) or (res.get("sgemm_shape_flops") or {}).get(H)
        alone = f"{shape / top:>11.0%}" if shape and top else f"{'-':>11}"
        out.append(f"{H:>5} {n:>4} {ratio32:>6.2f}x {ratio64:>6.2f}x {r.get('ours_all32_vs_ours_all_max_abs') or 0:>9.1e} "
                   f"{fr} {alone}  {r.get('ours_kernel32', '?')}")
    out += ["(%flop: the products' flops per second over the SGEMM peak; %bw: bytes of A read per second "
            "(ours: once per step with the rows kernel, else twice; dynamax: twice) over the read bandwidth; "
            "'1.5x needs': flops / bandwidth share at 1.5x dynamax32's speed and one read of A per step; "
            "a share above 100% is out of reach of any float32 kernel on this core; 'sgemm alone': the "
            "2T - 1 products alone on their [H, H] x [H, n] shape through numpy's sgemm, nothing else, "
            "measured in this run: the ceiling of a kernel whose products are BLAS calls)"]
    return out
