"""``verify statements``: every row states its scope and checks the statement as the paper words
it; each check holds on the true statement, fails on a mutated one, and never passes on an empty
input; the brute force and the assumption oracles agree with tests/oracle.py."""

from __future__ import annotations

import itertools
import json
import re
from fractions import Fraction
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from headprompt import HMM
from headprompt.models.inference import exact as ie
from headprompt.verify.cli.main import main
from headprompt.verify.studies import statements as st
from headprompt.verify.checks.memory import assumptions as masm
from headprompt.verify.studies.statements import assumptions as sa
from headprompt.verify.studies.statements import theorems as sth
from headprompt.verify.checks.vanilla import assumptions as vasm
from tests import oracle

PAPER = sorted(Path("/work/shared/paper").glob("003_*.txt"))


@pytest.fixture(scope="module")
def rows():
    """``verify statements --json`` run once for the module."""
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["statements", "--json"])
    return code, json.loads(buf.getvalue())


# ------------------------------------------------------------------ the command

def test_every_row_has_a_scope_and_none_fails(rows):
    code, data = rows
    assert code == 0 and data["failed"] == []
    for r in data["statements"]:
        assert r["scope"] and isinstance(r["scope"], dict), r["statement"]
        assert r["result"] in st.RESULTS
        if r["statement"].startswith("Assumption"):
            assert r["result"] == "agrees" and "holding" in r["detail"] and "failing" in r["detail"]
            assert r["counts"]["holding"] > 0 and r["counts"]["failing"] > 0
        elif r["result"] != "indirect":
            assert r["result"] == "holds", r


def test_rows_report_the_scope_they_ran(rows):
    _, data = rows
    by = {r["statement"]: r for r in data["statements"]}
    c15 = by["Claim C.15"]["counts"]
    assert c15["claim"] > 0 and "Pr(x) > 0 and Pr(xhat) = 0" in by["Claim C.15"]["detail"]
    assert by["Lemma B.1"]["counts"]["zero_norm"] > 0 and by["Lemma B.1"]["counts"]["positive"] > 0
    assert by["Lemma C.7"]["scope"]["cells"] >= 2 and by["Lemma C.7"]["counts"]["zero_norm"] > 0
    assert by["Proposition C.8"]["counts"]["cells"] >= 2
    for tid in ("3.3", "3.6", "4.3", "4.6", "C.6"):
        c = by[f"Theorem {tid}"]["counts"]
        assert c["instances"] >= 3 and c["ties_brute"] >= c["instances"], tid
        assert by[f"Theorem {tid}"]["scope"]["instances"] == c["instances"]
    for name in ("Theorem 3.3", "Theorem 3.6", "Proposition 3.4", "Claim A.1", "Lemma B.2"):
        assert "(3, 3, 2)" in by[name]["detail"], name           # symbolic size 3
    for r in data["statements"]:                                   # no row names a check it does not run
        if "symbolic" in r["how"]:
            assert "proved symbolically" in r["detail"], r["statement"]


def test_text_output_prints_scope(capsys, monkeypatch):
    monkeypatch.setattr(st, "STATEMENTS", [r for r in st.STATEMENTS if r[0] in ("Claim C.15", "Lemma C.9")])
    assert main(["statements"]) == 0
    out = capsys.readouterr().out
    assert out.count("scope:") == 2 and "Pr(x) > 0 and Pr(xhat) = 0" in out


def test_a_vacuous_row_makes_the_command_fail(capsys, monkeypatch):
    hmm = st.zero_norm_instance()
    row = ("Lemma B.1", "test", {"sequences": "none"}, lambda: st.check_lemma_b1(hmm, [1, 0, 0], []))
    monkeypatch.setattr(st, "STATEMENTS", [row])
    assert main(["statements", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["statements"][0]["result"] == "vacuous" and data["failed"] == ["Lemma B.1"]


@pytest.mark.skipif(not PAPER, reason="paper text not available")
def test_every_numbered_statement_of_the_paper_is_listed():
    text = PAPER[0].read_text()
    found = set(re.findall(r"(?:Theorem|Lemma|Claim|Proposition|Assumption|Example|Corollary) [3-4A-C]\.\d+", text))
    listed = {row[0] for row in st.STATEMENTS}
    assert found and found <= listed


# ------------------------------------------------------------------ brute force vs tests/oracle.py

def test_path_joint_matches_the_oracle():
    hmm = st.small_instance(4)
    W = [list(r) for r in hmm.W]
    emb = [W[1], [Fraction(1, 3)] * 3, W[0]]
    ones = [Fraction(1)] * 3
    assert st.path_joint(hmm.A, W, hmm.pi0, [emb[0], ones, emb[2]], keep=2) == oracle.path_tau(hmm.A, hmm.pi0, emb, 1)
    assert st.path_joint(hmm.A, W, hmm.pi0, [W[z] for z in (1, 0)]) == oracle.joint_probability(hmm, [1, 0])


def test_memory_path_joint_matches_the_oracle():
    m = st.two_cell_instance()
    for seq in [(0,), (2, 3), (4, 1)]:
        per = [p for _, p in oracle.memory_joint(m, list(seq))]
        tokens = [("token", z) for z in seq]
        assert st.memory_path_joint(m, tokens, by_config=True) == per
        assert st.memory_path_joint(m, tokens) == sum(per)
        lifted = st.memory_path_joint(m, tokens, keep=0)
        assert [sum(lifted[c * m.num_states:(c + 1) * m.num_states]) for c in range(len(per))] == per


# ------------------------------------------------------------------ Lemma B.1

def test_lemma_b1_both_halves_hold_and_the_zero_norm_cases_are_real():
    hmm = st.zero_norm_instance()
    u = [1, 0, 0]
    ok, why, c = st.check_lemma_b1(hmm, u, st.words(2, 3))
    assert ok, why
    assert c["zero_norm"] > 0 and c["positive"] > 0
    filler = [Fraction(1)] * 3                   # the oracle finds the same zero-norm positions
    zero = 0
    for x in st.words(2, 3):
        emb = [u, filler] + [list(hmm.W[z]) for z in x]
        for i in range(len(emb)):
            if sum(oracle.path_tau(hmm.A, hmm.pi0, emb, i)) == 0:
                zero += 1
                assert oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, emb, i) == [0, 0]
    assert zero == c["zero_norm"]


def test_lemma_b1_wrong_statements_are_refuted():
    hmm, u, seqs = st.zero_norm_instance(), [1, 0, Fraction(1, 2)], st.words(2, 3)
    ok, why, _ = st.check_lemma_b1(hmm, u, seqs, fake=[1, 0, Fraction(1, 4)])          # z~ emits something else
    assert not ok and "augmented" in why
    ok, why, _ = st.check_lemma_b1(hmm, [1, 0, 0], seqs, zero_value=[Fraction(1, 2)] * 2)   # Gbar uniform at norm 0
    assert not ok and "Pr(Xhat_-i) = 0" in why


def test_lemma_b1_empty_input_is_vacuous():
    ok, why, _ = st.check_lemma_b1(st.zero_norm_instance(), [1, 0, 0], [])
    assert not ok and why.startswith("vacuous")


# ------------------------------------------------------------------ Lemma C.7, Proposition C.8

def test_lemma_c7_holds_with_two_cells():
    m = st.two_cell_instance()
    assert m.cells == 2
    ok, why, c = st.check_lemma_c7(m, st.paper_prompt(m), st.words(m.num_tokens, 2))
    assert ok, why
    assert c["zero_norm"] > 0 and c["positive"] > 0


def test_lemma_c7_without_the_factor_is_refuted(monkeypatch):
    m = st.two_cell_instance()
    u, seqs = st.paper_prompt(m), [(0,), (2, 3)]
    ok, why, _ = st.check_lemma_c7(m, u, seqs, factor=1)                       # the statement without |M|^-(N-1)
    assert not ok and "phi(tau_i)" in why
    real = ie.reverse_lift                                                     # the code without it
    monkeypatch.setattr(ie, "reverse_lift", lambda mh, w: [x * m.memory_values ** (mh.cells - 1) for x in real(mh, w)])
    ok, why, _ = st.check_lemma_c7(m, u, seqs)
    assert not ok and "phi(tau_i)" in why


def test_lemma_c7_other_wrong_statements_and_empty_input():
    m = st.two_cell_instance()
    u = st.paper_prompt(m)
    ok, why, _ = st.check_lemma_c7(m, u, [(0,)], fake=[Fraction(1, 2)] * len(u))
    assert not ok
    ok, why, _ = st.check_lemma_c7(m, u, st.words(m.num_tokens, 2), zero_value=[Fraction(1, 5)] * 5)
    assert not ok and "Pr(Xhat_-i) = 0" in why
    ok, why, _ = st.check_lemma_c7(m, u, [])
    assert not ok and why.startswith("vacuous")


def test_prop_c8_holds_on_the_memory_hmm_and_needs_stationarity():
    m = st.two_cell_instance()
    ok, why, _ = st.check_prop_c8(m, st.words(m.num_tokens, 2))
    assert ok, why
    from dataclasses import replace
    skew = replace(m, pi0=np.array([Fraction(1), Fraction(0)], dtype=object))
    ok, why, _ = st.check_prop_c8(skew, st.words(m.num_tokens, 1))
    assert not ok and "!=" in why
    ok, why, _ = st.check_prop_c8(m, [])
    assert not ok and why.startswith("vacuous")


# ------------------------------------------------------------------ Proposition C.11, Claims C.14, C.15

def test_prop_c11_holds_with_the_papers_prompt_and_fails_with_one_that_is_not_zero_off_supp_mu():
    m = st.two_cell_instance()
    u = st.paper_prompt(m)
    assert set(u) == {0, 1}
    ok, why, _ = st.check_prop_c11(m, u, st.words(m.num_tokens, 2))
    assert ok, why
    ok, why, _ = st.check_prop_c11(m, [Fraction(1)] * len(u), st.words(m.num_tokens, 2))
    assert not ok and "outside supp(mu)" in why
    assert not st.check_prop_c11(m, u, [])[0]


def test_claim_c14_holds_and_fails_without_its_premises():
    from dataclasses import replace

    m = st.two_cell_instance()
    u, words = st.paper_prompt(m), st.words(m.num_tokens, 2)
    ok, why, _ = st.check_claim_c14(m, u, words)
    assert ok, why
    ok, why, _ = st.check_claim_c14(m, [v / 2 for v in u], words)           # u not 1 on supp(mu)
    assert not ok and "mu . P[M_j* | X = x]" in why
    one = st.one_cell_instance()                                           # no stationary start
    skew = replace(one, pi0=np.array([Fraction(1)] + [Fraction(0)] * (one.num_states - 1), dtype=object))
    assert st.check_claim_c14(one, st.paper_prompt(one), st.words(one.num_tokens, 2))[0]
    assert not st.check_claim_c14(skew, st.paper_prompt(skew), st.words(one.num_tokens, 2))[0]
    assert not st.check_claim_c14(m, u, [])[0]


def test_claim_c15_counts_exactly_the_sequences_it_is_about():
    m = st.two_cell_instance()
    words = st.words(m.num_tokens, 2)
    ok, why, c = st.check_claim_c15(m, st.paper_prompt(m), words)
    assert ok, why
    support = {k for k in range(m.memory_values) if m.mu[k] != 0}
    want = 0                                   # the oracle: Pr(x) > 0 and no mass with m_j* in supp(mu)
    for x in words:
        joint = oracle.memory_joint(m, list(x))
        if sum(p for _, p in joint) > 0 and sum(p for ms, p in joint if ms[m.target_cell] in support) == 0:
            want += 1
            assert sum(a * b for a, b in zip(m.mu, oracle.memory_posterior(m, list(x), m.target_cell))) == 0
    assert c["claim"] == want > 0 and c["zero_positions"] > 0


def test_claim_c15_wrong_statements_fail_and_empty_or_vacuous_inputs_do_not_pass():
    m = st.two_cell_instance()
    u, words = st.paper_prompt(m), st.words(m.num_tokens, 2)
    ok, why, _ = st.check_claim_c15(m, u, words, mu=[1, -1, 1])              # a task weighing m = 2
    assert not ok and "mu . P[M_j* | X = x] = 1" in why
    ok, why, _ = st.check_claim_c15(m, u, words, zero_value=[Fraction(1, 5)] * 5)
    assert not ok and "Gbar_i" in why
    ok, why, _ = st.check_claim_c15(m, [1] * len(u), words)                  # no xhat is impossible
    assert not ok and why.startswith("vacuous")
    ok, why, _ = st.check_claim_c15(m, u, [(0,), (1, 3)])                    # none of the claim's sequences
    assert not ok and why.startswith("vacuous")


# ------------------------------------------------------------------ assumption rows

ORACLES = {
    "3.1": lambda h: oracle.sympy_rank([list(h.W[:, k]) for k in range(h.num_states)]) == h.num_states,
    "3.2": lambda h: oracle.is_ergodic_chain(h.A, h.pi0),
    "3.5": oracle.assumption_35,
    "4.2": lambda m: oracle.memory_nondegenerate(m),
    "4.4": lambda m: oracle.is_ergodic_chain(m.A, m.pi0) and list(m.A.dot(m.pi0)) == list(m.pi0),
    "4.5": lambda m: oracle.memory_nondegenerate(m, [k for k in range(m.memory_values) if m.mu[k] != 0]),
    "C.5": lambda m: oracle.memory_nondegenerate(m, [k for k in range(m.memory_values) if m.mu[k] != 0]),
}


@pytest.mark.parametrize("aid", sorted(ORACLES))
def test_assumption_oracles_agree_with_the_test_oracles_and_the_checkers(aid):
    rng = np.random.default_rng(7)
    instances = [sa.FAMILIES[aid][1](rng, aid) for _ in range(16)]
    assert [bool(sa.ORACLES[aid](i)) for i in instances] == [bool(ORACLES[aid](i)) for i in instances]
    ok, why, c = sa.check_assumption(aid, instances=instances, oracle=ORACLES[aid])
    assert ok, why


def _uniform_start(h):
    return HMM.create(h.A, h.W, [Fraction(1, h.num_states)] * h.num_states, h.mu)


def _independent_only(m):
    """Assumption 4.2 without its second condition: some S* with independent columns."""
    S, j = m.syntax_states, m.target_cell
    return any(sa.sympy_rank([m.W[:, v, j * S + s] for s in S_star for v in range(m.memory_values)])
               == len(S_star) * m.memory_values
               for k in range(1, S + 1) for S_star in itertools.combinations(range(S), k))


MUTANTS = {            # a checker for a different (wrong) statement of the assumption
    "3.1": lambda h: {"holds": True},
    "3.2": lambda h: vasm.check_32(_uniform_start(h)),                    # forgets P[H_0] > 0
    "3.5": vasm.check_31,                                                 # every column, not H*
    "4.2": lambda m: {"holds": _independent_only(m)},                     # forgets the disjoint spans
    "4.4": masm.check_32,                                                 # forgets stationarity
    "4.5": masm.check_42,                                                 # forgets M* = supp(mu)
    "C.5": masm.check_42,
}


@pytest.mark.parametrize("aid", sorted(MUTANTS))
def test_a_wrong_checker_is_caught(aid):
    ok, why, _ = sa.check_assumption(aid, checker=MUTANTS[aid])
    assert not ok and "the oracle" in why


def test_an_assumption_row_on_one_outcome_is_vacuous():
    rng = np.random.default_rng(0)
    holding = [i for i in (sa.FAMILIES["3.1"][1](rng, "3.1") for _ in range(24)) if sa.oracle_31(i)]
    ok, why, _ = sa.check_assumption("3.1", instances=holding)
    assert holding and not ok and why.startswith("vacuous")
    assert not sa.check_assumption("3.1", instances=[])[0]


def test_ergodic_oracle_on_hand_made_chains():
    assert sa.ergodic([[0, 1], [1, 0]], [Fraction(1, 2)] * 2) is False                  # period 2
    assert sa.ergodic([[Fraction(1, 2), 1], [Fraction(1, 2), 0]], [Fraction(1, 2)] * 2) is True
    assert sa.ergodic([[1, 0], [0, 1]], [Fraction(1, 2)] * 2) is False                  # reducible
    assert sa.ergodic([[Fraction(1, 2), 1], [Fraction(1, 2), 0]], [1, 0]) is False      # P[H_0] not full


# ------------------------------------------------------------------ theorem and symbolic rows

def test_theorem_rows_fail_with_the_tie_rule_flipped():
    strict = lambda v: int(v > 0)                                          # noqa: E731
    ok, why, _ = sth.check_theorem("3.3", seeds=(0,), rule=strict, symbolic=False)
    assert not ok and "F* = 0" in why
    ok, why, _ = sth.check_theorem("4.6", seeds=(0,), rule=strict, symbolic=False)
    assert not ok and "by brute force = 0" in why


def test_vanilla_brute_force_refutes_a_perturbed_head():
    r = sth.run_instances("3.6", seeds=(0,))[0]
    hmm, w = r.details["model"], r.details["witness"]
    tie = tuple(r.data["instance"]["tie_sequence"])
    seqs = [tie] + [s for s in st.words(hmm.num_tokens, 2) if s != tie]
    ok, why, c = sth.check_vanilla_decisions(hmm, "3.6", w.b, w.u, seqs)
    assert ok and c["ties"] >= 1
    assert c["labels"][0] and c["labels"][1]
    decisions = oracle.vanilla_decisions(hmm, "3.6", w.b, w.u, seqs)     # the test oracle agrees
    assert all(a == b for a, b in decisions.values()) and len(decisions) == c["sequences"]
    bad = list(w.b)
    bad[int(np.argmax([abs(float(v)) for v in bad]))] *= -1
    assert not sth.check_vanilla_decisions(hmm, "3.6", bad, w.u, seqs)[0]


def test_check_run_refuses_refuted_vacuous_and_tieless_reports():
    base = {"verdict": "verified", "vacuous": False, "sequences": {"checked": 10, "ties": 1}}
    assert sth.check_run(base)[0]
    assert not sth.check_run({**base, "verdict": "refuted"})[0]
    assert not sth.check_run({**base, "vacuous": True})[0]
    assert not sth.check_run({**base, "sequences": {"checked": 10, "ties": 0}})[0]
    assert not sth.check_run({**base, "sequences": {"checked": 10, "in_R": 0, "ties": 1}})[0]
    ok, why, _ = sth.check_theorem("3.3", seeds=())
    assert not ok and why.startswith("vacuous")


def test_symbolic_row_fails_on_a_mutated_formula_at_size_3(monkeypatch):
    from headprompt.verify.symbolic import proofs as sy

    assert sth.check_symbolic("prop-3.4", sizes=((3, 3, 2),))[0]
    wrong = lambda hmm, x: sy.prop_3_4_rhs(hmm, tuple(reversed(x)))        # noqa: E731
    monkeypatch.setitem(sy.PROVERS, "prop-3.4", partial(sy.prop_3_4, rhs=wrong))
    ok, why, _ = sth.check_symbolic("prop-3.4", sizes=((3, 3, 2),))
    assert not ok and "NOT proved" in why
    assert not sth.check_symbolic("prop-3.4", sizes=())[0]
