"""Every bad input: one line on stderr naming the problem, exit code 2, never a traceback."""

import json

import pytest

from headprompt.verify.cli.main import main

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
    assert main(["posterior", "--hmm", str(path), "--seq", "0 1", "--mode", "float", "--json"]) == 5   # uncertified
    capsys.readouterr()
    assert main(["posterior", "--hmm", str(path), "--seq", "0 1"]) == 2
    assert "A: column 1 sums to 9999999999999/10000000000000" in capsys.readouterr().err


# ---------------------------------------------------------------- limits decided from sizes (issue 9)

def _run(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_2(code, err, *fragments):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], lines[0]


MEMORY = {"kind": "memory-hmm", "cells": 1, "memory_values": 2, "syntax_states": 1,
          "A": [[1]], "W": [[[0.9], [0.2]], [[0.1], [0.8]]], "pi0": [1], "pM": [0.5, 0.5], "mu": [1, -1],
          "target_cell": 0}

LIMIT_CASES = [
    # (file text, fragments of the one stderr line); every one is refused before any work
    (json.dumps(GOOD).replace("0.9", "1e999999999", 1), ["1e999999999", "digits", "4000"]),
    (json.dumps(GOOD).replace("0.9", "1e-5000", 1), ["1e-5000", "5001 digits", "limit"]),
    (json.dumps(GOOD).replace("[1, -1]", "[" + "7" * 5000 + ", -1]"), ["5000 digits", "limit is 4000"]),
    (_with(mu=["1/" + "3" * 5000, -1]), ["5000-digit part", "limit is 4000"]),
    (_with(mu=["1e-99999", -1]), ["100000 digits"]),
    ("[" * 3000 + "]" * 3000, ["nested", "limit is 32"]),
    ('{"kind": "hmm", "kind": "hmm", "A": [[1]], "W": [[1]], "pi0": [1]}', ["'kind' appears twice"]),
    (json.dumps({**MEMORY, "cells": 40, "memory_values": 2, "syntax_states": 1,
                 "pM_cells": [[0.5, 0.5]] * 40, "pM": None}).replace('"pM": null, ', ""),
     ["lifted chain", "2^40 x 40 x 1", "limit in exact mode is 400"]),
    (json.dumps({**MEMORY, "cells": 10**9}), ["lifted chain", "about 10^"]),
    (json.dumps({k: v for k, v in {**MEMORY, "cells": 2, "syntax_states": 1, "A": [[0.5, 0.5], [0.5, 0.5]],
                                   "W": [[[1, 1]], [[0, 0]]], "pi0": [0.5, 0.5],
                                   "pM": [0.25] * 4}.items() if k != "target_cell"}),
     ["missing key 'target_cell'", "2 cells"]),
]


@pytest.mark.parametrize("text, fragments", LIMIT_CASES)
def test_limits_refused_up_front_with_one_line(tmp_path, capsys, text, fragments):
    path = tmp_path / "instance.json"
    path.write_text(text)
    code, out, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq", "0"])
    _one_line_2(code, err, *fragments)
    assert out == ""


def test_float_mode_refuses_values_float64_cannot_hold(tmp_path, capsys):
    big = tmp_path / "big.json"
    big.write_text(_with(mu=[1e400 if False else 0, -1]).replace("[0, -1]", "[1e400, -1]"))
    code, out, err = _run(capsys, ["posterior", "--hmm", str(big), "--seq", "0", "--mode", "float"])
    _one_line_2(code, err, "mu[0]", "beyond the float64 range", "--mode exact")
    # exact mode reads 1e400 exactly (401 digits is within the limit)
    assert _run(capsys, ["posterior", "--hmm", str(big), "--seq", "0", "--json"])[0] == 0
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps(GOOD).replace('"W": [[0.7, "1/3"], [0.3, "2/3"]]',
                                             '"W": [[1e-400, "1/3"], ["1-1e-400", "2/3"]]')
                    .replace('"1-1e-400"', '"' + "0." + "9" * 400 + '"'))
    code, out, err = _run(capsys, ["posterior", "--hmm", str(tiny), "--seq", "0", "--mode", "float"])
    _one_line_2(code, err, "W[0, 0]", "would become 0 in float64")


def test_files_that_are_not_regular_are_refused_without_blocking(tmp_path, capsys):
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = _run(capsys, ["posterior", "--hmm", str(fifo), "--seq", "0"])      # would block if opened
    _one_line_2(code, err, "not a regular file")
    code, _, err = _run(capsys, ["posterior", "--hmm", "/proc/self/mem", "--seq", "0"])
    _one_line_2(code, err, "/proc/self/mem")
    code, _, err = _run(capsys, ["posterior", "--hmm", str(tmp_path), "--seq", "0"])
    _one_line_2(code, err, "is a directory")


def test_file_size_limit(tmp_path, capsys, monkeypatch):
    from headprompt.models.hmm import files as instances

    monkeypatch.setattr(instances, "MAX_FILE_BYTES", 100)
    path = tmp_path / "instance.json"
    path.write_text(json.dumps(GOOD) + " " * 200)
    code, _, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq", "0"])
    _one_line_2(code, err, "bytes", "limit")


THEOREM_FLAG_CASES = [
    (["theorem", "3.3", "--memory", "3"], ["--memory does not apply to Theorem 3.3"]),
    (["theorem", "3.6", "--cells", "2"], ["--cells does not apply to Theorem 3.6"]),
    (["theorem", "C.6", "--hidden", "25"], ["--hidden 25 (with the default --memory 3, --cells 2)", "450 states"]),
    (["theorem", "4.3", "--memory", "5", "--cells", "3"], ["--memory 5 --cells 3 (with the default --hidden 3)"]),
    (["theorem", "3.6", "--seed", "-1"], ["--seed -1", "nonnegative"]),
    (["theorem", "3.6", "--exhaustive", "--samples", "5"], ["--samples does not apply with --exhaustive"]),
    (["theorem", "3.6", "--length", "4096"], ["sampled tokens", "limit is 20000000"]),
    (["theorem", "3.6", "--samples", "1000000", "--length", "32"], ["32000000 sampled tokens"]),
    (["theorem", "3.6", "--length", "4000", "--samples", "1000"], ["minutes (estimate)", "limit is 10 minutes"]),
    (["theorem", "3.6", "--length", "256", "--samples", "78000", "--mode", "exact"],
     ["minutes (estimate)", "limit is 10 minutes", "--mode certified"]),
    (["theorem", "4.3", "--exhaustive", "--length", "12"], ["--exhaustive --length 12", "limit is 10 minutes"]),
    (["theorem", "3.6", "--exhaustive", "--length", "9"], ["--exhaustive --length 9"]),
    (["experiment", "fig3-left", "--trials", "0"], ["--trials: expected a positive integer, found 0"]),
]


@pytest.mark.parametrize("argv, fragments", THEOREM_FLAG_CASES)
def test_flags_and_work_limits_refused_before_work(capsys, argv, fragments):
    import time

    start = time.perf_counter()
    code, out, err = _run(capsys, argv)
    _one_line_2(code, err, *fragments)
    assert out == ""
    assert time.perf_counter() - start < 30          # decided from sizes, before any long work


def test_flags_that_do_not_apply_to_a_file(tmp_path, capsys):
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(GOOD))
    code, _, err = _run(capsys, ["theorem", "3.6", "--hmm", str(path), "--vocab", "3"])
    _one_line_2(code, err, "--vocab does not apply with --hmm")


def test_out_is_checked_before_work(tmp_path, capsys):
    code, _, err = _run(capsys, ["theorem", "3.6", "--hidden", "5", "--out", str(tmp_path)])
    _one_line_2(code, err, "is a directory")
    code, _, err = _run(capsys, ["theorem", "3.6", "--hidden", "5", "--out", str(tmp_path / "no" / "x.json")])
    _one_line_2(code, err, "does not exist")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        import os

        if not os.access(locked, os.W_OK):                      # (root can write anyway)
            code, _, err = _run(capsys, ["counterexample", "3.3", "--hidden", "5", "--out", str(locked / "x.json")])
            _one_line_2(code, err, "no write permission")
    finally:
        locked.chmod(0o700)


def test_no_arguments_prints_usage_fast(capsys):
    import time

    start = time.perf_counter()
    code, _, err = _run(capsys, [])
    assert code == 2 and err.startswith("usage: verify") and "theorem" in err and "posterior" in err
    assert time.perf_counter() - start < 2            # no subcommand module (torch) imported


def test_assumption_35_search_limit_is_a_clear_exit_2(monkeypatch, tmp_path, capsys):
    import headprompt.constructions.vanilla as cv
    from headprompt.verify.checks.vanilla import assumptions

    real = cv.find_essential_sets
    monkeypatch.setattr(assumptions, "find_essential_sets", lambda hmm: real(hmm, max_nodes=0))
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(GOOD))
    code, _, err = _run(capsys, ["assumptions", "3.6", "--hmm", str(path)])
    _one_line_2(code, err, "Assumption 3.5 cannot be decided", "too large")


def test_exact_posterior_length_limit_and_seq_file(tmp_path, capsys):
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(GOOD))
    seq = tmp_path / "seq.txt"
    seq.write_text("0 1\n" * 5000)                                 # 10,000 tokens
    code, _, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq-file", str(seq)])
    _one_line_2(code, err, "10000 tokens", "--mode float")
    code, out, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq-file", str(seq), "--mode", "float", "--json"])
    assert code == 5 and len(json.loads(out)["G"]) == 10_000             # 5: float, uncertified
    code, _, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq", "0", "--seq-file", str(seq)])
    _one_line_2(code, err, "not allowed with argument")
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1 x")
    code, _, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq-file", str(bad)])
    _one_line_2(code, err, f"--seq-file {bad}", "'x' at position 2")


def test_experiment_out_and_cache_that_are_files(tmp_path, capsys, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = _run(capsys, ["experiment", "fig3-left", "--out", str(afile)])
    _one_line_2(code, err, "--out", "is not a directory")
    monkeypatch.setenv("HEADPROMPT_CACHE", str(afile))
    code, _, err = _run(capsys, ["experiment", "fig3-left", "--out", str(tmp_path / "new")])
    _one_line_2(code, err, "HEADPROMPT_CACHE", "is not a directory")


def test_large_lifted_chain_is_refused_in_float_mode_too(tmp_path, capsys):
    """A small file whose lifted chain has 2^8 x 8 x 12 = 24,576 states (it used to allocate
    gigabytes in float mode and run for minutes in exact mode)."""
    cells, S = 8, 12
    n = cells * S
    data = {"kind": "memory-hmm", "cells": cells, "memory_values": 2, "syntax_states": S,
            "A": [[1 if i == j else 0 for j in range(n)] for i in range(n)],
            "W": [[[1] * n, [0] * n], [[0] * n, [1] * n]], "pi0": ["1/%d" % n] * n,
            "pM_cells": [[0.5, 0.5]] * cells, "mu": [1, -1], "target_cell": 0}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    for mode in ("exact", "float"):
        code, _, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq", "0", "--mode", mode])
        _one_line_2(code, err, "24576 states", f"limit in {mode} mode")


def test_exact_memory_posterior_on_a_long_sequence(tmp_path, capsys):
    path = tmp_path / "mem.json"
    path.write_text(json.dumps(MEMORY))
    seq = " ".join("01"[i % 3 == 0] for i in range(1000))
    code, out, err = _run(capsys, ["posterior", "--hmm", str(path), "--seq", seq, "--json"])
    assert code == 0, err
    post = json.loads(out)["posterior"]
    from fractions import Fraction

    assert sum(Fraction(v) for v in post) == 1


def test_without_mode_a_run_too_long_for_exact_arithmetic_is_certified():
    from types import SimpleNamespace

    from headprompt.models.exceptions import LimitError
    from headprompt.verify.runtime.cost import check_work

    big = SimpleNamespace(num_states=1000, num_tokens=100)
    args = SimpleNamespace(mode=None, length=None, samples=10_000, exhaustive=False)
    mode, note = check_work(args, big)
    assert mode == "certified" and "faster proof" in note and "--mode exact" in note
    with pytest.raises(LimitError, match="--mode certified"):
        check_work(SimpleNamespace(**{**vars(args), "mode": "exact"}), big)
    import numpy as np

    from headprompt.models.generate.generators import prompt_friendly_hmm

    small, _ = prompt_friendly_hmm(25, 10, rng=np.random.default_rng(0))   # a real one: exact memory is measured
    assert check_work(args, small) == ("exact", None)       # about a second of exact work: stays exact
    mid, _ = prompt_friendly_hmm(100, 10, rng=np.random.default_rng(0))
    mode, note = check_work(args, mid)                       # exact estimated far slower: the faster proof
    assert mode == "certified" and "faster proof" in note
    assert check_work(SimpleNamespace(**{**vars(args), "mode": "float"}), big) == ("float", None)


def test_an_exact_fallback_beyond_the_limit_is_refused_not_run(capsys):
    """At length 4000 the certified bound's underflow guard sends whole batches back to exact
    arithmetic; a batch estimated beyond the limit is refused (exit 2) instead of exhausting
    memory, and without --mode such a length stays exact (and is refused by its estimate)."""
    code = main(["theorem", "3.6", "--length", "4000", "--samples", "10", "--mode", "certified"])
    err = capsys.readouterr().err
    assert code == 2 and "could not be decided by the certified bound" in err and len(err.strip().splitlines()) == 1


# ---- found by an input audit ---------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["theorem", "3.6", "--hmm", ""], ["theorem", "3.6", "--witness", ""], ["counterexample", "3.6", "--hmm", " "],
    ["separate", "--hmm", ""], ["posterior", "--hmm", "", "--seq", "0"], ["theorem", "3.6", "--certificate", ""],
    ["experiment", "fig3-left", "--plan", ""],
])
def test_an_empty_path_is_refused_not_read_as_no_flag(argv, capsys):
    """`--hmm ''` used to fall back to a generated instance (and report on it, exit 0)."""
    assert main(argv) == 2
    assert "expected a path, found an empty string" in capsys.readouterr().err


def test_the_api_refuses_an_empty_path_and_reads_an_empty_witness():
    """`check(hmm, '3.6', witness={})` used to check the paper's witness instead (exit-0 verdict)."""
    import headprompt

    hmm = headprompt.HMM.create([[1, 0], [0, 1]], [["3/4", "1/4"], ["1/4", "3/4"]], ["1/2", "1/2"], mu=[1, -1])
    with pytest.raises(headprompt.InputError, match="needs 'u'"):
        headprompt.check(hmm, "3.6", witness={})
    with pytest.raises(headprompt.InputError, match="expected a path, found an empty string"):
        headprompt.check(hmm, "3.6", witness="")
    with pytest.raises(headprompt.InputError, match="expected a path, found an empty string"):
        headprompt.check("", "3.6")


@pytest.mark.parametrize("seq, fragment", [("\u0661", "not an integer token"), ("\uff10 1", "not an integer token"),
                                           ("0,,1", "no token at position 1"), ("0 1,", "no token at position 2")])
def test_sequences_take_ascii_digits_and_one_separator(tmp_path, capsys, seq, fragment):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(GOOD))
    assert main(["posterior", "--hmm", str(path), "--seq", seq]) == 2
    assert fragment in capsys.readouterr().err


def test_a_witness_beyond_float_range_is_decided_exactly(tmp_path, capsys):
    """A head entry of 10^3999 (no float64) used to end in OverflowError (exit 4): the certified
    mode claims no bound for it and decides exactly. The verdict, checked by hand: F = 1 on every
    sequence (b_0 dominates and the features are positive), while F* takes both labels (its
    'labels' count in the report)."""
    inst = tmp_path / "m.json"
    inst.write_text(json.dumps(GOOD))
    wit = tmp_path / "w.json"
    wit.write_text(json.dumps({"theorem": "3.3", "b": ["1e3999", "1"]}))
    code = main(["theorem", "3.3", "--hmm", str(inst), "--witness", str(wit), "--json", "--samples", "50"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "refuted" and min(out["labels"].values()) > 0


def test_a_certificate_folder_that_cannot_take_files(capsys):
    import os

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    assert main(["separate", "--certificate-dir", "/proc"]) == 2
    assert "--certificate-dir /proc: cannot write a file there" in capsys.readouterr().err


def test_trials_are_bounded_before_any_plan(tmp_path, capsys):
    """`--trials 1000000000` used to build a 9 GB job list (and write a plan first)."""
    out = tmp_path / "run"
    assert main(["experiment", "fig3-left", "--trials", "1000000000", "--out", str(out)]) == 2
    assert "at most 1000 trials per setting" in capsys.readouterr().err and not out.exists()
