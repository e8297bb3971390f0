"""Tests of verify.symbolic: the identities hold, wrong formulas are rejected, the CLI works."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from headprompt.models.exceptions import InputError
from headprompt.verify.symbolic import proofs as sy
from headprompt.verify.cli.main import main
from headprompt.verify.symbolic.proofs import RationalFunction


def _transposed(hmm: sy.SymbolicHMM) -> sy.SymbolicHMM:
    n = hmm.num_states
    return replace(hmm, A=tuple(tuple(hmm.A[c][r] for c in range(n)) for r in range(n)))


def _frac(hmm, p):
    return hmm.frac(p)


# ---------------------------------------------------------------------------------------------
# building blocks

def test_constrained_columns_sum_to_one():
    hmm = sy.symbolic_hmm(3, 2)
    n = hmm.num_states
    assert all(sum((hmm.A[r][c] for r in range(n)), 0) == 1 for c in range(n))
    assert all(sum((hmm.W[x][h] for x in range(hmm.vocab_size)), 0) == 1 for h in range(n))
    assert sum(hmm.pi0, 0) == 1
    free = sy.symbolic_hmm(3, 2, constrained=False)
    assert sum(free.pi0, 0) != 1


def test_zero_pattern_keeps_columns_stochastic():
    hmm = sy.symbolic_hmm(3, 2, A_zeros=[(2, 0)])
    assert hmm.A[2][0] == 0
    assert sum((hmm.A[r][0] for r in range(3)), 0) == 1


def test_rational_function_arithmetic():
    from sympy import QQ
    from sympy.polys.rings import ring

    R, a, b = ring("a,b", QQ)
    r = RationalFunction([a], [a + b]) + RationalFunction([b], [a + b])
    assert (r - 1).is_zero()
    assert not (RationalFunction([a], [b]) - RationalFunction([b], [a])).is_zero()
    assert ((RationalFunction([a]) / RationalFunction([b])) * b - a).is_zero()
    with pytest.raises(ZeroDivisionError):
        RationalFunction([a], [R.zero])


def test_zero_test_agrees_with_sympy_cancel():
    """The RationalFunction zero test and sympy.cancel(together(lhs - rhs)) agree."""
    import sympy

    hmm = sy.symbolic_hmm(2, 2)
    x = (0, 1)
    lhs = sy.path_sum(hmm, [None] + [hmm.emission(z) for z in x], 1)
    total = sum(lhs, hmm.ring.zero)
    lhs = [RationalFunction([p], [total]) for p in lhs]
    good = sy.claim_a1_rhs(hmm, x, 1)
    bad = sy.start_posterior(hmm, x)  # r_x and D dropped
    for left, right, zero in ((lhs, good, True), (lhs, bad, False)):
        for a, b in zip(left, right):
            assert (a - b).is_zero() is zero
            assert (sympy.cancel(sympy.together(a.as_expr() - b.as_expr())) == 0) is zero


def test_tau_on_proper_embeddings_is_the_joint():
    """SPEC: tau_i(e(x)) = P[H_i, X_{-i} = x_{-i}]; its total is Pr(X_{-i} = x_{-i})."""
    hmm = sy.symbolic_hmm(2, 2)
    x = (0, 1, 1)
    tau = sy.path_sum(hmm, [hmm.emission(x[0]), None, hmm.emission(x[2])], 2)
    both = [sy.path_sum(hmm, [hmm.emission(z) for z in (x[0], y, x[2])], 2) for y in (0, 1)]
    assert all(tau[h] == both[0][h] + both[1][h] for h in range(2))


def test_backward_messages_match_path_sums():
    hmm = sy.symbolic_hmm(2, 3)
    for x in sy.sequences(3, 2):
        brute = sum(sy.path_sum(hmm, [hmm.emission(z) for z in x], 0), hmm.ring.zero)
        assert brute == sy.sequence_probability(hmm, x)


def test_left_inverse_is_a_left_inverse():
    hmm = sy.symbolic_hmm(2, 3)
    w_plus = sy.left_inverse(hmm, [0, 1])
    for h in range(2):
        for g in range(2):
            total = sum((w_plus[h][z] * hmm.W[z][g] for z in range(3)), hmm.frac(0))
            assert (total - int(h == g)).is_zero()


def test_nonnegative_polynomial():
    free, hmm = sy.symbolic_hmm(2, 2, constrained=False), sy.symbolic_hmm(2, 2)
    assert sy.nonnegative_polynomial(sy.sequence_probability(free, (0, 1)))
    assert not sy.nonnegative_polynomial(sy.sequence_probability(hmm, (0, 1)))  # 1 - a terms
    assert not sy.nonnegative_polynomial(free.ring.zero)


# ---------------------------------------------------------------------------------------------
# the statements hold

def test_prove_all_default_sizes():
    results = sy.prove_all()
    assert [r["name"] for r in results] == list(sy.STATEMENTS)
    for r in results:
        assert r["holds"], r
        assert r["failure"] is None
        assert r["sequences_checked"] >= 14  # 2 + 4 + 8 sequences
        assert r["sizes"]["hidden"] == 2 and r["sizes"]["length"] == 3
        json.dumps(r)  # plain data


@pytest.mark.parametrize("hidden, vocab, length", [(1, 2, 2), (3, 2, 2), (2, 3, 2)])
def test_statements_hold_at_other_sizes(hidden, vocab, length):
    for name in ("prop-3.4", "claim-A.1", "lemma-B.2"):
        assert sy.PROVERS[name](hidden, vocab, length)["holds"], name
    if vocab >= hidden:
        assert sy.head_3_3(hidden, vocab, length)["holds"]


def test_head_3_3_with_a_rectangular_W():
    r = sy.head_3_3(2, 3, 2)
    assert r["holds"] and r["checks"]["left_inverse"]


def test_claim_a1_reports_r_x_and_positivity():
    r = sy.claim_a1(2, 2, 2, steps=(1, 2, 3))
    assert r["holds"] and r["checks"]["r_x_positive"]
    assert r["r_x"]["formula"] == "Pr(X_{1:T}=x) / Pr(X_{2:T+1}=x)"
    assert "-" not in r["r_x"]["value"]  # nonnegative coefficients, written out
    assert r["sequences_checked"] == 3 * 6


def test_head_3_6_structured_case():
    r = sy.head_3_6(2, 2, 2)
    assert r["holds"]
    assert r["checks"] == {"identity": True, "support_of_c": True, "r_x_positive": True}
    assert r["sizes"]["structured"]["H_star"] == [0, 1]


# ---------------------------------------------------------------------------------------------
# wrong formulas are rejected

def test_prop_3_4_rejects_transposed_A():
    r = sy.prop_3_4(2, 2, 2, rhs=lambda hmm, x: sy.prop_3_4_rhs(_transposed(hmm), x))
    assert not r["holds"] and r["failure"]["sequence"] == [0]


def test_prop_3_4_rejects_the_posterior_of_H_0():
    def rhs(hmm, x):  # W P[H_0 | X_{1:T} = x]: the wrong hidden state
        post = sy.start_posterior(hmm, x)
        return tuple(sum((w * p for w, p in zip(row, post)), hmm.frac(0)) for row in hmm.W)

    assert not sy.prop_3_4(2, 2, 2, rhs=rhs)["holds"]


def _claim_rhs(r_x=True, diagonal="right"):
    def rhs(hmm, x, step):
        post = sy.start_posterior(hmm, x)
        r = (_frac(hmm, sy.sequence_probability(hmm, x))
             / _frac(hmm, sy.sequence_probability(hmm, x, step))) if r_x else 1
        pi_i = sy.state_marginal(hmm, step)
        d = {"right": [RationalFunction([p], [q]) for p, q in zip(pi_i, hmm.pi0)],
             "inverted": [RationalFunction([q], [p]) for p, q in zip(pi_i, hmm.pi0)],
             "none": [1] * hmm.num_states}[diagonal]
        return tuple(r * dh * ph for dh, ph in zip(d, post))
    return rhs


def test_claim_a1_hand_written_rhs_holds():
    assert sy.claim_a1(2, 2, 2, rhs=_claim_rhs())["holds"]


@pytest.mark.parametrize("r_x, diagonal", [(True, "none"), (True, "inverted"), (False, "right")])
def test_claim_a1_rejects_wrong_formulas(r_x, diagonal):
    r = sy.claim_a1(2, 2, 2, rhs=_claim_rhs(r_x, diagonal))
    assert not r["holds"] and not r["checks"]["identity"]
    assert r["checks"]["r_x_positive"]  # the side check is about the true r_x


def test_claim_a1_rejects_transposed_A():
    rhs = lambda hmm, x, i: sy.claim_a1_rhs(_transposed(hmm), x, i)  # noqa: E731
    assert not sy.claim_a1(2, 2, 2, rhs=rhs)["holds"]


def test_lemma_b2_rejects_claim_a1_diagonal():
    """D = diag(P[H_1]/P[H_0]) (Claim A.1's, i = 1) instead of diag(1/P[H_0])."""
    def rhs(hmm, x):
        p1 = sy.state_marginal(hmm, 1)
        return tuple(v * p for v, p in zip(sy.lemma_b2_rhs(hmm, x), p1))

    assert not sy.lemma_b2(2, 2, 2, rhs=rhs)["holds"]


def test_lemma_b2_rejects_prompt_weight_without_A():
    """c = u ⊙ P[H_1] (forgetting the step H_1 -> H_2)."""
    def rhs(hmm, x):
        num, den = sy.sequence_probability(hmm, x), None
        c = tuple(u * p for u, p in zip(hmm.u, sy.state_marginal(hmm, 1)))
        beta = sy.backward_likelihood(hmm, x)
        den = sum((ci * b for ci, b in zip(c, beta)), 0)
        post = sy.start_posterior(hmm, x)
        return tuple(RationalFunction([num, ci], [den, p0]) * q
                     for ci, p0, q in zip(c, hmm.pi0, post))

    assert not sy.lemma_b2(2, 2, 2, rhs=rhs)["holds"]


def test_head_3_3_rejects_wrong_heads():
    def no_inverse_diagonal(hmm):  # b = mu^T D W^+ instead of mu^T D^-1 W^+
        w_plus, p1 = sy.left_inverse(hmm, range(hmm.num_states)), sy.state_marginal(hmm, 1)
        return {h: tuple(RationalFunction([p1[h]], [hmm.pi0[h]]) * w for w in w_plus[h])
                for h in w_plus}

    assert sy.head_3_3(2, 2, 2)["holds"]
    assert not sy.head_3_3(2, 2, 2, head=no_inverse_diagonal)["holds"]
    assert not sy.head_3_3(2, 2, 2, head=lambda hmm: sy.left_inverse(hmm, [0, 1]))["holds"]
    assert not sy.head_3_3(2, 2, 2, rhs=lambda hmm, x: sy.start_posterior(hmm, x))["holds"]


def test_head_3_6_rejects_transposed_A_in_part_1():
    r = sy.head_3_6(2, 2, 1, rhs=lambda hmm, x: sy.gbar2_rhs(_transposed(hmm), x))
    assert not r["holds"] and r["failure"]["part"] == 1


def test_head_3_6_rejects_a_prompt_that_reaches_every_state():
    r = sy.head_3_6(2, 2, 1, prompt=lambda hmm, B: (1,) * hmm.num_states)
    assert not r["holds"]
    assert not r["checks"]["support_of_c"] and r["failure"]["part"] == 2


def test_head_3_6_rejects_mu_outside_H_star():
    r = sy.head_3_6(2, 2, 1, mu_support=[0, 1, 2])
    assert not r["holds"] and r["failure"]["part"] == 2


def test_head_3_6_rejects_head_without_pi0():
    def head(hmm, H_star):  # diag(1/c) W^+: forgets to undo D = diag(1/P[H_0])
        w_plus, c = sy.left_inverse(hmm, H_star), sy.prompt_weight(hmm)
        return {h: tuple(RationalFunction([hmm.ring.one], [c[h]]) * w for w in w_plus[h])
                if h in H_star else (0,) * hmm.vocab_size for h in range(hmm.num_states)}

    assert not sy.head_3_6(2, 2, 1, head=head)["holds"]


def test_head_3_6_zero_prompt_is_a_failure_not_a_crash():
    r = sy.head_3_6(2, 2, 1, prompt=lambda hmm, B: (0,) * hmm.num_states)
    assert not r["holds"] and "error" in r["failure"]


# ---------------------------------------------------------------------------------------------
# bad input

@pytest.mark.parametrize("sizes, match", [
    ((0, 2, 3), "--hidden must be an integer in 1..4, got 0"),
    ((5, 2, 3), "--hidden must be an integer in 1..4, got 5"),
    ((2, 2, 0), "--length must be an integer in 1..4"),
    ((2, 2.0, 3), "--vocab must be an integer"),
    ((3, 3, 3), "path terms, more than the limit"),
])
def test_bad_sizes(sizes, match):
    with pytest.raises(InputError, match=match):
        sy.prove_all(*sizes)


def test_head_3_3_needs_vocab_at_least_hidden():
    with pytest.raises(InputError, match=r"needs \|X\| >= \|H\|"):
        sy.head_3_3(3, 2, 1)
    with pytest.raises(InputError, match="leave out head-3.3"):
        sy.prove_all(3, 2, 1)


def test_unknown_statement():
    with pytest.raises(InputError, match="unknown statement 'prop-9'"):
        sy.prove_all(names=["prop-9"])


# ---------------------------------------------------------------------------------------------
# command line

def test_cli_json(capsys):
    code = main(["symbolic", "prop-3.4", "head-3.3", "--length", "2", "--json"])
    out = json.loads(capsys.readouterr().out)  # exactly one JSON object
    assert code == 0 and out["holds"] is True
    assert [s["name"] for s in out["statements"]] == ["prop-3.4", "head-3.3"]
    assert out["sizes"] == {"hidden": 2, "vocab": 2, "length": 2}


def test_cli_text(capsys):
    assert main(["symbolic", "claim-A.1", "--length", "1"]) == 0
    assert "proved" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["symbolic", "--hidden", "0"], ["symbolic", "--vocab", "9"],
                                  ["symbolic", "bogus"], ["symbolic", "--hidden", "3"]])
def test_cli_bad_input_exits_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err


def test_cli_exit_1_when_a_statement_fails(monkeypatch, capsys):
    def failing(hidden, vocab, length):
        return sy.prop_3_4(hidden, vocab, length,
                           rhs=lambda hmm, x: sy.prop_3_4_rhs(_transposed(hmm), x))

    monkeypatch.setitem(sy.PROVERS, "prop-3.4", failing)
    assert main(["symbolic", "prop-3.4", "--length", "1", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["holds"] is False and out["statements"][0]["failure"]["sequence"] == [0]
