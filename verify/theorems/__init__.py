"""Theorem checks and reports, one folder per family: :mod:`.vanilla` (Theorems 3.3, 3.6) and
:mod:`.memory` (Theorems 4.3, 4.6, C.6), each with ``assumptions``, ``check`` (the checker) and
``report`` (orchestration and rendering). :mod:`.registry` maps every theorem id to them;
:mod:`.requests` holds the typed request the CLI and the Python API both build."""
