"""Certified verdicts (float kernel + a priori rounding-error bound) against exact arithmetic.

Over 100,000 sequences in all (exhaustive, sampled, adversarial near ties, long ones): every
certified verdict equals the exact one; the bound on each computed margin exceeds its true
error, measured against exact rational arithmetic; ties and near ties go to exact arithmetic;
and the same measurement catches a bound divided by 1,000.
"""

import types
from fractions import Fraction

import flint
import numpy as np
import pytest

from headprompt.constructions.memory import theorem_43_witness, theorem_c6_witness
from headprompt.constructions.vanilla import theorem_33_witness, theorem_36_witness
from headprompt.models.inference import bounds as ib
from headprompt.models.inference import exact as ie
from headprompt.models.inference import floats as iff
from headprompt.models.generate.generators import full_rank_hmm, prompt_friendly_hmm
from headprompt.verify.checks.memory import assumptions as masm
from headprompt.verify.checks.memory import check as memory_check
from headprompt.verify.reports import memory as memory_report
from headprompt.verify.evidence import sequences as sq
from headprompt.verify.checks.vanilla.check import _Rows, check_sequences, identity_check, read_position_prior

FIELDS = ("possible", "expected", "got", "tie", "zero_norm", "identity")


def _vanilla(tid: str, hidden: int, vocab: int, seed: int):
    rng = np.random.default_rng(seed)
    if tid == "3.3":
        hmm, info = full_rank_hmm(hidden, vocab, rng=rng)
        w = theorem_33_witness(hmm)
    else:
        hmm, info = prompt_friendly_hmm(hidden, vocab, rng=rng)
        w = theorem_36_witness(hmm)
    u = getattr(w, "u", None)
    return hmm, w, u, identity_check(hmm, tid, w.b, u)["lambda"], info


def _assert_same(hmm, tid, w, u, lam, seqs):
    exact = check_sequences(hmm, tid, w.b, u, seqs, lam=lam, keep=True)
    cert = check_sequences(hmm, tid, w.b, u, seqs, mode="certified", lam=lam, keep=True)
    assert len(exact.decisions) == len(cert.decisions) == len(seqs)
    for e, c in zip(exact.decisions, cert.decisions):
        assert e.sequence == c.sequence
        assert [getattr(e, f) for f in FIELDS] == [getattr(c, f) for f in FIELDS], e.sequence
    assert sum(cert.decided_by.values()) == len(seqs)
    return cert


@pytest.mark.parametrize("tid, hidden, vocab, length", [("3.6", 5, 4, 8), ("3.3", 3, 4, 7)])
def test_certified_equals_exact_on_every_short_sequence(tid, hidden, vocab, length):
    hmm, w, u, lam, info = _vanilla(tid, hidden, vocab, seed=3)
    seqs = sq.exhaustive(vocab, length)                       # 87,380 and 21,844 sequences
    cert = _assert_same(hmm, tid, w, u, lam, seqs)
    assert cert.decided_by.get("bound", 0) > 0.9 * len(seqs)
    tie = tuple(info["tie_sequence"])                          # mu . P[H_0 | tie] = 0 exactly
    d = next(d for d in cert.decisions if d.sequence == tie)
    assert d.tie and d.certified_by == "exact-fallback"


def test_certified_equals_exact_on_sampled_adversarial_and_long_sequences():
    hmm, w, u, lam, info = _vanilla("3.6", 25, 10, seed=0)
    rng = np.random.default_rng(1)
    seqs = (sq.sampled(hmm, 2000, 16, rng=rng) + sq.adversarial(hmm, 100, 16, rng=rng)
            + sq.adversarial(hmm, 60, 129, rng=rng) + [tuple(info["tie_sequence"])])
    cert = _assert_same(hmm, "3.6", w, u, lam, list(dict.fromkeys(seqs)))
    assert cert.exact_fallbacks > 0                            # the tie and near ties went to exact
    small, ws, us, lams, _ = _vanilla("3.6", 4, 3, seed=5)
    long = sq.sampled(small, 6, 2000, rng=rng)                 # T = 2,000: rescaling, no underflow
    long_cert = _assert_same(small, "3.6", ws, us, lams, long)
    assert long_cert.decided_by == {"bound": 6}


def _soundness_violations(hmm, w, u, lam, tokens: np.ndarray) -> tuple[int, int, int]:
    """``(margin bound violations, relative-error violations, margins checked)``: the float
    kernel's ``Phat - Nhat`` against ``2^shift (P - N)`` computed in exact rationals."""
    rows = _Rows(hmm, "3.6", w.b, u, lam)
    chain = ib.bound_chain(hmm)
    m = iff.scaled_messages(chain.A, chain.AT, chain.pi0, chain.W, np.ascontiguousarray(tokens.T),
                            forward=False, store=False, track=True, every=chain.every)
    assert np.all(m["minpos"] >= rows.floor)
    P, N = m["beta0"] @ rows.pos, m["beta0"] @ rows.neg
    t, H = tokens.shape[1], hmm.num_states
    count = ib.backward_count(t, H) + 1 + H
    _, _, bound = ib.certified_signs(P, N, count)
    g = Fraction(ib.gamma(count))
    ih = ie.integer_hmm(hmm)
    pre = read_position_prior(hmm, "3.6", u)
    exact_rows = [np.asarray(w.b, dtype=object).dot(hmm.W) * pre, hmm.mu * hmm.pi0, pre, hmm.pi0]
    exact_rows.append(exact_rows[0] - (lam if lam is not None else Fraction(1)) * exact_rows[1])
    exact_rows = [[Fraction(v) for v in r] for r in exact_rows]
    bad_margin = bad_rel = checked = 0
    scale = Fraction(ih.dA * ih.dW) ** t
    for r, seq in enumerate(tokens.tolist()):
        vec = flint.fmpz_mat([[1]] * H)
        for z in reversed(seq):
            vec = ih.backward[z] * vec
        beta = [Fraction(int(vec[h, 0])) / scale for h in range(H)]   # Pr(x | H_0 = h)
        two = Fraction(2) ** int(m["shift_beta0"][r])
        for k, row in enumerate(exact_rows):
            Pk = sum((c * b for c, b in zip(row, beta) if c > 0), Fraction(0)) * two
            Nk = sum((-c * b for c, b in zip(row, beta) if c < 0), Fraction(0)) * two
            checked += 1
            if abs(Fraction(P[r, k] - N[r, k]) - (Pk - Nk)) > Fraction(bound[r, k]):
                bad_margin += 1
            if abs(Fraction(P[r, k]) - Pk) > g * Pk or abs(Fraction(N[r, k]) - Nk) > g * Nk:
                bad_rel += 1
    return bad_margin, bad_rel, checked


@pytest.fixture(scope="module")
def sound_case():
    hmm, w, u, lam, info = _vanilla("3.6", 25, 10, seed=0)
    rng = np.random.default_rng(2)
    near = np.array(sq.adversarial(hmm, 120, 16, rng=rng)[-120:])  # margins ~ 1e-17: near ties
    sampled = np.array(sq.sampled(hmm, 80, 16, rng=rng))
    return hmm, w, u, lam, np.vstack([near, sampled])


def test_bound_exceeds_the_true_error(sound_case):
    hmm, w, u, lam, tokens = sound_case
    bad_margin, bad_rel, checked = _soundness_violations(hmm, w, u, lam, tokens)
    assert checked == 5 * len(tokens) and bad_margin == 0 and bad_rel == 0


def test_a_bound_divided_by_1000_is_caught(sound_case, monkeypatch):
    hmm, w, u, lam, tokens = sound_case
    true_factor = ib.sign_bound_factor
    monkeypatch.setattr(ib, "sign_bound_factor", lambda k: true_factor(k) / 1000)
    bad_margin, _, _ = _soundness_violations(hmm, w, u, lam, tokens)
    assert bad_margin > 0
    # and with it, some near tie gets a wrong "certified" verdict
    seqs = [tuple(r) for r in tokens.tolist()] + [tuple(_vanilla("3.6", 25, 10, seed=0)[4]["tie_sequence"])]
    exact = check_sequences(hmm, "3.6", w.b, u, seqs, lam=lam, keep=True)
    wrong = check_sequences(hmm, "3.6", w.b, u, seqs, mode="certified", lam=lam, keep=True)
    assert any([getattr(e, f) for f in FIELDS] != [getattr(c, f) for f in FIELDS]
               for e, c in zip(exact.decisions, wrong.decisions))


def test_signs_refuse_to_decide_inside_the_bound():
    sign, decided, bound = ib.certified_signs(np.array([1.0, 1.0, 0.0, 2.0]),
                                              np.array([1.0, 1.0 - 2 ** -48, 0.0, 1.0]), 100)
    assert decided.tolist() == [False, False, True, True]          # tie, near tie, exact 0, clear
    assert sign[2] == 0 and sign[3] == 1 and bound[3] > 0


@pytest.mark.parametrize("tid", ["4.3", "4.6", "C.6"])
def test_memory_certified_equals_exact(tid):
    args = types.SimpleNamespace(id=tid, hmm=None, memory=None, cells=None, hidden=None, vocab=10, seed=0,
                                 length=8, samples=700, exhaustive=False, mode="certified", witness=None)
    model, instance = memory_report.load_or_generate(args, tid)
    nondeg = masm.check_all(model, tid)[{"4.3": "4.2", "4.6": "4.5", "C.6": "C.5"}[tid]]
    w = (theorem_43_witness(model, nondeg["S_star"]) if tid == "4.3"
         else theorem_c6_witness(model, nondeg["S_star"], theorem=tid))
    extra = [instance["tie_sequence"]] if instance.get("tie_sequence") else []
    seqs = memory_report.sequence_set(args, model, extra)[0] + sq.exhaustive(model.num_tokens, 3)
    seqs = list(dict.fromkeys(seqs))
    H_star = nondeg["H_star"]
    exact = memory_check.check_sequences(model, w, H_star, seqs, keep=True, evaluate_outside_R=True)
    cert = memory_check.check_sequences(model, w, H_star, seqs, mode="certified", keep=True,
                                        evaluate_outside_R=True)
    for e, c in zip(exact.decisions, cert.decisions):
        assert (e.sequence, e.possible, e.Z, e.expected, e.got, e.attended, e.tie) == \
            (c.sequence, c.possible, c.Z, c.expected, c.got, c.attended, c.tie)
    assert cert.decided_by.get("bound", 0) > 0.9 * len(seqs)
    assert (exact.in_R, exact.agree, exact.ties) == (cert.in_R, cert.agree, cert.ties)


def test_robustness_from_bound_selected_candidates_equals_all_exact(monkeypatch):
    from headprompt.verify.evidence import robustness as rb

    hmm, w, u, lam, info = _vanilla("3.6", 25, 10, seed=0)
    rng = np.random.default_rng(4)
    seqs = list(dict.fromkeys(sq.sampled(hmm, 1500, 16, rng=rng) + sq.adversarial(hmm, 80, 16, rng=rng)
                              + [tuple(info["tie_sequence"])]))
    fast = rb.robustness_block(hmm, "3.6", w.b, u, seqs)
    monkeypatch.setattr(rb, "_candidates", lambda *a: (None, a[4], set()))   # every sequence exact
    slow = rb.robustness_block(hmm, "3.6", w.b, u, seqs)
    assert fast.pop("counted_sequences") == slow.pop("counted_sequences") == len(seqs)
    assert fast == slow and fast["zero_margin_sequences"] >= 1


def test_sparse_transition_kernel_equals_the_dense_one(monkeypatch):
    """The sparse product (|H| >= 128, few nonzeros) computes the same messages as the dense
    GEMM, and certified verdicts on such a model equal the exact ones."""
    from headprompt.models.inference import floats as iff
    from headprompt.models.generate.generators import prompt_friendly_hmm
    from headprompt.models.generate.sampling import sample

    hmm, _ = prompt_friendly_hmm(160, 12, rng=np.random.default_rng(3))
    A, W, pi0 = (np.array(x, dtype=float) for x in (hmm.A, hmm.W, hmm.pi0))
    assert np.count_nonzero(A) <= iff.SPARSE_MAX_DENSITY * A.size
    tokens = sample(hmm.to_float(), 64, 7, rng=np.random.default_rng(0))[0]
    idx = np.ascontiguousarray(tokens.T)
    table = np.ascontiguousarray(W)
    sparse = iff.scaled_messages(A, np.ascontiguousarray(A.T), pi0, table, idx)
    monkeypatch.setattr(iff, "SPARSE_MIN_STATES", 10**9)
    dense = iff.scaled_messages(A, np.ascontiguousarray(A.T), pi0, table, idx)
    for key in ("pre", "beta", "alpha", "beta0"):
        np.testing.assert_allclose(sparse[key], dense[key], rtol=1e-12, atol=0)


def test_certified_verdicts_on_a_sparse_large_model_equal_exact_ones(monkeypatch):
    import headprompt
    from headprompt.models.generate.generators import prompt_friendly_hmm
    from headprompt.verify.runtime import paths

    monkeypatch.setattr(paths, "PATH_PREFERENCE", 1e12)      # the dense path's sparse float kernel, both modes
    hmm, _ = prompt_friendly_hmm(160, 12, rng=np.random.default_rng(5))
    reports = {m: headprompt.check(hmm, "3.6", mode=m, samples=150, length=5).to_dict()
               for m in ("exact", "certified")}
    exact, cert = reports["exact"]["sequences"], reports["certified"]["sequences"]
    assert reports["certified"]["verdict"] == reports["exact"]["verdict"] == "verified"
    assert cert["checked"] == exact["checked"] and cert["agree"] == exact["agree"]
    assert reports["certified"]["labels"] == reports["exact"]["labels"]
    assert cert["decided_by"].get("bound", 0) > 0
