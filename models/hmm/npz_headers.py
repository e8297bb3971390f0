"""The container of a ``.npz`` instance (layout: :mod:`.npz`): its zip directory and ``.npy``
headers, read without reading array data, and everything they decide before any array is read
(known entry names, the entry and token limits, string lengths, dtypes, consistent shapes);
then one array at a time, memory-mapped when stored uncompressed, never unpickled."""

from __future__ import annotations

import math
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import InstanceFileError, LimitError, ValidationError
from .limits import MAX_FILE_BYTES, MAX_NPZ_BYTES, MAX_NPZ_ENTRIES, check_regular_file

__all__ = ["is_npz", "npz_sizes", "npz_is_exact", "npz_counts", "MAX_NPZ_TOKENS"]

MAX_NPZ_TOKENS = 100_000
"""Tokens ``|X|`` (rows of ``W``) of a ``.npz`` instance, refused from the headers before ``W``
is read (a file of a megabyte can declare millions of rows): ten times the vocabularies of the
HMM language models the large path is for (about 10,000, Chiu and Rush 2020) and of
``verify theorem --vocab`` (at most 10,000)."""

_SHORT_STRING = 16
"""Characters of the short string entries (``kind``, ``NAME.format``, ``witness.theorem``:
``"hmm"``, ``"csc"``, ``"3.6"``), checked on the header before the string is read."""


_ARRAYS = ("A", "W", "pi0", "mu")
_WITNESS = ("witness.u", "witness.b")
_SPARSE_PARTS = ("data", "indices", "indptr", "shape", "format")
_STRINGS = {"kind", "meta", "witness.theorem"} | {f"{n}.format" for n in _ARRAYS}


def is_npz(path: Any) -> bool:
    """Whether ``path`` names a ``.npz`` file (by its extension)."""
    return isinstance(path, (str, Path)) and str(path).lower().endswith(".npz")


@dataclass
class _Header:
    shape: tuple
    dtype: np.dtype
    fortran: bool
    stored: bool                  # ZIP_STORED: the data can be memory-mapped
    offset: int                   # file offset of the array data (stored entries)


def _fail(path, text: str) -> InstanceFileError:
    return InstanceFileError(f"{path}: {text}")


def _headers(path: str, zf: zipfile.ZipFile) -> dict[str, _Header]:
    """Name -> header of every ``.npy`` member, read without reading any array data."""
    out = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            raise _fail(path, f"unexpected member {info.filename!r} (a .npz instance holds .npy arrays only)")
        name = info.filename[:-4]
        try:
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                elif version in ((2, 0), (3, 0)):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
                header_len = fh.tell()
        except (ValueError, EOFError, OSError, zlib.error, zipfile.BadZipFile, SyntaxError) as exc:
            raise _fail(path, f"entry {name!r} is not a readable .npy array ({exc})") from None
        if dtype.hasobject:
            raise _fail(path, f"entry {name!r} is an object (pickled) array; instance files hold plain "
                              "numbers only and are never unpickled")
        stored = info.compress_type == zipfile.ZIP_STORED
        offset = 0
        if stored:                                  # local header: 30 bytes + name + extra field
            with open(path, "rb") as fh:
                fh.seek(info.header_offset)
                local = fh.read(30)
                if len(local) < 30 or local[:4] != b"PK\x03\x04":
                    raise _fail(path, f"entry {name!r}: damaged zip header (a truncated file?)")
                n_name = int.from_bytes(local[26:28], "little")
                n_extra = int.from_bytes(local[28:30], "little")
                offset = info.header_offset + 30 + n_name + n_extra + header_len
        out[name] = _Header(tuple(int(s) for s in shape), dtype, bool(fortran), stored, offset)
    return out


def npz_sizes(path: str | Path) -> tuple[int, int]:
    """``(|H|, |X|)`` of a ``.npz`` instance from its headers alone (no array is read), after
    the checks the headers decide (:func:`_check_headers`: names, limits, consistent shapes)."""
    p = str(path)
    check_regular_file(p, what=".npz instance file", limit=MAX_NPZ_BYTES)
    try:
        with zipfile.ZipFile(p) as zf:
            heads = _headers(p, zf)
            return _check_headers(p, zf, heads)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise _fail(p, f"not a readable .npz file ({exc})") from None


def npz_is_exact(path: str | Path) -> bool:
    """Whether a ``.npz`` instance holds exact values (integer numerators with ``A.den``), from
    its headers alone; call it after :func:`npz_sizes`, which checks those headers."""
    p = str(path)
    try:
        with zipfile.ZipFile(p) as zf:
            return "A.den" in _headers(p, zf)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise _fail(p, f"not a readable .npz file ({exc})") from None


def _known_names() -> set[str]:
    return set(_STRINGS) | {f"{n}{s}" for n in _ARRAYS + _WITNESS for s in ("", ".den")} | {
        f"{n}.{part}" for n in _ARRAYS for part in _SPARSE_PARTS}


def _string_header(path, name: str, h: _Header) -> None:
    """A string entry's dtype, shape and declared length, from its header (nothing is read):
    ``meta`` up to :data:`~.limits.MAX_FILE_BYTES` characters (JSON text, like an instance
    file), the other strings up to :data:`_SHORT_STRING`."""
    if h.dtype.kind != "U" or h.shape not in ((), (1,)):
        raise _fail(path, f"entry {name!r} must be a string (a 0-d unicode array), found dtype {h.dtype} "
                          f"shape {h.shape}")
    chars = h.dtype.itemsize // 4
    if name == "meta":
        if chars > MAX_FILE_BYTES:
            raise LimitError(f"{path}: entry 'meta' declares {chars} characters of JSON text; the limit is "
                             f"{MAX_FILE_BYTES} (that of a JSON instance file)")
    elif chars > _SHORT_STRING:
        want = ("'hmm'" if name == "kind" else "'csr' or 'csc'" if name.endswith(".format")
                else "a theorem id such as '3.6'")
        raise _fail(path, f"entry {name!r} declares a string of {chars} characters; expected {want}")


def _check_headers(path, zf, heads) -> tuple[int, int]:
    """``(|H|, |X|)``, after everything the headers decide, before any array but the tiny
    ``NAME.shape`` entries is read: known names, the entry limit, string lengths, dense
    arrays' dimensions, the shapes' consistency (``A`` square, ``W`` ``|X| x |H|``, ``pi0``
    ``(|H|,)``, ``mu`` ``(|H|,)`` or ``(k, |H|)``, witness vectors, denominators' counts) and
    the token limit.

    Raises:
        InstanceFileError: an unknown entry, a malformed string, a sparse vector;
        ValidationError: inconsistent shapes; LimitError: entries, tokens, ``meta`` length.
    """
    unknown = sorted(set(heads) - _known_names())
    if unknown:
        raise _fail(path, f"unknown entry {unknown[0]!r} (allowed: kind, A, W, pi0, mu, their .den and sparse "
                          "parts, witness.theorem, witness.u, witness.b, meta)")
    total = sum(math.prod(h.shape) for h in heads.values())
    if total > MAX_NPZ_ENTRIES:
        raise LimitError(f"{path}: {total} array entries; the limit for a .npz instance is {MAX_NPZ_ENTRIES} "
                         "(store A and W sparse)")
    for name in sorted(_STRINGS & set(heads)):
        _string_header(path, name, heads[name])
    for name in ("pi0", "mu"):
        if name not in heads and any(f"{name}.{part}" in heads for part in _SPARSE_PARTS):
            raise _fail(path, f"{name!r}: only A and W may be stored sparse")
    for name in ("A", "W"):
        if name in heads and len(heads[name].shape) != 2:
            raise ValidationError(f"{path}: {name}: expected a matrix, found shape {heads[name].shape}")
    shape_a = _matrix_shape(path, zf, heads, "A")
    if len(shape_a) != 2 or shape_a[0] != shape_a[1] or shape_a[0] == 0:
        raise ValidationError(f"{path}: A: expected a nonempty square matrix (|H| x |H|), found shape {shape_a}")
    n = shape_a[0]
    shape_w = _matrix_shape(path, zf, heads, "W")
    if len(shape_w) != 2 or shape_w[1] != n or shape_w[0] == 0:
        raise ValidationError(f"{path}: W: expected shape (|X|, {n}) (tokens x hidden states), found {shape_w}")
    x = shape_w[0]
    if x > MAX_NPZ_TOKENS:
        raise LimitError(f"{path}: W has {x} rows (tokens |X|); the limit for a .npz instance is {MAX_NPZ_TOKENS} "
                         "tokens")
    shape_p = _matrix_shape(path, zf, heads, "pi0")
    if shape_p != (n,):
        raise ValidationError(f"{path}: pi0: expected shape ({n},) (one probability per hidden state), "
                              f"found {shape_p}")
    shapes = {"A": shape_a, "W": shape_w, "pi0": shape_p}
    classes = 1
    if "mu" in heads:
        shape_m = heads["mu"].shape
        if not (shape_m == (n,) or (len(shape_m) == 2 and shape_m[0] >= 2 and shape_m[1] == n)):
            raise ValidationError(f"{path}: mu: expected shape ({n},) (one weight per hidden state) or (k, {n}) "
                                  f"with k >= 2 classes, found {shape_m}")
        shapes["mu"] = shape_m
        classes = shape_m[0] if len(shape_m) == 2 else 1
    longest = max(n, x)
    for name in _WITNESS:
        if name not in heads:
            continue
        shape = heads[name].shape
        if len(shape) not in (1, 2) or shape[-1] > longest or (len(shape) == 2 and shape[0] > classes):
            rows = f" (or one row per class, {classes} here)" if classes > 1 else ""
            raise ValidationError(f"{path}: {name}: expected a vector of at most {longest} entries (one per hidden "
                                  f"state or token){rows}, found shape {shape}")
        shapes[name] = shape
    for name, shape in shapes.items():
        den = heads.get(f"{name}.den")
        if den is None:
            continue
        want = shape[1] if len(shape) == 2 else 1
        if math.prod(den.shape) != want:
            raise ValidationError(f"{path}: {name}.den: expected {want} denominator(s) "
                                  f"({'one per column' if len(shape) == 2 else 'one for the vector'}), "
                                  f"found {math.prod(den.shape)}")
    return n, x


def npz_counts(path: str | Path) -> tuple[int, int, int, int]:
    """``(|H|, |X|, entries of A, entries of W)`` from the headers alone: stored entries (the
    nonzeros of a sparse matrix, every entry of a dense one), the work and memory a check needs."""
    p = str(path)
    states, tokens = npz_sizes(p)
    with zipfile.ZipFile(p) as zf:
        heads = _headers(p, zf)
        stored = [_dense_nonzeros(p, zf, heads, n) if n in heads else math.prod(heads[f"{n}.data"].shape)
                  for n in ("A", "W")]
    return states, tokens, stored[0], stored[1]


def _dense_nonzeros(path, zf, heads, name) -> int:
    """The nonzeros of a dense matrix stored uncompressed (counted on the memory map, a block of
    rows at a time: no copy of the matrix), else its number of entries (an upper bound)."""
    h = heads[name]
    total = math.prod(h.shape)
    if not (h.stored and total and len(h.shape) == 2 and h.dtype.kind in "iuf"):
        return total
    arr = _read(path, zf, heads, name) if h.dtype in (np.int64, np.float64) and h.dtype.isnative else None
    if arr is None:
        return total
    step = max(1, (1 << 22) // max(1, h.shape[1]))
    return int(sum(np.count_nonzero(arr[i:i + step]) for i in range(0, h.shape[0], step)))


def _read(path: str, zf: zipfile.ZipFile, heads: dict, name: str) -> np.ndarray:
    """One array: memory-mapped when stored uncompressed, else read (never unpickled)."""
    h = heads[name]
    try:
        if h.stored and h.dtype.itemsize and math.prod(h.shape) > 0:
            arr = np.memmap(path, dtype=h.dtype, mode="r", offset=h.offset, shape=h.shape,
                            order="F" if h.fortran else "C")
        else:
            with zf.open(name + ".npy") as fh:
                arr = np.lib.format.read_array(fh, allow_pickle=False)
    except (ValueError, EOFError, OSError, zlib.error, zipfile.BadZipFile) as exc:
        raise _fail(path, f"entry {name!r} cannot be read ({exc}); the file may be truncated") from None
    # numbers in the two forms the readers compute with (native int64, float64; both exact
    # conversions of any accepted dtype: big-endian, float16/32, narrower integers)
    if arr.dtype.kind in "iu" and arr.dtype != np.int64:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f" and arr.dtype != np.float64:
        return arr.astype(np.float64)
    return arr


def _string(path, zf, heads, name) -> str:
    _string_header(path, name, heads[name])
    return str(_read(path, zf, heads, name).reshape(()))


def _matrix_shape(path, zf, heads, name) -> tuple[int, ...]:
    """The shape of array ``name`` (dense or sparse) from headers (and the tiny shape entry)."""
    if name in heads:
        return heads[name].shape
    if f"{name}.shape" in heads:
        h = heads[f"{name}.shape"]
        if h.dtype.kind not in "iu" or h.shape != (2,):
            raise _fail(path, f"entry '{name}.shape' must be two integers, found dtype {h.dtype} shape {h.shape}")
        shape = tuple(int(v) for v in _read(path, zf, heads, f"{name}.shape"))
        if min(shape) < 0:
            raise _fail(path, f"entry '{name}.shape' is {list(shape)}: sizes must be nonnegative")
        return shape
    raise _fail(path, f"missing array {name!r} (dense {name!r}, or sparse '{name}.data', '{name}.indices', "
                      f"'{name}.indptr', '{name}.shape', '{name}.format')")


def _numeric(path, name: str, h: _Header, exact: bool | None) -> bool:
    """Whether the data of ``name`` is integer (exact) or float; refuses other dtypes."""
    if h.dtype.kind in "iu":
        if h.dtype.itemsize > 8 or (h.dtype.kind == "u" and h.dtype.itemsize == 8):
            raise _fail(path, f"entry {name!r}: integers must fit int64, found dtype {h.dtype}")
        return True
    if h.dtype.kind == "f" and h.dtype.itemsize <= 8:
        return False
    raise _fail(path, f"entry {name!r}: expected float64 values or int64 numerators, found dtype {h.dtype}")
