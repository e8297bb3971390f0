"""The design block of a plan (``--pilot``): the per-setting noise is the pilot's (checked
against numpy's sample SD of hand-made differences), and the stated detectable effect behaves
as a power statement must (at least the normal-theory value, smaller with more trials, larger
at Holm's strictest level); a pilot that is not a run of the same design is refused."""

import csv
import json
import math

import numpy as np
import pytest

from headprompt.models.exceptions import InputError
from headprompt.verify.cli.main import main
from headprompt.verify.experiments.claims import family
from headprompt.verify.experiments.design import design_line, pilot_design

SETTINGS = [8, 12, 20, 28]
SDS = [0.05, 0.10, 0.15, 0.08]
PILOT_TRIALS = 6


def _pilot(tmp_path, experiment="fig3-right", settings=SETTINGS):
    """A pilot where only ``memory + attention-fair`` varies: every interaction difference is that
    row's noise, so its per-setting SD is the sample SD of the noise."""
    rng = np.random.default_rng(5)
    noise = {x: rng.normal(0, s, PILOT_TRIALS) for x, s in zip(settings, SDS)}
    rows = []
    for x in settings:
        for t in range(PILOT_TRIALS):
            for model, method, data, acc in (("exact", "attention-fair", "memory", 0.7 + noise[x][t]),
                                             ("exact", "head-fair", "memory", 0.6),
                                             ("exact", "attention-fair", "vanilla", 0.6),
                                             ("exact", "head-fair", "vanilla", 0.6),
                                             ("none", "attention-tokens-fair", "memory", 0.5)):
                rows.append({"model": model, "method": method, "data": data, "hidden_total": x, "trial": t,
                             "accuracy": acc, "gate0_bound": ""})
    (tmp_path / "pilot").mkdir()
    with open(tmp_path / "pilot" / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plan = {"experiment": experiment, "models": "exact", "settings": [{"hidden_total": x} for x in settings]}
    (tmp_path / "pilot" / "plan.json").write_text(json.dumps({"sha256": "0" * 64, "plan": plan}))
    return tmp_path / "pilot", noise


def _design(pilot, trials):
    return pilot_design("fig3-right", "exact", pilot, trials=trials,
                        settings=[{"hidden_total": x} for x in SETTINGS], family=family("fig3-right", "exact"),
                        reps=200)


def test_the_noise_is_the_pilots_and_the_effect_is_a_power_statement(tmp_path):
    pilot, noise = _pilot(tmp_path)
    small, large = _design(pilot, 4), _design(pilot, 8)
    t = small["tests"]["interaction:exact"]
    assert t["pilot_setting_sds"] == pytest.approx([float(np.std(noise[x], ddof=1)) for x in SETTINGS], abs=1e-6)
    assert t["pilot_trials"] == [PILOT_TRIALS] * 4
    # Normal theory, z-test of the stratified mean: (z_0.975 + z_0.8) * SE; the rule is a
    # t-type test with skewness allowances, so it needs at least that (10% slack: 200 simulated tables).
    for d, n in ((small, 4), (large, 8)):
        s = d["tests"]["interaction:exact"]
        se = math.sqrt(sum(v ** 2 for v in s["pilot_setting_sds"]) / n) / 4
        assert s["mde"] >= 0.9 * (1.959964 + 0.841621) * se
        assert s["mde"] <= 2.5 * (1.959964 + 0.841621) * se
        assert s["mde_holm"] > s["mde"]                    # alpha / 4 asks for more
    assert large["tests"]["interaction:exact"]["mde"] < small["tests"]["interaction:exact"]["mde"]
    assert small["holm_alpha"] == pytest.approx(0.05 / len(family("fig3-right", "exact")))
    assert "4 trials per setting" in design_line(small, "interaction:exact")
    assert design_line(small, "no-such-test") is None and design_line(None, "interaction:exact") is None


def test_a_pilot_of_another_design_is_refused(tmp_path):
    other, _ = _pilot(tmp_path, experiment="fig3-left")
    with pytest.raises(InputError, match="fig3-left"):
        _design(other, 8)
    (tmp_path / "b").mkdir()
    wrong, _ = _pilot(tmp_path / "b", settings=[8, 12, 20, 36])
    with pytest.raises(InputError, match="settings"):
        _design(wrong, 8)
    with pytest.raises(InputError, match="not found"):
        _design(tmp_path / "nowhere", 8)


def test_the_cli_refuses_a_bad_pilot_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    code = main(["experiment", "fig3-right", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path / "o"),
                 "--pilot", str(tmp_path / "nowhere")])
    err = capsys.readouterr().err
    assert code == 2 and "--pilot" in err and len(err.strip().splitlines()) == 1
