"""Certificates of ``verify theorem --certificate`` and their stdlib-only checker
(``headprompt.certcheck``): accepted when true, rejected with the reason when any claim is
changed; the checker's own arithmetic agrees with brute-force path sums."""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import headprompt
from headprompt import certcheck
from headprompt.models.exceptions import InputError
from tests.oracle import path_gbar, path_posterior

ROOT = Path(__file__).resolve().parents[3]


def _cert(tmp_path, theorem, name="c.json", **options):
    path = tmp_path / name
    report = headprompt.check(None, theorem, certificate=str(path), **options)
    return report, json.loads(path.read_text())


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("certs")
    out = {}
    out["3.3"] = _cert(tmp, "3.3", "a.json", hidden=3, vocab=3, samples=40, length=3)[1]
    out["3.6"] = _cert(tmp, "3.6", "b.json", hidden=4, vocab=3, samples=40, length=3)[1]
    out["3.1-fails"] = _cert(tmp, "3.3", "c.json", hidden=4, vocab=2, samples=40, length=3)[1]
    return out


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
    cert["witness"]["b"] = [str(-Fraction(v)) for v in cert["witness"]["b"]]
    for row in cert["sequences"]:       # keep the printed numbers consistent with the new head
        row["head_margin"] = str(-Fraction(row["head_margin"]))
        row["F"] = int(Fraction(row["head_margin"]) >= 0)
    with pytest.raises(certcheck.Rejected, match="disagrees"):
        certcheck.check(cert)


def test_checker_arithmetic_matches_path_sums(certs):
    cert = certs["3.6"]
    inst = certcheck.Instance(cert["instance"])
    hmm = headprompt.HMM.create(cert["instance"]["A"], cert["instance"]["W"], cert["instance"]["pi0"],
                                cert["instance"]["mu"])
    u = [Fraction(v) for v in cert["witness"]["u"]]
    b = [Fraction(v) for v in cert["witness"]["b"]]
    pre = inst.pre("3.6", u)
    filler = [Fraction(1)] * hmm.num_states
    for row in cert["sequences"][:5]:
        seq = row["x"]
        beta = inst.beta(seq)
        star, _ = inst.task_margin(beta)
        assert star == sum(Fraction(m) * p for m, p in zip(hmm.mu, path_posterior(hmm, seq, 0)))
        g = path_gbar(hmm.A, hmm.W, hmm.pi0, [u, filler] + [list(hmm.W[z]) for z in seq], 1)
        assert inst.head_margin(b, pre, beta) == sum(x * y for x, y in zip(b, g))


def test_refuted_certificate_lists_the_disagreement(tmp_path, certs):
    witness = tmp_path / "w.json"
    src = certs["3.3"]
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps({"kind": "hmm", **{k: src["instance"][k] for k in ("A", "W", "pi0", "mu")}}))
    witness.write_text(json.dumps({"theorem": "3.3", "b": [str(-Fraction(v)) for v in src["witness"]["b"]]}))
    report, cert = _cert(tmp_path, "3.3", hmm=str(inst), witness=str(witness), samples=40, length=3)
    assert report.data["verdict"] == "refuted" and cert["covers"] == "listed"
    assert certcheck.check(copy.deepcopy(cert)).startswith("accepted")
    cert["sequences"][0]["F"] = 1 - cert["sequences"][0]["F"]
    with pytest.raises(certcheck.Rejected):
        certcheck.check(cert)


def test_a_multiclass_or_float_certificate_is_refused_before_work(tmp_path):
    for options in ({"classes": 3}, {"mode": "float"}):
        with pytest.raises(InputError, match="--certificate"):
            headprompt.check(None, "4.3", certificate=str(tmp_path / "x.json"), **options)
        assert not (tmp_path / "x.json").exists()


def test_cli_exit_codes(tmp_path, certs):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(certs["3.6"]))
    bad = copy.deepcopy(certs["3.6"])
    bad["sequences"][0]["task_margin"] = "1/3"
    badf = tmp_path / "bad.json"
    badf.write_text(json.dumps(bad))
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    for args, code, word in ((["-m", "headprompt.certcheck", str(good)], 0, "accepted"),
                             ([str(ROOT / "api" / "certcheck.py"), str(good)], 0, "accepted"),
                             (["-m", "headprompt.certcheck", str(badf)], 1, "rejected: sequences[0]"),
                             (["-m", "headprompt.certcheck", str(junk)], 2, "unreadable")):
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == code
        assert word in done.stdout + done.stderr
        assert len((done.stdout + done.stderr).strip().splitlines()) == 1


def test_checker_imports_only_the_standard_library():
    tree = ast.parse((ROOT / "api" / "certcheck.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            names.add(node.module.split(".")[0])
    assert names and names <= set(sys.stdlib_module_names) | {"__future__"}
