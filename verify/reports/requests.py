"""Typed requests of the report layer: what ``verify theorem`` is asked to do, as a frozen
dataclass validated once. The CLI builds one from its arguments; ``headprompt.check`` builds one
from keyword arguments; the report builders read nothing else (STYLE 8)."""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass, field, fields
from types import SimpleNamespace
from typing import Any

from ...models.exceptions import InputError

from .flags import check_theorem_flags
from ..checks.registry import theorem_spec

__all__ = ["TheoremRequest", "MODES", "PATHS", "SIZE_LIMITS", "MAX_CLASSES", "DETAILS"]

DETAILS = "_details"
"""Key under which a report builder leaves the checked model, witness and sequences for
:meth:`~headprompt.verify.api.TheoremReport.rows`; :func:`~headprompt.verify.api.run_theorem`
removes it, so it never reaches JSON. (Here, beside the request the builders read, so that they
need not import the API above them.)"""

MODES = ("exact", "certified", "float")
PATHS = ("auto", "dense", "large")

# option -> (smallest, largest) accepted value; decided before any work (SPEC section 2)
DEFAULTS = {"vocab": 10, "samples": 10_000}
"""Defaults filled in after the options that do not apply were refused (an option left out is
``None`` until then, so a default is never blamed on the user)."""

SIZE_LIMITS = {"hidden": (1, 16384), "vocab": (1, 10000), "samples": (0, 1_000_000), "length": (1, 4096),
               "memory": (1, 64), "cells": (1, 8),
               "classes": (2, 16)}
MAX_CLASSES = SIZE_LIMITS["classes"][1]


@dataclass(frozen=True)
class TheoremRequest:
    """The inputs of one theorem check (SPEC section 4, ``verify theorem``).

    ``hmm`` is the path of an instance file, ``model`` an instance object (Python API); with
    neither, an instance of the requested sizes is generated from ``seed``. ``witness`` is the
    path of a witness file (the given head and prompt are then checked instead of the
    constructed ones). ``mode`` ``None`` (the default) is exact arithmetic, or certified
    arithmetic where exact would exceed the time limit (:func:`headprompt.verify.runtime.cost.check_work`).
    ``out`` saves the checked instance with its witness. ``rationalize``
    (a pruning threshold) converts a float instance to an exact one explicitly and reports
    how far it moved (:func:`headprompt.models.hmm.rationalize.rationalize`). ``classes``
    ``k`` (2..:data:`MAX_CLASSES`) generates a task with ``k`` classes (``mu`` a ``k``-row
    matrix, ``F* = argmax_c mu_c . p``); a given instance's ``mu`` fixes its classes.

    Raises:
        InputError: an unknown theorem or mode, a size outside :data:`SIZE_LIMITS`, both
            ``hmm`` and ``model``, a negative seed, or ``classes`` outside 2..16 or with a
            given instance.
    """

    id: str
    hidden: int | None = None
    vocab: int | None = None
    memory: int | None = None
    cells: int | None = None
    seed: int = 0
    hmm: str | None = None
    model: Any = None
    witness: str | None = None
    samples: int | None = None
    exhaustive: bool = False
    length: int | None = None
    mode: str | None = None
    out: str | None = None
    rationalize: float | None = None
    classes: int | None = None
    certificate: str | None = None
    """Write a certificate of the verdict to this path (checked by ``python -m headprompt.certcheck``)."""
    ray: str | None = None
    """Split the sequence checks of the large-model path into Ray tasks: ``"local"`` starts a
    local Ray instance, else the address of a cluster (``host:port``)."""
    path: str = "auto"
    """Which check path runs a 3.3/3.6 request on a given instance: ``"auto"`` (the cost model's
    choice, :mod:`headprompt.verify.reports.routing`), ``"dense"`` (every entry a Fraction; its
    report carries the robustness block) or ``"large"`` (the sparse exact form)."""
    progress: bool | None = None
    """Show progress on stderr (a bar on a terminal, lines in a log); default: on for the
    command line without ``--json``, off in Python."""
    python: bool = field(default=False, repr=False, compare=False)
    """Built from Python keywords (:meth:`from_options`): messages then name ``hidden=``, not
    ``--hidden``."""

    def option(self, name: str) -> str:
        """How the user wrote option ``name``: ``--name`` on the command line, ``name=`` in Python."""
        return f"{name}=" if self.python else f"--{name.replace('_', '-')}"

    def shown(self, name: str, value: Any) -> str:
        """Option and value as the user wrote them: ``--hidden 5`` or ``hidden=5`` (a value whose
        repr spans lines or runs long, such as a pandas Series, shortened to one line; a path, up to 4,096
        characters, is kept whole so that a command quoting it can be copied)."""
        text = repr(value)
        path_like = isinstance(value, (str, os.PathLike)) and len(text) <= 4096     # a path to copy: whole
        if "\n" in text or (len(text) > 80 and not path_like):
            text = f"<{type(value).__name__}>" if "\n" in text else text[:60] + "..."
        return f"{name}={text}" if self.python else f"--{name.replace('_', '-')} {text}"

    def __post_init__(self) -> None:
        if self.progress is None:
            object.__setattr__(self, "progress", not self.python)
        self._normalise_types()
        theorem_spec(self.id)
        if self.path not in PATHS:
            raise InputError(f"{self.shown('path', self.path)}: expected one of {', '.join(PATHS)}")
        if self.path != "auto" and theorem_spec(self.id).memory:
            raise InputError(f"{self.shown('path', self.path)} applies to theorems 3.3 and 3.6 (a memory HMM has "
                             f"one path)")
        if self.path != "auto" and self.hmm is None and self.model is None:
            raise InputError(f"{self.option('path')} applies to a given instance (hmm or model); a generated "
                             f"instance's path follows its size")
        if self.mode is not None and self.mode not in MODES:
            raise InputError(f"{self.shown('mode', self.mode)}: expected one of {', '.join(MODES)}")
        if self.hmm is not None and self.model is not None:
            raise InputError("give an instance file (hmm) or an instance object (model), not both")
        if self.rationalize is not None and self.hmm is None and self.model is None:
            raise InputError("rationalize: converts a given float instance (hmm or model); a generated "
                             "instance is exact already")
        if self.classes is not None and (self.hmm is not None or self.model is not None):
            raise InputError(f"{self.option('classes')} does not apply with a given instance: its mu fixes the classes "
                             f"(a k x |H| matrix has k); drop {self.option('classes')}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"{self.shown('seed', self.seed)}: expected a nonnegative integer")
        for name, (lo, hi) in SIZE_LIMITS.items():
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi):
                raise InputError(f"{self.shown(name, value)}: expected an integer in {lo}..{hi}")
        # options that do not apply (sizes with a given instance, memory sizes on a vanilla
        # theorem, samples with exhaustive) are refused by name; then the defaults are filled in
        given = SimpleNamespace(**{f.name: getattr(self, f.name) for f in fields(self)})
        given.hmm = self.hmm or (None if self.model is None else "the instance")
        check_theorem_flags(given, defaults=DEFAULTS, option=self.option)
        for name in DEFAULTS:
            object.__setattr__(self, name, getattr(given, name))

    def _normalise_types(self) -> None:
        """Refuse values of the wrong type with one line naming the option (never a TypeError
        later), and read numpy scalars as the Python numbers they are."""
        def put(name, value):
            object.__setattr__(self, name, value)

        for name in ("hidden", "vocab", "memory", "cells", "samples", "length", "classes", "seed"):
            value = getattr(self, name)
            if value is None or (name == "seed" and isinstance(value, int) and not isinstance(value, bool)):
                continue
            if isinstance(value, bool) or isinstance(value, (float, str)):
                raise InputError(f"{self.shown(name, value)}: expected an integer")
            try:
                put(name, operator.index(value))           # int, numpy integer
            except TypeError:
                raise InputError(f"{self.shown(name, value)}: expected an integer, found "
                                 f"{type(value).__name__}") from None
        if not isinstance(self.exhaustive, bool):
            if type(self.exhaustive).__name__ in ("bool_", "bool") and type(self.exhaustive).__module__ == "numpy":
                put("exhaustive", bool(self.exhaustive))
            else:
                raise InputError(f"{self.shown('exhaustive', self.exhaustive)}: expected True or False")
        if self.mode is not None and not isinstance(self.mode, str):
            raise InputError(f"{self.shown('mode', self.mode)}: expected one of {', '.join(MODES)}")
        if self.rationalize is not None:
            value = self.rationalize
            if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
                raise InputError(f"{self.shown('rationalize', value)}: expected a number (a threshold in [0, 1))")
            try:
                put("rationalize", float(value))
            except (TypeError, ValueError):           # an array or tensor of several numbers
                raise InputError(f"{self.shown('rationalize', value)}: expected a number (a threshold in [0, 1))") from None
            if not 0 <= self.rationalize < 1:
                raise InputError(f"{self.shown('rationalize', value)}: expected a pruning threshold in [0, 1)")
        if self.progress is not None and not isinstance(self.progress, bool):
            if type(self.progress).__name__ in ("bool_", "bool") and type(self.progress).__module__ == "numpy":
                put("progress", bool(self.progress))
            else:
                raise InputError(f"{self.shown('progress', self.progress)}: expected True or False")
        if self.model is not None:
            from ...models.hmm.large import LargeHMM
            from ...models.hmm.values import HMM, MemoryHMM

            if not isinstance(self.model, (HMM, MemoryHMM, LargeHMM)):
                raise InputError(f"model: expected an HMM, a MemoryHMM or a LargeHMM, found "
                                 f"{type(self.model).__name__}")
        if self.ray is not None and not isinstance(self.ray, str):
            raise InputError(f"{self.shown('ray', self.ray)}: expected 'local' or the address of a Ray cluster")
        for name in ("hmm", "out", "certificate"):
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, (str, os.PathLike)):
                raise InputError(f"{self.shown(name, value)}: expected the path of a file, found "
                                 f"{type(value).__name__}")
            if not os.fspath(value).strip():
                raise InputError(f"{self.shown(name, value)}: expected a path, found an empty string")
            put(name, os.fspath(value))
        if self.witness is not None:
            from ...constructions.witnesses import AttentionWitness, LinearHeadWitness, PromptWitness

            value = self.witness
            if isinstance(value, (str, os.PathLike)) and not os.fspath(value).strip():
                raise InputError(f"{self.shown('witness', value)}: expected a path, found an empty string")
            if isinstance(value, os.PathLike):
                put("witness", os.fspath(value))
            elif not isinstance(value, (str, dict, LinearHeadWitness, PromptWitness, AttentionWitness)):
                raise InputError(f"{self.shown('witness', value)}: expected the path of a witness file, a "
                                 "dict such as {'theorem': '3.6', 'u': [...], 'b': [...]}, or a witness object")

    @classmethod
    def from_options(cls, theorem_id: str, **options: Any) -> "TheoremRequest":
        """A request from keyword options named as the CLI's flags (``mode``, ``samples``,
        ``length``, ``exhaustive``, ``seed``, ``witness``, ``hidden``, ...).

        Raises:
            InputError: an unknown option (named with ``!r``) or an invalid value.
        """
        known = {f.name for f in fields(cls)} - {"id", "python"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise InputError(f"unknown option {unknown[0]!r}: expected one of {', '.join(sorted(known))}")
        return cls(id=str(theorem_id), python=True, **options)

    @classmethod
    def from_namespace(cls, args: Any) -> "TheoremRequest":
        """A request from parsed command-line arguments (attributes named as the fields)."""
        known = {f.name for f in fields(cls)} - {"python", "progress"}
        return cls(progress=not getattr(args, "json", False),
                   **{k: v for k, v in vars(args).items() if k in known})
