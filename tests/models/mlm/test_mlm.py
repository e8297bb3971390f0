"""The MLM: shapes, masking, schedule, devices, the disk cache, and that tiny pretraining learns
(loss well below the unigram entropy; predictions move toward the exact G_i)."""

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from headprompt.models.inference import floats as inference_float
from headprompt.models.exceptions import InputError
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.mlm.model import (MLM, MLMConfig, PretrainConfig, learning_rate_at, mask_tokens,
                                  masked_predictions, resolve_device, sample_documents)
from headprompt.models.mlm.cache import cache_key
from headprompt.models.mlm.pretrain import PretrainingPaused, load_or_pretrain, pretrain
from headprompt.models.mlm.gate import gate_set, quality
from tests import oracle

TINY = MLMConfig(num_tokens=10, block_size=48, n_layer=2, n_head=4, n_embd=64, dropout=0.0)
TINY_PRETRAIN = PretrainConfig(num_documents=96, document_length=960, mask_rate=0.25, batch_size=32,
                               learning_rate=3e-3, warmup_steps=20, epochs=3)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


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


# --- the quality gate, resumable pretraining, bad checkpoints -------------------------------

class _OracleMLM(torch.nn.Module):
    """Logits = log G_i at the masked position by brute-force path sums (tests/oracle.py): a
    perfect masked-LM, built without the package's inference code."""

    def __init__(self, hmm, config):
        super().__init__()
        self.hmm, self.config = hmm, config
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, tokens):
        out = torch.zeros(*tokens.shape, self.config.num_tokens)
        for b, row in enumerate(tokens.tolist()):
            i = row.index(self.config.mask_id)
            seq = [0 if z == self.config.mask_id else z for z in row]
            g = oracle.path_conditional(self.hmm, seq, i)
            out[b, i] = torch.log(torch.tensor([float(v) for v in g], dtype=torch.float64).clamp_min(1e-30)).float()
        return out


def test_gate_passes_the_exact_conditionals_and_rejects_an_undertrained_model():
    from headprompt.models.hmm.values import HMM

    hmm = HMM.create([["3/4", "1/3"], ["1/4", "2/3"]], [["1/2", "1/10"], ["1/4", "3/10"], ["1/4", "3/5"]],
                     ["1/2", "1/2"], exact=True)
    config = MLMConfig(num_tokens=3, block_size=8, n_layer=1, n_head=2, n_embd=16, dropout=0.0)
    gate = gate_set(hmm.to_float(), 40, 5, seed=0)
    perfect = quality(_OracleMLM(hmm, config), gate)
    assert perfect["passed"] and perfect["tv"] < 1e-6 and abs(perfect["loss_gap"]) < 1e-5, perfect
    torch.manual_seed(0)
    untrained = quality(MLM(config), gate)
    assert not untrained["passed"] and untrained["tv"] > 0.05, untrained
    # the reported TV is the mean of 0.5 |p - G|_1, G by path sums
    toks = torch.as_tensor(gate.tokens)
    tvs = []
    for j in range(2):
        pred = masked_predictions(_Uniform(config), toks, torch.as_tensor(gate.positions[:, j]))
        for k, row in enumerate(gate.tokens.tolist()):
            g = [float(v) for v in oracle.path_conditional(hmm, row, int(gate.positions[k, j]))]
            tvs.append(0.5 * sum(abs(p - q) for p, q in zip(pred[k].tolist(), g)))
    uniform = quality(_Uniform(config), gate)
    assert uniform["tv"] == pytest.approx(np.mean(tvs), abs=1e-6)
    # position 0 alone (the first 40 path-sum TVs), with its one-sided 95% upper bound
    first = np.array(tvs[:40])
    assert uniform["tv_first"] == pytest.approx(first.mean(), abs=1e-6)
    se = first.std(ddof=1) / np.sqrt(len(first))
    assert uniform["tv_first_se"] == pytest.approx(se, abs=1e-6)
    assert uniform["tv_first_bound"] == pytest.approx(first.mean() + 1.645 * se, abs=1e-6)
    assert untrained["loss_gap"] > 0


class _Uniform(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, tokens):
        return torch.zeros(*tokens.shape, self.config.num_tokens)


def test_undertrained_pretraining_fails_the_gate_and_records_it(hmm):
    cfg = dataclasses.replace(TINY_PRETRAIN, data="stream", max_steps=5, eval_every=2, stop_at_gate=True,
                              gate_sequences=64, gate_length=17)
    _, info = pretrain(hmm, TINY, cfg, seed=0, device=torch.device("cpu"), progress=False)
    assert info["steps"] == 5 and info["stopped"] == "budget"
    assert not info["gate"]["passed"] and info["gate"]["tv"] > 0.05 and info["gate"]["loss_gap"] > 0.1
    assert [entry[0] for entry in info["gate_history"]] == [2, 4, 5]


def test_pretraining_stops_once_the_gate_passes(hmm):
    cfg = dataclasses.replace(TINY_PRETRAIN, data="stream", max_steps=50, eval_every=10, stop_at_gate=True,
                              gate_tv=0.99, gate_sequences=32, gate_length=9)
    _, info = pretrain(hmm, TINY, cfg, seed=0, device=torch.device("cpu"), progress=False)
    assert info["stopped"] == "gate" and info["steps"] == 10 and info["gate"]["passed"]


def test_pretraining_stops_on_the_position_0_bound_not_the_mixed_mean(hmm):
    """The stop rule reads position 0's upper bound (where the heads read): every check before
    the stop has its bound above the threshold, the stopping one at or below it, and the run
    goes on past a check whose mean over both positions was already under the threshold (where
    the old rule stopped)."""
    cfg = dataclasses.replace(TINY_PRETRAIN, data="stream", max_steps=60, eval_every=5, stop_at_gate=True,
                              gate_tv=0.7, stop_tv=0.635, gate_sequences=48, gate_length=9)
    _, info = pretrain(hmm, TINY, cfg, seed=3, device=torch.device("cpu"), progress=False)
    checks = info["gate_history"][:-1]          # the last entry is the final re-measurement
    assert all(len(c) == 3 for c in info["gate_history"])
    assert info["stopped"] == "gate" and checks[-1][0] == info["steps"] and checks[-1][2] <= 0.635
    assert all(bound > 0.635 for _, _, bound in checks[:-1])
    assert any(mean <= 0.635 < bound for _, mean, bound in checks[:-1])


@pytest.mark.parametrize("ema_decay", [None, 0.9])
def test_pretraining_resumes_bit_identically(hmm, tmp_path, ema_decay):
    """Also with a moving average of the weights, which the checkpoint carries."""
    cfg = dataclasses.replace(TINY_PRETRAIN, data="stream", max_steps=12, batch_size=8, eval_every=5,
                              gate_sequences=16, gate_length=9, checkpoint_every=4, ema_decay=ema_decay)
    cpu = torch.device("cpu")
    whole, info = pretrain(hmm, TINY, cfg, seed=1, device=cpu, progress=False)
    path = tmp_path / "run.partial"
    pieces = 0
    while True:
        try:
            model, info2 = pretrain(hmm, TINY, cfg, seed=1, device=cpu, progress=False, resume_path=path,
                                    time_limit=0.0)
            break
        except PretrainingPaused as exc:
            pieces += 1
            assert path.exists() and exc.step < exc.total
            assert ("ema" in torch.load(path, weights_only=True)) == (ema_decay is not None)
    assert pieces >= 2
    for a, b in zip(whole.state_dict().values(), model.state_dict().values()):
        assert torch.equal(a, b)
    assert info2["gate"] == info["gate"] and info2["gate_history"] == info["gate_history"]


def test_corrupt_and_foreign_checkpoints_are_discarded_with_a_warning(hmm, tmp_path):
    small = dataclasses.replace(TINY_PRETRAIN, data="stream", max_steps=3, gate_sequences=8, gate_length=9)
    cpu = torch.device("cpu")
    _, info = load_or_pretrain(hmm, TINY, small, seed=0, device=cpu, directory=tmp_path, progress=False)
    path = Path(info["path"])
    path.write_bytes(b"not a checkpoint")
    with pytest.warns(UserWarning, match="discarding unusable checkpoint"):
        _, again = load_or_pretrain(hmm, TINY, small, seed=0, device=cpu, directory=tmp_path, progress=False)
    assert not again["cached"]
    _, other = load_or_pretrain(hmm, TINY, small, seed=5, device=cpu, directory=tmp_path, progress=False)
    os.replace(other["path"], path)                         # a valid checkpoint, for other settings
    with pytest.warns(UserWarning, match="foreign"):
        _, third = load_or_pretrain(hmm, TINY, small, seed=0, device=cpu, directory=tmp_path, progress=False)
    assert not third["cached"]
    _, fourth = load_or_pretrain(hmm, TINY, small, seed=0, device=cpu, directory=tmp_path, progress=False)
    assert fourth["cached"]


def test_cache_directory_that_is_a_file_is_bad_input(hmm, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(InputError, match="is a file"):
        load_or_pretrain(hmm, TINY, TINY_PRETRAIN, seed=0, device=torch.device("cpu"), directory=target)


def test_prompt_changes_the_mlm_output(hmm, trained):
    from headprompt.models.mlm.tuning import MLMBackbone

    model, _ = trained
    backbone = MLMBackbone(model, torch.device("cpu"))
    tokens = sample_documents(hmm, 64, 16, seed=9)
    prepared = backbone.prepare(tokens)
    plain = backbone.mask_outputs(tokens)                                        # no prompt
    prompts = backbone.init_prompts(20, torch.Generator().manual_seed(0))
    with torch.no_grad():
        prompted = backbone.prompted(prepared, prompts)
    assert not torch.allclose(prompted, plain, atol=1e-4)
    # a prompt optimised to move the output moves it far (total variation, averaged)
    opt = torch.optim.Adam([prompts], lr=0.05)
    for _ in range(40):
        loss = -(backbone.prompted(prepared, prompts) - plain).abs().sum(1).mean()
        opt.zero_grad()
        loss.backward()
        assert prompts.grad.abs().sum() > 0
        opt.step()
    with torch.no_grad():
        moved = 0.5 * (backbone.prompted(prepared, prompts) - plain).abs().sum(1).mean()
    assert moved > 0.3, float(moved)


def test_bigru_encoder_reads_both_sides_and_prompts_move_it():
    torch.manual_seed(0)
    config = dataclasses.replace(TINY, arch="bigru")
    model = MLM(config).eval()
    tokens = torch.randint(0, config.num_tokens, (2, 12))
    tokens[:, 5] = config.mask_id
    with torch.no_grad():
        logits = model(tokens)
        assert logits.shape == (2, 12, config.num_tokens)
        assert torch.allclose(logits, model(inputs_embeds=model.embed(tokens)), atol=1e-6)
        for pos in (2, 9):                                   # a token on either side changes [MASK]'s output
            other = tokens.clone()
            other[:, pos] = (other[:, pos] + 1) % config.num_tokens
            assert not torch.allclose(model(other)[:, 5], logits[:, 5])
        prompt = torch.randn(2, 3, config.n_embd)            # prepended vectors move the output too
        moved = model(inputs_embeds=torch.cat([prompt, model.embed(tokens)], dim=1))[:, 3 + 5]
        assert not torch.allclose(moved, logits[:, 5])
    with pytest.raises(InputError, match="arch"):
        from headprompt.models.mlm.model import check_configs
        check_configs(dataclasses.replace(TINY, arch="lstm"), PretrainConfig())


def _raw_weights_per_step(hmm, cfg, tmp_path) -> list[dict]:
    """The raw (un-averaged) weights after every step of a run, read from the checkpoint a
    ``time_limit=0`` run writes after each step."""
    path = tmp_path / "raw.partial"
    raw = []
    while True:
        try:
            pretrain(hmm, TINY, cfg, seed=2, device=torch.device("cpu"), progress=False, resume_path=path,
                     time_limit=0.0)
            return raw
        except PretrainingPaused:
            raw.append({k: v.clone() for k, v in torch.load(path, weights_only=True)["state_dict"].items()})


def test_the_weight_average_is_the_moving_average_of_the_raw_weights(hmm, tmp_path):
    """With ``ema_decay`` the returned model is, weight by weight, the average
    ``a_1 = w_1, a_{n+1} = a_n + (1 - d_n) (w_{n+1} - a_n)``, ``d_n = min(decay, (1+n)/(10+n))``, of
    the raw weights after each step; training itself (the raw weights) is unchanged by it."""
    base = dataclasses.replace(TINY_PRETRAIN, data="stream", max_steps=5, batch_size=8, gate_sequences=8,
                               gate_length=9)
    decay = 0.5
    raw = _raw_weights_per_step(hmm, base, tmp_path)          # pauses after steps 1..4; step 5 finishes
    last, _ = pretrain(hmm, TINY, base, seed=2, device=torch.device("cpu"), progress=False)
    raw.append(last.state_dict())
    assert len(raw) == 5
    averaged, _ = pretrain(hmm, TINY, dataclasses.replace(base, ema_decay=decay), seed=2,
                           device=torch.device("cpu"), progress=False)
    expected = dict(raw[0])
    for n, weights in enumerate(raw[1:], start=1):
        d = min(decay, (1 + n) / (10 + n))
        expected = {k: expected[k] + (1 - d) * (weights[k] - expected[k]) for k in expected}
    got = averaged.state_dict()
    for k in expected:
        assert torch.allclose(got[k], expected[k], atol=1e-6), k
    assert not torch.allclose(got["wte.weight"], raw[-1]["wte.weight"])    # an average, not the last weights


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.5, 2, "0.9"])
def test_an_impossible_weight_average_is_refused(bad):
    from headprompt.models.mlm.model import check_configs

    with pytest.raises(InputError, match="ema_decay"):
        check_configs(TINY, dataclasses.replace(TINY_PRETRAIN, ema_decay=bad))
