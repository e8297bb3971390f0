"""Theorems 3.3 and 3.6: witnesses, assumption checks and the checker, against brute force."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from headprompt.constructions.vanilla import find_essential_sets, theorem_33_witness, theorem_36_witness
from headprompt.models.exceptions import ConstructionError
from headprompt.models.generate.generators import full_rank_hmm, prompt_friendly_hmm
from headprompt.models.hmm.values import HMM
from headprompt.models.generate.label_tasks import short_sequences, task_posteriors, two_label_task
from headprompt.models.generate.strategies import hmms
from headprompt.verify.checks.vanilla import assumptions as asm
from headprompt.verify.evidence.sequences import exhaustive
from headprompt.verify.checks.vanilla.check import check_sequences, identity_check

from tests import oracle


def oracle_decisions(hmm, theorem, b, u, sequences):
    """(F*(x), F(x)) by path sums for every possible sequence: independent of the checker."""
    filler = [Fraction(1)] * hmm.num_states
    out = {}
    for seq in sequences:
        seq = list(seq)
        if oracle.joint_probability(hmm, seq) == 0:
            continue
        post = oracle.path_posterior(hmm, seq, 0)
        emb = [list(hmm.W[z]) for z in seq]
        if theorem == "3.3":
            g = oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [filler] + emb, 0)
        else:
            g = oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [list(u), filler] + emb, 1)
        out[tuple(seq)] = (int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0),
                           int(sum(Fraction(x) * y for x, y in zip(b, g)) >= 0))
    return out


@st.composite
def full_rank_instances(draw):
    hmm = draw(hmms(num_states=st.integers(1, 3), num_tokens=st.integers(3, 4), with_task=True))
    assume(oracle.sympy_rank([list(hmm.W[:, h]) for h in range(hmm.num_states)]) == hmm.num_states)
    return hmm


@settings(max_examples=40, deadline=None)
@given(full_rank_instances())
def test_theorem_33_witness_agrees_with_brute_force(hmm):
    w = theorem_33_witness(hmm)
    assert identity_check(hmm, "3.3", w.b, None)["holds"]
    decisions = oracle_decisions(hmm, "3.3", w.b, None, exhaustive(hmm.num_tokens, 3))
    assert all(f_star == f for f_star, f in decisions.values())
    assert {f_star for f_star, _ in decisions.values()} == {0, 1}        # not vacuous: both labels
    res = check_sequences(hmm, "3.3", w.b, None, exhaustive(hmm.num_tokens, 3))
    assert res.checked == len(decisions) and res.agree == res.checked


def test_theorem_33_refuses_rank_deficient_w():
    hmm = HMM.create([["1/2", "1/2"], ["1/2", "1/2"]], [["1/2", "1/2"], ["1/2", "1/2"]], ["1/2", "1/2"], [1, -1])
    with pytest.raises(ConstructionError, match="Assumption 3.1 fails: rank W = 1"):
        theorem_33_witness(hmm)


@pytest.mark.parametrize("seed", range(6))
def test_theorem_36_witness_agrees_with_brute_force(seed):
    hmm, info = prompt_friendly_hmm(5, 3, rng=np.random.default_rng(seed))
    w = theorem_36_witness(hmm)
    assert set(w.H_star) >= {h for h in range(5) if hmm.mu[h] != 0}
    assert identity_check(hmm, "3.6", w.b, w.u)["holds"]
    seqs = exhaustive(3, 2) + [(0, 1, 2), (2, 2, 1)]
    decisions = oracle_decisions(hmm, "3.6", w.b, w.u, seqs)
    assert decisions and all(f_star == f for f_star, f in decisions.values())
    assert decisions[tuple(info["tie_sequence"])][0] == 1          # a real tie counts as label 1
    res = check_sequences(hmm, "3.6", w.b, w.u, seqs)
    assert res.checked == len(decisions) and res.agree == res.checked and res.ties >= 1


@settings(max_examples=60, deadline=None)
@given(hmms(num_states=st.integers(2, 5), num_tokens=st.integers(1, 3), sparsity=0.6, with_task=True,
           allow_one_label=True))                # no verdict here: any drawn task (one token too)
def test_essential_set_search_is_complete_and_sound(hmm):
    sets = find_essential_sets(hmm)
    assert sets.found == oracle.assumption_35(hmm)
    if sets.found:
        H = list(sets.H_star)
        assert H == sorted({g for h in sets.B for g in range(hmm.num_states) if hmm.A[g, h] != 0})
        assert oracle.sympy_rank([list(hmm.W[:, h]) for h in H]) == len(H)
        assert {h for h in range(hmm.num_states) if hmm.mu[h] != 0} <= set(H)


@st.composite
def mutated_36(draw):
    seed = draw(st.integers(0, 50))
    hmm, _ = prompt_friendly_hmm(4, 3, rng=np.random.default_rng(seed))
    w = theorem_36_witness(hmm)
    u, b = list(w.u), list(w.b)
    if draw(st.booleans()):
        k = draw(st.integers(0, len(u) - 1))
        u[k] = Fraction(draw(st.integers(0, 4)), 4)
    else:
        k = draw(st.integers(0, len(b) - 1))
        b[k] += Fraction(draw(st.integers(-40, 40)), draw(st.integers(1, 4)))
    return hmm, u, b


@settings(max_examples=40, deadline=None)
@given(mutated_36())
def test_mutated_witness_is_refuted_exactly_when_it_really_disagrees(case):
    hmm, u, b = case
    seqs = exhaustive(3, 2)
    truth = oracle_decisions(hmm, "3.6", b, u, seqs)
    really_disagrees = [s for s, (f_star, f) in truth.items() if f_star != f]
    res = check_sequences(hmm, "3.6", b, u, seqs)
    assert (res.first_disagreement is not None) == bool(really_disagrees)
    if res.first_disagreement is not None:
        d = res.first_disagreement
        assert truth[d.sequence] == (d.expected, d.got)   # the printed sequence really disagrees
        assert d.expected != d.got


def test_identity_check_rejects_wrong_heads():
    hmm, _ = prompt_friendly_hmm(6, 4, rng=np.random.default_rng(3))
    w = theorem_36_witness(hmm)
    assert identity_check(hmm, "3.6", [2 * v for v in w.b], w.u)["holds"]          # positive scale is fine
    assert not identity_check(hmm, "3.6", [-v for v in w.b], w.u)["holds"]
    assert not identity_check(hmm, "3.6", w.b, [Fraction(1)] * 6)["holds"]       # prompt 1 reaches all of H
    hmm33, _ = full_rank_hmm(3, 4, rng=np.random.default_rng(0))
    w33 = theorem_33_witness(hmm33)
    wrong = np.asarray(hmm33.mu, dtype=object).dot(w33.left_inverse)             # drops D^-1
    assert not identity_check(hmm33, "3.3", wrong, None)["holds"]


def test_modes_agree_with_exact_and_float_is_marked():
    hmm, info = prompt_friendly_hmm(8, 4, rng=np.random.default_rng(1))
    w = theorem_36_witness(hmm)
    seqs = exhaustive(4, 4)
    exact = check_sequences(hmm, "3.6", w.b, w.u, seqs, keep=True)
    cert = check_sequences(hmm, "3.6", w.b, w.u, seqs, mode="certified", keep=True)
    flt = check_sequences(hmm, "3.6", w.b, w.u, seqs, mode="float", keep=True)
    assert [(d.expected, d.got) for d in exact.decisions] == [(d.expected, d.got) for d in cert.decisions]
    assert cert.exact_fallbacks >= exact.ties >= 1        # ties can only be decided exactly
    assert all(d.certified_by == "float (uncertified)" for d in flt.decisions)


# ------------------------------------------------------------------ assumptions


def test_assumption_31_evidence_is_a_real_null_vector():
    hmm, _ = prompt_friendly_hmm(12, 4, rng=np.random.default_rng(0))
    res = asm.check_31(hmm)
    assert not res["holds"]
    v = [Fraction(x) for x in res["null_vector"]]
    assert any(v) and all(sum(hmm.W[z, h] * v[h] for h in range(12)) == 0 for z in range(4))


@pytest.mark.parametrize("A, pi0, fragment", [
    ([[0, 1], [1, 0]], ["1/2", "1/2"], "periodic with period 2"),
    ([[1, "1/2"], [0, "1/2"]], ["1/2", "1/2"], "not irreducible"),
    ([["1/2", "1/2"], ["1/2", "1/2"]], [1, 0], "P[H_0][1] = 0"),
])
def test_assumption_32_failures(A, pi0, fragment):
    hmm = HMM.create(A, [[1, 0], [0, 1]], pi0, [1, -1])
    res = asm.check_32(hmm)
    assert not res["holds"] and fragment in res["why"]


def test_assumption_32_holds_on_aperiodic_irreducible_chain():
    hmm = HMM.create([[0, "1/2"], [1, "1/2"]], [[1, 0], [0, 1]], ["1/2", "1/2"], [1, -1])
    assert asm.check_32(hmm)["holds"]


@st.composite
def ergodic_with_essential_task(draw):
    """A random sparse HMM made ergodic (mixed with a cycle plus a self-loop), full-support
    pi0, and a task mu supported inside the reach of a random B when that reach has
    independent W-columns (so Assumptions 3.2 and 3.5 usually hold; assume() drops the rest)."""
    hmm = draw(hmms(num_states=st.integers(2, 4), num_tokens=st.integers(2, 3), sparsity=0.6))
    n = hmm.num_states
    C = np.array([[Fraction(1 if g == (h + 1) % n or (g == h == 0) else 0) for h in range(n)]
                  for g in range(n)], dtype=object)
    C = C / C.sum(axis=0)
    A = (hmm.A + C) / 2
    pi0 = (hmm.pi0 + Fraction(1, n)) / 2
    B = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
    reach = sorted({g for h in B for g in range(n) if A[g, h] != 0})
    assume(oracle.sympy_rank([list(hmm.W[:, h]) for h in reach]) == len(reach))
    # a task on reach with both labels among the possible sequences of length <= 2 (the public
    # strategies' planting, headprompt.models.generate.label_tasks), so a verdict is not vacuous
    model = HMM(A, hmm.W, pi0)
    found = two_label_task(task_posteriors(model, short_sequences(hmm.num_tokens)), reach, n,
                           signs=[draw(st.booleans()) for _ in reach])
    assume(found is not None)
    return model.with_task(np.array(found[0], dtype=object))


@settings(max_examples=40, deadline=None)
@given(ergodic_with_essential_task())
def test_assumptions_hold_implies_verified(hmm):
    """Whenever Assumptions 3.2 and 3.5 hold, the constructed prompt and head agree with F* on
    every possible sequence (checker and brute force both)."""
    assert asm.check_32(hmm)["holds"]
    sets = find_essential_sets(hmm)
    assert sets.found
    w = theorem_36_witness(hmm, sets)
    seqs = exhaustive(hmm.num_tokens, 2)
    res = check_sequences(hmm, "3.6", w.b, w.u, seqs)
    assert res.agree == res.checked > 0
    decisions = oracle_decisions(hmm, "3.6", w.b, w.u, seqs)
    assert all(f_star == f for f_star, f in decisions.values())
    assert {f_star for f_star, _ in decisions.values()} == {0, 1}        # not vacuous: both labels


@pytest.mark.parametrize("seed", range(4))
def test_essential_sets_stopped_early_are_still_a_valid_pair(seed):
    """With no budget to improve the first pair, the search returns it (minimal = False): B's
    one-step reach is H*, it covers supp(mu) and W[:, H*] has independent columns (sympy)."""
    hmm, _ = prompt_friendly_hmm(9, 4, rng=np.random.default_rng(seed))
    full = find_essential_sets(hmm)
    quick = find_essential_sets(hmm, improve_nodes=0)
    assert full.found and quick.found and full.minimal
    reach = sorted({g for h in quick.B for g in range(hmm.num_states) if hmm.A[g, h] != 0})
    assert list(quick.H_star) == reach
    assert {h for h in range(hmm.num_states) if hmm.mu[h] != 0} <= set(quick.H_star)
    assert oracle.sympy_rank([list(hmm.W[:, h]) for h in quick.H_star]) == len(quick.H_star)
    assert len(full.H_star) <= len(quick.H_star)
    assert quick.minimal == (quick.nodes == full.nodes)
