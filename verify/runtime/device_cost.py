"""What the certified float stage costs on a GPU, from shapes alone (issue 38 item 3).

Kept apart from :mod:`.cost` (the host's cost model, which prices every stage of a run and picks
the path): this prices only the stage that ``--device cuda`` moves, the backward kernel and its
contractions (:func:`~headprompt.models.inference.device_messages.backward_contractions`), so
that a benchmark can say what the device takes and what stays on the host (the model's exact
form, its assumptions, the witness and the exact fallback). Rates are assumptions stated here,
not measurements: float64 matrix products on an H200 at about 50 TFLOP/s (its tensor cores' peak
is about 67), a sparse product at the device's memory bandwidth (about 4 TB/s, 16 bytes per
nonzero read), and a fixed 2 s for the copies and the rounding probe.
"""

from __future__ import annotations

__all__ = ["device_kernel_estimate", "DEVICE_FLOPS", "DEVICE_BYTES_PER_SECOND"]

DEVICE_FLOPS = 50e12
DEVICE_BYTES_PER_SECOND = 4e12
_FIXED_SECONDS = 2.0


def device_kernel_estimate(hidden: int, vocab: int, nnz_A: int, nnz_W: int, sequences: int, length: int, *,
                           dense_kernel: bool, batch: int = 4096, table_on_device: bool = True) -> dict:
    """``{"seconds", "device_bytes"}`` of the certified backward kernel for ``sequences`` sequences
    of ``length`` tokens on ``hidden`` states: ``A`` dense (``dense_kernel``: ``8 |H|^2`` bytes,
    ``2 n |H|^2`` flops a step) or as a CSR tensor (``12 nnz(A)`` bytes, read once a step per
    batch), the embedding table dense on the device (``8 |X| |H|``) when ``table_on_device``,
    and about four ``[batch, |H|]`` float64 blocks of messages.

    >>> e = device_kernel_estimate(32768, 10000, 2 ** 30, 4 * 32768, 10200, 8, dense_kernel=True)
    >>> round(e["device_bytes"] / 2 ** 30, 1), e["seconds"] < 10
    (14.4, True)
    """
    if dense_kernel:
        a_bytes = 8 * hidden * hidden
        step = 2.0 * hidden * hidden / DEVICE_FLOPS                  # per sequence
    else:
        a_bytes = 12 * nnz_A + 8 * (hidden + 1)
        step = 16.0 * nnz_A / DEVICE_BYTES_PER_SECOND / max(1, min(batch, sequences))
    table = 8 * vocab * hidden if table_on_device else 0
    messages = 4 * 8 * min(batch, max(sequences, 1)) * hidden
    seconds = _FIXED_SECONDS + step * sequences * length
    return {"seconds": round(seconds, 2), "device_bytes": int(a_bytes + table + messages)}
