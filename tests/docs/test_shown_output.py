"""The output the README and the getting-started page show for ``verify theorem 3.6 --hidden 25``
is what the command prints today (all but the time line), and the exit codes and messages they
quote are the tool's."""

import re
import subprocess
import sys

import pytest

from .code_blocks import ROOT

COMMAND = "verify theorem 3.6 --hidden 25"
PAGES = [ROOT / "README.md", ROOT / "docs" / "getting-started.md"]


def shown_output(text: str, command: str) -> list[str]:
    """The lines printed under ``$ command`` in a console block, up to the block's end."""
    lines = text.splitlines()
    start = lines.index(f"$ {command}") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return lines[start:end]


def _without_time(lines: list[str]) -> list[str]:
    return [line for line in lines if not re.match(r"time: [\d.]+ s$", line)]


@pytest.fixture(scope="module")
def printed():
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", *COMMAND.split()[1:]],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_shown_report_is_what_the_command_prints(page, printed):
    shown = shown_output(page.read_text(encoding="utf-8"), COMMAND)
    assert any(line.startswith("time: ") for line in shown)
    assert _without_time(shown) == _without_time(printed)


def test_a_changed_line_is_caught():
    text = f"```console\n$ {COMMAND}\nTheorem 3.6  verdict: verified\ntime: 1.0 s\n```\n"
    assert _without_time(shown_output(text, COMMAND)) == ["Theorem 3.6  verdict: verified"]
    assert _without_time(shown_output(text, COMMAND)) != ["Theorem 3.6  verdict: refuted"]


def test_the_quoted_refusal_is_the_tools():
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hidden", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    for page in PAGES:
        assert line in page.read_text(encoding="utf-8"), (page.name, line)
    import headprompt

    with pytest.raises(headprompt.InputError) as info:
        headprompt.check(None, "3.6", hidden=0)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert " ".join(str(info.value).split()) in " ".join(readme.split())
