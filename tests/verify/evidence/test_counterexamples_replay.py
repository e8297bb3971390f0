"""Every minimal counterexample in examples/counterexamples/ (made by ``verify explore --drop``,
see regenerate.py there) replays: the dropped assumption fails and only it, ``verify theorem``
reports it, the construction's saved witness is refuted on a sequence that brute force
confirms, and statement-level certificates re-check exactly."""

import json
from fractions import Fraction
from pathlib import Path

import pytest

from headprompt.models.hmm.values import HMM
from headprompt.models.hmm.files import load_instance
from headprompt.verify.evidence.certificates import check_no_linear_head_certificate, check_prompt_family_certificates
from headprompt.verify.evidence.universal import check_prompt_universal_certificate
from headprompt.verify.checks.registry import check_assumptions

from tests import oracle
from tests.cli import run_json

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "counterexamples"
FILES = sorted(FOLDER.glob("*-drop-*.json"))




def test_there_is_a_file_per_counterexample_found():
    assert len(FILES) >= 6                  # README: the table's "construction"/"statement" rows


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_counterexample_replays(capsys, path):
    data = json.loads(path.read_text())
    tid, explore = data["meta"]["theorem"], data["meta"]["explore"]
    dropped = explore["dropped"]
    assert path.name == f"{tid}-drop-{dropped}.json"
    model = load_instance(path)
    holds = {k: v["holds"] for k, v in check_assumptions(model, tid).items()}
    assert holds == {a: a != dropped for a in holds}
    code, rep, _ = run_json(capsys, ["theorem", tid, "--hmm", str(path), "--samples", "20"])
    assert code == 3 and rep["verdict"] == "assumptions-fail" and dropped in rep["failed"]
    evidence = explore["evidence"]
    if explore["kind"] == "statement":
        if "certificates" in evidence:
            assert evidence["all"] and check_prompt_family_certificates(model, evidence)[0]
        elif evidence.get("kind") == "no-prompt-and-head":
            assert check_prompt_universal_certificate(model, evidence)[0]
        else:
            assert check_no_linear_head_certificate(model, evidence)[0]
        return
    # construction: the saved witness (the paper's recipe without the assumption) is refuted
    code, wit, _ = run_json(capsys, ["theorem", tid, "--hmm", str(path), "--witness", str(path), "--exhaustive",
                                  "--length", "3"])
    assert code == 1 and wit["verdict"] == "refuted"
    seq = evidence["disagreement"]["sequence"]
    if isinstance(model, HMM):
        w = data["witness"]
        u = [Fraction(v) for v in w["u"]] if "u" in w else None
        (f_star, f), = oracle.vanilla_decisions(model, tid, [Fraction(v) for v in w["b"]], u, [seq]).values()
        assert (f_star, f) == (evidence["disagreement"]["expected"], evidence["disagreement"]["got"]) and f != f_star
    else:
        post = oracle.memory_posterior(model, seq, model.target_cell)
        f_star = int(sum(Fraction(m) * p for m, p in zip(model.mu, post)) >= 0)
        assert f_star == evidence["disagreement"]["expected"] != evidence["disagreement"]["got"]


def test_regenerate_defaults_match_the_committed_table_and_never_delete_a_file(monkeypatch, tmp_path):
    """The script's default examples equal the table's setting (docs/counterexamples.md), and a pair where a run
    finds nothing keeps its committed file unless --prune is given (explore is replaced by a
    search that finds nothing, so this runs in milliseconds)."""
    import importlib.util
    import re
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("regenerate", FOLDER / "regenerate.py")
    regen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regen)
    readme = (FOLDER.parents[1] / "docs" / "counterexamples.md").read_text()   # the table moved there from the README
    table_examples = int(re.search(r"seed 0, (\d+) examples per search", readme).group(1))
    assert regen.DEFAULT_EXAMPLES == table_examples
    nothing = SimpleNamespace(found=False, model=None, witness=None,
                              to_dict=lambda: {"seconds": 0.0, "counterexample": None})
    monkeypatch.setattr(regen, "explore", lambda request: nothing)
    monkeypatch.setattr(regen, "HERE", tmp_path)
    kept = tmp_path / "4.6-drop-4.4.json"
    kept.write_text("{}")
    regen.main([])
    assert kept.exists()
    regen.main(["--prune"])
    assert not kept.exists()
