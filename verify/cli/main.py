"""The ``verify`` command.

Each subcommand lives in its own module ``verify/cli/<name>.py`` exposing
``add_parser(subparsers)`` and ``run(args) -> int``. A subcommand builds a result dict and then
renders it (``--json``: one JSON object on stdout; otherwise a readable report). Bad input is
one line on stderr and exit code 2; set ``HEADPROMPT_DEBUG=1`` to see tracebacks.

Exit codes: 0 verified, 1 refuted, 3 an assumption fails (these three are
proofs, exact or certified), 2 bad input or usage, 4 internal error, 5 an uncertified (float)
result. One guard in :func:`main` maps every exception: an error the user caused
(:class:`InputError`, including :class:`LimitError`) is 2, a construction stopped by a failing
assumption (:class:`ConstructionError`) is 3, anything unexpected is 4 (never 1, which scripts
read as a refutation).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ...models.exceptions import AssumptionError, ConstructionError, InputError

__all__ = ["main", "build_parser", "SUBCOMMANDS", "EXIT_VERIFIED", "EXIT_REFUTED", "EXIT_USAGE",
           "EXIT_ASSUMPTION", "EXIT_INTERNAL", "EXIT_UNCERTIFIED"]

# subcommand name -> module under verify/cli/
SUBCOMMANDS = {
    "theorem": ".theorem",
    "assumptions": ".assumptions",
    "counterexample": ".counterexample",
    "posterior": ".posterior",
    "experiment": ".experiment",
    "symbolic": ".symbolic",
    "explore": ".explore",
    "statements": ".statements",
    "separate": ".separate",
}

EXIT_VERIFIED, EXIT_REFUTED, EXIT_USAGE, EXIT_ASSUMPTION, EXIT_INTERNAL, EXIT_UNCERTIFIED = 0, 1, 2, 3, 4, 5

# one-line help of each subcommand, so that usage errors need not import any subcommand
HELP = {
    "theorem": "verify a theorem on a generated or given instance",
    "assumptions": "check a theorem's assumptions on an instance",
    "counterexample": "a counterexample when an assumption is dropped (certificates)",
    "posterior": "exact or float posterior and conditionals G_i(x)",
    "experiment": "Figure 3: MLM vs exact G, head vs prompt vs attention tuning",
    "symbolic": "symbolic proofs of the theorems' identities",
    "explore": "property-based search for counterexamples (behind verify counterexample)",
    "statements": "every numbered statement of the paper: how checked, result now",
    "separate": "head vs prompt tuning (and attention) on one instance, with certificates",
}


class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse hook
        raise InputError(f"{self.prog}: {message}")


DESCRIPTION = ("Run, check and break the head- and prompt-tuning theorems of Wei, Xie and Ma (NeurIPS "
               "2021) on concrete hidden Markov models: exact proofs, certificates when an assumption "
               "fails, and Figure 3 on a pretrained masked language model.")
EPILOG = ("exit codes: 0 verified, 1 refuted, 3 an assumption fails (these three are proofs), 2 bad "
          "input, 4 internal error (a bug; HEADPROMPT_DEBUG=1 shows the traceback), 5 an uncertified "
          "(float) result. Run 'verify COMMAND --help' for the options of a command.")


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("headprompt")
    except metadata.PackageNotFoundError:       # a checkout that was never installed
        from ... import __version__

        return __version__


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``only``, the named subcommand's module alone is imported (the
    others stay placeholders), so that ``verify posterior`` does not pay for torch or sympy."""
    parser = _OneLineParser(prog="verify", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"verify (headprompt) {_version()}",
                        help="print the package version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    for name, module_name in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=HELP.get(name))
            continue
        importlib.import_module(module_name, __package__).add_parser(sub)
    return parser


def _requested(argv: list[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in SUBCOMMANDS else ""      # "": no subcommand module is imported


def main(argv: list[str] | None = None) -> int:
    """Run ``verify`` with ``argv`` and return its exit code; every exception is mapped here."""
    debug = bool(os.environ.get("HEADPROMPT_DEBUG"))
    argv = sys.argv[1:] if argv is None else list(argv)
    # exact values may have any number of digits (the input limits bound them); Python's
    # default 4,300-digit int->str limit would otherwise turn a long exact result into a crash
    sys.set_int_max_str_digits(0)
    if sys.stdout is None:                  # started with stdout closed (`>&-`): no verdict could be read
        _say("error: cannot write the output: standard output is closed")
        return EXIT_USAGE
    try:
        if not argv:                        # bare `verify`: the commands, on stderr, exit 2 (a usage error)
            try:
                build_parser("").print_help(sys.stderr)
            except (OSError, ValueError, AttributeError):
                _silence(sys.stderr)
            return EXIT_USAGE
        args = build_parser(_requested(argv)).parse_args(argv)
        code = int(args.run(args))
        sys.stdout.flush()                  # a full or closed stdout fails here, inside the guard
    except InputError as exc:
        if debug:
            raise
        _say(f"error: {_one_line(exc)}")
        return EXIT_USAGE
    except (ConstructionError, AssumptionError) as exc:
        # the exact construction stopped because an assumption fails on the instance (a fact,
        # decided exactly), reached outside a report that would say so: exit 3, one line
        if debug:
            raise
        _say(f"error: an assumption fails: {_one_line(exc)}")
        return EXIT_ASSUMPTION
    except (BrokenPipeError, OSError) as exc:
        if not _stdout_failed(exc):
            if debug:
                raise
            _say(f"error: internal error: {exc.__class__.__name__}: {_one_line(exc)[:300]} (a bug; run again "
                  "with HEADPROMPT_DEBUG=1 for the traceback)")
            return EXIT_INTERNAL
        _silence(sys.stdout)
        _say(f"error: cannot write the output: {exc.strerror or _one_line(exc)} (standard output is "
              "closed or full)")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("error: interrupted")
        return 130
    except SystemExit as exc:                  # argparse --help / --version (code 0)
        code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
        return code if code in (0, EXIT_USAGE) else EXIT_INTERNAL     # never 1: that is a refutation
    except BaseException as exc:               # noqa: BLE001 - the one guard (SPEC exit code 4)
        if debug:
            raise
        kind = "internal error" if not isinstance(exc, MemoryError) else "internal error (out of memory)"
        _say(f"error: {kind}: {exc.__class__.__name__}: {_one_line(exc)[:300]} (a bug; run again with "
              "HEADPROMPT_DEBUG=1 for the traceback)")
        return EXIT_INTERNAL
    return code


def _stdout_failed(exc: OSError) -> bool:
    """A write to stdout failed: a closed pipe (EPIPE) or a full device (ENOSPC, e.g.
    ``> /dev/full``). Other OS errors (a file the program could not read) are not this."""
    import errno

    return isinstance(exc, BrokenPipeError) or exc.errno in (errno.EPIPE, errno.ENOSPC, errno.EBADF)


def _silence(stream) -> None:
    """Point ``stream``'s descriptor at /dev/null so the interpreter's final flush does not fail
    again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _say(line: str) -> None:
    """The one error line on stderr; if stderr itself is closed or full the exit code alone
    speaks (an exception here would end the process with exit 1, a refutation's code)."""
    try:
        print(line, file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        _silence(sys.stderr)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or exc.__class__.__name__


if __name__ == "__main__":
    sys.exit(main())
