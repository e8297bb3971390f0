"""Figure 3 of the paper, with the exact-``G`` oracle beside the pretrained MLM (SPEC section 4).

``fig3-left``: for each hidden size ``|H|`` an Appendix D HMM (``|X| = 10``), an MLM pretrained
on its sequences, and a sparse task; head tuning and prompt tuning (20 prompt vectors) on the
MLM and on the exact ``Gbar``. ``fig3-right``: a single-cell memory HMM with ``|H| = 4`` syntax
states and ``|M|`` memory values tuned with the attention head, against a vanilla HMM with
``|M||H|`` hidden states tuned with a linear head, on the MLM and on the exact ``Gbar``, with two
controls: the same attention head on the vanilla data, and a token-only attention head on the
memory data.

Every trial draws a new HMM, pretrains a new MLM and draws a new task, as the final version of
the paper does ("trials of pretraining and finetuning"); ``share_pretraining`` keeps one HMM and
one MLM per setting (Appendix D's design) and redraws only the task. Each MLM passes through
the downstream gate (:func:`models.mlm.gate.read_gate`: mean TV to the exact ``G_0`` at position 0,
where the heads read, on fresh held-out sequences, with an upper confidence bound); a trial whose
MLM fails it is excluded alone and counted. Beside the paper's protocol every run reports fair
baselines (:mod:`models.mlm.fair`) and tests its claims against the fair pair; validation and test
sequences never occur in the training split. The tests, the per-trial gate and the family are
in :mod:`.claims`; each is one pooled test (:func:`.stats.pooled_test`), Holm-adjusted over the
run's family: ``supported``, ``contradicted`` or ``inconclusive``. The plan (:mod:`.plan`) is
written with its hash before any job.

The modules: :mod:`.config` (scales, ``--config``), :mod:`.jobs` (one (setting, trial) job,
cached), :mod:`.stats` (intervals, pooled verdicts, controls), :mod:`.plot` and
:mod:`.ray_tasks` (the jobs as Ray tasks).

Outputs in ``out``: ``results.csv`` (one row per trial, model and method, controls included
(``control``), each naming its HMM (``hmm``, ``hmm_seed``, ``hmm_index``) and pretraining
(``pretrain_key``, the checkpoint cache key; empty for exact-only rows), with the gate
figures, the fair searches' ``selected`` configuration, the split sizes and overlaps),
``summary.json`` (SPEC section 4, plus ``plan`` (file and hash), ``gate`` (every MLM's
position-0 TV, bound and verdict; the failed count), ``splits`` (test-train overlap),
``quality``, ``controls``, ``control_rows``, ``majority``, ``failed_jobs``, the full ``config``,
``seed``, ``version``), ``plan.json`` (unless ``--plan`` names another file) and a PNG.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import time
from pathlib import Path

from ...models.exceptions import InputError
from .config import (EXPERIMENTS, SCALES, SETTING_KEYS, Scale, load_config_file, scale_from_dict,
                                scale_to_dict)
from .stats import accuracy_interval, majority_by_setting, quality_by_setting, summarize

MAX_RUN_TRIALS = 1000      # trials per setting a run accepts (the paper ran 5)

__all__ = ["MAX_RUN_TRIALS", "Scale", "SCALES", "EXPERIMENTS", "run_experiment", "summarize", "accuracy_interval", "resolve_scale"]

def resolve_scale(scale: str, config: dict | str | Path | None = None) -> Scale:
    """The scale's configuration with ``config`` (a dict or a TOML/JSON file) applied.

    Raises:
        InputError: an unknown scale or a bad config.
    """
    if scale not in SCALES:
        raise InputError(f"--scale: expected one of {', '.join(SCALES)}, found {scale!r}")
    sc = SCALES[scale]
    if config is None:
        return sc
    overrides = config if isinstance(config, dict) else load_config_file(config)
    return scale_from_dict(sc, overrides, source=str(config) if not isinstance(config, dict) else "config")


def _is_main(r: dict) -> bool:
    """A row of the paper's lines (fair or paper protocol), not a control or another 2 x 2 cell."""
    return not (r["control"] is True or str(r["control"]).lower() == "true")


def _splits(records: list, n_test: int) -> dict:
    """The test-train overlap of the run (0 by construction, measured per job) and how often a
    fresh draw repeated a training sequence (how repetitive the HMMs are)."""
    if not records:
        return {}
    jobs = {(r["trial"], *(r.get(k) for k in ("hidden_states", "hidden_total", "data"))): r for r in records}
    drawn = sum(int(r["test_drawn"]) for r in jobs.values())
    return {"test_train_overlap_max": max(float(r["test_overlap"]) for r in jobs.values()),
            "val_train_overlap_max": max(float(r["val_overlap"]) for r in jobs.values()),
            "test_draws_repeating_training": sum(int(r["test_rejected"]) for r in jobs.values()) / max(drawn, 1),
            "short_test_splits": sum(int(r["test_size"]) < n_test for r in jobs.values()),
            "min_test_size": min(int(r["test_size"]) for r in jobs.values()), "jobs": len(jobs)}


def _check_out(out: Path) -> Path:
    from ...models.mlm.cache import check_writable_dir

    return check_writable_dir(out, "--out")


def _note(spec: dict, result: dict) -> str:
    """The per-job progress note: the setting, the trial, the job's seconds or its error."""
    setting = ", ".join(f"{k}={v}" for k, v in spec["setting"].items())
    done = f"failed: {result['error']}" if "error" in result else f"{result.get('seconds', 0):.0f} s"
    return f"{setting}, trial {spec['trial']}: {done}"


def _run_in_pool(specs: list[dict], workers: int, on_result, bar) -> None:
    """Run ``specs`` in ``workers`` spawned processes (torch is not fork-safe), reporting each
    result as it arrives; a worker that dies fails its job only."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from .jobs import job_key, run_job_safely

    pool = ProcessPoolExecutor(max_workers=min(workers, len(specs)), mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {pool.submit(run_job_safely, spec): spec for spec in specs}
        for future in as_completed(futures):
            spec = futures[future]
            try:
                result = future.result()
            except Exception as exc:   # noqa: BLE001 - a lost worker fails its job only
                result = {"key": job_key(spec), "error": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"}
            on_result(spec, result)
            bar.update(1, note=_note(spec, result))
    except BaseException:
        # Ctrl-C (or any abort): stop the workers now instead of waiting for their running jobs
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_jobs(todo: list[dict], ray, workers: int, on_result, progress: bool, bar) -> None:
    """Run ``todo`` in this process, in ``workers`` local processes or on Ray, reporting each
    result to ``on_result`` and to the progress ``bar`` (closed on return or on Ctrl-C)."""
    from .jobs import run_job_safely

    with bar:
        if ray:
            from .ray_tasks import run_on_ray

            def tick(spec: dict, result: dict) -> None:
                on_result(spec, result)
                bar.update(1, note=_note(spec, result))

            run_on_ray(todo, None if ray in (True, "local") else ray, tick)
        elif workers > 1 and len(todo) > 1:
            _run_in_pool(todo, workers, on_result, bar)
        else:
            for spec in todo:
                result = run_job_safely(spec, progress=progress)
                on_result(spec, result)
                bar.update(1, note=_note(spec, result))


def run_experiment(name: str, scale: str, *, device, trials: int | None = None, seed: int = 0,
                   out: Path | str | None = None, progress: bool = True, config: dict | str | Path | None = None,
                   share_pretraining: bool = False, ray: str | bool | None = None,
                   threads: int | None = None, cached_only: bool = False, workers: int = 1,
                   models: str = "both", memory_hmm: str | None = None, plan: Path | str | None = None,
                   replan: bool = False, uncommitted_plan: bool = False, pilot: Path | str | None = None) -> dict:
    """Run ``fig3-left`` or ``fig3-right`` at ``scale``; write the outputs into ``out``
    (default ``runs/<name>-<scale>``) and return the summary dict (SPEC section 4).

    ``ray``: ``None``/``False`` runs the jobs in this process; ``True`` or ``"local"`` on a local
    Ray instance; any other string is the address of a Ray cluster to join. ``workers`` > 1
    (without ``ray``) runs that many jobs at once in local worker processes. ``cached_only``
    runs nothing and summarises the jobs already finished (a sweep in progress); the others are
    counted under ``jobs.missing``. ``models``: ``both``, ``mlm`` or ``exact`` (only the exact-``Gbar``
    rows and the token-only control: no pretraining, e.g. the paper's setting on a CPU).
    ``memory_hmm`` (``appendix-d`` or ``hidden``, :func:`models.generate.generators.hidden_memory_hmm`)
    overrides the scale's fig3-right memory HMM. One line per finished job goes to stderr when
    ``progress`` (off a terminal: elapsed time and ETA, :class:`verify.render.Progress`).
    ``plan``: the file the run's plan (:mod:`.plan`) is written to before any job (default
    ``plan.json`` in ``out``); an existing ``plan`` file with a different plan is refused unless
    ``replan``. ``summary.json`` records the plan's hash (and the replaced one's). A ``plan`` run
    starts only when the plan is in a git commit (:func:`.plan.plan_commit`, recorded as
    ``plan.commit``) unless ``uncommitted_plan``; ``cached_only`` summaries are exempt (they
    run nothing). ``pilot``: an earlier run of the same experiment whose noise the plan's
    ``design`` (:mod:`.design`) uses to state each test's detectable effect before any job.

    Raises:
        InputError: an unknown experiment, scale, ``models`` or ``memory_hmm``, a bad config, fewer
            than one trial, memory sizes the hidden memory HMM cannot have, an output or cache
            directory that is a file or unwritable, a ``plan`` file holding another plan without
            ``replan``, a ``plan`` not in a git commit without ``uncommitted_plan``, ``cached_only``
            with no finished job in the cache, a ``pilot`` that is not a run of ``name`` with this
            run's settings (all checked before any training).
    """
    from importlib import metadata

    from ..reports.render import Progress

    from ...models.mlm.model import check_configs
    from ...models.mlm.cache import cache_dir, check_writable_dir
    from .jobs import job_specs, read_cached, write_cached
    from .plot import plot

    t_start = time.perf_counter()
    if name not in EXPERIMENTS:
        raise InputError(f"experiment: expected one of {', '.join(EXPERIMENTS)}, found {name!r}")
    sc = resolve_scale(scale, config)
    from .config import MEMORY_HMMS, NUM_TOKENS, SYNTAX_STATES
    from .jobs import MODELS

    if models not in MODELS:
        raise InputError(f"--model: expected one of {', '.join(MODELS)}, found {models!r}")
    if memory_hmm is not None:
        if memory_hmm not in MEMORY_HMMS:
            raise InputError(f"--memory-hmm: expected one of {', '.join(MEMORY_HMMS)}, found {memory_hmm!r}")
        sc = dataclasses.replace(sc, memory_hmm=memory_hmm)
    if name == "fig3-right" and sc.memory_hmm == "hidden" and max(sc.memory_values) + SYNTAX_STATES - 1 > NUM_TOKENS:
        raise InputError(f"memory_values: the hidden memory HMM needs |M| <= {NUM_TOKENS - SYNTAX_STATES + 1} "
                         f"(|M| + {SYNTAX_STATES - 1} independent emission columns in {NUM_TOKENS} tokens), "
                         f"found {max(sc.memory_values)}")
    if trials is not None and trials < 1:
        raise InputError(f"--trials: expected a positive integer, found {trials}")
    for what, value in (("--trials", trials), ("trials_left", sc.trials_left), ("trials_right", sc.trials_right)):
        if value is not None and value > MAX_RUN_TRIALS:     # before the plan and the job list are built
            raise InputError(f"{what}: at most {MAX_RUN_TRIALS} trials per setting (each is a pretraining and "
                             f"a task), found {value}")
    check_configs(sc.model, sc.pretrain)
    need = sc.tune.num_prompts + sc.task.length + 1
    if name == "fig3-left" and need > sc.model.block_size:
        raise InputError(f"config: prompts + task length + 1 = {need} exceeds the MLM's block_size "
                         f"{sc.model.block_size}")
    trials = trials or (sc.trials_left if name == "fig3-left" else sc.trials_right)
    out = _check_out(Path(out) if out is not None else Path("runs") / f"{name}-{scale}")
    cache = check_writable_dir(cache_dir(), "cache directory ($HEADPROMPT_CACHE)")
    cfg = scale_to_dict(sc)
    from .plan import build_plan, write_plan
    specs = job_specs(name, cfg, seed=seed, trials=trials, share_pretraining=share_pretraining,
                      device=str(device), models=models)
    if cached_only and not any(read_cached(spec, str(cache)) is not None for spec in specs):
        raise InputError(f"--cached-only: none of this sweep's {len(specs)} jobs is in the cache ({cache}/jobs); "
                         f"nothing to summarise, nothing written (run without --cached-only, or set "
                         f"HEADPROMPT_CACHE to the cache that holds them)")

    the_plan = build_plan(name, scale, cfg, trials=trials, seed=seed, models=models,
                          share_pretraining=share_pretraining, pilot=pilot)
    plan_info = write_plan(Path(plan) if plan is not None else out / "plan.json", the_plan, replan=replan,
                           strict=plan is not None)
    if plan is not None:
        from .plan import plan_commit

        plan_info["commit"] = plan_commit(plan, plan_info["sha256"])
        if plan_info["commit"] is None and not uncommitted_plan and not cached_only:
            raise InputError(f"--plan: {plan} (sha256 {plan_info['sha256'][:12]}) is not in a git commit, so "
                             f"nothing shows it was fixed before the results; it is written now: commit it "
                             f"(git add {plan} && git commit -m 'plan {plan_info['sha256']}') and run again, "
                             f"or pass --uncommitted-plan")
    if plan_info["replaced_sha256"] and progress:
        import sys

        print(f"plan changed: {plan_info['file']} replaced (sha256 {plan_info['replaced_sha256'][:12]} -> "
              f"{plan_info['sha256'][:12]})", file=sys.stderr)
    for s in specs:
        s["threads"] = threads
    results: dict = {}
    failed: list = []
    reused = 0
    todo = []
    for spec in specs:
        hit = read_cached(spec, str(cache))
        if hit is not None:
            results[hit["key"]] = (spec, hit)
            reused += 1
        else:
            todo.append(spec)

    def on_result(spec: dict, result: dict) -> None:
        if "error" in result:
            failed.append({"setting": spec["setting"], "trial": spec["trial"], "error": result["error"],
                           "traceback": result.get("traceback")})
        else:
            write_cached(spec, result, str(cache))
            results[result["key"]] = (spec, result)

    missing = len(todo) if cached_only else 0
    if cached_only:
        todo = []
    try:
        _run_jobs(todo, ray, workers, on_result, progress, Progress(len(specs), f"{name} ({scale})", unit="job",
                                                                     each=True, initial=reused, quiet=not progress))
    except KeyboardInterrupt:
        import sys

        print(f"interrupted: kept {len(results)} of {len(specs)} jobs, finished and cached under {cache}/jobs "
              f"({reused} from before this run); the plan is in {plan_info['file']}; no results.csv or "
              f"summary.json written; the same command resumes", file=sys.stderr, flush=True)
        raise
    ordered = [results[k][1] for k in sorted(results, key=lambda k: (results[k][0]["trial"],
                                                                        specs.index(results[k][0])))]
    records = [r for res in ordered for r in res["records"]]
    keys = SETTING_KEYS[name]
    n_test = sc.task.num_test
    main = [r for r in records if _is_main(r)]
    quality = quality_by_setting([res for res in ordered if res.get("quality")], keys)
    from .claims import evaluate

    tested = evaluate(name, records, models, seed=seed) if records else {"predictions": [], "controls": [], "gate": {}}
    from .diagnostics import iid_records, movement_table
    from .search_edges import edge_table

    iid = iid_records(records)
    estimand_iid = None
    if iid is not None:
        tested_iid = evaluate(name, iid, models, seed=seed)
        estimand_iid = {"what": "accuracy on i.i.d. test draws (the paper's estimand; repeats of training "
                                "sequences included)",
                        "rows": summarize([r for r in iid if _is_main(r)], keys, n_test),
                        "control_rows": summarize([r for r in iid if not _is_main(r)], keys, n_test),
                        "predictions": tested_iid["predictions"], "controls": tested_iid["controls"]}
    try:
        version = metadata.version("headprompt")
    except metadata.PackageNotFoundError:
        version = "unknown"
    summary = {"experiment": name, "scale": scale, "device": str(device), "trials": trials, "seed": seed,
               "share_pretraining": share_pretraining, "models": models,
               "memory_hmm": sc.memory_hmm if name == "fig3-right" else None,
               "rows": summarize(main, keys, n_test),
               "plan": plan_info,
               "design": the_plan.get("design"),
               "predictions": tested["predictions"],
               "controls": tested["controls"],
               "gate": tested["gate"],
               "splits": _splits(records, n_test),
               "estimand": "rows, predictions and controls: the clean test split (no sequence of the training "
                           "split); estimand_iid: the same on i.i.d. test draws (the paper's)",
               "estimand_iid": estimand_iid,
               "search_edges": edge_table(records),
               "prompt_movement": movement_table(records, keys),
               "control_rows": summarize([r for r in records if not _is_main(r)], keys, n_test),
               "majority": majority_by_setting(records, keys),
               "quality": quality,
               "interval": "rows: 95% intervals over trials (verify.experiments.stats.accuracy_interval); "
                           "paired differences per setting: Student-t 95% over trials (description); "
                           "verdicts: one pooled test per claim (verify.experiments.stats.pooled_test) over "
                           "the (setting, trial) pairs whose MLMs passed the gate, Holm-adjusted over the "
                           "run's family (plan.family); reproductions outside the family",
               "failed_jobs": failed, "jobs": {"total": len(specs), "reused": reused, "failed": len(failed),
                                                        **({"missing": missing} if cached_only else {})},
               "config": cfg, "version": version, "seconds": round(time.perf_counter() - t_start, 1)}
    if records:
        with open(out / "results.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(records[0]) + sorted(
                {k for r in records for k in r} - set(records[0])))
            writer.writeheader()
            writer.writerows(records)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if records:
        from .paper_figure import paper_plot

        plot(name, summary, out / f"{name}.png", records)
        paper_plot(name, records, out / f"{name}-paper.png")
    return summary
