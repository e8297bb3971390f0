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
    assert proc.stdout.strip() == "headprompt.models.hmm.values"


@pytest.mark.parametrize("bare", ["models", "constructions", "verify"])
def test_bare_names_are_not_installed(installed, tmp_path, bare):
    _, target = installed
    proc = _run(f"import {bare}", tmp_path, target)
    assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr
