"""Options shared by several subcommands (argparse only; nothing here computes)."""

from __future__ import annotations

import argparse

from ...models.exceptions import InputError
from ...models.hmm.rational import ascii_number_text
from ...models.hmm.rationalize import DEFAULT_MAX_DENOMINATOR, DEFAULT_PRUNE_BELOW
from ..checks.registry import THEOREM_IDS

__all__ = ["THEOREMS", "add_theorem_id", "add_instance_options", "add_rationalize_option", "add_json_option",
           "ascii_int", "ascii_float"]


def ascii_int(text: str) -> int:
    """argparse ``type`` for integer flags: ASCII digits only (``int()`` alone would also read
    ``'\uff13'``, ``'3_0'`` or ``' 3 '``); argparse turns the error into one line, exit 2."""
    try:
        ascii_number_text(text, name="integer")
        return int(text)
    except (InputError, ValueError):
        raise argparse.ArgumentTypeError(f"expected an integer in ASCII digits 0-9, found {ascii(text)}") from None


def ascii_float(text: str) -> float:
    """argparse ``type`` for decimal flags: an ASCII decimal (no ``nan``, ``inf``, ``'1_0'``)."""
    try:
        if "/" in text:
            raise ValueError(text)
        return float(ascii_number_text(text, name="number"))
    except (InputError, ValueError):
        raise argparse.ArgumentTypeError(f"expected a decimal number in ASCII digits 0-9, found {ascii(text)}") from None

def path_arg(text: str) -> str:
    """argparse ``type`` for file and folder flags: a nonempty path (an empty ``--hmm ''`` would
    otherwise read as the flag left out, and a generated instance be checked instead)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, found an empty string")
    return text


THEOREMS = THEOREM_IDS

RATIONALIZE_HELP = (f"convert a float (e.g. learned) instance to an exact one explicitly: entries below "
                    f"THRESHOLD (default {DEFAULT_PRUNE_BELOW:g}) become exact zeros, the rest are rounded "
                    f"to denominator {DEFAULT_MAX_DENOMINATOR} and renormalised exactly; the report says how "
                    "far the model moved and bounds the change of every posterior and G_i")


def add_theorem_id(p) -> None:
    p.add_argument("id", metavar="ID", help="the theorem: one of " + ", ".join(THEOREMS))


def add_json_option(p) -> None:
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout (for scripts)")


def add_instance_options(p, *, sizes: bool = True) -> None:
    """``--hidden --vocab --memory --cells`` (a generated instance's sizes), ``--seed``, ``--hmm``."""
    if sizes:
        p.add_argument("--hidden", type=ascii_int, default=None, metavar="N",
                       help="hidden states |H| of a generated instance, 1..16384; above 1000 the "
                            "block-sparse generator and the large path of theorems 3.3/3.6 (default 25; "
                            "memory HMMs: syntax states |S|, default 3)")
        p.add_argument("--vocab", type=ascii_int, default=None, metavar="K", help="tokens |X|, 1..10000 (default 10)")
        p.add_argument("--memory", type=ascii_int, default=None, metavar="M",
                       help="memory values |M|, 1..64 (memory theorems only)")
        p.add_argument("--cells", type=ascii_int, default=None, metavar="N",
                       help="memory cells, 1..8 (memory theorems only)")
    p.add_argument("--seed", type=ascii_int, default=0, help="seed of the generated instance and of the sampled "
                                                      "sequences (default 0)")
    p.add_argument("--hmm", metavar="FILE", default=None, type=path_arg,
                   help="check this instance file (JSON: kind, A, W, pi0, mu, ...) instead of generating one")


def threshold(text: str) -> float:
    """argparse ``type`` of ``--rationalize``: an ASCII decimal in ``[0, 1)``."""
    value = ascii_float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a pruning threshold in [0, 1), found {text}")
    return value


def add_rationalize_option(parser) -> None:
    """``--rationalize [THRESHOLD]``."""
    parser.add_argument("--rationalize", nargs="?", type=threshold, const=DEFAULT_PRUNE_BELOW, default=None,
                        metavar="THRESHOLD", help=RATIONALIZE_HELP)
