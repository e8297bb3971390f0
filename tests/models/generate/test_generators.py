"""Generators, exact rounding and sampling: the promised properties, checked exactly."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests import oracle
from headprompt.models.exceptions import InputError
from headprompt.models.generate.generators import (appendix_d_hmm, appendix_d_memory_hmm, prompt_friendly_hmm,
                               random_exact_hmm, sparse_transitions, stationary_distribution,
                               with_stationary_start)
from headprompt.models.hmm.rational import round_to_denominator
from headprompt.models.generate.sampling import sample
from headprompt.verify.checks.vanilla.assumptions import check_32



@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8).filter(lambda v: sum(v) > 0),
       st.integers(8, 1000))
def test_round_to_denominator_is_exactly_stochastic_and_keeps_support(values, den):
    p = np.array(values)
    out = round_to_denominator(p, den)
    assert sum(out) == 1
    assert all(isinstance(v, Fraction) and v.denominator <= den for v in out)
    assert [v > 0 for v in out] == [v > 0 for v in p]


@pytest.mark.parametrize("seed", range(3))
def test_appendix_d_instances(seed):
    rng = np.random.default_rng(seed)
    hmm = appendix_d_hmm(8, 10, rng=rng)
    assert np.allclose(hmm.A.sum(axis=0), 1) and np.allclose(hmm.A.sum(axis=1), 1)  # doubly stochastic
    assert hmm.pi0.max() / hmm.pi0.min() < np.exp(0.1) + 1e-9      # temperature 10: near uniform
    exact = appendix_d_hmm(5, 10, rng=rng, exact=True)
    assert exact.exact and all(sum(exact.W[:, h]) == 1 for h in range(5))
    mem = appendix_d_memory_hmm(3, 4, rng=rng)
    assert mem.W.shape == (10, 3, 4) and mem.cells == 1


@pytest.mark.parametrize("seed", range(5))
def test_structured_generators_satisfy_their_assumptions(seed):
    rng = np.random.default_rng(seed)
    A = sparse_transitions(7, 2, rng=rng)
    assert all(sum(A[:, h] != 0) == 2 for h in range(1, 7))
    hmm, info = prompt_friendly_hmm(7, 4, rng=rng)
    assert check_32(hmm)["holds"]
    assert oracle.assumption_35(hmm)                                        # independent of the search
    assert oracle.sympy_rank([list(hmm.W[:, h]) for h in info["H_star"]]) == len(info["H_star"])
    stationary = with_stationary_start(hmm)
    assert all(v == w for v, w in zip(stationary.A.dot(stationary.pi0), stationary.pi0))
    assert sum(stationary.pi0) == 1


def test_stationary_distribution_refuses_reducible_chains():
    A = np.array([[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]], dtype=object)
    with pytest.raises(InputError, match="not unique"):
        stationary_distribution(A)


def test_random_exact_hmm_density_and_positivity():
    hmm = random_exact_hmm(6, 4, rng=np.random.default_rng(0), density=0.3)
    assert hmm.exact and all((hmm.A[:, h] != 0).any() for h in range(6))


def test_memory_sampling_frequencies():
    mem = appendix_d_memory_hmm(2, 2, 3, rng=np.random.default_rng(1))
    tokens, states, memories = sample(mem, 100_000, 1, rng=np.random.default_rng(2))
    lifted = mem.lift()
    expected = np.asarray(lifted.W) @ np.asarray(lifted.A) @ np.asarray(lifted.pi0)
    assert np.abs(np.bincount(tokens[:, 0], minlength=3) / len(tokens) - expected).max() < 0.01
    assert np.abs(np.bincount(memories[:, 0], minlength=2) / len(tokens) - mem.pM).max() < 0.01


@pytest.mark.parametrize("bad", [dict(num_states=0), dict(num_tokens=-1), dict(num_states=2.5)])
def test_generators_reject_impossible_sizes(bad):
    kw = dict(num_states=3, num_tokens=3, rng=np.random.default_rng(0))
    kw.update(bad)
    with pytest.raises(InputError):
        appendix_d_hmm(**kw)
