"""Running the ``verify`` command in-process from tests."""

import json

from headprompt.verify.cli.main import main


def run_json(capsys, argv):
    """``(exit code, the one JSON object printed, stderr)`` of ``verify ARGV --json``."""
    code = main(argv + ["--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err
