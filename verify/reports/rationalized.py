"""``--rationalize [THRESHOLD]``: check a float (learned) instance through the explicit,
reported conversion of :func:`headprompt.models.hmm.rationalize.rationalize`.

Shared by ``verify theorem``, ``verify assumptions`` and ``verify posterior``: loading a file
that is exact or float, and the ``"rationalized"`` block of a report (the option itself is in
:mod:`headprompt.verify.cli.main.common`).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from ...models.exceptions import ValidationError
from ...models.hmm.values import HMM, MemoryHMM
from ...models.hmm.rationalize import Rationalization, rationalize

__all__ = ["rationalized_source", "hinting_float_models"]

def rationalized_source(source: Any, prune_below: float | None, *,
                        mode: str | None = None) -> tuple[Any, Rationalization | None]:
    """``(source, None)`` without a threshold; otherwise ``(exact model, rationalization)`` for
    an instance file (read exactly when it is, else as floats) or an instance object.

    In ``mode="float"`` (a run that proves nothing) a float instance is accepted without a
    threshold, as ``verify posterior --mode float`` accepts it: its entries are read as the
    binary rationals they are and each column is renormalised exactly (nothing pruned or
    rounded), and the returned rationalization reports how far that moved it.

    Raises:
        InputError: an unreadable file, or a threshold outside ``[0, 1)``.
    """
    if prune_below is None and mode == "float" and source is not None:
        model = source if isinstance(source, (HMM, MemoryHMM)) else _load_either(source)
        if model.exact:
            return model, None
        r = rationalize(model, prune_below=0, max_denominator=None)
        return r.model, r
    if prune_below is None:
        return source, None
    if isinstance(source, (HMM, MemoryHMM)):
        model = source
    else:
        model = _load_either(source)
    r = rationalize(model, prune_below=prune_below)
    return r.model, r


def _load_either(path: Any) -> HMM | MemoryHMM:
    """An instance file read exactly when it is exact, else as floats."""
    from ...models.hmm.files import load_instance

    try:
        return load_instance(path, exact=True)
    except ValidationError as exc:               # columns that miss 1 as decimals: a float model
        try:
            return load_instance(path, exact=False)
        except ValidationError:
            raise exc from None                  # not a float model either: the exact reading's reason


@contextmanager
def hinting_float_models(prune_below: float | None) -> Iterator[None]:
    """Re-raise "column ... sums to ..." errors of an exact load with a pointer to
    ``--rationalize`` (a float model, e.g. a learned one, rarely sums to exactly 1)."""
    try:
        yield
    except ValidationError as exc:
        if prune_below is None and "sums to" in str(exc):
            raise ValidationError(f"{exc}; for a float (e.g. learned) model add --rationalize [THRESHOLD], "
                                  "an explicit, reported conversion") from None
        raise
