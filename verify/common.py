"""Helpers shared by the ``verify`` subcommands: argument parsing of sequences and modes."""

from __future__ import annotations

import re

from ..models.exceptions import InputError, InstanceFileError, SequenceError

__all__ = ["parse_sequence", "MODES", "load_task_instance", "settle_verdict"]

MODES = ("exact", "certified", "float")


def parse_sequence(text: str, num_tokens: int) -> list[int]:
    """Tokens from ``"0 3 1 2"`` (spaces or commas).

    Raises:
        SequenceError: empty text, non-integers, or tokens outside ``0..num_tokens-1``.
    """
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if not parts:
        raise SequenceError("--seq: expected tokens such as \"0 3 1 2\", found nothing")
    tokens = []
    for pos, p in enumerate(parts):
        if not re.fullmatch(r"[+-]?\d+", p):
            raise SequenceError(f"--seq: {p!r} at position {pos} is not an integer token")
        z = int(p)
        if not 0 <= z < num_tokens:
            raise SequenceError(f"--seq: token {z} at position {pos} is outside the vocabulary "
                                f"0..{num_tokens - 1}")
        tokens.append(z)
    return tokens


def load_task_instance(path, theorem_id: str, *, memory: bool):
    """An exact instance for a theorem, from a file path or an instance object: the right kind
    (vanilla or memory HMM) with a task.

    Raises:
        InputError: the wrong kind for the theorem, or a float instance object;
        InstanceFileError: no ``mu``.
    """
    from ..models.hmm import HMM, MemoryHMM
    from ..models.instances import load_instance

    if isinstance(path, (HMM, MemoryHMM)):
        model, path = path, "the instance"
        if not model.exact:
            raise InputError("the instance has float entries; theorem checks are exact: convert it "
                             "explicitly first (rationalize=THRESHOLD here, or "
                             "headprompt.models.rationalize.rationalize(model))")
    else:
        model = load_instance(path, exact=True)
    if not isinstance(model, MemoryHMM if memory else HMM):
        found, other = ("hmm", "3.3 or 3.6") if memory else ("memory-hmm", "4.3, 4.6 or C.6")
        raise InputError(f"{path}: Theorem {theorem_id} is about {'memory-augmented' if memory else 'vanilla'} "
                         f"HMMs, found kind {found!r} (use theorem {other})")
    if model.mu is None:
        raise InstanceFileError(f"{path}: the instance has no task vector \"mu\"; add one to check a theorem")
    return model


def settle_verdict(report: dict, *, witness_given: bool, failed: dict, construction_error: str | None) -> dict:
    """Set ``report["verdict"]`` (SPEC section 4) and return the failed assumptions.

    A user's witness is judged alone (``verified`` or ``refuted``); otherwise a failed
    assumption or a construction that could not be built gives ``assumptions-fail`` (the
    construction error then counts as the failure when no assumption check failed)."""
    if witness_given or not (failed or construction_error):
        report["verdict"] = "refuted" if report["counterexample"] else "verified"
        return failed
    report["verdict"] = "assumptions-fail"
    if construction_error and not failed:
        failed = {"construction": {"holds": False, "why": construction_error}}
    report["failed"] = sorted(failed)
    return failed
