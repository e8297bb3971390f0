"""A BERT-style masked language model pretrained on HMM documents (paper Section 5, Appendix D).

The encoder is plain PyTorch in the nanoGPT manner: one :class:`MLMConfig` passed whole into
every module, pre-LayerNorm blocks, bidirectional attention through
``F.scaled_dot_product_attention``, learned position embeddings. Token ids ``0..|X|-1`` are
the HMM's symbols and id ``|X|`` is ``[MASK]``; no padding id is needed, because every
sequence we build (pretraining chunks, downstream inputs) has a fixed length. The output layer
predicts only the ``|X|`` real symbols, so the softmax at a masked position is the network's
estimate of ``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` (SPEC section 1).

Pretraining (:func:`pretrain`) samples documents from the HMM, cuts them into chunks of
``block_size`` tokens, replaces a ``mask_rate`` fraction of positions by ``[MASK]`` (always
``[MASK]``: the 80/10/10 corruption of BERT is left out because only masked positions are read
downstream) and trains with AdamW, linear warmup then linear decay to zero, bf16 autocast on
CUDA only (a null context on CPU). :func:`load_or_pretrain` caches the trained weights on disk
under ``$HEADPROMPT_CACHE`` (default ``~/.cache/headprompt``), keyed by a hash of both configs,
the HMM's parameters and the seed (:func:`cache_key`); the device is not part of the key.

Shapes: ``B`` batch, ``T`` positions, ``C`` width, ``X`` real symbols.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .exceptions import InputError
from .inference_torch import resolve_device

__all__ = ["MLMConfig", "PretrainConfig", "MLM", "resolve_device", "autocast_context", "batch_loss",
           "learning_rate_at", "mask_tokens", "sample_documents", "pretrain", "cache_dir",
           "cache_key", "load_or_pretrain", "masked_predictions", "masked_lm_loss",
           "unigram_entropy"]

CHECKPOINT_FORMAT = 2   # bump when pretraining data or training code changes


@dataclass(frozen=True)
class MLMConfig:
    """Architecture. Defaults are the paper's BERT-base with 6 layers (Appendix D)."""

    num_tokens: int = 10      # |X|; [MASK] gets id num_tokens
    block_size: int = 512     # longest input, prompts included
    n_layer: int = 6
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.1

    @property
    def vocab_size(self) -> int:
        return self.num_tokens + 1

    @property
    def mask_id(self) -> int:
        return self.num_tokens


@dataclass(frozen=True)
class PretrainConfig:
    """Pretraining data and optimisation. Defaults are the paper's (Appendix D): 5000 documents
    of 10240 tokens, chunks of ``block_size``, 5% masking, batch 8, lr 1e-5, 500 warmup steps,
    3 epochs. ``max_steps`` (if set) stops early, with the schedule fitted to it."""

    num_documents: int = 5000
    document_length: int = 10240
    mask_rate: float = 0.05
    batch_size: int = 8
    learning_rate: float = 1e-5
    warmup_steps: int = 500
    epochs: int = 3
    weight_decay: float = 0.01
    max_steps: int | None = None


class SelfAttention(nn.Module):
    def __init__(self, config: MLMConfig):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head, self.dropout = config.n_head, config.dropout
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # (B, T, C) -> (B, nh, T, hs)
        q, k, v = (z.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=False)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, nh, T, hs) -> (B, T, C)
        return self.resid_dropout(self.proj(y))


class Block(nn.Module):
    def __init__(self, config: MLMConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = SelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd), nn.Dropout(config.dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class MLM(nn.Module):
    """Bidirectional encoder; ``forward`` gives logits over the ``|X|`` real symbols."""

    def __init__(self, config: MLMConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.num_tokens)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self, non_embedding: bool = True) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n - self.wpe.weight.numel() if non_embedding else n

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Token embeddings (no positions): ``[B, T]`` -> ``[B, T, C]``."""
        return self.wte(tokens)

    def forward(self, tokens: torch.Tensor | None = None, *,
                inputs_embeds: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``[B, T, X]`` from token ids ``[B, T]`` or from input embeddings
        ``[B, T, C]`` (prompt tuning prepends vectors there); positions ``0..T-1`` are added."""
        if (tokens is None) == (inputs_embeds is None):
            raise InputError("MLM.forward: give exactly one of tokens or inputs_embeds")
        x = self.embed(tokens) if inputs_embeds is None else inputs_embeds  # [B, T, C]
        T = x.shape[1]
        if T > self.config.block_size:
            raise InputError(f"MLM: input of {T} positions exceeds block_size {self.config.block_size}")
        pos = torch.arange(T, device=x.device)
        x = self.drop(x + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def autocast_context(device: torch.device):
    """bf16 autocast on CUDA; a null context elsewhere (CPU runs in fp32)."""
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def learning_rate_at(step: int, total_steps: int, warmup_steps: int, peak: float) -> float:
    """Linear warmup from 0 to ``peak`` over ``warmup_steps``, then linear decay to 0 at
    ``total_steps`` (``step`` is 0-based). A warmup longer than half the run is cut to a tenth
    of it, so short runs still decay."""
    warmup = warmup_steps if 2 * warmup_steps <= total_steps else max(1, total_steps // 10)
    if warmup > 0 and step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total_steps - step) / max(1, total_steps - warmup))


def mask_tokens(tokens: torch.Tensor, mask_rate: float, mask_id: int,
                generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Replace a random ``mask_rate`` fraction of ``tokens`` ``[B, T]`` by ``mask_id``; every row
    gets at least one mask. Returns ``(inputs [B, T], targets [B, T])`` with targets ``-100``
    at unmasked positions (ignored by the loss)."""
    B, T = tokens.shape
    rand = torch.rand(B, T, generator=generator, device=tokens.device)
    masked = rand < mask_rate
    forced = torch.zeros_like(masked)
    forced[torch.arange(B, device=tokens.device), rand.argmin(dim=1)] = True
    masked |= forced & ~masked.any(dim=1, keepdim=True)
    inputs = torch.where(masked, torch.full_like(tokens, mask_id), tokens)
    targets = torch.where(masked, tokens, torch.full_like(tokens, -100))
    return inputs, targets


def sample_documents(hmm, num_documents: int, length: int, *, seed: int) -> np.ndarray:
    """``num_documents`` token documents ``[n, length]`` sampled from ``hmm`` (vanilla or memory),
    in blocks of about a million tokens so the sampler's work arrays stay small at paper scale."""
    from .sampling import sample

    per_block = max(1, 2**20 // length)
    blocks = [sample(hmm, min(per_block, num_documents - start), length,
                     rng=np.random.default_rng([seed, 0x9E7, start]))[0]
              for start in range(0, num_documents, per_block)]
    return np.concatenate(blocks).astype(np.int64)


def unigram_entropy(tokens: np.ndarray, num_tokens: int) -> float:
    """Entropy (nats) of the empirical symbol distribution of ``tokens``: the loss of the best
    predictor that ignores context."""
    p = np.bincount(np.asarray(tokens).ravel(), minlength=num_tokens) / np.asarray(tokens).size
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def batch_loss(model: MLM, inputs: torch.Tensor, targets: torch.Tensor, *,
               reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of ``model(inputs)`` at the masked positions (``targets != -100``), in
    float32 even under autocast. ``inputs``, ``targets``: ``[B, T]``."""
    with autocast_context(inputs.device):
        logits = model(inputs)                                            # [B, T, X]
    return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1),
                           ignore_index=-100, reduction=reduction)


@torch.no_grad()
def masked_lm_loss(model: MLM, chunks: torch.Tensor, mask_rate: float, *, seed: int,
                   batch_size: int = 64) -> float:
    """Mean cross-entropy (nats) at masked positions of ``chunks`` ``[n, T]``, masks drawn with
    ``seed``; the model is put in eval mode."""
    model.eval()
    device = next(model.parameters()).device
    gen = torch.Generator(device=device).manual_seed(seed)
    total, count = 0.0, 0
    for start in range(0, len(chunks), batch_size):
        inputs, targets = mask_tokens(chunks[start:start + batch_size].to(device), mask_rate,
                                      model.config.mask_id, gen)
        loss = batch_loss(model, inputs, targets, reduction="sum")
        total, count = total + float(loss), count + int((targets != -100).sum())
    return total / max(count, 1)


@torch.no_grad()
def masked_predictions(model: MLM, tokens: torch.Tensor, positions: torch.Tensor, *,
                       batch_size: int = 256) -> torch.Tensor:
    """Softmax ``[n, X]`` at one masked position per row: row ``k`` of ``tokens`` ``[n, T]`` has
    position ``positions[k]`` replaced by ``[MASK]`` and nothing else masked; the model's
    estimate of ``G_i(x)`` (compare with ``inference_float.conditionals``)."""
    model.eval()
    device = next(model.parameters()).device
    outs = []
    for start in range(0, len(tokens), batch_size):
        x = tokens[start:start + batch_size].to(device).clone()
        pos = positions[start:start + batch_size].to(device)
        rows = torch.arange(len(x), device=device)
        x[rows, pos] = model.config.mask_id
        with autocast_context(device):
            logits = model(x)
        outs.append(torch.softmax(logits[rows, pos].float(), dim=-1).cpu())
    return torch.cat(outs)


def pretrain(hmm, model_config: MLMConfig, pretrain_config: PretrainConfig, *, seed: int,
             device: torch.device, progress: bool = True) -> tuple[MLM, dict]:
    """Masked-LM pretraining on documents sampled from ``hmm`` (Appendix D).

    Returns ``(model, info)``; ``info`` holds ``losses`` (mean training loss per tenth of the
    run), ``final_loss`` (held-out masked loss on 64 fresh chunks), ``unigram_entropy``,
    ``steps``, ``tokens_seen``, ``seconds``.

    Raises:
        InputError: ``document_length`` shorter than ``block_size`` or a vocabulary mismatch.
    """
    from tqdm.auto import tqdm

    mc, pc = model_config, pretrain_config
    if hmm.num_tokens != mc.num_tokens:
        raise InputError(f"MLMConfig.num_tokens is {mc.num_tokens} but the HMM has {hmm.num_tokens} symbols")
    if pc.document_length < mc.block_size:
        raise InputError(f"document_length {pc.document_length} is shorter than block_size {mc.block_size}")
    t0 = time.perf_counter()
    docs = sample_documents(hmm, pc.num_documents, pc.document_length, seed=seed)
    per_doc = pc.document_length // mc.block_size
    chunks = torch.from_numpy(docs[:, :per_doc * mc.block_size].reshape(-1, mc.block_size))  # [n*per_doc, block]
    held_out = torch.from_numpy(sample_documents(hmm, 64, mc.block_size, seed=seed + 1_000_003))
    torch.manual_seed(seed)
    model = MLM(mc).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": pc.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=pc.learning_rate, betas=(0.9, 0.999),
                                  fused=device.type == "cuda")
    steps_per_epoch = math.ceil(len(chunks) / pc.batch_size)
    total = pc.epochs * steps_per_epoch if pc.max_steps is None else min(pc.max_steps, pc.epochs * steps_per_epoch)
    gen = torch.Generator().manual_seed(seed)
    mask_gen = torch.Generator(device=device).manual_seed(seed + 1)
    losses, window, step = [], [], 0
    bar = tqdm(total=total, desc=f"pretrain |H|={hmm.num_states}", disable=None if progress else True, leave=False)
    model.train()
    while step < total:
        order = torch.randperm(len(chunks), generator=gen)
        for start in range(0, len(chunks), pc.batch_size):
            if step >= total:
                break
            batch = chunks[order[start:start + pc.batch_size]].to(device, non_blocking=True)
            inputs, targets = mask_tokens(batch, pc.mask_rate, mc.mask_id, mask_gen)
            for group in optimizer.param_groups:
                group["lr"] = learning_rate_at(step, total, pc.warmup_steps, pc.learning_rate)
            loss = batch_loss(model, inputs, targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            window.append(loss.item())
            step += 1
            if step % max(1, total // 10) == 0 or step == total:
                losses.append(float(np.mean(window)))
                window = []
                bar.set_postfix(loss=f"{losses[-1]:.3f}")
            bar.update(1)
    bar.close()
    info = {"losses": losses, "steps": step, "tokens_seen": step * pc.batch_size * mc.block_size,
            "final_loss": masked_lm_loss(model, held_out, pc.mask_rate, seed=seed + 2),
            "unigram_entropy": unigram_entropy(docs, mc.num_tokens),
            "seconds": time.perf_counter() - t0}
    model.eval()
    return model, info


def cache_dir() -> Path:
    """``$HEADPROMPT_CACHE`` if set, else ``~/.cache/headprompt``."""
    return Path(os.environ.get("HEADPROMPT_CACHE") or Path.home() / ".cache" / "headprompt")


def _fingerprint(hmm) -> dict:
    """Type name plus a sha256 of every array (as float64) and every scalar field."""
    out = {"type": type(hmm).__name__}
    for f in dataclasses.fields(hmm):
        if f.name.startswith("_"):
            continue
        value = getattr(hmm, f.name)
        if isinstance(value, np.ndarray):
            arr = np.ascontiguousarray(np.asarray(value, dtype=float))
            out[f.name] = [list(arr.shape), hashlib.sha256(arr.tobytes()).hexdigest()]
        else:
            out[f.name] = value if value is None or isinstance(value, (int, float, str)) else repr(value)
    return out


def cache_key(hmm, model_config: MLMConfig, pretrain_config: PretrainConfig, seed: int) -> str:
    """A 20-hex-digit key from both configs, the HMM's parameters and the seed."""
    blob = json.dumps({"format": CHECKPOINT_FORMAT, "model": dataclasses.asdict(model_config),
                       "pretrain": dataclasses.asdict(pretrain_config), "seed": int(seed),
                       "hmm": _fingerprint(hmm.to_float())}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def load_or_pretrain(hmm, model_config: MLMConfig, pretrain_config: PretrainConfig, *, seed: int,
                     device: torch.device, directory: Path | None = None,
                     progress: bool = True) -> tuple[MLM, dict]:
    """The pretrained model for these settings, from the disk cache when present.

    ``info`` is :func:`pretrain`'s plus ``cached`` (bool) and ``path``. The checkpoint stores
    both configs, the seed, the weights and the info; a corrupt file is retrained over.
    """
    directory = cache_dir() if directory is None else Path(directory)
    path = directory / f"mlm-{cache_key(hmm, model_config, pretrain_config, seed)}.pt"
    if path.exists():
        try:
            ckpt = torch.load(path, map_location=device, weights_only=True)
            model = MLM(MLMConfig(**ckpt["model_config"])).to(device)
            model.load_state_dict(ckpt["state_dict"])
            model.eval()
            return model, {**ckpt["info"], "cached": True, "path": str(path)}
        except (RuntimeError, KeyError, TypeError, EOFError, ValueError):
            pass
    model, info = pretrain(hmm, model_config, pretrain_config, seed=seed, device=device, progress=progress)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save({"format": CHECKPOINT_FORMAT, "model_config": dataclasses.asdict(model_config),
                "pretrain_config": dataclasses.asdict(pretrain_config), "seed": int(seed),
                "state_dict": model.state_dict(), "info": info}, tmp)
    os.replace(tmp, path)
    return model, {**info, "cached": False, "path": str(path)}
