"""Input limits decided from the input's size before any work (SPEC section 2).

Every limit here is checked on sizes alone (digit counts, state counts), before a number is
expanded or an array is allocated, so that what the toolkit accepts it finishes. Each check
raises :class:`~.exceptions.LimitError` whose message names the limit that was hit and the
way forward (a smaller size, another mode).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, InvalidOperation

import stat
from pathlib import Path

from ..exceptions import InstanceFileError, LimitError

__all__ = ["loads_strict", "check_regular_file", "MAX_DIGITS", "MAX_NESTING", "MAX_FILE_BYTES", "MAX_NPZ_BYTES", "MAX_NPZ_ENTRIES", "MAX_LIFTED_STATES", "number_digits",
           "check_number_text", "check_string_number", "lifted_state_count", "check_lifted_states", "FLOAT_TOLERANCE"]

# a float model's stochastic vectors must sum to 1 within this (exact models: exactly)
FLOAT_TOLERANCE = 1e-9

MAX_DIGITS = 4000
"""Digits of one exact number in an instance file (numerator and denominator each)."""

MAX_NESTING = 32
"""JSON nesting depth of an instance or witness file (a valid file needs at most 5)."""

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Size of an instance, witness or sequence file."""

MAX_NPZ_BYTES = 16 * 2 ** 30
"""Size of a ``.npz`` instance file (:mod:`.npz`)."""

MAX_NPZ_ENTRIES = 600_000_000
"""Array entries (all arrays together) of a ``.npz`` instance, read from its headers first."""

MAX_LIFTED_STATES = {"exact": 400, "float": 4096}
"""States ``|M|^N N |S|`` of a memory HMM's lifted chain, per arithmetic."""


def number_digits(value: Decimal) -> int:
    """Decimal digits of the exact rational a finite :class:`Decimal` stands for: digits of the
    coefficient plus the power of ten (numerator for a positive exponent, denominator for a
    negative one), computed from the exponent alone.

    >>> number_digits(Decimal("1e-5000")), number_digits(Decimal("0.25"))
    (5001, 4)
    """
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):           # NaN / infinity: refused elsewhere
        return 0
    return len(digits) + abs(exponent)


def _shown(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}...{text[-8:]} ({len(text)} characters)"


def check_number_text(text: str, *, where: str) -> Decimal | int:
    """A JSON number's text read exactly, refusing numbers beyond :data:`MAX_DIGITS` digits
    before their value is expanded (``1e999999999``, a 5,000-digit integer).

    Raises:
        LimitError: naming the number, the digits it needs and the limit.
    """
    if re.fullmatch(r"-?\d+", text):
        if len(text.lstrip("-")) > MAX_DIGITS:
            raise LimitError(f"{where}: the integer {_shown(text)} has {len(text.lstrip('-'))} digits; the limit "
                             f"is {MAX_DIGITS} digits per number (scale the values down or write 'p/q')")
        return int(text)
    value = Decimal(text)
    need = number_digits(value)
    if need > MAX_DIGITS:
        raise LimitError(f"{where}: the number {_shown(text)} would need {need} digits exactly; the limit is "
                         f"{MAX_DIGITS} digits per number (write a shorter decimal or 'p/q')")
    return value


def check_string_number(text: str, *, where: str) -> None:
    """Refuse a numeric string (``"p/q"`` or a decimal) whose exact value needs more than
    :data:`MAX_DIGITS` digits; other strings pass (their meaning is checked where used)."""
    t = text.strip()
    if "/" in t:
        parts = t.split("/")
        if len(parts) == 2 and all(re.fullmatch(r"[+-]?\d+", p.strip()) for p in parts):
            longest = max(len(p.strip().lstrip("+-")) for p in parts)
            if longest > MAX_DIGITS:
                raise LimitError(f"{where}: the rational {_shown(t)} has a {longest}-digit part; the limit is "
                                 f"{MAX_DIGITS} digits per number")
        return
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", t):
        return
    try:
        value = Decimal(t)
    except InvalidOperation:
        return
    need = number_digits(value)
    if need > MAX_DIGITS:
        raise LimitError(f"{where}: the number {_shown(t)} would need {need} digits exactly; the limit is "
                         f"{MAX_DIGITS} digits per number (write a shorter decimal or 'p/q')")


def lifted_state_count(memory_values: int, cells: int, syntax_states: int, *, cap: int) -> int:
    """``|M|^N N |S|``, or ``cap + 1`` as soon as it is known to exceed ``cap`` (no huge power
    is computed for ``N = 10**9``).

    >>> lifted_state_count(3, 2, 3, cap=400), lifted_state_count(2, 10**9, 1, cap=400)
    (54, 401)
    """
    total = cells * syntax_states
    if total > cap:
        return cap + 1
    for _ in range(cells):
        total *= memory_values
        if total > cap:
            return cap + 1
    return total


def check_lifted_states(memory_values: int, cells: int, syntax_states: int, *, mode: str,
                        where: str, given: str | None = None, float_hint: bool = True) -> int:
    """The lifted chain's size, refusing one beyond :data:`MAX_LIFTED_STATES` for ``mode``.

    Raises:
        LimitError: naming ``|M|^N N |S|`` and the limit, with the way forward.
    """
    cap = MAX_LIFTED_STATES["float" if mode == "float" else "exact"]
    count = lifted_state_count(memory_values, cells, syntax_states, cap=cap)
    if count <= cap:
        return count
    magnitude = cells * math.log10(max(memory_values, 1)) + math.log10(cells * syntax_states)
    shown = (f"{memory_values ** cells * cells * syntax_states}" if magnitude < 18
             else f"about 10^{int(magnitude)}")
    what = given or f"memory_values {memory_values}, cells {cells}, syntax_states {syntax_states}"
    hint = ("; verify posterior --mode float allows " + str(MAX_LIFTED_STATES["float"])
            if mode != "float" and float_hint else "")
    raise LimitError(f"{where}: {what}: the lifted chain would have |M|^N N |S| = {memory_values}^{cells} x "
                     f"{cells} x {syntax_states} = {shown} states; the limit in {mode if mode == 'float' else 'exact'} "
                     f"mode is {cap}{hint} (use fewer cells, memory values or syntax states)")


def check_regular_file(path, *, what: str, limit: int) -> int:
    """The size of ``path``, refused before it is opened when it is missing, a directory, not a
    regular file (a named pipe would block, a device never ends) or over ``limit`` bytes.

    Raises:
        InstanceFileError: missing, a directory, not a regular file, unreadable.
        LimitError: larger than ``limit``.
    """
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        raise InstanceFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise InstanceFileError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InstanceFileError(f"{path}: is a directory, expected a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise InstanceFileError(f"{path}: not a regular file (a pipe or device); save it to a regular file first")
    if info.st_size > limit:
        raise LimitError(f"{path}: {info.st_size} bytes; the limit for a {what} is {limit} bytes")
    return info.st_size


def loads_strict(text: str, where: str, *, number, depth_note: str = ""):
    """JSON text read under the input limits, the one strict reader of instance files and of a
    ``.npz`` file's ``meta``: nesting up to :data:`MAX_NESTING` (decided on the text, without
    recursion), every number through ``number`` (e.g. :func:`check_number_text`), no NaN or
    infinity, no key twice in one object, no numeric string beyond :data:`MAX_DIGITS`.

    Raises:
        LimitError: nesting; InstanceFileError: NaN, infinity, a repeated key;
        json.JSONDecodeError: not JSON (the caller names the file).
    """
    if _max_depth(text) > MAX_NESTING:
        raise LimitError(f"{where}: JSON nested more than {MAX_NESTING} deep; the limit is {MAX_NESTING}{depth_note}")
    try:
        data = json.loads(text, parse_float=number, parse_int=number,
                          parse_constant=lambda c: _reject_constant(where, c),
                          object_pairs_hook=lambda pairs: _no_duplicates(where, pairs))
    except RecursionError:
        raise LimitError(f"{where}: JSON nested too deeply; the limit is {MAX_NESTING}") from None
    _check_strings(data, where)
    return data


def _reject_constant(where, name: str):
    raise InstanceFileError(f"{where}: {name} is not a number; instance files need finite values")


def _max_depth(text: str) -> int:
    """The deepest bracket nesting of JSON text, skipping strings (no parsing, no recursion)."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > MAX_NESTING:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def _no_duplicates(where, pairs: list) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise InstanceFileError(f"{where}: the key {key!r} appears twice in one object; "
                                    "keep one (JSON leaves which one counts open)")
        out[key] = value
    return out


def _check_strings(data, where: str) -> None:
    """Refuse numeric strings (``"p/q"``, decimals) beyond the digit limit (iterative walk)."""
    stack = [data]
    while stack:
        obj = stack.pop()
        if isinstance(obj, str):
            check_string_number(obj, where=where)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list):
            stack.extend(obj)
