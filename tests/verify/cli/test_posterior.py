"""``verify posterior`` end to end, checked against the brute-force oracle."""

import json
import subprocess
import sys
from fractions import Fraction

import numpy as np

from headprompt.models.hmm.files import load_instance, save_instance
from headprompt.models.generate.generators import random_exact_hmm
from headprompt.models.hmm.values import MemoryHMM
from headprompt.verify.cli.main import main

from tests import oracle


def test_exact_json_matches_path_sums(tmp_path, capsys):
    hmm = random_exact_hmm(3, 3, rng=np.random.default_rng(0), max_denominator=60, density=0.7)
    path = tmp_path / "h.json"
    save_instance(hmm, path)
    tokens = [2, 0, 1, 1]
    assert main(["posterior", "--hmm", str(path), "--seq", "2 0 1 1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sequence"] == tokens and out["mode"] == "exact"
    assert [Fraction(v) for v in out["posterior"]] == oracle.path_posterior(hmm, tokens, 0)
    for i, row in enumerate(out["G"]):
        assert [Fraction(v) for v in row] == oracle.path_conditional(hmm, tokens, i)
    assert all(isinstance(v, str) for v in out["posterior"])


def test_float_json_is_numbers(tmp_path, capsys):
    hmm = random_exact_hmm(3, 2, rng=np.random.default_rng(1))
    path = tmp_path / "h.json"
    save_instance(hmm, path)
    # float results are uncertified: exit 5, never 0
    assert main(["posterior", "--hmm", str(path), "--seq", "1 0", "--json", "--mode", "float"]) == 5
    out = json.loads(capsys.readouterr().out)
    assert all(isinstance(v, float) for v in out["posterior"])
    np.testing.assert_allclose(out["posterior"], [float(v) for v in oracle.path_posterior(hmm, [1, 0], 0)])


def test_memory_hmm_file(tmp_path, capsys):
    mhmm = MemoryHMM.create(2, 2, 1, [["1/2", "1/3"], ["1/2", "2/3"]],
                            [[["3/4", "1/4"], ["1/5", "1/2"]], [["1/4", "3/4"], ["4/5", "1/2"]]],
                            ["1/2", "1/2"], pM_cells=[["1/3", "2/3"], ["1/2", "1/2"]], mu=[1, -1], target_cell=1)
    path = tmp_path / "m.json"
    save_instance(mhmm, path)
    assert load_instance(path).pM_cells is not None
    assert main(["posterior", "--hmm", str(path), "--seq", "0 1 1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [Fraction(v) for v in out["posterior"]] == oracle.memory_posterior(mhmm, [0, 1, 1], 1)
    assert [Fraction(v) for v in out["G"][2]] == oracle.memory_conditional(mhmm, [0, 1, 1], 2)


def test_console_script_human_output(tmp_path):
    hmm = random_exact_hmm(2, 2, rng=np.random.default_rng(2))
    path = tmp_path / "h.json"
    save_instance(hmm, path)
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "posterior", "--hmm", str(path), "--seq", "0 1"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "P[H_0 | X_{1:T} = x]" in proc.stdout


def test_impossible_sequence_warns(tmp_path, capsys):
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"kind": "hmm", "A": [[1, 0], [0, 1]], "W": [[1, 0], [0, 1]], "pi0": [1, 0]}))
    assert main(["posterior", "--hmm", str(path), "--seq", "1", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["posterior"] == ["0", "0"]
    assert "Pr(X = x) = 0" in captured.err
