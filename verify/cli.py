"""The ``verify`` command (SPEC section 4).

Each subcommand lives in its own module ``verify/cmd_<name>.py`` exposing
``add_parser(subparsers)`` and ``run(args) -> int``. A subcommand builds a result dict and then
renders it (``--json``: one JSON object on stdout; otherwise a readable report). Bad input is
one line on stderr and exit code 2; set ``HEADPROMPT_DEBUG=1`` to see tracebacks.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..models.exceptions import InputError

__all__ = ["main", "build_parser", "SUBCOMMANDS"]

# subcommand name -> module under verify/
SUBCOMMANDS = {
    "theorem": ".cmd_theorem",
    "assumptions": ".cmd_assumptions",
    "counterexample": ".cmd_counterexample",
    "posterior": ".cmd_posterior",
    "experiment": ".cmd_experiment",
    "symbolic": ".cmd_symbolic",
    "explore": ".cmd_explore",
}

EXIT_VERIFIED, EXIT_REFUTED, EXIT_USAGE, EXIT_ASSUMPTION, EXIT_INTERNAL = 0, 1, 2, 3, 4


class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse hook
        raise InputError(f"{self.prog}: {message}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``only``, the named subcommand's module alone is imported (the
    others stay placeholders), so that ``verify posterior`` does not pay for torch or sympy."""
    parser = _OneLineParser(prog="verify", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    for name, module_name in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        importlib.import_module(module_name, __package__).add_parser(sub)
    return parser


def _requested(argv: list[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: list[str] | None = None) -> int:
    debug = bool(os.environ.get("HEADPROMPT_DEBUG"))
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(_requested(argv)).parse_args(argv)
        return int(args.run(args))
    except InputError as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:                      # a bug (InternalError or unforeseen): never exit 1
        if debug:
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (a bug; set HEADPROMPT_DEBUG=1 for the "
              "traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
