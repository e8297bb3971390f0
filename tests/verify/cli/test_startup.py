"""``verify --help`` and a mistyped subcommand start without importing torch (SPEC: commands
that need no torch never import it)."""

import subprocess
import sys

PROBE = """
import sys, io, contextlib
from headprompt.verify.cli.main import main
err = io.StringIO()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
    try:
        code = main({argv!r})
    except SystemExit as exc:
        code = exc.code
print(code, 'torch' in sys.modules)
"""


def _probe(argv):
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    code, torch_loaded = out.stdout.split()
    return int(code), torch_loaded == "True"


def test_help_does_not_import_torch():
    assert _probe(["--help"]) == (0, False)


def test_mistyped_subcommand_does_not_import_torch():
    code, torch_loaded = _probe(["theorm", "3.6"])
    assert code == 2 and not torch_loaded


def test_import_root_does_not_import_torch():
    out = subprocess.run([sys.executable, "-c", "import sys, headprompt; print('torch' in sys.modules)"],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
