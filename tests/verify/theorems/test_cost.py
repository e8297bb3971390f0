"""Cost known before it is spent: the exact work estimate accounts for how large the integers
grow, so a valid input that would exhaust memory is refused (exit 2) in seconds, or answered in
certified mode when that is a proof too."""

import json
import time
from fractions import Fraction

import numpy as np

from headprompt.models.hmm.files import save_instance
from headprompt.models.hmm.values import HMM
from headprompt.verify.cli.main import main
from headprompt.verify.runtime.cost import MAX_EXACT_BYTES, exact_bytes, message_bits


def _column(rng, n, bits=40):
    ints = [int(v) for v in rng.integers(1, 2 ** bits, size=n)]
    total = sum(ints)
    return [Fraction(v, total) for v in ints]


def _near_tie_instance(states=30, tokens=8, seed=0):
    """Big denominators (40-bit entries), and states 0 and 1 twins up to 1e-12 with
    mu = (1, -1, 0, ...): mu . P[H_0 | x] is a near-tie on every sequence."""
    rng = np.random.default_rng(seed)
    A = np.array([_column(rng, states) for _ in range(states)], dtype=object).T
    W = np.array([_column(rng, tokens) for _ in range(states)], dtype=object).T
    A[:, 1] = A[:, 0]
    W[:, 1] = W[:, 0]
    eps = Fraction(1, 10 ** 12)
    W[0, 1], W[1, 1] = W[0, 1] + eps, W[1, 1] - eps
    pi0 = [Fraction(1, states)] * states
    mu = [1, -1] + [0] * (states - 2)
    return HMM.create(A.tolist(), W.tolist(), pi0, mu)


def test_message_bits_upper_bound_the_integers_that_appear():
    from headprompt.models.hmm.integer import column, integer_hmm

    hmm = _near_tie_instance(states=6, tokens=3)
    ih = integer_hmm(hmm)
    rng = np.random.default_rng(1)
    for length in (4, 16):
        beta = column([1] * ih.num_states)
        for z in rng.integers(0, 3, size=length):
            beta = ih.step_backward(int(z), beta)
        seen = max(int(beta[r, 0]).bit_length() for r in range(beta.nrows()))
        assert seen <= message_bits(hmm, length) * 1.05


def test_a_memory_blow_up_is_refused_in_seconds(tmp_path, capsys):
    hmm = _near_tie_instance()
    path = tmp_path / "H30_neartie.json"
    save_instance(hmm, path)
    bits = message_bits(hmm, 64)
    assert exact_bytes(10_200, 64, 30, bits) > MAX_EXACT_BYTES
    start = time.perf_counter()
    code = main(["theorem", "3.3", "--hmm", str(path), "--length", "64", "--mode", "exact"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "GiB" in err and "--mode certified" in err and err.count("\n") == 0
    assert time.perf_counter() - start < 60


def test_without_a_mode_the_estimate_picks_certified_and_a_near_tie_batch_is_refused():
    from types import SimpleNamespace

    import pytest

    from headprompt.models.exceptions import LimitError
    from headprompt.verify.runtime.cost import check_fallback, check_work

    hmm = _near_tie_instance()
    args = SimpleNamespace(mode=None, length=64, samples=10_000, exhaustive=False)
    mode, note = check_work(args, hmm)
    assert mode == "certified" and "--mode exact" in note        # the faster proof (exact would blow up too)
    # certified mode redoes near-ties exactly: a batch of every sequence would blow up as well
    with pytest.raises(LimitError, match="GiB"):
        check_fallback(10_000, 64, 30, model=hmm)
    check_fallback(10, 8, 30, model=hmm)                 # a small batch is fine


def test_a_small_run_is_not_refused_by_the_memory_estimate(capsys):
    assert main(["theorem", "3.6", "--hidden", "10", "--vocab", "4", "--length", "16", "--samples", "300",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "exact"
