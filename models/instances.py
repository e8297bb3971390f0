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

from .exceptions import InputError, InstanceFileError
from .hmm import HMM, MemoryHMM
from .rational import format_array

__all__ = ["load_instance", "parse_instance", "instance_to_dict", "save_instance", "read_json"]

_HMM_KEYS = {"kind", "A", "W", "pi0", "mu", "witness", "meta"}
_MEMORY_KEYS = {"kind", "cells", "memory_values", "syntax_states", "A", "W", "pi0", "pM", "pM_cells",
                "mu", "target_cell", "witness", "meta"}


def read_json(path: str | Path) -> Any:
    """Parse a JSON file with numbers as :class:`Decimal` (exact).

    Raises:
        InstanceFileError: missing file or invalid JSON, naming the line and column.
    """
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise InstanceFileError(f"{path}: no such file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InstanceFileError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    try:
        return json.loads(text, parse_float=Decimal, parse_int=int,
                          parse_constant=lambda c: _reject_constant(path, c))
    except json.JSONDecodeError as exc:
        raise InstanceFileError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _reject_constant(path, name: str):
    raise InstanceFileError(f"{path}: {name} is not a number; instance files need finite values")


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
    conv = (lambda v: v) if exact else _floats     # float mode: exact decimals, then float64
    try:
        if kind == "hmm":
            return HMM.create(*(conv(data.get(k)) for k in ("A", "W", "pi0", "mu")), exact=exact)
        return MemoryHMM.create(data["cells"], data["memory_values"], data["syntax_states"],
                                conv(data["A"]), conv(data["W"]), conv(data["pi0"]), conv(data.get("pM")),
                                pM_cells=conv(data.get("pM_cells")), mu=conv(data.get("mu")),
                                target_cell=data.get("target_cell", 0), exact=exact)
    except InputError as exc:
        raise type(exc)(f"{source}: {exc}") from None


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


def _floats(values: Any) -> Any:
    if values is None:
        return None
    from .rational import fraction_array

    return fraction_array(values).astype(float)


def load_instance(path: str | Path, *, exact: bool = True) -> HMM | MemoryHMM:
    """Read an instance file (SPEC section 3); see :func:`parse_instance`."""
    return parse_instance(read_json(path), exact=exact, source=str(path))


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


def save_instance(model: HMM | MemoryHMM, path: str | Path, *, witness: dict | None = None,
                  meta: dict | None = None) -> None:
    """Write ``model`` (and an optional witness) as an instance file that replays exactly."""
    try:
        Path(path).write_text(json.dumps(instance_to_dict(model, witness=witness, meta=meta), indent=1) + "\n")
    except OSError as exc:
        raise InstanceFileError(f"{path}: cannot write ({exc.strerror})") from None
