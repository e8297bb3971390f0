"""The MLM: shapes, masking, schedule, devices, the disk cache, and that tiny pretraining learns
(loss well below the unigram entropy; predictions move toward the exact G_i)."""

import dataclasses

import numpy as np
import pytest
import torch

from headprompt.models import inference_float
from headprompt.models.exceptions import InputError
from headprompt.models.generators import appendix_d_hmm
from headprompt.models.mlm import (MLM, MLMConfig, PretrainConfig, cache_key, learning_rate_at, load_or_pretrain,
                        mask_tokens, masked_predictions, pretrain, resolve_device, sample_documents)

TINY = MLMConfig(num_tokens=10, block_size=48, n_layer=2, n_head=4, n_embd=64, dropout=0.0)
TINY_PRETRAIN = PretrainConfig(num_documents=96, document_length=960, mask_rate=0.25, batch_size=32,
                               learning_rate=3e-3, warmup_steps=20, epochs=3)


@pytest.fixture(scope="module")
def hmm():
    return appendix_d_hmm(6, 10, rng=np.random.default_rng(11))


@pytest.fixture(scope="module")
def trained(hmm):
    return pretrain(hmm, TINY, TINY_PRETRAIN, seed=0, device=torch.device("cpu"), progress=False)


def test_forward_shapes_and_embeds_path():
    torch.manual_seed(0)
    model = MLM(TINY).eval()
    tokens = torch.randint(0, TINY.vocab_size, (3, 20))                    # [B, T]
    logits = model(tokens)
    assert logits.shape == (3, 20, TINY.num_tokens)                          # only real symbols
    assert torch.allclose(logits, model(inputs_embeds=model.embed(tokens)), atol=1e-6)
    with pytest.raises(InputError, match="block_size"):
        model(torch.zeros(1, TINY.block_size + 1, dtype=torch.long))
    with pytest.raises(InputError, match="exactly one"):
        model()


def test_mask_tokens_masks_every_row_and_only_targets_masked():
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 10, (200, 16))
    inputs, targets = mask_tokens(tokens, 0.01, 10, gen)
    masked = inputs == 10
    assert masked.any(dim=1).all()                                           # at least one per row
    assert torch.equal(targets[masked], tokens[masked])
    assert (targets[~masked] == -100).all() and torch.equal(inputs[~masked], tokens[~masked])


def test_learning_rate_schedule_warms_up_and_decays_to_zero():
    lrs = [learning_rate_at(s, 100, 10, 1.0) for s in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(lrs[9:], lrs[10:])) and lrs[-1] == pytest.approx(1 / 90)
    assert learning_rate_at(0, 10, 500, 1.0) == pytest.approx(1.0)          # long warmup is cut


def test_resolve_device():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(InputError, match="device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="CUDA is not available"):
            resolve_device("cuda")


def test_pretraining_beats_unigram_entropy(trained):
    _, info = trained
    assert info["final_loss"] < 0.6 * info["unigram_entropy"], info          # measured 0.51 vs 1.69
    assert info["losses"][-1] < info["losses"][0]


def test_pretraining_moves_predictions_toward_exact_G(hmm, trained):
    model, _ = trained
    tokens = torch.from_numpy(sample_documents(hmm, 300, 33, seed=123))       # [n, 33]
    exact = inference_float.conditionals(hmm, tokens.numpy())                 # [n, 33, X]
    tv = {}
    for name, m in (("init", MLM(TINY)), ("trained", model)):
        for pos in (0, 16):
            pred = masked_predictions(m, tokens, torch.full((len(tokens),), pos)).numpy()
            tv[name, pos] = 0.5 * np.abs(pred - exact[:, pos]).sum(axis=1).mean()
    for pos in (0, 16):
        assert tv["trained", pos] < 0.4 * tv["init", pos], tv                # measured 0.15 vs 0.85


def test_cache_reuses_weights_and_key_tracks_inputs(hmm, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path))
    small = dataclasses.replace(TINY_PRETRAIN, num_documents=4, document_length=96, epochs=1)
    cpu = torch.device("cpu")
    m1, info1 = load_or_pretrain(hmm, TINY, small, seed=3, device=cpu, progress=False)
    m2, info2 = load_or_pretrain(hmm, TINY, small, seed=3, device=cpu, progress=False)
    assert not info1["cached"] and info2["cached"] and info1["path"] == info2["path"]
    assert str(tmp_path) in info1["path"]
    for a, b in zip(m1.state_dict().values(), m2.state_dict().values()):
        assert torch.equal(a, b)
    key = cache_key(hmm, TINY, small, 3)
    other = appendix_d_hmm(6, 10, rng=np.random.default_rng(12))
    assert len({key, cache_key(hmm, TINY, small, 4), cache_key(other, TINY, small, 3),
                cache_key(hmm, dataclasses.replace(TINY, n_layer=1), small, 3),
                cache_key(hmm, TINY, dataclasses.replace(small, mask_rate=0.05), 3)}) == 5
