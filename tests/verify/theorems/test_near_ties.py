"""Near-ties are found by default (exact ranking at every length), and the report says which
lengths were checked. The reproducer: a witness wrong only on one length-3 sequence whose margin
is -1e-40 used to be "verified" on the default sequence set."""

import dataclasses
from fractions import Fraction

import headprompt
import headprompt.verify.evidence.sequences as seqs
from headprompt.verify.cli.main import main

from tests import oracle


def _near_tie_instance():
    """A generated 3.6 instance whose task is moved so that mu . P[H_0 | (1, 0, 1)] = -1e-40
    exactly (only an entry inside H* changes, so Assumption 3.5 still holds)."""
    base = headprompt.check(None, "3.6", hidden=6, vocab=3, seed=0, samples=500)
    model, H_star = base.details["model"], base.to_dict()["witness"]["H_star"]
    x0 = [1, 0, 1]
    p0 = oracle.path_posterior(model, x0, 0)
    mu = [Fraction(m) for m in model.mu]
    k = next(h for h in H_star if p0[h] > 0 and mu[h] != 0)
    mu[k] -= (sum(m * p for m, p in zip(mu, p0)) + Fraction(1, 10 ** 40)) / p0[k]
    tuned = model.with_task([str(m) for m in mu])
    assert sum(m * p for m, p in zip(mu, oracle.path_posterior(tuned, x0, 0))) == Fraction(-1, 10 ** 40)
    return tuned, x0


def test_a_witness_wrong_only_on_a_near_tie_is_refuted_by_default(monkeypatch):
    tuned, x0 = _near_tie_instance()
    good = headprompt.check(tuned, "3.6", samples=2000)
    assert good.verdict == "verified"
    head = dataclasses.replace(good, details={**good.details, "sequences": [tuple(x0)]}).rows(exact=True)[0]["head_margin"]
    assert head < 0
    w = good.to_dict()["witness"]
    # G sums to 1, so adding |head margin| to every entry of b moves every head margin up by it:
    # exactly the sequences with head margin in [head, 0) flip, x0 among them
    bad = {"theorem": "3.6", "u": w["u"], "b": [str(Fraction(v) - head) for v in w["b"]]}
    report = headprompt.check(tuned, "3.6", witness=bad, samples=2000)
    assert report.verdict == "refuted"
    seq = report.to_dict()["counterexample"]["sequence"]
    # the disagreement is real: F*(x) from path sums, F(x) from the oracle's G
    post = oracle.path_posterior(tuned, seq, 0)
    f_star = int(sum(Fraction(m) * p for m, p in zip(tuned.mu, post)) >= 0)
    assert report.to_dict()["counterexample"]["expected"] == f_star != report.to_dict()["counterexample"]["got"]
    # without the exact near-tie search the same default set misses it (the reported bug)
    monkeypatch.setattr(seqs, "near_ties", lambda *a, **k: [])
    assert headprompt.check(tuned, "3.6", witness=bad, samples=2000).verdict == "verified"


def test_near_ties_rank_exactly_at_every_length():
    tuned, x0 = _near_tie_instance()
    found = seqs.near_ties(tuned, 4)
    assert tuple(x0) in found
    assert {len(s) for s in found} == {1, 2, 3, 4}
    # at length 3 the first nonzero entry is the global minimum of |mu . P| (path sums over all 27)
    margins = {s: abs(sum(Fraction(m) * p for m, p in zip(tuned.mu, oracle.path_posterior(tuned, list(s), 0))))
               for s in found if len(s) == 3}
    first = next(s for s in found if len(s) == 3)
    assert margins[first] == Fraction(1, 10 ** 40)


def test_the_human_line_lists_the_lengths_checked(capsys):
    assert main(["theorem", "3.6", "--hidden", "6", "--vocab", "3", "--samples", "100", "--length", "5"]) == 0
    out = capsys.readouterr().out
    assert "lengths 1-5" in out
    assert main(["theorem", "3.6", "--hidden", "6", "--vocab", "3", "--samples", "100", "--length", "5",
                 "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["sequences"]["lengths"] == [1, 2, 3, 4, 5]


def test_ties_are_reported_apart_and_a_label_seen_only_on_ties_is_weak(tmp_path, capsys):
    """Identity chain, state 0 emits 0, state 1 emits 1, mu = (-1, 0): every sequence starting
    with 1 is an exact tie (label 1 by >=), every other one has label 0. The path-sum oracle
    agrees; the report counts the ties apart and calls label 1 weak."""
    import json

    inst = {"kind": "hmm", "A": [[1, 0], [0, 1]], "W": [[1, 0], [0, 1]], "pi0": ["1/2", "1/2"], "mu": [-1, 0]}
    path, wit = tmp_path / "h.json", tmp_path / "w.json"
    path.write_text(json.dumps(inst))
    wit.write_text(json.dumps({"theorem": "3.3", "b": [-1, 0]}))
    model = headprompt.load(path)
    possible = [s for s in ([0], [1], [0, 0], [1, 1]) if sum(oracle.path_posterior(model, s, 0)) == 1]
    ties = [s for s in possible if sum(Fraction(m) * p for m, p in zip(model.mu, oracle.path_posterior(model, s, 0))) == 0]
    assert len(possible) == 4 and len(ties) == 2
    argv = ["theorem", "3.3", "--hmm", str(path), "--witness", str(wit), "--exhaustive", "--length", "2"]
    assert main(argv + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sequences"]["ties"] == len(ties) and data["labels"] == {"0": 2, "1": 2}
    assert data["labels_off_ties"] == {"0": 2, "1": 0} and data["weak"] is True and not data["vacuous"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "2 of them exact ties" in out and "WEAK" in out


def test_a_generated_memory_report_counts_its_ties_apart(capsys):
    import json

    assert main(["theorem", "4.6", "--samples", "300", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ties = data["sequences"]["ties"]
    assert data["labels_off_ties"] == {"0": data["labels"]["0"], "1": data["labels"]["1"] - ties}
    assert data["weak"] is False


def test_the_near_tie_search_stops_at_its_budget_and_says_so_in_the_lengths():
    """A length-4000 request searches only the lengths its exact-work budget covers (decided
    from sizes alone), returns nothing longer, and a report lists only lengths really checked."""
    import numpy as np

    from headprompt.models.generate.generators import prompt_friendly_hmm

    hmm = prompt_friendly_hmm(25, 10, rng=np.random.default_rng(0))[0]
    reach = seqs.near_tie_reach(hmm, 4000)
    assert 8 <= reach < 4000 and seqs.near_tie_reach(hmm, reach) == reach
    found = seqs.near_ties(hmm, 4000)
    assert found and max(map(len, found)) <= reach and {len(s) for s in found} == set(range(1, reach + 1))
    report = headprompt.check(hmm, "3.6", samples=5, length=200, mode="certified")
    assert set(report.to_dict()["sequences"]["lengths"]) <= set(range(1, reach + 1)) | {200}
    assert seqs.near_tie_reach(dataclasses.replace(hmm, mu=None), 10) == 0          # no task: no search
