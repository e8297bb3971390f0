"""A rounding probe of a torch device's float64 arithmetic, run before its results back a proof.

The certified bound (:mod:`.bounds`) rests on the standard model: one IEEE binary64 rounding to
nearest per operation, and a sum of ``n`` nonnegative products within ``gamma_n`` of the exact sum
in *any* order. :func:`probe_failures` tests exactly those properties on the device, against the
host's IEEE arithmetic and exact rationals:

1. elementwise products of 4,096 random pairs are bit-identical to the host's (correctly rounded);
2. the kernel's power-of-two rescaling is bit-identical to ``numpy.ldexp``;
3. dot products through the device's GEMM (and its sparse product) of an adversarial vector
   ``[1, u, ..., u]`` (``n = 4,097``; summed left to right it loses every ``u``: error
   ``(n - 1) u``, the worst order's) and of its reverse, and a random nonnegative ``64 x 64``
   product, are within ``gamma_n`` of the exact sums (:func:`within_gamma`).

A device that fails is refused (:func:`rounding_probe`): its float results would not carry the
bound. The probe runs once per device and process (a fraction of a second).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..exceptions import InputError
from .bounds import UNIT_ROUNDOFF

__all__ = ["rounding_probe", "probe_failures", "within_gamma", "adversarial_vector", "PROBE_LENGTH"]

PROBE_LENGTH = 4097
_PASSED: set[str] = set()


def within_gamma(computed: float, exact: Fraction, count: int) -> bool:
    """Whether ``|computed - exact| <= gamma_count * exact`` (exactly, in rationals), for a
    nonnegative ``exact`` (Higham eq. 3.4: a sum of ``count`` nonnegative products)."""
    g = Fraction(count, 2 ** 53 - count)
    return abs(Fraction(computed) - exact) <= g * exact


def adversarial_vector(n: int = PROBE_LENGTH) -> tuple[np.ndarray, Fraction]:
    """``([1, u, ..., u], exact sum)``: ``n`` nonnegative terms whose left-to-right sum rounds every
    ``u`` away (``1 + u`` is a tie, rounded to even: ``1``), so that order has the largest error a
    sum of them can have, ``(n - 1) u`` relative."""
    x = np.full(n, UNIT_ROUNDOFF)
    x[0] = 1.0
    return x, 1 + (n - 1) * Fraction(UNIT_ROUNDOFF)


def probe_failures(device, *, matmul=None, multiply=None, sparse_mm=None) -> list[str]:
    """What of the module docstring's three properties fails on ``device`` (empty: none).
    ``matmul``, ``multiply``, ``sparse_mm`` default to torch's (tests substitute forged ones)."""
    import torch

    from .device_tensors import power_of_two, sparse_csr

    matmul = matmul or (lambda a, b: a @ b)
    multiply = multiply or (lambda a, b: a * b)
    sparse_mm = sparse_mm or torch.sparse.mm
    out = []
    rng = np.random.default_rng(20261128)
    a = rng.random(4096) * 2.0 ** rng.integers(-60, 60, 4096)
    b = rng.random(4096) * 2.0 ** rng.integers(-60, 60, 4096)
    on = lambda v: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64)).to(device)   # noqa: E731
    got = multiply(on(a), on(b)).cpu().numpy()
    if not np.array_equal(got.view(np.int64), (a * b).view(np.int64)):
        out.append(f"products differ from IEEE round-to-nearest in {int((got != a * b).sum())} of 4096 pairs")
    k = rng.integers(-300, 300, 64)
    scaled = (on(a[:64]) * power_of_two(on(k).to(torch.int64))).cpu().numpy()
    if not np.array_equal(scaled, np.ldexp(a[:64], k)):
        out.append("scaling by a power of two is not exact")
    x, exact = adversarial_vector()
    n = len(x)
    ones = on(np.ones((n, 4)))
    for name, vec in (("forward", x), ("reversed", x[::-1])):
        sums = matmul(on(vec)[None, :], ones).cpu().numpy().ravel()
        if not all(within_gamma(float(s), exact, n) for s in sums):
            out.append(f"a GEMM sum of the adversarial vector ({name}) is {float(sums.max()) - 1:.3e} + 1, outside "
                       f"gamma_{n} of the exact sum")
        csr = sparse_csr(on(vec)[None, :])
        ssum = sparse_mm(csr, ones).cpu().numpy().ravel()
        if not all(within_gamma(float(s), exact, n) for s in ssum):
            out.append(f"a sparse sum of the adversarial vector ({name}) is outside gamma_{n} of the exact sum")
    M = rng.random((64, 64)) * 2.0 ** rng.integers(-20, 20, (64, 64))
    v = rng.random((64, 3))
    prod = matmul(on(M), on(v)).cpu().numpy()
    for i in range(0, 64, 7):
        for c in range(3):
            ex = sum((Fraction(float(M[i, j])) * Fraction(float(v[j, c])) for j in range(64)), Fraction(0))
            if not within_gamma(float(prod[i, c]), ex, 64):
                out.append(f"a random nonnegative GEMM entry ({i}, {c}) is outside gamma_64 of the exact sum")
                return out
    return out


def rounding_probe(device) -> None:
    """Run :func:`probe_failures` once per device and process.

    Raises:
        InputError: the device failed (naming what failed): its float64 results cannot back the
            certified bound."""
    key = str(device)
    if key in _PASSED:
        return
    failed = probe_failures(device)
    if failed:
        raise InputError(f"device {key!r}: its float64 arithmetic failed the rounding probe ({failed[0]}); the "
                         "certified bound would not hold there: use device 'cpu'")
    _PASSED.add(key)
