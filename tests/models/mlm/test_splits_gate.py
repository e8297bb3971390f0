"""Clean splits (no validation or test sequence occurs in training; oracle: plain Python tuples)
and the downstream gate at position 0 (its bound is mean + z SE, computed here independently,
and covers the true mean TV at about its stated rate)."""

import numpy as np
import pytest
import torch

from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.hmm.values import HMM
from headprompt.models.inference import floats as inference_float
from headprompt.models.mlm.gate import first_position_tv, read_gate
from headprompt.models.mlm.model import MLM, MLMConfig, masked_predictions, sample_documents
from headprompt.models.mlm.splits import distinct_splits, overlap

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_validation_and_test_never_repeat_a_training_sequence():
    hmm = appendix_d_hmm(10, 10, rng=np.random.default_rng(2))      # nearly deterministic: draws repeat
    sizes = {"train": 400, "val": 100, "test": 200}
    tokens, report = distinct_splits(hmm, sizes, 12, rng=np.random.default_rng(0))
    train = {tuple(r) for r in tokens["train"].tolist()}
    for split in ("val", "test"):
        assert len(tokens[split]) == sizes[split] and not report["short"]
        assert not any(tuple(r) in train for r in tokens[split].tolist())
        assert overlap(tokens[split], tokens["train"]) == 0.0
    assert report["test"]["rejected"] > 0                          # independent draws did repeat training
    naive = np.random.default_rng(0)
    from headprompt.models.generate.sampling import sample
    plain = sample(hmm.to_float(), 600, 12, rng=naive)[0]
    brute = np.mean([tuple(r) in {tuple(t) for t in plain[:400].tolist()} for r in plain[400:].tolist()])
    assert overlap(plain[400:], plain[:400]) == pytest.approx(brute) and brute > 0


def test_a_split_that_cannot_be_distinct_comes_out_short_and_says_so():
    one = HMM(np.eye(2)[[1, 0]], np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 0.0]))  # one sequence only
    tokens, report = distinct_splits(one, {"train": 10, "val": 5, "test": 5}, 4, rng=np.random.default_rng(0),
                                     max_rounds=3)
    assert report["short"] and len(tokens["test"]) == 0 and report["test"]["rejected"] == report["test"]["drawn"]


def test_gate_bound_is_mean_plus_z_se_and_covers_the_true_tv():
    hmm = appendix_d_hmm(3, 10, rng=np.random.default_rng(1))
    torch.manual_seed(0)
    mlm = MLM(MLMConfig(num_tokens=10, block_size=8, n_layer=1, n_embd=16, arch="bigru"))
    # the per-sequence TV, recomputed from its definition
    tokens = sample_documents(hmm, 64, 7, seed=[4, 0x6A70])
    exact = inference_float.conditionals(hmm.to_float(), tokens)[:, 0]
    pred = masked_predictions(mlm, torch.as_tensor(tokens), torch.zeros(64, dtype=torch.long)).double().numpy()
    tv = 0.5 * np.abs(pred - exact).sum(-1)
    np.testing.assert_allclose(first_position_tv(mlm, hmm, 64, 7, seed=4), tv, atol=1e-12)
    g = read_gate(mlm, hmm, 64, 7, seed=4, threshold=0.5)
    se = tv.std(ddof=1) / np.sqrt(64)
    assert g["tv0"] == pytest.approx(tv.mean()) and g["bound"] == pytest.approx(tv.mean() + 1.645 * se)
    assert g["passed"] == (g["bound"] <= 0.5)
    truth = first_position_tv(mlm, hmm, 8192, 7, seed=999).mean()
    covered = [read_gate(mlm, hmm, 64, 7, seed=s)["bound"] >= truth for s in range(40)]
    assert sum(covered) >= 34                 # a one-sided 95% bound: about 38 of 40 expected
