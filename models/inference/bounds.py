"""Rigorous a priori rounding-error bounds for the float message-passing kernel.

Certified mode (SPEC section 2) decides a verdict in float64 and proves it with a bound fixed
before the computation, in the sense of Higham, *Accuracy and Stability of Numerical
Algorithms* (2nd ed.), ch. 2-4. This module states the bound; the checkers in ``verify/`` use it.

Derivation. Let ``u = 2^-53`` (unit roundoff, round to nearest) and ``gamma_k = k u / (1 - k u)``.

1. *Standard model* (Higham 2.2): for normal results ``fl(a op b) = (a op b)(1 + delta)``,
   ``|delta| <= u``; a rational input rounded to the nearest float is ``r (1 + delta)``
   (Python rounds ``int / int`` and ``Fraction -> float`` correctly). Multiplying by a power of
   two is exact (only the exponent changes).
2. *Counters* (Higham Lemma 3.1): a product of ``k`` factors ``(1 + delta_i)^(+-1)`` is
   ``1 + theta_k`` with ``|theta_k| <= gamma_k``, and ``(1 + theta_j)(1 + theta_k) = 1 + theta_(j+k)``.
3. *Sums of nonnegative products* (Higham 3.1, eq. 3.4, any summation order, with or without
   FMA, so any BLAS): ``fl(sum_{i<=n} x_i y_i) = sum x_i y_i (1 + theta_n^(i))``. When every
   term is nonnegative each term's factor is in ``[1 - gamma_n, 1 + gamma_n]``, hence so is the
   whole sum's: the *relative* error does not depend on cancellation, because there is none.
   Because no order is assumed, the same counts hold for a GPU's GEMM, whose order (split-K,
   reduction trees) is unstated: :mod:`.device_messages` runs this kernel there, and
   :mod:`.device_probe` checks a device's arithmetic against this model before it is used.
4. *Messages* (:func:`models.inference_float.scaled_messages`). Every message entry is a sum
   of products of nonnegative inputs (``A``, ``pi0``, embeddings). Per step of the backward
   pass ``beta_{j-1} = A^T (v_j ⊙ beta_j)``: rounding ``v`` (1), the product (1), rounding ``A``
   (1), a dot product of length ``H`` (``H``); so every entry of the computed ``beta_j`` is the
   exact message times ``2^s (1 + theta)`` with ``|theta| <= gamma_k``,
   ``k = (t - 1 - j)(H + 3)`` (:func:`backward_count`); ``2^s`` is the exact rescaling. The
   forward pass (``pi0`` rounded: 1; ``pre_j = A alpha_{j-1}``: ``H + 1``; ``alpha_j = v_j ⊙
   pre_j``: 2) gives :func:`forward_count`. ``tau_i = pre_i ⊙ beta_i`` adds 1.
5. *Signed results*. A functional ``r`` (a margin's ``mu ⊙ P[H_0]`` or ``W^T b ⊙ pre``, a head's
   value row) is split exactly into ``r+ - r-`` with ``r+, r- >= 0``; ``P = r+ . m`` and
   ``N = r- . m`` are nonnegative sums (count ``k + 1 + H``) and the margin is ``P - N``. With
   ``Phat = P (1 + theta)``, ``Nhat = N (1 + theta')``::

       |fl(Phat - Nhat) - (P - N)| <= (u + gamma_k / (1 - gamma_k)) (Phat + Nhat)

   :func:`certified_signs` evaluates the right side with a factor ``(1 - u)^-2`` more (it is
   itself computed in float) and certifies ``sign(P - N)`` when ``|fl(Phat - Nhat)|`` exceeds it.
   Ratios (``Gbar``-normalised scores and values) add the two counts plus one
   (``fl(a / b)``); a sum of ``m`` nonnegative ratios adds ``m``.
6. *Zeros are exact*. Without underflow a sum of nonnegative products is 0 exactly when every
   term is, so a computed 0 is an exact 0 (an impossible sequence, a zero norm, a position in
   ``R``, ``mu . p = 0`` with both parts 0) and a computed positive is an exact positive.
7. *Underflow* breaks the relative model (subnormals have absolute error). Every message is
   rescaled by a power of two to a row sum in ``[1/2, 1)`` every ``k`` steps and the
   kernel records each sequence's smallest positive rescaled entry; a step shrinks a positive
   entry by at most ``a w`` (smallest positive ``A`` and embedding entries), so when that
   record is at least :attr:`BoundChain.floor` (``8 * 2^-1022 / (a w)^k``, and
   ``8 * 2^-1022 / min positive functional``), every product formed is a normal number. Sequences below the floor, and instances whose inputs do not round to normal
   floats, are not decided here: the checkers send them to exact arithmetic, as they do every
   margin whose bound contains 0 (ties and near ties).

Compounded over ``T`` steps the bound is ``gamma_(T (H + 3) + H + 1)``, about ``1e-11`` at
``T = 129``, ``H = 1000``: a verdict is certified unless its margin is that close to 0.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..hmm.values import HMM

__all__ = ["make_chain", "UNIT_ROUNDOFF", "SMALLEST_NORMAL", "gamma", "sign_bound_factor", "ratio_error_factor",
           "backward_count", "forward_count", "certified_signs", "BoundChain", "bound_chain",
           "split_rows", "round_up", "round_down", "MAX_COUNT"]

UNIT_ROUNDOFF = 2.0 ** -53
SMALLEST_NORMAL = 2.0 ** -1022
_U = Fraction(1, 2 ** 53)
MAX_COUNT = 2 ** 40          # k u stays far below 1/2


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else float(np.nextafter(f, np.inf))


@functools.lru_cache(maxsize=4096)
def gamma(k: int) -> float:
    """``gamma_k = k u / (1 - k u)`` rounded up (Higham eq. 3.8).

    >>> gamma(0), gamma(1) > 2.0 ** -53
    (0.0, True)
    """
    if k > MAX_COUNT:
        raise ValueError(f"rounding-error count {k} is too large for an a priori bound")
    return _float_up(Fraction(k, 2 ** 53 - k))


@functools.lru_cache(maxsize=4096)
def sign_bound_factor(k: int) -> float:
    """``c_k >= (u + gamma_k / (1 - gamma_k)) / (1 - u)^2``: ``|fl(P - N) - (P - N)|`` is at most
    ``fl(c_k * fl(P + N))`` for nonnegative ``P``, ``N`` carrying count ``k`` (docstring item 5)."""
    g = Fraction(k, 2 ** 53 - k)
    return _float_up((_U + g / (1 - g)) / (1 - _U) ** 2)


@functools.lru_cache(maxsize=4096)
def ratio_error_factor(k: int) -> float:
    """``e_k >= gamma_k / (1 - gamma_k) / (1 - u)``: a nonnegative ``rhat = r (1 + theta_k)``
    is within ``fl(e_k * rhat)`` of ``r``."""
    g = Fraction(k, 2 ** 53 - k)
    return _float_up(g / (1 - g) / (1 - _U))


def backward_count(steps: int, num_states: int) -> int:
    """Counter of a backward message after ``steps`` steps (docstring item 4)."""
    return steps * (num_states + 3)


def forward_count(j: int, num_states: int) -> int:
    """Counter of ``pre_j`` (0-based position ``j``); ``alpha_j`` has 2 more."""
    return 1 + j * (num_states + 3) + num_states + 1


def round_up(x: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """``x`` plus a slack covering a few float operations that produced it (``4 u |mag|``)."""
    return x + 4 * UNIT_ROUNDOFF * magnitude + SMALLEST_NORMAL


def round_down(x: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """``x`` minus the same slack as :func:`round_up`."""
    return x - 4 * UNIT_ROUNDOFF * magnitude - SMALLEST_NORMAL


def certified_signs(P: np.ndarray, N: np.ndarray, count: int | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signs of ``P - N`` for computed nonnegative ``P``, ``N`` with rounding counter ``count``.

    Returns ``(sign, decided, bound)``: ``sign`` in ``{-1, 0, 1}`` (``int8``), ``decided``
    where it is proven (``|fl(P - N)| > bound``, or ``P = N = 0`` exactly, item 6), and the
    bound itself (for reports and tests). Assumes the underflow guard passed.
    """
    P = np.asarray(P, dtype=float)
    N = np.asarray(N, dtype=float)
    if np.ndim(count) == 0:
        c = sign_bound_factor(int(count))
    else:
        c = np.vectorize(sign_bound_factor, otypes=[float])(np.asarray(count, dtype=np.int64))
    margin = P - N
    bound = c * (P + N)
    zero = (P == 0) & (N == 0)
    decided = (np.abs(margin) > bound) | zero
    sign = np.where(zero, 0, np.sign(margin)).astype(np.int8)
    return sign, decided, bound


def _float_or_inf(v) -> float:
    """``float(v)``, or a signed infinity for a rational beyond float64's range (then no bound
    is claimed, and the caller decides exactly)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _to_normal_floats(values) -> tuple[np.ndarray, bool]:
    """Rationals (or floats) rounded to float64, and whether every nonzero is a normal float."""
    arr = np.array([_float_or_inf(v) for v in np.asarray(values, dtype=object).flat], dtype=float)
    nz = np.asarray(values, dtype=object).flatten() != 0
    mags = np.abs(arr[nz])
    ok = bool(np.all(np.isfinite(arr)) and np.all(mags >= SMALLEST_NORMAL))
    return arr.reshape(np.shape(values)), ok


def split_rows(rows: Sequence[Sequence]) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """Rational functionals ``r`` (``K`` rows of length ``H``) as ``(pos, neg, rmin, ok)``:
    ``pos``, ``neg`` ``[H, K]`` float, nonnegative, ``r ≈ pos - neg`` entrywise (each rounded
    once); ``rmin`` the smallest positive magnitude; ``ok`` False when some nonzero entry does
    not round to a normal float (then no bound is claimed)."""
    arr, ok = _to_normal_floats(np.asarray(rows, dtype=object))
    arr = np.atleast_2d(arr)
    pos = np.ascontiguousarray(np.maximum(arr, 0.0).T)
    neg = np.ascontiguousarray(np.maximum(-arr, 0.0).T)
    mags = np.abs(arr[arr != 0])
    return pos, neg, float(mags.min()) if mags.size else 1.0, ok


@dataclass(frozen=True)
class BoundChain:
    """The float image of an exact chain with what the bounds need.

    ``A``, ``AT``, ``W`` (the embedding table, ``[K, H]``), ``pi0``: float64, each entry the
    correctly rounded rational; ``every``: the kernel's rescaling interval; ``floor``: the
    smallest positive rescaled message entry for which docstring item 7 guarantees normal
    products over the next ``every`` steps; ``usable``: every nonzero input is a normal
    float (else every verdict goes to exact arithmetic).
    """

    A: np.ndarray
    AT: np.ndarray
    W: np.ndarray
    pi0: np.ndarray
    floor: float
    every: int
    usable: bool

    @property
    def num_states(self) -> int:
        return self.A.shape[0]

    def with_table(self, table: np.ndarray) -> "BoundChain":
        """The same chain with another embedding table (e.g. a prompt row appended)."""
        return make_chain(self.A, self.pi0, table, self.usable)

    def floor_at(self, every: int) -> float:
        """The guard when the kernel rescales every ``every`` steps."""
        from .floats import positive_min

        return _guard(positive_min(self.A), positive_min(self.W), every)

    def floor_for(self, rmin: float) -> float:
        """The guard for dot products with functionals whose smallest magnitude is ``rmin``."""
        return max(self.floor, 8 * SMALLEST_NORMAL / rmin)


def _guard(amin: float, wmin: float, every: int) -> float:
    """``8 * SMALLEST_NORMAL / (amin * wmin) ** every`` (``amin``, ``wmin`` positive), computed
    in log2 so that a product that underflows (a fitted 1e-300 beside a 1e-320) gives a huge
    guard (``inf`` past float64), never a division by zero."""
    log_guard = 3 - 1022 - every * (math.log2(amin) + math.log2(wmin))
    return float(2.0 ** log_guard) if log_guard < 1000 else math.inf


def make_chain(A: np.ndarray, pi0: np.ndarray, table: np.ndarray, usable: bool) -> BoundChain:
    from .floats import rescale_interval

    from .floats import positive_min

    sparse_input = hasattr(A, "tocsr")
    table = table.tocsr() if hasattr(table, "tocsr") else np.ascontiguousarray(table, dtype=float)
    amin, wmin = positive_min(A), positive_min(table)
    every = rescale_interval(A, table)
    floor = _guard(amin, wmin, every)
    pmin = positive_min(pi0)
    usable = usable and floor < 2.0 ** -400 and pmin >= floor
    AT = A.T if sparse_input else np.ascontiguousarray(A.T)      # a sparse transpose is a view
    return BoundChain(A, AT, table, pi0, float(floor), every, bool(usable))


def bound_chain(hmm: HMM) -> BoundChain:
    """The :class:`BoundChain` of an exact HMM (built once per model)."""
    return hmm.memo("bound_chain", lambda: _build_bound_chain(hmm))


def _normal_from_float_form(values, arr: np.ndarray) -> bool:
    """Whether every nonzero entry of the exact ``values`` rounds to a normal float, given
    ``arr``, their correctly rounded float64 form: the nonzero floats must be finite and normal,
    and no exact nonzero may have rounded to 0 (checked on the float zeros only)."""
    mags = np.abs(arr[arr != 0])
    if not (np.all(np.isfinite(arr)) and np.all(mags >= SMALLEST_NORMAL)):
        return False
    hidden = np.asarray(values, dtype=object)[arr == 0]
    return not any(v != 0 for v in hidden.tolist())


def _build_bound_chain(hmm: HMM) -> BoundChain:
    if hmm.exact:                 # the model's shared float form: each entry rounded once, as float(v)
        f = hmm.to_float()
        arrays = [np.asarray(f.A, dtype=float), np.asarray(f.W, dtype=float), np.asarray(f.pi0, dtype=float)]
        ok = all(_normal_from_float_form(v, a) for v, a in zip((hmm.A, hmm.W, hmm.pi0), arrays))
        A, W, pi0 = arrays
        return make_chain(np.ascontiguousarray(A), pi0, W, ok)
    A, okA = _to_normal_floats(hmm.A)
    W, okW = _to_normal_floats(hmm.W)
    pi0, okp = _to_normal_floats(hmm.pi0)
    return make_chain(np.ascontiguousarray(A), pi0, W, okA and okW and okp)
