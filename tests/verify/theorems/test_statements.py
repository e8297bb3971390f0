"""``verify statements``: every numbered statement listed, the new path-sum checks hold on true
statements and refute wrong ones, and their brute force agrees with tests/oracle.py."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from headprompt import HMM
from headprompt.verify.cli.main import main
from headprompt.verify.theorems import statements as st
from tests.oracle import joint_probability, path_tau

PAPER = sorted(Path("/work/shared/paper").glob("003_*.txt"))


def _words(vocab, length):
    return st._words(vocab, length)


def test_lemma_b1_holds_and_a_wrong_fake_token_is_refuted():
    hmm = st.small_instance(3)
    u = [Fraction(1, 2), Fraction(1), Fraction(1, 4)]
    ok, why = st.check_lemma_b1(hmm, u, _words(2, 2))
    assert ok, why
    ok, why = st.check_lemma_b1(hmm, u, _words(2, 2), fake=[Fraction(1, 2), Fraction(1, 2), Fraction(1, 4)])
    assert not ok and "augmented" in why


def test_prop_c8_needs_stationarity():
    hmm = st.small_instance(2)
    ok, why = st.check_prop_c8(st._stationary(hmm), _words(2, 2))
    assert ok, why
    skewed = HMM.create(hmm.A, hmm.W, [1, 0, 0], hmm.mu)      # not stationary: shifts differ
    ok, why = st.check_prop_c8(skewed, _words(2, 2))
    assert not ok and "!=" in why


def test_claim_c15_holds_and_needs_an_impossible_sequence():
    hmm, u = st._impossible_instance()
    u = [Fraction(v) for v in u]
    assert st.check_claim_c15(hmm, u, _words(2, 2))[0]
    ok, why = st.check_claim_c15(hmm, u, [(0,), (0, 0)])          # all possible: nothing shown
    assert not ok and "no impossible" in why
    for seq in [(1,), (0, 1)]:                                    # the oracle agrees they are impossible
        assert joint_probability(hmm, list(seq)) == 0


def test_path_joint_matches_the_oracle():
    hmm = st.small_instance(4)
    W = [list(r) for r in hmm.W]
    emb = [W[1], [Fraction(1, 3)] * 3, W[0]]
    ones = [Fraction(1)] * 3               # tau_1 leaves position 2 unweighted and keeps H_2
    assert st.path_joint(hmm.A, W, hmm.pi0, [emb[0], ones, emb[2]], keep=2) == path_tau(hmm.A, hmm.pi0, emb, 1)
    assert st.path_joint(hmm.A, W, hmm.pi0, [W[z] for z in (1, 0)]) == joint_probability(hmm, [1, 0])


@pytest.mark.skipif(not PAPER, reason="paper text not available")
def test_every_numbered_statement_of_the_paper_is_listed():
    text = PAPER[0].read_text()
    found = set(re.findall(r"(?:Theorem|Lemma|Claim|Proposition|Assumption|Example|Corollary) [3-4A-C]\.\d+", text))
    listed = {name for name, _, _ in st.STATEMENTS}
    assert found and found <= listed


def test_cli_json_lists_and_runs(capsys):
    assert main(["statements", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["statement"]: r for r in data["statements"]}
    assert rows["Lemma B.1"]["result"] == "holds" and rows["Claim C.14"]["result"] == "holds"
    assert rows["Proposition C.11"]["result"] == "holds" and rows["Lemma C.9"]["result"] == "indirect"
    assert data["failed"] == []


def test_lemma_c7_holds_and_a_wrong_fake_token_is_refuted():
    m = st._memory_instance()
    size = len(m.pM) * m.num_states
    u = [Fraction(k % 3, 2) for k in range(size)]
    ok, why = st.check_lemma_c7(m, u, [(0,), (3, 1)])
    assert ok, why
    ok, why = st.check_lemma_c7(m, u, [(0,)], fake=[Fraction(1, 2)] * size)
    assert not ok and "augmented memory HMM" in why


def test_memory_path_joint_matches_the_oracle():
    from tests.oracle import memory_joint

    m = st._memory_instance()
    for seq in [(0,), (2, 5)]:
        want = sum(p for _, p in memory_joint(m, list(seq)))
        assert st.memory_path_joint(m, [("token", z) for z in seq]) == want
        per = st.memory_path_joint(m, [("token", z) for z in seq], by_config=True)
        assert per == [p for _, p in memory_joint(m, list(seq))]


def test_prop_c11_holds_with_the_papers_prompt_and_fails_with_one_that_is_not_zero_off_supp_mu():
    m = st._support_instance()
    support = {k for k in range(m.memory_values) if m.mu[k] != 0}
    assert support and support != set(range(m.memory_values))
    u = st.paper_prompt(m)
    assert set(u) == {0, 1}
    ok, why = st.check_prop_c11(m, u, _words(m.num_tokens, 2))
    assert ok, why
    ok, why = st.check_prop_c11(m, [Fraction(1)] * len(u), _words(m.num_tokens, 2))
    assert not ok and "outside supp(mu)" in why


def test_claim_c14_holds_and_fails_without_its_premises():
    import numpy as np
    from dataclasses import replace

    m = st._support_instance()
    u = st.paper_prompt(m)
    words = _words(m.num_tokens, 2)
    ok, why = st.check_claim_c14(m, u, words)
    assert ok, why
    ok, why = st.check_claim_c14(m, [v / 2 for v in u], words)           # u not 1 on supp(mu)
    assert not ok and "mu . P[M_j* | X = x]" in why
    skew = replace(m, pi0=np.array([Fraction(1)] + [Fraction(0)] * (m.num_states - 1), dtype=object))
    ok, why = st.check_claim_c14(skew, st.paper_prompt(skew), words)     # no stationary start
    assert not ok
