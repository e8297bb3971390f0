"""Shared pieces of the float kernels: one BLAS thread, rescaling messages by powers of two,
and the extreme entries of dense or sparse arrays (used by :mod:`.floats` and
:mod:`.forward_backward`, which import them from here so that neither imports the other's
module at load time)."""

from __future__ import annotations

import contextlib

import numpy as np

__all__ = ["single_thread_blas", "positive_min", "largest"]

_CONTROLLER = None


def single_thread_blas():
    """A context in which BLAS runs on one thread (a null context without threadpoolctl)."""
    global _CONTROLLER
    try:
        if _CONTROLLER is None:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER = ThreadpoolController()
        return _CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # pragma: no cover - threadpoolctl missing or unable to act
        return contextlib.nullcontext()


def _rescale(v: np.ndarray, ones: np.ndarray, sums: np.ndarray | None = None) -> np.ndarray:
    """Multiply each row of ``v`` (``[n, H]``, nonnegative, in place) by the power of two
    ``2^-e`` that moves its sum into ``[1/2, 1)`` (so its maximum is in ``[1/(2H), 1)``); zero
    rows stay zero. Exact unless a result is subnormal. Returns ``e`` (``[n]``). The sum is a
    matrix-vector product (a reduction along a short axis is far slower in numpy), or the
    row sums ``sums`` when the caller has them."""
    _, e = np.frexp(v @ ones if sums is None else sums)   # [n]
    v *= np.ldexp(1.0, -e)[:, None]
    return e


_LOW = 2.0 ** -256


def _values(M):
    """The stored values of a dense array or a scipy sparse array (its nonzeros)."""
    return M.data if hasattr(M, "tocsr") else np.asarray(M)


def positive_min(M) -> float:
    """The smallest positive entry of a dense or sparse array (1.0 when there is none)."""
    v = _values(M)
    pos = v[v > 0]
    return float(pos.min()) if pos.size else 1.0


def largest(M) -> float:
    """The largest entry of a dense or sparse array (0.0 for an empty or all-zero one)."""
    v = _values(M)
    return float(max(v.max(initial=0.0), 0.0))
