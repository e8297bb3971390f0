"""The MLM on a CUDA GPU: pretraining (bf16 autocast, fused AdamW, data on the device), the
quality gate, resumable checkpoints, and head and prompt tuning, held to the same properties as
the CPU tests. Skipped without CUDA (``-m cuda`` selects them on a GPU machine)."""

import dataclasses

import numpy as np
import pytest
import torch

from headprompt.models.inference import floats as inference_float
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.mlm.model import (MLM, MLMConfig, PretrainConfig, autocast_context,
                                  masked_predictions, sample_documents)
from headprompt.models.mlm.gate import gate_set, quality
from headprompt.models.mlm.pretrain import PretrainingPaused, pretrain
from headprompt.models.mlm.tuning import ExactBackbone, MLMBackbone, TaskConfig, TuneConfig, make_task, tune

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

GPU = torch.device("cuda")
CONFIG = MLMConfig(num_tokens=10, block_size=48, n_layer=2, n_head=4, n_embd=64, dropout=0.0)
PRETRAIN = PretrainConfig(num_documents=1, document_length=48, mask_rate=0.2, batch_size=64, learning_rate=4e-3,
                          warmup_steps=50, max_steps=600, data="stream", eval_every=100, gate_sequences=256,
                          gate_length=17)


@pytest.fixture(scope="module")
def hmm():
    return appendix_d_hmm(6, 10, rng=np.random.default_rng(11))


@pytest.fixture(scope="module")
def trained(hmm):
    return pretrain(hmm, CONFIG, PRETRAIN, seed=0, device=GPU, progress=False)


def test_autocast_is_bf16_on_cuda_and_predictions_are_fp32():
    model = MLM(CONFIG).to(GPU)
    x = torch.randint(0, 10, (4, 16), device=GPU)
    with autocast_context(GPU):
        assert model(x).dtype == torch.bfloat16
    pred = masked_predictions(model, x, torch.zeros(4, dtype=torch.long))
    assert pred.dtype == torch.float32 and torch.allclose(pred.sum(1), torch.ones(4))


def test_gpu_forward_matches_cpu_in_fp32():
    torch.manual_seed(0)
    model = MLM(CONFIG).eval()
    x = torch.randint(0, 11, (8, 40))
    cpu = model(x)
    gpu = model.to(GPU)(x.to(GPU)).cpu()
    assert torch.allclose(cpu, gpu, atol=1e-4)


def test_gpu_pretraining_learns_and_the_gate_measures_it(hmm, trained):
    model, info = trained
    assert next(model.parameters()).device.type == "cuda"
    assert info["final_loss"] < 0.6 * info["unigram_entropy"], info
    assert info["losses"][-1] < info["losses"][0]
    gate = gate_set(hmm, 256, 17, seed=5)
    before = quality(MLM(CONFIG).to(GPU), gate)
    after = quality(model, gate)
    assert after["tv"] < 0.4 * before["tv"] and after["loss_gap"] < before["loss_gap"], (before, after)
    # the gate's TV against the exact G_i computed independently on the CPU
    tokens = torch.as_tensor(gate.tokens)
    pred = masked_predictions(model, tokens, torch.zeros(len(tokens), dtype=torch.long)).numpy()
    exact = inference_float.conditionals(hmm, gate.tokens)[:, 0]
    assert after["tv_first"] == pytest.approx(0.5 * np.abs(pred - exact).sum(1).mean(), abs=1e-6)


def test_gpu_pretraining_resumes_identically(hmm, tmp_path):
    cfg = dataclasses.replace(PRETRAIN, max_steps=30, eval_every=10, checkpoint_every=10, gate_sequences=32)
    whole, info = pretrain(hmm, CONFIG, cfg, seed=3, device=GPU, progress=False)
    path = tmp_path / "run.partial"
    while True:
        try:
            model, info2 = pretrain(hmm, CONFIG, cfg, seed=3, device=GPU, progress=False, resume_path=path,
                                    time_limit=0.0)
            break
        except PretrainingPaused:
            assert path.exists()
    for a, b in zip(whole.state_dict().values(), model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-5)      # cuBLAS may reorder sums across runs
    assert info2["steps"] == info["steps"]


def test_gpu_head_and_prompt_tuning(hmm, trained):
    model, _ = trained
    backbone = MLMBackbone(model, GPU)
    tokens = sample_documents(hmm, 32, 16, seed=9)
    prompts = backbone.init_prompts(20, torch.Generator().manual_seed(0))
    assert prompts.device.type == "cuda" and prompts.dtype == torch.float32        # prompt tuning in fp32
    with torch.no_grad():
        prompted = backbone.prompted(backbone.prepare(tokens), prompts)
    assert prompted.dtype == torch.float32
    assert not torch.allclose(prompted.cpu(), backbone.mask_outputs(tokens), atol=1e-4)   # a prompt moves the output
    task = make_task(hmm, TaskConfig(length=16, num_train=400, num_val=100, num_test=200), rng=np.random.default_rng(4))
    cfg = TuneConfig(epochs=3)
    for b in (backbone, ExactBackbone(hmm, GPU)):
        for method in ("head", "prompt"):
            acc = tune(b, task, method, cfg, seed=0)
            assert acc["train"] >= task.majority_accuracy("train") - 0.02, (type(b).__name__, method, acc)
