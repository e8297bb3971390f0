"""Issue 18's experiment options: ``--model exact`` (no pretraining) and the fig3-right memory
HMM whose tokens alone hardly reveal the memory (``--memory-hmm hidden``)."""

import csv
import json

import numpy as np
import pytest

from headprompt.models.exceptions import InputError
from headprompt.models.generate.generators import hidden_memory_hmm
from headprompt.models.generate.sampling import sample
from headprompt.verify.cli.main import main
from headprompt.verify.checks.registry import check_assumptions

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("M", [2, 3, 5, 7])
def test_hidden_memory_hmm_meets_theorem_43_exactly(M):
    for seed in range(3):
        model = hidden_memory_hmm(M, rng=np.random.default_rng([seed, M]), exact=True)
        assert model.exact
        result = check_assumptions(model, "4.3")
        assert all(v["holds"] for v in result.values()), result
        W = np.asarray(model.W, dtype=object)                       # [X, M, S]
        for h in range(1, model.syntax_states):                    # shared emissions away from state 0
            assert all((W[:, m, h] == W[:, 0, h]).all() for m in range(M))
        assert not all((W[:, m, 0] == W[:, 0, 0]).all() for m in range(M))


def test_hidden_memory_hmm_visits_the_memory_state_rarely():
    model = hidden_memory_hmm(3, rng=np.random.default_rng(0), visit=0.3)
    # the stationary share of syntax state 0, by sampling (independent of the construction's algebra)
    _, syntax, _ = sample(model, 400, 60, rng=np.random.default_rng(1))
    syntax = np.asarray(syntax)
    assert syntax.max() < model.syntax_states
    share = float((syntax[:, 20:] == 0).mean())
    # chain 1 -> 2 -> 3 -> (0 w.p. 0.3, else 1), 0 -> 1: share 0.3 / 3.3 = 0.09 (mixing 0.02 moves it a little)
    assert 0.06 < share < 0.13


def test_hidden_memory_hmm_rejects_sizes_where_42_cannot_hold():
    with pytest.raises(InputError, match="exceeds num_tokens"):
        hidden_memory_hmm(8, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="visit"):
        hidden_memory_hmm(2, rng=np.random.default_rng(0), visit=1.5)
    with pytest.raises(InputError, match="syntax_states"):
        hidden_memory_hmm(2, 2, rng=np.random.default_rng(0))


def test_cli_rejects_memory_sizes_the_hidden_hmm_cannot_have(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    cfg = tmp_path / "big.json"
    cfg.write_text(json.dumps({"memory_values": [8]}))
    code = main(["experiment", "fig3-right", "--scale", "tiny", "--memory-hmm", "hidden", "--config", str(cfg),
                 "--out", str(tmp_path / "out"), "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 2 and "hidden memory HMM needs |M| <= 7" in err and "Traceback" not in err
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("mlm-*"))


def test_exact_model_only_runs_no_pretraining(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    cfg = tmp_path / "one.json"
    cfg.write_text(json.dumps({"memory_values": [2]}))
    code = main(["experiment", "fig3-right", "--scale", "tiny", "--model", "exact", "--memory-hmm", "hidden",
                 "--trials", "2", "--config", str(cfg), "--out", str(out), "--device", "cpu", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["models"] == "exact" and summary["memory_hmm"] == "hidden" and summary["quality"] == []
    assert {r["model"] for r in summary["rows"]} == {"exact"}
    assert not list((tmp_path / "cache").glob("mlm-*"))                 # nothing was pretrained
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["model"] for r in rows} == {"exact", "none"} and all(r["pretrain_key"] == "" for r in rows)
    assert {r["hmm"] for r in rows} == {"hidden-memory", "appendix-d"}
    # the claim and the controls each get a pooled test over the 2 trials of the one setting
    for item in summary["predictions"] + summary["controls"]:
        assert item["model"] == "exact" if "model" in item else item["claim"].endswith("(exact)")
        assert item["pooled"]["pairs"] == 2 and item["pooled"]["df"] == 1
        assert item["verdict"].split(" (")[0] in ("supported", "contradicted", "inconclusive")


def test_replot_redraws_a_run_and_rejects_a_directory_without_one(tmp_path, monkeypatch, capsys):
    from headprompt.verify.experiments.plot import replot

    with pytest.raises(InputError, match="no readable summary.json"):
        replot(tmp_path)
    monkeypatch.setenv("HEADPROMPT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main(["experiment", "fig3-left", "--scale", "tiny", "--model", "exact", "--trials", "2",
                 "--out", str(out), "--device", "cpu", "--json"]) == 0
    capsys.readouterr()
    (out / "fig3-left.png").unlink()
    assert replot(out) == out / "fig3-left.png" and (out / "fig3-left.png").stat().st_size > 1000
