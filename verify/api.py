"""The Python API: one call checks a theorem and returns a report (SPEC section 5).

>>> import headprompt
>>> report = headprompt.check(None, "3.6", hidden=5, vocab=3, samples=200, length=4)
>>> report.verdict, report.exit_code, report.to_dict()["theorem"]
('verified', 0, '3.6')

``check(instance, theorem, **options)`` runs exactly what ``verify theorem`` runs: its
``to_dict()`` is the object that ``verify theorem ... --json`` prints for the same inputs.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..models.exceptions import InputError

from .reports.builders import build_report
from .reports.requests import DETAILS, TheoremRequest

__all__ = ["check", "check_paths", "load", "run_theorem", "TheoremReport", "EXIT_CODES", "DETAILS"]


# verdict -> exit code of ``verify theorem`` (SPEC section 4): 0, 1 and 3 are proofs; an
# uncertified (float) run exits 5 whatever its verdict.
EXIT_CODES = {"verified": 0, "refuted": 1, "assumptions-fail": 3}
EXIT_UNCERTIFIED = 5


@dataclass(frozen=True)
class TheoremReport:
    """The result of one theorem check: the report dict of SPEC section 4, read-only.

    ``verdict`` is ``"verified"``, ``"refuted"`` or ``"assumptions-fail"`` when it was proven
    (exact or certified mode); a float-mode run, which proves nothing, reads
    ``"verified (uncertified)"`` (and so on), so ``report.verdict == "verified"`` is true only
    of a proof. ``proven`` says the same as a bool; ``exit_code`` is what the CLI exits with
    (5 for a float run). ``to_dict()["verdict"]`` stays the JSON's word, beside
    ``"certified": false``.
    """

    data: dict = field(repr=False)
    request: TheoremRequest = field(repr=False)
    details: dict = field(default_factory=dict, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def verdict(self) -> str:
        word = self.data["verdict"]
        return word if self.proven else f"{word} (uncertified)"

    @property
    def certified(self) -> bool:
        return self.data.get("mode") != "float"

    @property
    def proven(self) -> bool:
        """True when the verdict is a proof (exact or certified arithmetic), False in float mode."""
        return self.certified

    @property
    def vacuous(self) -> bool | None:
        """True when the check could not have failed on a label (one label of ``F*`` among the
        sequences that count, or none of them in ``R``), False when both labels occurred, None
        when no sequence was checked (an assumption failed before the check). A property test
        asserts ``report.vacuous is False`` beside its verdict."""
        return self.data.get("vacuous")

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.data["verdict"]] if self.certified else EXIT_UNCERTIFIED

    def to_dict(self) -> dict:
        """A deep copy of the report: the object ``verify theorem --json`` prints."""
        return copy.deepcopy(self.data)

    def rows(self, *, exact: bool = False) -> list[dict]:
        """One row per checked sequence (those with ``Pr(x) = 0`` included, marked), recomputed
        from the instance and witness independently of the checker's counts: ``sequence``,
        ``length``, ``possible``, ``in_R``, ``F_star``, ``F``, ``agree``, ``tie``, the margins
        ``task_margin`` (``mu . P[H_0 | x]``, or ``mu . P[M_j* | x]``) and ``head_margin`` (the
        head's output before the threshold), and ``exact``.

        By default the margins are floats with a certified bound beside them
        (``task_margin_bound``: ``|exact margin - task_margin| <= bound``); rows the bound cannot
        settle (ties, near-ties) are computed exactly, so ``F_star``, ``F`` and ``tie`` are always
        proven. ``exact=True`` gives every margin as an exact ``Fraction``. ``None`` where
        ``Pr(x) = 0``, and for a task with several classes (decided by argmax of its scores).
        Empty when no witness was checked. Computed once per kind, in batches of bounded memory,
        and cached (each call returns fresh dicts).

        Raises:
            LimitError: (an ``InputError``) exact rows that would exceed the limits of exact
                checks, refused before any work.
        """
        from .reports.rows import report_rows

        exact = _flag("exact", exact)
        key = "exact" if exact else "float"
        if key not in self._cache:
            self._cache[key] = report_rows(self.request.id, self.details, exact=bool(exact))
        return [dict(r, sequence=list(r["sequence"])) for r in self._cache[key]]

    def to_frame(self, *, exact: bool | None = None, digits: int = 20):
        """:meth:`rows` as a pandas DataFrame (``pip install pandas``). Exact margins are shown as
        decimals (``digits`` significant digits, correctly rounded) with the exact fractions a
        column away (``task_margin_exact``, ``head_margin_exact``); ``exact=False`` gives floats
        with their certified bounds. By default (``None``) exact, unless exact rows would exceed
        the limits of exact checks: then floats with bounds, and a ``UserWarning`` says so.

        Raises:
            ImportError: pandas is not installed (the message says how to install it).
            LimitError: ``exact=True`` past the limits of exact checks.
            InputError: ``exact`` not a bool or None, ``digits`` not an integer in 1..1000.
        """
        from ..models.exceptions import LimitError
        from .reports.view import rows_frame

        exact = None if exact is None else _flag("exact", exact)
        if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 1 <= digits <= MAX_DIGITS:
            raise InputError(f"digits={digits!r}: expected an integer in 1..{MAX_DIGITS}")
        digits = int(digits)
        if exact is None:
            try:
                return rows_frame(self.rows(exact=True), exact=True, digits=digits)
            except LimitError as exc:
                import warnings

                warnings.warn(f"to_frame: exact margins refused ({exc}); showing floats with certified bounds",
                              stacklevel=2)
                exact = False
        return rows_frame(self.rows(exact=exact), exact=exact, digits=digits)

    def plot(self, *, ax=None, near: float | None = None):
        """Margins by sequence length (matplotlib), ties and near-ties (``|margin| <= near``,
        default 1e-6) marked, and the robustness radius; returns the Figure (works with the
        ``Agg`` backend). ``ax``: one matplotlib Axes or two (task and head margins).

        Raises:
            InputError: ``near`` not a finite number >= 0, ``ax`` not Axes."""
        from .reports.view import NEAR_TIE, check_axes, plot_margins

        if near is not None and (isinstance(near, bool) or not isinstance(near, (int, float, np.integer, np.floating))
                                 or not 0 <= near < float("inf")):
            raise InputError(f"near={near!r}: expected a finite number >= 0 (the near-tie threshold)")
        check_axes(ax)
        return plot_margins(self.rows(), self.data, ax=ax, near=NEAR_TIE if near is None else float(near))

    def __str__(self) -> str:
        """The readable report ``verify theorem`` prints (the same renderer)."""
        from .reports.view import report_text

        return report_text(self.data)

    def _repr_html_(self) -> str:
        """The readable report as an HTML table for notebooks."""
        from .reports.view import report_html

        return report_html(self.data, self.verdict, self.proven)

    def __repr__(self) -> str:
        seqs = self.data.get("sequences") or {}
        return (f"TheoremReport(theorem={self.data['theorem']!r}, verdict={self.verdict!r}, "
                f"mode={self.data.get('mode')!r}, checked={seqs.get('checked')})")


MAX_DIGITS = 1000
"""The most significant digits ``TheoremReport.to_frame`` shows (the exact fraction is a column away)."""


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name}={value!r}: expected True or False")


def run_theorem(request: TheoremRequest, *, device: Any = "cpu") -> TheoremReport:
    """Build the report of one request (the CLI's ``verify theorem`` calls this too). ``device``
    (``"cpu"``, ``"auto"``, ``"cuda"``): where the certified float kernels run
    (:func:`~headprompt.models.inference.device_messages.use_device`); the report's ``"device"``
    names where they ran (``"cpu"`` when none ran elsewhere)."""
    start = time.perf_counter()
    if request.certificate is not None:          # refuse what no certificate can express, before any work
        from .evidence.certificate import check_certificate_request

        check_certificate_request(request.id, request.mode, request.classes)
    from ..models.inference.device_messages import use_device

    with use_device(device) as kernels:
        data = build_report(request)
    data["device"] = kernels.label if kernels is not None and kernels.calls else "cpu"
    details = data.pop(DETAILS, {})
    data["seconds"] = round(time.perf_counter() - start, 3)
    report = TheoremReport(data=data, request=request, details=details)
    if request.certificate is not None:
        from .evidence.certificate import write_certificate

        try:
            write_certificate(report, request.certificate)
        except OSError as exc:           # e.g. /dev/full: the certificate file is to blame, not stdout
            raise InputError(f"{request.shown('certificate', request.certificate)}: cannot write the "
                             f"certificate ({exc.strerror or exc})") from None
    return report


def load(path: str | os.PathLike, *, exact: bool | None = None):
    """An instance file (SPEC section 3) as an ``HMM`` or ``MemoryHMM``: by default as the kind
    of model the file holds (every model ``save`` writes, float ones too, reloads with this
    call); ``exact=True`` reads every number exactly, ``exact=False`` as float64.

    Raises:
        InputError: ``path`` not a ``str``/``os.PathLike``, ``exact`` not a bool or None, or a
            missing, malformed or invalid file (the message names the problem).
    """
    from ..models.hmm.files import load_instance

    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise InputError(f"path={path!r}: expected the path of an instance file (str or os.PathLike), "
                         f"found {type(path).__name__}")
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise InputError(f"exact={exact!r}: expected True or False (or None: the kind the file holds)")
    return load_instance(os.fspath(path), exact=None if exact is None else bool(exact))


def check(instance: Any, theorem: str, **options: Any) -> TheoremReport:
    """Check ``theorem`` (``"3.3"``, ``"3.6"``, ``"4.3"``, ``"4.6"`` or ``"C.6"``) on ``instance``.

    ``instance`` is an ``HMM``, a ``MemoryHMM``, the path of an instance file, or ``None`` to
    generate one of the sizes given by ``hidden``, ``vocab``, ``memory``, ``cells`` from
    ``seed``. Options are those of ``verify theorem``: ``mode`` (``"exact"``, ``"certified"``,
    ``"float"``), ``samples``, ``length``, ``exhaustive``, ``seed``, ``witness`` (a witness file),
    ``out``, ``device`` (``"cpu"``, the default, ``"auto"`` or ``"cuda"``: where the certified
    float kernels run; verdicts are the same on every device).

    Raises:
        InputError: an unknown theorem or option, or invalid input (as the CLI's exit code 2).
    """
    from ..models.hmm.large import LargeHMM
    from ..models.hmm.values import HMM, MemoryHMM

    if instance is not None and ("hmm" in options or "model" in options):
        given = "hmm" if "hmm" in options else "model"
        raise InputError(f"{given}= and the instance argument both give an instance; give one")
    if isinstance(instance, (str, os.PathLike)):
        options["hmm"] = os.fspath(instance)
    elif isinstance(instance, (HMM, MemoryHMM, LargeHMM)):     # LargeHMM: the large-model path (3.3, 3.6)
        options["model"] = instance
    elif instance is not None:
        raise InputError(f"instance {type(instance).__name__!r}: expected an HMM, a MemoryHMM, "
                         "the path of an instance file, or None (generate one)")
    device = _device_option(options.pop("device", "cpu"))
    request = TheoremRequest.from_options(theorem, **options)
    check_paths(request)
    return run_theorem(request, device=device)


DEVICES = ("auto", "cpu", "cuda")


def _device_option(value: Any) -> str:
    if not isinstance(value, str) or value not in DEVICES:
        raise InputError(f"device={value!r}: expected one of {', '.join(map(repr, DEVICES))}")
    return value


def check_paths(request: TheoremRequest) -> None:
    """Every path argument of ``check``, before any work (as the command line does): the files
    to read (``hmm``, a ``witness`` path) exist and are regular files; the files to write
    (``out``, ``certificate``) can be written (:func:`~headprompt.verify.runtime.output_paths.check_out_path`).

    Raises:
        InputError: ``name='path': problem``.
    """
    from .runtime.output_paths import check_out_path

    for name in ("hmm", "witness"):
        path = getattr(request, name)
        if not isinstance(path, str):
            continue
        if not os.path.exists(path):
            raise InputError(f"{name}={path!r}: no such file")
        if os.path.isdir(path):
            raise InputError(f"{name}={path!r}: is a directory; give the path of a file")
        if not os.access(path, os.R_OK):
            raise InputError(f"{name}={path!r}: the file is not readable")
    for name in ("out", "certificate"):
        path = getattr(request, name)
        try:
            check_out_path(path, flag=name)
        except InputError as exc:
            raise InputError(str(exc).replace(f"{name} {path}", f"{name}={path!r}", 1)) from None
