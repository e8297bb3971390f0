"""The certified checks on a lent GPU (issue 38 item 3): CUDA tests, two timed certifications, JSON + table.

    python3 -m benchmarks.gpu_checks --out "$OUT"          # on the device machine (about 3-5 minutes)
    CHECKS_ONLY=1 bash benchmarks/gpu_session.sh           # the same after the session's set-up (wheels)
    python3 -m benchmarks.gpu_checks --tiny --out /tmp/x   # a dry run on any CPU (torch CPU tensors, ~15 s)

Steps, each timed (wall and this process's CPU seconds) and each under its own guard, so a
failure is recorded and the next step still runs:

(a) ``pytest -m cuda`` over the device tests (verdicts on CUDA equal the CPU's, the rounding probe);
(b) ``verify theorem 3.6 --hidden 16384 --vocab 10000`` certified with the kernels on the device,
    and the same run on the host's numpy kernels: verdicts and every count must be equal;
(c) a 32,768-state chain with dense transitions (2^30 entries of ``A``): the cost model's
    estimate of a whole ``verify theorem`` run on it (host stages: the model's exact form, its
    assumptions, the witness, exact cross-checks) and the device estimate of the float stage
    (:mod:`headprompt.verify.runtime.device_cost`); then that float stage measured: the certified
    backward kernel with its a priori bound for ``--sequences`` sequences on the device, and the
    host's numpy kernel on the first ``--host-sequences`` of them (the certified signs must agree
    wherever both decide). The chain is float (exact as the rationals its floats are), built in
    memory; nothing large is written.

Writes ``gpu-checks.json`` and ``gpu-checks.md`` (the device's name in both; ``--json-only``: the
JSON alone, the table on stdout) to ``--out``;
committed results go to ``benchmarks/results/gpu/``. ``--tiny`` shrinks every size, skips (a) and
runs the device kernels on torch CPU tensors (a test runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

FULL = {"hidden": 16384, "vocab": 10000, "samples": 10000, "dense_states": 32768, "dense_vocab": 10000, "sequences": 10200,
        "length": 8, "host_sequences": 4}
TINY = {"hidden": 1100, "vocab": 60, "samples": 400, "dense_states": 192, "dense_vocab": 50, "sequences": 300, "length": 6,
        "host_sequences": 40}


def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def timed(name: str, rows: list, fn) -> dict:
    """Run ``fn() -> dict``, recording wall and CPU seconds, or the error, as one row."""
    print(f"== {name}", flush=True)
    wall, cpu = time.perf_counter(), _cpu_seconds()
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    try:
        row = {"step": name, "ok": True, **fn()}
    except Exception as exc:                         # noqa: BLE001 - recorded, the next step runs
        row = {"step": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:600],
               "trace": traceback.format_exc()[-1500:]}
    row["wall_s"] = round(time.perf_counter() - wall, 2)
    row["cpu_s"] = round(_cpu_seconds() - cpu, 2)
    print(json.dumps({k: v for k, v in row.items() if k != "trace"})[:1500], flush=True)
    rows.append(row)
    return row


def device_info(tiny: bool) -> dict:
    import torch

    info = {"torch": torch.__version__, "python": platform.python_version(), "cores": os.cpu_count(),
            "load_1min": round(os.getloadavg()[0], 2)}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(device=torch.cuda.get_device_name(0), cuda=torch.version.cuda,
                    memory_gib=round(p.total_memory / 2 ** 30, 1))
    else:
        info["device"] = "cpu (torch, dry run)" if tiny else "no CUDA device"
    return info


def _device(tiny: bool):
    """The device argument of ``check`` and a context: CUDA, or in a dry run torch CPU tensors."""
    import contextlib

    import torch

    from headprompt.models.inference.device_messages import use_device

    if tiny and not torch.cuda.is_available():
        return "cpu", use_device(torch.device("cpu"))
    return "cuda", contextlib.nullcontext()


def step_pytest(out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "cuda", "-q", "-p", "no:cacheprovider", "-o",
                           "addopts=", "tests/verify/test_device.py", "tests/models/inference/test_device_messages.py"],
                          capture_output=True, text=True, timeout=240)
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    return {"exit": proc.returncode, "summary": last, "tail": (proc.stdout[-3000:] + proc.stderr[-1500:]).strip()}


def step_certify(size: dict, tiny: bool) -> dict:
    """(b): the same certified run on the device and on the host; every verdict and count equal."""
    import headprompt

    opts = dict(hidden=size["hidden"], vocab=size["vocab"], samples=size["samples"], mode="certified", progress=False)
    name, ctx = _device(tiny)
    t0 = time.perf_counter()
    with ctx:
        dev = headprompt.check(None, "3.6", device=name, **opts).to_dict()
    t_dev = time.perf_counter() - t0
    t0 = time.perf_counter()
    host = headprompt.check(None, "3.6", device="cpu", **opts).to_dict()
    t_host = time.perf_counter() - t0
    same = all(dev.get(k) == host.get(k) for k in ("verdict", "labels", "sequences", "identity", "witness"))
    return {"verdict": dev["verdict"], "device": dev["device"], "device_run_s": round(t_dev, 2),
            "host_run_s": round(t_host, 2), "same_verdicts_and_counts": same,
            "decided_by": dev["sequences"]["decided_by"] if dev.get("sequences") else None,
            "checked": (dev.get("sequences") or {}).get("checked"), "path": (dev.get("path") or {}).get("chosen")}


def _dense_chain(H: int, X: int, rng):
    """A chain with dense positive transitions (columns normalised in float) and 4 emitted tokens
    per state: its bound chain, three signed functionals split for the bound, the guard's floor
    and whether the bound is usable."""
    from fractions import Fraction

    from scipy import sparse

    from headprompt.models.inference import bounds as ib

    A = rng.random((H, H))
    A += 2.0 ** -20                                   # every entry positive and normal
    A /= A.sum(axis=0, keepdims=True)
    cols = np.repeat(np.arange(H), 4)
    rows = rng.integers(0, X, size=4 * H)
    W = sparse.csr_array((rng.random(4 * H) + 0.1, (rows, cols)), shape=(X, H))
    W.sum_duplicates()
    W = sparse.csr_array(W / W.sum(axis=0)[None, :])
    pi0 = np.full(H, 1.0 / H)
    chain = ib.make_chain(A, pi0, W, True)
    fun = [[Fraction(int(v)) for v in rng.integers(-3, 4, H)] for _ in range(3)]
    pos, neg, rmin, ok = ib.split_rows(fun)
    return chain, pos, neg, chain.floor_for(rmin), ok and chain.usable


def step_dense(size: dict, tiny: bool) -> dict:
    """(c): estimates of the whole run and of the float stage; the float stage measured."""
    import torch

    from headprompt.models.inference import bounds as ib
    from headprompt.models.inference.device_messages import KernelDevice, backward_contractions, device_label
    from headprompt.verify.runtime import device_cost

    H, X, n, t = size["dense_states"], size["dense_vocab"], size["sequences"], size["length"]
    out: dict = {"states": H, "tokens": X, "transition_entries": H * H, "sequences": n, "length": t}
    if X < H:
        out["assumptions"] = (f"with every column of A dense, H* is every state for any basis set B, so Assumption 3.5 "
                              f"needs {H} independent columns of W in R^{X}: it fails by counting (and 3.1, rank W <= "
                              f"{X} < {H}, for Theorem 3.3); a whole verify run answers assumptions-fail without "
                              "sequence checks, so only the float stage below is a GPU question")
    try:                                             # the host cost model's verdict on a whole run
        from headprompt.verify.reports import scale
        from headprompt.verify.runtime.cost import MAX_LARGE_BYTES, MAX_SECONDS

        est = scale.estimate(H, X, H * H, 4 * H, n, t, three_three=False)
        out["host_estimate"] = {"seconds": est["seconds"], "gib": round(est["bytes"] / 2 ** 30, 1),
                                "refused": est["seconds"] > MAX_SECONDS or est["bytes"] > MAX_LARGE_BYTES}
    except Exception as exc:                         # noqa: BLE001 - the cost model's API may move
        out["host_estimate"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    out["device_estimate"] = device_cost.device_kernel_estimate(H, X, H * H, 4 * H, n, t, dense_kernel=True)
    rng = np.random.default_rng(38)
    t0 = time.perf_counter()
    chain, pos, neg, floor, usable = _dense_chain(H, X, rng)
    out["build_s"] = round(time.perf_counter() - t0, 2)
    tokens = rng.integers(0, X, size=(n, t))
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    kd = KernelDevice(dev, device_label(dev))
    count = ib.backward_count(t, H) + 1 + H
    from headprompt.models.inference.device_probe import rounding_probe

    rounding_probe(dev)
    signs, decided = [], []
    t0 = time.perf_counter()
    for lo in range(0, n, 4096):
        m = backward_contractions(chain, np.ascontiguousarray(tokens[lo:lo + 4096].T), pos, neg, track=True, device=kd)
        s, d, _ = ib.certified_signs(m["P"], m["N"], count)
        signs.append(s)
        decided.append(d.all(axis=1) & (m["minpos"] >= floor) & usable)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    out["device_kernel_s"] = round(time.perf_counter() - t0, 2)
    signs, decided = np.concatenate(signs), np.concatenate(decided)
    out.update(device=kd.label, decided_by_bound=int(decided.sum()), to_exact=int((~decided).sum()),
               device_peak_gib=round(torch.cuda.max_memory_allocated() / 2 ** 30, 2) if dev.type == "cuda" else None)
    k = size["host_sequences"]
    t0 = time.perf_counter()
    host = backward_contractions(chain, np.ascontiguousarray(tokens[:k].T), pos, neg, track=True, device=None)
    out["host_kernel_s_for_first"] = [k, round(time.perf_counter() - t0, 2)]
    hs, hd, _ = ib.certified_signs(host["P"], host["N"], count)
    hd = hd.all(axis=1) & (host["minpos"] >= floor) & usable
    both = hd & decided[:k]
    out["host_device_signs_agree"] = bool(np.array_equal(hs[both], signs[:k][both]) and np.array_equal(hd, decided[:k]))
    return out


def render(result: dict) -> str:
    info = result["machine"]
    lines = [f"# Certified checks on {info.get('device')}", "",
             f"torch {info.get('torch')}, CUDA {info.get('cuda')}, {info.get('cores')} cores, "
             f"load {info.get('load_1min')}; {'dry run (--tiny)' if result['tiny'] else 'full sizes'}", "",
             "| step | ok | wall s | CPU s | result |", "|---|---|---|---|---|"]
    for r in result["steps"]:
        keep = {k: v for k, v in r.items() if k not in ("step", "ok", "wall_s", "cpu_s", "trace", "tail")}
        text = json.dumps(keep).replace("|", "\\|")
        lines.append(f"| {r['step']} | {r['ok']} | {r['wall_s']} | {r['cpu_s']} | {text} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/headprompt-gpu-checks"))
    ap.add_argument("--tiny", "--dry-run", action="store_true", help="tiny sizes on torch CPU tensors, no pytest")
    ap.add_argument("--steps", default="a,b,c", help="which of a, b, c to run (comma separated)")
    ap.add_argument("--json-only", action="store_true", help="write only gpu-checks.json (the table goes to stdout; "
                                                              "the device tool returns at most 8 files)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    size = TINY if args.tiny else FULL
    steps = set(args.steps.split(","))
    result = {"tiny": args.tiny, "sizes": size, "machine": device_info(args.tiny), "steps": []}
    if "a" in steps and not args.tiny:
        timed("a: pytest -m cuda (device tests)", result["steps"], lambda: step_pytest(out))
    if "b" in steps:
        timed(f"b: verify theorem 3.6 --hidden {size['hidden']} --vocab {size['vocab']} certified",
              result["steps"], lambda: step_certify(size, args.tiny))
    if "c" in steps:
        timed(f"c: {size['dense_states']} states, dense transitions: certified float stage",
              result["steps"], lambda: step_dense(size, args.tiny))
    (out / "gpu-checks.json").write_text(json.dumps(result, indent=1) + "\n")
    if not args.json_only:
        (out / "gpu-checks.md").write_text(render(result))
    print(render(result))
    return 0 if all(r["ok"] for r in result["steps"]) else 1


if __name__ == "__main__":
    sys.exit(main())
