"""Models and witnesses behave as values: equality, hashing, explicit conversions, validation,
one error hierarchy, one serialised witness form."""

from __future__ import annotations

import json
from fractions import Fraction as Fr

import numpy as np
import pytest

from headprompt.constructions.memory import theorem_43_witness
from headprompt.constructions.vanilla import theorem_33_witness, theorem_36_witness
from headprompt.constructions.witnesses import (AttentionWitness, LinearHeadWitness, PromptWitness,
                                                witness_from_dict, witness_to_dict)
from headprompt.models import exceptions as exc
from headprompt.models.generate.generators import prompt_friendly_hmm, random_exact_hmm
from headprompt.models.hmm.values import HMM, MemoryHMM
from tests import oracle

A = [["1/2", "1/3"], ["1/2", "2/3"]]
W = [["1/4", "1/2"], ["3/4", "1/2"]]


def _mem(pM=("1/2", "1/2")):
    W3 = [[[1, 0], [0, 0]], [[0, 0], [1, 0]], [[0, "1/2"], [0, 0]], [[0, "1/2"], [0, 1]]]
    return MemoryHMM.create(1, 2, 2, [[0, 1], [1, 0]], W3, ["1/2", "1/2"], list(pM), mu=[1, -1])


def test_equal_models_are_equal_and_hash_alike():
    h1 = HMM.create(A, W, ["1/3", "2/3"], [1, -1])
    h2 = HMM.create([[Fr(1, 2), Fr(1, 3)], [Fr(1, 2), Fr(2, 3)]], W, [Fr(1, 3), Fr(2, 3)], ["1", "-1"])
    assert h1 == h2 and hash(h1) == hash(h2) and len({h1, h2}) == 1
    assert {h1: "x"}[h2] == "x"
    assert _mem() == _mem() and hash(_mem()) == hash(_mem())


@pytest.mark.parametrize("other", [
    HMM.create(A, W, ["1/3", "2/3"]),                      # no task
    HMM.create(A, W, ["1/3", "2/3"], [1, 1]),              # another task
    HMM.create(A, W, ["1/2", "1/2"], [1, -1]),             # another pi0
    HMM.create(A, W, ["1/3", "2/3"], [1, -1]).to_float(),  # a float model is not an exact one
])
def test_different_models_differ(other):
    h = HMM.create(A, W, ["1/3", "2/3"], [1, -1])
    assert h != other and not (h == other)


def test_equality_never_raises():
    h = HMM.create(A, W, ["1/3", "2/3"])
    assert (h == 3) is False and (h != "hmm") is True and (h == None) is False  # noqa: E711
    assert h.__eq__(object()) is NotImplemented
    assert h != _mem() and _mem() != _mem(pM=("1/3", "2/3"))
    bigger = random_exact_hmm(3, 2, rng=np.random.default_rng(0))
    assert h != bigger                                         # other shapes compare unequal


def test_float_models_compare_and_hash():
    f1 = HMM.create(A, W, ["1/3", "2/3"]).to_float()
    f2 = HMM.create(A, W, ["1/3", "2/3"]).to_float()
    assert f1 == f2 and hash(f1) == hash(f2) and f1 != f1.with_task([0.5, -0.5])


def test_to_exact_reads_decimals_and_never_moves_a_model():
    f = HMM.create([[0.5, 0.1], [0.5, 0.9]], [[0.25, 1.0], [0.75, 0.0]], [0.3, 0.7], [1.0, -2.5], exact=False)
    assert f.to_exact() == HMM.create([["1/2", "1/10"], ["1/2", "9/10"]], [["1/4", 1], ["3/4", 0]],
                                      ["3/10", "7/10"], [1, "-5/2"])
    learned = HMM.create([[1 / 3, 0.5], [2 / 3, 0.5]], [[0.25, 0.5], [0.75, 0.5]], [0.5, 0.5], exact=False)
    with pytest.raises(exc.ExactnessError, match=r"A: column 0 sums to .*rationalize\(model, prune_below"):
        learned.to_exact()
    with pytest.raises(exc.ExactnessError, match="rationalize"):
        MemoryHMM.create(1, 2, 2, [[0, 1], [1, 0]], _mem().W.astype(float), [0.5, 0.5], [1 / 3, 2 / 3],
                         exact=False).to_exact()


def test_hidden_marginal_1_is_the_law_of_the_first_emitting_state():
    h = random_exact_hmm(3, 2, rng=np.random.default_rng(4))
    marginal = [sum(oracle.joint_probability(h, [z], 1)[k] for z in range(2)) for k in range(3)]
    assert list(h.hidden_marginal_1()) == marginal
    assert list(_mem().hidden_marginal_1()) == [Fr(1, 2), Fr(1, 2)]


def test_memo_builds_once_and_the_lift_is_memoised():
    h = HMM.create(A, W, ["1/3", "2/3"])
    calls = []
    assert h.memo("k", lambda: calls.append(1) or 7) == 7 == h.memo("k", lambda: calls.append(1) or 8)
    assert calls == [1]
    m = _mem()
    assert m.lift() is m.lift()


def test_one_error_hierarchy():
    assert issubclass(exc.ConstructionError, exc.HeadpromptError) and not issubclass(exc.ConstructionError, exc.InputError)
    assert issubclass(exc.LimitError, exc.InputError) and issubclass(exc.WitnessError, exc.InputError)
    assert issubclass(exc.InternalError, exc.HeadpromptError) and issubclass(exc.InternalError, RuntimeError)
    from headprompt.constructions import vanilla
    assert vanilla.ConstructionError is exc.ConstructionError


def test_library_errors_name_parameters_not_flags():
    with pytest.raises(exc.InputError) as info:
        prompt_friendly_hmm(2, 3, rng=np.random.default_rng(0))
    assert "--" not in str(info.value) and "num_states 2" in str(info.value)


# ---------------------------------------------------------------- witnesses

@pytest.mark.parametrize("make, match", [
    (lambda: LinearHeadWitness(b=[]), "one weight per token"),
    (lambda: LinearHeadWitness(b=[[1, 2]]), "1-dimensional"),
    (lambda: LinearHeadWitness(b=np.array([1.0, np.nan])), "finite"),
    (lambda: LinearHeadWitness(b=[1, 0.5]), "float"),
    (lambda: PromptWitness(u=[2, 0], b=[1, 1]), r"\[0, 1\]"),
    (lambda: PromptWitness(u=np.array([1.0, 0.0]), b=[1, 1]), "mix exact and float"),
    (lambda: AttentionWitness(q=[1, 0], Theta_K=[[1, 0, 0], [0, 0, 0]], beta=[[0, 0]],
                              Theta_V=[[1, 0]], b=[1]), "Theta_V: expected shape"),
    (lambda: AttentionWitness(q=[1, 0, 0], Theta_K=[[1, 0], [0, 0]], beta=[[0, 0]],
                              Theta_V=[[1, 0]], b=[1]), "q: expected shape"),
    (lambda: AttentionWitness(q=[1, 0], Theta_K=[[1, 0], [0, 0]], beta=[[0, 0, 0]],
                              Theta_V=[[1, 0]], b=[1]), "beta"),
    (lambda: AttentionWitness(q=[1, 0], Theta_K=[[1, 0], [0, 0]], beta=[[0, 0]],
                              Theta_V=[[1, 0], [0, 1]], b=[1]), "b: expected shape"),
    (lambda: AttentionWitness(q=[1, 0], Theta_K=[[1, 0], [0, 0]], beta=[[0, 0]],
                              Theta_V=[[1, 0]], b=[1], u=[Fr(3, 2)]), r"\[0, 1\]"),
])
def test_witnesses_are_validated_on_construction(make, match):
    with pytest.raises(exc.WitnessError, match=match):
        make()


def test_witness_arrays_are_read_only_values():
    w = PromptWitness(u=[1, 0], b=["1/2", -1])
    assert w.b.tolist() == [Fr(1, 2), Fr(-1)]
    with pytest.raises(ValueError):
        w.b[0] = 3
    assert w == PromptWitness(u=[Fr(1), 0], b=[Fr(1, 2), -1]) and w != PromptWitness(u=[1, 0], b=[1, -1])
    assert hash(w) == hash(PromptWitness(u=[1, 0], b=["1/2", -1]))


def _json_round_trip(witness, theorem, model):
    text = json.dumps(witness_to_dict(witness))
    back, _ = witness_from_dict(json.loads(text), theorem, model)
    return back


def test_witnesses_serialise_in_one_place():
    hmm, _ = prompt_friendly_hmm(5, 3, rng=np.random.default_rng(2))
    w36 = theorem_36_witness(hmm)
    assert _json_round_trip(w36, "3.6", hmm) == PromptWitness(u=w36.u, b=w36.b)
    h33 = random_exact_hmm(2, 3, rng=np.random.default_rng(1)).with_task([1, -1])
    w33 = theorem_33_witness(h33)
    assert _json_round_trip(w33, "3.3", h33) == LinearHeadWitness(b=w33.b)
    mem = _mem()
    w43 = theorem_43_witness(mem)
    back = _json_round_trip(w43, "4.3", mem)
    assert all(np.array_equal(getattr(back, k), getattr(w43, k)) for k in ("q", "Theta_K", "beta", "Theta_V", "b"))
    with pytest.raises(exc.WitnessError, match="witness b: expected shape"):
        witness_from_dict({"theorem": "3.6", "u": [1] * 5, "b": [1]}, "3.6", hmm)
    with pytest.raises(exc.InstanceFileError, match="not 3.3"):
        witness_from_dict({"theorem": "3.6", "b": [1, 2, 3]}, "3.3", hmm)


def test_hash_is_the_same_in_every_process():
    """The memoised hash holds only numbers, so a pickled model's hash stays valid elsewhere."""
    import subprocess
    import sys

    code = ("from headprompt.models.hmm.values import HMM; print(hash(HMM.create([['1/2', '1/3'], ['1/2', '2/3']], "
            "[[1, 0], [0, 1]], ['1/3', '2/3'])))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2)}
    assert len(seen) == 1


def test_numpy_scalars_are_the_numbers_they_are():
    """numpy integers are exact integers; numpy floats are floats (taken in float mode, refused
    in exact mode exactly as Python floats are); the models equal those built from Python numbers."""
    exact = HMM.create([[np.int64(1), 1], [np.uint8(0), 0]], [[Fr(1, 2), np.int32(1)], ["1/2", 0]],
                       [np.int64(1), 0], [np.int64(1), np.int16(-1)])
    assert exact == HMM.create([[1, 1], [0, 0]], [["1/2", 1], ["1/2", 0]], [1, 0], [1, -1])
    assert all(type(v) is Fr for v in exact.A.flat)
    floats = HMM.create([[np.float64(0.5), 1], [0.5, 0]], [[np.float32(0.5), np.int64(1)], [0.5, 0]],
                        [np.float64(0.25), 0.75], [np.int64(1), np.float64(-0.5)], exact=False)
    assert floats == HMM.create([[0.5, 1], [0.5, 0]], [[0.5, 1], [0.5, 0]], [0.25, 0.75], [1, -0.5], exact=False)
    for value in (0.5, np.float64(0.5), np.float32(0.5)):
        with pytest.raises(exc.ExactnessError, match=r"mu\[0\]: found the float .*0\.5"):
            exact.with_task([value, 1])


# ---------------------------------------------------------------- values float64 cannot hold (issue 25 item 4)

def _instance_with_mu(tmp_path, mu):
    path = tmp_path / "mu.json"
    path.write_text(json.dumps({"kind": "hmm", "A": [["1/2", "3/10"], ["1/2", "7/10"]],
                                "W": [["1/5", "3/5"], ["4/5", "2/5"]], "pi0": ["1/2", "1/2"], "mu": mu}))
    return str(path)


@pytest.mark.parametrize("mode", ["exact", "certified", "float"])
@pytest.mark.parametrize("big", ["3e500", "-1e400", "1" + "0" * 400])
def test_task_weights_beyond_float64_are_refused_with_exit_2(tmp_path, capsys, mode, big):
    from headprompt.verify.cli.main import main

    path = _instance_with_mu(tmp_path, [big, -1])
    assert main(["theorem", "3.6", "--hmm", path, "--mode", mode, "--samples", "10"]) == 2
    err = capsys.readouterr().err
    assert "mu[0]" in err and "beyond the float64 range" in err and "internal error" not in err


def test_the_range_check_is_the_theorem_checks_and_exact_posteriors_read_any_weight(tmp_path, capsys):
    import headprompt
    from headprompt.verify.cli.main import main

    model = HMM.create([[1, 0], [0, 1]], [[1, 0], [0, 1]], ["1/2", "1/2"], mu=[0, "3e500"])   # a value: fine
    with pytest.raises(exc.ValidationError, match=r"^mu\[1\]: about 1e500 is beyond the float64 range"):
        headprompt.check(model, "3.6")
    largest = Fr(np.finfo(float).max)                      # the largest float64 itself is fine
    assert HMM.create([[1]], [[1]], [1], mu=[largest]).to_float().mu[0] == np.finfo(float).max
    path = _instance_with_mu(tmp_path, ["3e500", -1])      # the posterior is exact: any weight, read exactly
    assert main(["posterior", "--hmm", path, "--seq", "0 1"]) == 0
    assert "mu . P" in capsys.readouterr().out
    for argv in (["assumptions", "3.6"], ["assumptions", "3.3"], ["counterexample", "3.6"]):   # never exit 4
        assert main(argv + ["--hmm", path]) in (0, 1, 3), argv
    assert np.isinf(model.to_float().mu[1]) and model.to_float().A[0, 0] == 1.0           # IEEE overflow


def test_float_mode_refuses_a_weight_that_would_become_zero(tmp_path, capsys):
    """mu = (1e-400, 0): exact arithmetic reads the task exactly (mu . p > 0, so F* = 1 on every
    sequence); float mode would make mu 0 and call that check verified, so it refuses (exit 2)."""
    from headprompt.verify.cli.main import main

    path = _instance_with_mu(tmp_path, ["1e-400", 0])
    assert main(["theorem", "3.6", "--hmm", path, "--mode", "float", "--samples", "10"]) == 2
    assert "mu[0]: about 1e-400 would become 0 in float64" in capsys.readouterr().err
    assert main(["theorem", "3.6", "--hmm", path, "--mode", "exact", "--samples", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["labels"]["0"] == 0 and out["labels"]["1"] == out["sequences"]["checked"] > 0
