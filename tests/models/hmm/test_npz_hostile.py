"""Hostile and unusual ``.npz`` instances on the large-model path (above 1,000 states): each
refused with the dense (JSON) model's own message, or read as exactly the numbers it holds.

Oracles: the dense float checks of :meth:`HMM.create` on the same arrays (an independent
implementation of the same validation), numpy's own conversions and counts."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from scipy import sparse

from headprompt.models.exceptions import ValidationError
from headprompt.models.hmm.large import LargeHMM
from headprompt.models.hmm.npz import read_npz
from headprompt.models.hmm.values import HMM


def chain(n: int, seed: int = 0) -> dict:
    """A float model that no generator makes: ``A[:, h]`` on ``h`` and ``h + 1`` (1/2 each),
    ``W[:, h]`` on token ``h`` (3/4) and the shared token ``n + h // 4`` (1/4); ``pi0`` uniform."""
    rng = np.random.default_rng(seed)
    h = np.arange(n)
    A = sparse.coo_array((np.full(2 * n, 0.5), (np.r_[h, (h + 1) % n], np.r_[h, h])), shape=(n, n)).tocsc()
    X = n + -(-n // 4)
    W = sparse.coo_array((np.r_[np.full(n, 0.75), np.full(n, 0.25)], (np.r_[h, n + h // 4], np.r_[h, h])),
                         shape=(X, n)).tocsc()
    return {"A": A, "W": W, "pi0": np.full(n, 1.0 / n), "mu": rng.choice([-1.0, 1.0], size=n)}


def entries(model: dict, *, dtype=None) -> dict:
    out = {"kind": np.array("hmm"), "pi0": model["pi0"], "mu": model["mu"]}
    for name in ("A", "W"):
        m = sparse.csc_array(model[name])
        out.update({f"{name}.data": m.data if dtype is None else m.data.astype(dtype),
                    f"{name}.indices": m.indices.astype(np.int64), f"{name}.indptr": m.indptr.astype(np.int64),
                    f"{name}.shape": np.array(m.shape), f"{name}.format": np.array("csc")})
    return out


def save(tmp_path, name, e) -> str:
    path = str(tmp_path / f"{name}.npz")
    np.savez(path, **e)
    return path


def spoil(model: dict, name: str, index, value) -> dict:
    out = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in model.items()}
    arr = out[name]
    if sparse.issparse(arr):
        dense = arr.toarray()
        dense[index] = value
        out[name] = sparse.csc_array(dense)
    else:
        arr[index] = value
    return out


BAD = [("A", (1, 0), np.nan), ("A", (1, 0), np.inf), ("A", (1, 0), -0.5), ("A", (1, 0), 1.5),
       ("W", (3, 3), 0.0), ("pi0", 0, np.nan), ("pi0", 1, -0.25), ("pi0", 2, 0.9), ("mu", 0, np.nan),
       ("mu", 3, -np.inf)]


@pytest.mark.parametrize("name,index,value", BAD)
def test_bad_float_values_are_refused_with_the_dense_message(tmp_path, name, index, value):
    bad = spoil(chain(12), name, index, value)
    with pytest.raises(ValidationError) as oracle:        # the dense float checks of a JSON instance
        HMM.create(bad["A"].toarray(), bad["W"].toarray(), bad["pi0"], bad["mu"], exact=False)
    inst = read_npz(save(tmp_path, "bad", entries(bad)))
    with pytest.raises(ValidationError) as unconverted:   # refused as invalid, not sent to --rationalize first
        LargeHMM.from_npz(inst)
    with pytest.raises(ValidationError) as got:
        LargeHMM.from_npz(inst, prune_below=0.0)
    assert str(unconverted.value) == str(got.value)
    number = r"sums to (\S+),"                      # a sum's last digit depends on the order of addition
    want, have = re.search(number, str(oracle.value)), re.search(number, str(got.value))
    assert re.sub(number, "", str(got.value)) == re.sub(number, "", str(oracle.value))
    assert (want is None) == (have is None) and (want is None or float(have[1]) == pytest.approx(float(want[1])))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, ">f8"])
def test_narrow_and_foreign_float_dtypes_read_as_the_numbers_they_hold(tmp_path, dtype):
    model = chain(8)
    inst = read_npz(save(tmp_path, "narrow", entries(model, dtype=dtype)))
    want = sparse.csc_array(model["A"]).data.astype(dtype).astype(np.float64)   # numpy's exact widening
    assert inst.arrays["A"].dtype == np.float64 and np.array_equal(inst.arrays["A"].data, want)


def test_big_endian_and_narrow_integer_numerators_read_exactly(tmp_path):
    model = chain(8)
    e = {"kind": np.array("hmm"), "pi0": np.ones(8, dtype=">i4"), "pi0.den": np.array([8], dtype=np.int16),
         "mu": model["mu"].astype(np.int8), "mu.den": np.array([1])}
    for name, den in (("A", 2), ("W", 4)):
        m = sparse.csc_array(model[name] * den)
        e.update({f"{name}.data": m.data.astype(">i8"), f"{name}.indices": m.indices.astype(np.int32),
                  f"{name}.indptr": m.indptr.astype(np.uint16), f"{name}.shape": np.array(m.shape),
                  f"{name}.format": np.array("csc"), f"{name}.den": np.full(8, den, dtype=">i8")})
    large, _ = LargeHMM.from_npz(read_npz(save(tmp_path, "ints", e)))
    assert np.array_equal(large.A.toarray() / 2, model["A"].toarray())
    assert np.array_equal(large.W.toarray() / 4, model["W"].toarray())
    assert large.pi0.tolist() == [1] * 8 and large.dpi == 8 and large.mu.tolist() == model["mu"].astype(int).tolist()


def test_conversion_counts_the_pruned_entries_and_bounds_the_change(tmp_path):
    model = chain(12)
    A = model["A"].toarray()
    A[5, 0], A[0, 0] = 1e-4, 0.5 - 1e-4                 # one small entry to prune at 1e-3
    model["A"] = sparse.csc_array(A)
    e = entries(model)
    e["W.data"][e["W.indptr"][2]] = 0.0                 # a stored zero (W[2, 2] -> W[n + 0, 2] takes its mass)
    e["W.data"][e["W.indptr"][2] + 1] = 1.0
    model["W"] = sparse.csc_array((e["W.data"], e["W.indices"], e["W.indptr"]), shape=model["W"].shape)
    large, conv = LargeHMM.from_npz(read_npz(save(tmp_path, "fit", e)), prune_below=1e-3)
    floats = [model["A"].toarray(), model["W"].toarray(), model["pi0"]]
    assert conv["pruned_entries"] == sum(int(((f > 0) & (f < 1e-3)).sum()) for f in floats) == 1
    moved = np.abs(large.A.toarray() / 2.0 ** 32 - A).max()
    assert conv["max_entry_change"]["approx"] == pytest.approx(moved) and moved < 2e-4


@pytest.mark.parametrize("hint", [[10 ** 9], [-1], ["x"], [1.5], 7, [True]])
def test_malformed_basis_set_hints_are_refused(tmp_path, hint):
    model = chain(8)
    e = entries(model)
    e["meta"] = np.array(json.dumps({"instance": {"B": hint}}))
    with pytest.raises(ValidationError, match=r"meta.instance.B: expected a list of hidden-state indices 0..7"):
        LargeHMM.from_npz(read_npz(save(tmp_path, "hint", e)), prune_below=0.0)


def test_wrong_task_length_names_the_shape_found():
    with pytest.raises(ValidationError, match=r"mu: expected shape \(2,\) .* found \(3,\)$"):
        LargeHMM.create([[1, 1], [1, 1]], [2, 2], [[1, 1]], [1, 1], [1, 1], 2, mu=[1, 0, -1])


def _cli(path, *extra):
    return subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hmm", path,
                           "--samples", "40", "--length", "4", *extra], capture_output=True, text=True, timeout=120)


def test_command_line_on_hostile_large_files_one_line_exit_2(tmp_path):
    n = 1004                                             # above the dense limit: the large path
    model = chain(n)
    cases = {"nan": spoil(model, "A", (1, 0), np.nan), "sum": spoil(model, "pi0", 0, 0.5),
             "mu_inf": spoil(model, "mu", 0, np.inf)}
    for name, bad in cases.items():
        proc = _cli(save(tmp_path, name, entries(bad)), "--rationalize", "0")
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), (name, proc.stderr)
    e = entries(model)
    e["meta"] = np.array(json.dumps({"instance": {"B": ["x"]}}))
    proc = _cli(save(tmp_path, "hint", e), "--rationalize", "0")
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'hint.npz'}: meta.instance.B: expected a list of hidden-state indices 0..{n - 1}, found [\"x\"]"]


def test_command_line_reports_the_float_conversion_in_human_output(tmp_path):
    n = 1004
    model = chain(n)
    model["mu"][0], model["mu"][1] = 1e308, 5e-324       # extreme but finite weights: read exactly
    proc = _cli(save(tmp_path, "fit", entries(model)), "--rationalize", "0")
    assert proc.returncode == 0, proc.stderr
    assert "rationalized: 0 entries below 0 pruned" in proc.stdout and "verdict: verified" in proc.stdout


def test_cost_counts_of_a_dense_stored_file_are_its_nonzeros(tmp_path):
    """The estimate before any work reads nonzeros, not entries, of dense stored matrices (a
    dense-stored sparse model was estimated 13x too slow)."""
    from headprompt.models.hmm.npz import npz_counts

    model = chain(40)
    dense = {"kind": np.array("hmm"), "A": model["A"].toarray(), "W": model["W"].toarray(), "pi0": model["pi0"],
             "mu": model["mu"]}
    got = npz_counts(save(tmp_path, "dense", dense))
    assert got == (40, 50, np.count_nonzero(dense["A"]), np.count_nonzero(dense["W"])) == (40, 50, 80, 80)
    packed = str(tmp_path / "packed.npz")
    np.savez_compressed(packed, **dense)                  # compressed: not counted, the entries bound it
    assert npz_counts(packed) == (40, 50, 1600, 2000)
