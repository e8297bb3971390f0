"""Margins, robustness radius and transfer of a verified vanilla witness, against path sums."""

from __future__ import annotations

import itertools
from fractions import Fraction as Fr
from types import SimpleNamespace

import numpy as np

from headprompt.constructions.vanilla import theorem_33_witness, theorem_36_witness
from headprompt.models.generate.generators import prompt_friendly_hmm, random_exact_hmm
from headprompt.models.hmm.values import HMM
from headprompt.models.hmm.rationalize import rationalize
from headprompt.verify.evidence.robustness import robustness_block, sequence_margins
from tests import oracle


def _read_out(hmm, theorem, u, x):
    """``(b-free) g(x)`` and ``Q(B)`` by path sums: ``G_1((∅, x))`` or ``Gbar_2(u, e(∅), e(x))``."""
    n = hmm.num_states
    emb = ([[1] * n] if theorem == "3.3" else [list(u), [1] * n]) + [list(hmm.W[z]) for z in x]
    i = 0 if theorem == "3.3" else 1
    return oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, emb, i), sum(oracle.path_tau(hmm.A, hmm.pi0, emb, i))


def test_margins_match_path_sums():
    hmm, _ = prompt_friendly_hmm(4, 3, rng=np.random.default_rng(0))
    w = theorem_36_witness(hmm)
    seqs = [list(x) for k in (1, 2) for x in itertools.product(range(3), repeat=k)]
    got = {m.sequence: m for m in sequence_margins(hmm, "3.6", w.b, w.u, seqs)}
    for x in seqs:
        g, event = _read_out(hmm, "3.6", w.u, x)
        prob = oracle.joint_probability(hmm, x)
        if prob == 0:
            assert tuple(x) not in got
            continue
        m = got[tuple(x)]
        assert m.head == sum(b * v for b, v in zip(w.b, g)) and m.read_probability == event
        assert m.probability == prob and m.task == sum(a * p for a, p in zip(hmm.mu, oracle.path_posterior(hmm, x)))
    block = robustness_block(hmm, "3.6", w.b, w.u, seqs)
    l1 = sum(abs(v) for v in w.b)
    assert block["radius"] <= min(abs(m.head) for m in got.values()) / l1
    # the reading names its scope: how many sequences it covers, and that it is not every sequence
    assert f"every one of the {len(got)} counted sequences" in block["what"] and "not every sequence" in block["what"]


def test_transfer_is_sound_for_a_slightly_moved_model():
    """A float copy of an exact model moved by 1e-9: the transfer claims the verdicts carry over,
    and on the learned (float) model, by path sums, head and F* agree with the exact ones."""
    exact = random_exact_hmm(2, 3, rng=np.random.default_rng(3)).with_task([1, -1])
    rng = np.random.default_rng(0)

    def noisy(M):
        M = M + 1e-9 * rng.random(M.shape)
        return M / M.sum(axis=0)

    f = exact.to_float()
    learned = HMM(noisy(f.A), noisy(f.W), noisy(f.pi0[:, None])[:, 0], f.mu)
    r = rationalize(learned, prune_below=0, max_denominator=10**6)
    q = r.model
    w = theorem_33_witness(q)
    seqs = [list(x) for x in itertools.product(range(3), repeat=2)]
    block = robustness_block(q, "3.3", w.b, None, seqs, rationalization=r)
    t = block["transfer"]
    assert t["agreement_carries"] == t["sequences"] == len(seqs)
    ref = SimpleNamespace(**{k: np.vectorize(Fr, otypes=[object])(getattr(learned, k)) for k in ("A", "W", "pi0")},
                          num_states=2, num_tokens=3)
    for k in ("A", "W", "pi0"):
        M = getattr(ref, k)
        setattr(ref, k, M / M.sum(axis=0))
    for x in seqs:
        g, _ = _read_out(ref, "3.3", None, x)
        head = sum(b * v for b, v in zip(w.b, g))
        task = sum(a * p for a, p in zip(q.mu, oracle.path_posterior(ref, x)))
        assert (head >= 0) == (task >= 0)


def test_internal_errors_exit_4_with_one_line(monkeypatch, capsys):
    """A bug (here: an InternalError raised inside the report) exits 4, never 1, on one line."""
    from headprompt.models.exceptions import InternalError
    from headprompt.verify.reports import vanilla as vanilla_report
    from headprompt.verify.cli.main import main

    def broken(*args, **kwargs):
        raise InternalError("fast and direct checks differ on [0, 1]")

    monkeypatch.setattr(vanilla_report, "robustness_block", broken)
    monkeypatch.delenv("HEADPROMPT_DEBUG", raising=False)
    assert main(["theorem", "3.6", "--hidden", "4", "--vocab", "3", "--samples", "20", "--length", "3"]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    # progress lines (stderr is not a terminal here) may come first; the error is one line, the last
    errors = [line for line in err if line.startswith("error:")]
    assert errors == err[-1:] and "internal error" in err[-1] and "HEADPROMPT_DEBUG=1" in err[-1]
