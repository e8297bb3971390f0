"""The command line: ``python -m headprompt.certcheck FILE`` or ``--separation FILE FILE``; one
line out, exit 0 (accepted), 1 (rejected or vacuous) or 2 (unreadable, or the line could not be
written)."""

from __future__ import annotations

import os
import sys

from .certificate import check_file
from .outcomes import Rejected, Unreadable, Vacuous
from .reading import read_file, with_digits
from .separation import check_separation

__all__ = ["main", "printable", "ASCII_FALLBACKS"]

ASCII_FALLBACKS = {"∅": "{}", "⊙": "*", "†": "^+", "²": "^2"}
"""Every non-ASCII symbol the checker writes, and what it writes instead where the output
cannot encode it (``G_1({}, x)`` for ``G_1(∅, x)``)."""


def printable(line: str, stream) -> str:
    """``line`` as ``stream`` can encode it: unchanged when it can, else with
    :data:`ASCII_FALLBACKS` and any other character (a name from the file, a lone surrogate)
    as a backslash escape. So the exit code never depends on the terminal's encoding."""
    try:
        line.encode(getattr(stream, "encoding", None) or "ascii")
        return line
    except (UnicodeEncodeError, LookupError):
        for symbol, text in ASCII_FALLBACKS.items():
            line = line.replace(symbol, text)
        return line.encode("ascii", "backslashreplace").decode("ascii")


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    usage = ("usage: python -m headprompt.certcheck FILE | --separation FILE FILE   (exit 0 accepted, 1 rejected "
             "or vacuous, 2 unreadable)")
    if args and args[0] == "--separation":
        if len(args) != 3:
            return _emit(usage, 2, sys.stderr)
        return _run(lambda: with_digits(lambda: check_separation(read_file(args[1]), read_file(args[2]))),
                    " ".join(args[1:]))
    if len(args) != 1 or args[0] in ("-h", "--help"):
        asked = bool(args) and args[0] in ("-h", "--help")
        return _emit(usage, 0 if asked else 2, sys.stdout if asked else sys.stderr)
    return _run(lambda: check_file(args[0]), args[0])


def _run(work, what: str) -> int:
    try:
        line, code, stream = work(), 0, sys.stdout
    except Vacuous as exc:
        line, code, stream = f"rejected: vacuous: {exc}", 1, sys.stdout
    except Rejected as exc:
        line, code, stream = f"rejected: {exc}", 1, sys.stdout
    except (Unreadable, OSError, ValueError, RecursionError, MemoryError, TypeError, KeyError, IndexError,
            AttributeError) as exc:
        line, code, stream = f"unreadable: {what}: {str(exc)[:300]}", 2, sys.stderr
    return _emit(line, code, stream)


def _emit(line: str, code: int, stream) -> int:
    """Write the one line and return ``code``; if it cannot be written (a closed pipe, a full
    device) exit 2: a verdict nobody could read is not reported as one (0 and 1 are verdicts)."""
    try:
        print(printable(line, stream), file=stream)
        stream.flush()
        return code
    except (OSError, ValueError, AttributeError):
        _silence(stream)
    try:
        print("certcheck: cannot write the result (output closed or full)", file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        _silence(sys.stderr)
    return 2


def _silence(stream) -> None:
    """Point ``stream``'s descriptor at /dev/null, so the interpreter's last flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass
