"""Which path a ``verify theorem 3.3|3.6`` run takes: the dense path (every entry of ``A`` and
``W`` as a Fraction, :mod:`headprompt.verify.reports.vanilla`) or the large path (the sparse exact
form, :mod:`headprompt.verify.reports.scale`), priced from shapes and nonzeros before any
checking, with the rates of :mod:`headprompt.verify.runtime.cost` (the one place rates live; this
module holds the choice and the two paths' prices, no rate of its own).

- :func:`dense_path_estimate` ``(hidden, vocab, nnz_A, sequences, length)``: the dense path's
  seconds and bytes;
- the large path is priced by :func:`~headprompt.verify.runtime.cost.large_estimate` (with the
  large path's kernel choice, which lives in ``verify.reports.scale.estimate``) plus
  :func:`large_fallback_seconds`;
- :func:`choose_path` ``(dense, large, dense_blocked=, large_blocked=)``: the cheaper path that
  can decide (:data:`PATH_PREFERENCE`), and why; ``verify.reports.scale.path_for`` asks it for
  every input kind (``.npz`` and JSON files, HMM objects, generated sizes) and the report's
  ``"path"`` entry says which and why;
- :func:`model_counts` ``(model)``: ``(|H|, |X|, nnz(A), nnz(W))`` of an in-memory HMM (a JSON
  file once read, or a Python object), the same counts ``npz_counts`` reads from a file's headers.

Nothing here imports the rest of ``verify`` (the floor below the checks; docs/architecture.md).
"""

from __future__ import annotations

from . import cost              # the rates and limits, read at each call (so a patched rate is seen)

__all__ = ["choose_path", "dense_path_estimate", "large_fallback_seconds", "exact_step_seconds", "model_counts",
           "PATH_PREFERENCE", "FALLBACK_SHARE"]

PATH_PREFERENCE = 1.5
"""Where both paths can decide a run, the dense path (whose report also carries the robustness
block, certificates and witness files) is kept unless the large path is predicted at least this
many times faster; below 2, so that no size is more than 2x slower than its neighbour where the
choice changes."""

FALLBACK_SHARE = 0.002
"""The share of sequences assumed to go to exact arithmetic (ties ``mu . p = 0`` exactly, which
no float bound decides): unknown before any work, so both paths are priced with the same share
and it moves both estimates alike where both step over the nonzeros (measured on the boundary
families, ``benchmarks/results/boundary/``: none of 10,200 on the blocked and dense ones, 18-21%
on the sparse one, whose identity emissions make exact ties common). Low, because the large
path's exact step runs over every nonzero in Python integers: with a dense ``A`` a larger share
priced it far above its measured time (44 s predicted, 4.6 s CPU measured at 373 states) and
moved the switch past the real crossover (a 5x step at 372 -> 373 with 5%)."""


def exact_step_seconds(states: int, nnz_A: int) -> float:
    """Seconds of one exact backward step of the dense path: over the nonzeros of a sparse ``A``
    (density at most ``models.inference.exact.SPARSE_STEP_DENSITY``), else one dense integer
    product (the large path always steps over the nonzeros: :func:`large_fallback_seconds`)."""
    from ...models.inference.exact import SPARSE_STEP_DENSITY

    if nnz_A <= SPARSE_STEP_DENSITY * states * states:
        return cost._STEP_RATE * (nnz_A + states)
    return cost._FLINT_STEP_RATE * states * states


def dense_path_estimate(hidden: int, vocab: int, nnz_A: int, sequences: int, length: int, *,
                        read: bool = True, near_tie_work: int = 0, exact: bool = False,
                        nnz_W: int | None = None, exact_bits: int = 64) -> dict:
    """``{"seconds", "bytes"}`` of a dense-path certified run (:mod:`headprompt.verify.reports.vanilla`)
    from shapes alone: every entry of ``A`` and ``W`` as a Fraction (``read``: read from a file;
    an in-memory model is priced without its reading), the checks in exact arithmetic where
    ``exact`` (a small run that :func:`~headprompt.verify.runtime.cost.check_work` keeps exact;
    ``nnz_W`` and ``exact_bits``, the bits of ``A``'s and ``W``'s common denominators, price it),
    the exact near-tie search
    (``near_tie_work`` multiply-adds, as ``verify.evidence.sequences.near_tie_reach`` counts them), the float
    kernel over ``sequences`` sequences of ``length`` tokens, the exact margins of
    ``_MARGIN_SEQUENCES`` of them, and the
    exact redo of :data:`FALLBACK_SHARE` of the sequences twice (the check and the robustness
    block)."""
    entries = hidden * hidden + vocab * hidden
    checked = sequences + (vocab + vocab * vocab if vocab * vocab <= 10_000 else 0)    # and those of length <= 2
    kernel = cost._FLOAT_RATE * checked * length * cost._units_of(hidden, nnz_A) * (1 + length / 64)
    if exact:                                                # kept in exact arithmetic (cost.stays_exact)
        row = (hidden * vocab if nnz_W is None else nnz_W) / max(vocab, 1)
        kernel = cost._EXACT_SMALL_RATE * checked * length * (nnz_A + hidden) * row * exact_bits
    margins = cost._MARGIN_SEQUENCES * length * cost._BITS_STEP_RATE * (nnz_A + hidden) * hidden
    redo = 0.0 if exact else 2 * FALLBACK_SHARE * sequences * length * exact_step_seconds(hidden, nnz_A)
    per_entry = cost._DENSE_ENTRY_RATE + (cost._DENSE_READ_RATE if read else 0.0)
    seconds = (cost._DENSE_FIXED + cost._DENSE_SEQUENCE_RATE * checked + per_entry * entries
               + cost._NEAR_TIE_RATE * near_tie_work + kernel + margins + redo)
    return {"seconds": round(seconds, 1), "bytes": int(cost._DENSE_ENTRY_BYTES * entries + 200 * 2 ** 20)}


def large_fallback_seconds(sequences: int, length: int, nnz_A: int, states: int) -> float:
    """The large path's exact redo of :data:`FALLBACK_SHARE` of ``sequences`` (over the nonzeros
    of ``A``, whatever its density), to price it like the dense path's."""
    return FALLBACK_SHARE * sequences * length * cost._STEP_RATE * (nnz_A + states)


def choose_path(dense: dict | None, large: dict | None, *, dense_blocked: str | None = None,
                large_blocked: str | None = None) -> dict:
    """Which path runs: ``dense`` and ``large`` are the two estimates (``{"seconds", "bytes"}``),
    ``*_blocked`` the reason a path cannot decide this request (None when it can).

    Returns ``{"chosen": "dense" | "large", "why", "seconds", "estimates"}``: the cheaper path
    that can decide, the dense one unless the large one is :data:`PATH_PREFERENCE` times faster
    or the dense one is over :data:`MAX_SECONDS` or its memory over :data:`MAX_LARGE_BYTES`.

    >>> choose_path({"seconds": 40.0, "bytes": 0}, {"seconds": 10.0, "bytes": 0})["chosen"]
    'large'
    >>> choose_path({"seconds": 40.0, "bytes": 0}, {"seconds": 10.0, "bytes": 0}, large_blocked="--witness")["chosen"]
    'dense'
    """
    est = {"dense": dense, "large": large}
    if large_blocked is not None or large is None:
        chosen = "dense"
        why = f"the large path cannot decide this request ({large_blocked})" if large_blocked else "the dense path"
    elif dense_blocked is not None or dense is None:
        chosen = "large"
        why = f"the dense path cannot decide this request ({dense_blocked})" if dense_blocked else "the large path"
    else:
        over = dense["seconds"] > cost.MAX_SECONDS or dense["bytes"] > cost.MAX_LARGE_BYTES
        chosen = "large" if over or large["seconds"] * PATH_PREFERENCE < dense["seconds"] else "dense"
        why = (f"predicted {large['seconds']:.0f} s on the large path (sparse exact form) against "
               f"{dense['seconds']:.0f} s on the dense path (Fractions)"
               + ("" if chosen == "large" else f"; the dense path is kept unless the other is "
                                               f"{PATH_PREFERENCE}x faster (its report carries robustness)"))
    return {"chosen": chosen, "why": why, "seconds": (est[chosen] or {}).get("seconds"),
            "estimates": {k: v for k, v in est.items() if v is not None}}


def model_counts(model) -> tuple[int, int, int, int]:
    """``(|H|, |X|, nnz(A), nnz(W))`` of an in-memory vanilla HMM (Fractions or floats): the
    counts :func:`~headprompt.models.hmm.npz_headers.npz_counts` reads from an ``.npz`` file's
    headers, so a JSON file or an object is priced the same way."""
    import numpy as np

    A, W = np.asarray(model.A), np.asarray(model.W)
    return int(A.shape[0]), int(W.shape[0]), int(np.count_nonzero(A)), int(np.count_nonzero(W))
