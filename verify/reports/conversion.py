"""A conversion never decides a verdict silently (SPEC section 5).

A model made from another library's fit (``HMM.from_hmmlearn``, ``HMM.from_dynamax``) or made
exact by :func:`~headprompt.models.hmm.rationalize.rationalize` carries ``model.conversion``
(:class:`~headprompt.models.hmm.conversion.Conversion`). Three of its choices can make an
assumption fail that the source model satisfies:

- the *start reading*: which ``pi0 = P[H_0]`` the fitted start law stands for (a reading at a
  vertex of the simplex invents zeros of ``P[H_0]``, and Assumption 3.2 reads ``P[H_0] > 0``);
- *pruning*: ``rationalize`` makes entries below its threshold exact zeros (a pruned transition
  can break 3.2's support graph, a pruned emission 3.1's rank or 3.5's reach);
- *renormalisation* of a float32 fit (it moves entries, never their support, so it cannot
  change an assumption that reads supports; its size is reported with the record).

:func:`judge_conversion` re-judges every failed assumption on the source under each of its
other readings (each start reading, rationalized as the checked model was; the fitted support,
nothing pruned) with the same exact checks, and says which choice decided a failure. Where a
reading satisfies every assumption, the theorem's verdict under it is computed too (by the
caller's ``rerun``), so the report gives the verdict under the other readings.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from ...models.hmm.rationalize import rationalize
from ...models.hmm.values import HMM
from ..checks.registry import check_assumptions

__all__ = ["judge_conversion", "RERUN_MAX_STATES"]

RERUN_MAX_STATES = 200
"""Above this many hidden states the verdict under another reading is not recomputed (its
assumptions are; the report says how to check that reading)."""

_READS = {"3.1": ("W",), "3.2": ("A", "pi0"), "3.5": ("W", "A", "pi0"), "4.2": ("W",), "4.4": ("A", "pi0"),
          "4.5": ("W", "A", "pi0"), "C.5": ("W", "A", "pi0")}
"""Which tables each assumption reads (a pruned entry of another table cannot decide it)."""


def _failed(results: dict) -> list[str]:
    return sorted(k for k, v in results.items() if not v.get("holds", True))


def _source_model(args) -> Any:
    """The model before any conversion the check made: the given object, or the file read
    exactly when it is exact, else as floats."""
    given = getattr(args, "model", None)
    if given is not None:
        return given
    from .rationalized import _load_either

    return _load_either(args.hmm)


def _as_checked(source, prune_below) -> Any:
    """``source`` made exact the way the checked model was (the same pruning threshold)."""
    if getattr(source, "exact", True):
        return source
    return rationalize(source, prune_below=0 if prune_below is None else prune_below).model


def judge_conversion(args, theorem_id: str, model, results: dict,
                     rerun: Callable[[Any], dict] | None = None) -> dict | None:
    """The ``"conversion"`` block of a report, or None for a model built directly.

    ``{"record": model.conversion.to_dict(), "decided": bool, "readings": [...], "note": str}``:
    ``readings`` lists, for each other reading of the source, the assumptions that fail under
    it (exact checks, as on the checked model) and, where none does and the model is small, the
    theorem's ``verdict`` under it. ``decided`` is true when an assumption that fails on the
    checked model holds under some reading: the conversion, not the source, decided it; then
    each such assumption's ``why`` in ``results`` is extended to say so (in place).
    """
    conv = getattr(model, "conversion", None)
    if conv is None:
        return None
    block: dict = {"record": conv.to_dict(), "decided": False, "readings": []}
    failed = _failed(results)
    if not failed or getattr(args, "_conversion_rerun", False):
        return block
    source = _source_model(args)
    prune = getattr(args, "rationalize", None)
    alternatives: list[tuple[str, Any, str]] = []       # (name, exact model, how to get it)
    if conv.start is not None and isinstance(source, HMM):
        for r in conv.alternatives:
            alt = HMM.create(source.A, source.W, list(r.pi0), source.mu, exact=False)
            alternatives.append((f"start={r.reading!r}", _as_checked(alt, prune),
                                 f"HMM.from_{conv.source}(fit, start={r.reading!r})"))
    if conv.pruned:
        kept = rationalize(source, prune_below=0).model if not getattr(source, "exact", True) else source
        alternatives.append(("nothing pruned", kept, "rationalize=0 (rounds, prunes nothing)"))
    decided: dict[str, list[str]] = {}
    for name, alt, how in alternatives:
        alt_results = check_assumptions(alt, theorem_id)
        for v in alt_results.values():
            v.pop("_sets", None)
        alt_failed = _failed(alt_results)
        entry = {"reading": name, "failed": alt_failed, "how": how}
        for k in failed:
            if k not in alt_failed:
                decided.setdefault(k, []).append(name)
        if not alt_failed:
            if rerun is not None and alt.num_states <= RERUN_MAX_STATES:
                sub = copy.copy(args)          # the request as validated, with the other model
                for key, value in dict(model=alt, hmm=None, rationalize=None, out=None, certificate=None,
                                       progress=False, _conversion_rerun=True).items():
                    object.__setattr__(sub, key, value)
                entry["verdict"] = rerun(sub)["verdict"]
            else:
                entry["verdict"] = None
                entry["note"] = f"every assumption holds; check it with {how}"
        block["readings"].append(entry)
    if decided:
        block["decided"] = True
        for k, names in decided.items():
            pruned = [p for p in conv.pruned if p.matrix in _READS.get(k, ())]
            made = []
            if any(n.startswith("start=") for n in names):
                made.append(f"the start reading start={conv.start!r}")
            if "nothing pruned" in names and pruned:
                made.append("rationalize's pruning of " + ", ".join(
                    f"{p.matrix}{list(p.index)} (was {p.value:.3g})" for p in pruned[:6])
                    + (" ..." if len(pruned) > 6 else ""))
            results[k]["why"] += (f"; made by the conversion ({' and '.join(made) or 'its readings'}), not by the "
                                  f"source model: under {', '.join(names)} it holds")
        block["note"] = ("the conversion decides this verdict: " + "; ".join(
            f"{k} fails as converted but holds under {', '.join(n)}" for k, n in sorted(decided.items())))
    return block
