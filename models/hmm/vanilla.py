"""The vanilla HMM (paper Section 3) as an immutable, validated value type (SPEC section 1);
the memory-augmented one is :mod:`.memory`, and both are exported by :mod:`.values`.

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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import ValidationError
from .arrays import (_check_distributions, _check_shape, _check_task_shape, _decimal_array, _float_form,
                     _is_exact, _own_fields, _pointing_to_rationalize, _register, check_model_arrays)
from .base import _file_io, _load_as, _Sizes
from .integer import prior_h1
from .reading import _check_exact_flag, as_array, check_dense_size, check_path

__all__ = ["HMM"]


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
    def from_hmmlearn(cls, model: Any, *, start: str = "auto", pi0: Any = None, mu: Any = None) -> "HMM":
        """A float HMM from a fitted ``hmmlearn.hmm.CategoricalHMM``: ``A = transmat_.T``,
        ``W = emissionprob_.T``, and ``pi0`` from ``startprob_`` (hmmlearn's start law is our
        ``P[H_1] = A pi0``) read as ``start`` (:mod:`headprompt.models.hmm.start_law`):
        ``"auto"`` (default: the most interior ``pi0`` with ``A pi0 = startprob_`` where one
        exists, else the stationary law of ``A``, with a
        :class:`~headprompt.models.hmm.start_law.StartLawWarning`; it never makes a zero of
        ``pi0`` the fit does not have), ``"h1"`` (that ``pi0``, or else the closest in total
        variation), ``"h0"`` (``pi0 = startprob_``) or ``"stationary"``; or ``pi0`` given
        (checked against ``startprob_``). ``model.conversion`` records the reading used, every
        other reading with its ``pi0``, and the renormalisation
        (:class:`~headprompt.models.hmm.conversion.Conversion`). ``to_hmmlearn`` gives back
        ``A``, ``W`` and ``P[H_1]``. float32 and float64 tables whose rows sum to 1 within
        hmmlearn's own tolerance (``np.allclose``) are accepted; a table outside float64's
        ``1e-9`` is renormalised and a
        :class:`~headprompt.models.hmm.learned.RenormalizedWarning` reports how far it moved
        and what that bounds for every posterior.

        Raises:
            InputError: an unfitted model, an unknown ``start``, a ``pi0`` that contradicts
                ``startprob_``, or a bad ``mu``.
        """
        from .learned import hmmlearn_conversion

        A, W, pi0, record = hmmlearn_conversion(model, pi0=pi0, start=start)
        return cls.create(A, W, pi0, mu, exact=False).with_conversion(record)

    @classmethod
    def from_dynamax(cls, params: Any, *, start: str = "auto", pi0: Any = None, mu: Any = None) -> "HMM":
        """A float HMM from dynamax ``CategoricalHMM`` parameters (one emission dimension):
        ``initial.probs`` read as ``start`` exactly like hmmlearn's ``startprob_`` (see
        :meth:`from_hmmlearn`), ``A = transition_matrix.T``, ``W = emissions.probs[:, 0, :].T``;
        see :func:`headprompt.models.hmm.learned.dynamax_conversion`. A float32 fit (dynamax's
        default) is renormalised as in :meth:`from_hmmlearn`, with a ``RenormalizedWarning``;
        ``model.conversion`` records it all."""
        from .learned import dynamax_conversion

        A, W, pi0, record = dynamax_conversion(params, pi0=pi0, start=start)
        return cls.create(A, W, pi0, mu, exact=False).with_conversion(record)

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
    def load(cls, path: Any, *, exact: bool | None = None) -> "HMM":
        """Read an instance file (``.npz`` or JSON, by the extension), validated as any instance:
        by default as the kind of model the file holds (an exact file exactly, a float file,
        as :meth:`save` writes a float model, as float64), so every saved model reloads with
        this call; ``exact=True`` reads every number exactly (decimals as written),
        ``exact=False`` as float64.

        Raises:
            InputError: an unreadable or invalid file (one line naming the problem)."""
        return _load_as(cls, path, exact, "an HMM")

    # memo keys whose objects depend on A, W and pi0 only (never on mu): a model with another
    # task on the same arrays starts with them (models.hmm.integer: "integer", "prior_h1";
    # models.inference.floats: "float_arrays"; models.inference.bounds: "bound_chain"; this
    # module: "transition_support"; base.py: "conversion", the record of how the model was made)
    _TASK_FREE_MEMOS = ("integer", "prior_h1", "float_arrays", "bound_chain", "transition_support", "conversion")

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
        return self.memo("to_float", lambda: HMM(*(_float_form(a) for a in self._value_fields()))
                         .with_conversion(self.conversion))

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
                         for a, name in zip(self._value_fields(), ("A", "W", "pi0", "mu")))
                       ).with_conversion(self.conversion)

    def __repr__(self) -> str:
        kind = "exact" if self.exact else "float"
        return f"HMM(|H|={self.num_states}, |X|={self.num_tokens}, {kind}, task={'yes' if self.mu is not None else 'no'})"
