"""Exact inference against brute-force path sums (tests/oracle.py), exactly."""

import itertools
from fractions import Fraction

from hypothesis import given, settings, strategies as st

from headprompt.models.inference import exact as ie
from headprompt.models.hmm.values import HMM
from headprompt.models.generate.strategies import hmms, memory_hmms, token_sequences

from tests import oracle


@st.composite
def hmm_and_embeddings(draw):
    hmm = draw(hmms(num_states=st.integers(1, 3), num_tokens=st.integers(1, 3), sparsity=0.3))
    t = draw(st.integers(1, 4))
    # arbitrary nonnegative embeddings, zeros included so the zero-norm case is exercised
    emb = [[Fraction(draw(st.integers(0, 4)), draw(st.integers(1, 5))) for _ in range(hmm.num_states)]
           for _ in range(t)]
    return hmm, emb, draw(st.integers(0, t - 1))


@settings(max_examples=150, deadline=None)
@given(hmm_and_embeddings())
def test_tau_and_gbar_equal_path_sums(case):
    hmm, emb, i = case
    assert ie.tau(hmm, emb, i) == oracle.path_tau(hmm.A, hmm.pi0, emb, i)
    assert ie.gbar(hmm, emb, i) == oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, emb, i)


def test_zero_norm_gives_zero_vector():
    hmm = HMM.create([[1, 0], [0, 1]], [[1, 0], [0, 1]], [1, 0])
    # state 1 is unreachable, so an embedding that only allows state 1 kills every path
    assert ie.gbar(hmm, [[0, 1], [1, 1]], 1) == [0, 0]
    # G_1 ignores the impossible x_1; G_2 conditions on it and is zero
    assert ie.conditionals(hmm, [1, 0]) == [[1, 0], [0, 0]]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_conditionals_and_posteriors_equal_path_sums(data):
    hmm = data.draw(hmms(num_states=st.integers(1, 3), num_tokens=st.integers(1, 3), sparsity=0.3))
    tokens = data.draw(token_sequences(hmm.num_tokens, max_length=4))
    G = ie.conditionals(hmm, tokens)
    possible = oracle.joint_probability(hmm, tokens) > 0
    for i in range(len(tokens)):
        # G_i(x) is the conditional of X_i given the others whenever that context is possible
        assert G[i] == oracle.path_conditional(hmm, tokens, i)
    for k in range(len(tokens) + 1):
        assert ie.posterior_hidden(hmm, tokens, k) == oracle.path_posterior(hmm, tokens, k)
    if possible:
        assert sum(ie.posterior_h0(hmm, tokens)) == 1


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_tau_of_proper_embeddings_is_a_joint_probability(data):
    hmm = data.draw(hmms(num_states=st.integers(1, 3), num_tokens=st.integers(1, 3)))
    tokens = data.draw(token_sequences(hmm.num_tokens, max_length=3))
    i = data.draw(st.integers(0, len(tokens) - 1))
    emb = [list(hmm.W[z]) for z in tokens]
    # tau_i(e(x)) = P[H_i, X_{-i} = x_{-i}]: sum the joint over the masked token
    expected = [sum(oracle.joint_probability(hmm, tokens[:i] + [z] + tokens[i + 1:], i + 1)[h]
                    for z in range(hmm.num_tokens)) for h in range(hmm.num_states)]
    assert ie.tau(hmm, emb, i) == expected


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_memory_posterior_and_conditionals_equal_direct_sums(data):
    mhmm = data.draw(memory_hmms(sparsity=0.2))
    tokens = data.draw(token_sequences(mhmm.num_tokens, max_length=3))
    for cell in range(mhmm.cells):
        assert ie.memory_posterior(mhmm, tokens, cell) == oracle.memory_posterior(mhmm, tokens, cell)
    G = ie.conditionals(mhmm.lift(), tokens)
    for i in range(len(tokens)):
        assert G[i] == oracle.memory_conditional(mhmm, tokens, i)


def _direct_memory_gbar(mhmm, emb, i):
    """Gbar_i for a memory HMM straight from the definition, without eta/phi helpers."""
    n = mhmm.num_states
    num = [Fraction(0)] * mhmm.num_tokens
    total = Fraction(0)
    for c, ms in enumerate(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells)):
        for path in itertools.product(range(n), repeat=len(emb) + 1):
            p = Fraction(mhmm.pM[c]) * mhmm.pi0[path[0]]
            for j in range(1, len(emb) + 1):
                h = path[j]
                p *= mhmm.A[h, path[j - 1]]
                if j - 1 != i:
                    p *= emb[j - 1][ms[h // mhmm.syntax_states] * n + h]
            h = path[i + 1]
            total += p
            for x in range(mhmm.num_tokens):
                num[x] += p * mhmm.W[x, ms[h // mhmm.syntax_states], h]
    return [v / total if total else Fraction(0) for v in num]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_memory_gbar_on_arbitrary_embeddings(data):
    mhmm = data.draw(memory_hmms(cells=st.integers(1, 2), memory_values=st.integers(1, 2)))
    t = data.draw(st.integers(1, 3))
    size = mhmm.memory_values * mhmm.num_states
    emb = [[Fraction(data.draw(st.integers(0, 3)), 3) for _ in range(size)] for _ in range(t)]
    i = data.draw(st.integers(0, t - 1))
    assert ie.memory_gbar(mhmm, emb, i) == _direct_memory_gbar(mhmm, emb, i)


@settings(max_examples=30, deadline=None)
@given(memory_hmms())
def test_reverse_lift_inverts_lift(mhmm):
    v = [Fraction(k + 1, 7) for k in range(mhmm.memory_values * mhmm.num_states)]
    assert ie.reverse_lift(mhmm, ie.lift_embedding(mhmm, v)) == v
