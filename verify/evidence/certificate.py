"""Write the certificate of a ``verify theorem`` verdict (``--certificate FILE``), for
:mod:`headprompt.certcheck` to re-derive with the standard library alone.

Format: docs/certificates.md (field by field). Theorems 3.3 and 3.6 with a binary task are
covered: a verified verdict whose identity holds covers every sequence (``covers:
"identity"``, with up to :data:`MAX_LISTED` sequences listed as spot checks); otherwise the
claim is about the listed sequences (``covers: "listed"``: all checked ones when at most
:data:`MAX_LISTED`, else the first :data:`MAX_LISTED`, and the certificate says so). A refuted
verdict lists the disagreeing sequence; a failed Assumption 3.1 (or a prompt family) carries
its Motzkin certificates. Theorems 4.3, 4.6 and C.6 (binary task) list sequences with their
membership in ``R``, both margins and the attended positions (``covers: "listed"`` only).
"""

from __future__ import annotations

import json
from fractions import Fraction

from ...models.exceptions import InputError
from ...models.hmm.rational import format_array, format_fraction
from ...models.hmm.task import is_multiclass
from ...models.hmm.integer import head_weights
from ..theorems.vanilla.check import margins_direct, read_position_prior

__all__ = ["build_certificate", "write_certificate", "check_certificate_request", "MAX_LISTED",
           "CERTIFIED_THEOREMS"]

MAX_LISTED = 200
"""Most sequences a certificate lists (each recomputed by the checker, about 1 ms per state)."""

CERTIFIED_THEOREMS = ("3.3", "3.6", "4.3", "4.6", "C.6")
MEMORY_THEOREMS = ("4.3", "4.6", "C.6")


def check_certificate_request(theorem: str, mode: str | None, classes) -> None:
    """Refuse, before any work, a certificate this format cannot express.

    Raises:
        InputError: an unknown theorem, a multiclass task or float mode.
    """
    if theorem not in CERTIFIED_THEOREMS:
        raise InputError(f"--certificate: certificates cover Theorems {', '.join(CERTIFIED_THEOREMS)}; "
                         f"found {theorem!r}")
    if mode == "float":
        raise InputError("--certificate: a float run proves nothing to certify; use --mode exact")
    if classes:
        raise InputError("--certificate: certificates cover binary tasks; leave out --classes")


def _fr(v) -> str:
    return format_fraction(Fraction(v))


def build_certificate(report) -> dict:
    """The certificate (a JSON-ready dict) of a :class:`~headprompt.verify.api.TheoremReport`.

    Raises:
        InputError: a report this format cannot express (multiclass, float, a memory theorem,
            or an assumption failure without a Motzkin certificate).
    """
    data, details = report.data, report.details
    tid = data["theorem"]
    model = details.get("model")
    check_certificate_request(tid, data.get("mode"), None)
    if model is None or is_multiclass(model.mu):
        raise InputError("--certificate: certificates cover binary tasks")
    if tid in MEMORY_THEOREMS:
        return _memory_certificate(data, details, model)
    cert = {"format": "headprompt-certificate", "version": 1, "theorem": tid, "verdict": data["verdict"],
            "instance": {"A": [[_fr(v) for v in row] for row in model.A],
                         "W": [[_fr(v) for v in row] for row in model.W],
                         "pi0": [_fr(v) for v in model.pi0], "mu": [_fr(v) for v in model.mu]}}
    if data["verdict"] == "assumptions-fail":
        ev = data.get("counterexample") or {}
        certs = ([ev] if ev.get("kind") == "no-linear-head" else
                 [c for c in ev.get("certificates", []) if c.get("kind") == "no-linear-head"])
        if not certs:
            raise InputError(f"--certificate: the failed assumption's evidence ({ev.get('kind')}) is not a "
                             "Motzkin certificate, so there is nothing the checker can re-derive")
        cert["motzkin"] = [{k: c[k] for k in ("sequences", "labels", "certificate", "prompt") if k in c}
                           for c in certs]
        return cert
    witness = details["witness"]
    u = getattr(witness, "u", None)
    cert["witness"] = {"b": [_fr(v) for v in witness.b], "u": None if u is None else [_fr(v) for v in u]}
    sequences = [tuple(s) for s in details.get("sequences", [])]
    if data["verdict"] == "refuted":
        bad = tuple(data["counterexample"]["sequence"])
        listed, covers = [bad], "listed"
    elif data["identity"] and data["identity"].get("holds"):
        listed, covers = sequences[:MAX_LISTED], "identity"
        pre = read_position_prior(model, tid, u)
        cert["identity"] = {"lambda": data["identity"]["lambda"],
                            "lhs": [_fr(v) for v in head_weights(model, witness.b) * pre],
                            "rhs": [_fr(m * p) for m, p in zip(model.mu, model.pi0)],
                            "what": data["identity"]["what"]}
    else:
        listed, covers = sequences[:MAX_LISTED], "listed"
    cert["covers"] = covers
    cert["sequences_checked_by_verify"] = len(sequences)
    rows = []
    for seq in listed:
        star, head, _ = margins_direct(model, tid, witness.b, u, seq)
        rows.append({"x": list(seq), "task_margin": _fr(star), "head_margin": _fr(head),
                     "F_star": int(star >= 0), "F": int(head >= 0)})
    cert["sequences"] = rows
    return cert


def _array(a):
    """Nested lists of rational strings (an exact array, or a witness array of ints/Fractions)."""
    import numpy as np

    return format_array(np.asarray(a, dtype=object))


def _memory_certificate(data: dict, details: dict, model) -> dict:
    """Theorems 4.3 / 4.6 / C.6: the instance, the attention witness with its ``H*``, and the
    listed sequences with ``x in R``, the positions ``Z``, both margins and the attended set,
    recomputed here the direct way (:func:`~headprompt.verify.theorems.memory.check.decide_direct`)."""
    from ..theorems.memory.check import decide_direct

    tid = data["theorem"]
    if data["verdict"] == "assumptions-fail":
        raise InputError("--certificate: a failed non-degeneracy assumption's evidence is not a Motzkin "
                         "certificate, so there is nothing the checker can re-derive")
    witness, H_star = details["witness"], [int(h) for h in details["H_star"]]
    cert = {"format": "headprompt-certificate", "version": 1, "theorem": tid, "verdict": data["verdict"],
            "instance": {"kind": "memory-hmm", "cells": model.cells, "memory_values": model.memory_values,
                         "syntax_states": model.syntax_states, "target_cell": model.target_cell,
                         "A": _array(model.A), "W": _array(model.W), "pi0": _array(model.pi0),
                         "pM": _array(model.pM), "mu": _array(model.mu)},
            "witness": {"q": _array(witness.q), "Theta_K": _array(witness.Theta_K), "beta": _array(witness.beta),
                        "Theta_V": _array(witness.Theta_V), "b": _array(witness.b),
                        "u": None if witness.u is None else _array(witness.u), "H_star": H_star},
            "covers": "listed"}
    sequences = [tuple(s) for s in details.get("sequences", [])]
    listed = sequences[:MAX_LISTED]
    if data["verdict"] == "refuted":
        listed = [tuple(data["counterexample"]["sequence"])]
    cert["sequences_checked_by_verify"] = len(sequences)
    rows = []
    for seq in listed:
        d = decide_direct(model, witness, H_star, seq)
        row = {"x": list(seq), "in_R": bool(d.possible and d.Z), "Z": list(d.Z)}
        if row["in_R"]:
            row.update({"task_margin": _fr(d.task_margin), "head_output": _fr(d.head_margin),
                        "attended": list(d.attended), "F_star": d.expected, "F": d.got})
        rows.append(row)
    cert["sequences"] = rows
    return cert


def write_certificate(report, path: str) -> dict:
    """Build the certificate of ``report`` and write it to ``path`` as JSON; return it."""
    cert = build_certificate(report)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cert, fh, indent=1)
        fh.write("\n")
    return cert
