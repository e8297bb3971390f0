"""Plans before results, visibly (issue 36): for every committed Figure 3 run with a plan, the
plan entered git history (its file with the same hash, or its hash named in a commit message)
strictly before the commit that brought its ``results.csv``. The oracle is git itself
(``git log`` and ``git merge-base --is-ancestor``), independent of the run's own records.

The runs committed before this rule existed brought their plans in the same commit as their
results; they are listed in :data:`PLAN_WITH_RESULTS` (the results page says so) and the test
requires the failing set to be exactly that list, so every new run must pass.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from headprompt.verify.experiments.plan import plan_commit, plan_hash

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "benchmarks" / "results"

# committed before plans had to precede their results: plan and results.csv in one commit
PLAN_WITH_RESULTS = {
    "cpu-hidden/fig3-right", "cpu/fig3-left", "cpu/fig3-left-seed26-3trials", "cpu/fig3-right",
    "exact-cpu/fig3-right", "exact-cpu/fig3-right-hidden", "exact-paper/fig3-left", "exact-paper/fig3-right",
    "exact-paper/fig3-right-hidden",
}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _first_commit(path: Path) -> str | None:
    out = _git("log", "--format=%H", "--reverse", "--diff-filter=A", "--", str(path.relative_to(ROOT))).split()
    return out[0] if out else None


def _runs() -> list[Path]:
    return sorted(p.parent for p in RESULTS.rglob("plan.json") if (p.parent / "results.csv").exists())


def _in_git() -> bool:
    if shutil.which("git") is None:
        return False
    try:
        return _git("rev-parse", "--is-inside-work-tree").strip() == "true"
    except subprocess.CalledProcessError:
        return False


@pytest.mark.skipif(not _in_git(), reason="needs the project's git history")
def test_every_committed_run_had_its_plan_committed_before_its_results():
    late, checked = set(), 0
    for run in _runs():
        results_commit = _first_commit(run / "results.csv")
        if results_commit is None:          # not committed yet (a run in progress): nothing to check
            continue
        checked += 1
        plan = json.loads((run / "plan.json").read_text())
        commit = plan_commit(run / "plan.json", plan_hash(plan["plan"]))
        before = commit is not None and commit != results_commit and subprocess.run(
            ["git", "merge-base", "--is-ancestor", commit, results_commit], cwd=ROOT).returncode == 0
        if not before:
            late.add(run.relative_to(RESULTS).as_posix())
    assert checked >= len(PLAN_WITH_RESULTS)
    assert late == PLAN_WITH_RESULTS
