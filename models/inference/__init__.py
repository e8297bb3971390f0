"""Inference backends for one mathematical object, ``tau_i``/``Gbar_i`` (SPEC section 1).

- :mod:`.exact`: rational arithmetic (the reference);
- :mod:`.floats`: float64, batched over sequences (numpy), with :mod:`.bounds` its a priori
  rounding-error bound (certified mode), and :mod:`.forward_backward` its fused smoothing
  kernel (both passes in one loop, for ``floats.posterior_marginals``);
- :mod:`.torch_backend`: torch, differentiable in the embeddings, any device;
- :mod:`.attention`: the attention head of eq. 4.1-4.2, exactly.
"""
