"""Options shared by several subcommands (argparse only; nothing here computes)."""

from __future__ import annotations

from ...models.hmm.rationalize import DEFAULT_MAX_DENOMINATOR, DEFAULT_PRUNE_BELOW
from ..theorems.registry import THEOREM_IDS

__all__ = ["THEOREMS", "add_theorem_id", "add_instance_options", "add_rationalize_option", "add_json_option"]

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
        p.add_argument("--hidden", type=int, default=None, metavar="N",
                       help="hidden states |H| of a generated instance, 1..1000 (default 25; memory HMMs: "
                            "syntax states |S|, default 3)")
        p.add_argument("--vocab", type=int, default=None, metavar="K", help="tokens |X|, 1..1000 (default 10)")
        p.add_argument("--memory", type=int, default=None, metavar="M",
                       help="memory values |M|, 1..64 (memory theorems only)")
        p.add_argument("--cells", type=int, default=None, metavar="N",
                       help="memory cells, 1..8 (memory theorems only)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated instance and of the sampled "
                                                      "sequences (default 0)")
    p.add_argument("--hmm", metavar="FILE", default=None,
                   help="check this instance file (JSON: kind, A, W, pi0, mu, ...) instead of generating one")


def add_rationalize_option(parser) -> None:
    """``--rationalize [THRESHOLD]``."""
    parser.add_argument("--rationalize", nargs="?", type=float, const=DEFAULT_PRUNE_BELOW, default=None,
                        metavar="THRESHOLD", help=RATIONALIZE_HELP)
