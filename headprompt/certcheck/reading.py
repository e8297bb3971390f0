"""Strict reading of a certificate file: a regular file within the size limit, ASCII JSON with
no duplicate keys, no floats or constants, no ``\\u`` escape of a printable ASCII character, and
the digits of every number bounded (on the raw bytes) before any is parsed."""

from __future__ import annotations

import json
import os
import re
import stat
import sys

from .outcomes import Unreadable
from .work import LIMITS, parse_work

__all__ = ["FORMAT", "VERSION", "Reader", "READER", "loads", "read_file", "with_digits", "unicode_text"]


FORMAT = "headprompt-certificate"
VERSION = 2


_ASCII_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u00[2-7][0-9a-fA-F]")
"""A ``\\u`` escape of a printable ASCII character (``"\\u0031"`` for ``"1"``): no JSON writer
needs one, and it would let a number or a name be spelled two ways."""


class Reader:
    """Strict JSON: no duplicate keys, no floats or constants, bounded digits and nesting."""

    def __init__(self):
        self.work = 0

    def reset(self) -> None:
        """Start counting the digits of a new file."""
        self.work = 0

    def digits(self, n: int, where: str) -> None:
        if n > LIMITS["number_digits"]:
            raise Unreadable(f"{where}: a number of {n} digits is over the limit of {LIMITS['number_digits']}")
        self.work += n * n
        if self.work > LIMITS["digit_work"]:
            raise Unreadable("the numbers of this file are over the total digit limit")

    def parse_int(self, text: str) -> int:
        if text == "-0":
            raise Unreadable("the JSON integer -0 is not canonical (write 0)")
        self.digits(len(text.lstrip("-")), "a JSON integer")
        return int(text)

    @staticmethod
    def parse_float(text: str):
        raise Unreadable(f"the JSON number {text[:40]} is not an integer: rationals are strings like \"3/7\"")

    @staticmethod
    def parse_constant(text: str):
        raise Unreadable(f"{text} is not a number")

    @staticmethod
    def pairs(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise Unreadable(f"duplicate key {key!r}")
            out[key] = value
        return out


READER = Reader()


_FORMAT_FIELD = re.compile(rb'"format"\s*:\s*"' + re.escape(FORMAT.encode()) + rb'"')
_KIND_FIELD = re.compile(rb'"kind"\s*:\s*"(?:hmm|memory-hmm)"')


def loads(data: bytes | str):
    """Parse a certificate's bytes strictly (ASCII JSON; see :class:`Reader`); the digits of
    the whole file are bounded before any number is parsed."""
    if isinstance(data, str):
        try:
            data = data.encode("ascii")
        except UnicodeEncodeError:
            raise Unreadable("not ASCII: a certificate is ASCII JSON (verify writes it so)") from None
    if len(data) > LIMITS["file_bytes"]:
        raise Unreadable(f"over {LIMITS['file_bytes']} bytes")
    escape = _ASCII_ESCAPE.search(data)
    if escape:
        shown = "\\u" + escape.group()[-4:].decode()
        raise Unreadable(f"the escape {shown} spells a printable ASCII character: write the character itself")
    work = parse_work(data)
    if work > LIMITS["digit_work"]:
        raise Unreadable(f"its numbers need {work} digit² units of parsing, over the limit of {LIMITS['digit_work']} "
                         "(the sum over digit runs of their length squared)")
    try:
        data = data.decode("ascii")
    except UnicodeDecodeError:
        raise Unreadable("not ASCII: a certificate is ASCII JSON (verify writes it so)") from None
    READER.reset()
    try:
        return json.loads(data, object_pairs_hook=Reader.pairs, parse_int=READER.parse_int,
                          parse_float=Reader.parse_float, parse_constant=Reader.parse_constant)
    except RecursionError:
        raise Unreadable("nesting too deep") from None
    except ValueError as exc:
        raise Unreadable(f"not JSON: {str(exc)[:200]}") from None


def read_file(path: str):
    """The parsed certificate at ``path``: a regular file, at most ``LIMITS["file_bytes"]``."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise Unreadable(exc.strerror or "cannot stat") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable("not a regular file")
    if info.st_size > LIMITS["file_bytes"]:
        raise Unreadable(f"{info.st_size} bytes, over the limit of {LIMITS['file_bytes']}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Unreadable(exc.strerror or "cannot open") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable("not a regular file")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > LIMITS["file_bytes"]:
                raise Unreadable(f"over the limit of {LIMITS['file_bytes']} bytes")
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if not _FORMAT_FIELD.search(data):      # before any number is judged: say what the file is not
        hint = ("; this looks like an instance file (it has \"kind\"): verify theorem ... --certificate FILE "
                "writes a certificate of a check" if _KIND_FIELD.search(data) else "")
        raise Unreadable(f"not a certificate: no \"format\": \"{FORMAT}\" field{hint}")
    return loads(data)


def with_digits(work):
    """Run ``work`` with Python's limit on int-string digits lifted (certificates hold long
    exact numbers; their size is bounded by the documented limits instead)."""
    old = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    if old is not None:
        sys.set_int_max_str_digits(0)
    try:
        return work()
    finally:
        if old is not None:
            sys.set_int_max_str_digits(old)


def unicode_text(cert) -> None:
    """Refuse a lone surrogate (``"\\ud800"``, which JSON can escape but no Unicode text holds) in
    any key or string of a parsed certificate: a format error, found before any claim is judged,
    whether the file would be accepted or rejected otherwise."""
    stack = [cert]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                stack.append(key)
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                bad = next(c for c in item if 0xD800 <= ord(c) <= 0xDFFF)
                raise Unreadable(f"a lone surrogate \\u{ord(bad):04x} in a string: not Unicode text") from None
