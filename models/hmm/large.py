"""Large exact HMMs (thousands of hidden states) held as sparse integer numerators.

A dense :class:`~.values.HMM` keeps one :class:`~fractions.Fraction` per entry, which at
``|H| = 16,384`` would be 268 million objects. :class:`LargeHMM` keeps the same exact model as
scipy sparse arrays of int64 numerators with one positive denominator per column
(``A[g, h] = A_num[g, h] / dA[h]``, likewise ``W``) and integer vectors over one denominator
(``pi0``, ``mu``), which is also the exact layout of a ``.npz`` instance (:mod:`.npz`).

Checks are the dense model's, vectorized: nonnegative entries and every column summing to
exactly 1 (integer arithmetic, no float), with the same messages. Exact products (``A v``,
``W^T b``) run on Python integers over the nonzeros only; the float form (each entry the
correctly rounded rational; exact when the denominators are powers of two and the numerators
below ``2^53``) feeds the float kernel of :mod:`headprompt.models.inference.floats`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import sparse

from ..exceptions import InputError, ValidationError

__all__ = ["LargeHMM", "exact_matvec", "exact_rmatvec", "dyadic_columns", "RATIONAL_BITS"]

RATIONAL_BITS = 32
"""A float model is made exact (explicitly, :meth:`LargeHMM.from_floats`) over denominators ``2^32``."""


def _column_sums_equal(mat: sparse.csc_array, den: np.ndarray) -> np.ndarray:
    """Per column: whether the int64 numerators (each in ``0..den``) sum to exactly ``den``,
    computed in two 31-bit halves so that no int64 sum can overflow."""
    mask = (1 << 31) - 1
    data = mat.data.astype(np.int64, copy=False)
    parts = []
    for half in (data >> 31, data & mask):
        cs = np.concatenate([[0], np.cumsum(half, dtype=np.int64)])
        parts.append(cs[mat.indptr[1:]] - cs[mat.indptr[:-1]])
    hi, lo = parts
    hi = hi + (lo >> 31)
    lo = lo & mask
    return (hi == (den >> 31)) & (lo == (den & mask))


def _exact_column_sum(mat: sparse.csc_array, h: int) -> int:
    seg = mat.data[mat.indptr[h]:mat.indptr[h + 1]]
    return sum(int(v) for v in seg)


def _check_matrix(mat: sparse.csc_array, den: np.ndarray, name: str) -> None:
    """Nonnegative numerators and exactly stochastic columns, refused with the dense messages."""
    if mat.nnz and mat.data.min() < 0:
        k = int(np.argmin(mat.data))
        col = int(np.searchsorted(mat.indptr, k, side="right") - 1)
        row = int(mat.indices[k])
        raise ValidationError(f"{name}: entry [{row}, {col}] is {Fraction(int(mat.data[k]), int(den[col]))}, "
                              "expected a nonnegative probability")
    cols = np.repeat(np.arange(mat.shape[1]), np.diff(mat.indptr))
    too_big = mat.data > den[cols] if mat.nnz else np.zeros(0, dtype=bool)
    ok = _column_sums_equal(mat, den)
    if too_big.any():
        ok[cols[too_big]] = False
    if not ok.all():
        h = int(np.flatnonzero(~ok)[0])
        total = Fraction(_exact_column_sum(mat, h), int(den[h]))
        raise ValidationError(f"{name}: column {h} sums to {total}, expected exactly 1")


def exact_matvec(mat: sparse.csc_array, den: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, int]:
    """``(y, d)`` with ``(M x) = y / d`` exactly, for ``M = num / den`` (per column) and ``x`` a
    vector of Python integers (object array): ``d = lcm(den)``, ``y`` Python integers."""
    d = math.lcm(*{int(v) for v in den.tolist()})
    scale = np.array([d // int(v) for v in den.tolist()], dtype=object)
    xs = np.asarray(x, dtype=object) * scale                        # x_h * d / den_h
    csr = mat.tocsr()
    return _sparse_dot(csr.data, csr.indices, csr.indptr, xs), d


def exact_rmatvec(mat: sparse.csc_array, den: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(y, den)`` with ``(M^T x)_h = y_h / den_h`` exactly (``x`` Python integers)."""
    return _sparse_dot(mat.data, mat.indices, mat.indptr, np.asarray(x, dtype=object)), den


_DOT_CHUNK = 1 << 16    # nonzeros whose big-integer products are held at once (fewer for wide x)
_DOT_BYTES = 1 << 27    # about this many bytes of products at once


def _sparse_dot(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``y[j] = sum_k data[k] x[indices[k]]`` over ``k`` in ``indptr[j]:indptr[j + 1]``, exactly
    (Python integers), for the rows of a CSR or the columns of a CSC array. The products are
    formed a chunk at a time (:data:`_DOT_CHUNK` nonzeros, fewer so that a chunk holds about
    :data:`_DOT_BYTES`), so memory stays at one chunk's products when ``x`` holds integers of
    thousands of digits (a witness over a large dense block of ``W``), not at ``nnz`` of them."""
    y = np.zeros(len(indptr) - 1, dtype=object)
    lines = np.flatnonzero(np.diff(indptr))
    width = max((abs(int(v)).bit_length() for v in x.tolist()), default=0) // 8 + 64     # bytes per product
    chunk = max(1, min(_DOT_CHUNK, _DOT_BYTES // width))
    start = 0
    while start < lines.size:
        # the lines whose nonzeros fit in one chunk (at least one line)
        stop = int(np.searchsorted(indptr[lines + 1], indptr[lines[start]] + chunk, side="right"))
        stop = max(stop, start + 1)
        part = lines[start:stop]
        lo, hi = int(indptr[part[0]]), int(indptr[part[-1] + 1])
        prod = data[lo:hi].astype(object) * x[indices[lo:hi]]
        y[part] = np.add.reduceat(prod, indptr[part] - lo)
        start = stop
    return y


def dyadic_columns(values: np.ndarray, *, bits: int = RATIONAL_BITS, prune_below: float = 0.0) -> tuple[np.ndarray, float]:
    """A nonnegative float array (dense or CSC) with columns summing to about 1, as int64
    numerators over ``2^bits`` per column summing to exactly ``2^bits``: entries below
    ``prune_below`` become 0, every other entry stays positive, and each column's rounding
    surplus goes to its largest entry. Returns ``(numerators as CSC, largest |change|)``.

    Raises:
        ValidationError: a column with nothing left after pruning.
    """
    mat = sparse.csc_array(values, dtype=float, copy=True)
    mat.sum_duplicates()
    keep = mat.data >= max(prune_below, np.finfo(float).tiny)
    mat.data = np.where(keep, mat.data, 0.0)
    mat.eliminate_zeros()
    H = mat.shape[1]
    counts = np.diff(mat.indptr)
    if (counts == 0).any():
        h = int(np.flatnonzero(counts == 0)[0])
        raise ValidationError(f"column {h} has no entry at or above {prune_below}; nothing left to rationalize")
    cols = np.repeat(np.arange(H), counts)
    sums = np.bincount(cols, weights=mat.data, minlength=H)
    scaled = mat.data / sums[cols] * 2.0 ** bits
    nums = np.maximum(np.floor(scaled), 1.0).astype(np.int64)
    total = np.bincount(cols, weights=nums, minlength=H).astype(np.int64)
    surplus = (1 << bits) - total
    # the largest entry of each column takes the surplus (it stays positive: it is >= 2^bits / nnz)
    order = np.lexsort((-nums, cols))
    first = order[mat.indptr[:-1]]
    nums[first] += surplus
    if (nums <= 0).any():
        raise ValidationError("a column has too many entries to rationalize over 2^32; prune more")
    out = sparse.csc_array((nums, mat.indices.copy(), mat.indptr.copy()), shape=mat.shape)
    original = sparse.csc_array(values, dtype=float)
    moved = abs(out.astype(float) / 2.0 ** bits - original)
    return out, float(moved.max()) if moved.nnz else 0.0


@dataclass(frozen=True, eq=False)
class LargeHMM:
    """An exact vanilla HMM as sparse integer numerators (module docstring).

    ``A``, ``W``: CSC int64 numerators; ``dA``, ``dW``: int64 denominators per column; ``pi0``,
    ``mu``: Python-integer object arrays over ``dpi``, ``dmu``. ``info`` carries generator facts
    (``B``, ``H_star``, classes) when the model was generated.
    """

    A: sparse.csc_array
    dA: np.ndarray
    W: sparse.csc_array
    dW: np.ndarray
    pi0: np.ndarray
    dpi: int
    mu: np.ndarray | None = None
    dmu: int = 1
    info: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, A, dA, W, dW, pi0, dpi, mu=None, dmu=1, *, info=None) -> "LargeHMM":
        """Build and check (shapes, signs, exact column sums), refusing with the dense messages."""
        A = sparse.csc_array(A, copy=True)           # private copies (a file's arrays may be read-only maps)
        W = sparse.csc_array(W, copy=True)
        for m in (A, W):
            m.sum_duplicates()
            m.eliminate_zeros()
        dA = np.asarray(dA, dtype=np.int64).reshape(-1)
        dW = np.asarray(dW, dtype=np.int64).reshape(-1)
        n = A.shape[0]
        if A.ndim != 2 or A.shape[1] != n or n == 0:
            raise ValidationError(f"A: expected a nonempty square matrix (|H| x |H|), found shape {A.shape}")
        if W.shape[1] != n or W.shape[0] == 0:
            raise ValidationError(f"W: expected shape (|X|, {n}) (tokens x hidden states), found {W.shape}")
        pi0 = np.array([int(v) for v in np.asarray(pi0).reshape(-1).tolist()], dtype=object)
        if pi0.shape != (n,):
            raise ValidationError(f"pi0: expected shape ({n},) (one probability per hidden state), found {pi0.shape}")
        for name, d, size in (("A", dA, n), ("W", dW, n)):
            if d.shape != (size,) or (d <= 0).any():
                raise ValidationError(f"{name}: expected {size} positive denominators (one per column)")
        _check_matrix(A.astype(np.int64), dA, "A")
        _check_matrix(W.astype(np.int64), dW, "W")
        dpi, dmu = int(dpi), int(dmu)
        if dpi <= 0 or dmu <= 0:
            raise ValidationError("pi0, mu: denominators must be positive")
        neg = [h for h, v in enumerate(pi0.tolist()) if v < 0][:1]
        if neg:
            raise ValidationError(f"pi0: entry [{neg[0]}] is {Fraction(pi0[neg[0]], dpi)}, expected a nonnegative "
                                  "probability")
        total = sum(pi0.tolist())
        if total != dpi:
            raise ValidationError(f"pi0: the vector sums to {Fraction(total, dpi)}, expected exactly 1")
        if mu is not None:
            mu = np.array([int(v) for v in np.asarray(mu).reshape(-1).tolist()], dtype=object)
            if mu.shape != (n,):
                raise ValidationError(f"mu: expected shape ({n},) (one weight per hidden state; tasks with several "
                                      f"classes are checked up to 1,000 states), found {mu.shape}")
        return cls(A.astype(np.int64), dA, W.astype(np.int64), dW, pi0, dpi, mu, dmu, dict(info or {}))

    @classmethod
    def from_npz(cls, inst, *, prune_below: float | None = None) -> tuple["LargeHMM", dict | None]:
        """``(model, conversion)`` from a read ``.npz`` instance: exact files as they are; float
        files only with ``prune_below`` (the explicit conversion of :func:`dyadic_columns`,
        reported in ``conversion``)."""
        if inst.exact:
            den = inst.den
            mu = inst.arrays.get("mu")
            if mu is not None and np.ndim(mu) != 1:
                raise InputError(f"{inst.path}: mu has {np.shape(mu)[0]} rows; tasks with several classes are "
                                 "checked up to 1,000 states")
            return cls.create(inst.arrays["A"], den["A"], inst.arrays["W"], den["W"], np.asarray(inst.arrays["pi0"]),
                              int(den["pi0"][0]), None if mu is None else np.asarray(mu),
                              int(den["mu"][0]) if mu is not None else 1,
                              info=_meta_info(inst.meta, int(inst.arrays["A"].shape[0]))), None
        n = int(inst.arrays["A"].shape[0])
        checked = {name: _check_floats(inst.arrays[name], name) for name in ("A", "W", "pi0")}
        mu = inst.arrays.get("mu")
        if mu is not None:
            mu = np.asarray(mu, dtype=float)
            if mu.ndim != 1:
                raise InputError(f"{inst.path}: mu has {mu.shape[0]} rows; tasks with several classes are checked up "
                                 "to 1,000 states")
            _check_floats(mu, "mu", stochastic=False)
        if prune_below is None:                    # a valid float model (checked above) needs the conversion
            raise InputError(f"{inst.path}: the model has float entries; theorem checks are exact: add "
                             "--rationalize [THRESHOLD] (an explicit conversion to integers over 2^32 per column, "
                             "reported), or save it exact (integer numerators with .den)")
        mu_ints, dmu = (None, 1) if mu is None else _exact_floats(mu)
        A, moved_A = dyadic_columns(checked["A"], prune_below=prune_below)
        W, moved_W = dyadic_columns(checked["W"], prune_below=prune_below)
        p, moved_p = dyadic_columns(checked["pi0"], prune_below=prune_below)
        pruned = sum(int(checked[k].nnz) - int(m.nnz) for k, m in (("A", A), ("W", W), ("pi0", p)))
        model = cls.create(A, np.full(A.shape[1], 1 << RATIONAL_BITS), W, np.full(W.shape[1], 1 << RATIONAL_BITS),
                           p.toarray()[:, 0], 1 << RATIONAL_BITS, mu_ints, dmu, info=_meta_info(inst.meta, n))
        return model, {"prune_below": prune_below, "denominator": f"2^{RATIONAL_BITS}", "max_denominator": 2 ** RATIONAL_BITS,
                       "pruned_entries": pruned,
                       "max_entry_change": {"approx": max(moved_A, moved_W, moved_p)},
                       "what": "float entries rounded to integers over 2^32 per column (entries below the "
                               "threshold set to 0, the others kept positive, each column made to sum to exactly "
                               "1); mu read exactly as the binary fractions it holds"}

    # ---- sizes and float forms ------------------------------------------------------------
    @property
    def num_states(self) -> int:
        return int(self.A.shape[0])

    @property
    def num_tokens(self) -> int:
        return int(self.W.shape[0])

    exact = True

    def float_form(self) -> dict:
        """``A`` (CSC float64), ``W`` (CSR float64, the embedding table), ``pi0``, ``mu`` floats,
        each entry the correctly rounded rational (``int / int`` true division); built once."""
        if "floats" not in self._cache:
            def rounded(mat, den):
                cols = np.repeat(np.arange(mat.shape[1]), np.diff(mat.indptr))
                data = np.fromiter(map(int.__truediv__, mat.data.tolist(), den[cols].tolist()), dtype=float,
                                   count=mat.nnz)
                return sparse.csc_array((data, mat.indices, mat.indptr), shape=mat.shape)

            self._cache["floats"] = {
                "A": rounded(self.A, self.dA), "W": rounded(self.W, self.dW).tocsr(),
                "pi0": np.array([v / self.dpi for v in self.pi0.tolist()], dtype=float),
                "mu": None if self.mu is None else np.array([v / self.dmu for v in self.mu.tolist()], dtype=float)}
        return self._cache["floats"]

    def supports(self) -> list[np.ndarray]:
        """``supp(A[:, h])`` for every ``h`` (one-step reach)."""
        return [self.A.indices[self.A.indptr[h]:self.A.indptr[h + 1]] for h in range(self.num_states)]

    def prior_h1(self) -> tuple[np.ndarray, int]:
        """``P[H_1] = A pi0`` exactly, as ``(integers, denominator)``."""
        if "p1" not in self._cache:
            y, d = exact_matvec(self.A, self.dA, self.pi0)
            self._cache["p1"] = (y, d * self.dpi)
        return self._cache["p1"]

    def nbytes(self) -> int:
        """Bytes held by the arrays (numerators, indices, float forms)."""
        return int(2 * (self.A.nnz + self.W.nnz) * 20 + 100 * self.num_states)

    def __repr__(self) -> str:
        return f"LargeHMM(|H|={self.num_states}, |X|={self.num_tokens}, nnz(A)={self.A.nnz}, nnz(W)={self.W.nnz})"


def _exact_floats(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Float64 values as Python-integer numerators over one power-of-two denominator (exact)."""
    fr = [Fraction(float(v)) for v in values.tolist()]
    d = max((f.denominator for f in fr), default=1)
    return np.array([f.numerator * (d // f.denominator) for f in fr], dtype=object), d


def _check_floats(values: Any, name: str, *, stochastic: bool = True) -> sparse.csc_array | np.ndarray:
    """A float array of a ``.npz`` file checked as a JSON float instance is: finite entries, and
    (``stochastic``) nonnegative with every column (a vector: the vector) summing to 1 within
    :data:`~.limits.FLOAT_TOLERANCE`, refused with the dense model's messages. Returns a matrix
    as CSC (a vector as one column), or a vector ``values`` as given when not ``stochastic``."""
    from .limits import FLOAT_TOLERANCE

    vector = np.ndim(values) == 1
    if not stochastic:
        arr = np.asarray(values, dtype=float)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValidationError(f"{name}: entry [{int(bad[0])}] is {arr[bad[0]]}, expected a finite number")
        return arr
    mat = sparse.csc_array(np.asarray(values, dtype=float)[:, None] if vector else values, dtype=float, copy=True)
    mat.sum_duplicates()
    mat.eliminate_zeros()                           # stored zeros are zeros, not entries to prune
    cols = np.repeat(np.arange(mat.shape[1]), np.diff(mat.indptr))
    where = (lambda k: f"[{int(mat.indices[k])}]") if vector else (lambda k: f"[{int(mat.indices[k])}, {int(cols[k])}]")
    for test, what in ((~np.isfinite(mat.data), "a finite number"), (mat.data < 0, "a nonnegative probability")):
        bad = np.flatnonzero(test)
        if bad.size:
            raise ValidationError(f"{name}: entry {where(bad[0])} is {mat.data[bad[0]]}, expected {what}")
    sums = np.bincount(cols, weights=mat.data, minlength=mat.shape[1])
    off = np.flatnonzero(np.abs(sums - 1.0) > FLOAT_TOLERANCE)
    if off.size:
        h = int(off[0])
        raise ValidationError(f"{name}: {'the vector' if vector else f'column {h}'} sums to {float(sums[h])!r}, "
                              f"expected exactly 1 (within {FLOAT_TOLERANCE})")
    return mat


def _meta_info(meta: Any, states: int) -> dict:
    """Generator facts saved with an instance (``B``, ``H_star``, classes) as hints; the
    checker verifies them, it never trusts them, but a hint that is not a list of hidden-state
    indices ``0..states-1`` is refused (a damaged or hand-edited file).

    Raises:
        ValidationError: a malformed ``meta.instance.B`` or ``H_star``.
    """
    if not (isinstance(meta, dict) and isinstance(meta.get("instance"), dict)):
        return {}
    inst = meta["instance"]
    for key in ("B", "H_star"):
        value = inst.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(type(v) is int and 0 <= v < states for v in value):
            raise ValidationError(f"meta.instance.{key}: expected a list of hidden-state indices 0..{states - 1}, "
                                  f"found {json.dumps(value)[:80]}")
    return {k: inst[k] for k in ("B", "H_star", "classes") if k in inst}
