"""Figure 3 of the paper, with the exact-``G`` oracle beside the pretrained MLM (SPEC section 4).

``fig3-left``: for each hidden size ``|H|`` an Appendix D HMM (``|X| = 10``), an MLM pretrained
on its documents, and per trial a fresh sparse task; head tuning and prompt tuning (20 prompt
vectors) on the MLM and on the exact ``Gbar``. ``fig3-right``: a single-cell memory HMM with
``|H| = 4`` syntax states and ``|M|`` memory values tuned with the attention head, against a
vanilla HMM with ``|M||H|`` hidden states tuned with a linear head, again on the MLM and on the
exact ``Gbar``. A trial redraws ``mu`` (and the head's and prompts' initialisation) on sequences
sampled once per setting; the pretrained model is one per setting, as in Appendix D (whose
pretraining "was only done once for each hidden state size"). Accuracies are on the test split
at the last step (no early stopping); the 95% intervals are Student-t over trials, clipped to
[0, 1] (a point when there is one trial).

Scales (wall-clock measured on this project's 2-core CPU machine, one torch thread, while other
jobs kept the load average near 3.5; an idle machine should take about half):
- ``tiny``: two settings per figure, small model and data; 29 s for each figure on an idle
  machine (33 s and 62 s under load; CI runs both).
- ``cpu``: every setting of the paper with a 2-layer, 64-wide MLM (1024 pretraining steps of
  32 x 64 tokens, 25% masking), 32-token tasks with 2000/250/500 examples, 5 / 3 trials;
  on an idle machine ``fig3-left`` took 11.1 min and ``fig3-right`` 6.7 min (24.4 and 17.0
  under load; in ``fig3-left`` about half is MLM prompt tuning, most of the rest pretraining).
- ``paper``: Appendix D's sizes (BERT-base width, 6 layers, 5000 documents of 10240 tokens,
  128-token tasks, 5000/500/1000 examples, 20 / 5 trials); meant for a GPU.
The CLI runs ``tiny`` and ``cpu`` on one intra-op thread unless ``OMP_NUM_THREADS`` is set: these
models are too small to gain from a second thread, and on a shared machine a busy second core
made a multi-threaded run five to ten times slower.

Outputs in ``out``: ``results.csv`` (one row per trial, model and method), ``summary.json``
(SPEC section 4) and ``fig3-left.png`` or ``fig3-right.png``.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..models.exceptions import InputError
from ..models.generators import appendix_d_hmm, appendix_d_memory_hmm
from ..models.mlm import MLMConfig, PretrainConfig, load_or_pretrain
from ..models.sampling import sample
from ..models.tuning import SPLITS, ExactBackbone, MLMBackbone, TaskConfig, TuneConfig, make_task, tune

__all__ = ["Scale", "SCALES", "EXPERIMENTS", "run_experiment", "summarize", "confidence_interval"]

NUM_TOKENS = 10
SYNTAX_STATES = 4
EXPERIMENTS = ("fig3-left", "fig3-right")


@dataclass(frozen=True)
class Scale:
    """Everything a scale fixes: model, pretraining, task and tuning configs, settings, trials."""

    model: MLMConfig
    pretrain: PretrainConfig
    task: TaskConfig
    tune: TuneConfig
    hidden_sizes: tuple = (4, 8, 10, 12, 15, 25, 30)
    memory_values: tuple = (2, 3, 5, 7)
    trials_left: int = 20
    trials_right: int = 5


SCALES = {
    "tiny": Scale(
        model=MLMConfig(num_tokens=NUM_TOKENS, block_size=48, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
        pretrain=PretrainConfig(num_documents=96, document_length=960, mask_rate=0.25, batch_size=32,
                                learning_rate=3e-3, warmup_steps=20, epochs=3),
        task=TaskConfig(length=16, num_train=400, num_val=100, num_test=300),
        tune=TuneConfig(epochs=5, batch_size=32),
        hidden_sizes=(4, 15), memory_values=(2, 3), trials_left=2, trials_right=2),
    "cpu": Scale(
        model=MLMConfig(num_tokens=NUM_TOKENS, block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
        pretrain=PretrainConfig(num_documents=256, document_length=2048, mask_rate=0.25, batch_size=32,
                                learning_rate=3e-3, warmup_steps=50, epochs=4),
        task=TaskConfig(length=32, num_train=2000, num_val=250, num_test=500),
        tune=TuneConfig(epochs=5, batch_size=32),
        trials_left=5, trials_right=3),
    "paper": Scale(
        model=MLMConfig(num_tokens=NUM_TOKENS, block_size=512, n_layer=6, n_head=12, n_embd=768, dropout=0.1),
        pretrain=PretrainConfig(),
        task=TaskConfig(),
        tune=TuneConfig(),
        trials_left=20, trials_right=5),
}


def confidence_interval(values) -> tuple[float, float]:
    """Student-t 95% interval of the mean, clipped to ``[0, 1]`` (accuracies); the point
    itself for a single value or no spread."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    m = float(v.mean())
    if len(v) < 2 or float(v.std()) == 0.0:
        return m, m
    half = float(stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return max(0.0, m - half), min(1.0, m + half)


@dataclass
class _Run:
    """Mutable state of one experiment run: trial records and pretraining notes."""

    name: str
    scale: Scale
    device: torch.device
    seed: int
    progress: bool
    records: list = field(default_factory=list)

    def setting(self, setting: dict, data_model, methods: list, trials: int) -> None:
        """Pretrain (or load) the MLM for ``data_model``, then run every (backbone, method)
        for ``trials`` tasks on one shared set of sequences."""
        sc = self.scale
        key = [{"memory": 1, "vanilla": 2}.get(v, v) for v in setting.values()]   # ints for the rng
        mlm, info = load_or_pretrain(data_model, sc.model, sc.pretrain, seed=self.seed, device=self.device,
                                     progress=self.progress)
        backbones = {"mlm": MLMBackbone(mlm, self.device, progress=self.progress),
                     "exact": ExactBackbone(data_model, self.device)}
        sizes = [sc.task.num_train, sc.task.num_val, sc.task.num_test]
        toks = sample(data_model.to_float(), sum(sizes), sc.task.length,
                      rng=np.random.default_rng([self.seed, *key, 1]))[0]
        tokens = dict(zip(SPLITS, np.split(toks, np.cumsum(sizes)[:-1])))
        cached: dict = {}
        for trial in range(trials):
            task = make_task(data_model, sc.task, rng=np.random.default_rng([self.seed, *key, 2, trial]),
                             tokens=tokens)
            for model_name, method in methods:
                backbone = backbones[model_name]
                feats = None
                if method in ("head", "attention"):
                    if (model_name, method) not in cached:
                        compute = backbone.all_outputs if method == "attention" else backbone.mask_outputs
                        cached[model_name, method] = {s: compute(tokens[s]) for s in SPLITS}
                    feats = cached[model_name, method]
                t0 = time.perf_counter()
                acc = tune(backbone, task, method, sc.tune, seed=self.seed * 1000 + trial, features=feats,
                           progress=self.progress)
                self.records.append({
                    "experiment": self.name, **setting, "model": model_name, "method": method,
                    "trial": trial, "accuracy": acc["test"], "val_accuracy": acc["val"],
                    "train_accuracy": acc["train"], "majority": task.majority_accuracy("test"),
                    "redraws": task.redraws, "pretrain_loss": info["final_loss"],
                    "unigram_entropy": info["unigram_entropy"], "pretrain_cached": info["cached"],
                    "seconds": round(time.perf_counter() - t0, 3)})


SETTING_KEYS = {"fig3-left": ("hidden_states",), "fig3-right": ("data", "memory_values", "hidden_total")}


def _left(run: _Run, trials: int, bar) -> None:
    methods = [(m, k) for m in ("mlm", "exact") for k in ("head", "prompt")]
    for H in run.scale.hidden_sizes:
        hmm = appendix_d_hmm(H, NUM_TOKENS, rng=np.random.default_rng([run.seed, H]))
        run.setting({"hidden_states": H}, hmm, methods, trials)
        bar.update(1)


def _right(run: _Run, trials: int, bar) -> None:
    for M in run.scale.memory_values:
        mem = appendix_d_memory_hmm(M, SYNTAX_STATES, NUM_TOKENS, rng=np.random.default_rng([run.seed, 1000 + M]))
        run.setting({"data": "memory", "memory_values": M, "hidden_total": M * SYNTAX_STATES}, mem,
                    [("mlm", "attention"), ("exact", "attention")], trials)
        bar.update(1)
        H = M * SYNTAX_STATES   # the same seed as fig3-left's |H| = H, so the pretraining cache is shared
        hmm = appendix_d_hmm(H, NUM_TOKENS, rng=np.random.default_rng([run.seed, H]))
        run.setting({"data": "vanilla", "memory_values": M, "hidden_total": H}, hmm,
                    [("mlm", "head"), ("exact", "head")], trials)
        bar.update(1)


def summarize(records: list, keys: tuple) -> list:
    """One summary row per (setting, method, model): mean test accuracy, 95% CI, trial count."""
    groups: dict = {}
    for r in records:
        groups.setdefault((tuple(r[k] for k in keys), r["method"], r["model"]), []).append(r["accuracy"])
    rows = []
    for (values, method, model), accs in groups.items():
        lo, hi = confidence_interval(accs)
        rows.append({"setting": dict(zip(keys, values)), "method": method, "model": model,
                     "accuracy": float(np.mean(accs)), "ci95": [lo, hi], "trials": len(accs)})
    return rows


def _mean(rows: list, **match) -> dict:
    """``{setting key: accuracy}`` of the rows matching ``match`` (setting or row fields)."""
    out = {}
    for r in rows:
        if all(r.get(k, r["setting"].get(k)) == v for k, v in match.items()):
            out[tuple(r["setting"].values())[-1]] = r["accuracy"]
    return out


def _predictions(name: str, rows: list) -> list:
    preds = []
    for model in ("mlm", "exact"):
        if name == "fig3-left":
            a, b = _mean(rows, model=model, method="prompt"), _mean(rows, model=model, method="head")
            sizes = sorted(h for h in a if h > NUM_TOKENS and h in b)
            claim = f"prompt tuning beats head tuning when |H| > |X| = {NUM_TOKENS} ({model})"
            what = ("prompt", "head", "|H|")
        else:
            a = _mean(rows, model=model, method="attention", data="memory")
            b = _mean(rows, model=model, method="head", data="vanilla")
            sizes = sorted(h for h in a if h in b)
            claim = f"memory HMM + attention head beats vanilla HMM + linear head at equal |M||H| ({model})"
            what = ("memory+attention", "vanilla+linear", "|M||H|")
        if not sizes:
            preds.append({"claim": claim, "held": False, "evidence": f"no {what[2]} setting at this scale"})
            continue
        ma, mb = float(np.mean([a[s] for s in sizes])), float(np.mean([b[s] for s in sizes]))
        per = ", ".join(f"{s}: {a[s] - b[s]:+.3f}" for s in sizes)
        preds.append({"claim": claim, "held": bool(ma > mb),
                      "evidence": f"mean test accuracy {what[0]} {ma:.3f} vs {what[1]} {mb:.3f} over "
                                  f"{what[2]} in {sizes}; difference per {what[2]}: {per}"})
    return preds


def _plot(name: str, rows: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    if name == "fig3-left":
        lines = [("head", None, "Head tuning", "tab:blue"), ("prompt", None, "Prompt tuning", "tab:orange")]
        ax.axvline(NUM_TOKENS, color="grey", ls=":", lw=1, label="|H| = |X|")
        ax.set_xlabel("hidden states |H|")
    else:
        lines = [("attention", "memory", "Memory HMM + attention", "tab:green"),
                 ("head", "vanilla", "Vanilla HMM + linear head", "tab:red")]
        ax.set_xlabel("|M||H|")
    for method, data, label, color in lines:
        for model, style in (("mlm", "-"), ("exact", "--")):
            sel = sorted((tuple(r["setting"].values())[-1], r) for r in rows
                         if r["method"] == method and r["model"] == model
                         and (data is None or r["setting"].get("data") == data))
            if not sel:
                continue
            x = [s for s, _ in sel]
            ax.plot(x, [r["accuracy"] for _, r in sel], style, marker="o", color=color,
                    label=f"{label} ({'MLM' if model == 'mlm' else 'exact G'})")
            ax.fill_between(x, [r["ci95"][0] for _, r in sel], [r["ci95"][1] for _, r in sel],
                            color=color, alpha=0.15)
    ticks = sorted({tuple(r["setting"].values())[-1] for r in rows})
    ax.set_xticks(ticks)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("test accuracy")
    ax.set_title(f"{name}: MLM (solid) and exact G (dashed), 95% intervals")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_experiment(name: str, scale: str, *, device: torch.device, trials: int | None = None,
                   seed: int = 0, out: Path | str | None = None, progress: bool = True) -> dict:
    """Run ``fig3-left`` or ``fig3-right`` at ``scale``; write the outputs into ``out``
    (default ``runs/<name>-<scale>``) and return the summary dict (SPEC section 4).

    Raises:
        InputError: an unknown experiment or scale, or fewer than one trial.
    """
    from tqdm.auto import tqdm

    if name not in EXPERIMENTS:
        raise InputError(f"experiment: expected one of {', '.join(EXPERIMENTS)}, found {name!r}")
    if scale not in SCALES:
        raise InputError(f"--scale: expected one of {', '.join(SCALES)}, found {scale!r}")
    if trials is not None and trials < 1:
        raise InputError(f"--trials: expected a positive integer, found {trials}")
    sc = SCALES[scale]
    trials = trials or (sc.trials_left if name == "fig3-left" else sc.trials_right)
    out = Path(out) if out is not None else Path("runs") / f"{name}-{scale}"
    out.mkdir(parents=True, exist_ok=True)
    run = _Run(name, sc, device, seed, progress)
    total = len(sc.hidden_sizes) if name == "fig3-left" else 2 * len(sc.memory_values)
    with tqdm(total=total, desc=f"{name} ({scale})", disable=None if progress else True) as bar:
        (_left if name == "fig3-left" else _right)(run, trials, bar)
    rows = summarize(run.records, SETTING_KEYS[name])
    summary = {"experiment": name, "scale": scale, "device": str(device), "rows": rows,
               "predictions": _predictions(name, rows)}
    with open(out / "results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(run.records[0]))
        writer.writeheader()
        writer.writerows(run.records)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(name, rows, out / f"{name}.png")
    return summary
