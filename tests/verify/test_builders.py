"""The choice of report for each theorem (``verify/reports/builders.py``), made one floor above
the registry from the theorem's kind."""

import subprocess
import sys

import pytest

from headprompt.models.exceptions import InputError
from headprompt.verify.checks.registry import THEOREMS
from headprompt.verify.reports import builders, memory, vanilla


@pytest.mark.parametrize("theorem_id", sorted(THEOREMS))
def test_each_theorem_gets_the_report_of_its_kind(theorem_id):
    module = builders.report_module(theorem_id)
    assert module is (memory if THEOREMS[theorem_id].kind == "memory-hmm" else vanilla)
    assert callable(module.theorem) and callable(module.render)


def test_an_unknown_theorem_is_refused():
    with pytest.raises(InputError, match="expected one of 3.3, 3.6, 4.3, 4.6, C.6"):
        builders.report_module("3.7")


def test_a_vanilla_check_never_imports_the_memory_report():
    code = ("import sys, headprompt\n"
            "r = headprompt.check(None, '3.6', hidden=4, vocab=3, samples=10, length=3)\n"
            "assert r.verdict == 'verified', r.verdict\n"
            "print('headprompt.verify.reports.memory' in sys.modules, 'headprompt.verify.reports.vanilla' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
