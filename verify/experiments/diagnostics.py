"""The referee's sections of a Figure 3 summary, computed from ``results.csv`` rows alone:
the paper's estimand beside the clean one, and how far the prompts moved.

- :func:`iid_records`: the rows with ``accuracy`` read from ``iid_accuracy``: accuracy on a test
  set of i.i.d. draws of the HMM (repeats of training sequences included), the paper's
  estimand; the run's own rows and verdicts use the clean split (no test sequence occurs in the
  training split). ``None`` for a run made before the column existed.
- :func:`movement_table`: per (setting, model, prompt method), the mean total variation the
  prompt moved the head's input by on the test split (``prompt_tv``), the share of test
  outputs moved by more than 0.01, the share of test predictions that differ from the same
  protocol's head, and how many trials changed no test prediction at all (the prompt "did not
  move" the classifier), with the diagnosis columns of :func:`models.mlm.tuning.tune` (the
  gradient at the initial prompt, the prompt's shift, the sigmoid's saturation).
"""

from __future__ import annotations

import math

__all__ = ["iid_records", "movement_table", "movement_text"]


def _num(value) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def iid_records(records: list) -> list | None:
    """``records`` with ``accuracy`` := ``iid_accuracy`` (module docstring), or ``None`` when a
    row lacks it."""
    if not records or any(_num(r.get("iid_accuracy")) is None for r in records):
        return None
    return [{**r, "accuracy": float(r["iid_accuracy"])} for r in records]


def movement_table(records: list, keys: tuple) -> list[dict]:
    """Module docstring; one dict per (setting, model, method) with prompt movement columns."""
    groups: dict = {}
    for r in records:
        if _num(r.get("prompt_tv")) is None:
            continue
        k = (tuple(int(r[key]) if str(r[key]).isdigit() else r[key] for key in keys), r["model"], r["method"])
        groups.setdefault(k, []).append(r)
    out = []
    for (setting, model, method), rows in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        def mean(col: str) -> float | None:
            vals = [v for v in (_num(r.get(col)) for r in rows) if v is not None]
            return sum(vals) / len(vals) if vals else None

        changed = [_num(r.get("prompt_pred_changed")) for r in rows]
        out.append({"setting": dict(zip(keys, setting)), "model": model, "method": method, "trials": len(rows),
                    "tv_mean": mean("prompt_tv"), "outputs_changed": mean("prompt_out_changed"),
                    "predictions_changed": mean("prompt_pred_changed"),
                    "unmoved_trials": sum(c == 0 for c in changed if c is not None),
                    "grad0_mean": mean("prompt_grad0"), "shift_mean": mean("prompt_shift"),
                    "saturated_mean": mean("prompt_saturated")})
    return out


def movement_text(table: list) -> list[str]:
    """One line per row of :func:`movement_table`."""
    def f(v, spec=".3f"):
        return "n/a" if v is None else format(v, spec)

    return [f"{t['model']} {t['method']} at {', '.join(f'{k}={v}' for k, v in t['setting'].items())}: "
            f"mean TV moved {f(t['tv_mean'])}, outputs moved > 0.01 {f(t['outputs_changed'], '.0%')}, "
            f"predictions changed vs the head {f(t['predictions_changed'], '.1%')}; {t['unmoved_trials']} of "
            f"{t['trials']} trials changed no test prediction; gradient at the initial prompt "
            f"{f(t['grad0_mean'], '.2g')}, prompt shift {f(t['shift_mean'], '.2g')}" for t in table]
