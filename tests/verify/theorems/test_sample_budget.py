"""A large-path run over a limit is refused before any work with its estimate and the sample
budget that would fit (issue 38 item 4: a 32,768-state model with dense transitions on a 2-core
machine is refused up front when it cannot fit): tested with the limits forced small."""

import pytest

from headprompt import check
from headprompt.models.exceptions import LimitError
from headprompt.verify.reports import scale
from headprompt.verify.runtime import cost
from tests.verify.theorems.test_path_choice import _cliff_hmm, _npz


def _no_work(*_a, **_k):
    raise AssertionError("the instance was read: the refusal came after work")


def test_a_model_over_the_memory_limit_alone_is_refused_before_reading(tmp_path, monkeypatch):
    path = _npz(tmp_path, _cliff_hmm(30))
    monkeypatch.setattr(cost, "_DENSE_ENTRY_RATE", 1.0)            # the large path
    monkeypatch.setattr(scale, "MAX_LARGE_BYTES", 2 ** 20)         # 1 MiB: less than the model alone
    monkeypatch.setattr(scale, "_load", _no_work)
    with pytest.raises(LimitError) as exc:
        check(path, "3.3", samples=100, length=4)
    msg = str(exc.value)
    assert "GiB (estimate)" in msg and "no sample budget fits" in msg and "\n" not in msg


def test_the_stated_budget_fits_and_one_more_does_not(tmp_path, monkeypatch):
    """(A given file's run is refused once its assumptions hold, as before: only the budget is new.)"""
    from headprompt.models.hmm.npz import npz_counts

    path = _npz(tmp_path, _cliff_hmm(30))
    H, X, nnz_A, nnz_W = npz_counts(path)
    monkeypatch.setattr(cost, "_DENSE_ENTRY_RATE", 1.0)
    monkeypatch.setattr(scale, "MAX_SECONDS", 1.0)               # seconds: some samples fit, not a million
    with pytest.raises(LimitError) as exc:
        check(path, "3.3", samples=10 ** 6, length=4)
    msg = str(exc.value)
    budget = int(msg.split("--samples ")[-1].split(" ")[0])
    assert 0 < budget < 10 ** 6 and "would fit (estimate)" in msg
    # the estimate itself, asked directly: the budget is within the limit and one more is over
    def whole(samples):
        return scale.estimate(H, X, nnz_A, nnz_W, samples + scale.ADVERSARIAL, 4, all_columns=True,
                              three_three=True)["seconds"]
    assert whole(budget) <= 1.0 < whole(budget + 1)
    with pytest.raises(LimitError) as again:
        check(path, "3.3", samples=budget + 1, length=4)
    assert "would take about" in str(again.value)
