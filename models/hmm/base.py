"""What both HMM value types share (:mod:`.values`): sizes and kind, memoised derived objects,
value equality and hashing, the float64 range check of float mode, the notebook display, and
the file reader/writer that :mod:`.files` registers for ``HMM.save`` / ``HMM.load``."""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from ..exceptions import InputError, ValidationError
from .conversion import Conversion

__all__ = ["register_file_io"]

_T = TypeVar("_T")
_M = TypeVar("_M", bound="_Sizes")


_FILE_IO: dict[str, Callable] = {}
"""The instance-file writer and reader (``"save"``, ``"load"``), registered by
:mod:`headprompt.models.hmm.files` when it is imported (the package ``headprompt.models.hmm``
imports it), so that :meth:`HMM.save` and :meth:`HMM.load` exist without this module importing
the file layer built on it."""


def register_file_io(*, save: Callable, load: Callable) -> None:
    """Called once by :mod:`headprompt.models.hmm.files` (see :data:`_FILE_IO`)."""
    _FILE_IO.update(save=save, load=load)


def _file_io(name: str) -> Callable:
    return _FILE_IO[name]           # always there: importing this module runs the package's __init__


def _load_as(cls: type, path, exact: bool | None, what: str):
    """The model of type ``cls`` in the instance file ``path`` (``HMM.load``, ``MemoryHMM.load``):
    ``exact`` None reads it as the kind the file holds; ``what`` names the type ("an HMM").

    Raises:
        InputError: a bad path or ``exact``, an unreadable or invalid file, or a model of
            another type."""
    from .reading import _check_exact_flag, check_path

    if exact is not None:
        _check_exact_flag(exact)
    model = _file_io("load")(check_path(path), exact=exact)
    if not isinstance(model, cls):
        raise InputError(f"{path}: holds a {type(model).__name__}, not {what}")
    return model


class _Sizes:
    """Sizes and kind shared by both model types (``A`` is ``|H| x |H|``, ``W`` starts with ``|X|``)."""

    A: np.ndarray
    W: np.ndarray
    _VANILLA = False            # True on HMM: the kind enters the hash (a number, the same in every process)

    @property
    def exact(self) -> bool:
        return self.A.dtype == object

    @property
    def num_states(self) -> int:
        return self.A.shape[0]

    @property
    def num_tokens(self) -> int:
        return self.W.shape[0]

    def _repr_html_(self) -> str:
        """Notebook display: the sizes, and for small models (``|H| <= 8``) the matrices, exact
        entries shown as fractions (``A`` columns are ``h_{i-1}``, rows ``h_i``)."""
        from html import escape

        def table(name: str, arr) -> str:
            arr = np.atleast_2d(np.asarray(arr, dtype=object))
            body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in arr)
            return f"<table><caption>{escape(name)}</caption>{body}</table>"

        parts = [f"<b>{escape(repr(self))}</b>"]
        if self.num_states <= 8 and self.num_tokens <= 12 and self.W.ndim == 2:
            parts += [table("A", self.A), table("W", self.W), table("pi0", self.pi0)]
            if getattr(self, "mu", None) is not None:
                parts.append(table("mu", self.mu))
        return "<div>" + "".join(parts) + "</div>"

    def hidden_marginal_1(self) -> np.ndarray:
        """``P[H_1] = A pi0``, shape ``(|H|,)`` (SPEC section 1): the prior of the first emitting
        state (for a memory HMM, of the syntax chain). Exact for an exact model; a fresh array."""
        return self.A.dot(self.pi0)

    @property
    def conversion(self) -> Conversion | None:
        """How this model was made from another library's fit or from a float model
        (:class:`~.conversion.Conversion`: the source, the start reading of ``pi0`` with every
        other reading, the renormalisation, the entries ``rationalize`` pruned to 0); None for a
        model built directly. Not part of the model's value (``==`` and ``hash`` ignore it);
        kept by ``with_task``, ``to_float``, ``to_exact`` and pickling, not by
        ``dataclasses.replace``."""
        return self._cache.get("conversion")

    def with_conversion(self: _M, record: Conversion | None) -> _M:
        """This model, carrying ``record`` as its :attr:`conversion` (set once, by the conversion
        that made the model: ``from_hmmlearn``, ``from_dynamax``, ``rationalize``).

        Raises:
            ValidationError: ``record`` not a :class:`~.conversion.Conversion` or None, or a
                model that already carries another record.
        """
        if record is None:
            return self
        if not isinstance(record, Conversion):
            raise ValidationError(f"conversion: expected a Conversion record or None, found {type(record).__name__}")
        held = self._cache.get("conversion")
        if held is not None and held != record:
            raise ValidationError("conversion: this model already carries a conversion record")
        self._cache["conversion"] = record
        return self

    def memo(self, key: str, build: Callable[[], _T]) -> _T:
        """The object derived from this (immutable) model under ``key``, built once by
        ``build()`` and kept with the model; modules store their derived objects here instead
        of reaching into the model's fields."""
        cache = self._cache
        if key not in cache:
            cache[key] = build()
        return cache[key]

    def _value_fields(self) -> tuple:
        raise NotImplementedError

    def check_task_range(self) -> None:
        """Refuse, for a theorem check in any mode, task weights beyond float64's range (``3e500``):
        see :func:`~headprompt.models.hmm.arrays._check_task_range`.

        Raises:
            ValidationError: naming the entry and the way out (scale ``mu`` down).
        """
        from .arrays import _check_task_range

        mu = getattr(self, "mu", None)
        if self.exact and isinstance(mu, np.ndarray):
            _check_task_range(mu)

    def check_float64(self, *, hint: str = "use --mode exact or certified, which read it exactly") -> None:
        """Refuse, for float arithmetic, an exact model holding a value float64 cannot hold: a task
        weight beyond its range (``3e500``) or a nonzero entry that would become 0 (``1e-400``).

        Raises:
            ValidationError: naming the parameter entry and ``hint``.
        """
        from .rational import float64_array

        if not self.exact:
            return
        for name in self._FLOAT_CHECKED:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                float64_array(value, name, hint=hint)

    def __eq__(self, other: object) -> bool:
        """Equal when of the same type and kind (exact or float) with equal sizes and entries
        (exact entries compared exactly); never raises."""
        if type(other) is not type(self):
            return NotImplemented
        if self is other:
            return True
        if self.exact != other.exact:
            return False
        for a, b in zip(self._value_fields(), other._value_fields()):
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if a is None or b is None or a.shape != b.shape or not bool(np.all(a == b)):
                    return False
            elif a != b:
                return False
        return True

    def __hash__(self) -> int:
        """A hash over the kind, sizes and every entry (consistent with ``==``), memoised. Only
        numbers enter it (no strings, no None), so it is the same in every process and a
        pickled model's memoised hash stays valid."""
        def build() -> int:
            parts = [self._VANILLA, self.exact]
            for v in self._value_fields():
                parts.append((0,) if v is None else
                             (v.shape, tuple(v.flat)) if isinstance(v, np.ndarray) else v)
            return hash(tuple(parts))
        return self.memo("hash", build)
