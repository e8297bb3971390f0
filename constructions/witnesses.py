"""Witnesses: the head and prompt parameters a theorem's construction produces, as plain,
validated data citing the claim they support, and their one serialised form (SPEC section 3).

- :class:`LinearHeadWitness`: Theorem 3.3's head ``b`` (``|X|``; ``k x |X|``, one row per
  class, when ``mu`` has ``k`` rows).
- :class:`PromptWitness`: Theorem 3.6's prompt ``u`` (``|H|``, in ``[0, 1]``) and head ``b``.
- :class:`AttentionWitness`: Theorems 4.3/4.6/C.6's attention head (``q``, ``Theta_K``,
  ``beta``, ``Theta_V``, ``b``; shapes in :mod:`headprompt.models.inference.attention`) and, for 4.6/C.6,
  the lifted prompt ``u``.

Every witness is checked when made: its arrays have consistent shapes, finite entries and one
kind (exact ``Fraction``s, ints read as ``Fraction``s, or float64); prompts lie in ``[0, 1]``.
:meth:`check_against` checks the sizes against a model. :func:`witness_to_dict` and
:func:`witness_from_dict` (and :func:`read_witness` for files) are the one place witnesses are
written and read; the checkers in ``verify/`` never trust the builder.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..models.exceptions import InstanceFileError, WitnessError
from ..models.hmm.values import HMM, MemoryHMM
from ..models.hmm.rational import format_array, shown_exact, to_fraction

__all__ = ["LinearHeadWitness", "PromptWitness", "AttentionWitness", "Witness", "witness_to_dict",
           "witness_from_dict", "read_witness", "THEOREM_PARAMETERS"]

# theorem id -> the parameters its witness file holds (SPEC section 3)
THEOREM_PARAMETERS = {"3.3": ("b",), "3.6": ("u", "b"), "4.3": ("q", "Theta_K", "beta", "Theta_V", "b"),
                      "4.6": ("q", "Theta_K", "beta", "Theta_V", "b", "u"),
                      "C.6": ("q", "Theta_K", "beta", "Theta_V", "b", "u")}


def _parameter(value: Any, name: str, ndim: int) -> np.ndarray:
    """``value`` as a read-only array of one kind: exact (Fractions; ints and exact strings read
    exactly) or float64 (finite). Raises WitnessError naming the parameter."""
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if arr.ndim != ndim:
        raise WitnessError(f"witness {name}: expected a {ndim}-dimensional array, found shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            bad = [int(i) for i in np.argwhere(~np.isfinite(arr))[0]]
            raise WitnessError(f"witness {name}: entry {bad} is {arr[tuple(bad)]}, expected a finite number")
        out = arr.astype(float)
    elif arr.dtype.kind in "iu" or arr.dtype == object:
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            if isinstance(v, (list, tuple)):
                raise WitnessError(f"witness {name}: rows have different lengths")
            try:
                out[idx] = to_fraction(v, name=f"witness {name}{list(idx)}")
            except ValueError as exc:
                raise WitnessError(str(exc)) from None
    else:
        raise WitnessError(f"witness {name}: expected numbers, found dtype {arr.dtype}")
    out = np.array(out, copy=True)
    out.setflags(write=False)
    return out


def _head(value: Any) -> np.ndarray:
    """A vanilla head ``b``: a vector over ``X`` (binary task) or a ``k x |X|`` matrix, one row
    per class (``F(x) = argmax_c b_c . g``, ties to the largest class)."""
    shape = np.shape(np.asarray(value, dtype=object))
    if len(shape) == 2 and shape[0] < 2:
        raise WitnessError(f"witness b: expected a 1-dimensional array (one weight per token) or k >= 2 rows "
                           f"(one per class), found shape {shape}")
    return _parameter(value, "b", 2 if len(shape) == 2 else 1)


def _expect_head(b: np.ndarray, model: HMM) -> None:
    """``b`` is ``(|X|,)`` for a binary task, ``(k, |X|)`` for a ``k``-row task ``mu``."""
    mu = model.mu
    if mu is not None and np.ndim(mu) == 2:
        _expect(b, (mu.shape[0], model.num_tokens), "b", f"one row per class of mu ({mu.shape[0]}), one "
                "weight per token")
    else:
        _expect(b, (model.num_tokens,), "b", "one weight per token")


def _in_unit_interval(u: np.ndarray, name: str = "u") -> None:
    bad = [i for i, v in enumerate(u.flat) if v < 0 or v > 1]
    if bad:
        raise WitnessError(f"witness {name}: entry {bad[0]} is {shown_exact(u.flat[bad[0]])}, expected a value in [0, 1] "
                           "(the prompt is an emission column)")


def _one_kind(*arrays: np.ndarray | None) -> None:
    kinds = {a.dtype == object for a in arrays if a is not None}
    if len(kinds) > 1:
        raise WitnessError("witness: parameters mix exact and float arrays; give them all exactly or all as floats")


def _expect(arr: np.ndarray, shape: tuple, name: str, what: str) -> None:
    if arr.shape != shape:
        raise WitnessError(f"witness {name}: expected shape {shape} ({what}), found {arr.shape}")


class _WitnessBase:
    """Equality by value (``==`` never raises) and the dict form."""

    theorem: str

    def _arrays(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype or not bool(np.all(a == b)):
                    return False
            elif a != b:
                return False
        return True

    def __hash__(self) -> int:
        return hash(tuple((f.name, (v.shape, tuple(v.flat)) if isinstance(v, np.ndarray) else v)
                          for f in fields(self) for v in [getattr(self, f.name)]))

    def as_dict(self) -> dict:
        """``{"theorem": ..., parameter: nested lists of values}`` (SPEC section 3; values as
        stored, see :func:`witness_to_dict` for the JSON form)."""
        out = {"theorem": self.theorem}
        for name in _parameter_names(self):
            out[name] = getattr(self, name).tolist()
        return out


@dataclass(frozen=True, eq=False)
class LinearHeadWitness(_WitnessBase):
    """Theorem 3.3: ``F(x) = 1(b . G_1(x') >= 0)``; ``b`` has length ``|X|``.

    ``left_inverse`` (``W^+``, ``|H| x |X|``) and ``D`` (``|H|``) record the construction's
    intermediate values when it made the witness.

    Raises:
        WitnessError: ``b`` not a nonempty vector of finite numbers.
    """

    b: np.ndarray
    left_inverse: np.ndarray | None = None
    D: np.ndarray | None = None
    theorem: str = "3.3"
    cites: str = "Theorem 3.3, Appendix A: b = mu^T D^-1 W^+, D = diag(P[H_1]/P[H_0])"

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", _head(self.b))
        if self.b.size == 0:
            raise WitnessError("witness b: expected one weight per token, found none")

    def check_against(self, model: HMM) -> None:
        """Sizes against ``model``: ``b`` has ``|X|`` entries (``k x |X|`` for a ``k``-row ``mu``)."""
        _expect_head(self.b, model)


@dataclass(frozen=True, eq=False)
class PromptWitness(_WitnessBase):
    """Theorem 3.6: ``F(x) = 1(b . Gbar_2(u, e(∅), e(x)) >= 0)``; ``u`` over ``H`` in
    ``[0, 1]``, ``b`` over ``X``. ``H_star`` and ``B`` are the sets of Assumption 3.5 the
    construction used (informational).

    Raises:
        WitnessError: non-vectors, non-finite entries, mixed kinds, or ``u`` outside ``[0, 1]``.
    """

    u: np.ndarray
    b: np.ndarray
    H_star: tuple[int, ...] = ()
    B: tuple[int, ...] = ()
    theorem: str = "3.6"
    cites: str = ("Theorem 3.6, Appendix B.1: u = 1_B, c = A(u ⊙ P[H_1]), "
                  "b = mu_H*^T diag(P[H_0]/c)_H* (W_:,H*)^+")

    def __post_init__(self) -> None:
        object.__setattr__(self, "u", _parameter(self.u, "u", 1))
        object.__setattr__(self, "b", _head(self.b))
        _one_kind(self.u, self.b)
        _in_unit_interval(self.u)
        object.__setattr__(self, "H_star", tuple(int(h) for h in self.H_star))
        object.__setattr__(self, "B", tuple(int(h) for h in self.B))

    def check_against(self, model: HMM) -> None:
        """Sizes against ``model``: ``u`` has ``|H|`` entries, ``b`` has ``|X|`` (``k x |X|`` for a
        ``k``-row ``mu``)."""
        _expect(self.u, (model.num_states,), "u", "one entry per hidden state")
        _expect_head(self.b, model)


@dataclass(frozen=True, eq=False)
class AttentionWitness(_WitnessBase):
    """An attention head (eq. 4.1-4.2), optionally with a prompt (Theorems 4.6/C.6).

    Attributes:
        q: ``(|H|+1,)`` query.  Theta_K: ``(|H|+1, |X|)`` keys.  beta: ``(r, |H|+1)`` position
            embeddings for positions 1..r (later positions reuse the last row).
        Theta_V: ``(|M||H|, |X|)``.  b: ``(|M||H|,)``.  u: lifted prompt in ``[0, 1]`` or None.
        H_star, S_star, memory_subset: the sets the construction used (informational).
        notes: deviations from the paper's literal construction, if any.

    Raises:
        WitnessError: inconsistent shapes (``q``, ``Theta_K`` and ``beta`` disagree on
            ``|H|+1``; ``Theta_K`` and ``Theta_V`` on ``|X|``; ``b`` and ``Theta_V`` on
            ``|M||H|``, which must be a multiple of ``|H|``), non-finite entries, mixed kinds,
            or ``u`` outside ``[0, 1]``.
    """

    q: np.ndarray
    Theta_K: np.ndarray
    beta: np.ndarray
    Theta_V: np.ndarray
    b: np.ndarray
    u: np.ndarray | None = None
    theorem: str = "4.3"
    H_star: tuple[int, ...] = ()
    S_star: tuple[int, ...] = ()
    memory_subset: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    cites: str = "Theorem 4.3, Appendix C.1: Lemma C.2 (q, Theta_K, beta = 0), Lemma C.4 (Theta_V, b)"

    def __post_init__(self) -> None:
        for name, ndim in (("q", 1), ("Theta_K", 2), ("beta", 2), ("Theta_V", 2)):
            object.__setattr__(self, name, _parameter(getattr(self, name), name, ndim))
        object.__setattr__(self, "b", _head(self.b))
        if self.u is not None:
            object.__setattr__(self, "u", _parameter(self.u, "u", 1))
            _in_unit_interval(self.u)
        _one_kind(self.q, self.Theta_K, self.beta, self.Theta_V, self.b, self.u)
        k, X = self.Theta_K.shape
        if k < 2 or X < 1:
            raise WitnessError(f"witness Theta_K: expected shape (|H|+1, |X|) with |H|, |X| >= 1, found {self.Theta_K.shape}")
        n = k - 1
        _expect(self.q, (k,), "q", "|H|+1 entries, as Theta_K has rows")
        if self.beta.shape[0] < 1 or self.beta.shape[1] != k:
            raise WitnessError(f"witness beta: expected rows of length {k} (|H|+1), found shape {self.beta.shape}")
        rows = self.Theta_V.shape[0]
        if self.Theta_V.shape[1] != X or rows < n or rows % n:
            raise WitnessError(f"witness Theta_V: expected shape (|M||H|, {X}) with |H| = {n}, found "
                               f"{self.Theta_V.shape}")
        if self.b.ndim == 2:            # k classes: one row per class (F = argmax_c Attn_c)
            _expect(self.b, (max(2, self.b.shape[0]), rows), "b", "k >= 2 rows of |M||H| entries, as Theta_V has rows")
        else:
            _expect(self.b, (rows,), "b", "|M||H| entries, as Theta_V has rows")
        for name in ("H_star", "S_star", "memory_subset"):
            object.__setattr__(self, name, tuple(int(v) for v in getattr(self, name)))
        object.__setattr__(self, "notes", tuple(self.notes))

    def check_against(self, model: MemoryHMM) -> None:
        """Sizes against ``model``: ``|H|``, ``|X|``, ``|M|`` and the lifted prompt length."""
        n, X, M = model.num_states, model.num_tokens, model.memory_values
        _expect(self.q, (n + 1,), "q", "|H|+1 entries")
        _expect(self.Theta_K, (n + 1, X), "Theta_K", "(|H|+1) x |X|")
        _expect(self.Theta_V, (M * n, X), "Theta_V", "|M||H| x |X|")
        if model.mu is not None and np.ndim(model.mu) == 2:
            _expect(self.b, (model.mu.shape[0], M * n), "b", "one row per class of mu, |M||H| entries each")
        else:
            _expect(self.b, (M * n,), "b", "|M||H| entries")
        if self.u is not None:
            L = M ** model.cells * n
            _expect(self.u, (L,), "u", "one entry per lifted state (m_1..m_N, h)")


Witness = LinearHeadWitness | PromptWitness | AttentionWitness


def _parameter_names(witness) -> tuple[str, ...]:
    """The witness's parameters in SPEC order; a prompt ``u`` whenever one is set."""
    names = THEOREM_PARAMETERS.get(witness.theorem, ())
    if getattr(witness, "u", None) is not None and "u" not in names:
        names = names + ("u",)
    return tuple(n for n in names if getattr(witness, n, None) is not None)


def witness_to_dict(witness: Witness, *, extra: bool = False) -> dict:
    """The JSON form of a witness (SPEC section 3): exact values as ``"p/q"`` strings. With
    ``extra``, the informational sets (``H_star``, ``B``, ``S_star``) and ``notes`` too."""
    out: dict = {"theorem": witness.theorem}
    for name in _parameter_names(witness):
        out[name] = format_array(getattr(witness, name))
    if extra:
        for name in ("H_star", "B", "S_star"):
            v = getattr(witness, name, None)
            if v:
                out[name] = list(v)
        if getattr(witness, "notes", ()):
            out["notes"] = list(witness.notes)
    return out


def witness_from_dict(data: Any, theorem: str, model: HMM | MemoryHMM, *, source: str = "witness"
                      ) -> tuple[Witness, list[int] | None]:
    """A witness dict (SPEC section 3, or an instance file holding one under ``"witness"``) as
    a validated witness for ``theorem`` on ``model``, and the optional ``"H_star"`` (flattened
    hidden states) that fixes the set ``R`` of the memory theorems.

    Raises:
        InstanceFileError: not a dict, a witness for another theorem, a missing parameter,
            or a bad ``H_star``; WitnessError (through :class:`InputError`): a parameter's
            shape, type or range, prefixed with ``source``.
    """
    if not isinstance(data, dict):
        raise InstanceFileError(f"{source}: expected a JSON object, found {type(data).__name__}")
    if isinstance(data.get("witness"), dict):                 # an instance file saved with --out
        data = data["witness"]
    if theorem not in THEOREM_PARAMETERS:
        raise InstanceFileError(f"{source}: unknown theorem {theorem!r}")
    if str(data.get("theorem", theorem)) != theorem:
        raise InstanceFileError(f"{source}: witness is for theorem {data.get('theorem')!r}, not {theorem}")
    need = THEOREM_PARAMETERS[theorem]
    for key in need:
        if key not in data:
            raise InstanceFileError(f"{source}: witness for theorem {theorem} needs {key!r}")
    params = {k: data[k] for k in need}
    try:
        if theorem == "3.3":
            witness: Witness = LinearHeadWitness(b=params["b"])
        elif theorem == "3.6":
            witness = PromptWitness(u=params["u"], b=params["b"])
        else:
            witness = AttentionWitness(theorem=theorem, **params)
        witness.check_against(model)
    except WitnessError as exc:
        raise WitnessError(f"{source}: {exc}") from None
    H_star = None
    if "H_star" in data and isinstance(model, MemoryHMM):
        try:
            values = [to_fraction(v) for v in data["H_star"]]
        except (TypeError, ValueError):
            values = [Fraction(1, 2)]
        if any(v.denominator != 1 for v in values):
            raise InstanceFileError(f"{source}: H_star must be a list of hidden-state indices")
        H_star = sorted(int(v) for v in values)
        if any(not 0 <= h < model.num_states for h in H_star):
            raise InstanceFileError(f"{source}: H_star holds a state outside 0..{model.num_states - 1}")
    return witness, H_star


def read_witness(path: str | Path, theorem: str, model: HMM | MemoryHMM) -> tuple[Witness, list[int] | None]:
    """A witness file (SPEC section 3) read exactly; see :func:`witness_from_dict`."""
    from ..models.hmm.files import read_json

    return witness_from_dict(read_json(path), theorem, model, source=str(path))
