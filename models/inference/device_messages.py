"""The certified backward kernel on a torch device (a GPU when there is one), with the same bound.

Certified mode decides each sequence from the four contractions ``P = beta0 . r+``,
``N = beta0 . r-`` of its backward message with the rows of :mod:`.bounds` (item 5) and proves
the signs with an a priori bound. :func:`backward_contractions` computes ``(P, N, minpos)`` either
with the numpy kernel (:func:`.floats.scaled_messages`; the default, ``--device cpu``) or with torch
on the device chosen by :func:`use_device` (``--device cuda``, or ``auto`` on a machine with
CUDA). Only ``(P, N, minpos)`` come back to the host; the exact fallback stays on the CPU.

Why the same bound holds on the device (:mod:`.bounds`, items 1-7). The device receives the very
float64 arrays of the :class:`~.bounds.BoundChain` (each entry the correctly rounded rational,
copied bit for bit) and runs the same recursion ``beta_{j-1} = A^T (v_j ⊙ beta_j)`` with the
same rescaling schedule (``every``) and the same underflow record (``minpos``). Each float
operation is IEEE binary64 with round to nearest (CUDA's double precision has no flush-to-zero
or reduced-precision mode; TF32 applies to float32 only), so the standard model (item 1) holds.
The one difference is the order of the sums: cuBLAS and cuSPARSE sum a dot product of length
``H`` in an order they do not state (split-K, tree reductions, FMA). The bound never assumed an
order: item 3 is Higham's eq. 3.4 for *any* summation order, with or without FMA, ``|theta_H| <=
gamma_H`` for ``H`` terms, and every dot product here has at most ``H`` terms (a sparse product
skips zero terms only). Rescaling multiplies by powers of two (exact); the power chosen from a
row sum summed in any order only moves the row sum near ``[1/2, 1)``, and the guard reads the
rescaled entries themselves. So the counters of :func:`.bounds.backward_count` are unchanged.

Two things could break the model, and both are refused rather than assumed away: cuBLAS's
opt-in emulated float64 (environment variables ``CUBLAS_EMULAT*``: fixed-point slices, not one
rounding per operation), and a device whose arithmetic is not what it claims. :func:`use_device`
runs :func:`.device_probe.rounding_probe` once per device and process: bit-exact products and
power-of-two scalings against the host's IEEE arithmetic, and dot products within ``gamma_n``
of the exact sum on a vector built so that the worst order loses ``(n - 1) u``.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InputError
from . import floats as iff
from .device_tensors import power_of_two, quiet_torch

__all__ = ["KernelDevice", "use_device", "current_device", "backward_contractions", "device_label",
           "refuse_emulated_float64", "TABLE_DEVICE_BYTES", "DEVICE_BATCH"]

TABLE_DEVICE_BYTES = 4 * 2 ** 30
"""An embedding table up to this size is copied to the device densely (rows gathered there);
a larger one is gathered on the host, step by step, and copied as ``[batch, H]`` blocks."""

DEVICE_BATCH = 4096
"""Sequences per device call in the large path (messages ``[4096, |H|]``: 1 GiB at 32,768 states)."""


@dataclass
class KernelDevice:
    """The torch device that the certified float kernels run on during a :func:`use_device` block,
    with the arrays already copied there (keyed by the host array, which is kept alive) and the
    number of kernel calls made (a report names the device only where a kernel ran on it)."""

    torch_device: object
    label: str
    calls: int = 0
    _arrays: dict = field(default_factory=dict, repr=False)

    def tensor(self, array, *, sparse_transpose: bool = False):
        """``array`` (numpy, or scipy sparse) on the device as float64, copied once per block.
        ``sparse_transpose``: the CSR tensor of ``array.T`` (``array`` a scipy sparse matrix)."""
        import torch

        key = (id(array), sparse_transpose)
        hit = self._arrays.get(key)
        if hit is not None:
            return hit[1]
        dev = self.torch_device
        with quiet_torch():
            if sparse_transpose:
                csr = array.T.tocsr()                   # a CSC matrix's transpose: the same arrays
                out = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                              torch.from_numpy(csr.indices.astype(np.int64)),
                                              torch.from_numpy(np.asarray(csr.data, dtype=np.float64)),
                                              size=csr.shape, dtype=torch.float64,
                                              check_invariants=True).to(dev)   # checked on the host
            elif hasattr(array, "tocsr"):
                out = torch.from_numpy(np.ascontiguousarray(array.toarray(), dtype=np.float64)).to(dev)
            else:
                out = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64)).to(dev)
        self._arrays[key] = (array, out)                # the host array kept: its id stays unique
        return out


_CURRENT: contextvars.ContextVar[KernelDevice | None] = contextvars.ContextVar("headprompt_kernel_device",
                                                                                default=None)


def current_device() -> KernelDevice | None:
    """The device of the enclosing :func:`use_device` block (None: the numpy kernels)."""
    return _CURRENT.get()


def refuse_emulated_float64() -> None:
    """Refuse a process in which cuBLAS may emulate float64 (``CUBLAS_EMULAT*`` set): the a priori
    bound assumes one IEEE rounding per operation.

    Raises:
        InputError: naming the variable."""
    for name in sorted(os.environ):
        if name.upper().startswith("CUBLAS_EMULAT") and os.environ[name].strip() not in ("", "0"):
            raise InputError(f"device: {name}={os.environ[name]!r} lets cuBLAS emulate float64, which the certified "
                             "bound does not model (one IEEE rounding per operation); unset it or use device 'cpu'")


def device_label(torch_device) -> str:
    """``"cuda:0 (NVIDIA H200)"``, or ``"cpu (torch)"``."""
    import torch

    if torch_device.type == "cuda":
        index = torch_device.index if torch_device.index is not None else torch.cuda.current_device()
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return f"{torch_device.type} (torch)"


@contextlib.contextmanager
def use_device(device):
    """Run the certified float kernels of the block on ``device``: ``"cuda"``, ``"auto"`` (CUDA when
    present, else the numpy kernels), ``"cpu"`` (the numpy kernels: the block changes nothing), or
    a ``torch.device`` (tests run the torch kernel on ``torch.device("cpu")``). Yields the
    :class:`KernelDevice`, or None for the numpy kernels.

    Raises:
        InputError: an unknown name, ``cuda`` without CUDA (one line, before any work), cuBLAS's
            float64 emulation switched on, or a device that fails the rounding probe.
    """
    if isinstance(device, str) and device == "cpu":
        yield _CURRENT.get()
        return
    if isinstance(device, str) and device not in ("auto", "cuda"):
        raise InputError(f"device: expected auto, cpu or cuda, found {device!r}")
    import torch

    from .device_probe import rounding_probe
    from .torch_backend import resolve_device

    dev = resolve_device(device) if isinstance(device, str) else torch.device(device)
    if isinstance(device, str) and dev.type == "cpu":      # auto without CUDA: the numpy kernels
        yield _CURRENT.get()
        return
    if dev.type == "cuda":
        refuse_emulated_float64()
    rounding_probe(dev)
    token = _CURRENT.set(KernelDevice(dev, device_label(dev)))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


def _host_gather(table):
    """``take(rows) -> [n, H]`` float64 host rows of a dense or CSR table."""
    if hasattr(table, "tocsr"):
        csr = table.tocsr()
        return lambda rows: csr[rows].toarray()
    return lambda rows: np.take(table, rows, axis=0)


def backward_contractions(chain, idx: np.ndarray, pos: np.ndarray, neg: np.ndarray, *, track: bool,
                          device: KernelDevice | None = None) -> dict:
    """``{"P", "N", "minpos", "shift"}`` of a batch: ``P = beta0 @ pos``, ``N = beta0 @ neg`` (``[n, K]``,
    nonnegative), ``beta0 = A^T (v_0 ⊙ beta_0)`` the backward message of each column of ``idx``
    (``[t, n]``, time-major rows of ``chain.W``) rescaled by powers of two every ``chain.every``
    steps, and with ``track`` ``minpos`` (``[n]``), the smallest positive rescaled entry (the
    underflow guard, ``inf`` where none), and ``shift`` (``[n]`` int), the total exponent
    applied (``beta0 = 2^shift`` times the message without rescaling); both None without ``track``.

    ``device`` (default: :func:`current_device`) None runs :func:`.floats.scaled_messages` on the
    host; a :class:`KernelDevice` the same recursion in torch there (module docstring). Both are
    held to :func:`.bounds.certified_signs` with the same count."""
    device = current_device() if device is None else device
    if device is None:
        m = iff.scaled_messages(chain.A, chain.AT, chain.pi0, chain.W, idx, forward=False, store=False,
                                track=track, every=chain.every)
        beta0 = m["beta0"]
        return {"P": beta0 @ pos, "N": beta0 @ neg, "minpos": m["minpos"] if track else None,
                "shift": m["shift_beta0"] if track else None}
    return _torch_contractions(device, chain, idx, pos, neg, track)


def _torch_contractions(device: KernelDevice, chain, idx, pos, neg, track) -> dict:
    import torch

    device.calls += 1
    dev = device.torch_device
    t, n = idx.shape
    H = chain.A.shape[0]
    every = chain.every
    sparse_A = hasattr(chain.A, "tocsr")
    A = device.tensor(chain.A, sparse_transpose=sparse_A)      # dense [H, H], or CSR of A^T
    table_bytes = 8 * chain.W.shape[0] * chain.W.shape[1]
    on_device = table_bytes <= TABLE_DEVICE_BYTES
    table = device.tensor(chain.W) if on_device else None
    gather = None if on_device else _host_gather(chain.W)
    rows = torch.from_numpy(np.ascontiguousarray(idx, dtype=np.int64)).to(dev)
    pos_t = device.tensor(pos)
    neg_t = device.tensor(neg)
    b = torch.ones((n, H), dtype=torch.float64, device=dev)
    minpos = torch.full((n,), math.inf, dtype=torch.float64, device=dev)
    shift = torch.zeros(n, dtype=torch.int64, device=dev)
    grows = iff.largest(chain.W) > 1.0
    low = 2.0 ** -256
    for step, j in enumerate(range(t - 1, -1, -1)):
        v = table.index_select(0, rows[j]) if on_device else torch.from_numpy(gather(idx[j])).to(dev)
        y = v * b                                                  # v_j ⊙ beta_j: one rounding each
        if sparse_A:
            b = torch.sparse.mm(A, y.T.contiguous()).T.contiguous()   # (A^T y^T)^T over the nonzeros
        else:
            b = y @ A                                              # rows of A^T (v_j ⊙ beta_j): H terms each
        if (step + 1) % every and step != t - 1:
            continue
        sums = b.sum(dim=1)
        if not track and step != t - 1:
            if not bool((sums.min() < low) | (grows & (sums.max() > 1.0 / low))):
                continue
        k = (-torch.frexp(sums).exponent.to(torch.int64)).clamp(-1022, 1023)   # a zero row: 0, factor 1
        b = b * power_of_two(k)[:, None]                          # exact: a power of two
        if track:
            shift += k
            m = torch.where(b > 0, b, torch.full_like(b, math.inf)).amin(dim=1)
            minpos = torch.minimum(minpos, m)
    P = (b @ pos_t).cpu().numpy()
    N = (b @ neg_t).cpu().numpy()
    return {"P": P, "N": N, "minpos": minpos.cpu().numpy() if track else None,
            "shift": shift.cpu().numpy() if track else None}
