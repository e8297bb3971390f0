"""The ``verify`` command, the top floor of ``verify`` (docs/architecture.md): argparse and exit
codes. :mod:`.main` holds the entry point and the one guard that maps exceptions to exit codes;
each subcommand is one module here (``theorem``, ``assumptions``, ``counterexample``,
``posterior``, ``experiment``, ``symbolic``, ``explore``, ``separate``, ``statements``) exposing
``add_parser(subparsers)`` and ``run(args) -> int``, and no subcommand imports another; they
share :mod:`.options` (argparse options and types) and :mod:`.sequence_text` (reading ``--seq``)."""

from .main import main

__all__ = ["main"]
