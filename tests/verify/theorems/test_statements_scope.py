"""``verify statements`` rows against independent brute-force oracles written for an audit (own
path enumerations, not :mod:`headprompt.verify.studies.statements.paths`), and the scope strings
against what the checks actually run: the symbolic head identity of Theorem 3.6 is proved on a
structured case only, Claim A.1 at timesteps 1 and 2 only, and ``verify theorem`` on the memory
theorems checks no sequence of length 3."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import pytest

from headprompt.models.inference import exact as ie
from headprompt.verify.symbolic.proofs import prove_all
from headprompt.verify.studies import statements as st
from headprompt.verify.studies.statements import theorems as sth

ROWS = {row[0]: row for row in st.STATEMENTS}


# ------------------------------------------------------------------ independent oracles

def _vanilla_fw(hmm, u, obs, stop):
    """Forward message to ``stop`` of the augmented HMM of Lemma B.1: ``obs[t-1]`` is the set of
    augmented tokens allowed at time ``t`` (token ``|X|`` is the fake one, only at time 1), or
    None (unobserved)."""
    n, X = hmm.num_states, hmm.num_tokens

    def weight(t, allowed, h):
        if allowed is None:
            return F(1)
        if t == 1:
            return sum(F(u[h]) if z == X else (1 - F(u[h])) * F(hmm.W[z, h]) for z in allowed)
        return sum(F(hmm.W[z, h]) for z in allowed if z < X)

    alpha = [F(p) for p in hmm.pi0]
    for t in range(1, stop + 1):
        alpha = [sum(F(hmm.A[g, h]) * alpha[h] for h in range(n)) * weight(t, obs[t - 1], g) for g in range(n)]
    beta = [F(1)] * n
    for t in range(len(obs), stop, -1):
        w = [weight(t, obs[t - 1], g) for g in range(n)]
        beta = [sum(F(hmm.A[g, h]) * w[g] * beta[g] for g in range(n)) for h in range(n)]
    return [a * b for a, b in zip(alpha, beta)]


def test_lemma_b1_counts_and_values_agree_with_an_independent_oracle():
    tot = {"positions": 0, "positive": 0, "zero_norm": 0}
    for _, build, u in st.B1_CASES:
        hmm = build()
        X, n = hmm.num_tokens, hmm.num_states
        for x in st.words(X, 3):
            obs = [{X}, None] + [{z} for z in x]                   # (z~, ∅, x), ∅ unobserved
            emb = [[F(v) for v in u], [F(1)] * n] + [list(hmm.W[z]) for z in x]
            for i in range(1, len(obs) + 1):
                tot["positions"] += 1
                free = list(obs)
                free[i - 1] = None
                joint = _vanilla_fw(hmm, u, free, i)
                assert ie.tau(hmm, emb, i - 1) == joint
                got = ie.gbar(hmm, emb, i - 1)
                if sum(joint) == 0:
                    tot["zero_norm"] += 1
                    assert got == [0] * X
                elif i > 1:
                    tot["positive"] += 1
                    want = []
                    for z in range(X):
                        o = list(obs)
                        o[i - 1] = {z}
                        want.append(sum(_vanilla_fw(hmm, u, o, len(o))) / sum(joint))
                    assert got == want
    ok, _, counts = ROWS["Lemma B.1"][3]()
    assert ok and {k: counts[k] for k in tot} == tot == {"positions": 186, "positive": 126, "zero_norm": 20}


def _mem_terms(m, weights):
    """``(memories, path, probability)`` of every nonzero term, by enumeration."""
    n, S = m.num_states, m.syntax_states
    out = []
    for c, ms in enumerate(itertools.product(range(m.memory_values), repeat=m.cells)):
        for path in itertools.product(range(n), repeat=len(weights) + 1):
            p = F(m.pM[c]) * F(m.pi0[path[0]])
            for t, w in enumerate(weights, 1):
                if not p:
                    break
                p *= F(m.A[path[t], path[t - 1]]) * w(c, ms, path[t])
            if p:
                out.append((ms, path, p))
    return out


def _memory_oracle(m):
    u = st.paper_prompt(m)
    n, S = m.num_states, m.syntax_states
    supp = {k for k in range(m.memory_values) if m.mu[k] != 0}
    tok = lambda z: (lambda c, ms, h: F(m.W[z, ms[h // S], h]))          # noqa: E731
    prompt = lambda c, ms, h: F(u[c * n + h])                             # noqa: E731
    one = lambda c, ms, h: F(1)                                           # noqa: E731
    task = lambda ts: sum(F(m.mu[ms[m.target_cell]]) * p for ms, _, p in ts)  # noqa: E731
    mass = lambda ts: sum(p for *_, p in ts)                              # noqa: E731
    out = {"C.11": 0, "C.14": 0, "C.15": 0, "zero_positions": 0}
    for x in st.words(m.num_tokens, 2):
        toks = [tok(z) for z in x]
        for i in range(2, len(x) + 2):
            w = [prompt] + toks
            w[i - 1] = one
            terms = _mem_terms(m, w)
            if not terms:
                out["zero_positions"] += 1
                assert ie.prompt_gbar(m, u, list(x), i - 1) == [0] * m.num_tokens
                continue
            out["C.11"] += 1
            assert {ms[m.target_cell] for ms, _, _ in terms} <= supp
        hat, plain = _mem_terms(m, [prompt] + toks), _mem_terms(m, toks)
        if hat:
            out["C.14"] += 1
            rest = mass(_mem_terms(m, [one] + toks))
            assert task(hat) / mass(hat) == task(plain) / mass(plain) / (mass(hat) / rest)
        elif plain:
            out["C.15"] += 1
            assert task(plain) == 0
    return out


def test_memory_claims_agree_with_an_independent_oracle():
    two = _memory_oracle(st.two_cell_instance())
    one = _memory_oracle(st.one_cell_instance())
    c11, c14, c15 = (ROWS[name][3]() for name in ("Proposition C.11", "Claim C.14", "Claim C.15"))
    assert c11[0] and c14[0] and c15[0]
    assert c11[2]["two cells"]["pairs"] == two["C.11"] == 45 and c11[2]["one cell"]["pairs"] == one["C.11"] == 210
    assert c14[2]["two cells"]["possible"] == two["C.14"] == 20 and c14[2]["one cell"]["possible"] == one["C.14"] == 61
    assert c15[2]["claim"] == two["C.15"] == 6 and c15[2]["zero_positions"] == two["zero_positions"] == 10


def test_theorem_43_region_and_ties_agree_with_an_independent_oracle():
    report = sth.run_instances("4.3", seeds=(0,))[0]
    m, H_star = report.details["model"], set(report.details["H_star"])
    S = m.syntax_states
    tok = lambda z: (lambda c, ms, h: F(m.W[z, ms[h // S], h]))          # noqa: E731
    in_R = ties = 0
    for x in st.words(m.num_tokens, sth.BRUTE_LENGTH["4.3"]):
        terms = _mem_terms(m, [tok(z) for z in x])
        if not terms:
            continue
        region = False
        for i in range(len(x)):                      # supp P[H_i | X_-i] ⊆ H*
            w = [tok(z) for z in x]
            w[i] = lambda c, ms, h: F(1)
            region |= {path[i + 1] for _, path, _ in _mem_terms(m, w)} <= H_star
        if region:
            in_R += 1
            ties += sum(F(m.mu[ms[m.target_cell]]) * p for ms, _, p in terms) == 0
    ok, _, counts = sth.check_theorem("4.3", seeds=(0,), symbolic=False)
    assert ok and (counts["sequences_brute"], counts["ties_brute"]) == (in_R, ties) == (4, 1)


# ------------------------------------------------------------------ scope strings vs what runs

def test_theorem_36_scope_names_the_structured_case_of_its_head_identity():
    scope = ROWS["Theorem 3.6"][2]["symbolic_sizes"]
    for h, x, t in sth.SYMBOLIC_SIZES:
        structured = prove_all(h, x, t, ["head-3.6"])[0]["sizes"]["structured"]
        assert f"({structured['hidden']}, {structured['vocab']}, {t})" in scope.split("structured case")[1]
        assert structured["hidden"] != h                  # a different |H|: the old scope claimed (h, x, t)
    assert "only the structured case" in scope and "A[|H|-1, 0] = 0" in scope
    assert ROWS["Theorem 3.3"][2]["symbolic_sizes"].endswith("all parameters symbolic")


def test_claim_a1_scope_names_the_timesteps_proved():
    steps = prove_all(2, 2, 2, ["claim-A.1"])[0]["sizes"]["steps"]
    assert ROWS["Claim A.1"][2]["steps"].startswith(f"i = {', '.join(map(str, steps))} only")
    assert "U = X_1, Z = H_1, V = X_{2:T+1}" in ROWS["Proposition 3.4"][1]


@pytest.mark.parametrize("tid", ["4.6", "3.3"])
def test_theorem_rows_check_the_lengths_their_scope_names(tid, monkeypatch):
    text, lengths = sth.tool_sequences(tid)
    assert ROWS[f"Theorem {tid}"][2]["sequences"].startswith(text)
    ok, _, counts = sth.check_theorem(tid, seeds=(0,), symbolic=False)
    assert ok and counts["lengths_tool"] == lengths
    if tid == "4.6":
        assert 3 not in lengths and "none of length 3" in text            # the old scope said 1..4
    kind = "vanilla" if tid == "3.3" else "memory"
    monkeypatch.setitem(sth.TOOL_SEQUENCES, kind, (text, [1, 2, 3, 4, 5]))
    ok, why, _ = sth.check_theorem(tid, seeds=(0,), symbolic=False)
    assert not ok and "the row's scope says" in why
