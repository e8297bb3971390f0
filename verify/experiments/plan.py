"""The plan of a Figure 3 run, written with its hash before any job (``--plan FILE``).

The plan is everything that decides the run's numbers and verdicts, as plain JSON: the
experiment, scale, models and design; the settings, trials and the sweep's seed (with the seed
rules of :mod:`.jobs`); the full configuration (budgets of pretraining and tuning, data sizes);
the design's power when a pilot run is given (:mod:`.design`); the downstream gate (statistic, sequences, bound, threshold, per-trial exclusion); the baselines
(the paper's protocol and the fair searches of :mod:`models.mlm.fair`); every test with its
terms, the level and the family Holm adjusts over (:mod:`.claims`); and the package version.
Its hash is the SHA-256 of its canonical JSON (sorted keys, no spaces), so it does not depend on
the file's layout.

:func:`write_plan` writes ``{"sha256": ..., "plan": ...}``. A plan file that already exists and
holds a different plan is refused (:class:`InputError`, exit 2) unless ``replan`` is given; then
it is overwritten and both hashes are reported (``replaced_sha256``), and ``summary.json``
records both. Without ``--plan`` the plan goes to ``plan.json`` in the output directory,
overwritten with both hashes recorded when it changed.

Plans before results, visibly: a ``--plan FILE`` run starts only when :func:`plan_commit` finds
the plan in git history before any result exists: a commit whose copy of ``FILE`` holds the same
plan (the same hash), or a commit whose message names the plan's sha256. Otherwise the plan is
written and the run refused (exit 2) with the commands that commit it; ``--uncommitted-plan``
starts anyway and ``summary.json`` records ``"commit": null``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ...models.exceptions import InputError

__all__ = ["PLAN_FORMAT", "build_plan", "plan_hash", "write_plan", "plan_commit"]

PLAN_FORMAT = 1


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("headprompt")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_plan(name: str, scale: str, config: dict, *, trials: int, seed: int, models: str,
               share_pretraining: bool, pilot=None) -> dict:
    """The plan (module docstring) of a run; ``config`` is :func:`.config.scale_to_dict`'s.
    ``pilot``: an earlier run's folder; the plan then states the run's power (``design``,
    :func:`.design.pilot_design`)."""
    from ...models.mlm import fair
    from . import stats
    from .claims import family, claim_tests
    from .config import SYNTAX_STATES

    if name == "fig3-left":
        settings = [{"hidden_states": h} for h in config["hidden_sizes"]]
    else:
        settings = [{"data": d, "memory_values": m, "hidden_total": m * SYNTAX_STATES}
                    for m in config["memory_values"] for d in ("memory", "vanilla")]
    uses_mlm = models != "exact"
    plan = {
        "format": PLAN_FORMAT, "experiment": name, "scale": scale, "models": models,
        "share_pretraining": share_pretraining,
        "memory_hmm": config["memory_hmm"] if name == "fig3-right" else None,
        "settings": settings, "trials": trials, "seed": seed,
        "seeds": {"hmm": "default_rng([seed, |H|, h]) (memory: [seed, 1000 + |M|, h]), h = trial "
                         "(0 with share_pretraining)",
                  "pretraining": "100 * seed + h", "task_sequences": "[seed, key, 1, trial]",
                  "task_mu": "[seed, key, 2, trial]", "gate_sequences": "[seed, key, 3, trial]",
                  "tuning": "1000 * seed + trial"},
        "config": config,
        "gate": None if not uses_mlm else {
            "statistic": "mean total-variation distance between the MLM and the exact G_0 at position 0",
            "sequences": config["gate_sequences"], "length": config["task"]["length"] + 1,
            "bound": "mean + z * SE", "z": config["gate_z"], "threshold": config["pretrain"]["gate_tv"],
            "exclusion": "per trial: a pair counts only when every MLM it reads passed"},
        "splits": "validation and test sequences never occur in the training split (drawn until distinct)",
        "baselines": {"paper": {"optimizer": "AdamW", **config["tune"]},
                      "head-fair": {"model": "L2-regularised logistic regression, full-batch L-BFGS to "
                                             "convergence", "l2_start": list(fair.L2_START),
                                    "l2_stronger": list(fair.L2_STRONGER), "l2_weaker": list(fair.L2_WEAKER)},
                      "search-fair": {"methods": ["prompt-fair", "attention-fair", "attention-tokens-fair"],
                                      "lr_factors_start": list(fair.LR_START), "lr_factors_lower": list(fair.LR_LOWER),
                                      "lr_factors_higher": list(fair.LR_HIGHER),
                                      "paper_learning_rate": config["tune"]["learning_rate"]},
                      "prompt-refit": "prompt-fair's selected prompt, its linear head refitted as head-fair",
                      "budget": fair.SEARCH_BUDGET,
                      "extension": "while the selection is the first or last configuration tried, the next "
                                   "value past that edge is added (up to the budget)",
                      "selection": "best validation accuracy"},
        "estimands": {"clean": "test split without sequences of the training split",
                      "iid": "i.i.d. test draws (the paper's estimand), [seed, key, 4, trial]"},
        "tests": claim_tests(name, models),
        "rule": {"test": "verify.experiments.stats.pooled_test", "method": stats.METHOD, "alpha": stats.ALPHA,
                 "effect": stats.EFFECT, "power": stats.POWER,
                 "adjustment": "Holm over the family", "reproductions": "outside the family, unadjusted"},
        "family": family(name, models),
        "version": _version(),
    }
    if pilot is not None:       # only then: the hash of a plan without a pilot is unchanged
        from .design import pilot_design

        plan["design"] = pilot_design(name, models, pilot, trials=trials, settings=settings,
                                      family=plan["family"])
    return plan


def plan_hash(plan: dict) -> str:
    """SHA-256 of the plan's canonical JSON."""
    return hashlib.sha256(json.dumps(plan, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _existing(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        old = json.loads(path.read_text())
        return plan_hash(old["plan"])
    except (OSError, ValueError, KeyError, TypeError):
        return "unreadable"


def write_plan(path: Path | str, plan: dict, *, replan: bool, strict: bool = True) -> dict:
    """Write ``plan`` to ``path``; returns ``{"file", "sha256", "replaced_sha256"}``.

    Raises:
        InputError: with ``strict``, ``path`` holds a different (or unreadable) plan and
            ``replan`` is not given; ``path`` cannot be written.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"--plan: {path} is a directory; give a file path")
    digest = plan_hash(plan)
    old = _existing(path)
    if old is not None and old != digest and strict and not replan:
        raise InputError(f"--plan: {path} holds a different plan (sha256 {old[:12]}, this run's {digest[:12]}); "
                         f"rerun with --replan to replace it (both hashes are recorded)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"sha256": digest, "plan": plan}, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        raise InputError(f"--plan: cannot write {path} ({exc.strerror or exc})") from None
    return {"file": str(path), "sha256": digest, "replaced_sha256": old if old not in (None, digest) else None}


def _git(cwd: Path, *args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def plan_commit(path: Path | str, digest: str) -> str | None:
    """The first commit (full hash) whose copy of ``path`` holds the plan of hash ``digest``, or
    whose message names ``digest``; ``None`` when there is none (or no git repository)."""
    path = Path(path).resolve()
    top = _git(path.parent, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    top = Path(top.strip())
    rel = path.relative_to(top).as_posix()
    named = _git(top, "log", "--format=%H", "--reverse", f"--grep={digest}")
    if named and named.split():
        return named.split()[0]
    for commit in (_git(top, "log", "--format=%H", "--reverse", "--", rel) or "").split():
        text = _git(top, "show", f"{commit}:{rel}")
        try:
            if text is not None and plan_hash(json.loads(text)["plan"]) == digest:
                return commit
        except (ValueError, KeyError, TypeError):
            continue
    return None
