"""Numerical search (not a proof): the best prompt and head gradient descent finds on the exact
``Gbar`` (torch backend), for instances where an assumption fails and no construction exists.

The prompt is ``u = sigmoid(theta)`` in ``[0, 1]^|H|``; the head ``b`` in ``R^|X|``; the loss is
the logistic loss of ``b . Gbar_2(u, e(∅), e(x))`` against ``F*(x)`` on sequences sampled from
the HMM. The reported accuracy is on a fresh sample. Head-only tuning (``b . G_1(x')``) is run
beside it for comparison.
"""

from __future__ import annotations

import numpy as np
import torch

from ..models import inference_float as iff
from ..models import inference_torch as it
from ..models.hmm import HMM
from ..models.sampling import sample

__all__ = ["optimize_prompt_and_head"]


def _features(A, W, pi0, tokens: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    emb = W[tokens]                                                   # [n, t, H]
    n, _, H = emb.shape
    filler = torch.ones(n, 1, H, dtype=emb.dtype)
    if u is None:
        return it.gbar(A, W, pi0, torch.cat([filler, emb], 1), 0)    # G_1(x'), [n, X]
    prompt = u.expand(n, 1, H)
    return it.gbar(A, W, pi0, torch.cat([prompt, filler, emb], 1), 1)  # Gbar_2(ehat(x))


def optimize_prompt_and_head(hmm: HMM, *, samples: int = 2000, length: int = 8, steps: int = 300,
                             seed: int = 0) -> dict:
    """Fit (prompt + head) and (head only) by Adam; return train/test accuracies."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    f = hmm.to_float()
    A, W, pi0 = it.hmm_tensors(f)
    results = {}
    data = {}
    for split in ("train", "test"):
        tokens, _ = sample(f, samples, length, rng=rng)
        labels = (iff.posterior_h0(f, tokens) @ np.asarray(f.mu, float) >= 0).astype(float)
        data[split] = (torch.tensor(tokens), torch.tensor(labels))
    for name, with_prompt in (("prompt+head", True), ("head only", False)):
        theta = torch.zeros(f.num_states, dtype=torch.float64, requires_grad=with_prompt)
        b = torch.zeros(f.num_tokens, dtype=torch.float64, requires_grad=True)
        bias_scale = torch.tensor(100.0, dtype=torch.float64)
        params = [b] + ([theta] if with_prompt else [])
        opt = torch.optim.Adam(params, lr=0.5)
        tok, lab = data["train"]
        for _ in range(steps):
            opt.zero_grad()
            g = _features(A, W, pi0, tok, torch.sigmoid(theta) if with_prompt else None)
            margin = bias_scale * (g @ b)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(margin, lab)
            loss.backward()
            opt.step()
        with torch.no_grad():
            acc = {}
            for split, (tk, lb) in data.items():
                g = _features(A, W, pi0, tk, torch.sigmoid(theta) if with_prompt else None)
                acc[split] = float(((g @ b >= 0).double() == lb).double().mean())
        results[name] = {"train_accuracy": acc["train"], "test_accuracy": acc["test"]}
    base = float(max(data["test"][1].mean(), 1 - data["test"][1].mean()))
    return {"kind": "numerical-search", "proof": False,
            "what": f"Adam on the exact Gbar (torch), {samples} train / {samples} test sequences of "
                    f"length {length}, {steps} steps; a search, not a proof",
            "majority_baseline": base, **results}
