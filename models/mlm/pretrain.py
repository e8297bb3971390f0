"""Pretraining a masked LM on HMM documents (Appendix D), resumable, gated, cached.

:func:`pretrain` trains one :class:`~headprompt.models.mlm.model.model.MLM` (the schedule, data and
stopping rule are in :mod:`headprompt.models.mlm.model.model`'s docstring); :func:`load_or_pretrain`
returns the cached weights for the same settings or trains and caches them
(:mod:`headprompt.models.mlm.model.cache`). The gate is :mod:`headprompt.models.mlm.model.gate`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel

from ..exceptions import InputError
from .cache import (CHECKPOINT_FORMAT, cache_dir, cache_key, check_writable_dir, read_checkpoint,
                    write_checkpoint)
from .gate import gate_set, quality
from .model import (MLM, MLMConfig, PretrainConfig, batch_loss, check_configs,
                    learning_rate_at, mask_tokens, masked_lm_loss, sample_documents, unigram_entropy)

__all__ = ["pretrain", "load_or_pretrain", "weight_average", "PretrainingPaused"]


class PretrainingPaused(Exception):
    """Raised when ``time_limit`` ran out: the run was saved at ``path`` and resumes from there."""

    def __init__(self, path: Path, step: int, total: int):
        super().__init__(f"pretraining paused at step {step} of {total}; saved to {path}, rerun to resume")
        self.path, self.step, self.total = path, step, total


_STREAM_BLOCK = 64   # stream mode samples this many steps' chunks at once


class _Batches:
    """The batch of every step as a pure function of ``(seed, step)``, on ``device``, so a
    resumed run sees exactly the data and masks an uninterrupted one would."""

    def __init__(self, hmm, mc: MLMConfig, pc: PretrainConfig, seed: int, device: torch.device):
        self.hmm, self.mc, self.pc, self.seed, self.device = hmm, mc, pc, seed, device
        self.dtype = torch.uint8 if mc.vocab_size <= 255 else torch.int32
        self.block_id, self.block = None, None
        if pc.data == "documents":
            docs = sample_documents(hmm, pc.num_documents, pc.document_length, seed=seed)
            per_doc = pc.document_length // mc.block_size
            chunks = docs[:, :per_doc * mc.block_size].reshape(-1, mc.block_size)   # [n*per_doc, block]
            self.sample_tokens = docs[: max(1, 2**16 // pc.document_length + 1)]
            self.chunks = torch.from_numpy(chunks).to(self.dtype).to(device)
            self.steps_per_epoch = math.ceil(len(chunks) / pc.batch_size)
            self.order_epoch, self.order = None, None
        else:
            self.sample_tokens = self._stream_block(0).cpu().numpy()

    def _stream_block(self, block: int) -> torch.Tensor:
        from ..generate.sampling import sample

        n = _STREAM_BLOCK * self.pc.batch_size
        toks = sample(self.hmm, n, self.mc.block_size, rng=np.random.default_rng([self.seed, 0x57AE, block]))[0]
        return torch.from_numpy(toks).to(self.dtype).to(self.device)

    def __call__(self, step: int) -> torch.Tensor:
        B = self.pc.batch_size
        if self.pc.data == "stream":
            block, k = divmod(step, _STREAM_BLOCK)
            if block != self.block_id:
                self.block_id, self.block = block, self._stream_block(block)
            return self.block[k * B:(k + 1) * B].long()
        epoch, k = divmod(step, self.steps_per_epoch)
        if epoch != self.order_epoch:
            gen = torch.Generator().manual_seed(self.seed * 7919 + epoch)
            self.order_epoch = epoch
            self.order = torch.randperm(len(self.chunks), generator=gen).to(self.device)
        return self.chunks[self.order[k * B:(k + 1) * B]].long()


def weight_average(model: MLM, pc: PretrainConfig) -> AveragedModel | None:
    """The moving average of ``model``'s weights that pretraining keeps (``None`` without
    ``pc.ema_decay``): an ``AveragedModel`` whose decay is ``min(ema_decay, (1 + n) / (10 + n))``
    after ``n`` updates (TensorFlow's ``num_updates`` rule), so that early in training the average
    follows the weights instead of remembering the initialisation."""
    if pc.ema_decay is None:
        return None
    decay = pc.ema_decay

    def avg_fn(averaged: torch.Tensor, current: torch.Tensor, num_averaged) -> torch.Tensor:
        d = min(decay, (1 + int(num_averaged)) / (10 + int(num_averaged)))
        return averaged + (1 - d) * (current - averaged)

    return AveragedModel(model, avg_fn=avg_fn, use_buffers=True)


def _optimizer(model: MLM, pc: PretrainConfig, device: torch.device) -> torch.optim.Optimizer:
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": pc.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=pc.learning_rate, betas=(0.9, 0.999), fused=device.type == "cuda")


def pretrain(hmm, model_config: MLMConfig, pretrain_config: PretrainConfig, *, seed: int,
             device: torch.device, progress: bool = True, resume_path: Path | None = None,
             time_limit: float | None = None) -> tuple[MLM, dict]:
    """Masked-LM pretraining on sequences sampled from ``hmm`` (Appendix D), with the quality
    gate measured against the exact ``G_i``.

    With ``resume_path``, the run is saved there every ``checkpoint_every`` steps and when
    ``time_limit`` seconds have passed (then :class:`PretrainingPaused` is raised), and a
    run saved there before (same configs, HMM and seed) is resumed; the result is the same as
    an uninterrupted run's.

    Returns ``(model, info)``; ``info`` holds ``losses`` (mean training loss per logging
    interval), ``final_loss`` (held-out masked loss at ``mask_rate``), ``unigram_entropy``,
    ``gate`` (:func:`quality` on held-out sequences never used to decide when to stop),
    ``gate_history`` (``[step, tv, tv_first_bound]`` at every check: the mean TV over both
    masked positions and position 0's upper bound, which ``stop_at_gate`` stops on),
    ``stopped`` (``"gate"`` or ``"budget"``),
    ``steps``, ``budget``, ``tokens_seen``, ``seconds`` (this process's training time,
    resumed pieces added).

    Raises:
        InputError: a configuration :func:`check_configs` rejects or a vocabulary mismatch.
        PretrainingPaused: ``time_limit`` ran out (the run is saved).
    """
    from tqdm.auto import tqdm


    mc, pc = model_config, pretrain_config
    check_configs(mc, pc)
    if hmm.num_tokens != mc.num_tokens:
        raise InputError(f"MLMConfig.num_tokens is {mc.num_tokens} but the HMM has {hmm.num_tokens} symbols")
    t0 = time.perf_counter()
    key = cache_key(hmm, mc, pc, seed)
    gate_len = pc.gate_length or mc.block_size
    stop_set = gate_set(hmm, pc.gate_sequences, gate_len, seed=[seed, 1])
    report_set = gate_set(hmm, pc.gate_sequences, gate_len, seed=[seed, 2])
    batches = _Batches(hmm, mc, pc, seed, device)
    total = pc.budget(mc.block_size)
    torch.manual_seed(seed)
    model = MLM(mc).to(device)
    optimizer = _optimizer(model, pc, device)
    ema = weight_average(model, pc)
    evaluated = model if ema is None else ema.module      # the weights the gate reads and that are returned
    state = {"step": 0, "losses": [], "gate_history": [], "seconds": 0.0, "stopped": "budget"}
    if resume_path is not None and Path(resume_path).exists():
        saved = read_checkpoint(Path(resume_path), key, device)
        if saved is not None and "optimizer" in saved and (ema is None or "ema" in saved):
            model.load_state_dict(saved["state_dict"])
            optimizer.load_state_dict(saved["optimizer"])
            if ema is not None:
                ema.load_state_dict(saved["ema"])
            state = saved["state"]
    step_fn = torch.compile(model) if pc.compile else model
    mask_gen = torch.Generator(device=device)
    log_every = max(1, min(total // 10, pc.eval_every or total))
    running = torch.zeros((), device=device)
    run_start = time.perf_counter()

    def save() -> None:
        if resume_path is not None:
            write_checkpoint(Path(resume_path), {
                "format": CHECKPOINT_FORMAT, "key": key, "model_config": dataclasses.asdict(mc),
                "state_dict": model.state_dict(), "optimizer": optimizer.state_dict(),
                **({} if ema is None else {"ema": ema.state_dict()}),
                "state": {**state, "seconds": state["seconds"] + time.perf_counter() - run_start}})

    bar = tqdm(total=total, initial=state["step"], desc=f"pretrain |H|={hmm.num_states}",
               disable=None if progress else True, leave=False)
    model.train()
    step = state["step"]
    while step < total and state["stopped"] != "gate":
        chunk = batches(step)[:, :pc.step_length(mc.block_size, seed, step)]
        inputs, targets = mask_tokens(chunk, pc.mask_rate, mc.mask_id,
                                      mask_gen.manual_seed(seed * 1_000_003 + step))
        for group in optimizer.param_groups:
            group["lr"] = learning_rate_at(step, total, pc.warmup_steps, pc.learning_rate)
        loss = batch_loss(step_fn, inputs, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if ema is not None:
            ema.update_parameters(model)
        running += loss.detach()           # no host sync per step
        step += 1
        bar.update(1)
        if step % log_every == 0 or step == total:
            state["losses"].append(float(running) / (step - (step - 1) // log_every * log_every))
            running.zero_()
            bar.set_postfix(loss=f"{state['losses'][-1]:.3f}")
        if pc.eval_every and step % pc.eval_every == 0 and step < total:
            q = quality(evaluated, stop_set, pc.stop_threshold)
            model.train()
            state["gate_history"].append([step, round(q["tv"], 5), round(q["tv_first_bound"], 5)])
            # stop on what the downstream heads read: position 0's upper bound, not the mean over
            # position 0 and a random position (which let models stop that then failed the
            # position-0 gate of verify.experiments, issue 26)
            if pc.stop_at_gate and q["tv_first_bound"] <= pc.stop_threshold:
                state["stopped"] = "gate"
        state["step"] = step
        if pc.checkpoint_every and step % pc.checkpoint_every == 0 and step < total:
            save()
        if time_limit is not None and time.perf_counter() - t0 > time_limit and step < total \
                and state["stopped"] != "gate":
            save()
            bar.close()
            raise PretrainingPaused(Path(resume_path) if resume_path else Path("."), step, total)
    bar.close()
    model = evaluated
    model.eval()
    gate = quality(model, report_set, pc.gate_tv)
    last = quality(model, stop_set, pc.gate_tv)
    state["gate_history"].append([step, round(last["tv"], 5), round(last["tv_first_bound"], 5)])
    held_out = torch.from_numpy(report_set.tokens)
    info = {"losses": [round(v, 5) for v in state["losses"]], "steps": step, "budget": total,
            "tokens_seen": step * pc.batch_size * mc.block_size,
            "final_loss": masked_lm_loss(model, held_out, pc.mask_rate, seed=seed + 2),
            "unigram_entropy": unigram_entropy(batches.sample_tokens, mc.num_tokens),
            "gate": gate, "gate_history": state["gate_history"], "stopped": state["stopped"],
            "seconds": state["seconds"] + time.perf_counter() - run_start}
    model.eval()
    return model, info


def load_or_pretrain(hmm, model_config: MLMConfig, pretrain_config: PretrainConfig, *, seed: int,
                     device: torch.device, directory: Path | None = None,
                     progress: bool = True, time_limit: float | None = None) -> tuple[MLM, dict]:
    """The pretrained model for these settings, from the disk cache when present.

    ``info`` is :func:`pretrain`'s plus ``cached`` (bool) and ``path``. The checkpoint stores
    the key, both configs, the seed, the weights and the info; a corrupt or foreign file is
    discarded with a warning and the model retrained. An unfinished run (``*.partial``, written
    every ``checkpoint_every`` steps or when ``time_limit`` ran out) is resumed.

    Raises:
        InputError: the cache directory is a file or cannot be written.
        PretrainingPaused: ``time_limit`` ran out (the run is saved and resumes on the next call).
    """
    directory = check_writable_dir(cache_dir() if directory is None else Path(directory), "cache directory")
    key = cache_key(hmm, model_config, pretrain_config, seed)
    path = directory / f"mlm-{key}.pt"
    if path.exists():
        ckpt = read_checkpoint(path, key, device)
        if ckpt is not None:
            try:
                model = MLM(MLMConfig(**ckpt["model_config"])).to(device)
                model.load_state_dict(ckpt["state_dict"])
                model.eval()
                return model, {**ckpt["info"], "cached": True, "path": str(path)}
            except (RuntimeError, KeyError, TypeError, ValueError) as exc:
                warnings.warn(f"discarding unusable checkpoint {path} ({type(exc).__name__}); retraining",
                              stacklevel=2)
    partial = directory / f"mlm-{key}.partial"
    model, info = pretrain(hmm, model_config, pretrain_config, seed=seed, device=device, progress=progress,
                           resume_path=partial, time_limit=time_limit)
    write_checkpoint(path, {"format": CHECKPOINT_FORMAT, "key": key,
                             "model_config": dataclasses.asdict(model_config),
                             "pretrain_config": dataclasses.asdict(pretrain_config), "seed": int(seed),
                             "state_dict": model.state_dict(), "info": info})
    with contextlib.suppress(OSError):
        partial.unlink()
    return model, {**info, "cached": False, "path": str(path)}
