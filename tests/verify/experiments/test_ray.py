"""``verify experiment --ray``: the (setting, trial) jobs as tasks on a local Ray instance give
the same numbers as the in-process run with the same seeds. Needs the ``cluster`` extra
(``pip install -e ".[cluster]"``); skipped without Ray."""

import pytest
import torch

ray = pytest.importorskip("ray")

from tests.verify.experiments.test_figure3 import MICRO   # noqa: E402

pytestmark = pytest.mark.ray

CPU = torch.device("cpu")


def _numbers(summary):
    keep = ("setting", "method", "model", "accuracy", "ci95", "trials")
    return ([{k: r[k] for k in keep} for r in summary["rows"] + summary["control_rows"]],
            [[{k: t[k] for k in ("trial", "tv", "loss_gap", "passed", "steps")} for t in q["trials"]]
             for q in summary["quality"]])


def test_ray_run_equals_in_process_run(tmp_path, monkeypatch):
    from headprompt.verify.experiments.figure3 import run_experiment

    threads = torch.get_num_threads()
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "local-cache"))
    local = run_experiment("fig3-right", "tiny", device=CPU, trials=1, out=tmp_path / "local", progress=False,
                           config=MICRO, threads=1)
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "ray-cache"))   # nothing reused: Ray recomputes
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        remote = run_experiment("fig3-right", "tiny", device=CPU, trials=1, out=tmp_path / "ray", progress=False,
                                config=MICRO, ray=True, threads=1)
    finally:
        ray.shutdown()
        torch.set_num_threads(threads)
    assert remote["jobs"] == {"total": 2, "reused": 0, "failed": 0}
    assert _numbers(remote) == _numbers(local)
    assert (tmp_path / "ray" / "fig3-right.png").exists()
