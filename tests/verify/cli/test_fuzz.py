"""Fuzzing the ``verify`` command in-process (issue 9): random mutations of valid instance files
and of argument lists. Whatever the input, the command exits 0, 1, 2, 3 or 5 (never 4, a bug),
prints exactly one JSON object with ``--json`` when it succeeds, exactly one line on stderr for
bad input, never a traceback, and finishes within a time bound per case."""

import contextlib
import io
import json
import os
import time

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headprompt.verify.cli.main import main

PER_CASE_SECONDS = 15

VANILLA = {"kind": "hmm", "A": [[0.9, 0.2], [0.1, 0.8]], "W": [[0.7, "1/3"], [0.3, "2/3"]],
           "pi0": [0.5, 0.5], "mu": [1, -1]}
MEMORY = {"kind": "memory-hmm", "cells": 2, "memory_values": 2, "syntax_states": 1,
          "A": [[0.5, 0.5], [0.5, 0.5]], "W": [[[0.9, 0.2], [0.3, 0.6]], [[0.1, 0.8], [0.7, 0.4]]],
          "pi0": [0.5, 0.5], "pM_cells": [[0.5, 0.5], ["1/3", "2/3"]], "mu": [1, -1], "target_cell": 1}


def _generated():
    from headprompt.models.generate.generators import prompt_friendly_hmm
    from headprompt.models.hmm.files import instance_to_dict

    hmm, _ = prompt_friendly_hmm(4, 3, rng=np.random.default_rng(0))
    return instance_to_dict(hmm)


BASES = [VANILLA, MEMORY, _generated()]

# values a mutation may put anywhere in an instance
odd_numbers = st.sampled_from([0, -1, 1, 2, 10**30, "1/0", "0/5", "-1/2", "1e400", "1e-400", "1e999999999",
                               "7" * 5000, 1.5, -0.0, 1e-300, 1e300, "NaN", "x", "", True, None])
leaf = st.one_of(odd_numbers, st.integers(-3, 3), st.fractions(min_value=-2, max_value=2, max_denominator=9)
                 .map(lambda f: f"{f.numerator}/{f.denominator}"))
json_value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=4), max_leaves=12)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _replace(obj, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        out = dict(obj)
        out[head] = _replace(obj[head], rest, value)
        return out
    out = list(obj)
    out[head] = _replace(obj[head], rest, value)
    return out


@st.composite
def mutated_instance(draw):
    base = draw(st.sampled_from(BASES))
    data = json.loads(json.dumps(base))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 1, 2, 3]))):        # 0: the valid file itself
        action = draw(st.sampled_from(["replace", "replace", "delete", "add", "resize"]))
        paths = [p for p in _paths(data) if p]
        if action == "replace" and paths:
            data = _replace(data, draw(st.sampled_from(paths)), draw(json_value))
        elif action == "delete" and isinstance(data, dict) and data:
            data = {k: v for k, v in data.items() if k != draw(st.sampled_from(sorted(data)))}
        elif action == "add" and isinstance(data, dict):
            data[draw(st.sampled_from(["extra", "target_cell", "pM", "cells", "mu", "witness"]))] = draw(json_value)
        elif action == "resize" and paths:
            path = draw(st.sampled_from(paths))
            node = data
            for k in path:
                node = node[k]
            if isinstance(node, list) and node:
                data = _replace(data, path, node + node[:1] if draw(st.booleans()) else node[:-1])
    text = json.dumps(data)
    edit = draw(st.sampled_from(["none", "none", "none", "truncate", "insert", "dup-key", "nest"]))
    if edit == "truncate":
        text = text[:draw(st.integers(0, len(text)))]
    elif edit == "insert":
        pos = draw(st.integers(0, len(text)))
        text = text[:pos] + draw(st.sampled_from(["[", "]", ",", "{", "\"", "1e5", "-", "\x00", "é"])) + text[pos:]
    elif edit == "dup-key" and text.startswith("{"):
        text = '{"kind": "hmm", ' + text[1:]
    elif edit == "nest":
        depth = draw(st.sampled_from([40, 3000]))
        text = "[" * depth + text + "]" * depth
    return text


def _invoke(argv):
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - start


def _check(argv, code, out, err, seconds):
    assert code in (0, 1, 2, 3, 5), (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    assert seconds < PER_CASE_SECONDS, (argv, seconds)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
        assert out == "", (argv, out)
    elif "--json" in argv:
        assert out.count("\n") == 1 and isinstance(json.loads(out), dict), (argv, out[:200])


EXAMPLES = int(os.environ.get("HEADPROMPT_FUZZ_EXAMPLES", "80"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 80, database=None,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(text=mutated_instance(), command=st.sampled_from(["posterior", "posterior-float", "assumptions",
                                                          "theorem"]),
       seq=st.sampled_from(["0", "1 0 1", "0 0 0 0 0 0", "2", "-1", "a", ""]), as_json=st.booleans())
def test_mutated_instance_files(tmp_path_factory, text, command, seq, as_json):
    path = tmp_path_factory.mktemp("fuzz") / "instance.json"
    path.write_text(text)
    kind = "memory" if '"memory-hmm"' in text else "vanilla"
    theorem = {"memory": "C.6", "vanilla": "3.6"}[kind]
    if command.startswith("posterior"):
        argv = ["posterior", "--hmm", str(path), "--seq", seq] + (["--mode", "float"] if command.endswith("float") else [])
    elif command == "assumptions":
        argv = ["assumptions", theorem, "--hmm", str(path)]
    else:
        argv = ["theorem", theorem, "--hmm", str(path), "--samples", "20", "--length", "3"]
    argv += ["--json"] if as_json else []
    _check(argv, *_invoke(argv))


SIZE_VALUES = st.sampled_from(["1", "2", "3", "4"] * 4 + ["-1", "0", "abc", "1e3", "99999999999999999999", "401",
                                                          "5000"])
FLAGS = st.lists(st.tuples(st.sampled_from(["--hidden", "--vocab", "--memory", "--cells", "--length", "--samples",
                                            "--seed", "--mode", "--exhaustive", "--witness", "--out", "--bogus"]),
                           SIZE_VALUES), max_size=4)


@SETTINGS
@given(command=st.sampled_from(["theorem"] * 5 + ["counterexample", "assumptions", "posterior", "nonsense"]),
       theorem=st.sampled_from(["3.3", "3.6", "4.3", "4.6", "C.6"] * 3 + ["3.7", ""]), flags=FLAGS,
       as_json=st.booleans())
def test_random_argument_lists(tmp_path_factory, command, theorem, flags, as_json):
    argv = [command, theorem]
    if command in ("assumptions", "posterior"):
        path = tmp_path_factory.mktemp("fuzz") / "instance.json"
        path.write_text(json.dumps(MEMORY if theorem in ("4.3", "4.6", "C.6") else VANILLA))
        argv = [command] + ([theorem] if command == "assumptions" else ["--seq", "0 1"]) + ["--hmm", str(path)]
    for flag, value in flags:
        if flag == "--exhaustive":
            argv.append(flag)
        elif flag == "--mode":
            argv += [flag, {"0": "float", "1": "certified", "2": "exact"}.get(value, value)]
        elif flag in ("--witness", "--out"):
            argv += [flag, str(tmp_path_factory.mktemp("fuzz")) if value == "0" else "/nonexistent/x.json"]
        else:
            argv += [flag, value]
    # keep generated work small: sizes default to the small side unless the draw set them
    if command == "theorem" and not any(f == "--samples" for f, _ in flags) and "--exhaustive" not in argv:
        argv += ["--samples", "30"]
    if command in ("theorem", "counterexample") and theorem in ("3.3", "3.6") and \
            not any(f == "--hidden" for f, _ in flags):
        argv += ["--hidden", "5"]
    argv += ["--json"] if as_json else []
    _check(argv, *_invoke(argv))


def test_tiny_memory_sizes_never_crash():
    """Every tiny size of a generated memory instance is verified, assumption-fails or refused
    with one line (one cell and one syntax state with fewer tokens than memory values used to
    raise an IndexError)."""
    for theorem in ("4.3", "4.6", "C.6"):
        for memory in (1, 2, 3):
            for vocab in (1, 2, 3):
                argv = ["theorem", theorem, "--memory", str(memory), "--cells", "1", "--hidden", "1",
                        "--vocab", str(vocab), "--samples", "10", "--length", "3", "--json"]
                _check(argv, *_invoke(argv))
