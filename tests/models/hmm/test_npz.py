""".npz instance files: round trips against hand-made arrays, and malformed files refused with
one line (exit 2 on the command line), decided before the values are used."""

import io
import os
import subprocess
import sys
import zipfile
from fractions import Fraction as F

import numpy as np
import pytest
from scipy import sparse

from headprompt.models.exceptions import InputError, InstanceFileError, ValidationError
from headprompt.models.hmm.files import load_instance, save_instance
from headprompt.models.hmm.npz import npz_sizes, read_npz
from headprompt.models.hmm.values import HMM

# a hand-made exact 3-state, 2-token model: columns of A over 4, 8, 2; W over 3; pi0 over 6
A_NUM = np.array([[1, 4, 0], [3, 0, 1], [0, 4, 1]], dtype=np.int64)
A_DEN = np.array([4, 8, 2], dtype=np.int64)
W_NUM = np.array([[1, 2, 3], [2, 1, 0]], dtype=np.int64)
W_DEN = np.array([3, 3, 3], dtype=np.int64)
PI_NUM, PI_DEN = np.array([1, 2, 3], dtype=np.int64), np.array([6], dtype=np.int64)
MU_NUM, MU_DEN = np.array([1, -1, 0], dtype=np.int64), np.array([1], dtype=np.int64)


def _exact_entries(**over):
    e = {"kind": np.array("hmm"), "A": A_NUM, "A.den": A_DEN, "W": W_NUM, "W.den": W_DEN,
         "pi0": PI_NUM, "pi0.den": PI_DEN, "mu": MU_NUM, "mu.den": MU_DEN}
    e.update(over)
    return {k: v for k, v in e.items() if v is not None}


def _write(path, entries, compressed=False):
    (np.savez_compressed if compressed else np.savez)(path, **entries)
    return str(path)


def _expected():
    A = [[F(int(A_NUM[g, h]), int(A_DEN[h])) for h in range(3)] for g in range(3)]
    W = [[F(int(W_NUM[x, h]), 3) for h in range(3)] for x in range(2)]
    return A, W, [F(1, 6), F(2, 6), F(3, 6)], [1, -1, 0]


@pytest.mark.parametrize("compressed", [False, True])
def test_hand_made_exact_file_reads_as_the_rationals_it_encodes(tmp_path, compressed):
    path = _write(tmp_path / "m.npz", _exact_entries(), compressed)
    model = load_instance(path)
    A, W, pi0, mu = _expected()
    assert model.exact and model.A.tolist() == A and model.W.tolist() == W
    assert model.pi0.tolist() == pi0 and model.mu.tolist() == mu
    assert npz_sizes(path) == (3, 2)


def test_sparse_parts_read_like_the_dense_array(tmp_path):
    csc = sparse.csc_array(A_NUM)
    csr = sparse.csr_array(W_NUM)
    entries = _exact_entries(A=None, W=None)
    entries.update({"A.data": csc.data, "A.indices": csc.indices, "A.indptr": csc.indptr,
                    "A.shape": np.array([3, 3]), "A.format": np.array("csc"),
                    "W.data": csr.data, "W.indices": csr.indices, "W.indptr": csr.indptr,
                    "W.shape": np.array([2, 3]), "W.format": np.array("csr")})
    model = load_instance(_write(tmp_path / "s.npz", entries))
    A, W, _, _ = _expected()
    assert model.A.tolist() == A and model.W.tolist() == W


def test_exact_and_float_round_trips(tmp_path):
    A, W, pi0, mu = _expected()
    exact = HMM.create(A, W, pi0, mu)
    exact.save(tmp_path / "e.npz", witness={"theorem": "3.6", "u": [F(1), F(0), F(0)], "b": [F(1, 7), F(-2, 9)]},
               meta={"seed": 3})
    again = HMM.load(tmp_path / "e.npz")
    assert again == exact
    inst = read_npz(tmp_path / "e.npz")
    assert inst.meta == {"seed": 3} and inst.witness["theorem"] == "3.6"
    assert [F(int(n), int(inst.den["witness.b"][0])) for n in inst.witness["b"]] == [F(1, 7), F(-2, 9)]
    # a float model with entries that are not short decimals keeps every bit
    rng = np.random.default_rng(1)
    Af = rng.random((40, 40)) * (rng.random((40, 40)) < 0.1) + np.eye(40) * 0.01
    Af /= Af.sum(axis=0)
    Wf = rng.random((7, 40))
    Wf /= Wf.sum(axis=0)
    pf = rng.random(40)
    pf /= pf.sum()
    fl = HMM.create(Af, Wf, pf, rng.standard_normal(40), exact=False)
    fl.save(tmp_path / "f.npz")
    back = load_instance(tmp_path / "f.npz", exact=False)
    assert np.array_equal(back.A, Af) and np.array_equal(back.W, Wf) and np.array_equal(back.mu, fl.mu)
    assert sparse.issparse(read_npz(tmp_path / "f.npz").arrays["A"])      # 10% dense: stored sparse


def _bad_files(tmp):
    """(name, entries or raw bytes, words the one-line message must contain)."""
    yield "wrong-shape", _exact_entries(pi0=np.array([1, 5]), **{"pi0.den": np.array([6])}), "pi0"
    yield "negative", _exact_entries(A=np.array([[-1, 4, 0], [5, 0, 1], [0, 4, 1]])), "nonnegative"
    yield "non-stochastic", _exact_entries(W=np.array([[1, 2, 3], [1, 1, 0]])), "sums to 2/3"
    nan = {"kind": np.array("hmm"), "A": np.eye(2), "W": np.array([[np.nan, 1.0]]), "pi0": np.array([0.5, 0.5])}
    yield "nan", nan, "nan"
    yield "no-den", _exact_entries(**{"A.den": None}), "A.den"
    yield "zero-den", _exact_entries(**{"W.den": np.array([3, 0, 3])}), "positive denominator"
    yield "mixed", _exact_entries(pi0=np.array([0.25, 0.25, 0.5]), **{"pi0.den": None}), "floats"
    yield "unknown", _exact_entries(extra=np.zeros(2)), "unknown entry"
    yield "bad-index", {**_exact_entries(A=None), "A.data": np.array([1, 1, 1]), "A.indices": np.array([0, 1, 7]),
                        "A.indptr": np.array([0, 1, 2, 3]), "A.shape": np.array([3, 3]),
                        "A.format": np.array("csc")}, "outside"


@pytest.mark.parametrize("case", list(_bad_files(None)), ids=lambda c: c[0])
def test_malformed_files_are_refused_with_one_clear_error(tmp_path, case):
    name, entries, words = case
    path = _write(tmp_path / f"{name}.npz", entries)
    with pytest.raises(InputError) as err:
        load_instance(path)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_pickled_object_arrays_are_never_loaded(tmp_path):
    path = tmp_path / "obj.npz"
    np.savez(path, kind=np.array("hmm"), A=np.array([[F(1)]], dtype=object), W=np.array([[1]]), pi0=np.array([1]))
    with pytest.raises(InstanceFileError, match="object .pickled. array"):
        load_instance(path)


def test_truncated_and_foreign_files_are_refused(tmp_path):
    good = _write(tmp_path / "g.npz", _exact_entries())
    data = open(good, "rb").read()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InstanceFileError):
        load_instance(cut)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(InstanceFileError, match="not a readable .npz"):
        load_instance(junk)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("A.npy", b"\x93NUMPY\x01\x00garbage")
    (tmp_path / "hdr.npz").write_bytes(buf.getvalue())
    with pytest.raises(InstanceFileError, match="not a readable .npy"):
        load_instance(tmp_path / "hdr.npz")


def test_float_file_read_exactly_points_to_rationalize_when_it_is_not_stochastic(tmp_path):
    A = np.array([[0.1, 0.7], [0.9, 0.3]])
    W = np.array([[1 / 3, 0.5], [1 / 3, 0.5], [1 / 3, 0.0]])          # 1/3 as a decimal sums to 0.9999999999999999
    path = _write(tmp_path / "f.npz", {"kind": np.array("hmm"), "A": A, "W": W, "pi0": np.array([0.5, 0.5]),
                                       "mu": np.array([1.0, -1.0])})
    with pytest.raises(ValidationError, match="W: column 0 sums to"):
        load_instance(path)
    assert load_instance(path, exact=False).W[0, 0] == 1 / 3


def test_command_line_refuses_a_bad_file_with_one_line_and_exit_2(tmp_path):
    path = _write(tmp_path / "neg.npz", _exact_entries(A=np.array([[-1, 4, 0], [5, 0, 1], [0, 4, 1]])))
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hmm", path],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "nonnegative" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_theorem_replays_from_its_own_npz_output(tmp_path):
    out = tmp_path / "run.npz"
    first = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hidden", "6",
                            "--vocab", "5", "--samples", "50", "--out", str(out), "--json"],
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert os.path.getsize(out) > 0 and read_npz(out).witness["theorem"] == "3.6"
    again = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hmm", str(out),
                            "--samples", "50", "--json"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    import json

    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["witness"]["u"] == b["witness"]["u"] and a["witness"]["b"] == b["witness"]["b"]


def test_a_witness_given_as_strings_is_saved_exactly(tmp_path):
    """Found by an input audit: ``save_instance(..., witness={"b": ["1/3", "-1"]})`` to a
    ``.npz`` crashed (AttributeError on a string); the witness is read like instance values, so
    it round-trips exactly, and a value that is not a number is refused with its name."""
    from fractions import Fraction

    from headprompt.models.exceptions import InputError
    from headprompt.models.hmm.files import save_instance
    from headprompt.models.hmm.npz import read_npz
    from headprompt.models.hmm.values import HMM

    hmm = HMM.create([["1/2", "1/2"], ["1/2", "1/2"]], [["1", "0"], ["0", "1"]], ["1/2", "1/2"], ["1", "-1"])
    path = tmp_path / "w.npz"
    save_instance(hmm, path, witness={"theorem": "3.3", "b": ["1/3", "-1"]})
    inst = read_npz(path)
    den = int(inst.den["witness.b"][0])
    assert [Fraction(int(v), den) for v in inst.witness["b"]] == [Fraction(1, 3), Fraction(-1)]
    with pytest.raises(InputError, match=r"witness\.b\[0\]"):
        save_instance(hmm, tmp_path / "bad.npz", witness={"b": ["x", "-1"]})
