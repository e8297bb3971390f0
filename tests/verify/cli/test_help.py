"""Help, version and the documented limits: every promise in ``--help`` and in
docs/reference.md is true (the ranges are read from the docs and run at their boundaries)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from headprompt.verify.cli.main import SUBCOMMANDS, main
from headprompt.verify.runtime.cost import MAX_TOKENS
from headprompt.verify.reports.requests import SIZE_LIMITS

DOCS = (Path(__file__).resolve().parents[3] / "docs" / "reference.md").read_text()


def _fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [""] + list(SUBCOMMANDS))
def test_help_is_plain_and_light(command):
    """``--help`` exits 0, says nothing about internal documents or markup, and imports none of
    the heavy libraries (torch, sympy, hypothesis, scipy.optimize), which is what keeps it fast."""
    argv = ([command] if command else []) + ["--help"]
    code = ("import sys, io, contextlib\nfrom headprompt.verify.cli.main import main\nbuf = io.StringIO()\n"
            f"with contextlib.redirect_stdout(buf):\n    rc = main({argv!r})\n"
            "heavy = [m for m in ('torch', 'sympy', 'hypothesis', 'scipy.optimize', 'ray') if m in sys.modules]\n"
            "print(rc, heavy)\nprint(buf.getvalue())")
    proc = _fresh(code)
    assert proc.returncode == 0, proc.stderr
    first, _, text = proc.stdout.partition("\n")
    assert first == "0 []", first
    assert "SPEC" not in text and "``" not in text and ":func:" not in text
    assert "usage: verify" in text


def test_every_option_has_help():
    import argparse

    from headprompt.verify.cli.main import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subs.choices.items():
        for action in sub._actions:
            assert action.help, f"verify {name}: {action.option_strings or action.dest} has no help"


def test_version_and_bare_verify(capsys):
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"verify (headprompt) {metadata.version('headprompt')}"
    assert main([]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in SUBCOMMANDS) and "exit codes" in err


def test_documented_ranges_are_the_code_limits():
    line = DOCS[DOCS.index("- `theorem`: `--hidden`"):]
    line = " ".join(line[:line.index("runs whose")].split())
    documented = {m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
                  for m in re.finditer(r"`--(\w+)` ([\d,]+)\.\.([\d,]+)", line)}
    assert documented == SIZE_LIMITS
    tokens = int(re.search(r"at most ([\d,]+)", line).group(1).replace(",", ""))
    assert tokens == MAX_TOKENS


@pytest.mark.parametrize("name", sorted(SIZE_LIMITS))
def test_each_documented_range_is_enforced_at_its_boundaries(name, capsys):
    """One past each end is refused (exit 2, one line naming the flag); each end itself passes
    argument validation (the request is built)."""
    from headprompt.verify.reports.requests import TheoremRequest

    lo, hi = SIZE_LIMITS[name]
    theorem = "4.3" if name in ("memory", "cells") else "3.6"
    for bad in (lo - 1, hi + 1):
        assert main(["theorem", theorem, f"--{name}", str(bad), "--json"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"--{name} {bad}" in err
    for good in (lo, hi):
        request = TheoremRequest(id=theorem, **{name: good})
        assert getattr(request, name) == good


def test_the_sampled_token_limit_is_enforced(capsys):
    samples = SIZE_LIMITS["samples"][1]
    length = MAX_TOKENS // samples + 1
    assert main(["theorem", "3.6", "--hidden", "5", "--samples", str(samples), "--length", str(length)]) == 2
    assert "sampled tokens" in capsys.readouterr().err


def test_symbolic_help_states_the_sizes_that_work():
    from headprompt.verify.symbolic.algebra import check_sizes
    from headprompt.verify.symbolic.limits import MAX_SIZE, STATEMENTS, accepted_sizes
    from headprompt.verify.symbolic.proofs import STATEMENTS as PROVED

    assert STATEMENTS == PROVED
    for h, x, t in accepted_sizes():
        check_sizes(h, x, t)                                   # every size the help lists is accepted
        if t < MAX_SIZE:
            with pytest.raises(Exception, match="path terms"):
                check_sizes(h, x, t + 1)                       # and the next length is not
    assert (2, 2, 4) in accepted_sizes() and all((h, x) != (3, 3) or t < 3 for h, x, t in accepted_sizes())


@pytest.mark.parametrize("argv, flag", [
    (["theorem", "3.6", "--hidden", "1"], "--hidden 1"),
    (["theorem", "3.6", "--hidden", "2", "--vocab", "2"], "--hidden 2"),
    (["theorem", "3.3", "--hidden", "3", "--vocab", "1"], "--vocab 1"),
    (["assumptions", "3.3", "--hmm", "x.json", "--rationalize", "-1"], "--rationalize"),
    (["theorem", "3.3", "--hidden", "3", "--rationalize", "1.5"], "--rationalize"),
])
def test_refusals_name_the_users_flag_not_an_internal_name(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and flag in err
    assert "num_states" not in err and "prune_below" not in err


def test_the_one_state_one_token_instance_of_theorem_33_is_verified(capsys):
    assert main(["theorem", "3.3", "--hidden", "1", "--vocab", "1", "--json"]) == 0
