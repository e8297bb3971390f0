"""Re-fit the exact-``G`` linear heads of a committed Figure 3 run with the extended
regularisation-path search, from features rebuilt from the run's seeds (issue 36, item 1).

``python -m benchmarks.refit_heads RUN_DIR [RUN_DIR ...] --out DIR``

For every job of the run (its ``summary.json`` holds the configuration, seed, trials and models),
the job's HMM, splits and task are rebuilt exactly as :func:`verify.experiments.jobs.run_job`
builds them, the exact ``G_0`` features are recomputed, and

1. the committed ``head-fair`` is re-fitted on the committed grid ``(1, 1e-2, 1e-4)`` and must
   reproduce the committed selection and test accuracy exactly (else the job is reported as not
   reproduced and left out);
2. ``head-fair`` is fitted again with the extended search of :mod:`models.mlm.fair` (the path
   walked past the selected edge, down to ``l2 = 0``), its accuracy on the clean split and on
   i.i.d. test draws (the paper's estimand; rng ``[seed, key, 4, trial]``) recorded.

``--trials N`` re-fits the first ``N`` trials of each setting only (the re-tested claims then
read those trials, committed and re-fitted alike). MLM rows cannot be re-fitted this way: their pretrained models are not on this machine (their
pretraining cache was not committed). The output directory gets ``refit.csv`` (one row per
re-fitted head) and ``results.csv``: the committed rows with every exact ``head-fair`` row
replaced by the re-fitted one (other rows unchanged), so the run's claims can be re-tested with
:func:`verify.experiments.claims.evaluate` (``verdicts.txt``) and its searches' edges counted.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np


def _job_task(spec: dict):
    from headprompt.models.generate.sampling import sample
    from headprompt.models.mlm.splits import distinct_splits
    from headprompt.models.mlm.tuning import TaskConfig, make_task
    from headprompt.verify.experiments.jobs import job_model

    cfg = spec["config"]
    task_cfg = TaskConfig(**cfg["task"])
    model = job_model(spec)
    seed, trial = spec["seed"], spec["trial"]
    key = [{"memory": 1, "vanilla": 2}[spec["data"]], spec["size"]]
    sizes = {"train": task_cfg.num_train, "val": task_cfg.num_val, "test": task_cfg.num_test}
    tokens, _ = distinct_splits(model, sizes, task_cfg.length, rng=np.random.default_rng([seed, *key, 1, trial]))
    tokens["iid"] = sample(model.to_float(), task_cfg.num_test, task_cfg.length,
                           rng=np.random.default_rng([seed, *key, 4, trial]))[0]
    task = make_task(model, task_cfg, rng=np.random.default_rng([seed, *key, 2, trial]), tokens=tokens)
    return model, task


def refit_run(run: Path, out: Path, max_trials: int | None = None) -> dict:
    import torch

    from headprompt.models.mlm.fair import head_fair
    from headprompt.models.mlm.tuning import ExactBackbone
    from headprompt.verify.experiments.claims import evaluate
    from headprompt.verify.experiments.jobs import job_specs
    from headprompt.verify.experiments.search_edges import edge_table, edge_text

    summary = json.loads((run / "summary.json").read_text())
    with open(run / "results.csv", newline="") as fh:
        records = list(csv.DictReader(fh))
    name, models = summary["experiment"], summary.get("models", "both")
    specs = job_specs(name, summary["config"], seed=summary["seed"], trials=summary["trials"],
                      share_pretraining=summary["share_pretraining"], device="cpu", models=models)
    x_key = "hidden_states" if name == "fig3-left" else "hidden_total"
    committed = {(r[x_key], r.get("data") or "vanilla", r["trial"]): r for r in records
                 if r["model"] == "exact" and r["method"] == "head-fair"}
    out.mkdir(parents=True, exist_ok=True)
    rows, t0 = [], time.perf_counter()
    for spec in specs:
        if not any(m == ["exact", "head-fair"] for m in spec["methods"]):
            continue
        if max_trials is not None and spec["trial"] >= max_trials:
            continue
        x = str(spec["setting"][x_key])
        old = committed.get((x, spec["setting"].get("data", "vanilla"), str(spec["trial"])))
        if old is None:
            continue
        model, task = _job_task(spec)
        backbone = ExactBackbone(model, torch.device("cpu"))
        feats = {s: backbone.mask_outputs(task.tokens[s]) for s in task.tokens}
        before = head_fair(feats, task.labels, start=(1.0, 1e-2, 1e-4), stronger=(), weaker=())
        reproduced = (before["selected"] == old["selected"] and before["test"] == float(old["accuracy"])
                      and before["val"] == float(old["val_accuracy"]))
        after = head_fair(feats, task.labels)
        rows.append({"experiment": name, x_key: x, "data": spec["setting"].get("data", "vanilla"),
                     "trial": spec["trial"], "reproduced": reproduced,
                     "committed_selected": old["selected"], "committed_accuracy": float(old["accuracy"]),
                     "selected": after["selected"], "accuracy": after["test"], "val_accuracy": after["val"],
                     "train_accuracy": after["train"], "iid_accuracy": after["iid"],
                     "searched": " ".join(f"{k}:{v:.4f}" for k, v in after["searched"].items()),
                     "edge": after["edge"], "edge_beats": after["edge_beats"]})
        print(f"{name} {x_key}={x} {spec['setting'].get('data', '')} trial {spec['trial']}: reproduced {reproduced}, "
              f"{old['selected']} {float(old['accuracy']):.3f} -> {after['selected']} {after['test']:.3f} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    with open(out / "refit.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    new = {(r[x_key], r["data"], str(r["trial"])): r for r in rows if r["reproduced"]}
    merged = []
    if max_trials is not None:
        records = [r for r in records if int(r["trial"]) < max_trials]
    for r in records:
        k = (r[x_key], r.get("data") or "vanilla", r["trial"])
        if r["model"] == "exact" and r["method"] == "head-fair" and k in new:
            n = new[k]
            r = {**r, "accuracy": n["accuracy"], "val_accuracy": n["val_accuracy"],
                 "train_accuracy": n["train_accuracy"], "selected": n["selected"], "searched": n["searched"],
                 "iid_accuracy": n["iid_accuracy"]}
        merged.append(r)
    with open(out / "results.csv", "w", newline="") as fh:
        fields = list(merged[0]) + sorted({k for r in merged for k in r} - set(merged[0]))
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(merged)
    exact_rows = [r for r in merged if r["model"] in ("exact", "none")]
    before_t = evaluate(name, [r for r in records if r["model"] in ("exact", "none")], "exact",
                        seed=summary["seed"])
    after_t = evaluate(name, exact_rows, "exact", seed=summary["seed"])
    lines = [f"refit of {run} ({len(rows)} exact head-fair rows, {sum(r['reproduced'] for r in rows)} reproduced "
             f"exactly before the refit; {time.perf_counter() - t0:.0f} s)", "", "search edges, committed:"]
    lines += edge_text(edge_table(records)) + ["", "search edges, exact head-fair re-fitted:"]
    lines += edge_text(edge_table([r for r in merged if r["model"] == "exact" and r["method"] == "head-fair"]))
    for label, tested in (("committed", before_t), ("exact head-fair re-fitted", after_t)):
        lines += ["", f"exact-G tests, {label} (prompt and attention rows as committed):"]
        for p in tested["predictions"] + tested["controls"]:
            lines.append(f"- {p.get('claim') or p.get('control')}: {p['verdict']}\n  {p['evidence']}")
    (out / "verdicts.txt").write_text("\n".join(lines) + "\n")
    return {"rows": len(rows), "reproduced": sum(r["reproduced"] for r in rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True, help="one subfolder per run is written here")
    ap.add_argument("--trials", type=int, default=None, help="only the first N trials of each setting")
    args = ap.parse_args()
    for run in args.runs:
        sub = args.out / "-".join(run.parts[-2:])
        print(refit_run(run, sub, args.trials), flush=True)


if __name__ == "__main__":
    main()
