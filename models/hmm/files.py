"""Instance files (SPEC section 3): read and write HMMs, memory HMMs and witnesses exactly.

Numbers are read as exact decimals (``0.1`` is ``1/10``) and strings ``"p/q"`` as rationals;
files are written with every value as a ``"p/q"`` string (or a JSON number for float models),
so that any saved instance replays exactly.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import InputError, InstanceFileError, LimitError, ValidationError
from .limits import (MAX_FILE_BYTES, check_regular_file, check_lifted_states, check_number_text,
                     loads_strict)
from .values import HMM, MemoryHMM, register_file_io
from .rational import format_array
from .reading import as_array

__all__ = ["load_instance", "parse_instance", "instance_to_dict", "save_instance", "read_json",
           "read_text_file", "dumps_rows", "instance_to_npz", "NPZ_MAX_DENSE_STATES", "FLOAT_MARK"]

FLOAT_MARK = "headprompt.numbers"
"""Key of an instance file's ``meta`` that :func:`save_instance` sets to ``"float64"`` when it
writes a float model, so that :func:`load_instance` with ``exact=None`` (the default of
``HMM.load`` and ``headprompt.load``) reads the file back as the float model it is: a float
model's columns sum to 1 only within float64's tolerance, so its decimals never sum to exactly
1 (an ``.npz`` file says its kind by its dtypes)."""

_HMM_KEYS = {"kind", "A", "W", "pi0", "mu", "witness", "meta"}
_MEMORY_KEYS = {"kind", "cells", "memory_values", "syntax_states", "A", "W", "pi0", "pM", "pM_cells",
                "mu", "target_cell", "witness", "meta"}


def read_text_file(path: str | Path, *, what: str = "file") -> str:
    """The text of a regular file of at most :data:`~.limits.MAX_FILE_BYTES` bytes.

    Refuses before opening what is not a regular file (a named pipe would block, a device
    never ends) and reads at most one byte past the limit.

    Raises:
        InstanceFileError: missing, not a regular file, unreadable or not UTF-8.
        LimitError: larger than the limit.
    """
    p = Path(path)
    check_regular_file(p, what=f"JSON {what}", limit=MAX_FILE_BYTES)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InstanceFileError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise LimitError(f"{path}: more than {MAX_FILE_BYTES} bytes; the limit for a {what} is {MAX_FILE_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InstanceFileError(f"{path}: not UTF-8 text (instance files are JSON, or .npz by their "
                                f"extension)") from None


def read_json(path: str | Path) -> Any:
    """Parse a JSON file with numbers as :class:`Decimal` (exact).

    Limits (SPEC section 2) are decided before any value is expanded: file size, nesting depth
    (:data:`~.limits.MAX_NESTING`), digits per number (:data:`~.limits.MAX_DIGITS`, so
    ``1e999999999`` is refused, not computed); a key repeated in one object is refused (JSON
    leaves its meaning open) (:func:`~.limits.loads_strict`).

    Raises:
        InstanceFileError: missing file, not a regular file, invalid JSON (naming the line and
            column), duplicate keys; LimitError: a limit above.
    """
    text = read_text_file(path, what="instance file")
    where = str(path)
    try:
        return loads_strict(text, where, number=lambda t: check_number_text(t, where=where),
                            depth_note=" (an instance file needs at most 5)")
    except json.JSONDecodeError as exc:
        raise InstanceFileError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def parse_instance(data: Any, *, exact: bool = True, source: str = "instance") -> HMM | MemoryHMM:
    """An :class:`HMM` or :class:`MemoryHMM` from a parsed instance dict.

    In float mode (``exact=False``) columns must sum to 1 within tolerance; in exact mode,
    exactly.

    Raises:
        InstanceFileError: unknown kind, missing or unknown keys.
        ValidationError: bad values (shape, sign, sums), naming the matrix and column.
    """
    if not isinstance(data, dict):
        raise InstanceFileError(f"{source}: expected a JSON object, found {type(data).__name__}")
    data = _decimals(data)
    kind = data.get("kind")
    if kind not in ("hmm", "memory-hmm"):
        raise InstanceFileError(f"{source}: 'kind' must be 'hmm' or 'memory-hmm', found {kind!r}")
    allowed = _HMM_KEYS if kind == "hmm" else _MEMORY_KEYS
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InstanceFileError(f"{source}: unknown key {unknown[0]!r} for kind {kind!r} "
                                f"(allowed: {', '.join(sorted(allowed))})")
    required = ["A", "W", "pi0"] + (["cells", "memory_values", "syntax_states"] if kind == "memory-hmm" else [])
    for key in required:
        if key not in data:
            raise InstanceFileError(f"{source}: missing key {key!r} for kind {kind!r}")
    if kind == "memory-hmm":
        _check_memory_sizes(data, exact=exact, source=source)
    conv = (lambda v, name: v) if exact else _floats     # float mode: exact decimals, then float64
    try:
        if kind == "hmm":
            return HMM.create(*(conv(data.get(k), k) for k in ("A", "W", "pi0", "mu")), exact=exact)
        return MemoryHMM.create(data["cells"], data["memory_values"], data["syntax_states"],
                                conv(data["A"], "A"), conv(data["W"], "W"), conv(data["pi0"], "pi0"),
                                conv(data.get("pM"), "pM"), pM_cells=conv(data.get("pM_cells"), "pM_cells"),
                                mu=conv(data.get("mu"), "mu"), target_cell=data.get("target_cell", 0),
                                exact=exact)
    except InputError as exc:
        raise type(exc)(f"{source}: {exc}") from None


def _check_memory_sizes(data: dict, *, exact: bool, source: str) -> None:
    """Sizes of a memory HMM checked before anything is built: integers, the lifted chain within
    its limit (a per-cell prior would otherwise expand all ``|M|^N`` memories), and an explicit
    ``target_cell`` when there are several cells (the task's cell is never guessed)."""
    sizes = {}
    for key in ("cells", "memory_values", "syntax_states"):
        v = data[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValidationError(f"{source}: {key} must be >= 1 (an integer), found {v!r}")
        sizes[key] = v
    check_lifted_states(sizes["memory_values"], sizes["cells"], sizes["syntax_states"],
                        mode="exact" if exact else "float", where=source)
    if "target_cell" not in data and sizes["cells"] > 1:
        raise InstanceFileError(f"{source}: missing key 'target_cell' (the task's cell j*, 0..{sizes['cells'] - 1}); "
                                f"it is required when there are {sizes['cells']} cells")


def _decimals(obj: Any) -> Any:
    """Python floats (from ``json.loads`` without ``parse_float``) read as the decimal they print
    as, which is the decimal written in the JSON text."""
    if isinstance(obj, float):
        return Decimal(repr(obj))
    if isinstance(obj, dict):
        return {k: _decimals(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decimals(v) for v in obj]
    return obj


def _floats(values: Any, name: str) -> Any:
    """Exact values converted to float64, refusing what float64 cannot hold: a value beyond its
    range (``1e400``) or a nonzero value that would become 0 (``1e-400``, which would change a
    support and so the model)."""
    if values is None:
        return None
    from .rational import float64_array

    return float64_array(values, name)


def load_instance(path: str | Path, *, exact: bool | None = True) -> HMM | MemoryHMM:
    """Read an instance file (SPEC section 3): JSON (see :func:`parse_instance`), or ``.npz``
    by its extension (:mod:`.npz`), validated alike with the same messages. ``exact``: True
    reads every number exactly, False as float64, None as the file holds it (an ``.npz`` file
    by its dtypes; a JSON file float when :func:`save_instance` marked it so
    (:data:`FLOAT_MARK`), else exact), so that every model :func:`save_instance` writes
    reloads with the same call."""
    from .npz import is_npz

    if is_npz(path):
        return _load_npz(path, exact=exact)
    data = read_json(path)
    if exact is None:
        meta = data.get("meta") if isinstance(data, dict) else None
        exact = not (isinstance(meta, dict) and meta.get(FLOAT_MARK) == "float64")
    return parse_instance(data, exact=exact, source=str(path))


NPZ_MAX_DENSE_STATES = 2000
"""Hidden states of a ``.npz`` instance read as a (dense) :class:`HMM`; larger ones are checked
by ``verify theorem`` through :mod:`headprompt.models.hmm.large`."""


def _load_npz(path: str | Path, *, exact: bool | None) -> HMM:
    """A ``.npz`` instance as an :class:`HMM`: exact files as Fractions, float files as floats
    (read exactly as the decimals they print as when ``exact``, like a JSON number; as the kind
    the file holds when ``exact`` is None)."""
    from ..exceptions import ExactnessError
    from .reading import DENSE_MAX_ENTRIES
    from .npz import npz_is_exact, npz_sizes, read_npz

    source = str(path)
    states, tokens = npz_sizes(path)
    if exact is None:
        exact = npz_is_exact(path)
    if states > NPZ_MAX_DENSE_STATES:
        raise LimitError(f"{source}: {states} hidden states; models above {NPZ_MAX_DENSE_STATES} states are "
                         "checked by verify theorem 3.3|3.6 --hmm FILE (the large-model path), not loaded whole")
    # decided from the headers, before any array is read: the dense model's entries (A, W, pi0 and
    # at least one row of mu) against HMM.create's cap for the kind it is built as (exact files are
    # built exact, whatever is asked for)
    kind = "exact" if exact or npz_is_exact(path) else "float"
    entries = states * states + tokens * states + 2 * states
    if entries > DENSE_MAX_ENTRIES[kind]:
        raise LimitError(f"{source}: {states} hidden states x {tokens} tokens: A, W, pi0 and mu hold at least "
                         f"{entries:,} entries; a dense {kind} HMM holds at most {DENSE_MAX_ENTRIES[kind]:,}"
                         + (" (one Fraction per entry)" if kind == "exact" else "")
                         + "; verify theorem 3.3|3.6 --hmm FILE checks it through the large-model path")
    inst = read_npz(path)
    try:
        if inst.exact:
            arrays = [inst.fractions(k) for k in ("A", "W", "pi0", "mu")]
            model = HMM.create(*arrays, exact=True)
            return model if exact else model.to_float()
        model = HMM.create(*(inst.floats(k) for k in ("A", "W", "pi0", "mu")), exact=False)
        if not exact:
            return model
        try:
            return model.to_exact()
        except ExactnessError as exc:
            text = str(exc)
            inner = text.split("; the float model")[0].removeprefix("to_exact: ")
            hint = "" if "exact=False" in inner else "; load it with exact=False"
            raise ValidationError(f"{inner} (float64 entries read as the decimals they print as, like "
                                  f"JSON numbers){hint}") from None
    except InputError as exc:
        raise type(exc)(f"{source}: {exc}") from None


def instance_to_dict(model: HMM | MemoryHMM, *, witness: dict | None = None,
                     meta: dict | None = None) -> dict:
    """The SPEC section 3 dict of ``model`` (exact values as ``"p/q"`` strings)."""
    if isinstance(model, HMM):
        out: dict = {"kind": "hmm", "A": format_array(model.A), "W": format_array(model.W),
                     "pi0": format_array(model.pi0)}
    else:
        out = {"kind": "memory-hmm", "cells": model.cells, "memory_values": model.memory_values,
               "syntax_states": model.syntax_states, "A": format_array(model.A),
               "W": format_array(model.W), "pi0": format_array(model.pi0)}
        if model.pM_cells is not None:
            out["pM_cells"] = format_array(model.pM_cells)
        else:
            out["pM"] = format_array(model.pM)
        out["target_cell"] = model.target_cell
    if model.mu is not None:
        out["mu"] = format_array(model.mu)
    if witness is not None:
        out["witness"] = {k: (format_array(np.asarray(v, dtype=object)) if isinstance(v, (list, np.ndarray)) else v)
                          for k, v in witness.items()}
    if meta:
        out["meta"] = meta
    return out


def dumps_rows(value: Any, indent: int = 0) -> str:
    """JSON text of ``value`` with one row of a matrix per line: a list of numbers (or strings)
    stays on one line, containers of lists are indented, so a ``|H| x |H|`` matrix takes ``|H|``
    lines, not ``|H|^2``. The result is ordinary JSON (``json.loads`` reads it back).

    >>> print(dumps_rows({"A": [["1/2", 1], [0, "1/2"]], "mu": [1, -1]}))
    {
     "A": [
      ["1/2", 1],
      [0, "1/2"]
     ],
     "mu": [1, -1]
    }
    """
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(k))}: {dumps_rows(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value):
        items = [f"{inner}{dumps_rows(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value)


def instance_to_npz(model: HMM, *, witness: dict | None = None, sparse_below: float = 0.25) -> dict:
    """The entries of a ``.npz`` instance (:mod:`.npz`) of ``model``: exact models as int64
    numerators over one denominator per column (per vector), float models as float64; ``A`` and
    ``W`` sparse (CSC) when at most ``sparse_below`` of their entries are nonzero.

    Raises:
        InstanceFileError: a memory HMM (saved as JSON); LimitError: exact values beyond int64.
    """
    from .npz import exact_parts

    if not isinstance(model, HMM):
        raise InstanceFileError("a memory HMM is saved as JSON (.json); .npz holds vanilla HMMs")
    out: dict = {"kind": np.array("hmm")}

    def put(name: str, values, per_column: bool, may_be_sparse: bool) -> None:
        arr = np.asarray(values)
        if model.exact:
            data, den = exact_parts(arr, name=name, per_column=per_column and arr.ndim == 2)
            out[f"{name}.den"] = den
        else:
            data = np.asarray(arr, dtype=float)
        if may_be_sparse and np.count_nonzero(data) <= sparse_below * data.size:
            from scipy import sparse

            sp = sparse.csc_array(data)
            out.update({f"{name}.data": sp.data, f"{name}.indices": sp.indices.astype(np.int64),
                        f"{name}.indptr": sp.indptr.astype(np.int64),
                        f"{name}.shape": np.array(data.shape, dtype=np.int64), f"{name}.format": np.array("csc")})
        else:
            out[name] = data

    put("A", model.A, True, True)
    put("W", model.W, True, True)
    put("pi0", model.pi0, False, False)
    if model.mu is not None:
        put("mu", model.mu, True, False)
    for key, value in (witness or {}).items():
        if key == "theorem":
            out["witness.theorem"] = np.array(str(value))
        elif isinstance(value, (list, tuple, np.ndarray)) and key in ("u", "b"):
            # read as instance values are ("p/q" strings, decimals, Fractions), with their checks
            put(f"witness.{key}", as_array(value, exact=model.exact, name=f"witness.{key}"), True, False)
    return out


def save_instance(model: HMM | MemoryHMM, path: str | Path, *, witness: dict | None = None,
                  meta: dict | None = None) -> None:
    """Write ``model`` (and an optional witness) as an instance file that replays exactly: JSON
    with one row of each matrix per line (:func:`dumps_rows`; a float model's ``meta`` marked
    :data:`FLOAT_MARK`), or ``.npz`` by the extension (:func:`instance_to_npz`; vanilla HMMs).

    Raises:
        InstanceFileError: a memory HMM to an ``.npz`` path, or a file that cannot be written."""
    from .npz import is_npz, write_npz

    if is_npz(path):
        if not isinstance(model, HMM):
            raise InstanceFileError(f"{path}: a memory HMM is saved as JSON (the .npz format holds vanilla HMMs); "
                                    "use a .json path")
        write_npz(path, instance_to_npz(model, witness=witness), meta=meta)
        return
    if not model.exact:              # a float model's decimals miss 1 exactly: marked, it reloads as float
        meta = {**(meta or {}), FLOAT_MARK: "float64"}
    try:
        Path(path).write_text(dumps_rows(instance_to_dict(model, witness=witness, meta=meta)) + "\n")
    except OSError as exc:
        raise InstanceFileError(f"{path}: cannot write ({exc.strerror})") from None


register_file_io(save=save_instance, load=load_instance)      # HMM.save / HMM.load (vanilla.py, memory.py)
