"""The hypothesis strategies: eager validation, options as values or strategies, instances that
satisfy or break each assumption by construction (checked by the checker and by brute force),
and "assumptions hold => the constructed witness is verified" for every theorem."""

import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import find, given, settings, strategies as st
from hypothesis.errors import InvalidArgument

from headprompt.constructions.memory import theorem_43_witness, theorem_c6_witness
from headprompt.constructions.vanilla import theorem_33_witness, theorem_36_witness
from headprompt.models.generate.families import THEOREM_ASSUMPTIONS
from headprompt.models.hmm.values import HMM, MemoryHMM
from headprompt.models.generate.strategies import (hmms, memory_hmms, stochastic_columns, theorem_instances,
                                          token_sequences)
from headprompt.verify.checks.memory import check as memory_check
from headprompt.verify.checks.vanilla import check as vanilla
from headprompt.verify.checks.registry import check_assumptions
from headprompt.verify.evidence.sequences import exhaustive

from tests import oracle

INVALID = [
    (lambda: hmms(num_states=0), "num_states=0"),
    (lambda: hmms(num_tokens=2.5), "num_tokens=2.5"),
    (lambda: hmms(sparsity=1.5), "sparsity=1.5"),
    (lambda: hmms(start_sparsity=-0.1), "start_sparsity=-0.1"),
    (lambda: hmms(exact="yes"), "exact='yes'"),
    (lambda: hmms(with_task=1), "with_task=1"),
    (lambda: hmms(max_weight=0), "max_weight=0"),
    (lambda: hmms(theorem="3.7"), "theorem='3.7'"),
    (lambda: hmms(theorem="4.3"), "drawn by memory_hmms"),
    (lambda: hmms(violate="3.5"), "need theorem="),
    (lambda: hmms(theorem="3.6", violate="3.1"), "'3.1' is not one of Theorem 3.6"),
    (lambda: hmms(theorem="3.6", satisfy=["3.5"], violate="3.5"), "both satisfied and violated"),
    (lambda: hmms(theorem="3.6", satisfy="3.2"), "expected a list"),
    (lambda: hmms(theorem="3.3", num_states=4, num_tokens=2), "needs |H| <= |X|"),
    (lambda: hmms(theorem="3.3", violate="3.1", num_states=1, num_tokens=2), "cannot be made to fail"),
    (lambda: memory_hmms(cells=0), "cells=0"),
    (lambda: memory_hmms(product_prior="no"), "product_prior='no'"),
    (lambda: memory_hmms(theorem="3.6"), "drawn by hmms"),
    (lambda: memory_hmms(theorem="4.6", cells=2), "one memory cell"),
    (lambda: stochastic_columns(0, 2), "rows=0"),
    (lambda: stochastic_columns(2, 2, sparsity=1), "sparsity=1"),
    (lambda: stochastic_columns(2, 2, max_weight=-1), "max_weight=-1"),
    (lambda: token_sequences(0), "num_tokens=0"),
    (lambda: token_sequences(2, min_length=3, max_length=1), "min_length=3 > max_length=1"),
    (lambda: token_sequences(2, max_length="4"), "max_length='4'"),
    (lambda: theorem_instances("3.9"), "theorem='3.9'"),
    (lambda: theorem_instances("3.6", violate="3.5", max_hidden=1), "at least 2 states"),
]


@pytest.mark.parametrize("call, match", INVALID, ids=[m for _, m in INVALID])
def test_invalid_calls_raise_eagerly(call, match):
    with pytest.raises(InvalidArgument, match=re.escape(match)):
        call()


def test_drawn_option_values_are_checked_too():
    with pytest.raises(InvalidArgument, match="num_states=0"):
        find(hmms(num_states=st.just(0)), lambda h: True)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_every_option_accepts_a_value_or_a_strategy(data):
    hmm = data.draw(hmms(num_states=st.integers(1, 3), num_tokens=st.just(2), max_weight=st.integers(1, 3),
                         sparsity=st.sampled_from([0.0, 0.5]), start_sparsity=st.just(0.0), exact=st.booleans(),
                         with_task=st.just(True), allow_one_label=True))   # (sizes where one label is all there is)
    assert hmm.num_tokens == 2 and hmm.mu is not None and hmm.num_states <= 3
    assert all(p > 0 for p in hmm.pi0)                         # pi0 keeps full support unless asked
    cols = data.draw(stochastic_columns(st.integers(2, 3), 3, max_weight=st.integers(1, 2), exact=st.just(True)))
    assert cols.shape[1] == 3 and all(sum(cols[:, j]) == 1 for j in range(3))
    seq = data.draw(token_sequences(st.integers(2, 3), min_length=st.just(1), max_length=st.just(2)))
    assert 1 <= len(seq) <= 2
    m = data.draw(memory_hmms(cells=st.just(1), memory_values=st.integers(1, 2), product_prior=st.booleans(),
                              allow_one_label=True))
    assert m.cells == 1


def test_from_type_is_registered():
    assert isinstance(find(st.from_type(HMM), lambda h: h.mu is not None), HMM)
    assert isinstance(find(st.from_type(MemoryHMM), lambda m: True), MemoryHMM)


# ---------------------------------------------------------------- by construction

def _oracle_holds(model, name):
    """The assumption decided by brute force (tests/oracle.py), independently of verify/."""
    if isinstance(model, HMM):
        if name == "3.1":
            return oracle.sympy_rank([list(model.W[:, h]) for h in range(model.num_states)]) == model.num_states
        if name == "3.2":
            return oracle.is_ergodic_chain(model.A, model.pi0)
        return oracle.assumption_35(model)
    if name == "3.2":
        return oracle.is_ergodic_chain(model.A, model.pi0)
    if name == "4.4":
        return oracle.is_ergodic_chain(model.A, model.pi0) and list(model.A.dot(model.pi0)) == list(model.pi0)
    support = None if name == "4.2" else [m for m in range(model.memory_values) if model.mu[m] != 0]
    return bool(support != []) and oracle.memory_nondegenerate(model, support)


PAIRS = [(tid, v) for tid, names in THEOREM_ASSUMPTIONS.items() for v in (None,) + names]


@pytest.mark.parametrize("tid, violate", PAIRS, ids=[f"{t}-{v or 'all'}" for t, v in PAIRS])
def test_instances_meet_their_assumptions_by_construction(tid, violate):
    strategy = (hmms if tid in ("3.3", "3.6") else memory_hmms)(theorem=tid, violate=violate)
    expected = {a: a != violate for a in THEOREM_ASSUMPTIONS[tid]}

    @settings(max_examples=12, deadline=None, database=None)
    @given(strategy)
    def check(model):
        assert {a: r["holds"] for a, r in check_assumptions(model, tid).items()} == expected
        assert {a: _oracle_holds(model, a) for a in expected} == expected

    check()


@pytest.mark.parametrize("tid, violate", [("3.6", None), ("3.6", "3.5"), ("4.3", None), ("C.6", "C.5")])
def test_theorem_instances_with_classes_keep_the_assumptions_and_the_support(tid, violate):
    """``classes=k``: a k-row task whose extra rows live on supp(mu) of the drawn instance, so
    the assumptions (some read supp(mu)) are what the family promises, checked by the oracle on
    the binary first row."""
    from dataclasses import replace

    expected = {a: a != violate for a in THEOREM_ASSUMPTIONS[tid]}

    @settings(max_examples=8, deadline=None, database=None)
    @given(theorem_instances(tid, violate=violate, classes=3))
    def check(model):
        mu = np.asarray(model.mu)
        assert mu.shape[0] == 3
        first = set(np.flatnonzero(mu[0] != 0))
        assert all(set(np.flatnonzero(row != 0)) <= first for row in mu[1:])
        assert {a: r["holds"] for a, r in check_assumptions(model, tid).items()} == expected
        binary = model.with_task(mu[0]) if isinstance(model, HMM) else replace(model, mu=mu[0])
        assert {a: _oracle_holds(binary, a) for a in expected} == expected

    check()


def test_interesting_regimes_are_drawn_and_shrink():
    # prompt tuning with more hidden states than tokens (Assumption 3.5 without 3.1)
    wide = find(hmms(theorem="3.6"), lambda h: h.num_states > h.num_tokens)
    # shrinks to the smallest vocabulary; with both labels planted a draw at |X| + 1 states may
    # have no two-label task, so the shrink can stop one state above it (seen: (3, 2) and (4, 2))
    assert wide.num_tokens == 2 and wide.num_tokens < wide.num_states <= wide.num_tokens + 2
    # breaking 3.5 shrinks to the smallest instance that can break it (2 states); with both
    # labels planted (the default) to the smallest where the posteriors also allow two labels
    small = find(hmms(theorem="3.6", violate="3.5", allow_one_label=True), lambda h: True)
    assert small.num_states == 2 and not check_assumptions(small, "3.6")["3.5"]["holds"]
    planted = find(hmms(theorem="3.6", violate="3.5"), lambda h: True)
    assert planted.num_states <= 3 and not check_assumptions(planted, "3.6")["3.5"]["holds"]


# ---------------------------------------------------------------- assumptions hold => verified

@pytest.mark.parametrize("tid", ["3.3", "3.6"])
def test_vanilla_assumptions_hold_implies_verified(tid):
    @settings(max_examples=25, deadline=None, database=None)
    @given(hmms(theorem=tid, num_states=st.integers(1, 3)))
    def check(hmm):
        w = theorem_33_witness(hmm) if tid == "3.3" else theorem_36_witness(hmm)
        u = getattr(w, "u", None)
        seqs = exhaustive(hmm.num_tokens, 2)
        res = vanilla.check_sequences(hmm, tid, w.b, u, seqs)
        assert res.checked > 0 and res.agree == res.checked
        decisions = oracle.vanilla_decisions(hmm, tid, w.b, u, seqs)       # path sums
        assert len(decisions) == res.checked and all(a == b for a, b in decisions.values())
        assert {a for a, _ in decisions.values()} == {0, 1}                # not vacuous: both labels

    check()


@pytest.mark.parametrize("tid", ["4.3", "4.6", "C.6"])
def test_memory_assumptions_hold_implies_verified_on_R(tid):
    @settings(max_examples=10, deadline=None, database=None)
    @given(memory_hmms(theorem=tid, syntax_states=st.integers(1, 2), memory_values=st.integers(1, 2),
                       cells=1 if tid == "4.6" else st.integers(1, 2)))
    def check(model):
        w = theorem_43_witness(model) if tid == "4.3" else theorem_c6_witness(model, theorem=tid)
        res = memory_check.check_sequences(model, w, list(w.H_star), exhaustive(model.num_tokens, 2), keep=True)
        assert res.agree == res.in_R
        for d in res.decisions:                 # the labels on R against brute force over memories
            if d.in_R:
                post = oracle.memory_posterior(model, list(d.sequence), model.target_cell)
                assert d.expected == int(sum(Fraction(m) * p for m, p in zip(model.mu, post)) >= 0)
        assert {d.expected for d in res.decisions if d.in_R} == {0, 1}      # not vacuous: both labels on R

    check()


def test_a_users_own_property_test_runs_without_unsatisfiable():
    """What a user writes: default settings and health checks, no assume()."""

    @settings(deadline=None, database=None, max_examples=60)
    @given(hmms(theorem="3.6"), token_sequences(st.integers(1, 3), max_length=3))
    def prompt_tuning_needs_only_h_star(hmm, tokens):
        # the prompt's one-step reach carries the task: supp(mu) lies inside H*, and the float
        # model (same numbers) agrees with the exact one on the prior P[H_1] = A pi0
        w = theorem_36_witness(hmm)
        assert {h for h in range(hmm.num_states) if hmm.mu[h] != 0} <= set(w.H_star)
        f = hmm.to_float()
        assert np.allclose(f.A @ f.pi0, [float(v) for v in hmm.A.dot(hmm.pi0)])
        assert all(0 <= t < 3 for t in tokens)

    prompt_tuning_needs_only_h_star()
