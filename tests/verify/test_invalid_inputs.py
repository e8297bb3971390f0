"""Every bad input: one line on stderr naming the problem, exit code 2, never a traceback."""

import json

import pytest

from headprompt.verify.cli import main

GOOD = {"kind": "hmm", "A": [[0.9, 0.2], [0.1, 0.8]], "W": [[0.7, "1/3"], [0.3, "2/3"]],
        "pi0": [0.5, 0.5], "mu": [1, -1]}


def _with(**changes):
    d = dict(GOOD)
    d.update(changes)
    return json.dumps(d)


CASES = [
    # (file text, --seq, extra args, expected fragment of the message)
    (_with(A=[[0.9, 0.2], [0.2, 0.8]]), "0 1", [], "A: column 0 sums to 11/10"),
    (_with(W=[[0.7, 0.3], [0.3, 0.6]]), "0 1", [], "W: column 1 sums to 9/10"),
    (_with(pi0=[1.5, -0.5]), "0 1", [], "pi0: entry [1] is -1/2"),
    (_with(A=[[0.9, 0.2, 0.0], [0.1, 0.8, 1.0]]), "0 1", [], "A: expected a nonempty square matrix"),
    (_with(W=[[0.7, 0.3, 0.2], [0.3, 0.7, 0.8]]), "0 1", [], "W: expected shape (2, 2)"),
    (_with(pi0=[1]), "0 1", [], "pi0: expected shape (2,)"),
    (_with(mu=[1, 2, 3]), "0 1", [], "mu: expected shape (2,)"),
    (_with(A=[]), "0 1", [], "A: expected a nonempty square matrix"),
    (_with(A=[[0.9, 0.2], [0.1]]), "0 1", [], "ragged"),
    (_with(A=[[0.9, "x"], [0.1, 0.8]]), "0 1", [], "cannot read 'x'"),
    (_with(A=[[0.9, True], [0.1, 0.8]]), "0 1", [], "boolean"),
    (GOOD and json.dumps(GOOD).replace("0.9", "NaN"), "0 1", [], "NaN is not a number"),
    (GOOD and json.dumps(GOOD).replace("0.9", "Infinity"), "0 1", [], "Infinity is not a number"),
    ("{\"kind\": \"hmm\", ", "0 1", [], "invalid JSON at line 1"),
    ("[1, 2]", "0 1", [], "expected a JSON object"),
    (_with(kind="tree"), "0 1", [], "'kind' must be 'hmm' or 'memory-hmm'"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "W"}), "0 1", [], "missing key 'W'"),
    (_with(extra=1), "0 1", [], "unknown key 'extra'"),
    (json.dumps(GOOD), "0 2", [], "token 2 at position 1 is outside the vocabulary 0..1"),
    (json.dumps(GOOD), "0 -1", [], "token -1 at position 1 is outside"),
    (json.dumps(GOOD), "0 a", [], "'a' at position 1 is not an integer"),
    (json.dumps(GOOD), "  ", [], "found nothing"),
    (json.dumps(GOOD), "0 1", ["--mode", "certified"], "invalid choice: 'certified'"),
    (json.dumps({"kind": "memory-hmm", "cells": 1, "memory_values": 2, "syntax_states": 1,
                 "A": [[1]], "W": [[[1, 0]], [[0, 1]]], "pi0": [1], "pM": [0.5, 0.5],
                 "pM_cells": [[0.5, 0.5]]}), "0", [], "exactly one of pM"),
    (json.dumps({"kind": "memory-hmm", "cells": 0, "memory_values": 2, "syntax_states": 1,
                 "A": [[1]], "W": [[[1, 0]]], "pi0": [1], "pM": [1]}), "0", [], "must be >= 1"),
    (json.dumps({"kind": "memory-hmm", "cells": 1, "memory_values": 2, "syntax_states": 1,
                 "A": [[1]], "W": [[[1], [0]], [[0], [1]]], "pi0": [1], "pM": [0.5, 0.5],
                 "target_cell": 3}), "0", [], "target_cell: expected 0..0"),
]


@pytest.mark.parametrize("text, seq, extra, fragment", CASES)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, text, seq, extra, fragment):
    path = tmp_path / "instance.json"
    path.write_text(text)
    code = main(["posterior", "--hmm", str(path), "--seq", seq, *extra])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert fragment in lines[0]
    assert "Traceback" not in err


def test_missing_file_and_missing_arguments(tmp_path, capsys):
    assert main(["posterior", "--hmm", str(tmp_path / "nope.json"), "--seq", "0"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["posterior", "--seq", "0"]) == 2
    assert "required" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_float_mode_accepts_rounded_sums_exact_mode_does_not(tmp_path, capsys):
    path = tmp_path / "rounded.json"
    path.write_text(_with(A=[[0.9, 0.3333333333333], [0.1, 0.6666666666666]]))
    assert main(["posterior", "--hmm", str(path), "--seq", "0 1", "--mode", "float", "--json"]) == 0
    capsys.readouterr()
    assert main(["posterior", "--hmm", str(path), "--seq", "0 1"]) == 2
    assert "A: column 1 sums to 9999999999999/10000000000000" in capsys.readouterr().err
