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


def test_an_impossible_sequence_is_flagged_and_exits_2(tmp_path, capsys):
    """Pr(X = x) = 0 (path sums agree): the JSON says outside_support, no label is given, and
    the exit code is 2 with one line naming the sequence; a possible one is not flagged."""
    inst = {"kind": "hmm", "A": [[1, 0], [0, 1]], "W": [[1, 0], [0, 1]], "pi0": [1, 0], "mu": [1, -1]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(inst))
    hmm = load_instance(path)
    assert sum(oracle.path_posterior(hmm, [1], 0)) == 0 and sum(oracle.path_posterior(hmm, [0], 0)) == 1
    assert main(["posterior", "--hmm", str(path), "--seq", "1", "--json"]) == 2
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["outside_support"] is True and out["label"] is None and out["posterior"] == ["0", "0"]
    assert captured.err.strip().splitlines() == [captured.err.strip()] and "probability 0" in captured.err
    assert main(["posterior", "--hmm", str(path), "--seq", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outside_support"] is False and out["label"] == 1 and out["mu_dot_posterior"] == "1"


def test_human_output_shows_decimals_the_task_and_the_exact_values_on_request(tmp_path, capsys):
    hmm = random_exact_hmm(3, 3, rng=np.random.default_rng(4), max_denominator=60, density=0.7).with_task([1, -2, 1])
    path = tmp_path / "h.json"
    save_instance(hmm, path)
    tokens = [2, 0, 1]
    post = oracle.path_posterior(hmm, tokens, 0)
    margin = sum(m * p for m, p in zip([1, -2, 1], post))
    assert main(["posterior", "--hmm", str(path), "--seq", "2 0 1"]) == 0
    out = capsys.readouterr().out
    assert f"{float(post[0]):.6g}" in out and str(post[0]) not in out          # decimals by default
    assert f"mu . P = {float(margin):.6g}" in out and f"F*(x) = {int(margin >= 0)}" in out
    assert "z=0" in out and "x_i" in out
    assert main(["posterior", "--hmm", str(path), "--seq", "2 0 1", "--exact"]) == 0
    out = capsys.readouterr().out
    assert str(post[0]) in out and f"mu . P = {margin}" in out
    for value in oracle.path_conditional(hmm, tokens, 1):
        assert str(value) in out


def test_a_wide_vocabulary_prints_no_g_table(tmp_path, capsys):
    """|X| beyond the printed width: one line instead of a table with a column per token (a
    million-token file took 3.6 GB to print); --json still has every value."""
    from headprompt.verify.cli.posterior import PRINTED_TOKENS

    X = PRINTED_TOKENS + 1
    W = [[Fraction(1, X)] * 2 for _ in range(X)]
    hmm = load_instance_from(tmp_path, {"kind": "hmm", "A": [[1, 0], [0, 1]], "W": [[str(w) for w in r] for r in W],
                                        "pi0": ["1/2", "1/2"]})
    assert main(["posterior", "--hmm", hmm, "--seq", "0 1"]) == 0
    out = capsys.readouterr().out
    assert f"has |X| = {X} columns" in out and "z=0" not in out
    assert main(["posterior", "--hmm", hmm, "--seq", "0 1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["G"][0]) == X


def load_instance_from(tmp_path, data) -> str:
    """Write ``data`` as an instance file in ``tmp_path``; its path."""
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_exact_printing_with_float_mode_is_refused(tmp_path, capsys):
    """`--mode float --exact` used to drop --exact without a word."""
    path = load_instance_from(tmp_path, {"kind": "hmm", "A": [[1, 0], [0, 1]], "W": [["1/2", "1/2"], ["1/2", "1/2"]],
                                         "pi0": ["1/2", "1/2"]})
    assert main(["posterior", "--hmm", path, "--seq", "0 1", "--mode", "float", "--exact"]) == 2
    assert "--exact prints exact rationals" in capsys.readouterr().err
