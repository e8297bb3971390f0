"""Vanilla and memory-augmented HMMs as immutable, validated value types (SPEC section 1).

An instance is *exact* when its arrays are numpy ``object`` arrays of :class:`Fraction`
(every stochastic column must then sum to exactly 1) and *float* when they are float64
(columns must sum to 1 within ``FLOAT_TOLERANCE``). ``to_float`` converts; ``to_exact`` reads
each float as the decimal it prints as and refuses a model whose columns then miss 1 (it never
moves a model silently: :func:`headprompt.models.hmm.rationalize.rationalize` is the explicit,
reported conversion of a learned model).

Both types are values: ``==`` compares the kind (exact or float), the sizes and every entry
(exactly, for exact models) and never raises; equal models hash alike. Derived objects (the
lifted chain, integer message-passing matrices) are memoised per model through :meth:`memo`.

A model holds private read-only copies of its arrays. Arrays given by a user are copied and
checked in full (shapes, signs, finite entries, columns summing to 1, exactly in exact mode);
arrays taken from another model (:meth:`HMM.with_task`, ``dataclasses.replace``) are the same
read-only objects, already checked, so they are kept as they are and only what is new is
checked. Each array's float64 form is computed once and shared by the models holding it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import InputError, ValidationError
from .limits import FLOAT_TOLERANCE
from .arrays import (_check_distributions, _check_nonnegative, _check_shape, _check_stochastic,
                     _check_task_shape, _decimal_array, _float_form, _is_exact, _own_fields,
                     _pointing_to_rationalize, _register, check_model_arrays)
from .reading import _check_exact_flag, as_array, check_dense_size, check_memory_size, check_path
from .base import _file_io, _Sizes, register_file_io
from .integer import prior_h1

__all__ = ["HMM", "MemoryHMM", "FLOAT_TOLERANCE", "as_array", "register_file_io"]


@dataclass(frozen=True, eq=False)
class HMM(_Sizes):
    """A vanilla HMM (paper Section 3) with an optional linear task ``mu`` (eq. 3.1).

    Attributes:
        A: ``(|H|, |H|)`` column-stochastic, ``A[h2, h1] = Pr(H_i = h2 | H_{i-1} = h1)``.
        W: ``(|X|, |H|)`` column-stochastic, ``W[x, h] = Pr(X_i = x | H_i = h)``.
        pi0: ``(|H|,)`` the distribution of ``H_0`` (which emits nothing).
        mu: ``(|H|,)`` or None; the task is ``F*(x) = 1(mu . P[H_0 | X_{1:T} = x] >= 0)``; or a
            ``k x |H|`` matrix (``k >= 2`` classes), ``F*(x) = argmax_c mu_c . P[H_0 | x]``
            (ties to the largest class; :mod:`headprompt.models.hmm.task`).

    Construct with :meth:`create` from nested lists; the dataclass constructor expects arrays
    already of one kind and validates them (arrays of another model are kept, not checked again).

    Raises:
        ValidationError: wrong shapes, negative or non-finite entries, non-stochastic columns,
            or mixed exact and float arrays.
    """

    A: np.ndarray
    W: np.ndarray
    pi0: np.ndarray
    mu: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @classmethod
    def create(cls, A: Any, W: Any, pi0: Any, mu: Any = None, *, exact: bool = True) -> "HMM":
        """Build from nested lists/arrays, exact (Fractions; floats refused) or float64.

        Sizes are decided first, from the shapes alone: at most
        :data:`~.reading.DENSE_MAX_STATES` hidden states (2,000 exact, 16,384 float) and
        :data:`~.reading.DENSE_MAX_ENTRIES` entries in all (larger models are held sparse, as a
        :class:`~headprompt.models.hmm.large.LargeHMM`); numbers up to 4,000 digits, as in an
        instance file.

        Raises:
            LimitError: a size or number past those limits (before anything is converted);
            ValidationError, InputError: as :func:`~.reading.as_array` and the constructor.
        """
        _check_exact_flag(exact)
        given = {"A": A, "W": W, "pi0": pi0, "mu": mu}
        check_dense_size(given, exact=exact)
        # fresh arrays nobody else holds: the model keeps them (checked in full, not copied again)
        arrays = {k: None if k == "mu" and v is None else _register(as_array(v, exact=exact, name=k))
                  for k, v in given.items()}
        return cls(arrays["A"], arrays["W"], arrays["pi0"], arrays["mu"])

    def __post_init__(self) -> None:
        check_model_arrays(self, ("A", "W", "pi0", "mu"), optional=("mu",))
        arrays = [self.A, self.W, self.pi0] + ([] if self.mu is None else [self.mu])
        if not (_is_exact(*arrays) or all(a.dtype.kind == "f" for a in arrays)):
            raise ValidationError("HMM: arrays must be all exact (Fraction objects) or all "
                                  "float64; convert with HMM.create(..., exact=...)")
        if self.A.ndim != 2 or self.A.shape[0] != self.A.shape[1] or self.A.shape[0] == 0:
            raise ValidationError(f"A: expected a nonempty square matrix (|H| x |H|), found shape "
                                  f"{self.A.shape}")
        n = self.A.shape[0]
        if self.W.ndim != 2 or self.W.shape[0] == 0:
            raise ValidationError(f"W: expected shape (|X|, {n}) (tokens x hidden states), found "
                                  f"{self.W.shape}")
        _check_shape(self.W, (self.W.shape[0], n), "W", "tokens x hidden states")
        _check_shape(self.pi0, (n,), "pi0", "one probability per hidden state")
        if self.mu is not None:
            _check_task_shape(self.mu, n, "one weight per hidden state")
        floats = _check_distributions(self, ("A", "W", "pi0"), self.exact)
        _own_fields(self, ("A", "W", "pi0", "mu"), checked=("A", "W", "pi0"), floats=floats)

    _FLOAT_CHECKED = ("A", "W", "pi0", "mu")
    _VANILLA = True

    def _value_fields(self) -> tuple:
        return (self.A, self.W, self.pi0, self.mu)

    def hidden_marginal_1(self) -> np.ndarray:
        """``P[H_1] = A pi0`` (:meth:`_Sizes.hidden_marginal_1`), exact by one integer product.

        >>> HMM.create([[0, 1], [1, 0]], [[1, 0], [0, 1]], ['1/4', '3/4']).hidden_marginal_1().tolist()
        [Fraction(3, 4), Fraction(1, 4)]
        """
        if self.exact:                  # one integer product, not |H|^2 Fraction operations
            return prior_h1(self).copy()
        return super().hidden_marginal_1()

    @classmethod
    def from_hmmlearn(cls, model: Any, *, start: str = "h1", pi0: Any = None, mu: Any = None) -> "HMM":
        """A float HMM from a fitted ``hmmlearn.hmm.CategoricalHMM``: ``A = transmat_.T``,
        ``W = emissionprob_.T``, and ``pi0`` from ``startprob_`` read as ``start``: ``"h1"``
        (default; hmmlearn's start law is our ``P[H_1] = A pi0``: the exact solution where one
        exists, else the closest in total variation with a
        :class:`~headprompt.models.hmm.learned.StartLawWarning` giving the distance), ``"h0"``
        (``pi0 = startprob_``) or ``"stationary"`` (``pi0`` = the stationary law of ``A``); see
        :mod:`headprompt.models.hmm.learned`. ``to_hmmlearn`` gives back ``A``, ``W`` and ``P[H_1]``.
        float32 and float64 tables whose rows sum to 1 within hmmlearn's own tolerance
        (``np.allclose``) are accepted; a table outside float64's ``1e-9`` is renormalised and a
        :class:`~headprompt.models.hmm.learned.RenormalizedWarning` reports how far it moved
        and what that bounds for every posterior.

        Raises:
            InputError: an unfitted model, an unknown ``start``, a ``pi0`` that contradicts
                ``startprob_``, or a bad ``mu``.
        """
        from .learned import hmmlearn_arrays

        A, W, pi0 = hmmlearn_arrays(model, pi0=pi0, start=start)
        return cls.create(A, W, pi0, mu, exact=False)

    @classmethod
    def from_dynamax(cls, params: Any, *, start: str = "h1", pi0: Any = None, mu: Any = None) -> "HMM":
        """A float HMM from dynamax ``CategoricalHMM`` parameters (one emission dimension):
        ``initial.probs`` read as ``start`` exactly like hmmlearn's ``startprob_`` (see
        :meth:`from_hmmlearn`), ``A = transition_matrix.T``, ``W = emissions.probs[:, 0, :].T``;
        see :func:`headprompt.models.hmm.learned.dynamax_arrays`. A float32 fit (dynamax's
        default) is renormalised as in :meth:`from_hmmlearn`, with a ``RenormalizedWarning``."""
        from .learned import dynamax_arrays

        A, W, pi0 = dynamax_arrays(params, pi0=pi0, start=start)
        return cls.create(A, W, pi0, mu, exact=False)

    def to_dynamax(self) -> tuple[Any, Any]:
        """``(model, params)`` of dynamax with the same law (optional dependency); see
        :func:`headprompt.models.hmm.learned.to_dynamax`."""
        from .learned import to_dynamax

        return to_dynamax(self)

    def to_hmmlearn(self, **kwargs: Any) -> Any:
        """The ``hmmlearn.hmm.CategoricalHMM`` with ``startprob_ = A pi0``, ``transmat_ = A.T``,
        ``emissionprob_ = W.T``; see :func:`headprompt.models.hmm.learned.to_hmmlearn`."""
        from .learned import to_hmmlearn

        return to_hmmlearn(self, **kwargs)

    def save(self, path: Any, *, witness: dict | None = None, meta: dict | None = None) -> None:
        """Write this model as an instance file: ``.npz`` (binary, exact or float, sparse where
        that is smaller) or JSON, by the extension; see :mod:`headprompt.models.hmm.files`.

        Raises:
            InputError: ``path`` not a str or ``pathlib.Path``; a file that cannot be written."""
        _file_io("save")(self, check_path(path), witness=witness, meta=meta)

    @classmethod
    def load(cls, path: Any, *, exact: bool = True) -> "HMM":
        """Read an instance file (``.npz`` or JSON, by the extension), validated as any instance.

        Raises:
            InputError: an unreadable or invalid file (one line naming the problem)."""
        _check_exact_flag(exact)
        model = _file_io("load")(check_path(path), exact=exact)
        if not isinstance(model, cls):
            raise InputError(f"{path}: holds a {type(model).__name__}, not an HMM")
        return model

    # memo keys whose objects depend on A, W and pi0 only (never on mu): a model with another
    # task on the same arrays starts with them (models.hmm.integer: "integer", "prior_h1";
    # models.inference.floats: "float_arrays"; models.inference.bounds: "bound_chain"; this
    # module: "transition_support")
    _TASK_FREE_MEMOS = ("integer", "prior_h1", "float_arrays", "bound_chain", "transition_support")

    def transition_support(self) -> np.ndarray:
        """The boolean ``|H| x |H|`` mask ``A != 0``, decided exactly (memoised): from the
        shared float form (a nonzero float is a nonzero rational) with the float zeros of an
        exact model re-checked exactly (a rational can round to 0.0)."""
        def build() -> np.ndarray:
            floats = np.asarray(self.to_float().A, dtype=float) if self.exact else np.asarray(self.A, dtype=float)
            mask = floats != 0
            if self.exact:
                hidden = np.asarray(self.A, dtype=object)[~mask] != 0      # exact tests, float zeros only
                if hidden.any():
                    mask[~mask] = hidden.astype(bool)
            mask.setflags(write=False)
            return mask
        return self.memo("transition_support", build)

    def with_task(self, mu: Any) -> "HMM":
        """The same HMM with task weights ``mu``: ``mu`` is read and checked (its kind, shape
        and, exact, that every entry is an exact rational); ``A``, ``W`` and ``pi0`` are the
        same (already checked, read-only) arrays, and objects derived from them alone (the
        integer form, float arrays) are shared with this model."""
        derived = HMM(self.A, self.W, self.pi0, as_array(mu, exact=self.exact, name="mu"))
        for key in self._TASK_FREE_MEMOS:
            if key in self._cache:
                derived._cache.setdefault(key, self._cache[key])
        return derived

    def to_float(self) -> "HMM":
        """The float64 form (a no-op for a float HMM); built once per model, and each array's
        float form is shared with the models holding the same array (e.g. after
        :meth:`with_task`)."""
        if not self.exact:
            return self
        return self.memo("to_float", lambda: HMM(*(_float_form(a) for a in self._value_fields())))

    def to_exact(self) -> "HMM":
        """The exact form: each float read as the decimal it prints as (``0.1`` is ``1/10``, as
        in an instance file); a no-op for an exact HMM.

        >>> HMM.create([[0.5, 0.1], [0.5, 0.9]], [[1.0, 0.0], [0.0, 1.0]], [0.3, 0.7],
        ...            exact=False).to_exact().A[:, 1].tolist()
        [Fraction(1, 10), Fraction(9, 10)]

        Raises:
            ExactnessError: a column that then does not sum to exactly 1 (a learned or
                computed model); the message points to the explicit, reported conversion
                ``rationalize(hmm, prune_below=..., max_denominator=...)``. The model is never
                moved silently.
        """
        if self.exact:
            return self
        with _pointing_to_rationalize():
            return HMM(*(None if a is None else _decimal_array(a, name)
                         for a, name in zip(self._value_fields(), ("A", "W", "pi0", "mu"))))

    def __repr__(self) -> str:
        kind = "exact" if self.exact else "float"
        return f"HMM(|H|={self.num_states}, |X|={self.num_tokens}, {kind}, task={'yes' if self.mu is not None else 'no'})"


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
            conv(self.pM), conv(self.mu), self.target_cell, conv(self.pM_cells)))

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
                             conv(self.mu, "mu"), self.target_cell, conv(self.pM_cells, "pM_cells"))

    def __repr__(self) -> str:
        kind = "exact" if self.exact else "float"
        return (f"MemoryHMM(N={self.cells}, |M|={self.memory_values}, |S|={self.syntax_states}, "
                f"|X|={self.num_tokens}, {kind})")
