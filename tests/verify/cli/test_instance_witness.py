"""A ``"witness"`` entry inside an ``--hmm`` instance file (found by an audit: it was neither
checked nor used, silently). Without ``--witness`` the construction is checked and one line says
the file's witness was not; ``--hmm f --witness f`` checks the file's own witness; a malformed
entry is exit 2 before any work."""

import json

import numpy as np
import pytest

import headprompt
from headprompt.models.generate.generators import prompt_friendly_hmm
from headprompt.models.hmm.files import save_instance
from headprompt.verify.cli.main import main
from headprompt.verify.reports import vanilla as vanilla_report

from tests import oracle
from tests.cli import run_json

WRONG = {"theorem": "3.6", "u": [1] * 5, "b": [1, -1, 0]}        # a prompt and head that disagree with F*
RUN = ["--exhaustive", "--length", "3"]


@pytest.fixture
def hmm():
    return prompt_friendly_hmm(5, 3, rng=np.random.default_rng(2))[0]


@pytest.fixture
def with_wrong_witness(hmm, tmp_path):
    path = tmp_path / "h.json"
    save_instance(hmm, path, witness=WRONG)
    assert json.loads(path.read_text())["witness"]["b"] == ["1", "-1", "0"]
    return path


def test_without_witness_the_construction_is_checked_and_one_line_says_so(with_wrong_witness, capsys):
    path = str(with_wrong_witness)
    assert main(["theorem", "3.6", "--hmm", path, *RUN]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "witness that was not checked" in ln]
    assert len(lines) == 1 and f"--witness '{path}'" in lines[0], out
    code, res, err = run_json(capsys, ["theorem", "3.6", "--hmm", path, *RUN])
    assert code == 0 and res["verdict"] == "verified"
    assert [str(v) for v in res["witness"]["b"]] != ["1", "-1", "0"]          # the construction's head
    assert [ln for ln in err.splitlines() if ln.startswith("note: ")] == [
        f"note: {path} holds a witness that was not checked: this run checks the paper's construction; "
        f"to check the file's witness instead, add --witness '{path}'"]


def test_the_same_file_as_witness_checks_the_files_witness(hmm, with_wrong_witness, capsys):
    path = str(with_wrong_witness)
    code, res, err = run_json(capsys, ["theorem", "3.6", "--hmm", path, "--witness", path, *RUN])
    assert code == 1 and res["verdict"] == "refuted" and "note:" not in err
    assert [str(v) for v in res["witness"]["b"]] == ["1", "-1", "0"]
    seq = res["counterexample"]["sequence"]              # the disagreement is real (brute-force oracle)
    post = oracle.path_posterior(hmm, seq, 0)
    f_star = int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0)
    g = oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [[1] * 5, [1] * 5] + [list(hmm.W[z]) for z in seq], 1)
    assert f_star != int(g[0] - g[1] >= 0)


def test_a_witness_for_another_theorem_is_named_with_its_theorem(with_wrong_witness, capsys):
    path = str(with_wrong_witness)
    main(["theorem", "3.3", "--hmm", path, *RUN])
    out = capsys.readouterr().out
    assert (f"{path} holds a witness for Theorem 3.6, not checked by this Theorem 3.3 run" in out
            and f"run Theorem 3.6 with --witness '{path}'" in out)


def test_no_witness_entry_no_note(hmm, tmp_path, capsys):
    path = tmp_path / "plain.json"
    save_instance(hmm, path)
    assert main(["theorem", "3.6", "--hmm", str(path), *RUN]) == 0
    captured = capsys.readouterr()
    assert "Theorem 3.6" in captured.out and "not checked" not in captured.out + captured.err


@pytest.mark.parametrize("entry, fragment", [
    ([1, 2], '"witness": expected a JSON object'),
    ({"theorem": "9.9", "b": [1, 1, 1]}, "names theorem '9.9'"),
    ({"theorem": "4.3", "q": [1]}, "Theorem 4.3, about memory-augmented HMMs, but the instance is a vanilla HMM"),
    ({"theorem": "3.6", "u": [1, 0], "b": [1, 1, 1]}, "u: expected shape (5,)"),
    ({"theorem": "3.6", "u": ["x"] * 5, "b": [1, 1, 1]}, "cannot read 'x'"),
    ({"theorem": "3.6", "b": [1, 1, 1]}, "needs 'u'"),
    ({"theorem": "3.6", "u": [2] * 5, "b": [1, 1, 1]}, "expected a value in [0, 1]"),
])
@pytest.mark.parametrize("with_other_witness", [False, True])
def test_a_malformed_entry_is_exit_2_before_any_work(hmm, tmp_path, capsys, monkeypatch, entry, fragment,
                                                      with_other_witness):
    def no_work(*a, **k):
        raise AssertionError("the assumptions were checked before the file's witness was refused")

    monkeypatch.setattr(vanilla_report, "check_assumptions", no_work)
    data = json.loads(json.dumps(headprompt.models.hmm.files.instance_to_dict(hmm)))
    data["witness"] = entry
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    argv = ["theorem", "3.6", "--hmm", str(path), *RUN]
    if with_other_witness:                       # a good --witness does not excuse a broken entry
        good = tmp_path / "w.json"
        good.write_text(json.dumps(WRONG))
        argv += ["--witness", str(good)]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"{path}: \"witness\"" in err and fragment in err, err


def test_memory_replay_note_and_check(tmp_path, capsys):
    path = str(tmp_path / "m.json")
    code, res, _ = run_json(capsys, ["theorem", "4.3", "--samples", "20", "--out", path])
    assert code == 0
    code, res, err = run_json(capsys, ["theorem", "4.3", "--hmm", path, "--samples", "20"])
    assert code == 0 and f"note: {path} holds a witness that was not checked" in err
    code, res, err = run_json(capsys, ["theorem", "4.3", "--hmm", path, "--witness", path, "--samples", "20"])
    assert code == 0 and res["verdict"] == "verified" and "note:" not in err


def test_python_api_carries_the_note(with_wrong_witness):
    report = headprompt.check(str(with_wrong_witness), "3.6", exhaustive=True, length=3)
    assert report.verdict == "verified"
    assert "holds a witness that was not checked" in report.details["instance_witness_note"]
    assert "witness='" in report.details["instance_witness_note"]
    given = headprompt.check(str(with_wrong_witness), "3.6", exhaustive=True, length=3,
                             witness=str(with_wrong_witness))
    assert given.verdict == "refuted" and given.details["instance_witness_note"] is None


def test_an_npz_witness_is_named_in_the_note(tmp_path, capsys):
    from fractions import Fraction

    h = headprompt.HMM.create([[1, 0], [0, 1]], [["3/4", "1/4"], ["1/4", "3/4"]], ["1/2", "1/2"], mu=[1, -1])
    path = tmp_path / "g.npz"
    save_instance(h, path, witness={"theorem": "3.3", "b": [Fraction(1), Fraction(-1)]})
    code, res, err = run_json(capsys, ["theorem", "3.3", "--hmm", str(path), *RUN])
    assert code in (0, 3) and "witness.* entries) that was not checked" in err
    save_instance(h, tmp_path / "plain.npz")
    code, _, err = run_json(capsys, ["theorem", "3.3", "--hmm", str(tmp_path / "plain.npz"), *RUN])
    assert code in (0, 3) and "note:" not in err
