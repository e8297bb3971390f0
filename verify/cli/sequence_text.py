"""Token sequences as the command line reads them (``verify posterior --seq``)."""

from __future__ import annotations

import re

from ...models.exceptions import SequenceError

__all__ = ["parse_sequence"]


def parse_sequence(text: str, num_tokens: int, *, name: str = "--seq") -> list[int]:
    """Tokens from ``"0 3 1 2"`` (spaces, commas or newlines).

    Raises:
        SequenceError: empty text, non-integers, or tokens outside ``0..num_tokens-1``.
    """
    stripped = text.strip()
    parts = re.split(r"\s*,\s*|\s+", stripped) if stripped else []
    if not parts:
        raise SequenceError(f"{name}: expected tokens such as \"0 3 1 2\", found nothing")
    tokens = []
    for pos, p in enumerate(parts):
        if not p:
            raise SequenceError(f"{name}: no token at position {pos} (two commas in a row, or a comma at an end)")
        if len(p) > 12 or not re.fullmatch(r"[+-]?[0-9]+", p):      # ASCII digits only (\d would read '١')
            shown = p if len(p) <= 24 else p[:20] + "..."
            raise SequenceError(f"{name}: {shown!r} at position {pos} is not an integer token in 0..{num_tokens - 1}")
        z = int(p)
        if not 0 <= z < num_tokens:
            raise SequenceError(f"{name}: token {z} at position {pos} is outside the vocabulary "
                                f"0..{num_tokens - 1}")
        tokens.append(z)
    return tokens
