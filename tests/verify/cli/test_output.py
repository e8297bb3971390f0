"""Output that reads well off a terminal: whole lines in a pipe, progress lines in a log."""

import io
import os
import subprocess
import sys

import pytest

from headprompt.verify.reports.render import Progress, phase


def _verify(*argv, timeout=300):
    env = {**os.environ, "COLUMNS": "80"}            # a narrow terminal width must not matter off a TTY
    return subprocess.run([sys.executable, "-m", "headprompt.verify", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_a_piped_report_keeps_every_sentence_on_one_line():
    proc = _verify("theorem", "3.6", "--hidden", "25")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    identity = [ln for ln in lines if ln.startswith("identity:")]
    assert len(identity) == 1 and identity[0].rstrip().endswith("for every x in supp(P[X])")
    how = [ln for ln in lines if ln.strip().startswith("generated to satisfy")]
    assert len(how) == 1 and how[0].rstrip().endswith("(checked exactly)")
    # the assumption table is drawn at its natural width: each reason is on one row
    row = [ln for ln in lines if "3.5" in ln and "H* =" in ln]
    assert len(row) == 1 and "supp(mu)" in row[0]
    assert "\x1b[" not in proc.stdout                 # no colour codes in a pipe


def test_progress_off_a_terminal_prints_one_line_per_job_with_elapsed_and_eta():
    out = io.StringIO()
    with Progress(3, "fig3-left (tiny)", unit="job", each=True, stream=out) as bar:
        for _ in range(3):
            bar.update(1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("fig3-left (tiny): 1/3 jobs (33%), elapsed ") and "ETA" in lines[0]
    assert lines[-1].startswith("fig3-left (tiny): 3/3 jobs (100%)") and "ETA" not in lines[-1]


def test_progress_without_each_prints_at_most_every_interval_and_at_the_end():
    out = io.StringIO()
    bar = Progress(1000, "checking", stream=out, interval=3600)
    for _ in range(1000):
        bar.update(1)
    bar.close()
    assert out.getvalue().splitlines() == [bar.line()]


def test_quiet_progress_and_phase_print_nothing():
    out = io.StringIO()
    Progress(5, "x", quiet=True, stream=out).update(5)
    with phase("generating", quiet=True, stream=out):
        pass
    assert out.getvalue() == ""
    with phase("generating", stream=out):          # not a terminal: stderr keeps the result alone
        pass
    assert out.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    with phase("generating", stream=term):
        pass
    assert term.getvalue().splitlines()[0] == "generating ..."
    assert term.getvalue().splitlines()[1].startswith("generating: done in ")


@pytest.mark.slow
def test_a_tiny_sweep_leaves_per_job_lines_in_its_log(tmp_path):
    proc = _verify("experiment", "fig3-left", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path / "o"),
                   "--workers", "1", timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = [ln for ln in proc.stderr.splitlines() if ln.startswith("fig3-left (tiny): ")]
    assert len(jobs) >= 2 and "(100%)" in jobs[-1]
    assert all("elapsed" in ln for ln in jobs)


def test_the_robustness_line_gives_the_radius_off_the_planted_tie():
    import json

    proc = _verify("theorem", "3.6", "--hidden", "8", "--vocab", "4", "--samples", "300", "--length", "4")
    data = json.loads(_verify("theorem", "3.6", "--hidden", "8", "--vocab", "4", "--samples", "300", "--length", "4",
                              "--json").stdout)
    rob = data["robustness"]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("robustness:"))
    if rob["zero_margin_sequences"]:
        assert rob["radius"] == 0 and rob["radius_off_zero_margins"] > 0
        assert f"within {rob['radius_off_zero_margins']:.3g}" in line and "exactly on the threshold" in line
    else:
        assert f"radius {rob['radius']:.3g}" in line


def test_rationalization_text_never_prints_a_missing_denominator():
    from headprompt.models.hmm.rationalize import rationalize
    from headprompt.models.hmm.values import HMM

    h = HMM.create([[0.9, 0.2], [0.1, 0.8]], [[0.7, 0.3], [0.3, 0.7]], [0.5, 0.5], [1, -1], exact=False)
    assert "None" not in rationalize(h, prune_below=0.001, max_denominator=None).describe()
    assert "denominator 100 " in rationalize(h, prune_below=0.001, max_denominator=100).describe()


_FULL = "/dev/full"


@pytest.mark.skipif(not os.path.exists(_FULL), reason="no /dev/full here")
@pytest.mark.parametrize("module, argv", [
    ("headprompt.verify", ["theorem", "3.6", "--hidden", "3", "--vocab", "3", "--samples", "20", "--json"]),
    ("headprompt.verify", ["theorem", "9.9"]),                               # bad input, and stderr full
    ("headprompt.certcheck", ["/nonexistent/cert.json"]),
])
@pytest.mark.parametrize("streams", ["out", "both", "closed"])
def test_an_unwritable_output_never_exits_with_a_verdict_code(module, argv, streams):
    """Exit 0, 1 and 3 are verdicts: with stdout (and stderr) full or closed the verdict cannot
    be read, and an error line that cannot be written either must not end the process with 1
    (an uncaught exception's code, a refutation's). Found by an audit: `2>/dev/full` gave 1."""
    full = open(_FULL, "w")
    kw = {"stdout": full, "stderr": full if streams == "both" else subprocess.DEVNULL}
    if streams == "closed":
        kw = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
              "preexec_fn": lambda: (os.close(1), os.close(2))}
    try:
        code = subprocess.run([sys.executable, "-m", module, *argv], timeout=120, **kw).returncode
    finally:
        full.close()
    assert code == 2


def test_a_closed_pipe_on_both_streams_exits_2(tmp_path):
    """`verify ... 2>&1 | head -c 10`: the reader goes away; the error line cannot be written
    either (the same pipe)."""
    from headprompt import HMM

    path = tmp_path / "m.json"
    HMM.create([[1, 0], [0, 1]], [["3/4", "1/4"], ["1/4", "3/4"]], ["1/2", "1/2"], mu=[1, -1]).save(str(path))
    argv = [sys.executable, "-m", "headprompt.verify", "posterior", "--hmm", str(path), "--seq", "0 1 0 1"]
    assert subprocess.run(argv, capture_output=True, timeout=120).returncode == 0     # readable: a report
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc.stdout.close()                                       # nobody reads: every write fails
    assert proc.wait(timeout=120) == 2
