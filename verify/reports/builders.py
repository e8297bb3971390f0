"""Which report builds and renders each theorem: :mod:`.vanilla` for Theorems 3.3 and 3.6 (and
:mod:`.scale` above 1,000 states or tokens, chosen there), :mod:`.memory` for 4.3, 4.6 and C.6.
The registry below (:mod:`headprompt.verify.checks.registry`) names each theorem's kind; the
choice of report, one floor up, is made here from that kind, and the report module is imported
on first use (a vanilla run never imports the memory report)."""

from __future__ import annotations

from types import ModuleType

from ..checks.registry import theorem_spec

__all__ = ["report_module", "build_report", "render_report"]


def report_module(theorem_id: str) -> ModuleType:
    """The module whose ``theorem(request) -> dict`` builds the report of ``theorem_id`` and whose
    ``render(data)`` prints it.

    Raises:
        InputError: an unknown theorem id.
    """
    if theorem_spec(theorem_id).memory:
        from . import memory as module
    else:
        from . import vanilla as module
    return module


def build_report(request) -> dict:
    """The report dict of one :class:`~.requests.TheoremRequest` (SPEC section 4)."""
    return report_module(request.id).theorem(request)


def render_report(data: dict) -> None:
    """Print a report dict readably (the text ``verify theorem`` prints)."""
    report_module(data["theorem"]).render(data)
