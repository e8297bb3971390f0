"""Write the certificate of a ``verify theorem`` verdict (``--certificate FILE``), for
:mod:`headprompt.certcheck` to re-derive with the standard library alone.

Format: docs/certificates.md (field by field). Theorems 3.3 and 3.6 with a binary task are
covered: a verified verdict whose identity holds covers every sequence (``covers:
"identity"``, with up to :data:`MAX_LISTED` sequences listed as spot checks); otherwise the
claim is about the listed sequences (``covers: "listed"``: all checked ones when at most
:data:`MAX_LISTED`, else the first :data:`MAX_LISTED`, and the certificate says so). A refuted
verdict lists the disagreeing sequence; a failed Assumption 3.1 (or a prompt family) carries
its Motzkin certificates.
"""

from __future__ import annotations

import json
from fractions import Fraction

from ...models.exceptions import InputError
from ...models.hmm.rational import format_fraction
from ...models.hmm.task import is_multiclass
from ...models.hmm.integer import head_weights
from ..theorems.vanilla.check import margins_direct, read_position_prior

__all__ = ["build_certificate", "write_certificate", "check_certificate_request", "MAX_LISTED",
           "CERTIFIED_THEOREMS"]

MAX_LISTED = 200
"""Most sequences a certificate lists (each recomputed by the checker, about 1 ms per state)."""

CERTIFIED_THEOREMS = ("3.3", "3.6")


def check_certificate_request(theorem: str, mode: str | None, classes) -> None:
    """Refuse, before any work, a certificate this format cannot express.

    Raises:
        InputError: a memory theorem, a multiclass task or float mode.
    """
    if theorem not in CERTIFIED_THEOREMS:
        raise InputError(f"--certificate: certificates cover Theorems 3.3 and 3.6; Theorem {theorem} "
                         "(memory-augmented) has no certificate format yet")
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


def write_certificate(report, path: str) -> dict:
    """Build the certificate of ``report`` and write it to ``path`` as JSON; return it."""
    cert = build_certificate(report)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cert, fh, indent=1)
        fh.write("\n")
    return cert
