"""The denominator-cleared integer form of an exact HMM (python-flint ``fmpz_mat``).

``A = A_int / dA``, ``W = W_int / dW``, ``pi0 = pi0_int / dpi``: every exact kernel
(:mod:`headprompt.models.inference.exact`, the checkers in ``verify/theorems/``) multiplies
integers and restores the scale from the denominators. Built once per model and kept with it
(:meth:`HMM.memo`). Also ``P[H_1] = A pi0``, ``A v`` and ``W^T b`` through that form.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ..exceptions import InputError
from .base import _Sizes           # the value types' shared base (vanilla.py, above this module, builds on it)
from .rational import common_denominator

__all__ = ["IntegerHMM", "integer_hmm", "prior_h1", "transition_apply", "head_weights",
           "scaled_integer_vector", "FUSED_MAX_STATES", "column", "column_entries",
           "scaled_column"]


def prior_h1(hmm: _Sizes) -> np.ndarray:
    """``P[H_1] = A pi0`` (SPEC section 1; ``H_0`` emits nothing): the quantity of
    :meth:`HMM.hidden_marginal_1`, its definition, evaluated for an exact model through the
    integer form (one integer product, not ``|H|^2`` Fraction operations), cached on the model.

    >>> from headprompt.models.hmm.values import HMM
    >>> [str(v) for v in prior_h1(HMM.create([[1, '1/2'], [0, '1/2']], [[1, 1]], ['1/2', '1/2']))]
    ['3/4', '1/4']
    """
    return hmm.memo("prior_h1", lambda: transition_apply(hmm, hmm.pi0) if hmm.exact
                    else hmm.hidden_marginal_1())


def transition_apply(hmm: _Sizes, vec) -> np.ndarray:
    """``A v`` exactly (a Fraction array), through the integer form: one integer
    matrix-vector product instead of ``|H|^2`` Fraction operations."""
    ih = integer_hmm(hmm)
    ints, d = scaled_integer_vector([Fraction(v) for v in vec])
    out = ih.A_int * column(ints)
    den = ih.dA * d
    return np.array([Fraction(int(out[r, 0]), den) for r in range(ih.num_states)], dtype=object)


def head_weights(hmm: _Sizes, b) -> np.ndarray:
    """``W^T b`` exactly (a Fraction array over the hidden states): a linear head ``b`` on the
    emission space read back on the hidden states, through the integer form of ``W``.

    >>> from headprompt.models.hmm.values import HMM
    >>> h = HMM.create([[1, 0], [0, 1]], [['3/4', '1/4'], ['1/4', '3/4']], ['1/2', '1/2'])
    >>> [str(v) for v in head_weights(h, [2, -2])]
    ['1', '-1']
    """
    ih = integer_hmm(hmm)
    ints, d = scaled_integer_vector([Fraction(v) for v in b])
    out = flint.fmpz_mat([ints]) * ih.W_int                      # [1, |H|]
    den = ih.dW * d
    return np.array([Fraction(int(out[0, c]), den) for c in range(ih.num_states)], dtype=object)


def _ints(values, den: int) -> list[int]:
    """``values * den`` as integers (``den`` a multiple of every denominator)."""
    return [v.numerator * (den // v.denominator) for v in values]


def scaled_integer_vector(values: Sequence[Fraction]) -> tuple[list[int], int]:
    """``(ints, d)`` with ``values = ints / d`` and ``d`` the least common denominator.

    >>> scaled_integer_vector([Fraction(1, 2), Fraction(1, 3)])
    ([3, 2], 6)
    """
    d = common_denominator(values)
    return _ints([Fraction(v) for v in values], d), d


def column(ints: Sequence[int]) -> flint.fmpz_mat:
    return flint.fmpz_mat([[int(v)] for v in ints])


def column_entries(col: flint.fmpz_mat) -> list:
    return [col[r, 0] for r in range(col.nrows())]


FUSED_MAX_STATES = 64      # above this, a per-token product matrix costs more than it saves


class _TokenMatrices:
    """``diag(W_int[z]) A_int`` (forward) or ``A_int^T diag(W_int[z])`` (backward), built on
    first use per token."""

    def __init__(self, ih: "IntegerHMM", kind: str):
        self.ih, self.kind, self.built = ih, kind, {}

    def __getitem__(self, z: int) -> flint.fmpz_mat:
        if z not in self.built:
            ih, n = self.ih, self.ih.num_states
            D = flint.fmpz_mat(n, n)
            for h, w in enumerate(ih.W_rows[z]):
                D[h, h] = w
            self.built[z] = D * ih.A_int if self.kind == "forward" else ih.AT_int * D
        return self.built[z]

    def __len__(self) -> int:
        return self.ih.num_tokens


@dataclass(frozen=True)
class IntegerHMM:
    """Denominator-cleared integer form of an exact HMM, with per-token message steps.

    ``A = A_int / dA``, ``W = W_int / dW``, ``pi0 = pi0_int / dpi``; ``forward[z]`` is
    ``diag(W_int[z]) A_int`` and ``backward[z]`` is ``A_int^T diag(W_int[z])`` (built on first
    use); :meth:`step_forward` and :meth:`step_backward` apply them to a message, scaling
    then multiplying when ``|H|`` exceeds ``FUSED_MAX_STATES``.
    """

    A_int: flint.fmpz_mat
    AT_int: flint.fmpz_mat
    W_int: flint.fmpz_mat
    pi0_int: flint.fmpz_mat
    dA: int
    dW: int
    dpi: int
    W_rows: tuple

    @property
    def num_states(self) -> int:
        return self.A_int.nrows()

    @property
    def num_tokens(self) -> int:
        return self.W_int.nrows()

    @functools.cached_property
    def forward(self) -> _TokenMatrices:
        return _TokenMatrices(self, "forward")

    @functools.cached_property
    def backward(self) -> _TokenMatrices:
        return _TokenMatrices(self, "backward")

    def step_backward(self, z: int, beta: flint.fmpz_mat) -> flint.fmpz_mat:
        """``A_int^T (W_int[z] ⊙ beta)`` (one backward step, integers)."""
        if self.num_states <= FUSED_MAX_STATES:
            return self.backward[z] * beta
        return self.AT_int * scaled_column(beta, self.W_rows[z])

    def step_forward(self, z: int, alpha: flint.fmpz_mat) -> flint.fmpz_mat:
        """``W_int[z] ⊙ (A_int alpha)`` (one forward step, integers)."""
        if self.num_states <= FUSED_MAX_STATES:
            return self.forward[z] * alpha
        return scaled_column(self.A_int * alpha, self.W_rows[z])


def scaled_column(col: flint.fmpz_mat, weights) -> flint.fmpz_mat:
    return flint.fmpz_mat([[col[r, 0] * w] for r, w in enumerate(weights)])


def integer_hmm(hmm: _Sizes) -> IntegerHMM:
    """The (cached) :class:`IntegerHMM` of an exact HMM.

    Raises:
        InputError: for a float HMM (convert it explicitly first: ``rationalize``).
    """
    if not hmm.exact:
        raise InputError("exact inference needs an exact HMM; convert it explicitly with "
                         "headprompt.models.hmm.rationalize.rationalize(hmm) first")
    return hmm.memo("integer", lambda: _build_integer_hmm(hmm))


def _build_integer_hmm(hmm: _Sizes) -> IntegerHMM:
    dA, dW, dpi = (common_denominator(a) for a in (hmm.A, hmm.W, hmm.pi0))
    A_int = flint.fmpz_mat([_ints(row, dA) for row in hmm.A])
    W_rows = tuple(tuple(_ints(row, dW)) for row in hmm.W)
    W_int = flint.fmpz_mat([list(r) for r in W_rows])
    pi0_int = column(_ints(hmm.pi0, dpi))
    return IntegerHMM(A_int, A_int.transpose(), W_int, pi0_int, dA, dW, dpi, W_rows)
