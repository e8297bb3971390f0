"""The ``verify`` command: argparse only. :mod:`.main` holds the entry point and the one guard
that maps exceptions to exit codes; each subcommand is one module here (beside :mod:`.options`, the shared argparse options, and
:mod:`.sequence_text`, the reading of ``--seq``) (``theorem``,
``assumptions``, ``counterexample``, ``posterior``, ``experiment``, ``symbolic``, ``explore``)
exposing ``add_parser(subparsers)`` and ``run(args) -> int``, and no subcommand imports another."""

from .main import main

__all__ = ["main"]
