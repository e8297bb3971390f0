"""``verify symbolic``: sympy proofs of Proposition 3.4, Claim A.1, Lemma B.2 and the head
identities of Theorems 3.3 and 3.6, as identities of rational functions in symbolic HMM
parameters, for every token sequence up to ``--length`` (see :mod:`headprompt.verify.symbolic.proofs`).

Exit code 0 when every requested statement holds, 1 otherwise, 2 for bad sizes or names.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..reports.render import console, emit_json
from ..symbolic.limits import MAX_PATH_WORK, MAX_SIZE, STATEMENTS, accepted_sizes
from .options import ascii_int

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``symbolic`` subcommand on ``subparsers``."""
    parser = subparsers.add_parser(
        "symbolic", help="prove the paper's HMM identities symbolically (sympy)",
        description="Prove Proposition 3.4, Claim A.1, Lemma B.2 and the head identities of "
                    "Theorems 3.3 and 3.6 as identities of rational functions in symbolic HMM "
                    "parameters, for every token sequence of length 1..T. Sizes: each of |H|, |X| and T "
                    f"in 1..{MAX_SIZE}, with at most {MAX_PATH_WORK:,} brute-force path terms "
                    "(sum over t <= T of |X|^t |H|^(t+3)); the largest accepted T per (|H|, |X|) is "
                    + ", ".join(f"({h}, {x}, {t})" for h, x, t in accepted_sizes())
                    + "; larger sizes are refused with exit 2.")
    # no argparse ``choices``: with nargs="*" it rejects the empty default; prove_all checks
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"statements to prove, among {', '.join(STATEMENTS)} (default all)")
    parser.add_argument("--hidden", type=ascii_int, default=2, metavar="N",
                        help=f"number of hidden states |H| (1..{MAX_SIZE} within the path-term limit, default 2)")
    parser.add_argument("--vocab", type=ascii_int, default=2, metavar="K",
                        help=f"vocabulary size |X| (1..{MAX_SIZE} within the path-term limit, default 2)")
    parser.add_argument("--length", type=ascii_int, default=3, metavar="T",
                        help=f"longest sequence length T (1..{MAX_SIZE} within the path-term limit, default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Prove the requested statements; 0 if all hold, 1 otherwise (InputError for bad sizes)."""
    names = list(dict.fromkeys(args.names)) or list(STATEMENTS)
    start = time.perf_counter()
    from ..symbolic.proofs import prove_all       # sympy: imported here, so that --help stays fast

    statements = prove_all(args.hidden, args.vocab, args.length, names)
    holds = all(r["holds"] for r in statements)
    result = {
        "command": "symbolic",
        "holds": holds,
        "sizes": {"hidden": args.hidden, "vocab": args.vocab, "length": args.length},
        "statements": statements,
        "seconds": round(time.perf_counter() - start, 3),
    }
    if args.json:
        emit_json(result)
    else:
        _render(result)
    return 0 if holds else 1


def _render(result: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    sizes = result["sizes"]
    table = Table(title=f"Symbolic proofs, |H| = {sizes['hidden']}, |X| = {sizes['vocab']}, "
                        f"sequences of length 1..{sizes['length']}")
    for column in ("statement", "verdict", "sequences", "side checks"):
        table.add_column(column)
    for r in result["statements"]:
        side = ", ".join(f"{k} {'ok' if v else 'FAILS'}" for k, v in r["checks"].items()
                         if k != "identity") or "-"
        verdict = "proved" if r["holds"] else "NOT proved"
        table.add_row(escape(r["name"]), verdict, str(r["sequences_checked"]), escape(side))
    out.print(table)
    for r in result["statements"]:
        out.print(f"[bold]{escape(r['statement'])}[/bold]")
        out.print(f"  {escape(r['what'])}", soft_wrap=False)
        if r["r_x"]:
            out.print(f"  r_x = {escape(r['r_x']['formula'])}")
        if r["failure"]:
            out.print(f"  failure: {escape(str(r['failure']))}")
    verdict = "all proved" if result["holds"] else "NOT all proved"
    out.print(f"{verdict} in {result['seconds']:.1f} s")
