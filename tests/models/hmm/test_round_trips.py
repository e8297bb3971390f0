"""Every model the API saves, it loads with the same call (issue 35, item 4): exact and float,
dense and sparse (an ``.npz`` file stores a matrix with few nonzeros sparse), JSON and ``.npz``,
vanilla and memory (memory HMMs are saved as JSON); and every refusal that ``exact=False``
would avoid says so.

The reloaded model is compared with the saved one entry by entry (exact entries exactly, float
entries bit for bit), which is stronger than ``==`` alone; the float models are float64 draws
whose columns miss 1 by rounding (the case of the issue: ``1 - 1.3e-18``)."""

import json
import zipfile
from fractions import Fraction

import numpy as np
import pytest

import headprompt
from headprompt.models.exceptions import ExactnessError, InputError, ValidationError
from headprompt.models.hmm.files import FLOAT_MARK
from headprompt.models.hmm.values import HMM, MemoryHMM


def _float_hmm(sparse: bool) -> HMM:
    rng = np.random.default_rng(3)
    n, x = (12, 6)
    A = rng.dirichlet(np.ones(n), size=n).T
    W = rng.dirichlet(np.ones(x), size=n).T
    if sparse:                       # a banded chain: few nonzeros, stored sparse in an .npz
        A = np.zeros((n, n))
        for h in range(n):
            A[h, h], A[(h + 1) % n, h] = 0.7, 0.3
        A[:, 0] = [1 / 3 if g in (0, 1, 2) else 0.0 for g in range(n)]
    pi0 = rng.dirichlet(np.ones(n))
    return HMM.create(A, W, pi0, rng.normal(size=n), exact=False)


def _exact_hmm(sparse: bool) -> HMM:
    n = 12
    A = [[Fraction(0)] * n for _ in range(n)]
    for h in range(n):
        if sparse:
            A[h][h], A[(h + 1) % n][h] = Fraction(2, 3), Fraction(1, 3)
        else:
            for g in range(n):
                A[g][h] = Fraction(1 + (g * h) % 5, sum(1 + (k * h) % 5 for k in range(n)))
    W = [[Fraction(1 + (t + h) % 3, sum(1 + (s + h) % 3 for s in range(4))) for h in range(n)] for t in range(4)]
    return HMM.create(A, W, [Fraction(1, n)] * n, [(-1) ** h * (h + 1) for h in range(n)])


def _memory(exact: bool) -> MemoryHMM:
    A = [["1/3", "1/2"], ["2/3", "1/2"]]
    W = np.array([[[0.1, 0.7], [0.3, 0.2]], [[0.9, 0.3], [0.7, 0.8]]])       # (X=2, M=2, H=2)
    if exact:
        W = [[[str(v) for v in row] for row in plane] for plane in W.tolist()]
        return MemoryHMM.create(1, 2, 2, A, W, ["1/2", "1/2"], pM=["1/3", "2/3"], mu=[1, -1])
    rng = np.random.default_rng(5)
    Wf = rng.dirichlet(np.ones(2), size=(2, 2)).transpose(2, 0, 1)         # columns W[:, m, h] sum to ~1
    return MemoryHMM.create(1, 2, 2, np.array([[1 / 3, 0.5], [2 / 3, 0.5]]), Wf, [0.5, 0.5], pM=[1 / 3, 2 / 3],
                            mu=[1.0, -1.0], exact=False)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == object:
        return all(type(u) is type(v) and u == v for u, v in zip(a.flat, b.flat))
    return a.tobytes() == b.tobytes()                                        # bit for bit


def _stored_sparse(path) -> bool:
    with zipfile.ZipFile(path) as zf:
        return any(name.startswith("A.data") for name in zf.namelist())


CASES = [(exact, sparse, ext) for exact in (True, False) for sparse in (False, True) for ext in ("json", "npz")]


@pytest.mark.parametrize("exact, sparse, ext", CASES, ids=[f"{'exact' if e else 'float'}-{'sparse' if s else 'dense'}-{x}"
                                                          for e, s, x in CASES])
def test_every_saved_hmm_loads_with_the_same_call(tmp_path, exact, sparse, ext):
    model = (_exact_hmm if exact else _float_hmm)(sparse)
    if not exact:                                    # the case: float columns miss 1 exactly
        assert any(sum(Fraction(v) for v in model.A[:, h]) != 1 for h in range(model.num_states))
    path = tmp_path / f"model.{ext}"
    model.save(str(path))
    if ext == "npz":
        assert _stored_sparse(path) == sparse
    for load in (headprompt.load, HMM.load):
        back = load(str(path))
        assert isinstance(back, HMM) and back.exact == exact
        assert all(_same(a, b) for a, b in zip(model._value_fields(), back._value_fields()))
        assert back == model
    # asked for the other kind: an exact file read as float64 always works; a float file read
    # exactly is refused, and the refusal names exact=False
    assert HMM.load(str(path), exact=False) == model.to_float()
    if not exact:
        with pytest.raises(ValidationError, match="exact=False"):
            HMM.load(str(path), exact=True)
        with pytest.raises(ValidationError, match="exact=False"):
            headprompt.load(str(path), exact=True)


@pytest.mark.parametrize("exact", [True, False])
def test_every_saved_memory_hmm_loads_with_the_same_call(tmp_path, exact):
    model = _memory(exact)
    path = tmp_path / "memory.json"
    model.save(str(path))
    for load in (headprompt.load, MemoryHMM.load):
        back = load(str(path))
        assert isinstance(back, MemoryHMM) and back.exact == exact
        assert all(_same(a, b) for a, b in zip(model._value_fields(), back._value_fields()))
    with pytest.raises(InputError, match="saved as JSON"):
        model.save(str(tmp_path / "memory.npz"))
    with pytest.raises(InputError, match="not a MemoryHMM"):
        MemoryHMM.load(str(_save(tmp_path, _exact_hmm(False))))


def _save(tmp_path, model):
    path = tmp_path / "vanilla.json"
    model.save(str(path))
    return path


def test_a_float_file_is_marked_and_the_mark_keeps_user_meta(tmp_path):
    model = _float_hmm(False)
    path = tmp_path / "f.json"
    model.save(str(path), meta={"source": "mine"})
    data = json.loads(path.read_text())
    assert data["meta"] == {"source": "mine", FLOAT_MARK: "float64"}
    exact_path = _save(tmp_path, _exact_hmm(False))
    assert "meta" not in json.loads(exact_path.read_text())
    # an unmarked file of decimals is read exactly, as SPEC section 2 says (0.1 is 1/10)
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"kind": "hmm", "A": [[0.9, 0.2], [0.1, 0.8]], "W": [[1, 0], [0, 1]],
                                 "pi0": [0.5, 0.5]}))
    assert headprompt.load(str(plain)).A[1, 0] == Fraction(1, 10)


# ---------------------------------------------------------------- refusals that name the way out

def test_create_refusing_floats_points_to_exact_false():
    with pytest.raises(ExactnessError, match=r"found the float 0\.5 .*exact=False"):
        HMM.create([[0.5, 0.5], [0.5, 0.5]], [[1, 0], [0, 1]], ["1/2", "1/2"])
    with pytest.raises(ExactnessError, match="exact=False"):
        HMM.create(np.array([[0.5, 0.5], [0.5, 0.5]]), [[1, 0], [0, 1]], ["1/2", "1/2"])
    with pytest.raises(ExactnessError, match="exact=False"):
        MemoryHMM.create(1, 1, 1, [[1]], [[[0.5]], [[0.5]]], [1], pM=[1])
    assert HMM.create([[0.5, 0.5], [0.5, 0.5]], [[1, 0], [0, 1]], [0.5, 0.5], exact=False).A[0, 0] == 0.5


def test_an_exact_sum_within_float_tolerance_names_exact_false_and_a_real_miss_does_not():
    third = "0.3333333333333333"                                # 1/3 as float64 prints it
    with pytest.raises(ValidationError, match="exact=False reads it as float64"):
        HMM.create([[third, "1/2"], ["0.6666666666666666", "1/2"]], [[1, 1]], ["1/2", "1/2"])
    with pytest.raises(ValidationError) as caught:                # misses by 1/10: no float reading helps
        HMM.create([["0.3", "1/2"], ["0.6", "1/2"]], [[1, 1]], ["1/2", "1/2"])
    assert "exact=False" not in str(caught.value) and "sums to 9/10" in str(caught.value)


@pytest.mark.parametrize("exact", [True, False])
def test_a_row_stochastic_transition_matrix_names_the_convention_and_the_transpose(exact):
    transmat = [[0.9, 0.1], [0.2, 0.8]] if not exact else [["9/10", "1/10"], ["2/10", "8/10"]]
    with pytest.raises(ValidationError) as caught:
        HMM.create(transmat, [[1, 0], [0, 1]], ["1/2", "1/2"] if exact else [0.5, 0.5], exact=exact)
    text = str(caught.value)
    assert "A[to, from]" in text and "column-stochastic" in text and "A.T" in text
    assert "rationalize" not in text and "sums to" not in text     # (no pointer to --rationalize)
    good = HMM.create(np.array(transmat, dtype=object if exact else float).T, [[1, 0], [0, 1]],
                      ["1/2", "1/2"] if exact else [0.5, 0.5], exact=exact)
    assert good.A[1, 0] == (Fraction(1, 10) if exact else 0.1)
    # an emission matrix given state by token (hmmlearn's emissionprob_) on a square model
    with pytest.raises(ValidationError, match=r"W\[token, state\].*W\.T"):
        HMM.create([[1, 0], [0, 1]], [["1/4", "3/4"], ["1/2", "1/2"]], ["1/2", "1/2"])
