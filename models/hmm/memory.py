"""The memory-augmented HMM (paper Section 4, Appendix C.2; SPEC section 1) as an immutable,
validated value type, with its lift to the equivalent vanilla :class:`~.vanilla.HMM` on
``Htil = (m_1..m_N, h)``. Validation, ownership and equality as for the vanilla type
(:mod:`.vanilla`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import ValidationError
from .arrays import (_check_distributions, _check_nonnegative, _check_shape, _check_stochastic,
                     _check_task_shape, _decimal_array, _float_form, _is_exact, _own_fields,
                     _pointing_to_rationalize, check_model_arrays)
from .base import _file_io, _load_as, _Sizes
from .reading import _check_exact_flag, as_array, check_memory_size, check_path
from .vanilla import HMM

__all__ = ["MemoryHMM"]


@dataclass(frozen=True, eq=False)
class MemoryHMM(_Sizes):
    """A memory-augmented HMM (paper Section 4, Appendix C.2; SPEC section 1).

    Hidden state ``h = (j, s)`` is flattened as ``h = j * |S| + s`` with ``|H| = N |S|``.
    Memory configurations ``(m_1..m_N)`` are indexed lexicographically (``m_1`` most
    significant), so the joint prior ``pM`` has length ``|M|^N``.

    Attributes:
        cells: ``N``; memory_values: ``|M|``; syntax_states: ``|S|``.
        A: ``(|H|, |H|)`` column-stochastic transitions of the syntax chain.
        W: ``(|X|, |M|, |H|)``; ``W[x, m, (j, s)] = Pr(X_i = x | M_j = m, H_i = (j, s))``;
           each ``W[:, m, h]`` sums to 1.
        pi0: ``(|H|,)``; pM: ``(|M|^N,)`` joint memory prior.
        mu: ``(|M|,)``, ``k x |M|`` (``k >= 2`` classes) or None; target_cell: ``j*`` (0-based).
        pM_cells: ``(N, |M|)`` when the prior was given per cell (a product prior), else None.

    Raises:
        ValidationError: shapes, signs, sums, or a target cell out of range.
    """

    cells: int
    memory_values: int
    syntax_states: int
    A: np.ndarray
    W: np.ndarray
    pi0: np.ndarray
    pM: np.ndarray
    mu: np.ndarray | None = None
    target_cell: int = 0
    pM_cells: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @classmethod
    def create(cls, cells: int, memory_values: int, syntax_states: int, A: Any, W: Any, pi0: Any,
               pM: Any = None, *, pM_cells: Any = None, mu: Any = None, target_cell: int = 0,
               exact: bool = True) -> "MemoryHMM":
        """Build from nested lists; give exactly one of ``pM`` (joint) or ``pM_cells`` (product).

        Sizes are decided first, from the integers and shapes alone, with the caps of
        :meth:`HMM.create`: at most :data:`~.reading.DENSE_MAX_STATES` hidden states
        ``cells x syntax_states`` and :data:`~.reading.DENSE_MAX_ENTRIES` entries in all, the
        ``|M|^N`` entries of the joint prior that ``pM_cells`` expands to included.

        Raises:
            LimitError: a size past those limits (before anything is converted or expanded);
            ValidationError, InputError: as :func:`~.reading.as_array` and the constructor.
        """
        for name, v in (("cells", cells), ("memory_values", memory_values),
                        ("syntax_states", syntax_states), ("target_cell", target_cell)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValidationError(f"{name}: expected an integer, found {v!r}")
        if cells < 1 or memory_values < 1 or syntax_states < 1:
            raise ValidationError(f"memory-hmm: cells, memory_values and syntax_states must be >= 1, "
                                  f"found {cells}, {memory_values}, {syntax_states}")
        if (pM is None) == (pM_cells is None):
            raise ValidationError("memory-hmm: give exactly one of pM (joint prior) or pM_cells "
                                  "(one distribution per cell)")
        _check_exact_flag(exact)
        cells, memory_values, syntax_states = int(cells), int(memory_values), int(syntax_states)
        check_memory_size(cells, memory_values, syntax_states,
                          {"A": A, "W": W, "pi0": pi0, "pM": pM, "pM_cells": pM_cells, "mu": mu},
                          exact=exact, expand_prior=pM_cells is not None)
        cells_arr = None
        if pM_cells is not None:
            cells_arr = as_array(pM_cells, exact=exact, name="pM_cells")
            _check_shape(cells_arr, (cells, memory_values), "pM_cells", "one distribution per cell")
            _check_nonnegative(cells_arr, "pM_cells")
            _check_stochastic(cells_arr.T, "pM_cells", exact)
            # lexicographic in m_1..m_N (m_1 most significant): prod_j pM_cells[j, m_j], multiplied
            # left to right as before, one outer product per cell
            pM_arr = np.array(cells_arr[0], dtype=object if exact else float)
            for j in range(1, cells):
                pM_arr = np.multiply.outer(pM_arr, cells_arr[j]).ravel()
        else:
            pM_arr = as_array(pM, exact=exact, name="pM")
        return cls(int(cells), int(memory_values), int(syntax_states), as_array(A, exact=exact, name="A"),
                   as_array(W, exact=exact, name="W"), as_array(pi0, exact=exact, name="pi0"), pM_arr,
                   None if mu is None else as_array(mu, exact=exact, name="mu"), int(target_cell), cells_arr)

    def __post_init__(self) -> None:
        check_model_arrays(self, ("A", "W", "pi0", "pM", "mu", "pM_cells"), optional=("mu", "pM_cells"))
        arrays = [self.A, self.W, self.pi0, self.pM] + [a for a in (self.mu, self.pM_cells) if a is not None]
        if not (_is_exact(*arrays) or all(a.dtype.kind == "f" for a in arrays)):
            raise ValidationError("MemoryHMM: arrays must be all exact or all float64")
        n = self.cells * self.syntax_states
        _check_shape(self.A, (n, n), "A", f"|H| x |H| with |H| = cells * syntax_states = {n}")
        if self.W.ndim != 3 or self.W.shape[0] == 0:
            raise ValidationError(f"W: expected shape (|X|, {self.memory_values}, {n}), found {self.W.shape}")
        _check_shape(self.W, (self.W.shape[0], self.memory_values, n), "W", "tokens x memory values x hidden states")
        _check_shape(self.pi0, (n,), "pi0", "one probability per hidden state")
        _check_shape(self.pM, (self.memory_values ** self.cells,), "pM",
                     "joint memory prior of length |M|^N, lexicographic in m_1..m_N")
        if self.mu is not None:
            _check_task_shape(self.mu, self.memory_values, "one weight per memory value")
        if not 0 <= self.target_cell < self.cells:
            raise ValidationError(f"target_cell: expected 0..{self.cells - 1}, found {self.target_cell}")
        floats = _check_distributions(self, ("A", "W", "pi0", "pM"), self.exact)
        _own_fields(self, ("A", "W", "pi0", "pM", "mu", "pM_cells"), checked=("A", "W", "pi0", "pM"),
                    floats=floats)

    _FLOAT_CHECKED = ("A", "W", "pi0", "pM", "mu")

    def _value_fields(self) -> tuple:
        return (self.cells, self.memory_values, self.syntax_states, self.A, self.W, self.pi0, self.pM,
                self.mu, self.target_cell, self.pM_cells)

    def save(self, path: Any, *, witness: dict | None = None, meta: dict | None = None) -> None:
        """Write this model as a JSON instance file (SPEC section 3; a float model marked so that
        it reloads as one); see :mod:`headprompt.models.hmm.files`.

        Raises:
            InputError: ``path`` not a str or ``pathlib.Path``, an ``.npz`` path (memory HMMs
                are saved as JSON), or a file that cannot be written."""
        _file_io("save")(self, check_path(path), witness=witness, meta=meta)

    @classmethod
    def load(cls, path: Any, *, exact: bool | None = None) -> "MemoryHMM":
        """Read a JSON instance file of a memory HMM, by default as the kind of model the file
        holds (see :meth:`HMM.load <headprompt.models.hmm.vanilla.HMM.load>`).

        Raises:
            InputError: an unreadable or invalid file, or one that holds a vanilla HMM."""
        return _load_as(cls, path, exact, "a MemoryHMM")

    def cell_of(self, h: int) -> int:
        """The cell index ``j`` of flattened hidden state ``h = j * |S| + s``."""
        return h // self.syntax_states

    def memory_configurations(self) -> list[tuple[int, ...]]:
        """All ``(m_1..m_N)`` in the lexicographic order of ``pM``."""
        return list(itertools.product(range(self.memory_values), repeat=self.cells))

    def emission_matrix(self) -> np.ndarray:
        """``W`` read as ``|X| x (|M| |H|)`` with columns ordered ``(m, h)``, ``m`` major."""
        return self.W.reshape(self.num_tokens, self.memory_values * self.num_states)  # (X, M*H)

    def lift(self) -> HMM:
        """The equivalent vanilla HMM on ``Htil = (m_1..m_N, h)`` (memory constant along the
        chain); lifted state index ``c * |H| + h`` for memory configuration ``c``."""
        return self.memo("lift", self._build_lift)

    def _build_lift(self) -> HMM:
        configs = self.memory_configurations()
        n, k = self.num_states, len(configs)
        dtype = object if self.exact else float
        zero = Fraction(0) if self.exact else 0.0
        A = np.full((k * n, k * n), zero, dtype=dtype)
        W = np.empty((self.num_tokens, k * n), dtype=dtype)
        for c, ms in enumerate(configs):
            A[c * n:(c + 1) * n, c * n:(c + 1) * n] = self.A
            for h in range(n):
                W[:, c * n + h] = self.W[:, ms[self.cell_of(h)], h]
        pi0 = np.array([self.pM[c] * self.pi0[h] for c in range(k) for h in range(n)], dtype=dtype)
        return HMM(A, W, pi0)

    def to_float(self) -> "MemoryHMM":
        """The float64 form (a no-op for a float model), built once per model; array float forms
        are shared as in :meth:`HMM.to_float`."""
        if not self.exact:
            return self
        conv = _float_form
        return self.memo("to_float", lambda: MemoryHMM(
            self.cells, self.memory_values, self.syntax_states, conv(self.A), conv(self.W), conv(self.pi0),
            conv(self.pM), conv(self.mu), self.target_cell, conv(self.pM_cells)).with_conversion(self.conversion))

    def to_exact(self) -> "MemoryHMM":
        """The exact form, each float read as the decimal it prints as (see :meth:`HMM.to_exact`).

        Raises:
            ExactnessError: a distribution that then does not sum to exactly 1.
        """
        if self.exact:
            return self
        conv = lambda a, name: None if a is None else _decimal_array(a, name)  # noqa: E731
        with _pointing_to_rationalize():
            return MemoryHMM(self.cells, self.memory_values, self.syntax_states, conv(self.A, "A"),
                             conv(self.W, "W"), conv(self.pi0, "pi0"), conv(self.pM, "pM"),
                             conv(self.mu, "mu"), self.target_cell, conv(self.pM_cells, "pM_cells")
                             ).with_conversion(self.conversion)

    def __repr__(self) -> str:
        kind = "exact" if self.exact else "float"
        return (f"MemoryHMM(N={self.cells}, |M|={self.memory_values}, |S|={self.syntax_states}, "
                f"|X|={self.num_tokens}, {kind})")
