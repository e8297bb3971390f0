"""The record of how a model was made from another library's fit or from a float model
(``model.conversion``): plain data, so that a verdict can say when a conversion, not the
source model, decides it (SPEC section 5: "a conversion never decides a verdict silently").

A conversion can change what the assumptions read in three ways, each recorded here:

- the *start reading* (:mod:`.start_law`): which ``pi0 = P[H_0]`` a fitted start law (our
  ``P[H_1] = A pi0``) stands for; every reading is kept with its ``pi0``, so Assumption 3.2's
  "``P[H_0]`` has full support" can be judged under each;
- the *renormalisation* of a fit whose columns miss 1 by more than float64's tolerance (a
  float32 fit): the largest change of an entry, per matrix;
- :func:`~.rationalize.rationalize`: every positive entry pruned to an exact 0 (which matrix,
  which entry, its value before), since a pruned entry can break 3.2 (a transition) or 3.5
  (a support).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

__all__ = ["Conversion", "StartReading", "PrunedEntry"]


@dataclass(frozen=True)
class StartReading:
    """One reading of a fitted start law as ``pi0`` (:mod:`.start_law`).

    Attributes:
        reading: ``"h1"`` (``A pi0`` is the start law, or the closest such ``pi0``), ``"h0"``
            (``pi0`` is the start law), ``"stationary"`` (``pi0 = A pi0``) or ``"given"`` (the
            ``pi0=`` argument).
        pi0: ``(|H|,)`` float64 entries of that ``pi0``.
        distance: ``TV(A pi0, start law)``: 0 (up to rounding) when ``A pi0`` reproduces the
            start law, as SPEC's reading of it as ``P[H_1]`` asks.
        zeros: the states ``h`` with ``pi0[h] = 0`` (Assumption 3.2 needs none).
    """

    reading: str
    pi0: tuple[float, ...]
    distance: float
    zeros: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"reading": self.reading, "pi0": list(self.pi0), "distance": self.distance,
                "zeros": list(self.zeros)}


@dataclass(frozen=True)
class PrunedEntry:
    """A positive entry that :func:`~.rationalize.rationalize` made an exact 0.

    Attributes:
        matrix: ``"A"``, ``"W"``, ``"pi0"``, ``"pM"`` or ``"pM_cells"``.
        index: the entry's index in that array (``A[to, from]``: ``(to, from)``).
        value: the entry before pruning (its column normalised exactly), as a float.
    """

    matrix: str
    index: tuple[int, ...]
    value: float

    def to_dict(self) -> dict:
        return {"matrix": self.matrix, "index": list(self.index), "value": self.value}


@dataclass(frozen=True)
class Conversion:
    """How a model was made (``model.conversion``; None for a model built directly).

    Attributes:
        source: ``"hmmlearn"`` or ``"dynamax"`` (``HMM.from_hmmlearn`` / ``from_dynamax``), or
            ``"model"`` when :func:`~.rationalize.rationalize` was the only conversion.
        dtype: the dtype of the source's tables (``"float32"``, ``"float64"``; ``"exact"``).
        start: the start reading used for ``pi0`` (``"h1"``, ``"h0"``, ``"stationary"`` or
            ``"given"``), None when no start law was read.
        start_requested: the ``start=`` asked for (``"auto"`` by default), None likewise.
        readings: every reading of the start law (:class:`StartReading`), the one used
            included; empty when none was read.
        renormalized: per matrix (``"start"``, ``"A"``, ``"W"``) the largest change of one
            entry made by dividing the fitted columns by their sums (0.0 where a table was kept
            as given).
        rationalized: whether :func:`~.rationalize.rationalize` made the model exact.
        rationalization_change: per matrix (``"A"``, ``"W"``, ``"pi0"``, ``"pM"``) the largest
            change of one entry made by ``rationalize`` (float), empty when not rationalized.
        pruned: the entries ``rationalize`` pruned to 0 (:class:`PrunedEntry`), in the order
            ``A``, ``W``, ``pi0``, then ``pM`` or ``pM_cells``.
    """

    source: str
    dtype: str = "float64"
    start: str | None = None
    start_requested: str | None = None
    readings: tuple[StartReading, ...] = ()
    renormalized: dict = field(default_factory=dict)
    rationalized: bool = False
    rationalization_change: dict = field(default_factory=dict)
    pruned: tuple[PrunedEntry, ...] = ()

    def reading(self, name: str) -> StartReading | None:
        """The start reading ``name`` (``"h1"``, ``"h0"``, ``"stationary"``, ``"given"``), or None."""
        return next((r for r in self.readings if r.reading == name), None)

    @property
    def alternatives(self) -> tuple[StartReading, ...]:
        """The start readings other than the one used (a verdict can be judged under each)."""
        return tuple(r for r in self.readings if r.reading != self.start)

    def pruned_in(self, matrix: str) -> tuple[PrunedEntry, ...]:
        """The pruned entries of one matrix (``"A"``: transitions that Assumption 3.2 reads)."""
        return tuple(p for p in self.pruned if p.matrix == matrix)

    def after_rationalize(self, change: dict, pruned: tuple[PrunedEntry, ...]) -> "Conversion":
        """This record, extended by a :func:`~.rationalize.rationalize` step."""
        return replace(self, rationalized=True, rationalization_change=dict(change), pruned=tuple(pruned))

    def to_dict(self) -> dict:
        """JSON form (plain lists, floats and strings)."""
        return {"source": self.source, "dtype": self.dtype,
                "start": None if self.start is None else {
                    "used": self.start, "requested": self.start_requested,
                    "readings": [r.to_dict() for r in self.readings]},
                "renormalized": dict(self.renormalized), "rationalized": self.rationalized,
                "rationalization_change": dict(self.rationalization_change),
                "pruned": [p.to_dict() for p in self.pruned]}

    def describe(self) -> str:
        """One line for people: the source, the start reading and what moved."""
        parts = [f"converted from {self.source} ({self.dtype})"]
        if self.start is not None:
            used = self.reading(self.start)
            others = ", ".join(f"{r.reading}: zeros at {list(r.zeros)}" if r.zeros else f"{r.reading}: no zero"
                               for r in self.alternatives)
            parts.append(f"pi0 read as start={self.start!r}"
                         + (f" (asked {self.start_requested!r})" if self.start_requested != self.start else "")
                         + (f", zeros at {list(used.zeros)}" if used and used.zeros else "")
                         + (f"; other readings: {others}" if others else ""))
        moved = {k: v for k, v in self.renormalized.items() if v}
        if moved:
            parts.append("renormalised (largest entry change " + ", ".join(f"{k} {v:.2g}" for k, v in moved.items())
                         + ")")
        if self.rationalized:
            parts.append(f"rationalized, {len(self.pruned)} entries pruned to 0"
                         + (": " + ", ".join(f"{p.matrix}{list(p.index)}" for p in self.pruned[:6])
                            + (" ..." if len(self.pruned) > 6 else "") if self.pruned else ""))
        return "; ".join(parts)

