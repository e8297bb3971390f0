"""One import root (SPEC section 5): a regular (non-editable) install ships ``headprompt.*`` and
nothing under the bare names ``models``, ``constructions`` or ``verify``."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Build a wheel of this checkout and install it (no dependencies) into a fresh folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp / "dist"), str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next((tmp / "dist").glob("headprompt-*.whl"))
    target = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True, timeout=300)
    return wheel, target


def test_wheel_has_one_import_root(installed):
    wheel, _ = installed
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    packages = {t for t in tops if not t.endswith((".dist-info", ".data"))}
    assert packages == {"headprompt"}


def _run(code, cwd, target):
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_imports_from_a_folder_with_its_own_models_package(installed, tmp_path):
    _, target = installed
    own = tmp_path / "project"
    (own / "models").mkdir(parents=True)
    (own / "models" / "__init__.py").write_text("MINE = True\n")
    code = ("import models, headprompt.models.hmm.values as h, headprompt.verify.cli.main as c;"
            "assert models.MINE; assert h.__file__.startswith(%r), h.__file__;"
            "print(h.HMM.__module__)" % str(target))
    proc = _run(code, own, target)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "headprompt.models.hmm.vanilla"        # (exported by values)


@pytest.mark.parametrize("bare", ["models", "constructions", "verify"])
def test_bare_names_are_not_installed(installed, tmp_path, bare):
    _, target = installed
    proc = _run(f"import {bare}", tmp_path, target)
    assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr


def test_doctests_pass_on_the_installed_package(installed, tmp_path):
    """The docstring examples run against the installed copy, from a folder outside the
    checkout (no bare ``models`` package to fall back on)."""
    _, target = installed
    code = ("import doctest, importlib, pkgutil, headprompt\n"
            "assert headprompt.__file__.startswith(%r)\n"
            "failed = attempted = 0\n"
            "for m in pkgutil.walk_packages(headprompt.__path__, 'headprompt.'):\n"
            "    if m.name.endswith('__main__'): continue\n"
            "    r = doctest.testmod(importlib.import_module(m.name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)\n"
            "    failed += r.failed; attempted += r.attempted\n"
            "    if r.failed: print('FAILED', m.name)\n"
            "print(attempted, failed)\n" % str(target))
    env_path = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    attempted, failed = map(int, proc.stdout.split()[-2:])
    assert attempted >= 40 and failed == 0, proc.stdout


def test_hypothesis_plugin_registers_the_value_types(tmp_path):
    """``st.from_type(HMM)`` draws valid exact HMMs right after ``import hypothesis``, through the
    entry point (the strategies module is not imported by hand)."""
    code = """
import sys
from fractions import Fraction
from hypothesis import given, settings, strategies as st
from headprompt import HMM, MemoryHMM
assert "headprompt.models.generate.strategies" not in sys.modules

@settings(max_examples=15, database=None, deadline=None)
@given(st.from_type(HMM), st.from_type(MemoryHMM))
def check(h, m):
    assert isinstance(h, HMM) and h.exact and isinstance(m, MemoryHMM) and m.exact
    assert all(sum(h.A[:, c]) == 1 for c in range(h.num_states))
    assert all(sum(h.W[:, c]) == 1 for c in range(h.num_states)) and sum(h.pi0) == 1
    assert all(isinstance(v, Fraction) and v >= 0 for v in h.A.flat)

check()
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
