"""The exact backward step over the nonzeros of a sparse ``A`` (``SparseBackward``, used by
``shared_backward_messages`` above ``FUSED_MAX_STATES`` states): the same integers as the dense
``fmpz_mat`` step, and ``pi0 . beta(x)`` is ``Pr(X = x)`` by path sums (tests/oracle.py)."""

from fractions import Fraction as F

import numpy as np
import pytest

from headprompt.models.hmm.values import HMM
from headprompt.models.inference import exact as ie
from headprompt.models.inference.exact import transpose_apply
from tests.oracle import joint_probability
from tests.verify.theorems.test_path_choice import sparse_transitions


def _sparse_hmm(n: int, seed: int) -> HMM:
    rng = np.random.default_rng(seed)
    A = sparse_transitions(n, rng)
    W = [[F(int(rng.integers(1, 5)), 1) for _ in range(n)] for _ in range(3)]
    W = [[W[x][h] / sum(W[y][h] for y in range(3)) for h in range(n)] for x in range(3)]
    return HMM.create(A, W, [F(1, n)] * n)


def _messages(hmm, seqs, monkeypatch, *, sparse: bool):
    with monkeypatch.context() as m:
        m.setattr(ie, "FUSED_MAX_STATES", 2)
        m.setattr(ie, "SPARSE_STEP_DENSITY", 1.0 if sparse else 0.0)
        ih = ie.integer_hmm(hmm)
        ie._SPARSE.clear()
        assert (ie.sparse_backward(ih) is not None) == sparse
        out = {s: [int(v) for v in vec.entries()] for s, vec in ie.shared_backward_messages(ih, seqs)}
        ie._SPARSE.clear()
        return out, ih


def test_sparse_step_equals_the_dense_step_and_the_path_sums(monkeypatch):
    hmm = _sparse_hmm(6, 1)
    seqs = [(0,), (1, 2), (2, 1), (0, 0, 1), (1, 0, 2)]
    fast, ih = _messages(hmm, seqs, monkeypatch, sparse=True)
    slow, _ = _messages(hmm, seqs, monkeypatch, sparse=False)
    assert fast == slow
    pi0 = [int(v) for v in ih.pi0_int.entries()]
    for s in seqs:
        scale = ih.dpi * (ih.dA * ih.dW) ** len(s)
        assert F(sum(p * b for p, b in zip(pi0, fast[s])), scale) == joint_probability(hmm, list(s))


def test_a_wrong_step_is_caught_by_the_oracle(monkeypatch):
    """The same comparison fails when one integer of the sparse form is changed."""
    hmm = _sparse_hmm(6, 2)
    with monkeypatch.context() as m:
        m.setattr(ie, "FUSED_MAX_STATES", 2)
        m.setattr(ie, "SPARSE_STEP_DENSITY", 1.0)
        ih = ie.integer_hmm(hmm)
        ie._SPARSE.clear()
        sb = ie.sparse_backward(ih)
        sb.data[0] += 1
        (_, beta), = ie.shared_backward_messages(ih, [(0, 1)])
        ie._SPARSE.clear()
    pi0 = [int(v) for v in ih.pi0_int.entries()]
    got = F(sum(p * int(b) for p, b in zip(pi0, beta.entries())), ih.dpi * (ih.dA * ih.dW) ** 2)
    assert got != joint_probability(hmm, [0, 1])


def test_transpose_apply_skips_empty_columns():
    # A = [[2, 0, 0], [3, 0, 5]] (columns 0 and 2 nonempty): A^T y
    out = transpose_apply(np.array([0, 2, 2, 3]), np.array([0, 1, 1]), np.array([2, 3, 5], dtype=object),
                          np.array([7, 11], dtype=object))
    assert out.tolist() == [2 * 7 + 3 * 11, 0, 5 * 11]


@pytest.mark.parametrize("density,expect", [(0.5, True), (0.001, False)])
def test_the_sparse_step_is_used_by_density(monkeypatch, density, expect):
    hmm = _sparse_hmm(6, 3)                         # 6 states, at most 18 nonzeros of 36
    monkeypatch.setattr(ie, "FUSED_MAX_STATES", 2)
    monkeypatch.setattr(ie, "SPARSE_STEP_DENSITY", density)
    ie._SPARSE.clear()
    assert (ie.sparse_backward(ie.integer_hmm(hmm)) is not None) == expect
    ie._SPARSE.clear()
