"""Certificates of the memory theorems (4.3, 4.6, C.6) and the stdlib checker's memory part:
true certificates are accepted, any changed claim is rejected with the reason, and the
checker's arithmetic agrees with sums over memories and hidden paths."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

import headprompt
from headprompt import certcheck
from tests.certcheck.claims import claim_is_true
from tests.oracle import memory_conditional, memory_posterior


@pytest.fixture
def certs(certificates):
    return certificates


def _in_R(cert):
    return next(k for k, row in enumerate(cert["sequences"]) if row["in_R"])


def _bump(text):
    return str(Fraction(text) + Fraction(1, 7))


@pytest.mark.parametrize("tid", ["4.3", "4.6", "C.6"])
def test_true_memory_certificates_are_accepted(certs, tid):
    cert = certs[tid]
    assert cert["instance"]["kind"] == "memory-hmm" and cert["covers"] == "listed"
    assert any(row["in_R"] for row in cert["sequences"])
    assert certcheck.check(copy.deepcopy(cert)).startswith(f"accepted: Theorem {tid} verified")


@pytest.mark.parametrize("tid", ["4.3", "4.6", "C.6"])
@pytest.mark.parametrize("field,why", [("task_margin", "task margin"), ("head_output", "attention output")])
def test_a_changed_margin_is_rejected(certs, tid, field, why):
    cert = copy.deepcopy(certs[tid])
    row = cert["sequences"][_in_R(cert)]
    row[field] = _bump(row[field])
    with pytest.raises(certcheck.Rejected, match=why):
        certcheck.check(cert)


@pytest.mark.parametrize("tid", ["4.3", "C.6"])
def test_flipped_labels_membership_and_attention_are_rejected(certs, tid):
    k = _in_R(certs[tid])
    for change, why in ((lambda r: r.update(F=1 - r["F"]), "labels"),
                        (lambda r: r.update(in_R=not r["in_R"]), "x in R"),
                        (lambda r: r.update(Z=r["Z"][:-1]), "x in R"),
                        (lambda r: r.update(attended=r["attended"] + [99]), "attends")):
        cert = copy.deepcopy(certs[tid])
        change(cert["sequences"][k])
        with pytest.raises(certcheck.Rejected, match=why):
            certcheck.check(cert)


@pytest.mark.parametrize("tid", ["4.3", "4.6"])
def test_a_swapped_head_is_rejected_even_with_consistent_numbers(certs, tid):
    """The opposite head b -> -b with every printed output and label made consistent with it:
    the claim 'verified' now fails on a sequence in R whose task margin is not 0."""
    cert = copy.deepcopy(certs[tid])
    cert["witness"]["b"] = [str(-Fraction(v)) for v in cert["witness"]["b"]]
    for row in cert["sequences"]:
        if row["in_R"]:
            row["head_output"] = str(-Fraction(row["head_output"]))
            row["F"] = int(Fraction(row["head_output"]) >= 0)
    assert any(Fraction(r["task_margin"]) != 0 for r in cert["sequences"] if r["in_R"])
    with pytest.raises(certcheck.Rejected, match="disagrees"):
        certcheck.check(cert)


def test_a_changed_instance_is_rejected(certs):
    cert = copy.deepcopy(certs["4.3"])
    W = cert["instance"]["W"]                    # move emission mass inside column (m=0, h=0)
    col = [W[x][0][0] for x in range(len(W))]
    i = next(x for x, v in enumerate(col) if Fraction(v) > 0)
    j = (i + 1) % len(col)
    d = Fraction(col[i]) / 2
    W[i][0][0], W[j][0][0] = str(Fraction(col[i]) - d), str(Fraction(col[j]) + d)
    try:                          # another instance: rejected, or (few rows listed) still true there
        line = certcheck.check(copy.deepcopy(cert))
    except certcheck.Rejected:
        pass
    else:
        assert claim_is_true(cert, line)
    cert = copy.deepcopy(certs["4.3"])
    cert["instance"]["pM"][0] = _bump(cert["instance"]["pM"][0])
    with pytest.raises(certcheck.Rejected, match="pM"):
        certcheck.check(cert)


def test_an_H_star_without_the_rank_condition_is_rejected(certs):
    cert = copy.deepcopy(certs["4.3"])
    inst = cert["instance"]
    h = cert["witness"]["H_star"][0]
    for x in range(len(inst["W"])):               # W_(1,h) := W_(0,h): still stochastic, now dependent
        inst["W"][x][1][h] = inst["W"][x][0][h]
    with pytest.raises(certcheck.Rejected, match="Assumption 4.2"):
        certcheck.check(cert)
    cert = copy.deepcopy(certs["4.3"])
    S = cert["instance"]["syntax_states"]
    cell = cert["instance"]["target_cell"]
    outside = next(k for k in range(cert["instance"]["cells"] * S) if k // S != cell)
    cert["witness"]["H_star"] = cert["witness"]["H_star"] + [outside]
    with pytest.raises(certcheck.Rejected, match="target cell"):
        certcheck.check(cert)


def test_memory_checker_arithmetic_matches_path_sums(certs):
    cert = certs["4.3"]
    block = cert["instance"]
    inst = certcheck.Memory(block)
    mhmm = headprompt.MemoryHMM.create(block["cells"], block["memory_values"], block["syntax_states"],
                                       block["A"], block["W"], block["pi0"], block["pM"], mu=block["mu"],
                                       target_cell=block["target_cell"])
    rows = [r for r in cert["sequences"] if r["in_R"]][:3]
    assert rows
    for row in rows:
        seq = row["x"]
        joint, taus = inst.messages([inst.lifted_emission(z) for z in seq])
        post = memory_posterior(mhmm, seq, block["target_cell"])
        assert inst.task_margin(joint) == sum(Fraction(m) * p for m, p in zip(mhmm.mu, post))
        for i, tau in enumerate(taus):       # G_i(x) = P[X_i | X_-i = x_-i] (proper embeddings)
            assert inst.gbar(tau) == memory_conditional(mhmm, list(seq), i)
