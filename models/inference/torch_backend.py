"""Torch inference: ``Gbar_i`` batched, differentiable in the embeddings, on any device.

Same definitions and scaling as :mod:`models.inference_float` (SPEC section 1, eq. B.1); this
is what prompt tuning on the exact model differentiates through. Tensors ``A`` ``[H, H]``,
``W`` ``[X, H]``, ``pi0`` ``[H]`` and embeddings ``emb`` ``[n, t, H]`` must share a device and
dtype; positions are 0-based. All-zero messages stay zero (the paper's zero-norm convention).
"""

from __future__ import annotations

import numpy as np
import torch

from ..exceptions import InputError
from ..hmm.values import HMM

__all__ = ["resolve_device", "hmm_tensors", "tau_normalized", "gbar", "conditionals"]


def resolve_device(name: str = "auto") -> torch.device:
    """``auto`` picks CUDA when present, else CPU.

    Raises:
        InputError: unknown names, or ``cuda`` on a machine without CUDA.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise InputError("device 'cuda': CUDA is not available on this machine; use 'cpu' or 'auto'")
        return torch.device("cuda")
    raise InputError(f"device: expected auto, cpu or cuda, found {name!r}")


def hmm_tensors(hmm: HMM, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float64):
    """``(A, W, pi0)`` of ``hmm`` as tensors on ``device``."""
    f = hmm.to_float()
    return tuple(torch.tensor(np.array(a, dtype=float), dtype=dtype, device=device) for a in (f.A, f.W, f.pi0))


def _normalize(v: torch.Tensor) -> torch.Tensor:
    s = v.sum(dim=-1, keepdim=True)
    return v / torch.where(s > 0, s, torch.ones_like(s))


def tau_normalized(A: torch.Tensor, pi0: torch.Tensor, emb: torch.Tensor, i: int) -> torch.Tensor:
    """``tau_i(v) / ||tau_i(v)||_1``: ``[n, H]`` for ``emb`` ``[n, t, H]``."""
    if emb.dim() != 3 or emb.shape[2] != A.shape[0]:
        raise InputError(f"embeddings: expected shape [n, t, {A.shape[0]}], found {tuple(emb.shape)}")
    n, t, H = emb.shape
    if not 0 <= i < t:
        raise InputError(f"position {i} is outside 0..{t - 1}")
    a = pi0.expand(n, H)
    for j in range(i):
        a = _normalize(emb[:, j] * (a @ A.T))     # alpha_j, [n, H]
    pre = _normalize(a @ A.T)                     # prior of H_{i+1} given the evidence before
    b = torch.ones(n, H, dtype=emb.dtype, device=emb.device)
    for j in range(t - 1, i, -1):
        b = _normalize((emb[:, j] * b) @ A)       # A^T (v_j ⊙ b) as row vectors
    return _normalize(pre * b)


def gbar(A: torch.Tensor, W: torch.Tensor, pi0: torch.Tensor, emb: torch.Tensor, position: int) -> torch.Tensor:
    """``Gbar_position(emb)``: ``[n, X]``, differentiable with respect to ``emb``."""
    return tau_normalized(A, pi0, emb, position) @ W.T


def conditionals(A: torch.Tensor, W: torch.Tensor, pi0: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``G_i(x)`` for every position of token tensors ``[n, T]``: ``[n, T, X]``."""
    emb = W[tokens]                               # [n, T, H]: row x_j of W
    n, t, H = emb.shape
    pres, a = [], pi0.expand(n, H)
    for j in range(t):
        pres.append(_normalize(a @ A.T))
        a = _normalize(emb[:, j] * pres[-1])
    betas, b = [None] * t, torch.ones(n, H, dtype=emb.dtype, device=emb.device)
    for j in range(t - 1, -1, -1):
        betas[j] = b
        b = _normalize((emb[:, j] * b) @ A)
    tau = _normalize(torch.stack(pres, 1) * torch.stack(betas, 1))   # [n, T, H]
    return tau @ W.T
