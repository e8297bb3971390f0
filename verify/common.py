"""Helpers shared by the ``verify`` subcommands: argument parsing of sequences and modes."""

from __future__ import annotations

import re

from models.exceptions import SequenceError

__all__ = ["parse_sequence", "MODES"]

MODES = ("exact", "certified", "float")


def parse_sequence(text: str, num_tokens: int) -> list[int]:
    """Tokens from ``"0 3 1 2"`` (spaces or commas).

    Raises:
        SequenceError: empty text, non-integers, or tokens outside ``0..num_tokens-1``.
    """
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if not parts:
        raise SequenceError("--seq: expected tokens such as \"0 3 1 2\", found nothing")
    tokens = []
    for pos, p in enumerate(parts):
        if not re.fullmatch(r"[+-]?\d+", p):
            raise SequenceError(f"--seq: {p!r} at position {pos} is not an integer token")
        z = int(p)
        if not 0 <= z < num_tokens:
            raise SequenceError(f"--seq: token {z} at position {pos} is outside the vocabulary "
                                f"0..{num_tokens - 1}")
        tokens.append(z)
    return tokens
