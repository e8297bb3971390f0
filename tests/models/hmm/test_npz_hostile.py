"""Hostile and unusual ``.npz`` instances on the large-model path (above 1,000 states): each
refused with the dense (JSON) model's own message, or read as exactly the numbers it holds.

Oracles: the dense float checks of :meth:`HMM.create` on the same arrays (an independent
implementation of the same validation), numpy's own conversions and counts.

Then files of any size refused from their ``.npy`` headers alone (an input audit's
reproductions): size bombs (tokens, strings, denominators), ``meta`` read as strictly as a JSON
instance, every array's dimensions and the shapes' consistency, and messages that show a
hundreds-of-digits number by a few digits."""

import io
import json
import math
import re
import subprocess
import sys
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
from scipy import sparse

from headprompt.models.exceptions import InputError, InstanceFileError, LimitError, ValidationError
from headprompt.models.hmm.files import load_instance
from headprompt.models.hmm.large import LargeHMM
from headprompt.models.hmm.limits import MAX_FILE_BYTES, MAX_NESTING
from headprompt.models.hmm.npz import MAX_NPZ_TOKENS, npz_sizes, read_npz
from headprompt.models.hmm.rational import short_numbers
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


# ---- hostile files decided on the headers: size bombs, strings, meta, dimensions (audit) ----
#
# Each file is built here (as the audit's reproductions in /tmp/audit_input/npz were): a small
# exact model plus one hostile entry. A size bomb declares far more than it stores (a deflated
# run of zeros, or only the header), so a loader that trusted it would allocate gigabytes; each
# is refused with one line from the headers, in well under a second and without allocating.


def small() -> dict:
    """An exact 3-state, 2-token model (``A`` over 4, 8, 2; ``W`` over 3; ``pi0`` over 6)."""
    return {"kind": np.array("hmm"), "A": np.array([[1, 4, 0], [3, 0, 1], [0, 4, 1]]), "A.den": np.array([4, 8, 2]),
            "W": np.array([[1, 2, 3], [2, 1, 0]]), "W.den": np.array([3, 3, 3]), "pi0": np.array([1, 2, 3]),
            "pi0.den": np.array([6]), "mu": np.array([1, -1, 0]), "mu.den": np.array([1])}


def hostile(tmp_path, name: str, entries: dict, *, declared: dict | None = None, fill: int = 0) -> str:
    """A deflated ``.npz`` of ``entries`` plus, for each ``declared`` name -> (descr, shape),
    an entry whose header declares that array but which stores only ``fill`` bytes of zeros
    (the whole array when ``fill`` is -1)."""
    path = str(tmp_path / f"{name}.npz")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for key, value in entries.items():
            buf = io.BytesIO()
            np.save(buf, value)
            zf.writestr(key + ".npy", buf.getvalue())
        for key, (descr, shape) in (declared or {}).items():
            with zf.open(key + ".npy", "w", force_zip64=True) as fh:
                head = io.BytesIO()
                np.lib.format.write_array_header_1_0(head, {"descr": descr, "fortran_order": False, "shape": shape})
                fh.write(head.getvalue())
                left = np.dtype(descr).itemsize * math.prod(shape) if fill < 0 else fill
                block = bytes(1 << 22)
                while left > 0:
                    fh.write(block[:min(left, len(block))])
                    left -= len(block)
    return path


def refused_quickly(call, error=InputError, match=None):
    """The error ``call()`` raises, checked to come within a second with under 32 MB
    allocated (numpy's arrays are traced too): decided on the headers, nothing read."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(error, match=match) as got:
            call()
        took = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert took < 1.0 and peak < 32 * 2 ** 20, (took, peak)      # measured: milliseconds, under 1 MB
    text = str(got.value)
    assert "\n" not in text and len(text) < 400
    return text


def test_a_vocabulary_beyond_the_token_limit_is_refused_before_W_is_read(tmp_path):
    """``bomb_W5M``: a dense ``W`` of 5,000,000 x 3 int64 (120 MB of zeros, deflated to about
    120 KB; a 50M-row one is 1.2 MB) was read whole and made Fractions: many GB."""
    e = small()
    del e["W"]
    e["W.den"] = np.array([1, 1, 1])
    rows = 5_000_000
    path = hostile(tmp_path, "bomb_W5M", e, declared={"W": ("<i8", (rows, 3))}, fill=-1)
    for call in (lambda: npz_sizes(path), lambda: read_npz(path), lambda: load_instance(path),
                 lambda: load_instance(path, exact=False)):
        text = refused_quickly(call, LimitError, match="tokens")
        assert f"W has {rows} rows (tokens |X|)" in text and f"limit for a .npz instance is {MAX_NPZ_TOKENS}" in text
    at_limit = hostile(tmp_path, "at_limit", e, declared={"W": ("<i8", (MAX_NPZ_TOKENS + 1, 3))})
    refused_quickly(lambda: npz_sizes(at_limit), LimitError, match=f"W has {MAX_NPZ_TOKENS + 1} rows")


def test_a_sparse_W_declaring_2_to_the_40_rows_is_refused_before_it_is_built(tmp_path):
    """``W_sparse_huge_rows``: ``W.shape`` [2^40, 3] with three nonzeros (MemoryError before)."""
    e = small()
    W = sparse.csc_array(e.pop("W"))
    e.update({"W.data": W.data, "W.indices": W.indices.astype(np.int64), "W.indptr": W.indptr.astype(np.int64),
              "W.shape": np.array([2 ** 40, 3]), "W.format": np.array("csc")})
    path = save(tmp_path, "W_sparse_huge_rows", e)
    for call in (lambda: npz_sizes(path), lambda: read_npz(path), lambda: load_instance(path)):
        refused_quickly(call, LimitError, match=r"W has 1099511627776 rows \(tokens \|X\|\)")


@pytest.mark.parametrize("name,error,words", [
    ("kind", InstanceFileError, "entry 'kind' declares a string of 500000000 characters; expected 'hmm'"),
    ("meta", LimitError, f"entry 'meta' declares 500000000 characters of JSON text; the limit is {MAX_FILE_BYTES}"),
    ("A.format", InstanceFileError, "entry 'A.format' declares a string of 500000000 characters"),
    ("witness.theorem", InstanceFileError, "entry 'witness.theorem' declares a string of 500000000 characters")])
def test_a_string_entry_declaring_half_a_billion_characters_is_refused_on_its_header(tmp_path, name, error, words):
    """``bomb_kind_U`` / ``bomb_meta_U``: a 0-d unicode array of 500,000,000 characters is one
    array entry but 2 GB; its declared size is checked before it is read (only a few bytes are
    stored here: reading it would fail differently)."""
    e = small()
    if name == "A.format":
        A = sparse.csc_array(e.pop("A"))
        e.update({"A.data": A.data, "A.indices": A.indices, "A.indptr": A.indptr, "A.shape": np.array([3, 3])})
    e.pop(name, None)
    path = hostile(tmp_path, name, e, declared={name: ("<U500000000", ())}, fill=64)
    for call in (lambda: npz_sizes(path), lambda: read_npz(path), lambda: load_instance(path)):
        assert words in refused_quickly(call, error)


@pytest.mark.parametrize("text,error,words", [
    ("[" * 200_000 + "]" * 200_000, LimitError, f"meta: JSON nested more than {MAX_NESTING} deep"),
    ('{"instance":' * 50_000 + "1" + "}" * 50_000, LimitError, f"meta: JSON nested more than {MAX_NESTING} deep"),
    ("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), LimitError, "nested more than"),
    ('{"seed": NaN}', InstanceFileError, "meta: NaN is not a number"),
    ('{"seed": 1, "seed": 2}', InstanceFileError, "meta: the key 'seed' appears twice"),
    ('{"seed": ' + "9" * 5000 + "}", LimitError, "meta: the integer 999999999999...99999999 (5000 characters)"),
    ('{"seed": "1e-99999"}', LimitError, "meta: the number 1e-99999 would need"),
    ("{'seed': 1}", InstanceFileError, "entry 'meta' is not JSON text (Expecting property name")])
def test_meta_is_read_as_strictly_as_a_json_instance_file(tmp_path, text, error, words):
    """``meta_deep`` / ``meta_deep_obj``: 200,000 nested lists raised RecursionError (exit 4);
    meta now gets the instance files' JSON reading (depth, digits, NaN, duplicate keys)."""
    path = save(tmp_path, "meta", {**small(), "meta": np.array(text)})
    with pytest.raises(error) as got:
        read_npz(path)
    assert words in str(got.value) and "\n" not in str(got.value)
    assert not isinstance(got.value, RecursionError)


def test_meta_within_the_limits_reads_as_before(tmp_path):
    meta = {"seed": 3, "x": 0.25, "deep": [[[[1]]]], "instance": {"B": [0, 2]}}
    assert read_npz(save(tmp_path, "ok", {**small(), "meta": np.array(json.dumps(meta))})).meta == meta


@pytest.mark.parametrize("name,value,words", [
    ("mu", np.array([[[1, -1, 0]]]), "mu: expected shape (3,) (one weight per hidden state) or (k, 3) with k >= 2 "
                                     "classes, found (1, 1, 3)"),
    ("mu", np.array([[1, -1, 0]]), "mu: expected shape (3,)"),
    ("mu", np.array([1, -1]), "found (2,)"),
    ("pi0", np.array([[1, 2, 3]]), "pi0: expected shape (3,) (one probability per hidden state), found (1, 3)"),
    ("A", np.array([[[1, 4, 0], [3, 0, 1], [0, 4, 1]]]), "A: expected a matrix, found shape (1, 3, 3)"),
    ("A", np.array([[1, 4, 0], [3, 0, 1]]), "A: expected a nonempty square matrix (|H| x |H|), found shape (2, 3)"),
    ("W", np.array([1, 2, 3]), "W: expected a matrix, found shape (3,)"),
    ("W", np.array([[1, 2], [2, 1]]), "W: expected shape (|X|, 3) (tokens x hidden states), found (2, 2)"),
    ("witness.b", np.array([[[1, 2]]]), "witness.b: expected a vector of at most 3 entries"),
    ("witness.u", np.arange(4), "witness.u: expected a vector of at most 3 entries")])
def test_every_array_dimension_is_checked_on_the_header(tmp_path, name, value, words):
    """``mu_3d``: ``mu`` of shape (1, 1, 3) raised TypeError (exit 4) while made into Fractions."""
    e = {**small(), name: value}
    if name.startswith("witness."):
        e[f"{name}.den"] = np.array([1])
    path = save(tmp_path, name, e)
    for call in (lambda: npz_sizes(path), lambda: read_npz(path), lambda: load_instance(path)):
        with pytest.raises(ValidationError) as got:
            call()
        assert words in str(got.value)


def test_denominators_are_counted_on_the_header_before_they_are_read(tmp_path):
    e = small()
    del e["A.den"]
    path = hostile(tmp_path, "den", e, declared={"A.den": ("<i8", (100_000_000,))})
    text = refused_quickly(lambda: read_npz(path), ValidationError)
    assert "A.den: expected 3 denominator(s) (one per column), found 100000000" in text


def test_a_sparse_A_that_is_not_square_is_named_before_any_size_estimate(tmp_path):
    """``sparse_shape_huge``: ``A.shape`` [2^62, 3] got a memory-estimate refusal (its 2^62
    states sent it to the large-model path) instead of 'not square'."""
    e = small()
    A = sparse.csc_array(e.pop("A"))
    e.update({"A.data": A.data, "A.indices": A.indices.astype(np.int64), "A.indptr": A.indptr.astype(np.int64),
              "A.shape": np.array([2 ** 62, 3]), "A.format": np.array("csc")})
    path = save(tmp_path, "sparse_shape_huge", e)
    want = f"A: expected a nonempty square matrix (|H| x |H|), found shape ({2 ** 62}, 3)"
    for call in (lambda: npz_sizes(path), lambda: read_npz(path), lambda: load_instance(path)):
        assert want in refused_quickly(call, ValidationError)
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hmm", path],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [f"error: {path}: {want}"]


def test_a_sum_of_hundreds_of_digits_is_shown_by_a_few(tmp_path):
    """``float_subnormal``: ``pi0`` = [5e-324, 1 - 5e-324 (= 1.0), 0] read exactly sums to
    1 + 5e-324, a fraction of two 324-digit integers that the message printed in full."""
    e = {"kind": np.array("hmm"), "A": np.eye(3), "W": np.ones((1, 3)), "pi0": np.array([5e-324, 1 - 5e-324, 0]),
         "mu": np.array([1.0, -1.0, 0.0])}
    path = save(tmp_path, "float_subnormal", e)
    with pytest.raises(ValidationError) as got:
        load_instance(path)
    text = str(got.value)
    assert "pi0: the vector sums to about 1.000000000 (1 + 5.00E-324, a 324/324-digit fraction), expected " \
           "exactly 1" in text
    assert len(text) - len(str(path)) < 300 and not re.search(r"\d{49}", text)     # the path's length varies
    assert load_instance(path, exact=False).pi0[0] == 5e-324           # float mode: within the tolerance


def test_short_numbers_keeps_short_ones_and_shortens_long_ones():
    assert short_numbers("A: column 1 sums to 51/50, entry [161, 0] is -4611686018427387904/25") == \
        "A: column 1 sums to 51/50, entry [161, 0] is -4611686018427387904/25"
    assert short_numbers("x " + "7" * 60 + " y") == "x 7.777777778E+59 (a 60-digit number) y"
    assert short_numbers("sums to " + "3" * 39 + "4/" + "1" * 40) == "sums to about 3.000000000 (3 + 9.00E-40, a " \
                                                                          "40/40-digit fraction)"
    assert short_numbers("is " + "3" * 40 + "/" + "1" * 40) == "is 3 (a 40/40-digit fraction)"
    assert short_numbers("is " + "1" * 30 + "/" + "7" * 30) == "is about 0.1428571429 (a 30/30-digit fraction)"
    assert short_numbers("is -" + "9" * 400 + "/7") == "is about -1.428571429E+399 (a 400/1-digit fraction)"
    assert short_numbers("is " + "1" * 5000 + "/3") == "is 111111111111...111111/3 (5002 characters)"


def test_command_line_on_the_audit_bombs_one_line_exit_2_in_seconds(tmp_path):
    """The audit's commands (theorem, posterior, assumptions) on the size bombs: exit 2 and one
    line, never the gigabytes, a traceback or exit 4."""
    e = small()
    del e["W"]
    e["W.den"] = np.array([1, 1, 1])
    bombs = {"W": hostile(tmp_path, "bomb_W50M", e, declared={"W": ("<i8", (50_000_000, 3))}, fill=1 << 20),
             "kind": hostile(tmp_path, "bomb_kind_U", {k: v for k, v in small().items() if k != "kind"},
                             declared={"kind": ("<U500000000", ())}, fill=64),
             "meta": save(tmp_path, "meta_deep", {**small(), "meta": np.array("[" * 200_000 + "]" * 200_000)}),
             "mu": save(tmp_path, "mu_3d", {**small(), "mu": np.array([[[1, -1, 0]]])})}
    for what, path in bombs.items():
        for cmd in (["theorem", "3.6", "--hmm", path], ["posterior", "--hmm", path, "--seq", "0"],
                    ["assumptions", "3.6", "--hmm", path]):
            proc = subprocess.run([sys.executable, "-m", "headprompt.verify", *cmd], capture_output=True, text=True,
                                  timeout=60)
            lines = proc.stderr.strip().splitlines()
            assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"error: {path}: "), \
                (what, cmd, proc.returncode, proc.stderr[-500:])


def test_a_dense_load_beyond_the_exact_cap_is_refused_from_the_headers(tmp_path):
    """Found by an input audit: ``verify posterior --hmm`` on a 2,000 x 10,000 ``.npz`` read the
    whole file into Fractions (26 s, 1.6 GB) before HMM.create refused it. Now the dense entries
    (|H|^2 + |X| |H| + 2 |H|) are checked against the exact cap from the headers: a sparse
    1,900-state file whose dense form needs 8.1 million entries is refused in exact mode at once,
    with little memory, and read in float mode (its cap is higher)."""
    n = 1900
    model = chain(n)
    X = model["W"].shape[0]
    assert n * n + X * n + 2 * n > 8_000_000
    path = save(tmp_path, "big", entries(model))
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(LimitError, match="dense exact HMM holds at most 8,000,000"):
        load_instance(path, exact=True)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 5 and peak < 20_000_000
    hmm = load_instance(path, exact=False)
    assert hmm.num_states == n and hmm.num_tokens == X
    assert np.allclose(hmm.A.sum(0), 1.0) and hmm.A[1, 0] == 0.5
