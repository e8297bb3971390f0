"""``verify experiment --ray``: the (setting, trial) jobs as tasks on a local Ray instance give
the same numbers as the in-process run with the same seeds. Needs the ``cluster`` extra
(``pip install -e ".[cluster]"``); skipped without Ray.

The Ray run happens in a child process, in its own session, with a bounded object store and a
wall-clock limit: a Ray that cannot start (e.g. its workers die under a memory cap, ``mmap
failed``) or hangs in a C-level wait makes this test fail after :data:`LIMIT_S` seconds (the
child's process group is killed) instead of hanging the whole suite; pytest's own ``signal``
timeout cannot interrupt such a wait.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("ray")

from tests.verify.experiments.test_figure3 import MICRO   # noqa: E402

pytestmark = pytest.mark.ray

CPU = torch.device("cpu")
ROOT = Path(__file__).resolve().parents[3]
LIMIT_S = 240
OBJECT_STORE_BYTES = 96 * 2 ** 20           # Ray's minimum is 75 MiB; its default is 30% of memory

CHILD = """
import json, sys
import ray, torch
from headprompt.verify.experiments.figure3 import run_experiment
from tests.verify.experiments.test_figure3 import MICRO
from tests.verify.experiments.test_ray import _numbers
out = sys.argv[1]
ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
         object_store_memory=int(sys.argv[2]))
try:
    remote = run_experiment("fig3-right", "tiny", device=torch.device("cpu"), trials=1, out=out + "/ray",
                            progress=False, config=MICRO, ray=True, threads=1)
finally:
    ray.shutdown()
json.dump({"jobs": remote["jobs"], "numbers": _numbers(remote)}, open(out + "/ray.json", "w"))
"""


def _numbers(summary):
    keep = ("setting", "method", "model", "accuracy", "ci95", "trials")
    return ([{k: r[k] for k in keep} for r in summary["rows"] + summary["control_rows"]],
            [[{k: t[k] for k in ("trial", "tv", "loss_gap", "passed", "steps")} for t in q["trials"]]
             for q in summary["quality"]])


def _run_bounded(args, env, limit):
    """Run ``args`` in a new session; on timeout kill its whole process group (Ray's raylet and
    workers with it) and fail. Returns the completed process."""
    child = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    try:
        out, _ = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, _ = child.communicate()
        pytest.fail(f"the Ray run did not finish in {limit} s (killed); last output:\n{out[-2000:]}")
    return child.returncode, out


def test_ray_run_equals_in_process_run(tmp_path, monkeypatch):
    from headprompt.verify.experiments.figure3 import run_experiment

    threads = torch.get_num_threads()
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "local-cache"))
    try:
        local = run_experiment("fig3-right", "tiny", device=CPU, trials=1, out=tmp_path / "local", progress=False,
                               config=MICRO, threads=1)
    finally:
        torch.set_num_threads(threads)
    env = {**os.environ, "HEADPROMPT_CACHE": str(tmp_path / "ray-cache"),   # nothing reused: Ray recomputes
           "PYTHONPATH": os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    code, out = _run_bounded([sys.executable, "-c", CHILD, str(tmp_path), str(OBJECT_STORE_BYTES)], env, LIMIT_S)
    assert code == 0, f"the Ray run failed (exit {code}):\n{out[-3000:]}"
    remote = json.loads((tmp_path / "ray.json").read_text())
    assert remote["jobs"] == {"total": 2, "reused": 0, "failed": 0}
    assert remote["numbers"] == json.loads(json.dumps(_numbers(local)))
    assert (tmp_path / "ray" / "fig3-right.png").exists()


def test_a_hung_child_is_killed_and_fails_the_test():
    """The bound itself: a child stuck in a C-level wait (``signal.pause``, as Ray's ``get`` on a
    dead worker) is killed after the limit and the test fails, promptly."""
    with pytest.raises(pytest.fail.Exception, match="did not finish in 2 s"):
        _run_bounded([sys.executable, "-c", "import signal; signal.pause()"], dict(os.environ), 2)


@pytest.mark.parametrize("caller", ["experiments", "large path"])
def test_an_unreachable_cluster_is_one_input_error_in_seconds(caller):
    """Both users of --ray (Figure 3's jobs and the large path's sequence checks) go through
    the same start-up, and both refuse a dead address before any work."""
    import socket
    import time

    import numpy as np

    from headprompt.models.exceptions import InputError
    from headprompt.verify.experiments.ray_tasks import run_on_ray
    from headprompt.verify.checks.vanilla.scale_check import check_on_ray

    with socket.socket() as s:                  # a port nobody listens on once this socket closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(InputError, match=rf"^--ray 127.0.0.1:{port}: cannot reach the Ray cluster there") as info:
        if caller == "experiments":
            run_on_ray([], f"127.0.0.1:{port}", lambda spec, result: None)
        else:
            check_on_ray(None, [], None, np.zeros((0, 1), dtype=np.int64), True, f"127.0.0.1:{port}")
    assert time.monotonic() - start < 10 and "\n" not in str(info.value)
