"""Certificates of ``verify theorem --certificate`` (vanilla theorems) and their stdlib-only checker
(``headprompt.certcheck``): accepted when true, rejected with the reason when any claim is
changed; the checker's own arithmetic agrees with brute-force path sums."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction

import pytest

import headprompt
from headprompt import certcheck
from headprompt.models.exceptions import InputError
from tests.oracle import path_gbar, path_posterior

def _cert(tmp_path, theorem, name="c.json", **options):
    path = tmp_path / name
    report = headprompt.check(None, theorem, certificate=str(path), **options)
    return report, json.loads(path.read_text())


@pytest.fixture
def certs(certificates):
    return {"3.3": certificates["3.3"], "3.6": certificates["3.6"], "3.1-fails": certificates["3.3-fails"]}


@pytest.mark.parametrize("name", ["3.3", "3.6", "3.1-fails"])
def test_true_certificates_are_accepted(certs, name):
    assert certcheck.check(copy.deepcopy(certs[name])).startswith("accepted")


def test_assumption_failure_carries_a_motzkin_certificate(certs):
    cert = certs["3.1-fails"]
    assert cert["verdict"] == "assumptions-fail" and cert["motzkin"][0]["certificate"]["y"]


def _bump(text):
    v = Fraction(text)
    return str(v + Fraction(1, 7) if v <= Fraction(1, 2) else v - Fraction(1, 7))   # stays in [0, 1]


@pytest.mark.parametrize("name,path,why", [
    ("3.6", ("instance", "mu", 0), "identity"),
    ("3.6", ("witness", "b", 1), "identity"),
    ("3.6", ("witness", "u", 0), "identity"),
    ("3.6", ("identity", "lambda"), "identity"),
    ("3.6", ("sequences", 2, "task_margin"), "task margin"),
    ("3.6", ("sequences", 0, "head_margin"), "head margin"),
    ("3.3", ("instance", "pi0", 0), "pi0"),
    ("3.3", ("sequences", 1, "head_margin"), "head margin"),
    ("3.1-fails", ("motzkin", 0, "certificate", "y", 0), r"motzkin\[0\]"),
])
def test_any_changed_number_is_rejected_with_the_reason(certs, name, path, why):
    cert = copy.deepcopy(certs[name])
    node = cert
    for key in path[:-1]:
        node = node[key]
    if name == "3.1-fails":        # bump a nonzero entry of y or z (a zero stays a valid pattern rarely)
        ys = cert["motzkin"][0]["certificate"]["y"]
        k = next(i for i, v in enumerate(ys) if Fraction(v) != 0)
        ys[k] = _bump(ys[k])
    else:
        node[path[-1]] = _bump(node[path[-1]])
    with pytest.raises(certcheck.Rejected, match=why):
        certcheck.check(cert)


def test_a_changed_transition_is_rejected(certs):
    cert = copy.deepcopy(certs["3.6"])
    col = [row[0] for row in cert["instance"]["A"]]
    i = next(k for k, v in enumerate(col) if Fraction(v) > 0)
    j = (i + 1) % len(col)
    delta = Fraction(col[i]) / 2         # move mass inside column 0: still stochastic, another HMM
    cert["instance"]["A"][i][0] = str(Fraction(col[i]) - delta)
    cert["instance"]["A"][j][0] = str(Fraction(col[j]) + delta)
    with pytest.raises(certcheck.Rejected):
        certcheck.check(cert)


def test_a_swapped_witness_is_rejected(certs):
    cert = copy.deepcopy(certs["3.6"])
    b = cert["witness"]["b"]
    cert["witness"]["b"] = [str(-Fraction(v)) for v in b]          # the opposite head
    with pytest.raises(certcheck.Rejected, match="identity"):
        certcheck.check(cert)
    cert = copy.deepcopy(certs["3.6"])
    cert["witness"]["u"] = cert["witness"]["u"][::-1] if len(set(cert["witness"]["u"])) > 1 else \
        ["1"] * len(cert["witness"]["u"])
    with pytest.raises(certcheck.Rejected, match="identity"):
        certcheck.check(cert)


def test_a_flipped_label_is_rejected(certs):
    cert = copy.deepcopy(certs["3.3"])
    cert["sequences"][0]["F_star"] = 1 - cert["sequences"][0]["F_star"]
    with pytest.raises(certcheck.Rejected, match="labels"):
        certcheck.check(cert)


def test_listed_claims_still_reject_a_disagreement(certs):
    """Without the identity, the claim is the listed sequences: a wrong head fails on one."""
    cert = copy.deepcopy(certs["3.6"])
    cert["covers"] = "listed"
    del cert["identity"]
    cert["witness"]["b"] = [str(-Fraction(v)) for v in cert["witness"]["b"]]
    for row in cert["sequences"]:       # keep the printed numbers consistent with the new head
        row["head_margin"] = str(-Fraction(row["head_margin"]))
        row["F"] = int(Fraction(row["head_margin"]) >= 0)
    with pytest.raises(certcheck.Rejected, match="disagrees"):
        certcheck.check(cert)


def test_checker_arithmetic_matches_path_sums(certs):
    """The checker's integer backward pass, scaled back, gives the path-sum posterior margin and
    the path-sum head margin ``b . Gbar_2(u, e(∅), e(x))``."""
    cert = certs["3.6"]
    inst = certcheck.Vanilla(cert["instance"])
    hmm = headprompt.HMM.create(cert["instance"]["A"], cert["instance"]["W"], cert["instance"]["pi0"],
                                cert["instance"]["mu"])
    u = [Fraction(v) for v in cert["witness"]["u"]]
    b = [Fraction(v) for v in cert["witness"]["b"]]
    pre = inst.pre("3.6", u)
    filler = [Fraction(1)] * hmm.num_states
    seqs = [tuple(row["x"]) for row in cert["sequences"][:5]]
    for k, beta in inst.betas(seqs):
        seq = list(seqs[k])
        nums, den = inst.task(beta)
        assert Fraction(nums[0], den) == sum(Fraction(m) * p for m, p in zip(hmm.mu, path_posterior(hmm, seq, 0)))
        g = path_gbar(hmm.A, hmm.W, hmm.pi0, [u, filler] + [list(hmm.W[z]) for z in seq], 1)
        tau = [p * b_ for p, b_ in zip(pre, beta)]
        mine = [sum(Fraction(w) * t for w, t in zip(inst.W[x], tau)) / sum(tau) for x in range(inst.m)]
        assert mine == g


def test_refuted_certificate_lists_the_disagreement(tmp_path, certs):
    witness = tmp_path / "w.json"
    src = certs["3.3"]
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps({k: src["instance"][k] for k in ("kind", "A", "W", "pi0", "mu")}))
    witness.write_text(json.dumps({"theorem": "3.3", "b": [str(-Fraction(v)) for v in src["witness"]["b"]]}))
    report, cert = _cert(tmp_path, "3.3", hmm=str(inst), witness=str(witness), samples=20, length=2)
    assert report.data["verdict"] == "refuted" and cert["covers"] == "listed"
    assert certcheck.check(copy.deepcopy(cert)).startswith("accepted")
    cert["sequences"][0]["F"] = 1 - cert["sequences"][0]["F"]
    with pytest.raises(certcheck.Rejected):
        certcheck.check(cert)


def test_a_float_certificate_is_refused_before_work(tmp_path):
    for theorem, options in (("4.3", {"mode": "float"}), ("3.3", {"mode": "float"})):
        with pytest.raises(InputError, match="--certificate"):
            headprompt.check(None, theorem, certificate=str(tmp_path / "x.json"), **options)
        assert not (tmp_path / "x.json").exists()


def test_out_and_certificate_naming_one_file_is_refused(tmp_path):
    path = tmp_path / "same.json"
    done = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.3", "--hidden", "2",
                           "--out", str(path), "--certificate", str(tmp_path / "." / "same.json")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--out and --certificate" in done.stderr
    assert not path.exists()
