"""The power of a Figure 3 run, stated in its plan before any job (``--pilot DIR``).

A run's trials are chosen for an effect it should detect. :func:`pilot_design` reads a committed
earlier run of the same experiment (its ``results.csv`` and ``plan.json``: the *pilot*), takes
the per-setting standard deviation of every test's paired differences there, and simulates the
rule at this run's design (the same settings, ``trials`` each): the smallest mean difference
the rule calls ``supported`` with 80% power (:func:`.pooled.detectable_effect`), once at the
rule's level ``alpha`` and once at ``alpha / m``, the strictest step of Holm's adjustment over
the run's family of ``m`` tests (the level a test meets when it has the smallest p-value of the
family; a test further down Holm's order is judged at a level between the two). The plan
records the pilot's files by SHA-256, so which data set the design is checkable.

This is a statement about noise, not about the effect: the pilot's means are not used.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

from ...models.exceptions import InputError

__all__ = ["pilot_design", "design_line"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_pilot(pilot: Path, name: str) -> tuple[list, dict]:
    results, plan_file = pilot / "results.csv", pilot / "plan.json"
    for f in (results, plan_file):
        if not f.is_file():
            raise InputError(f"--pilot: {f} not found (a pilot is an earlier run's folder with results.csv and "
                             f"plan.json)")
    try:
        plan = json.loads(plan_file.read_text())["plan"]
        with open(results, newline="") as fh:
            records = list(csv.DictReader(fh))
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise InputError(f"--pilot: cannot read {pilot} ({type(exc).__name__}: {exc})") from None
    if plan.get("experiment") != name:
        raise InputError(f"--pilot: {pilot} is a {plan.get('experiment')!r} run, this run is {name!r}")
    if not records:
        raise InputError(f"--pilot: {results} has no rows")
    return records, plan


def _setting_keys(settings: list) -> list:
    return [s.get("hidden_states", s.get("hidden_total")) for s in settings]


def pilot_design(name: str, models: str, pilot: Path | str, *, trials: int, settings: list,
                 family: list[str], reps: int | None = None) -> dict:
    """The design block of a plan (module docstring): ``{"pilot", "trials", "alpha", "holm_alpha",
    "power", "tests": {id: {"pilot_setting_sds", "pilot_trials", "mde", "mde_holm"}}}``.

    ``reps``: simulated tables per effect (default the rule's, :data:`.pooled.SIM_TABLES`).

    Raises:
        InputError: ``pilot`` is not a readable run of ``name``, or its settings are not this run's.
    """
    from .claims import evaluate
    from .pooled import ALPHA, POWER, SIM_TABLES, detectable_effect

    pilot = Path(pilot)
    records, pilot_plan = _read_pilot(pilot, name)
    mine, theirs = sorted(set(_setting_keys(settings))), sorted(set(_setting_keys(pilot_plan.get("settings", []))))
    if mine != theirs:
        raise InputError(f"--pilot: {pilot} has the settings {theirs}, this run {mine}")
    ev = evaluate(name, records, pilot_plan.get("models", models))
    m = max(len(family), 1)
    tests = {}
    for item in ev["predictions"] + ev["controls"]:
        if item["model"] not in {"both": ("mlm", "exact"), "mlm": ("mlm",), "exact": ("exact",)}[models]:
            continue
        groups = [p for p in item["paired"] if p["counts"]]
        sds = item["pooled"].get("setting_sds") or []
        if not groups or len(sds) != len(groups):
            tests[item["id"]] = {"pilot_setting_sds": None, "pilot_trials": None, "mde": None, "mde_holm": None}
            continue
        sizes = [trials] * len(sds)
        tests[item["id"]] = {
            "pilot_setting_sds": [round(float(s), 6) for s in sds],
            "pilot_trials": [p["trials"] for p in groups],
            "mde": detectable_effect(sds, sizes, alpha=ALPHA, power=POWER, reps=reps or SIM_TABLES),
            "mde_holm": (detectable_effect(sds, sizes, alpha=ALPHA / m, power=POWER, reps=reps or SIM_TABLES)
                         if item["in_family"] else None),
        }
    return {"pilot": {"folder": str(pilot), "results_sha256": _sha256(pilot / "results.csv"),
                      "plan_sha256": _sha256(pilot / "plan.json")},
            "trials": trials, "alpha": ALPHA, "holm_alpha": ALPHA / m, "power": POWER,
            "noise": "normal, per-setting SD of the pilot's paired differences; the pilot's means are not used",
            "tests": tests}


def design_line(design: dict | None, test_id: str) -> str | None:
    """One line: the design MDE of ``test_id`` stated in the plan, or ``None`` without a design."""
    if not design or test_id not in design.get("tests", {}):
        return None
    t = design["tests"][test_id]
    if t["mde"] is None:
        return f"design: no MDE (the pilot {design['pilot']['folder']} has no pairs for this test)"
    holm = (f", {t['mde_holm']:.3f} at Holm's strictest step (alpha {design['holm_alpha']:.4g})"
            if t.get("mde_holm") is not None else "")
    return (f"design (in the plan, before the run): {design['trials']} trials per setting detect "
            f"{t['mde']:.3f} at 80% power (alpha {design['alpha']}){holm}; noise from the pilot "
            f"{design['pilot']['folder']}")
