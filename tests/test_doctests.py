"""The docstring examples of every module in the package run as tests (41+ doctests)."""

import doctest
import importlib
import pkgutil

import pytest

import headprompt

MODULES = sorted(name for _, name, _ in pkgutil.walk_packages(headprompt.__path__, "headprompt.")
                 if not name.endswith("__main__"))
for sub in ("models", "constructions", "verify"):
    pkg = importlib.import_module(f"headprompt.{sub}")
    MODULES += sorted(name for _, name, _ in pkgutil.walk_packages(pkg.__path__, f"headprompt.{sub}.")
                      if not name.endswith("__main__"))


@pytest.mark.parametrize("name", sorted(set(MODULES)))
def test_module_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests failed in {name}"


def test_doctests_exist():
    """The suite above is not vacuous: the exact routines carry examples."""
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in sorted(set(MODULES)))
    assert attempted >= 40
