"""The tour notebook is what examples/tools/build_tour.py writes, committed executed (its outputs
are what the documentation site shows), and it never asserts a verdict without asserting that
the check was not vacuous (a one-label task is agreed with by any constant head)."""

import importlib.util
import json
import re

import pytest

from .code_blocks import ROOT

NOTEBOOK = ROOT / "examples" / "tour.ipynb"
VERDICT = re.compile(r"\.verdict\s*==\s*\"(verified|refuted)\"")


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _builder():
    pytest.importorskip("nbformat", reason="nbformat is not installed: pip install -e '.[docs]'")
    spec = importlib.util.spec_from_file_location("build_tour", ROOT / "examples" / "tools" / "build_tour.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_notebook_is_what_the_builder_writes():
    cells = [("md" if c["cell_type"] == "markdown" else c["cell_type"], "".join(c["source"])) for c in _cells()]
    built = [("md" if kind == "md" else "code", source) for kind, source in _builder().CELLS]
    assert cells == built, "examples/tour.ipynb differs from build_tour.py: run build_tour.py, then execute_notebooks.py"


def test_the_notebook_is_committed_executed_without_errors():
    code = [c for c in _cells() if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), "run examples/tools/execute_notebooks.py"
    counts = [c["execution_count"] for c in code]
    assert counts == sorted(counts), "cells were executed out of order"
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]


def verdicts_without_vacuity(source: str) -> list[str]:
    """The lines asserting a verified or refuted verdict in a cell that never looks at
    ``vacuous``."""
    if "vacuous" in source:
        return []
    return [line.strip() for line in source.splitlines() if "assert" in line and VERDICT.search(line)]


def test_every_verdict_assertion_comes_with_non_vacuity():
    bad = [line for c in _cells() if c["cell_type"] == "code" for line in verdicts_without_vacuity("".join(c["source"]))]
    assert not bad, bad


def test_the_vacuity_rule_flags_a_bare_verdict():
    assert verdicts_without_vacuity('r = check(m, "3.6")\nassert r.verdict == "verified"\n')
    assert not verdicts_without_vacuity('assert r.verdict == "verified" and not r.to_dict()["vacuous"]\n')
    assert not verdicts_without_vacuity('assert r.verdict == "assumptions-fail"\n')
