"""Theorems 4.3, 4.6 and C.6: witnesses, R membership, assumptions and the checker, against
brute force over memories and hidden paths (tests/oracle.py and the sums below)."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from headprompt.constructions.memory import find_recoverable_states, theorem_43_witness, theorem_c6_witness
from headprompt.constructions.span import span_decomposition, theta_two
from headprompt.constructions.witnesses import AttentionWitness
from headprompt.models.inference.attention import attention, softmax_attention
from headprompt.models.exceptions import ConstructionError
from headprompt.models.hmm.values import MemoryHMM
from headprompt.verify.checks.memory import assumptions as masm
from headprompt.verify.cli.main import main
from headprompt.verify.checks.memory.check import check_sequences, decide_direct, identity_check
from headprompt.verify.reports.memory import break_nondegeneracy, generate_instance
from headprompt.verify.evidence.sequences import exhaustive

from tests import oracle


# ---------------------------------------------------------------- brute-force oracles

def _paths(mhmm, t):
    return itertools.product(range(mhmm.num_states), repeat=t + 1)


def bf_tau(mhmm, emb, i):
    """``tau_i`` over lifted states ``(c, h)`` for lifted embeddings ``emb[j][(c, h)]`` (dicts),
    by a sum over memory configurations and hidden paths (definition, SPEC section 1)."""
    configs = list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))
    out = {}
    for c, ms in enumerate(configs):
        for path in _paths(mhmm, len(emb)):
            p = Fraction(mhmm.pM[c]) * mhmm.pi0[path[0]]
            for j in range(1, len(emb) + 1):
                p *= mhmm.A[path[j], path[j - 1]]
                if j - 1 != i:
                    p *= emb[j - 1](c, ms, path[j])
                if p == 0:
                    break
            key = (c, path[i + 1])
            out[key] = out.get(key, Fraction(0)) + p
    return out, configs


def proper(mhmm, z):
    return lambda c, ms, h: mhmm.W[z, ms[h // mhmm.syntax_states], h]


def bf_hidden_given_others(mhmm, tokens, i):
    """``P[H_i = h, X_-i = x_-i]`` for every ``h``."""
    tau, _ = bf_tau(mhmm, [proper(mhmm, z) for z in tokens], i)
    out = [Fraction(0)] * mhmm.num_states
    for (c, h), p in tau.items():
        out[h] += p
    return out


def bf_in_R(mhmm, tokens, H_star):
    if sum(p for _, p in oracle.memory_joint(mhmm, tokens)) == 0:
        return None                                   # outside supp(P[X])
    Z = []
    for i in range(len(tokens)):
        joint = bf_hidden_given_others(mhmm, tokens, i)
        if sum(joint) > 0 and all(joint[h] == 0 for h in range(mhmm.num_states) if h not in H_star):
            Z.append(i)
    return tuple(Z)


def bf_gbar(mhmm, emb, i):
    """``W phi(tau_i) / ||phi(tau_i)||`` (the factor ``|M|^-(N-1)`` cancels)."""
    tau, configs = bf_tau(mhmm, emb, i)
    phi = {}
    for (c, h), p in tau.items():
        m = configs[c][h // mhmm.syntax_states]
        phi[(m, h)] = phi.get((m, h), Fraction(0)) + p
    total = sum(phi.values())
    if total == 0:
        return [Fraction(0)] * mhmm.num_tokens
    return [sum(mhmm.W[x, m, h] * p for (m, h), p in phi.items()) / total for x in range(mhmm.num_tokens)]


def bf_attention(w, G, values):
    scores = [sum(Fraction(a) * b for a, b in zip(w.q, [sum(Fraction(k) * g for k, g in zip(row, Gi)) + Fraction(bt)
                                                        for row, bt in zip(w.Theta_K, w.beta[min(i, len(w.beta) - 1)])]))
              for i, Gi in enumerate(G)]
    top = max(scores)
    I = [i for i, s in enumerate(scores) if s == top]
    vals = []
    for i in I:
        a = [sum(Fraction(k) * g for k, g in zip(row, G[i])) for row in w.Theta_V]
        vals.append(sum(Fraction(bb) * aa * Fraction(v) for bb, aa, v in zip(w.b, a, values[i])))
    return int(sum(vals) / len(I) >= 0), tuple(I)


def bf_decision(mhmm, w, H_star, tokens):
    """``(Z or None, F*(x), F(x), attended)`` entirely by brute force."""
    tokens = list(tokens)
    Z = bf_in_R(mhmm, tokens, H_star)
    if Z is None:
        return None
    post = oracle.memory_posterior(mhmm, tokens, mhmm.target_cell)
    star = int(sum(Fraction(m) * p for m, p in zip(mhmm.mu, post)) >= 0)
    Wf = mhmm.emission_matrix()
    n = mhmm.num_states
    if w.u is None:
        G = [oracle.memory_conditional(mhmm, tokens, i) for i in range(len(tokens))]
        values = [list(Wf[z]) for z in tokens]
    else:
        u = [Fraction(v) for v in w.u]
        emb = [lambda c, ms, h: u[c * n + h]] + [proper(mhmm, z) for z in tokens]
        G = [bf_gbar(mhmm, emb, i) for i in range(len(tokens) + 1)]
        configs = list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))
        phi_u = [Fraction(0)] * (mhmm.memory_values * n)
        for c, ms in enumerate(configs):
            for h in range(n):
                phi_u[ms[h // mhmm.syntax_states] * n + h] += u[c * n + h]
        phi_u = [v / mhmm.memory_values ** (mhmm.cells - 1) for v in phi_u]
        values = [phi_u] + [list(Wf[z]) for z in tokens]
    got, attended = bf_attention(w, G, values)
    return Z, star, got, attended


# ---------------------------------------------------------------- instances

def small(theorem, seed, *, memory=2, cells=2, syntax=1, vocab=5):
    model, info = generate_instance(theorem, memory, cells, syntax, vocab, rng=np.random.default_rng(seed))
    return model, info


def witness_for(model, theorem):
    if theorem == "4.3":
        w = theorem_43_witness(model)
    else:
        w = theorem_c6_witness(model, theorem=theorem)
    return w, list(w.H_star)


CASES = [("4.3", dict(memory=2, cells=2, syntax=1)), ("4.3", dict(memory=2, cells=1, syntax=2)),
         ("4.6", dict(memory=3, cells=1, syntax=2, vocab=5)), ("C.6", dict(memory=2, cells=2, syntax=1))]


@pytest.mark.parametrize("theorem,sizes", CASES)
def test_checker_and_witness_agree_with_brute_force(theorem, sizes):
    model, info = small(theorem, 3, **sizes)
    w, H_star = witness_for(model, theorem)
    seqs = exhaustive(model.num_tokens, 2) + [tuple(info["tie_sequence"])] + \
        [tuple(s) for s in np.random.default_rng(0).integers(model.num_tokens, size=(25, 3)).tolist()]
    seqs = list(dict.fromkeys(seqs))
    res = check_sequences(model, w, H_star, seqs, keep=True, evaluate_outside_R=True)
    in_R = agree = 0
    for d in res.decisions:
        bf = bf_decision(model, w, H_star, d.sequence)
        assert d.possible == (bf is not None), d.sequence
        if bf is None:
            continue
        Z, star, got, attended = bf
        assert (d.Z, d.expected, d.got, d.attended) == (Z, star, got, attended), d.sequence
        if Z:
            in_R += 1
            agree += star == got
    assert in_R > 0 and res.in_R == in_R and res.agree == agree == in_R
    assert res.first_disagreement is None


def test_generated_instances_have_a_good_share_in_R_and_verify():
    for theorem, cells in (("4.3", 2), ("4.6", 1), ("C.6", 2)):
        model, info = generate_instance(theorem, 3, cells, 3, 10, rng=np.random.default_rng(1))
        w, H_star = witness_for(model, theorem)
        from headprompt.models.generate.sampling import sample

        tokens, _, _ = sample(model.to_float(), 300, 8, rng=np.random.default_rng(2))
        res = check_sequences(model, w, H_star, [tuple(r) for r in tokens.tolist()])
        assert res.in_R >= 0.15 * res.checked, (theorem, res.in_R, res.checked)
        assert res.agree == res.in_R
        assert identity_check(model, w, H_star)["holds"]


def test_tie_sequence_is_an_exact_tie_in_R():
    model, info = generate_instance("4.3", 3, 2, 3, 10, rng=np.random.default_rng(0))
    w, H_star = witness_for(model, "4.3")
    res = check_sequences(model, w, H_star, [tuple(info["tie_sequence"])], keep=True)
    d = res.decisions[0]
    assert d.in_R and d.tie and d.expected == 1 and d.got == 1


# ---------------------------------------------------------------- every check can fail

def _mutations(w, rng):
    """A few mutated witnesses: one entry of one parameter changed."""
    out = []
    for name in ("q", "Theta_K", "beta", "Theta_V", "b"):
        arr = np.array(getattr(w, name), dtype=object)
        for _ in range(3):
            idx = tuple(int(rng.integers(s)) for s in arr.shape)
            new = arr.copy()
            new[idx] = Fraction(int(rng.integers(-3, 4)), int(rng.integers(1, 3))) - (1 if name == "b" else 0) * arr[idx]
            out.append((name, AttentionWitness(**{**{k: getattr(w, k) for k in
                                                      ("q", "Theta_K", "beta", "Theta_V", "b", "u")}, name: new})))
    out.append(("b", AttentionWitness(w.q, w.Theta_K, w.beta, w.Theta_V, -np.array(w.b, dtype=object), w.u)))
    return out


@pytest.mark.parametrize("theorem,sizes", [CASES[0], CASES[3]])
def test_mutated_heads_are_refuted_exactly_when_they_really_disagree(theorem, sizes):
    model, info = small(theorem, 5, **sizes)
    w, H_star = witness_for(model, theorem)
    seqs = list(dict.fromkeys(exhaustive(model.num_tokens, 2) + [tuple(info["tie_sequence"])]))
    refuted = 0
    for name, m in _mutations(w, np.random.default_rng(7)):
        res = check_sequences(model, m, H_star, seqs, keep=True)
        bf_disagree = []
        for d in res.decisions:
            if d.in_R:
                Z, star, got, _ = bf_decision(model, m, H_star, d.sequence)
                assert Z and (star, got) == (d.expected, d.got)
                if star != got:
                    bf_disagree.append(d.sequence)
        if res.first_disagreement is not None:
            refuted += 1
            assert res.first_disagreement.sequence in bf_disagree
        else:
            assert not bf_disagree
    assert refuted >= 2        # negating b alone flips every non-tie verdict


def test_wrong_R_membership_is_not_trusted():
    """Sequences outside R never count; claiming a larger H* admits them and is caught."""
    model, info = small("4.3", 0, memory=2, cells=2, syntax=1)
    w, H_star = witness_for(model, "4.3")
    seqs = exhaustive(model.num_tokens, 3)
    res = check_sequences(model, w, H_star, seqs, keep=True, evaluate_outside_R=True)
    outside = [d for d in res.decisions if d.possible and not d.in_R]
    assert outside and res.outside_R == len(outside)
    # the head may disagree with F* outside R: those disagreements are not counted
    disagree_outside = [d for d in outside if d.expected != d.got]
    assert disagree_outside, "expected the head to be wrong somewhere outside R"
    assert res.agree == res.in_R and res.first_disagreement is None
    for d in disagree_outside[:3]:
        assert bf_in_R(model, list(d.sequence), H_star) == ()       # really outside R
    # a wrong H* (all states) puts them in "R" and the checker then reports a disagreement
    wrong = check_sequences(model, w, list(range(model.num_states)), seqs)
    assert wrong.in_R > res.in_R and wrong.first_disagreement is not None
    assert bf_in_R(model, list(wrong.first_disagreement.sequence), H_star) == ()


def test_identity_check_rejects_mutations():
    model, _ = small("C.6", 2, memory=2, cells=2, syntax=1)
    w, H_star = witness_for(model, "C.6")
    assert identity_check(model, w, H_star)["holds"]
    bad_u = np.array(w.u, dtype=object)
    bad_u[0] = 1 - bad_u[0]
    for m in (AttentionWitness(w.q, w.Theta_K, w.beta, w.Theta_V, -np.array(w.b, dtype=object), w.u),
              AttentionWitness(w.q, w.Theta_K, w.beta, w.Theta_V, w.b, bad_u),
              AttentionWitness(w.q, w.Theta_K, np.zeros_like(w.beta), w.Theta_V, w.b, w.u)):
        assert not identity_check(model, m, H_star)["holds"]


# ---------------------------------------------------------------- constructions

def test_projections_recover_the_parts_exactly():
    model, _ = generate_instance("4.3", 3, 2, 3, 10, rng=np.random.default_rng(4))
    sets = find_recoverable_states(model)
    dec = span_decomposition(model, sets.S_star)
    Wf = model.emission_matrix()
    n = model.num_states
    for h in dec.H_star:
        B = dec.projection(h)
        assert (B.dot(B) == B).all()                                   # a projection
        for m in range(model.memory_values):
            for g in range(n):
                col = Wf[:, m * n + g]
                assert (B.dot(col) == (col if g == h else 0 * col)).all()
        s = h - model.target_cell * model.syntax_states
        assert (theta_two(model, dec, s) == dec.rows_of(h)).all()       # W^+ B^(h) = L_h


def test_softmax_tends_to_the_argmax_head():
    model, info = generate_instance("4.3", 3, 2, 2, 8, rng=np.random.default_rng(0))
    w, H_star = witness_for(model, "4.3")
    seq = [info["trigger"], 0, 5, 6]
    from headprompt.models.inference import exact as ie

    G = [ie.memory_gbar(model, [list(model.emission_matrix()[z]) for z in seq], i) for i in range(len(seq))]
    vals = [list(model.emission_matrix()[z]) for z in seq]
    res = attention(w, G, vals)
    exact = res.output
    assert res.attended == (1,)                  # the position right after the trigger
    gaps = [abs(softmax_attention(w, G, vals, query_scale=s) - float(exact)) for s in (1, 10, 100, 1000)]
    assert gaps[0] > gaps[1] > 1e-6 > 1e-12 > gaps[3]


def test_float_mode_matches_exact_and_is_uncertified():
    model, _ = generate_instance("C.6", 2, 2, 2, 8, rng=np.random.default_rng(3))
    w, H_star = witness_for(model, "C.6")
    from headprompt.models.generate.sampling import sample

    tokens, _, _ = sample(model.to_float(), 200, 6, rng=np.random.default_rng(0))
    seqs = [tuple(r) for r in tokens.tolist()]
    ex = check_sequences(model, w, H_star, seqs, keep=True)
    fl = check_sequences(model, w, H_star, seqs, keep=True, mode="float")
    assert [d.Z for d in ex.decisions] == [d.Z for d in fl.decisions]
    same = sum((a.expected, a.got) == (b.expected, b.got) for a, b in zip(ex.decisions, fl.decisions) if a.in_R and not a.tie)
    assert same == sum(1 for a in ex.decisions if a.in_R and not a.tie)
    assert all(d.certified_by.startswith("float") for d in fl.decisions)


def test_direct_route_matches_fast_checker():
    model, info = generate_instance("C.6", 2, 2, 2, 8, rng=np.random.default_rng(6))
    w, H_star = witness_for(model, "C.6")
    seqs = [tuple(info["tie_sequence"]), (0, 1, 2), (info["trigger"], 0)]
    res = check_sequences(model, w, H_star, seqs, keep=True, evaluate_outside_R=True)
    for d in res.decisions:
        s = decide_direct(model, w, H_star, d.sequence)
        assert (d.possible, d.Z, d.expected, d.got, d.attended) == (s.possible, s.Z, s.expected, s.got, s.attended)


# ---------------------------------------------------------------- assumptions

def test_failed_nondegeneracy_has_checkable_certificates():
    for theorem, cells in (("4.3", 2), ("C.6", 2), ("4.6", 1)):
        model, _ = generate_instance(theorem, 3, cells, 2, 10, rng=np.random.default_rng(0))
        broken, _ = break_nondegeneracy(model, theorem != "4.3")
        name = {"4.3": "4.2", "4.6": "4.5", "C.6": "C.5"}[theorem]
        res = masm.check_all(broken, theorem)[name]
        assert not res["holds"]
        for e in res["evidence"]:
            assert e["kind"] in ("dependent", "shared")
            if e["kind"] == "dependent":
                v = [Fraction(x) for x in e["null_vector"]]
                total = sum(c * broken.W[:, m, h] for c, (m, h) in zip(v, e["columns"]))
                assert any(v) and all(t == 0 for t in total)
            else:
                w = [Fraction(x) for x in e["w"]]
                right = sum(Fraction(c) * broken.W[:, m, h] for c, (m, h) in zip(e["c"], e["V_columns"]))
                assert any(w) and list(right) == w
        with pytest.raises(ConstructionError):
            theorem_43_witness(broken) if theorem == "4.3" else theorem_c6_witness(broken, theorem=theorem)


def test_relaxed_assumption_holds_where_42_fails():
    model, _ = generate_instance("C.6", 3, 2, 3, 10, rng=np.random.default_rng(0))
    assert masm.check_c5(model)["holds"]
    assert not masm.check_42(model)["holds"]


def test_stationarity_is_exact():
    model, _ = generate_instance("4.6", 2, 1, 3, 8, rng=np.random.default_rng(0))
    assert masm.check_44(model)["holds"]
    pi0 = np.array([Fraction(1, model.num_states)] * model.num_states, dtype=object)
    moved = MemoryHMM(model.cells, model.memory_values, model.syntax_states, model.A, model.W, pi0, model.pM,
                      model.mu, model.target_cell)
    res = masm.check_44(moved)
    assert not res["holds"] and "not stationary" in res["why"]


# ---------------------------------------------------------------- the command line

def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_exit_codes_and_replay(capsys, tmp_path):
    import json

    out = tmp_path / "inst.json"
    code, text, _ = _run(capsys, "theorem", "C.6", "--samples", "150", "--json", "--out", str(out))
    rep = json.loads(text)
    assert code == 0 and rep["verdict"] == "verified" and rep["sequences"]["in_R"] > 0
    assert set(rep) >= {"theorem", "verdict", "mode", "instance", "assumptions", "witness", "identity",
                        "sequences", "counterexample", "seconds"}
    code, text, _ = _run(capsys, "theorem", "C.6", "--hmm", str(out), "--witness", str(out), "--samples", "150", "--json")
    assert code == 0
    data = json.loads(out.read_text())
    data["witness"]["b"] = [("-" + v if not v.startswith("-") else v[1:]) if v != "0" else v for v in data["witness"]["b"]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data["witness"]))
    code, text, _ = _run(capsys, "theorem", "C.6", "--hmm", str(out), "--witness", str(bad), "--samples", "150", "--json")
    rep = json.loads(text)
    assert code == 1 and rep["counterexample"]["kind"] == "disagreement"
    data["witness"]["q"] = data["witness"]["q"][:-1]
    bad.write_text(json.dumps(data["witness"]))
    code, _, err = _run(capsys, "theorem", "C.6", "--hmm", str(out), "--witness", str(bad))
    assert code == 2 and "witness q: expected shape" in err and err.count("\n") == 1
    broken = tmp_path / "broken.json"
    code, _, _ = _run(capsys, "counterexample", "4.3", "--out", str(broken), "--json")
    assert code == 1                              # a counterexample found (exit 1 since issue 25)
    code, text, _ = _run(capsys, "theorem", "4.3", "--hmm", str(broken), "--json")
    rep = json.loads(text)
    assert code == 3 and rep["verdict"] == "assumptions-fail" and rep["counterexample"]["checked"] is True
    code, _, err = _run(capsys, "theorem", "4.6", "--hmm", str(out))
    assert code == 2 and "one memory cell" in err


def test_literal_beta_minus_two_fails_and_the_widened_prompt_position_fixes_it():
    """Lemma C.9's beta_1 = (0, -2) assumes q . Theta_K Gbar_1 <= 1 at the prompt position; with
    M* != M, Gbar_1 mixes columns outside the direct sum and can score far higher. An exact
    instance satisfying Assumptions 4.4 and C.5 where the literal head is wrong on R."""
    from fractions import Fraction as Fr

    cols = {(0, 0): [Fr(1, 2), Fr(1, 2), 0, 0, 0], (1, 0): [Fr(9, 10), 0, 0, Fr(1, 10), 0],
            (0, 1): [Fr(23, 100), Fr(27, 100), Fr(1, 4), 0, Fr(1, 4)], (1, 1): [0, 0, Fr(1, 2), 0, Fr(1, 2)]}
    W = [[[cols[(m, h)][x] for h in range(2)] for m in range(2)] for x in range(5)]
    model = MemoryHMM.create(2, 2, 1, [[Fr(4, 5), 1], [Fr(1, 5), 0]], W, [Fr(5, 6), Fr(1, 6)],
                             pM=[Fr(1, 4)] * 4, mu=[-1, 0], target_cell=0)
    assert all(r["holds"] for r in masm.check_all(model, "C.6").values())
    w, H_star = witness_for(model, "C.6")
    assert w.notes and w.beta[0][-1] == -14
    literal_beta = np.array(w.beta, dtype=object)
    literal_beta[0, -1] = -2
    literal = AttentionWitness(w.q, w.Theta_K, literal_beta, w.Theta_V, w.b, w.u)
    seqs = exhaustive(model.num_tokens, 2)
    bad = check_sequences(model, literal, H_star, seqs)
    d = bad.first_disagreement
    assert d is not None and d.attended == (0,)                   # the prompt position wins
    Z, star, got, attended = bf_decision(model, literal, H_star, d.sequence)
    assert Z and star == 1 and got == 0 and attended == (0,)
    good = check_sequences(model, w, H_star, seqs)
    assert good.in_R == bad.in_R and good.agree == good.in_R
