"""Smoothing on a torch device: ``posterior_marginals(..., device="cuda")`` (or ``"auto"``).

The same quantity as :func:`models.inference.floats.posterior_marginals`, ``P[H_i | x]`` for
``i = 1..T``, computed with torch in float64 or float32 on any device: forward messages
``alpha_j = norm(v_j ⊙ A alpha_{j-1})`` and backward ones ``beta_{j-1} = norm(A^T (v_j ⊙ beta_j))``
for the whole batch at once (one ``[n, H] x [H, H]`` GEMM per step and pass), each normalised
to sum 1 after every step as dynamax does (so no message leaves the dtype's range; an all-zero
message, an impossible prefix or suffix, stays zero). Uncertified, as float mode is; the
certified kernels stay on the CPU (:mod:`.bounds`).

Shapes: ``n`` sequences, ``T`` positions, ``H`` hidden states, ``X`` tokens.
"""

from __future__ import annotations

import numpy as np
import torch

from ..hmm.values import HMM
from .float_inputs import float_arrays
from .torch_backend import resolve_device

__all__ = ["smoothed_marginals", "device_marginals"]

_TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def _normalise(v: torch.Tensor) -> torch.Tensor:
    """Rows of ``v`` divided by their sums, in place; all-zero rows stay zero."""
    s = v.sum(dim=-1, keepdim=True)
    return v.div_(torch.where(s > 0, s, torch.ones_like(s)))


def smoothed_marginals(A: torch.Tensor, W: torch.Tensor, pi0: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``P[H_i | x]`` for ``i = 1..T``: ``[n, T, H]``, on the device and in the dtype of ``A``
    (``[H, H]``, column-stochastic), ``W`` (``[X, H]``) and ``pi0`` (``[H]``); ``tokens`` an
    integer tensor ``[n, T]`` on the same device (checked by the caller)."""
    n, t = tokens.shape
    H = A.shape[0]
    AT = A.T.contiguous()                                   # rows x: x @ A^T = (A x^T)^T
    emb = W[tokens.T]                                       # [T, n, H]: v_j for every sequence
    post = torch.empty((t, n, H), dtype=A.dtype, device=A.device)
    a = pi0.expand(n, H)
    for j in range(t):
        a = _normalise(emb[j] * (a @ AT))                   # alpha_j, [n, H]
        post[j] = a
    b = torch.ones((n, H), dtype=A.dtype, device=A.device)
    for j in range(t - 1, -1, -1):
        post[j] *= b                                        # alpha_j ⊙ beta_j
        if j:
            b = _normalise((emb[j] * b) @ A)                # beta_{j-1} = A^T (v_j ⊙ beta_j), as rows
    return _normalise(post).transpose(0, 1)


def device_marginals(hmm: HMM, tokens: np.ndarray, *, dtype: str, device: str) -> np.ndarray | None:
    """:func:`smoothed_marginals` of ``hmm`` on ``device`` (``"cuda"``, ``"auto"`` or
    ``"cpu"``, :func:`.torch_backend.resolve_device`) in ``dtype`` (``"float64"`` or
    ``"float32"``) for checked ``tokens`` ``[n, T]``, returned as a numpy array ``[n, T, H]``;
    ``None`` when the device is the CPU (the numpy kernels run there). The model's tensors are
    cached on the model per device and dtype.

    Raises:
        InputError: an unknown device name, or ``cuda`` on a machine without CUDA.
    """
    dev = resolve_device(device)
    if dev.type == "cpu":
        return None
    tdtype = _TORCH_DTYPES[dtype]

    def tensors():
        A, _, W, pi0 = float_arrays(hmm)
        return tuple(torch.as_tensor(np.asarray(a), device=dev).to(tdtype) for a in (A, W, pi0))

    A, W, pi0 = hmm.memo(f"torch_smoothing:{dev}:{dtype}", tensors)
    with torch.no_grad():
        out = smoothed_marginals(A, W, pi0, torch.as_tensor(tokens, device=dev))
    return out.cpu().numpy()
