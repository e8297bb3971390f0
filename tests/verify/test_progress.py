"""Progress of long checks: the checkers report as they go (so a time-left estimate can move),
and off a terminal a heartbeat line comes even between updates."""

import io
import time

import numpy as np

import headprompt
from headprompt.verify.reports.render import Progress
from headprompt.verify.checks.memory.check import check_sequences as memory_check
from headprompt.verify.checks.vanilla.check import check_sequences as vanilla_check


def test_a_log_gets_heartbeat_lines_between_updates_and_none_after_close():
    out = io.StringIO()
    bar = Progress(10, "checking", stream=out, interval=0.1)
    bar.update(2)
    time.sleep(0.45)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(ln.startswith("checking: 2/10 items (20%), elapsed ") for ln in lines)
    assert "ETA" in lines[-1]
    bar.close()
    seen = len(out.getvalue())
    time.sleep(0.3)
    assert len(out.getvalue()) == seen


def _ticks():
    calls = []
    return calls, lambda n=1: calls.append(n)


def test_the_vanilla_checker_reports_in_steps():
    report = headprompt.check(None, "3.6", hidden=4, vocab=3, exhaustive=True, length=6)
    d = report.details
    seqs = d["sequences"]
    for mode in ("exact", "certified"):
        calls, tick = _ticks()
        vanilla_check(d["model"], "3.6", d["witness"].b, d["witness"].u, seqs, mode=mode, progress=tick)
        assert sum(calls) == len(seqs) and len(calls) > 1


def test_the_memory_checker_reports_in_steps(monkeypatch):
    from headprompt.verify.checks.memory import fast

    report = headprompt.check(None, "4.6", samples=200, length=4)
    d = report.details
    monkeypatch.setattr(fast, "CHUNK_ENTRIES", 2000)          # small batches
    calls, tick = _ticks()
    memory_check(d["model"], d["witness"], d["H_star"], d["sequences"], mode="certified", progress=tick)
    assert sum(calls) == len(d["sequences"]) and len(calls) > 2
    assert np.all(np.array(calls) > 0)
