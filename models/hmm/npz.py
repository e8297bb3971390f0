"""Binary instance files (``.npz``): the instance format of SPEC section 3 in numpy's own container.

A JSON file of a 16,384-state model would be gigabytes of text; the same model as ``.npz`` is
its arrays. Layout (every entry a plain numpy array; nothing is ever unpickled):

- ``kind``: the string ``"hmm"`` (a 0-d unicode array);
- for each of ``A``, ``W``, ``pi0`` and (optional) ``mu``, either the dense array under its name,
  or a sparse matrix as ``NAME.data``, ``NAME.indices``, ``NAME.indptr``, ``NAME.shape`` and
  ``NAME.format`` (``"csr"`` or ``"csc"``);
- values are *float* (float64 data: the model's float form) or *exact*: integer numerators
  (int64 data) with ``NAME.den``, the positive denominators, one per column for a matrix and one
  for a vector (a 0-d or 1-element array), so ``A[g, h] = A[g, h] / A.den[h]`` exactly;
- optional ``witness.theorem`` (string), ``witness.u``, ``witness.b`` (with ``.den`` when
  exact) and ``meta`` (a JSON string).

Reading decides everything it can from the zip directory and the ``.npy`` headers (names,
dtypes, shapes) before any array is read, refuses object (pickled) arrays, and then checks the
values exactly as a JSON instance is checked, with the same messages. From the headers alone
(:mod:`.npz_headers`; so a small compressed file that declares gigabytes is refused before
anything is allocated): the entries of all arrays together (:data:`~.limits.MAX_NPZ_ENTRIES`),
the tokens ``|X|`` (:data:`MAX_NPZ_TOKENS`), the length of every string (``meta`` up to
:data:`~.limits.MAX_FILE_BYTES` characters, like a JSON file; the others short), and the
consistency of the shapes (``A`` square, ``W`` with ``|H|`` columns, ``pi0`` and ``mu`` of
length ``|H|``, one denominator per column). ``meta`` is read as strictly as a JSON instance
file (nesting depth, digits per number, duplicate keys, no NaN).
"""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import InstanceFileError, LimitError, ValidationError
from .limits import MAX_NPZ_BYTES, check_number_text, check_regular_file, loads_strict
from .npz_headers import (_ARRAYS, _SPARSE_PARTS, _WITNESS, MAX_NPZ_TOKENS, _check_headers, _fail, _headers,  # noqa: F401
                          _matrix_shape, _numeric, _read, _string, is_npz, npz_counts, npz_is_exact, npz_sizes)

__all__ = ["is_npz", "read_npz", "NpzInstance", "write_npz", "npz_sizes", "npz_is_exact", "npz_counts", "exact_parts",
           "MAX_NPZ_TOKENS"]


@dataclass
class NpzInstance:
    """The arrays of a ``.npz`` instance, checked for shapes and kinds, not yet for values.

    ``arrays[name]`` is a dense numpy array or a scipy sparse array (integer numerators when
    ``exact``, float64 otherwise); ``den[name]`` the denominators of an exact array."""

    path: str
    exact: bool
    arrays: dict = field(default_factory=dict)
    den: dict = field(default_factory=dict)
    witness: dict = field(default_factory=dict)
    meta: Any = None

    @property
    def num_states(self) -> int:
        return int(self.arrays["A"].shape[0])

    @property
    def num_tokens(self) -> int:
        return int(self.arrays["W"].shape[0])

    def fractions(self, name: str) -> np.ndarray | None:
        """The exact array ``name`` as a dense Fraction object array (small models only)."""
        from fractions import Fraction

        arr = self.arrays.get(name)
        if arr is None:
            return None
        dense = arr.toarray() if hasattr(arr, "toarray") else np.asarray(arr)
        den = np.asarray(self.den[name]).reshape(-1)
        if dense.ndim == 1:
            d = int(den[0])
            return np.array([Fraction(int(v), d) for v in dense.tolist()], dtype=object)
        out = np.empty(dense.shape, dtype=object)
        for h in range(dense.shape[1]):
            d = int(den[h])
            out[:, h] = [Fraction(int(v), d) for v in dense[:, h].tolist()]
        return out

    def floats(self, name: str) -> np.ndarray | None:
        """The array ``name`` as dense float64 (a float file's values; an exact file's rounded)."""
        arr = self.arrays.get(name)
        if arr is None:
            return None
        dense = arr.toarray() if hasattr(arr, "toarray") else np.asarray(arr)
        if not self.exact:
            return np.asarray(dense, dtype=float)
        den = np.asarray(self.den[name], dtype=float).reshape(-1)
        return dense / (den[0] if dense.ndim == 1 else den[None, :])


def read_npz(path: str | Path) -> NpzInstance:
    """The arrays of a ``.npz`` instance (module docstring), decided from the headers first.

    Raises:
        InstanceFileError: not a zip of ``.npy`` arrays, a truncated file, an object (pickled)
            array, unknown or missing entries, a bad sparse structure or mixed float and exact
            arrays; LimitError: the file or its entry count beyond the limits.
    """
    p = str(path)
    check_regular_file(p, what=".npz instance file", limit=MAX_NPZ_BYTES)
    try:
        zf = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise _fail(p, f"not a readable .npz file ({exc})") from None
    with zf:
        heads = _headers(p, zf)
        _check_headers(p, zf, heads)
        if "kind" not in heads:
            raise _fail(p, "missing entry 'kind' (the string 'hmm')")
        kind = _string(p, zf, heads, "kind")
        if kind != "hmm":
            raise _fail(p, f"'kind' must be 'hmm' in a .npz instance (memory HMMs are JSON only), found {kind!r}")
        out = NpzInstance(p, exact=False)
        kinds = {}
        for name in _ARRAYS:
            if name == "mu" and "mu" not in heads and "mu.data" not in heads:
                continue
            arr, is_int = _load_array(p, zf, heads, name)
            out.arrays[name] = arr
            kinds[name] = is_int
        if len(set(kinds.values())) > 1:
            ints = sorted(n for n, k in kinds.items() if k)
            floats = sorted(n for n, k in kinds.items() if not k)
            raise _fail(p, f"{', '.join(ints)} hold integer numerators but {', '.join(floats)} hold floats; an "
                           "instance is all exact (integers with .den) or all float")
        out.exact = bool(kinds and next(iter(kinds.values())))
        for name in list(out.arrays) + [w for w in _WITNESS if w in heads]:
            den_name = f"{name}.den"
            if name in _WITNESS:
                if len(heads[name].shape) not in (1, 2):
                    raise _fail(p, f"entry {name!r}: expected a vector (or one row per class), found shape "
                                   f"{heads[name].shape}")
                is_int = _numeric(p, name, heads[name], None)
                if is_int != out.exact:
                    raise _fail(p, f"entry {name!r} must be {'integer numerators with .den' if out.exact else 'float'} "
                                   "like the model's arrays")
                out.witness[name.split(".")[1]] = np.asarray(_read(p, zf, heads, name))
            if out.exact:
                if den_name not in heads:
                    raise _fail(p, f"{name} holds integer numerators but {den_name!r} (the denominators) is missing")
                out.den[name] = _denominators(p, zf, heads, name, out.arrays.get(name, out.witness.get(name[8:])))
            elif den_name in heads:
                raise _fail(p, f"{den_name!r} given but {name} holds floats (denominators go with integer numerators)")
        if "witness.theorem" in heads:
            out.witness["theorem"] = _string(p, zf, heads, "witness.theorem")
        if "meta" in heads:
            out.meta = _parse_meta(p, _string(p, zf, heads, "meta"))
    return out


def _parse_meta(path, text: str) -> Any:
    """The ``meta`` JSON text, read as strictly as a JSON instance file (:func:`.files.read_json`):
    nesting up to :data:`~.limits.MAX_NESTING` (decided on the text, without recursion), digits
    per number up to :data:`~.limits.MAX_DIGITS`, no NaN or infinity, no duplicate keys, no
    over-long numeric strings. Numbers are kept as ``int`` and ``float``, as before.

    Raises:
        InstanceFileError: not JSON, NaN, a duplicate key; LimitError: a limit above.
    """
    where = f"{path}: meta"

    def number(t: str):
        value = check_number_text(t, where=where)
        return value if isinstance(value, int) else float(t)

    try:
        return loads_strict(text, where, number=number)
    except json.JSONDecodeError as exc:
        raise _fail(path, f"entry 'meta' is not JSON text ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def _load_array(path, zf, heads, name) -> tuple[Any, bool]:
    """A dense or sparse array and whether it holds integers, structure checked."""
    if name in heads:
        if any(f"{name}.{part}" in heads for part in _SPARSE_PARTS):
            raise _fail(path, f"{name!r} is given both dense and as sparse parts; keep one")
        h = heads[name]
        is_int = _numeric(path, name, h, None)
        want = 2 if name in ("A", "W") else None
        if want and len(h.shape) != 2:
            raise ValidationError(f"{path}: {name}: expected a matrix, found shape {h.shape}")
        if name == "pi0" and len(h.shape) != 1:
            raise ValidationError(f"{path}: pi0: expected shape (|H|,) (one probability per hidden state), "
                                  f"found {h.shape}")
        return _read(path, zf, heads, name), is_int
    missing = [f"{name}.{part}" for part in _SPARSE_PARTS if f"{name}.{part}" not in heads]
    if len(missing) == len(_SPARSE_PARTS):
        _matrix_shape(path, zf, heads, name)           # raises: missing array
    if missing:
        raise _fail(path, f"sparse {name!r} lacks {missing[0]!r}")
    fmt = _string(path, zf, heads, f"{name}.format")
    if fmt not in ("csr", "csc"):
        raise _fail(path, f"'{name}.format' must be 'csr' or 'csc', found {fmt!r}")
    shape = _matrix_shape(path, zf, heads, name)
    if name not in ("A", "W"):
        raise _fail(path, f"{name!r}: only A and W may be stored sparse")
    hd, hi, hp = heads[f"{name}.data"], heads[f"{name}.indices"], heads[f"{name}.indptr"]
    is_int = _numeric(path, f"{name}.data", hd, None)
    for part, h in (("indices", hi), ("indptr", hp)):
        if h.dtype.kind not in "iu" or len(h.shape) != 1:
            raise _fail(path, f"'{name}.{part}' must be a vector of integers, found dtype {h.dtype} shape {h.shape}")
    major, minor = (shape[0], shape[1]) if fmt == "csr" else (shape[1], shape[0])
    if len(hd.shape) != 1 or hd.shape != hi.shape or hp.shape != (major + 1,):
        raise _fail(path, f"sparse {name!r} ({fmt}, shape {list(shape)}): data {hd.shape}, indices {hi.shape} and "
                          f"indptr {hp.shape} do not fit (expected equal data and indices, indptr of {major + 1})")
    data = np.asarray(_read(path, zf, heads, f"{name}.data"))
    indices = np.asarray(_read(path, zf, heads, f"{name}.indices"), dtype=np.int64)
    indptr = np.asarray(_read(path, zf, heads, f"{name}.indptr"), dtype=np.int64)
    if indptr[0] != 0 or indptr[-1] != len(data) or np.any(np.diff(indptr) < 0):
        raise _fail(path, f"sparse {name!r}: indptr must start at 0, never decrease and end at {len(data)}")
    if len(indices) and (indices.min() < 0 or indices.max() >= minor):
        raise _fail(path, f"sparse {name!r}: an index is outside 0..{minor - 1}")
    from scipy import sparse

    maker = sparse.csr_array if fmt == "csr" else sparse.csc_array
    mat = maker((data, indices, indptr), shape=shape)
    if not mat.has_canonical_format:
        mat = mat.copy()
        mat.sum_duplicates()
        if mat.nnz != len(data):
            raise _fail(path, f"sparse {name!r}: an entry is stored twice (duplicate indices in one "
                              f"{'row' if fmt == 'csr' else 'column'})")
    return mat, is_int


def _denominators(path, zf, heads, name, arr) -> np.ndarray:
    """The denominators of ``name``: one per column of a matrix, one for a vector; positive."""
    h = heads[f"{name}.den"]
    if h.dtype.kind not in "iu":
        raise _fail(path, f"'{name}.den' must hold integers, found dtype {h.dtype}")
    _numeric(path, f"{name}.den", h, None)
    shape = np.shape(arr)
    want = (shape[1],) if len(shape) == 2 else (1,)
    den = np.asarray(_read(path, zf, heads, f"{name}.den"), dtype=np.int64).reshape(-1)
    if den.shape != want:
        raise ValidationError(f"{path}: {name}.den: expected {want[0]} denominator(s) "
                              f"({'one per column' if len(shape) == 2 else 'one for the vector'}), found {den.size}")
    if den.size and den.min() <= 0:
        k = int(np.argmin(den))
        raise ValidationError(f"{path}: {name}.den[{k}] is {int(den[k])}, expected a positive denominator")
    return den


def exact_parts(values: np.ndarray, *, name: str, per_column: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(numerators int64, denominators int64)`` of an exact (Fraction) array: one common
    denominator per column (``per_column``) or for the whole vector.

    Raises:
        LimitError: a numerator or denominator beyond int64 (the JSON format has no such limit).
    """
    arr = np.asarray(values, dtype=object)
    cols = arr.reshape(arr.shape[0], -1) if per_column else arr.reshape(-1, 1)
    nums = np.empty(cols.shape, dtype=np.int64)
    dens = np.empty(cols.shape[1], dtype=np.int64)
    top = 2 ** 63 - 1
    for h in range(cols.shape[1]):
        col = cols[:, h].tolist()
        d = math.lcm(*(v.denominator for v in col)) if col else 1
        ints = [v.numerator * (d // v.denominator) for v in col]
        if d > top or any(abs(v) > top for v in ints):
            raise LimitError(f"{name}: the exact values of column {h} need integers beyond int64 over a common "
                             "denominator; save this model as JSON instead (no size limit per number)")
        nums[:, h] = ints
        dens[h] = d
    return nums.reshape(arr.shape), dens


def write_npz(path: str | Path, arrays: dict, *, meta: Any = None, compressed: bool = False) -> None:
    """Write entries (already in the module's layout) as a ``.npz`` file, uncompressed by
    default (so that a reader can memory-map the arrays), with ``meta`` as JSON text."""
    entries = dict(arrays)
    if meta is not None:
        entries["meta"] = np.array(json.dumps(meta, default=str))
    for k, v in entries.items():
        if isinstance(v, np.ndarray) and v.dtype.hasobject:
            raise ValueError(f"write_npz: {k} is an object array")
    try:
        with open(path, "wb") as fh:
            (np.savez_compressed if compressed else np.savez)(fh, **entries)
    except OSError as exc:
        raise InstanceFileError(f"{path}: cannot write ({exc.strerror})") from None
