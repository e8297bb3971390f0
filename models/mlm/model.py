"""A BERT-style masked language model pretrained on HMM documents (paper Section 5, Appendix D).

The encoder is plain PyTorch in the nanoGPT manner: one :class:`MLMConfig` passed whole into
every module, pre-LayerNorm blocks, bidirectional attention through
``F.scaled_dot_product_attention``, learned position embeddings (``MLMConfig.arch="bigru"``
swaps the encoder for a bidirectional GRU, the cpu scale's choice). Token ids ``0..|X|-1`` are
the HMM's symbols and id ``|X|`` is ``[MASK]``; no padding id is needed, because every
sequence we build (pretraining chunks, downstream inputs) has a fixed length. The output layer
predicts only the ``|X|`` real symbols, so the softmax at a masked position is the network's
estimate of ``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` (SPEC section 1).

Pretraining (:func:`headprompt.models.mlm.model.pretrain.pretrain`) either cuts documents sampled from the HMM into chunks of
``block_size`` tokens (Appendix D) or draws fresh sequences for every step (``data="stream"``),
replaces a ``mask_rate`` fraction of positions by ``[MASK]`` (always ``[MASK]``: the 80/10/10
corruption of BERT is left out because only masked positions are read downstream) and trains
with AdamW (fused on CUDA), linear warmup then linear decay to zero over the step budget, bf16
autocast on CUDA only (a null context on CPU), the loss accumulated on the device (no host
synchronisation per step). Every step's batch and masks are a function of ``(seed, step)``, so a
run saved every ``checkpoint_every`` steps (or when its ``time_limit`` runs out) resumes to the
same weights as an uninterrupted run.

The quality gate (:func:`headprompt.models.mlm.model.gate.quality`) compares the model's prediction at a masked position with
the exact ``G_i`` (``inference_float.conditionals``, float64) on held-out sequences: mean total
variation distance and the gap between the two negative log-likelihoods. With ``stop_at_gate``,
pretraining stops once the upper bound (mean + 1.645 SE) of the TV at position 0, where the
downstream heads read, is at most ``stop_tv`` (by default 0.8 ``gate_tv``, a convergence
criterion), measured on one held-out set; the reported figure, held against ``gate_tv``, comes from
a second one. Predictions (:func:`masked_predictions`),
the gate and held-out losses run in fp32 on every device.

:func:`headprompt.models.mlm.model.pretrain.load_or_pretrain` caches the trained weights on disk under ``$HEADPROMPT_CACHE`` (default
``~/.cache/headprompt``), keyed by a hash of both configs, the HMM's parameters and the seed
(the device is not part of the key); a corrupt or foreign checkpoint is
discarded with a warning and retrained.

Shapes: ``B`` batch, ``T`` positions, ``C`` width, ``X`` real symbols.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..exceptions import InputError
from ..inference.torch_backend import resolve_device

__all__ = ["MLMConfig", "PretrainConfig", "MLM", "resolve_device", "autocast_context", "batch_loss",
           "learning_rate_at", "mask_tokens", "sample_documents", "masked_predictions",
           "masked_lm_loss", "unigram_entropy", "check_configs"]

ARCHES = ("transformer", "bigru")
CHECKPOINT_FORMAT = 5   # bump when pretraining data or training code changes


@dataclass(frozen=True)
class MLMConfig:
    """Architecture. Defaults are the paper's BERT-base with 6 layers (Appendix D).

    ``arch="transformer"`` is that encoder; ``arch="bigru"`` is a bidirectional GRU masked LM
    (``n_layer`` layers of ``n_embd`` units per direction, ``n_head`` unused), which learns the
    HMM's conditionals from far fewer tokens, so that the cpu scale passes the quality gate on 2
    cores (README, "Departures from the paper")."""

    num_tokens: int = 10      # |X|; [MASK] gets id num_tokens
    block_size: int = 512     # longest input, prompts included
    n_layer: int = 6
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.1
    arch: str = "transformer"

    @property
    def vocab_size(self) -> int:
        return self.num_tokens + 1

    @property
    def mask_id(self) -> int:
        return self.num_tokens


@dataclass(frozen=True)
class PretrainConfig:
    """Pretraining data, optimisation and the quality gate.

    Defaults are the paper's (Appendix D): 5000 documents of 10240 tokens cut into chunks of
    ``block_size``, 5% masking, batch 8, lr 1e-5, 500 warmup steps, 3 epochs. ``data="stream"``
    draws fresh chunks of ``block_size`` tokens from the HMM for every step instead (each chunk
    starts from ``pi0``, as the downstream inputs do; no sequence is seen twice).

    The step budget is ``epochs`` passes over the documents, cut to ``max_steps`` if set
    (stream: ``max_steps``, else as many tokens as ``epochs`` passes over the documents); the
    learning rate warms up linearly over ``warmup_steps`` and decays linearly to 0 at the
    budget. Every ``eval_every`` steps (0: only at the end) the quality gate
    (:func:`quality`) is measured on ``gate_sequences`` held-out sequences of ``gate_length``
    tokens (default ``block_size``); with ``stop_at_gate`` training stops as soon as the upper
    bound ``mean + 1.645 SE`` of the total-variation distance to the exact ``G_0`` at position 0
    (where the downstream heads read) is at most ``stop_tv`` (default
    ``0.8 * gate_tv``; a convergence criterion), and the reported figure, the one compared with
    ``gate_tv``, is re-measured on a second held-out set. ``min_length`` (default: none) trains
    each step on the first ``L`` tokens of its chunks, ``L`` uniform in
    ``min_length..block_size``: a prefix of a sequence started from ``pi0`` is one, so the
    model also sees inputs as short as the downstream ones.
    ``ema_decay`` (default: none) keeps an exponential moving average of the weights
    (``torch.optim.swa_utils``, updated after every step); the gate checks, the reported gate
    and the returned model are then the average's, which reaches a low TV in far fewer steps
    than the raw weights at a high learning rate (``benchmarks/results/pretrain/README.md``).
    ``checkpoint_every`` steps (0: never) the run is saved so that an interrupted run resumes.
    """

    num_documents: int = 5000
    document_length: int = 10240
    mask_rate: float = 0.05
    batch_size: int = 8
    learning_rate: float = 1e-5
    warmup_steps: int = 500
    epochs: int = 3
    weight_decay: float = 0.01
    max_steps: int | None = None
    data: str = "documents"
    eval_every: int = 0
    stop_at_gate: bool = False
    gate_tv: float = 0.05
    stop_tv: float | None = None
    gate_sequences: int = 256
    gate_length: int | None = None
    checkpoint_every: int = 0
    compile: bool = False
    min_length: int | None = None
    ema_decay: float | None = None

    @property
    def stop_threshold(self) -> float:
        """The TV at which ``stop_at_gate`` stops: ``stop_tv``, by default ``0.8 * gate_tv``
        (a margin, so that a model stopped on one held-out set passes on the other)."""
        return 0.8 * self.gate_tv if self.stop_tv is None else self.stop_tv

    def step_length(self, block_size: int, seed: int, step: int) -> int:
        """The number of positions trained at ``step``: ``block_size``, or with ``min_length``
        a length drawn uniformly from ``min_length..block_size`` as a function of
        ``(seed, step)`` (so resumed runs see the same lengths)."""
        if self.min_length is None or self.min_length >= block_size:
            return block_size
        rng = np.random.default_rng([seed, 0x1E27, step])
        return int(rng.integers(self.min_length, block_size + 1))

    def budget(self, block_size: int) -> int:
        """The step budget (see the class docstring)."""
        if self.data == "stream":
            if self.max_steps is not None:
                return self.max_steps
            full = math.ceil(self.epochs * self.num_documents * self.document_length / (self.batch_size * block_size))
        else:
            per_doc = self.document_length // block_size
            full = self.epochs * math.ceil(self.num_documents * per_doc / self.batch_size)
        return full if self.max_steps is None else min(self.max_steps, full)


def check_configs(model_config: "MLMConfig", pretrain_config: PretrainConfig) -> None:
    """Reject configurations that cannot train, before anything is allocated.

    Raises:
        InputError: a nonpositive size or rate out of range, an unknown data mode, a document
            shorter than a chunk, or an attention width not divisible by the head count.
    """
    mc, pc = model_config, pretrain_config
    for name, v in (("num_tokens", mc.num_tokens), ("block_size", mc.block_size), ("n_layer", mc.n_layer),
                    ("n_head", mc.n_head), ("n_embd", mc.n_embd), ("num_documents", pc.num_documents),
                    ("document_length", pc.document_length), ("batch_size", pc.batch_size),
                    ("epochs", pc.epochs), ("gate_sequences", pc.gate_sequences)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"config: {name} must be a positive integer, found {v!r}")
    if mc.arch not in ARCHES:
        raise InputError(f"config: arch must be one of {', '.join(ARCHES)}, found {mc.arch!r}")
    if mc.arch == "transformer" and mc.n_embd % mc.n_head:
        raise InputError(f"config: n_embd {mc.n_embd} is not divisible by n_head {mc.n_head}")
    if not 0 < pc.mask_rate <= 1:
        raise InputError(f"config: mask_rate must be in (0, 1], found {pc.mask_rate}")
    if not 0 <= mc.dropout < 1:
        raise InputError(f"config: dropout must be in [0, 1), found {mc.dropout}")
    if pc.data not in ("documents", "stream"):
        raise InputError(f"config: data must be 'documents' or 'stream', found {pc.data!r}")
    if pc.document_length < mc.block_size:
        raise InputError(f"config: document_length {pc.document_length} is shorter than block_size {mc.block_size}")
    if pc.max_steps is not None and pc.max_steps < 1:
        raise InputError(f"config: max_steps must be positive, found {pc.max_steps}")
    gl = pc.gate_length or mc.block_size
    if not 2 <= gl <= mc.block_size:
        raise InputError(f"config: gate_length must be in 2..block_size ({mc.block_size}), found {gl}")
    if pc.min_length is not None and not 1 <= pc.min_length <= mc.block_size:
        raise InputError(f"config: min_length must be in 1..block_size ({mc.block_size}), found {pc.min_length}")
    if pc.ema_decay is not None and not (isinstance(pc.ema_decay, (int, float)) and 0 < pc.ema_decay < 1):
        raise InputError(f"config: ema_decay must be in (0, 1), found {pc.ema_decay}")
    for name, v in (("gate_tv", pc.gate_tv), ("stop_tv", pc.stop_tv)):
        if v is not None and not (isinstance(v, (int, float)) and 0 <= v <= 1):
            raise InputError(f"config: {name} must be in [0, 1], found {v}")


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
    """Bidirectional encoder (``config.arch``: a transformer, or a bidirectional GRU);
    ``forward`` gives logits over the ``|X|`` real symbols."""

    def __init__(self, config: MLMConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        if config.arch == "bigru":
            # PyTorch's default initialisation (unit-variance embeddings) is what the GRU trains from
            self.rnn = nn.GRU(config.n_embd, config.n_embd, num_layers=config.n_layer, batch_first=True,
                              bidirectional=True, dropout=config.dropout if config.n_layer > 1 else 0.0)
            self.lm_head = nn.Linear(2 * config.n_embd, config.num_tokens)
            return
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
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
        return n - self.wpe.weight.numel() if non_embedding and hasattr(self, "wpe") else n

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
        if self.config.arch == "bigru":
            y, _ = self.rnn(self.drop(x))                                   # [B, T, 2C]
            return self.lm_head(y)
        pos = torch.arange(T, device=x.device)
        x = self.drop(x + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def autocast_context(device: torch.device, enabled: bool = True):
    """bf16 autocast on CUDA when ``enabled``; a null context elsewhere (CPU runs in fp32)."""
    if enabled and device.type == "cuda":
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


def sample_documents(hmm, num_documents: int, length: int, *, seed) -> np.ndarray:
    """``num_documents`` token documents ``[n, length]`` sampled from ``hmm`` (vanilla or memory),
    in blocks of about a million tokens so the sampler's work arrays stay small at paper scale.
    ``seed`` is an int or a sequence of ints (numpy ``SeedSequence`` entropy)."""
    from ..generate.sampling import sample

    base = list(seed) if isinstance(seed, (list, tuple)) else [seed]
    per_block = max(1, 2**20 // length)
    blocks = [sample(hmm, min(per_block, num_documents - start), length,
                     rng=np.random.default_rng([*base, 0x9E7, start]))[0]
              for start in range(0, num_documents, per_block)]
    return np.concatenate(blocks).astype(np.int64)


def unigram_entropy(tokens: np.ndarray, num_tokens: int) -> float:
    """Entropy (nats) of the empirical symbol distribution of ``tokens``: the loss of the best
    predictor that ignores context."""
    p = np.bincount(np.asarray(tokens).ravel(), minlength=num_tokens) / np.asarray(tokens).size
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def batch_loss(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor, *,
               reduction: str = "mean", autocast: bool = True) -> torch.Tensor:
    """Cross-entropy of ``model(inputs)`` at the masked positions (``targets != -100``), in
    float32 even under (CUDA bf16) autocast. ``inputs``, ``targets``: ``[B, T]``."""
    with autocast_context(inputs.device, autocast):
        logits = model(inputs)                                            # [B, T, X]
    return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1),
                           ignore_index=-100, reduction=reduction)


@torch.no_grad()
def masked_lm_loss(model: MLM, chunks: torch.Tensor, mask_rate: float, *, seed: int,
                   batch_size: int = 64) -> float:
    """Mean cross-entropy (nats, fp32) at masked positions of ``chunks`` ``[n, T]``, masks drawn
    with ``seed``; the model is put in eval mode."""
    model.eval()
    device = next(model.parameters()).device
    gen = torch.Generator(device=device).manual_seed(seed)
    total, count = 0.0, 0
    for start in range(0, len(chunks), batch_size):
        inputs, targets = mask_tokens(chunks[start:start + batch_size].to(device), mask_rate,
                                      model.config.mask_id, gen)
        loss = batch_loss(model, inputs, targets, reduction="sum", autocast=False)
        total, count = total + float(loss), count + int((targets != -100).sum())
    return total / max(count, 1)


@torch.no_grad()
def masked_predictions(model: MLM, tokens: torch.Tensor, positions: torch.Tensor, *,
                       batch_size: int = 256) -> torch.Tensor:
    """Softmax ``[n, X]`` (fp32, no autocast) at one masked position per row: row ``k`` of
    ``tokens`` ``[n, T]`` has position ``positions[k]`` replaced by ``[MASK]`` and nothing else
    masked; the model's estimate of ``G_i(x)`` (compare with ``inference_float.conditionals``).
    Computed at the precision prompt tuning runs in, so head features are never coarser."""
    model.eval()
    device = next(model.parameters()).device
    outs = []
    for start in range(0, len(tokens), batch_size):
        x = tokens[start:start + batch_size].to(device).clone()
        pos = positions[start:start + batch_size].to(device)
        rows = torch.arange(len(x), device=device)
        x[rows, pos] = model.config.mask_id
        logits = model(x)
        outs.append(torch.softmax(logits[rows, pos].float(), dim=-1).cpu())
    return torch.cat(outs)


# --------------------------------------------------------------------------------------------
# Pretraining (resumable)
