"""Small torch pieces of the device kernels: an exact power of two from its bits, a CSR tensor,
and a block without torch's beta and read-only warnings (:mod:`.device_messages` and
:mod:`.device_probe` use them; torch is imported inside each function)."""

from __future__ import annotations

import contextlib

__all__ = ["power_of_two", "sparse_csr", "quiet_torch"]


def power_of_two(k):
    """``2^k`` as float64 built from its bits (exact by construction, unlike a ``pow``), ``k``
    clamped to the normal exponents ``-1022..1023`` (still a power of two: the guard reads the
    rescaled entries, so a clamped factor only leaves a row sum outside ``[1/2, 1)``)."""
    import torch

    return ((k.to(torch.int64).clamp(-1022, 1023) + 1023) << 52).view(torch.float64)


@contextlib.contextmanager
def quiet_torch():
    """A block without torch's "sparse CSR support is in beta" warning (the products used here,
    CSR times dense in float64, are long supported on CPU and CUDA) and its warning that a
    read-only array becomes a tensor (these tensors are only read)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        yield


def sparse_csr(dense):
    """A dense torch matrix as a CSR tensor (without the beta warning)."""
    with quiet_torch():
        return dense.to_sparse_csr()
