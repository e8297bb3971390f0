"""Figure 3's tested claims, stated before the run: which paired differences, which pairs count
(the per-trial gate), and the family the p-values are adjusted over.

Every test is a linear combination of accuracies from the same trial (``terms``: coefficient,
model, method, data), evaluated per (setting, trial) pair:

- fig3-left, per model: the claim ``prompt-fair - head-fair`` on ``|H| > |X| = 10`` (the fair
  pair, :mod:`models.mlm.fair`), the paper protocol's ``prompt - head`` as a reproduction, and
  ``prompt-refit - head-fair`` (both heads solved to convergence) as a sensitivity analysis.
- fig3-right (a 2 x 2 of {vanilla, memory} data x {linear, attention} head), per model: the
  paper's claim ``memory + attention-fair - vanilla + head-fair``; the interaction
  ``(memory + attention-fair - memory + head-fair) - (vanilla + attention-fair - vanilla +
  head-fair)`` (does memory help *more* with the attention head?); the controls ``memory +
  attention-fair - vanilla + attention-fair`` (the same head on the vanilla data) and ``memory
  + attention-fair - token-only attention-fair`` (``G`` replaced by a constant); and the paper
  protocol's ``memory + attention - vanilla + head`` as a reproduction.

The gate is per trial: an MLM pair counts only when every MLM it reads (the memory and the
vanilla one for a cross-data difference) passed the downstream gate of that trial
(:func:`models.mlm.gate.read_gate`: TV at position 0 with its upper bound); the excluded trials
are counted in every verdict. Exact rows have no gate.

Each test is one pooled test over its pairs (:func:`.stats.pooled_test`); the family of a run
(every claim, interaction and control, both models) is Holm-adjusted together
(:func:`.stats.adjust_family`); reproductions and sensitivity analyses are reported outside the
family, unadjusted.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NUM_TOKENS", "claim_tests", "family", "evaluate", "gate_table"]

NUM_TOKENS = 10


def _models(models: str) -> tuple:
    return {"both": ("mlm", "exact"), "mlm": ("mlm",), "exact": ("exact",)}[models]


def claim_tests(name: str, models: str = "both") -> list[dict]:
    """The tests of experiment ``name`` (module docstring): ``id``, ``kind`` (``claim``,
    ``interaction``, ``control`` or ``reproduction``), ``model``, ``text``, ``terms`` (``[coef,
    model, method, data]``), ``claim_on`` (``"|H| > 10"`` or ``"all"``) and ``in_family``."""
    out = []
    for m in _models(models):
        if name == "fig3-left":
            out.append({"id": f"claim:{m}", "kind": "claim", "model": m, "claim_on": "|H| > 10",
                        "text": f"prompt tuning beats head tuning when |H| > |X| = {NUM_TOKENS}, fair baselines ({m})",
                        "terms": [[1, m, "prompt-fair", "vanilla"], [-1, m, "head-fair", "vanilla"]]})
            out.append({"id": f"reproduction:{m}", "kind": "reproduction", "model": m, "claim_on": "|H| > 10",
                        "text": f"prompt tuning beats head tuning when |H| > |X| = {NUM_TOKENS}, "
                                f"paper's protocol ({m})",
                        "terms": [[1, m, "prompt", "vanilla"], [-1, m, "head", "vanilla"]]})
            out.append({"id": f"sensitivity-refit:{m}", "kind": "sensitivity", "model": m, "claim_on": "|H| > 10",
                        "text": f"prompt tuning beats head tuning when |H| > |X| = {NUM_TOKENS}, both heads "
                                f"solved to convergence (prompt-refit vs head-fair) ({m})",
                        "terms": [[1, m, "prompt-refit", "vanilla"], [-1, m, "head-fair", "vanilla"]]})
            continue
        att = [1, m, "attention-fair", "memory"]
        out += [    # the interaction first: it is the paper's point (memory helps because of the head)
            {"id": f"interaction:{m}", "kind": "interaction", "model": m, "claim_on": "all",
             "text": f"memory helps more with the attention head than with the linear head "
                     f"(2 x 2 interaction, fair baselines) ({m})",
             "terms": [att, [-1, m, "head-fair", "memory"], [-1, m, "attention-fair", "vanilla"],
                       [1, m, "head-fair", "vanilla"]]},
            {"id": f"claim:{m}", "kind": "claim", "model": m, "claim_on": "all",
             "text": f"memory HMM + attention head beats vanilla HMM + linear head at equal |M||H|, "
                     f"fair baselines ({m})",
             "terms": [att, [-1, m, "head-fair", "vanilla"]]},
            {"id": f"control-vanilla-attention:{m}", "kind": "control", "model": m, "claim_on": "all",
             "text": "same attention head on the vanilla HMM's data",
             "terms": [att, [-1, m, "attention-fair", "vanilla"]]},
            {"id": f"control-token-only:{m}", "kind": "control", "model": m, "claim_on": "all",
             "text": "token-only attention head (G replaced by a constant) on the memory data",
             "terms": [att, [-1, "none", "attention-tokens-fair", "memory"]]},
            {"id": f"reproduction:{m}", "kind": "reproduction", "model": m, "claim_on": "all",
             "text": f"memory HMM + attention head beats vanilla HMM + linear head at equal |M||H|, "
                     f"paper's protocol ({m})",
             "terms": [[1, m, "attention", "memory"], [-1, m, "head", "vanilla"]]},
        ]
    for t in out:
        t["in_family"] = t["kind"] not in ("reproduction", "sensitivity")
    return out


def family(name: str, models: str = "both") -> list[str]:
    """The ids of the tests Holm adjusts together (the run's claims, interactions and controls)."""
    return [t["id"] for t in claim_tests(name, models) if t["in_family"]]


def _x_key(name: str) -> str:
    return "hidden_states" if name == "fig3-left" else "hidden_total"


def _data(r: dict) -> str:
    return r.get("data") or "vanilla"


def _passed(value) -> bool:
    return value is True or str(value).lower() == "true"


def gate_table(name: str, records: list) -> dict:
    """The downstream gate of every MLM of the run (one per setting, data and trial):
    ``{"mlms", "failed", "trials": [...]}``; ``passed`` per ``(x, data, trial)`` under ``lookup``."""
    x_key, rows, lookup = _x_key(name), {}, {}
    for r in records:
        if r["model"] != "mlm" or r.get("gate0_bound") in ("", None):
            continue
        k = (int(r[x_key]), _data(r), int(r["trial"]))
        if k not in rows:
            rows[k] = {"setting": k[0], "data": k[1], "trial": k[2], "tv0": float(r["gate0_tv"]),
                       "se": float(r["gate0_se"]), "bound": float(r["gate0_bound"]),
                       "sequences": int(r["gate0_sequences"]), "passed": _passed(r["gate_passed"])}
            lookup[k] = rows[k]["passed"]
    trials = [rows[k] for k in sorted(rows)]
    return {"mlms": len(trials), "failed": sum(not t["passed"] for t in trials), "trials": trials,
            "lookup": lookup}


def _cells(name: str, records: list) -> dict:
    """``{(model, method, data): {x: {trial: accuracy}}}``."""
    x_key, out = _x_key(name), {}
    for r in records:
        out.setdefault((r["model"], r["method"], _data(r)), {}).setdefault(int(r[x_key]), {})[int(r["trial"])] = \
            float(r["accuracy"])
    return out


def _in_claim(test: dict, x: int) -> bool:
    return test["claim_on"] == "all" or x > NUM_TOKENS


def _evaluate_one(test: dict, cells: dict, gate: dict) -> dict:
    from .stats import paired_interval

    terms = [(c, cells.get((m, meth, d), {}), m, d) for c, m, meth, d in test["terms"]]
    xs = sorted(set.intersection(*(set(cell) for _, cell, _, _ in terms)))
    per, counted, excluded = [], {}, []
    for x in xs:
        trials = sorted(set.intersection(*(set(cell[x]) for _, cell, _, _ in terms)))
        diffs = {t: sum(c * cell[x][t] for c, cell, _, _ in terms) for t in trials}
        gated = [t for t in trials if any(m == "mlm" and not gate.get((x, d, t), False) for _, _, m, d in terms)]
        keep = [t for t in trials if t not in gated]
        in_claim = _in_claim(test, x)
        ci = paired_interval([diffs[t] for t in keep]) if keep else None
        per.append({"setting": x, "difference": float(np.mean([diffs[t] for t in keep])) if keep else None,
                    "ci95": list(ci) if ci else None, "trials": len(keep), "excluded_trials": gated,
                    "in_claim": in_claim, "counts": in_claim and bool(keep)})
        if in_claim:
            excluded += [[x, t] for t in gated]
            if keep:
                counted[x] = [diffs[t] for t in keep]
    return {"paired": per, "groups": counted, "excluded": excluded}


def _fmt(item: dict, x_label: str) -> str:
    pt = item["pooled"]
    parts = []
    for p in item["paired"]:
        if p["difference"] is None:
            parts.append(f"{p['setting']}: every trial excluded by the gate")
            continue
        ci = (f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]" if p["ci95"] else
              "[no interval: 1 trial]" if p["trials"] == 1 else "[no interval: zero spread]")
        flag = "" if p["in_claim"] else " (not in claim)"
        ex = f", {len(p['excluded_trials'])} excluded" if p["excluded_trials"] else ""
        parts.append(f"{p['setting']}: {p['difference']:+.3f} {ci} ({p['trials']} trials{ex}){flag}")
    if pt.get("estimate") is None:
        pooled = "no pairs count"
    else:
        ci = (f"[{pt['ci95'][0]:+.3f}, {pt['ci95'][1]:+.3f}]" if pt.get("ci95") else
              f"[{pt['ci95_note']}]" if pt.get("ci95_note") else "[no interval]")
        p = pt.get("p", pt.get("p_value"))
        padj = pt.get("p_adjusted", p)
        pv = f"{p:.2g}" if p is not None else "n/a"
        pa = f"{padj:.2g}" if padj is not None else "n/a"
        mde = pt.get("detectable_effect", pt.get("mde"))
        pooled = (f"{pt['estimate']:+.3f} {ci} over {pt['pairs']} pairs in {pt['settings']} settings, p = {pv}, "
                  + (f"Holm-adjusted p = {pa}, " if item["in_family"] else "outside the family (unadjusted), ")
                  + (f"detectable effect (80% power) {mde:.3f}" if mde is not None else "detectable effect n/a"))
    return (f"pooled: {pooled}: {item['verdict']}; trials excluded by the gate: {item['excluded_trials']}. "
            f"Described per {x_label} (mean, 95% t-interval over trials): " + "; ".join(parts))


def evaluate(name: str, records: list, models: str = "both", *, seed: int = 0) -> dict:
    """Every test of the run on ``records`` (``results.csv``'s rows): ``{"predictions", "controls",
    "gate"}``; the family is Holm-adjusted together (module docstring)."""
    from .stats import adjust_family, pooled_test, verdict_text

    gate = gate_table(name, records)
    cells = _cells(name, records)
    items = []
    for test in claim_tests(name, models):
        ev = _evaluate_one(test, cells, gate["lookup"])
        items.append((test, ev, pooled_test(ev["groups"], seed=seed)))
    fam = [i for i, (t, _, _) in enumerate(items) if t["in_family"]]
    adjusted = adjust_family([items[i][2] for i in fam])
    pooled = [p for _, _, p in items]
    for i, a in zip(fam, adjusted):
        pooled[i] = a
    x_label = "|H|" if name == "fig3-left" else "|M||H|"
    predictions, control_list = [], []
    for (test, ev, _), pt in zip(items, pooled):
        item = {"id": test["id"], "kind": test["kind"], "model": test["model"], "in_family": test["in_family"],
                "terms": test["terms"], "verdict": verdict_text(pt), "held": pt["verdict"] == "supported",
                "pooled": pt, "paired": ev["paired"], "excluded_trials": len(ev["excluded"]),
                "excluded": ev["excluded"], "family_size": len(fam) if test["in_family"] else 1}
        item["evidence"] = _fmt(item, x_label)
        if test["kind"] == "control":
            control_list.append({"control": test["text"], "beaten": item["held"], **item})
        else:
            predictions.append({"claim": test["text"], **item})
    gate.pop("lookup")
    return {"predictions": predictions, "controls": control_list, "gate": gate}
