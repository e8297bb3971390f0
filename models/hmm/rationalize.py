"""The explicit, reported conversion of a float (learned) model into an exact one.

A model learned from data (hmmlearn, a trained network, a JSON file of floats) has no exact
zeros and columns that sum to 1 only up to rounding, so exact mode refuses it and the zero
pattern that Assumption 3.5 reads is empty. :func:`rationalize` makes the exact model the
theorems are checked on, and says how far it moved:

1. The *reference* model ``P`` is the given one with each stochastic column divided exactly by
   its sum (its float entries read as the binary rationals they are); for a float model this
   moves each column by at most ``normalization_gap`` (about ``1e-16``).
2. Entries of ``P`` below ``prune_below`` become exact zeros (a column keeps at least its
   largest entry).
3. A float column that is a float copy of simple fractions (every kept entry within
   ``1e-12`` of a fraction with denominator at most 1000, those fractions summing to exactly 1)
   becomes those fractions. Otherwise the kept entries are rounded to the denominator
   ``max_denominator`` and renormalised exactly, positives kept positive
   (:func:`~.rational.round_to_denominator`). An exact input is only renormalised. The result
   ``Q`` is exact, and every change is measured and reported.

The bound (what an exact verdict on ``Q`` says about ``P``). Write ``tv(v, w) = 1/2 ||v - w||_1``
and, over all columns, ``tv_A = max_h tv(A[:, h], A'[:, h])``, ``tv_W`` likewise (for a memory
HMM over every ``W[:, m, h]``), ``tv_0 = tv(pi0, pi0')`` (plus ``tv(pM, pM')`` for a memory
HMM). The path measures of ``P`` and ``Q`` on ``(H_0, H_1, X_1, ..., H_L, X_L)`` are built by
the same chain of kernels, so swapping one kernel at a time (a hybrid argument; each swap moves
the law by at most the kernel's largest column distance) gives::

    TV(P_path, Q_path) <= delta_L = tv_0 + L (tv_A + tv_W).                          (1)

Every quantity the theorems read is a conditional ``P(Z = z | B)`` of this path measure, with
``B`` an event of positive ``Q``-probability. With ``|P(E) - Q(E)| <= delta_L`` for every event
``E``,

    P(z|B) - Q(z|B) = (P(zB) - Q(zB)) / Q(B) + P(z|B) (Q(B) - P(B)) / Q(B),

so ``|P(z|B) - Q(z|B)| <= 2 delta_L / Q(B)``; probabilities lie in ``[0, 1]``, hence::

    max_z |P(z|B) - Q(z|B)| <= min(1, 2 delta_L / Q(B)).                            (2)

(2) also holds when ``P(B) = 0``: ``P``'s conditional is then the zero vector by SPEC's
convention, and ``Q(B) <= delta_L`` makes the right side at least 1.) It applies to

- the posterior ``P[H_0 | X_{1:T} = x]``: ``L = T``, ``B = {X = x}``, ``Q(B) = Pr_Q(x)``;
- ``G_i(x) = P[X_i | X_{-i} = x_{-i}]``: ``L = T``, ``B = {X_{-i} = x_{-i}}``;
- Theorem 3.3's ``G_1(x')``, ``x' = (∅, x)``: ``L = T + 1``, ``Q(B) = (A' pi0') . beta(x)``;
- Theorem 3.6's ``Gbar_2(ehat(x))`` with a prompt ``u`` in ``[0, 1]^H``: add to both models
  the same coin "accept" at position 1 with probability ``u[H_1]``; then ``Gbar_2`` is the law
  of ``X_2`` given ``B = {accept, X_{3:T+2} = x}``: ``L = T + 2``, ``Q(B) = ||tau_2||_1``.

Pruning makes a bound that is uniform over sequences impossible (a sequence explained only by a
pruned transition has ``Q(B) = 0``), which is why (2) is stated per sequence, with the exact
``Q(B)``. :meth:`Rationalization.conditional_bound` evaluates it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import InputError
from .conversion import Conversion, PrunedEntry
from .values import HMM, MemoryHMM
from .distance import conditional_bound, path_tv
from .rational import format_fraction, round_to_denominator

__all__ = ["Rationalization", "rationalize", "exact_entries", "DEFAULT_PRUNE_BELOW",
           "DEFAULT_MAX_DENOMINATOR"]

DEFAULT_PRUNE_BELOW = 1e-3
DEFAULT_MAX_DENOMINATOR = 10**6
SNAP_DENOMINATOR = 1000
SNAP_TOLERANCE = Fraction(1, 10**12)


def exact_entries(arr: np.ndarray) -> np.ndarray:
    """The exact rational value of every entry (a float is the binary rational it is).

    >>> exact_entries(np.array([0.5, 0.1]))[1] == Fraction(0.1) != Fraction(1, 10)
    True
    """
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = Fraction(v) if not isinstance(v, Fraction) else v
    return out


def _threshold(value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, Decimal, str)):
        raise InputError(f"prune_below: expected a number in [0, 1), found {value!r}")
    try:
        t = Fraction(Decimal(repr(value))) if isinstance(value, float) else Fraction(value)
    except (ValueError, ArithmeticError):
        raise InputError(f"prune_below: expected a number in [0, 1), found {value!r}") from None
    if not 0 <= t < 1:
        raise InputError(f"prune_below: expected a number in [0, 1), found {value!r}")
    return t


@dataclass
class _Columns:
    """Per-matrix accounting while columns are converted."""

    tv: Fraction = Fraction(0)
    entry_change: Fraction = Fraction(0)
    normalization_gap: Fraction = Fraction(0)
    pruned: int = 0
    where: list = field(default_factory=list)          # PrunedEntry of each pruned entry


def _convert(values: np.ndarray, *, axis: int, threshold: Fraction, max_denominator: int | None,
             name: str, acc: _Columns) -> np.ndarray:
    """Prune, round and renormalise every stochastic vector of ``values`` along ``axis``."""
    exact_in = values.dtype == object
    raw = exact_entries(values)
    moved = np.moveaxis(raw, axis, -1)
    out = np.empty(moved.shape, dtype=object)
    for idx in np.ndindex(moved.shape[:-1]):
        p = list(moved[idx])
        total = sum(p, Fraction(0))
        if total <= 0:
            raise InputError(f"{name}: vector {list(idx)} is all zero; it cannot be a distribution")
        ref = [v / total for v in p]
        acc.normalization_gap = max(acc.normalization_gap, abs(1 - total))
        keep = [v >= threshold and v > 0 for v in ref]
        if not any(keep):
            keep[max(range(len(ref)), key=lambda k: ref[k])] = True
        for k, (v, kept) in enumerate(zip(ref, keep)):
            if v > 0 and not kept:
                acc.pruned += 1
                acc.where.append(PrunedEntry(name, tuple(int(i) for i in idx[:axis] + (k,) + idx[axis:]), float(v)))
        snapped = None if exact_in else _snap(ref, keep)
        if snapped is not None:
            q = snapped
        elif exact_in or max_denominator is None:
            kept_total = sum((v for v, k in zip(ref, keep) if k), Fraction(0))
            q = [v / kept_total if k else Fraction(0) for v, k in zip(ref, keep)]
        else:
            floats = np.array([float(v) if k else 0.0 for v, k in zip(ref, keep)])
            q = list(round_to_denominator(floats, max_denominator))
        acc.tv = max(acc.tv, sum((abs(a - b) for a, b in zip(ref, q)), Fraction(0)) / 2)
        acc.entry_change = max(acc.entry_change, max(abs(a - b) for a, b in zip(p, q)))
        out[idx] = q
    return np.moveaxis(out, -1, axis)


def _snap(ref: list, keep: list) -> list | None:
    """The simple fractions a float column stands for, when it is one: every kept entry within
    ``SNAP_TOLERANCE`` of a fraction with denominator at most ``SNAP_DENOMINATOR`` and those
    fractions summing to exactly 1 (a float copy of an exact model, ``1/3`` stored as
    ``0.333...``); None otherwise."""
    out = []
    for v, k in zip(ref, keep):
        if not k:
            out.append(Fraction(0))
            continue
        f = v.limit_denominator(SNAP_DENOMINATOR)
        if abs(f - v) > SNAP_TOLERANCE or f <= 0:
            return None
        out.append(f)
    return out if sum(out) == 1 else None


def _exact_task(mu: np.ndarray | None) -> tuple[np.ndarray | None, Fraction]:
    """``mu`` read as the decimals it prints as (a float ``1.0`` is ``1``), and the change."""
    if mu is None:
        return None, Fraction(0)
    if mu.dtype == object:
        return mu, Fraction(0)
    new = np.empty(mu.shape, dtype=object)          # a vector, or k rows for k classes
    for idx, v in np.ndenumerate(mu):
        new[idx] = Fraction(Decimal(repr(float(v))))
    return new, max(abs(Fraction(float(v)) - new[idx]) for idx, v in np.ndenumerate(mu))


@dataclass(frozen=True)
class Rationalization:
    """An exact model made from a float (or exact) one, with what the change can affect.

    Attributes:
        model: the exact model ``Q`` the theorems are checked on.
        source: the given model.
        prune_below, max_denominator: the settings used.
        pruned: how many positive entries became exact zeros (which ones: ``model.conversion.pruned``,
            :class:`~.conversion.PrunedEntry`).
        max_entry_change: ``max |p - q|`` over every stochastic entry (``p`` as given).
        tv: per parameter (``"start"``, ``"A"``, ``"W"``) the largest column distance
            ``tv(p_ref, q)`` (module docstring; ``"start"`` covers ``pi0`` and, for a memory
            HMM, ``pM``).
        normalization_gap: the largest ``|1 - sum|`` of a given column (float rounding).
        mu_change: the largest change of a task weight (floats read as decimals).
    """

    model: HMM | MemoryHMM
    source: HMM | MemoryHMM = field(repr=False)
    prune_below: Fraction
    max_denominator: int | None
    pruned: int
    max_entry_change: Fraction
    tv: dict
    normalization_gap: Fraction
    mu_change: Fraction

    def path_tv(self, length: int) -> Fraction:
        """``delta_L`` of :func:`path_tv` for this conversion's column distances."""
        return path_tv(self.tv, length)

    def conditional_bound(self, length: int, event_probability: Any) -> Fraction:
        """:func:`conditional_bound` for this conversion's column distances."""
        return conditional_bound(self.tv, length, event_probability)

    def to_dict(self) -> dict:
        """JSON form: exact values as ``"p/q"`` strings, with float readings beside them."""
        def num(v: Fraction) -> dict:
            return {"exact": format_fraction(v), "approx": float(v)}

        return {"prune_below": format_fraction(self.prune_below), "max_denominator": self.max_denominator,
                "pruned_entries": self.pruned, "max_entry_change": num(self.max_entry_change),
                "column_tv": {k: num(v) for k, v in self.tv.items()},
                "normalization_gap": num(self.normalization_gap), "mu_change": num(self.mu_change),
                "bound": ("for a sequence of L emitting positions and any event B with Q(B) > 0, every "
                          "entry of a conditional law given B (posterior, G_i, prompt read-out) differs "
                          "between the given model and the exact one by at most min(1, 2 delta_L / Q(B)), "
                          "delta_L = tv_start + L (tv_A + tv_W)")}

    def describe(self) -> str:
        """One paragraph for people."""
        rounded = (f"rounded to denominator {self.max_denominator} (or snapped to the simple fractions a column "
                   "stands for)" if self.max_denominator is not None else "kept at their exact binary values")
        return (f"rationalized: {self.pruned} entries below {float(self.prune_below):g} pruned to 0, the rest "
                f"{rounded} and renormalised exactly; largest entry "
                f"change {float(self.max_entry_change):.3g}; column distances tv_A = {float(self.tv['A']):.3g}, "
                f"tv_W = {float(self.tv['W']):.3g}, tv_start = {float(self.tv['start']):.3g}. Any posterior or "
                "G_i given an event B of exact probability Q(B) moves by at most 2 (tv_start + L (tv_A + tv_W)) / Q(B).")


def rationalize(model: HMM | MemoryHMM, *, prune_below: Any = DEFAULT_PRUNE_BELOW,
                max_denominator: int | None = DEFAULT_MAX_DENOMINATOR) -> Rationalization:
    """The exact model for a float (learned) one: prune, round, renormalise exactly, and report.

    Args:
        model: an :class:`HMM` or :class:`MemoryHMM`, float or exact.
        prune_below: entries of a column (after exact normalisation) below this become exact
            zeros; 0 prunes nothing. A column keeps at least its largest entry.
        max_denominator: the common denominator float entries are rounded to (positives stay
            at least ``1/max_denominator``); None keeps the exact normalised values. Exact
            entries are never rounded, only renormalised.

    Returns:
        A :class:`Rationalization` holding the exact model and the bound of the module
        docstring.

    >>> h = HMM.create([[0.9995, 0.3], [0.0005, 0.7]], [[0.25, 0.5], [0.75, 0.5]], [0.5, 0.5],
    ...                exact=False)
    >>> r = rationalize(h, prune_below=0.001, max_denominator=100)
    >>> r.model.A[:, 0].tolist(), r.pruned
    ([Fraction(1, 1), Fraction(0, 1)], 1)
    >>> round(float(r.tv["A"]), 9)        # the pruned 0.0005 (floats are binary rationals)
    0.0005

    Raises:
        InputError: a threshold outside ``[0, 1)``, a denominator below 1 or smaller than a
            column's support.
    """
    if not isinstance(model, (HMM, MemoryHMM)):
        raise InputError(f"rationalize: expected an HMM or MemoryHMM, found {type(model).__name__}")
    threshold = _threshold(prune_below)
    if max_denominator is not None and (isinstance(max_denominator, bool) or not isinstance(max_denominator, int)
                                        or max_denominator < 1):
        raise InputError(f"max_denominator: expected a positive integer or None, found {max_denominator!r}")
    acc = {k: _Columns() for k in ("pi0", "pM", "A", "W")}
    conv = lambda arr, name, axis=0: _convert(arr, axis=axis, threshold=threshold,  # noqa: E731
                                              max_denominator=max_denominator, name=name,
                                              acc=acc["pM" if name == "pM_cells" else name])
    mu, mu_change = _exact_task(model.mu)
    A, W, pi0 = conv(model.A, "A"), conv(model.W, "W"), conv(model.pi0, "pi0")
    if isinstance(model, HMM):
        exact = HMM(A, W, pi0, mu)
    elif model.pM_cells is not None:
        cells = conv(model.pM_cells, "pM_cells", axis=1)
        exact = MemoryHMM.create(model.cells, model.memory_values, model.syntax_states, A, W, pi0,
                                 pM_cells=cells, mu=mu, target_cell=model.target_cell)
        ref = exact_entries(model.pM)
        ref = ref / sum(ref, Fraction(0))               # the joint prior: its own distance
        acc["pM"].tv = sum((abs(a - b) for a, b in zip(ref, exact.pM)), Fraction(0)) / 2
    else:
        exact = MemoryHMM(model.cells, model.memory_values, model.syntax_states, A, W, pi0,
                          conv(model.pM, "pM"), mu, model.target_cell)
    where = tuple(e for key in ("A", "W", "pi0", "pM") for e in acc[key].where)
    change = {key: float(acc[key].entry_change) for key in ("A", "W", "pi0", "pM")
              if key != "pM" or not isinstance(model, HMM)}
    before = model.conversion or Conversion(source="model", dtype="exact" if model.exact else str(model.A.dtype))
    exact = exact.with_conversion(before.after_rationalize(change, where))
    return Rationalization(
        model=exact, source=model, prune_below=threshold,
        max_denominator=None if model.exact else max_denominator,
        pruned=sum(a.pruned for a in acc.values()),
        max_entry_change=max(a.entry_change for a in acc.values()),
        tv={"start": acc["pi0"].tv + acc["pM"].tv, "A": acc["A"].tv, "W": acc["W"].tv},
        normalization_gap=max(a.normalization_gap for a in acc.values()), mu_change=mu_change)
