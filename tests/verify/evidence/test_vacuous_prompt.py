"""Vacuity judged by what the features can tell, in verify as in the checker (issue 37 item
2): a prompt the chain never reaches (``u = [0, 0, 1]`` where ``A pi0`` has no mass on state 2)
makes ``Gbar_2(u, e(∅), e(x)) = 0`` for every ``x``; "no linear head works with it" is then
true of nothing but the erased input, so verify reports it as vacuous, never as a certificate.
The features are recomputed by brute-force path sums (:mod:`tests.oracle`)."""

import json
from fractions import Fraction
from itertools import product

from headprompt.models.hmm.files import load_instance
from headprompt.verify.cli.main import main
from headprompt.verify.evidence.certificates import prompt_family_certificates, vacuous_features
from tests import oracle
from tests.cli import run_json

DEAD = {"kind": "hmm", "A": [["1/2", "1/3", "1/4"], ["1/2", "2/3", "3/4"], [0, 0, 0]],
        "W": [["3/4", "1/4", "1/2"], ["1/4", "3/4", "1/2"]], "pi0": ["1/3", "1/3", "1/3"], "mu": [1, -1, 0]}


def _gbar2(hmm, u, seq):
    filler = [Fraction(1)] * hmm.num_states
    return oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [list(u), filler] + [list(hmm.W[z]) for z in seq], 1)


def test_an_unreachable_prompt_erases_every_sequence_by_path_sums(tmp_path):
    hmm = load_instance_from(tmp_path)
    u = [Fraction(0), Fraction(0), Fraction(1)]
    for n in (1, 2, 3):
        for seq in product(range(2), repeat=n):
            assert all(v == 0 for v in _gbar2(hmm, u, seq))


def load_instance_from(tmp_path):
    path = tmp_path / "dead.json"
    path.write_text(json.dumps(DEAD))
    return load_instance(path)


def test_verify_reports_the_dead_prompt_as_vacuous(capsys, tmp_path):
    inst, wit = tmp_path / "dead.json", tmp_path / "w.json"
    inst.write_text(json.dumps(DEAD))
    wit.write_text(json.dumps({"theorem": "3.6", "u": [0, 0, 1], "b": [1, -1]}))
    code, res, _ = run_json(capsys, ["theorem", "3.6", "--hmm", str(inst), "--witness", str(wit),
                                     "--samples", "50", "--length", "3"])
    assert code == 1 and res["labels"]["0"] > 0 and res["labels"]["1"] > 0        # a real refutation
    pe = res["prompt_evidence"]
    assert pe["kind"] == "vacuous-prompt" and "certificate" not in pe and "vacuous" in pe["what"]
    assert main(["theorem", "3.6", "--hmm", str(inst), "--witness", str(wit), "--samples", "50", "--length", "3"]) == 1
    assert "a Motzkin certificate for it would be vacuous" in capsys.readouterr().out


def test_the_prompt_family_does_not_count_an_erasing_prompt_as_certified(tmp_path):
    hmm = load_instance_from(tmp_path)
    pool = [s for n in (1, 2) for s in product(range(2), repeat=n)]
    fam = prompt_family_certificates(hmm, pool, stop_early=False)
    erased = [c for c in fam["certificates"] if c["vacuous"]]
    assert erased and fam["erased"] == len(erased) and fam["certified"] == len(fam["certificates"]) - len(erased)
    for c in erased:                        # the oracle agrees: every listed feature is zero
        u = [Fraction(1) if h in c["B"] else Fraction(0) for h in range(hmm.num_states)]
        assert all(v == 0 for seq in c["sequences"] for v in _gbar2(hmm, u, seq))
    for c in fam["certificates"]:
        if not c["vacuous"]:
            assert vacuous_features(c) is None


def test_vacuous_features_rejects_hand_made_erasures():
    seqs = [[0], [1]]
    assert vacuous_features({"features": [["0", "0"], ["0", "0"]], "sequences": seqs}) is not None
    assert vacuous_features({"features": [["1/2", "1/2"], ["1/2", "1/2"]], "sequences": seqs, "prompt": ["1", "0"]})
    # equal G_1 features with no prompt chosen: Theorem 3.3's own failure, still evidence
    assert vacuous_features({"features": [["1/2", "1/2"], ["1/2", "1/2"]], "sequences": seqs}) is None
    assert vacuous_features({"features": [["1/2", "1/2"], ["1/3", "2/3"]], "sequences": seqs, "prompt": ["1", "0"]}) is None
