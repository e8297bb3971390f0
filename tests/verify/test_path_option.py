"""``--path auto|dense|large`` (``check(..., path=)``): a user can ask for the dense path (whose
report carries the robustness block) or the large one on a given 3.3/3.6 instance; the report
says it was asked; both give the verdicts the path-sum oracle gives; the option is refused with
one line where it cannot apply."""

import json
from fractions import Fraction as F
import subprocess
import sys

import numpy as np
import pytest

from headprompt import check
from headprompt.models.exceptions import InputError
from headprompt.models.generate.generators import full_rank_hmm
from headprompt.models.hmm.files import save_instance
from tests.oracle import vanilla_decisions


@pytest.fixture(scope="module")
def model():
    hmm, _ = full_rank_hmm(12, 14, rng=np.random.default_rng(1))
    return hmm


@pytest.mark.parametrize("path", ["dense", "large"])
def test_the_asked_path_runs_and_says_so(model, path):
    report = check(model, "3.3", path=path, samples=60, length=3).data
    assert report["path"]["chosen"] == path and "asked" in report["path"]["why"]
    assert (report.get("robustness") is not None) == (path == "dense")   # robustness: the dense path's
    b = [F(v) for v in report["witness"]["b"]]       # the witness, judged by path sums
    decisions = vanilla_decisions(model, "3.3", b, None, [(0, 1, 2), (2, 2, 0), (1, 0, 3), (4, 1, 1), (3, 3, 3)])
    assert report["verdict"] == "verified"
    assert decisions and all(star == got for star, got in decisions.values())


def test_auto_names_how_to_keep_the_robustness_block(model):
    report = check(model, "3.3", samples=60, length=3).data
    if report["path"]["chosen"] == "large":
        assert "path='dense'" in report["path"]["why"]
    else:
        assert report.get("robustness") is not None


@pytest.mark.parametrize("argv, needle", [
    (["theorem", "3.3", "--path", "wide"], "invalid choice"),
    (["theorem", "3.3", "--hidden", "5", "--path", "dense"], "applies to a given instance"),
    (["theorem", "4.3", "--path", "large"], "applies to theorems 3.3 and 3.6"),
])
def test_the_option_is_refused_where_it_cannot_apply(argv, needle):
    run = subprocess.run([sys.executable, "-m", "headprompt.verify", *argv], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2, run.stderr
    assert needle in run.stderr and "Traceback" not in run.stderr
    assert len([l for l in run.stderr.strip().splitlines() if l.strip() and not l.startswith("usage")]) <= 2


def test_a_large_only_request_cannot_be_forced_dense_and_vice_versa(model, tmp_path):
    with pytest.raises(InputError, match="large path cannot decide"):
        check(model, "3.3", path="large", mode="exact", samples=60, length=3)
    f = tmp_path / "m.json"
    save_instance(model, str(f))
    run = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.3", "--hmm", str(f), "--path",
                          "large", "--samples", "60", "--length", "3", "--json"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode in (0, 1), run.stderr
    assert json.loads(run.stdout)["path"]["chosen"] == "large"
