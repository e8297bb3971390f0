"""Certificates written by ``verify`` (all five theorems, the three verdicts, several classes)
and by :func:`write_evidence_certificate`, shared by the adversarial tests."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import headprompt
from headprompt.verify.evidence.certificate import evidence_certificate

# a 4-state HMM where no prompt and no head fit F*: H_0 in {0, 1} is read off x_1 (states 2, 3
# emit distinct tokens), but every prompt reaches state 0 at the read position, whose tau is 0
# when x_1 = 1 (a label-0 sequence), so Gbar_2 = 0 there and every head says 1
UNIVERSAL = {"kind": "hmm",
             "A": [["0", "0", "1", "1"], ["0", "0", "0", "0"], ["1", "0", "0", "0"], ["0", "1", "0", "0"]],
             "W": [["1/2", "1/2", "1", "0"], ["1/2", "1/2", "0", "1"]],
             "pi0": ["1/2", "1/2", "0", "0"], "mu": ["1", "-1", "0", "0"]}

# Assumption 3.5 fails with a short proof: every column of A reaches state 0 of supp(mu) and W
# has equal columns, so every reach has dependent W-columns
NO_35 = {"kind": "hmm", "A": [["1/3"] * 3] * 3, "W": [["1/2"] * 3, ["1/2"] * 3], "pi0": ["1/3"] * 3,
         "mu": ["1", "-1", "0"]}

# Assumption 4.2 fails: emissions do not depend on the memory
NO_42 = {"kind": "memory-hmm", "cells": 1, "memory_values": 2, "syntax_states": 2, "target_cell": 0,
         "A": [["1/2", "1/2"], ["1/2", "1/2"]],
         "W": [[["1/3", "2/3"], ["1/3", "2/3"]], [["2/3", "1/3"], ["2/3", "1/3"]]],
         "pi0": ["1/2", "1/2"], "pM": ["1/2", "1/2"], "mu": ["1", "-1"]}


def _check(tmp, name, instance, theorem, **options):
    path = tmp / f"{name}.json"
    headprompt.check(instance, theorem, certificate=str(path), **options)
    return json.loads(path.read_text())


def _file(tmp, name, data):
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.fixture(scope="session")
def certificates(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("certcheck")
    small = {"samples": 20, "length": 2}
    out = {"3.3": _check(tmp, "a", None, "3.3", hidden=3, vocab=3, **small),
           "3.6": _check(tmp, "b", None, "3.6", hidden=4, vocab=3, **small),
           "3.3-fails": _check(tmp, "c", None, "3.3", hidden=4, vocab=2, **small),
           "3.3-classes": _check(tmp, "d", None, "3.3", hidden=3, vocab=4, classes=3, **small),
           "3.6-classes": _check(tmp, "e", None, "3.6", hidden=4, vocab=3, classes=3, **small),
           "3.6-fails": _check(tmp, "f", _file(tmp, "no35", NO_35), "3.6", **small),
           "4.3": _check(tmp, "g", None, "4.3", memory=2, hidden=2, cells=2, **small),
           "4.6": _check(tmp, "h", None, "4.6", memory=2, hidden=2, **small),
           "C.6": _check(tmp, "i", None, "C.6", memory=2, hidden=2, cells=2, samples=20, length=3),
           "4.6-classes": _check(tmp, "k", None, "4.6", memory=3, hidden=2, classes=3, samples=10, length=2),
           "4.3-fails": _check(tmp, "j", _file(tmp, "no42", NO_42), "4.3", **small)}
    for tid in ("3.3", "3.6"):
        src = out[tid]
        inst = _file(tmp, f"inst{tid}", {k: src["instance"][k] for k in ("kind", "A", "W", "pi0", "mu")})
        w = {"theorem": tid, "b": [str(-Fraction(v)) for v in src["witness"]["b"]]}
        if tid == "3.6":
            w["u"] = src["witness"]["u"]
        out[f"{tid}-refuted"] = _check(tmp, f"r{tid}", inst, tid, witness=_file(tmp, f"w{tid}", w), **small)
    src = out["4.6"]
    w = {k: src["witness"][k] for k in ("q", "Theta_K", "beta", "Theta_V", "u", "H_star")}
    w.update(theorem="4.6", b=[str(-Fraction(v)) for v in src["witness"]["b"]])
    out["4.6-refuted"] = _check(tmp, "r46", _file(tmp, "inst46", src["instance"]), "4.6",
                                witness=_file(tmp, "w46", w), **small)
    for name in ("4.3", "C.6"):           # dropping listed rows keeps a listed claim true; fewer to recompute
        rows = out[name]["sequences"]
        out[name]["sequences"] = [r for r in rows if r["in_R"]] + [r for r in rows if not r["in_R"]][:4]
    hmm = headprompt.HMM.create(UNIVERSAL["A"], UNIVERSAL["W"], UNIVERSAL["pi0"], UNIVERSAL["mu"])
    rows = {"sequences": [[0], [1]], "labels": [1, 0], "certificate": {"y": ["0", "1"], "z": ["0", "0"]}}
    out["no-prompt-and-head"] = evidence_certificate(hmm, "3.6", {"kind": "no-prompt-and-head", "prompts": "all",
                                                                   **rows})
    out["3.6-prompt"] = evidence_certificate(hmm, "3.6", {"kind": "no-linear-head", "prompt": ["1", "0", "1", "1"],
                                                           **rows})
    motzkin = out["3.3-fails"]["motzkin"][0]
    fails = out["3.3-fails"]["instance"]
    out["3.3-motzkin"] = evidence_certificate(
        headprompt.HMM.create(fails["A"], fails["W"], fails["pi0"], fails["mu"]), "3.3",
        {"kind": "no-linear-head", **motzkin})
    return out
