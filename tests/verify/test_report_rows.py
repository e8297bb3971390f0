"""Report rows, text, HTML and plot (SPEC section 5): rows against path sums (the brute-force
oracle) and the direct route, float margins within their certified bounds of the exact ones,
computed once, sized before exact work; ``str(report)`` is the CLI's report."""

import io
import time
from contextlib import redirect_stdout
from fractions import Fraction

import pytest

import headprompt
from headprompt.models.exceptions import InputError
from headprompt.verify.cli.main import main
from headprompt.verify.runtime import cost
from headprompt.verify.checks.memory.check import decide_direct
from tests import oracle


def _within_bounds(floats, exact):
    for f, e in zip(floats, exact):
        assert (f["sequence"], f["possible"], f["in_R"], f["F_star"], f["F"], f["tie"]) == \
               (e["sequence"], e["possible"], e["in_R"], e["F_star"], e["F"], e["tie"])
        if not e["possible"]:
            assert f["task_margin"] is None and e["task_margin"] is None
            continue
        for key in ("task_margin", "head_margin"):
            assert isinstance(e[key], Fraction) and e[f"{key}_bound"] == 0
            assert abs(Fraction(f[key]) - e[key]) <= Fraction(f[f"{key}_bound"])


@pytest.mark.parametrize("theorem, hidden, vocab", [("3.3", 3, 4), ("3.6", 4, 3)])
def test_vanilla_rows_match_path_sums_and_the_floats_are_within_their_bounds(theorem, hidden, vocab):
    report = headprompt.check(None, theorem, hidden=hidden, vocab=vocab, exhaustive=True, length=3)
    exact = report.rows(exact=True)
    assert report.verdict == "verified" and len(exact) == sum(vocab ** t for t in (1, 2, 3))
    model, w = report.details["model"], report.details["witness"]
    filler = [Fraction(1)] * model.num_states
    for r in exact:
        seq = r["sequence"]
        assert r["possible"] == (oracle.joint_probability(model, seq) > 0)
        if not r["possible"]:
            continue
        post = oracle.path_posterior(model, seq, 0)
        emb = [list(model.W[z]) for z in seq]
        g = (oracle.path_gbar(model.A, model.W, model.pi0, [filler] + emb, 0) if theorem == "3.3" else
             oracle.path_gbar(model.A, model.W, model.pi0, [list(w.u), filler] + emb, 1))
        assert r["task_margin"] == sum(m * p for m, p in zip(model.mu, post))
        assert r["head_margin"] == sum(Fraction(b) * x for b, x in zip(w.b, g))
        assert r["F_star"] == int(r["task_margin"] >= 0) and r["tie"] == (r["task_margin"] == 0)
    _within_bounds(report.rows(), exact)


def test_memory_rows_match_the_direct_route_and_path_sums():
    report = headprompt.check(None, "4.6", samples=60, length=3)
    exact, floats = report.rows(exact=True), report.rows()
    d = report.details
    assert len(exact) == len(d["sequences"]) and sum(r["in_R"] for r in exact) == report.to_dict()["sequences"]["in_R"]
    for r in exact[:25]:
        direct = decide_direct(d["model"], d["witness"], d["H_star"], r["sequence"])
        assert (r["possible"], r["in_R"]) == (direct.possible, direct.in_R)
        if r["possible"]:
            assert (r["task_margin"], r["head_margin"]) == (direct.task_margin, direct.head_margin)
            post = oracle.memory_posterior(d["model"], r["sequence"], d["model"].target_cell)
            assert r["task_margin"] == sum(m * p for m, p in zip(d["model"].mu, post))
    _within_bounds(floats, exact)


def test_rows_are_computed_once_and_returned_as_fresh_dicts():
    report = headprompt.check(None, "3.6", hidden=6, vocab=3, samples=300, length=5)
    first = report.rows()
    first[0]["F"] = "changed"
    start = time.perf_counter()
    again = report.rows()
    assert time.perf_counter() - start < 0.5 and again[0]["F"] != "changed"
    assert [r["sequence"] for r in again] == [r["sequence"] for r in first]


def test_exact_rows_past_the_limits_are_refused_before_any_work(monkeypatch):
    report = headprompt.check(None, "4.3", samples=50, length=3)
    monkeypatch.setattr(cost, "MAX_SECONDS", 0)
    with pytest.raises(InputError, match="could not be decided|limit"):
        report.rows(exact=True)


@pytest.mark.parametrize("theorem, options", [("3.6", dict(hidden=5, vocab=3, samples=60, length=4)),
                                              ("4.6", dict(samples=40, length=3))])
def test_str_is_the_cli_report(theorem, options):
    report = headprompt.check(None, theorem, **options)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["theorem", theorem] + [f"--{k}={v}" for k, v in options.items()]) == report.exit_code
    strip = lambda text: [line for line in text.splitlines() if not line.startswith("time:")]  # noqa: E731
    assert strip(str(report)) == strip(buf.getvalue()) and "assumption" in str(report)
    html = report._repr_html_()
    assert html.startswith("<table>") and "identity" in html and report.to_dict()["verdict"] in html


def test_plot_marks_ties_and_the_robustness_radius():
    import matplotlib

    matplotlib.use("Agg")
    report = headprompt.check(None, "3.6", hidden=5, vocab=3, samples=60, length=4)
    assert any(r["tie"] for r in report.rows())                  # the generated instance has a tie
    fig = report.plot()
    labels = [t for ax in fig.axes for t in ax.get_legend_handles_labels()[1]]
    assert any(t.startswith("tie (") for t in labels) and any("robustness radius" in t for t in labels)
    assert fig.axes[0].get_xlabel() == "sequence length"
