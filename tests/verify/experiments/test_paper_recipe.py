"""CPU dry run of the paper-recipe GPU script (benchmarks/paper_recipe.py) at the tiny scale:
the pretrainings of two sizes run as concurrent processes, a time limit pauses them with a saved
checkpoint, the next call resumes and finishes them, and the fidelity (position-0 gate, TV on
the downstream test split) and the verdicts with and without the gate are written."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.timeout(1200)          # four process starts and two tiny pretrainings: minutes on a busy machine
@pytest.mark.skipif(not (ROOT / "benchmarks" / "paper_recipe.py").exists(), reason="needs the repository")
def test_paper_recipe_dry_run_pauses_resumes_and_reports_fidelity(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    micro = tmp_path / "micro.json"            # the tiny scale made smaller still: a dry run, not a result
    micro.write_text(json.dumps({"model": {"block_size": 32, "n_layer": 1, "n_head": 2, "n_embd": 16},
                                 "pretrain": {"max_steps": 20, "eval_every": 10, "gate_sequences": 16,
                                              "gate_length": 9, "batch_size": 8},
                                 "task": {"length": 8, "num_train": 60, "num_val": 20, "num_test": 40},
                                 "tune": {"epochs": 1, "num_prompts": 4}, "gate_sequences": 32}))
    cmd = [sys.executable, "-m", "benchmarks.paper_recipe", "--scale", "tiny", "--sizes", "4", "5",
           "--device", "cpu", "--out", str(tmp_path / "run"), "--seed", "3", "--config", str(micro)]
    first = subprocess.run(cmd + ["--minutes", "0.0001"], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    status = json.loads((tmp_path / "run" / "status.json").read_text())
    assert [s["state"] for s in status["pretraining"]] == ["paused", "paused"]
    assert len(list((tmp_path / "run" / "cache").glob("mlm-*.partial"))) == 2        # saved to resume
    second = subprocess.run(cmd + ["--tune"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr
    status = json.loads((tmp_path / "run" / "status.json").read_text())
    assert [s["state"] for s in status["pretraining"]] == ["done", "done"]
    fid = json.loads((tmp_path / "run" / "fidelity.json").read_text())
    for f in fid:
        assert 0 <= f["gate"]["tv0"] <= f["gate"]["bound"] and 0 <= f["downstream_test_tv"] <= f["downstream_test_tv_max"] <= 1
    sens = json.loads((tmp_path / "run" / "sensitivity.json").read_text())
    assert {p["id"] for p in sens["with_gate"]} == {p["id"] for p in sens["without_gate"]}
    results = (tmp_path / "run" / "fig3-left" / "results.csv").read_text()
    assert results.count("\n") > 1
