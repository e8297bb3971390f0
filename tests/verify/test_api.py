"""The Python API (SPEC section 5): ``headprompt.check`` returns what ``verify theorem --json``
prints for the same inputs, on every theorem; typed requests reject bad options."""

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

import headprompt
from headprompt.models.exceptions import InputError
from headprompt.models.hmm.files import save_instance
from headprompt.verify.cli.main import main
from headprompt.verify.checks.registry import THEOREM_IDS, THEOREMS
from headprompt.verify.reports.requests import TheoremRequest

# small, fast runs of every theorem: (theorem, CLI flags == check() options)
CASES = {
    "3.3": dict(hidden=4, vocab=5, samples=150, length=4),
    "3.6": dict(hidden=6, vocab=3, samples=150, length=4),
    "4.3": dict(samples=80, length=3),
    "4.6": dict(samples=80, length=3),
    "C.6": dict(samples=80, length=3),
}


def _cli_json(theorem, options):
    argv = ["theorem", theorem, "--json"]
    for key, value in options.items():
        if value is True:
            argv.append(f"--{key}")
        elif value is not None:
            argv += [f"--{key}", str(value)]
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(argv)
    return code, json.loads(buf.getvalue())


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "seconds"}


def test_registry_covers_every_theorem():
    assert set(CASES) == set(THEOREM_IDS) == set(THEOREMS)


@pytest.mark.parametrize("theorem", sorted(CASES))
def test_check_equals_cli_json_generated(theorem):
    options = CASES[theorem]
    code, cli = _cli_json(theorem, options)
    report = headprompt.check(None, theorem, **options)
    assert _without_time(report.to_dict()) == _without_time(cli)
    assert report.exit_code == code
    assert report.verdict == cli["verdict"]


@pytest.mark.parametrize("theorem", ["3.6", "4.6"])
def test_check_on_a_file_and_on_an_object_agree_with_the_cli(theorem, tmp_path):
    """Save the generated instance (``--out``), then check it as a file and as a loaded object."""
    path = tmp_path / "instance.json"
    headprompt.check(None, theorem, **CASES[theorem], out=str(path))
    options = {k: v for k, v in CASES[theorem].items() if k in ("samples", "length")}
    code, cli = _cli_json(theorem, {"hmm": str(path), **options})
    from_file = headprompt.check(str(path), theorem, **options)
    assert _without_time(from_file.to_dict()) == _without_time(cli)
    from_object = headprompt.check(headprompt.load(path), theorem, **options).to_dict()
    assert from_object["instance"]["source"] == "object"
    for key in ("verdict", "assumptions", "witness", "sequences", "counterexample"):
        assert from_object[key] == cli[key]


def test_to_dict_is_a_copy():
    report = headprompt.check(None, "3.6", **CASES["3.6"])
    d = report.to_dict()
    d["verdict"] = "refuted"
    assert report.verdict == "verified"


@pytest.mark.parametrize("options, match", [
    (dict(samples=-1), r"^samples=-1: expected an integer in 0\.\.1000000"),
    (dict(mode="fast"), "mode='fast'"),
    (dict(mode=3), "mode=3"),
    (dict(seed=-1), "seed=-1"),
    (dict(hidden=0), "hidden=0"),
    (dict(lenght=4), "unknown option 'lenght'"),
    (dict(hidden=True), "hidden=True"),
    (dict(samples=1.5), "samples=1.5: expected an integer"),
    (dict(length="4"), "length='4': expected an integer"),
    (dict(exhaustive="yes"), "exhaustive='yes': expected True or False"),
    (dict(witness=5), "witness=5: expected the path of a witness file, a dict"),
    (dict(witness=[1, 2]), "witness=\\[1, 2\\]"),
    (dict(out=5), "out=5: expected the path of a file"),
    (dict(rationalize="x"), "rationalize='x'"),
    (dict(classes=1), "classes=1"),
])
def test_bad_options_are_input_errors_in_python_terms(options, match):
    with pytest.raises(InputError, match=match) as info:
        headprompt.check(None, "3.6", **options)
    assert "--" not in str(info.value)                  # Python users never see a flag


def test_numpy_scalars_are_read_as_the_numbers_they_are():
    report = headprompt.check(None, "3.6", hidden=np.int64(4), vocab=np.int32(3), samples=np.int64(30),
                              length=np.int64(3), seed=np.int64(1), exhaustive=np.bool_(False))
    assert report.verdict == "verified"
    assert report.to_dict() == headprompt.check(None, "3.6", hidden=4, vocab=3, samples=30, length=3,
                                                seed=1).to_dict() | {"seconds": report.to_dict()["seconds"]}


def test_witness_as_dict_object_or_path_is_checked_alike(tmp_path):
    """A witness given in memory is read by the same reader as a file: the constructed witness
    verifies in all three forms, and its negation is refuted in all three (it disagrees with F*)."""
    from fractions import Fraction

    base = headprompt.check(None, "3.6", hidden=5, vocab=3, samples=40, length=3)
    model, w = base.details["model"], base.to_dict()["witness"]
    good = {"theorem": "3.6", "u": w["u"], "b": w["b"]}
    bad = {**good, "b": [str(-Fraction(x)) for x in w["b"]]}
    path = tmp_path / "w.json"
    for witness, expected in ((good, "verified"), (bad, "refuted")):
        path.write_text(json.dumps(witness))
        as_object = base.details["witness"] if expected == "verified" else None
        forms = [witness, str(path), path] + ([as_object] if as_object is not None else [])
        for form in forms:
            assert headprompt.check(model, "3.6", witness=form, samples=40, length=3).verdict == expected
    with pytest.raises(InputError, match="witness is for theorem '3.3'"):
        headprompt.check(model, "3.6", witness={"theorem": "3.3", "b": [1, 1, 1]})
    with pytest.raises(InputError, match="needs 'u'"):
        headprompt.check(model, "3.6", witness={"theorem": "3.6", "b": w["b"]})


def test_unknown_theorem_and_instance_type():
    with pytest.raises(InputError, match="expected one of 3.3, 3.6, 4.3, 4.6, C.6"):
        headprompt.check(None, "3.4")
    with pytest.raises(InputError, match="expected an HMM"):
        headprompt.check(42, "3.6")


def test_float_instance_object_is_refused():
    hmm = headprompt.HMM.create([[1.0]], [[0.5], [0.5]], [1.0], [1.0], exact=False)
    with pytest.raises(InputError, match="float entries"):
        headprompt.check(hmm, "3.6")


def test_request_from_namespace_ignores_cli_only_fields():
    import argparse

    ns = argparse.Namespace(id="3.6", json=True, run=None, hidden=5, vocab=3, samples=10)
    req = TheoremRequest.from_namespace(ns)
    assert (req.id, req.hidden, req.vocab, req.samples) == ("3.6", 5, 3, 10)


@pytest.mark.parametrize("theorem, options, match", [
    ("3.3", dict(memory=3), "memory= does not apply to Theorem 3.3"),
    ("3.6", dict(exhaustive=True, samples=10), "samples= does not apply with exhaustive="),
])
def test_options_that_do_not_apply_are_refused_as_on_the_cli(theorem, options, match):
    with pytest.raises(InputError, match=match):
        headprompt.check(None, theorem, **options)


def test_sizes_do_not_apply_to_a_given_instance():
    model = headprompt.HMM.create([[1]], [["1/2"], ["1/2"]], [1], [1])
    with pytest.raises(InputError, match="hidden= does not apply with a given instance"):
        headprompt.check(model, "3.6", hidden=4)


@pytest.mark.parametrize("theorem", ["3.3", "3.6", "4.6"])
def test_rows_match_the_report_and_the_brute_force_oracle(theorem):
    from tests import oracle

    report = headprompt.check(None, theorem, **{**CASES[theorem], "samples": 40})
    rows = report.rows(exact=True)
    counted = [r for r in rows if r["in_R"]]
    seqs = report.to_dict()["sequences"]
    assert len(counted) == seqs["in_R"] and sum(r["agree"] for r in counted) == seqs["agree"]
    labels = report.to_dict()["labels"]
    assert [sum(r["F_star"] == k for r in counted) for k in (0, 1)] == [labels["0"], labels["1"]]
    model = report.details["model"]
    for r in counted[:8]:                        # F* and its margin from path sums, independently
        if theorem.startswith("3"):
            post = oracle.path_posterior(model, r["sequence"], 0)
        else:
            post = oracle.memory_posterior(model, r["sequence"], model.target_cell)
        margin = sum(m * p for m, p in zip(model.mu, post))
        assert r["task_margin"] == margin and r["F_star"] == int(margin >= 0)
        assert r["F"] == int(r["head_margin"] >= 0)


def test_to_frame_has_decimal_margins_with_the_exact_form_beside_them():
    pytest.importorskip("pandas")
    from decimal import Decimal
    from fractions import Fraction

    report = headprompt.check(None, "3.6", **{**CASES["3.6"], "samples": 20})
    frame = report.to_frame(exact=True)
    assert {"sequence", "F_star", "F", "task_margin", "task_margin_exact", "head_margin_exact"} <= set(frame.columns)
    live = frame[frame["possible"]]
    for dec, text, f_star in zip(live["task_margin"], live["task_margin_exact"], live["F_star"]):
        exact = Fraction(text)
        assert isinstance(dec, Decimal) and abs(Fraction(dec) - exact) <= abs(exact) * Fraction(1, 10 ** 19)
        assert f_star == int(exact >= 0)
    assert frame.equals(report.to_frame())                       # exact by default
    floats = report.to_frame(exact=False)
    assert (abs(floats["task_margin"] - live["task_margin_exact"].map(lambda t: float(Fraction(t))))
            <= floats["task_margin_bound"] + 1e-300).dropna().all()


def test_a_float_report_cannot_be_read_as_a_proof():
    report = headprompt.check(None, "3.6", hidden=5, vocab=3, samples=60, length=3, mode="float")
    assert report.proven is False and report.exit_code == 5
    assert report.verdict != "verified" and report.verdict.endswith("(uncertified)")
    assert report.to_dict()["verdict"] in ("verified", "refuted") and report.to_dict()["certified"] is False
    proof = headprompt.check(None, "3.6", hidden=5, vocab=3, samples=60, length=3)
    assert proof.proven is True and proof.verdict == "verified"


def test_notebook_display_is_escaped_html_with_the_verdict():
    report = headprompt.check(None, "3.3", hidden=5, vocab=3, samples=60, length=3)
    html = report._repr_html_()
    assert html.startswith("<table>") and "assumptions-fail" in html and "Theorem 3.3" in html
    assert "<script" not in html and "&gt;" in html or ">" not in report.to_dict()["assumptions"]["3.1"]["why"]
    model = headprompt.HMM.create([[0, 1], [1, 0]], [["3/4", "1/4"], ["1/4", "3/4"]], ["1/2", "1/2"], mu=[1, -1])
    shown = model._repr_html_()
    assert "3/4" in shown and "<caption>A</caption>" in shown and "<caption>mu</caption>" in shown


@pytest.mark.parametrize("call, match", [
    (lambda: headprompt.load(5), r"^path=5: expected the path of an instance file"),
    (lambda: headprompt.load(None), r"^path=None: expected the path"),
    (lambda: headprompt.load({"kind": "hmm"}), r"^path=\{'kind': 'hmm'\}: expected the path"),
    (lambda: headprompt.load("instance.json", exact="no"), r"^exact='no': expected True or False"),
    (lambda: headprompt.load("/no/such/instance.json"), r"no such file"),
    (lambda: headprompt.HMM.create("x", [[1]], [1]), r"^A: expected nested lists or an array of numbers, found str"),
    (lambda: headprompt.HMM.create(None, None, None), r"^A: expected nested lists"),
    (lambda: headprompt.HMM.create([[1]], [[1]], 1), r"^pi0: expected nested lists"),
    (lambda: headprompt.HMM.create([[1]], [[1]], [1], exact="yes"), r"^exact='yes': expected True or False"),
    (lambda: headprompt.HMM.create([[1, 0]], [[1]], [1]), r"^A: expected a nonempty square matrix"),
    (lambda: headprompt.HMM.create([[1]], [[1]], [{}]), r"^pi0\[0\]: expected a number, found dict"),
    (lambda: headprompt.HMM.create([[1]], [[1]], ["\uff11"]), r"^pi0\[0\]: cannot read '\\uff11' as a number"),
    (lambda: headprompt.MemoryHMM.create("1", 2, 2, [[1]], [[1]], [1], [1]), r"^cells: expected an integer"),
])
def test_bad_arguments_of_load_and_create_are_input_errors(call, match):
    with pytest.raises(InputError, match=match) as info:
        call()
    assert "--" not in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["certificate", "out"])
def test_output_paths_are_checked_before_any_work(tmp_path, monkeypatch, name):
    from headprompt.verify import api

    def no_work(request):                       # the check must refuse before running anything
        raise AssertionError("ran the check before validating the paths")

    monkeypatch.setattr(api, "run_theorem", no_work)
    with pytest.raises(InputError, match=rf"^{name}='.*missing.*': the directory .* does not exist"):
        headprompt.check(None, "3.6", hidden=1000, **{name: tmp_path / "missing" / "c.json"})
    with pytest.raises(InputError, match=rf"^{name}='.*': is a directory"):
        headprompt.check(None, "3.6", hidden=1000, **{name: tmp_path})


@pytest.mark.parametrize("name", ["hmm", "witness"])
def test_input_paths_are_checked_before_any_work(tmp_path, monkeypatch, name):
    from headprompt.verify import api

    monkeypatch.setattr(api, "run_theorem", lambda request: pytest.fail("ran before validating the paths"))
    call = (lambda p: headprompt.check(p, "3.6")) if name == "hmm" else \
        (lambda p: headprompt.check(None, "3.6", hidden=1000, witness=p))
    with pytest.raises(InputError, match=rf"^{name}='.*nothing.json': no such file"):
        call(str(tmp_path / "nothing.json"))
    with pytest.raises(InputError, match=rf"^{name}='.*': is a directory"):
        call(str(tmp_path))


def test_certificate_on_a_full_device_blames_the_certificate(capsys):
    import os

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    code = main(["theorem", "3.6", "--hidden", "4", "--vocab", "3", "--samples", "20", "--certificate", "/dev/full"])
    err = capsys.readouterr().err
    assert code == 2 and "--certificate /dev/full: cannot write" in err      # probed before the run
    assert "standard output" not in err


def test_commas_separate_tokens_as_spaces_do(tmp_path, capsys):
    model = headprompt.HMM.create([[1, 0], [0, 1]], [["3/4", "1/4"], ["1/4", "3/4"]], ["1/2", "1/2"], mu=[1, -1])
    path = tmp_path / "m.json"
    save_instance(model, str(path))
    outs = []
    for seq in ("0 1", "0,1", "0, 1"):
        assert main(["posterior", "--hmm", str(path), "--seq", seq, "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] == outs[2]


def test_one_way_in_no_aliases_of_old_import_paths():
    import importlib
    import sys

    for old in ("headprompt.models.rationalize", "headprompt.verify.vanilla", "headprompt.verify.memory_check"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    assert not [f for f in sys.meta_path if type(f).__module__.startswith("headprompt")]


def test_to_frame_falls_back_to_bounded_floats_past_the_exact_limits(monkeypatch):
    pytest.importorskip("pandas")
    from headprompt.models.exceptions import LimitError
    from headprompt.verify.runtime import cost

    report = headprompt.check(None, "4.6", samples=30, length=3)
    sized = cost.check_fallback

    def refuse_large(sequences, *args, **kwargs):      # the exact rows (all of them) are too many
        if sequences > 10:
            raise LimitError(f"{sequences} sequences: over the limit (test)")
        return sized(sequences, *args, **kwargs)

    monkeypatch.setattr(cost, "check_fallback", refuse_large)
    with pytest.warns(UserWarning, match="exact margins refused"):
        frame = report.to_frame()
    assert "task_margin_bound" in frame.columns and "task_margin_exact" not in frame.columns
    with pytest.raises(LimitError):
        report.to_frame(exact=True)
