"""Inference backends for one mathematical object, ``tau_i``/``Gbar_i`` (SPEC section 1).

- :mod:`.exact`: rational arithmetic (the reference);
- :mod:`.floats`: float64, batched over sequences (numpy), with :mod:`.bounds` its a priori
  rounding-error bound (certified mode), and :mod:`.forward_backward` its fused smoothing
  kernel (both passes in one loop, for ``floats.posterior_marginals``);
  :mod:`.float_inputs` holds the kernels' checked inputs (token arrays, cached float arrays);
- :mod:`.float32` (with :mod:`.float32_compiled`, numba kernels when numba is installed): the
  float32 smoothing of ``posterior_marginals(..., dtype="float32")``, uncertified;
- :mod:`.torch_backend`: torch, differentiable in the embeddings, any device;
  :mod:`.torch_smoothing`: the smoothing on a torch device (``posterior_marginals(..., device=)``);
- :mod:`.device_messages` (with :mod:`.device_tensors` and :mod:`.device_probe`): the certified
  backward kernel on a torch device (``--device``), float64, its rounding model probed first;
- :mod:`.attention`: the attention head of eq. 4.1-4.2, exactly.
"""
