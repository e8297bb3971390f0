"""Hostile input: every file is decided quickly with exit 2 and one line, never a traceback or
a hang; lenient JSON forms are refused."""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from headprompt import certcheck

ROOT = Path(__file__).resolve().parents[2]
HEAD = '{"format": "headprompt-certificate", "version": 2, "theorem": "3.3", "claim": "theorem", '


def _run(path, timeout=20):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(path)], capture_output=True, text=True,
                          timeout=timeout)
    return done, time.perf_counter() - start


HOSTILE = {
    "lambda.json": HEAD + '"identity": {"lambda": "1e999999999"}}',
    "cells.json": '{"format": "headprompt-certificate", "version": 2, "theorem": "4.3", "claim": "theorem", '
                  '"instance": {"kind": "memory-hmm", "cells": 1000000000, "memory_values": 2, "syntax_states": 1}}',
    "values.json": '{"format": "headprompt-certificate", "version": 2, "theorem": "4.3", "claim": "theorem", '
                   '"instance": {"kind": "memory-hmm", "cells": 64, "memory_values": 4096, "syntax_states": 1}}',
    "duplicate.json": HEAD + '"verdict": "refuted", "verdict": "verified"}',
    "float.json": HEAD + '"version": 2.0}',
    "nan.json": '{"format": NaN}',
    "deep.json": "[" * 100000,
    "digits.json": '{"x": ' + "9" * 400000 + "}",
    "notjson.json": "{not json",
    "utf8.json": '{"format": "h\u00e9"}',
    "empty.json": "",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_end_with_exit_2_at_once(tmp_path, name):
    path = tmp_path / name
    path.write_text(HOSTILE[name], encoding="utf-8")
    done, seconds = _run(path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert seconds < 10 and "Traceback" not in done.stderr
    assert len((done.stdout + done.stderr).strip().splitlines()) == 1


def test_special_files_are_not_read(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path, tmp_path / "missing.json"):
        done, seconds = _run(path, timeout=10)
        assert done.returncode == 2 and seconds < 10, (path, done.stderr)
        assert "Traceback" not in done.stderr


def test_a_million_token_row_is_refused_before_work(tmp_path):
    cert = {"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": "3.3", "claim": "no-linear-head",
            "instance": {"kind": "hmm", "A": [["1"]], "W": [["1"]], "pi0": ["1"], "mu": ["1"]},
            "sequences": [[0] * 1_000_000], "certificate": {"y": ["1"], "z": ["0"]}}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(cert))
    done, seconds = _run(path)
    assert done.returncode == 2 and "tokens" in done.stderr and seconds < 10


@pytest.mark.parametrize("bad", ['"1_0"', '"\\u0661"', "true", '"1.5"', '"1e3"', '" 1"', '"1/0"', '"--1"',
                                 '"0x10"', "[1]", "1.0"])
def test_lenient_numbers_are_refused(certificates, bad):
    cert = copy.deepcopy(certificates["3.3"])
    certcheck.check(certcheck.loads(json.dumps(cert)))
    cert["instance"]["pi0"][0] = "@@"
    text = json.dumps(cert).replace('"@@"', bad)
    with pytest.raises(certcheck.Unreadable, match="pi0|not an integer"):
        certcheck.check(certcheck.loads(text))


def test_booleans_are_not_labels(certificates):
    cert = copy.deepcopy(certificates["3.3"])
    row = next(r for r in cert["sequences"] if r["F"] == 1)
    row["F"] = True                                   # a type error (exit 2), not a false label (exit 1)
    with pytest.raises(certcheck.Unreadable, match="expected a JSON integer label, found true"):
        certcheck.check(cert)
    row["F"] = 0                                      # a false label: rejected
    with pytest.raises(certcheck.Rejected, match="F is 1, not the printed 0"):
        certcheck.check(cert)


@pytest.mark.parametrize("field, value", [("theorem", ["3.3"]), ("theorem", {"id": "3.3"}), ("claim", ["theorem"]),
                                          ("version", "2")])
def test_wrong_types_at_the_top_are_named(certificates, field, value):
    """A forger audit: a list where the theorem id goes said 'unhashable type'; a string version
    said 'version 2: this checker reads version 2'."""
    cert = {**certificates["3.3"], field: value}
    with pytest.raises(certcheck.Unreadable) as err:
        certcheck.check(cert)
    assert "unhashable" not in str(err.value) and (field in str(err.value) or "version" in str(err.value))
    if field == "version":
        assert '"2"' in str(err.value) and "JSON integer" in str(err.value)


def test_an_older_format_is_unreadable(certificates):
    with pytest.raises(certcheck.Unreadable, match="version"):
        certcheck.check({**certificates["3.3"], "version": 1})


def _good_and_bad(tmp_path, certificates):
    """A true 3.6 certificate and the same with one margin forged, as files."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(certificates["3.6"]))
    bad = copy.deepcopy(certificates["3.6"])
    bad["sequences"][0]["task_margin"] = "1/3"
    badf = tmp_path / "bad.json"
    badf.write_text(json.dumps(bad))
    return good, badf


def test_cli_exit_codes(tmp_path, certificates):
    good, badf = _good_and_bad(tmp_path, certificates)
    empty = copy.deepcopy(certificates["3.6"])
    empty.update(covers="listed", sequences=[])
    del empty["identity"]
    emptyf = tmp_path / "empty.json"
    emptyf.write_text(json.dumps(empty))
    for args, code, word in ((["-m", "headprompt.certcheck", str(good)], 0, "accepted"),
                             ([str(ROOT / "headprompt" / "certcheck"), str(good)], 0, "accepted"),
                             (["-m", "headprompt.certcheck", str(badf)], 1, "rejected: sequences[0]"),
                             (["-m", "headprompt.certcheck", str(emptyf)], 1, "rejected: vacuous"),
                             (["-m", "headprompt.certcheck"], 2, "usage")):
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == code, done.stdout + done.stderr
        assert word in done.stdout + done.stderr
        assert len((done.stdout + done.stderr).strip().splitlines()) == 1


def test_checker_imports_only_the_standard_library():
    """Every module of the package: absolute imports name only standard-library modules, and
    relative imports stay inside the package (so a copied folder runs alone)."""
    folder = ROOT / "headprompt" / "certcheck"
    modules = sorted(folder.glob("*.py"))
    own = {path.stem for path in modules}
    names = set()
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 1 and (node.module or "").split(".")[0] in own | {""}, (path.name, node.module)
        assert path.stat().st_size and len(path.read_text().splitlines()) <= 420, f"{path.name} is over 420 lines"
    names -= {"certcheck"}          # __main__'s import of its own folder by name, when run as a script
    assert names and names <= set(sys.stdlib_module_names) | {"__future__"}, names - set(sys.stdlib_module_names)


def _copy_and_run(tmp_path, good, *args, cwd):
    done = subprocess.run([sys.executable, *args, str(good)], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={"PATH": os.environ.get("PATH", "")})
    return done.returncode, done.stdout + done.stderr


def test_a_copied_folder_and_a_zipapp_run_alone(tmp_path, certificates):
    """The folder copied anywhere (under any name) runs with the standard library alone: as a
    package with ``-S -m``, as a script folder with ``-I -S`` (isolated mode never puts the
    working directory on sys.path, so a folder is run by its path there), and as a single-file
    zipapp; each accepts a true certificate and rejects a false one, exactly as installed."""
    import shutil
    import zipapp
    good, badf = _good_and_bad(tmp_path, certificates)
    copied = tmp_path / "copy"
    shutil.copytree(ROOT / "headprompt" / "certcheck", copied / "certcheck",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(copied / "certcheck", copied / "elsewhere")
    stage = tmp_path / "stage"
    shutil.copytree(copied / "certcheck", stage / "certcheck")
    (stage / "__main__.py").write_text("import sys\nfrom certcheck.cli import main\nsys.exit(main())\n")
    zipapp.create_archive(stage, tmp_path / "certcheck.pyz")
    for args, cwd in ((["-S", "-m", "certcheck"], copied), (["-I", "-S", "certcheck"], copied),
                      (["-I", "-S", str(copied / "elsewhere")], tmp_path), (["-I", "-S", str(tmp_path / "certcheck.pyz")],
                                                                            tmp_path)):
        code, out = _copy_and_run(tmp_path, good, *args, cwd=cwd)
        assert code == 0 and out.startswith("accepted: Theorem 3.6 verified"), (args, out)
        code, out = _copy_and_run(tmp_path, badf, *args, cwd=cwd)
        assert code == 1 and out.startswith("rejected: sequences[0]"), (args, out)


def test_growing_integers_are_bounded_before_work(tmp_path):
    """A long row over an instance with large denominators: the backward pass's integers would
    grow by about 25 digits a step; refused before the first step."""
    big = "1/" + "9" * 12
    rest = str(1 - Fraction(big))
    cert = {"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": "3.3", "claim": "no-linear-head",
            "instance": {"kind": "hmm", "A": [[big, big], [rest, rest]], "W": [[big, rest], [rest, big]],
                         "pi0": ["1/2", "1/2"], "mu": ["1", "-1"]},
            "sequences": [[0, 1] * 50000], "certificate": {"y": ["1"], "z": ["0"]}}
    path = tmp_path / "grow.json"
    path.write_text(json.dumps(cert))
    done, seconds = _run(path)
    assert done.returncode == 2 and "limb products" in done.stderr and seconds < 10, done.stderr


def test_large_rank_computations_are_refused_before_work(tmp_path):
    block = {"kind": "memory-hmm", "cells": 1, "memory_values": 64, "syntax_states": 64, "target_cell": 0,
             "A": [["0"] * 64] * 64, "W": [[]] * 4000}
    path = tmp_path / "ranks.json"
    path.write_text(json.dumps({"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": "4.3",
                                "claim": "theorem", "instance": block}))
    done, seconds = _run(path)
    assert done.returncode == 2 and "ranks" in done.stderr and seconds < 10, done.stderr
