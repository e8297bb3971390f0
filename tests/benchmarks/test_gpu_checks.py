"""The prepared GPU script (benchmarks/gpu_checks.py) runs end to end as a dry run on the CPU
(``--tiny``: small sizes, the device kernels on torch CPU tensors), so a lent GPU's few minutes
are not spent finding a typo: both timed steps succeed, the device and host verdicts and counts
are equal, the certified signs of the dense-transition stage agree with the host kernel's, and
the JSON and the table name the device."""

import json

from benchmarks.gpu_checks import main


def test_the_dry_run_passes_and_writes_json_and_a_table(tmp_path):
    assert main(["--tiny", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "gpu-checks.json").read_text())
    steps = {r["step"][0]: r for r in result["steps"]}
    assert set(steps) == {"b", "c"} and all(r["ok"] for r in steps.values())
    b, c = steps["b"], steps["c"]
    assert b["verdict"] == "verified" and b["same_verdicts_and_counts"] and b["path"] == "large"
    assert b["device"] == "cpu (torch)"                    # the kernels ran on the torch device
    assert c["host_device_signs_agree"] and c["decided_by_bound"] + c["to_exact"] == c["sequences"]
    assert c["device_estimate"]["device_bytes"] >= 8 * c["transition_entries"]
    table = (tmp_path / "gpu-checks.md").read_text()
    assert result["machine"]["device"] in table and table.count("| True |") == 2
