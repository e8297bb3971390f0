"""Hand-made false certificates of every kind issue 24 lists: each is rejected (exit 1, the
vacuous ones with ``rejected: vacuous``) or unreadable (exit 2), never accepted; and the true
certificates ``verify`` writes (several classes, long margins) are accepted."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from fractions import Fraction

import pytest

import headprompt
from headprompt import certcheck
from tests.certcheck.claims import claim_is_true


def _refused(cert, kind=certcheck.Rejected, match=None):
    with pytest.raises(kind, match=match):
        certcheck.check(copy.deepcopy(cert))


def test_a_zero_prompt_proves_nothing(certificates):
    """Issue 24: a Motzkin certificate whose prompt is 0 (every feature 0) on an instance where
    Theorem 3.6 holds."""
    good = certificates["3.6"]
    rows = good["sequences"]
    k0 = next(k for k, r in enumerate(rows) if r["F_star"] == 0)
    zero = {"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": "3.6", "claim": "no-linear-head",
            "instance": good["instance"], "sequences": [rows[k0]["x"]], "labels": [0],
            "certificate": {"y": ["1"], "z": ["0"]}, "prompt": ["0"] * len(good["instance"]["pi0"])}
    _refused(zero, certcheck.Vacuous, "prompt u = 0")
    # the same inside a theorem certificate claiming the assumptions fail
    fake = {k: v for k, v in good.items() if k not in ("witness", "identity", "covers", "sequences",
                                                      "sequences_checked_by_verify")}
    fake.update(verdict="assumptions-fail", motzkin=[{k: zero[k] for k in ("sequences", "labels", "certificate",
                                                                            "prompt")}])
    _refused(fake, certcheck.Rejected, "every assumption")
    # and as Theorem 3.3 (whose features take no prompt)
    _refused({**zero, "theorem": "3.3"}, certcheck.Rejected, "no place")


def test_a_relabelled_theorem_is_refused(certificates):
    motzkin = certificates["3.3-motzkin"]
    _refused({**motzkin, "theorem": "3.6"}, certcheck.Rejected, "names no prompt")
    n = len(motzkin["instance"]["pi0"])
    _refused({**motzkin, "theorem": "3.6", "prompt": ["1"] * n}, certcheck.Rejected)
    _refused({**certificates["3.3-fails"], "theorem": "3.6"}, certcheck.Rejected, "not an assumption of Theorem 3.6")
    _refused({**certificates["3.3"], "theorem": "3.6"}, certcheck.Rejected)
    _refused({**certificates["3.6"], "theorem": "3.3"}, certcheck.Rejected)
    _refused({**certificates["4.3"], "theorem": "3.3"}, certcheck.Rejected, "vanilla")
    _refused({**certificates["3.3"], "theorem": "4.3"}, certcheck.Rejected, "memory")


def test_a_relabelled_cell_count_is_refused(certificates):
    c6 = certificates["C.6"]
    assert c6["instance"]["cells"] == 2
    _refused({**c6, "theorem": "4.6", "assumptions": {"4.4": c6["assumptions"]["4.4"],
                                                      "4.5": c6["assumptions"]["C.5"]}},
             certcheck.Rejected, "one memory cell")
    fake = copy.deepcopy(c6)
    fake["instance"]["cells"] = 1           # the arrays no longer fit one cell
    with pytest.raises((certcheck.Rejected, certcheck.Unreadable)):
        certcheck.check(fake)


@pytest.mark.parametrize("name", ["3.3", "3.6", "3.3-classes", "4.6"])
def test_vacuous_claims_are_reported_vacuous(certificates, name):
    cert = copy.deepcopy(certificates[name])
    cert["covers"] = "listed"
    cert.pop("identity", None)
    cert["sequences"] = []
    _refused(cert, certcheck.Vacuous)
    one = copy.deepcopy(certificates[name])
    label0 = [r for r in one["sequences"] if r.get("F_star") == 0 and r.get("in_R", True)]
    one["sequences"] = [r for r in one["sequences"] if r not in label0]      # a class that never occurs
    _refused(one, certcheck.Vacuous, "could not have failed")


def test_only_impossible_sequences_are_vacuous():
    """A hand-made instance where state 1 never emits token 1 and is the only state reached."""
    inst = {"kind": "hmm", "A": [["0", "0"], ["1", "1"]], "W": [["1", "1"], ["0", "0"]], "pi0": ["1/2", "1/2"],
            "mu": ["1", "-1"]}
    cert = {"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": "3.3", "claim": "theorem",
            "instance": inst, "verdict": "verified", "assumptions": {"3.2": {"holds": False}},
            "witness": {"b": ["1", "1"], "u": None, "source": "given"}, "covers": "listed",
            "sequences": [{"x": [1], "task_margin": "0", "head_margin": "0", "F_star": 1, "F": 1},
                          {"x": [1, 1], "task_margin": "0", "head_margin": "0", "F_star": 1, "F": 1}]}
    _refused(cert, certcheck.Vacuous)
    motzkin = {"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": "3.3", "claim": "no-linear-head",
               "instance": inst, "sequences": [[1]], "certificate": {"y": ["1"], "z": ["0"]}}
    _refused(motzkin, certcheck.Rejected, "probability 0")
    _refused({**motzkin, "sequences": [], "certificate": {"y": [], "z": []}}, certcheck.Vacuous, "no sequences")


def test_an_empty_H_star_is_vacuous(certificates):
    cert = copy.deepcopy(certificates["3.6"])
    entry = cert["assumptions"]["3.5"]
    entry.update(B=[], H_star=[], left_inverse=[])
    _refused(cert, certcheck.Rejected)        # supp(mu) is not empty here: H* = [] is false
    cert["instance"]["mu"] = ["0"] * len(cert["instance"]["mu"])
    _refused(cert, certcheck.Vacuous, "H\\* is empty")
    mem = copy.deepcopy(certificates["4.3"])
    mem["assumptions"]["4.2"]["H_star"] = []
    mem["witness"]["H_star"] = []
    _refused(mem, certcheck.Vacuous, "H\\* is empty")


def test_assumption_claims_are_rederived(certificates):
    fails = copy.deepcopy(certificates["3.3-fails"])
    fails["assumptions"]["3.1"]["null_vector"] = ["0"] * len(fails["assumptions"]["3.1"]["null_vector"])
    _refused(fails, certcheck.Rejected, "null_vector")
    good = copy.deepcopy(certificates["3.3"])
    good["assumptions"]["3.2"]["holds"] = False
    _refused(good, certcheck.Rejected, "3.2 holds")
    good = copy.deepcopy(certificates["3.3"])
    good["assumptions"]["3.1"]["left_inverse"][0][0] = "7"
    _refused(good, certcheck.Rejected, "left_inverse")
    good = copy.deepcopy(certificates["3.3"])
    good["assumptions"]["3.1"] = {"holds": False, "null_vector": ["1"] + ["0"] * (len(good["instance"]["pi0"]) - 1)}
    _refused(good, certcheck.Rejected, "null_vector")
    no35 = copy.deepcopy(certificates["3.6-fails"])
    no35["assumptions"]["3.5"]["null_vectors"].pop()
    _refused(no35, certcheck.Rejected, "has no null vector")
    no42 = copy.deepcopy(certificates["4.3-fails"])
    no42["assumptions"]["4.2"]["evidence"].pop()
    _refused(no42, certcheck.Rejected, "has no evidence")
    stationary = copy.deepcopy(certificates["4.6"])
    stationary["assumptions"]["4.4"]["holds"] = False
    _refused(stationary, certcheck.Rejected, "4.4 holds")


def test_refuted_and_verified_say_whose_witness(certificates):
    line = certcheck.check(copy.deepcopy(certificates["3.6-refuted"]))
    assert "assumptions hold" in line and "a given witness" in line
    line = certcheck.check(copy.deepcopy(certificates["3.3"]))
    assert "the paper's construction, re-derived" in line and "every sequence x with Pr(x) > 0" in line
    other = copy.deepcopy(certificates["3.3-refuted"])          # a given head labelled as the construction:
    other["witness"]["source"] = "construction"                # provably not it, so a false claim
    _refused(other, certcheck.Rejected, "is not the paper's construction")
    unknown = copy.deepcopy(certificates["3.3"])               # no left inverse to re-derive it from:
    del unknown["assumptions"]["3.1"]                          # then only the writer's word, said so
    line = certcheck.check(unknown)
    assert "the paper's construction, as its writer says" in line and "3.1 not certified" in line
    cert = copy.deepcopy(certificates["3.3-refuted"])
    del cert["assumptions"]["3.1"]                        # not established: the line must not say they hold
    line = certcheck.check(cert)
    assert "assumptions hold" not in line and "3.1 not certified" in line


@pytest.mark.parametrize("name", ["3.3-classes", "3.6-classes"])
def test_several_classes_are_certified(certificates, name):
    cert = certificates[name]
    assert len(cert["instance"]["mu"]) == 3 and "task_scores" in cert["sequences"][0]
    line = certcheck.check(copy.deepcopy(cert))
    assert "3 classes occur" in line and claim_is_true(cert, line)
    bad = copy.deepcopy(cert)
    row = bad["sequences"][0]
    row["F_star"] = (row["F_star"] + 1) % 3
    _refused(bad, certcheck.Rejected, "F_star")


def _instance_30_digits():
    """Two states, 30-digit rationals, a sticky chain: both labels occur."""
    r = random.Random(1)

    def col(base):
        a = Fraction(base) + Fraction(r.randrange(1, 10 ** 29), 10 ** 31 + r.randrange(1, 10 ** 29))
        return [str(a), str(1 - a)]

    def mat(c0, c1):
        return [list(x) for x in zip(c0, c1)]

    return {"kind": "hmm", "A": mat(col("9/10"), col("1/10")), "W": mat(col("7/10"), col("3/10")),
            "pi0": col("1/2"), "mu": ["1", "-1"]}


@pytest.mark.slow
def test_a_certificate_with_15000_digit_margins_is_accepted(tmp_path):
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps(_instance_30_digits()))
    out = tmp_path / "c.json"
    headprompt.check(str(inst), "3.3", length=64, samples=1, certificate=str(out))
    cert = json.loads(out.read_text())
    assert max(len(r["task_margin"]) for r in cert["sequences"]) > 15000
    done = subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("accepted: Theorem 3.3 verified"), done.stdout + done.stderr


@pytest.mark.parametrize("name", ["4.3", "4.6-refuted"])
def test_a_memory_certificate_without_its_nondegeneracy_entry_says_what_the_witness_showed(certificates, name):
    """Without an entry for the non-degeneracy assumption (4.2 / 4.5), the checker still checks
    the witness's H* against it: the line says it holds with that H* (not "not certified"), and an
    H* that does not satisfy it is rejected."""
    cert = copy.deepcopy(certificates[name])
    asm = "4.2" if cert["theorem"] == "4.3" else "4.5"
    del cert["assumptions"][asm]
    line = certcheck.check(copy.deepcopy(cert))
    assert f"{asm} holds (shown with the witness's H*)" in line and f"{asm} not certified" not in line
    bad = copy.deepcopy(cert)
    bad["witness"]["H_star"] = []
    _refused(bad, certcheck.Rejected)
    n, cells = len(cert["instance"]["pi0"]), cert["instance"].get("cells", 1)
    if cells > 1:                                  # a state outside the target cell
        outside = copy.deepcopy(cert)
        other = next(h for h in range(n) if h // (n // cells) != cert["instance"]["target_cell"])
        outside["witness"]["H_star"] = sorted(set(cert["witness"]["H_star"]) | {other})
        _refused(outside, certcheck.Rejected, "not inside the target cell")
