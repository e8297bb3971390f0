"""Write certificates for :mod:`headprompt.certcheck` to re-derive with the standard library alone.

Two kinds (format: docs/certificates.md, field by field):

- a theorem report's certificate (``verify theorem ... --certificate FILE``, ``claim:
  "theorem"``): the instance, every assumption of the theorem with evidence the checker
  re-derives (left inverses, kernel vectors; the support-graph properties it recomputes), the
  witness and whether it is the paper's construction or a given one, and the claim: an
  identity covering every sequence, or the listed sequences (at most :data:`MAX_LISTED`, every
  class that occurs among the checked sequences included), or the disagreeing sequence;
- a statement-level certificate (:func:`evidence_certificate`, ``claim: "no-linear-head"`` or
  ``"no-prompt-and-head"``): Motzkin multipliers showing that no linear head on the theorem's
  features (or, for Theorem 3.6, no prompt and head at all) fits ``F*`` on the listed sequences.

Every certificate written here is re-checked by the checker's own size limits before it is
written: a certificate this module writes is one the checker reads.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ... import certcheck
from ...models.exceptions import InputError
from ...models.hmm.linalg import left_inverse, nullspace_vector, rank
from ...models.hmm.rational import format_array, format_fraction
from ...models.hmm.task import class_label, is_multiclass, label
from ...models.hmm.values import MemoryHMM
from ..checks.vanilla import assumptions as vasm
from ..checks.vanilla.check import margins_direct
from .certificates import vacuous_features
from .certificate_limits import unbounded_digits, within_limits, write_json

__all__ = ["build_certificate", "write_certificate", "check_certificate_request", "evidence_certificate",
           "write_evidence_certificate", "MAX_LISTED", "CERTIFIED_THEOREMS"]

MAX_LISTED = 200
"""Most sequences a theorem certificate lists (the checker recomputes each)."""

SCAN_FOR_CLASSES = 5000
"""Sequences scanned past the first :data:`MAX_LISTED` for a class those do not show."""

CERTIFIED_THEOREMS = ("3.3", "3.6", "4.3", "4.6", "C.6")
MEMORY_THEOREMS = ("4.3", "4.6", "C.6")


def check_certificate_request(theorem: str, mode: str | None, classes) -> None:
    """Refuse, before any work, a certificate this format cannot express.

    Raises:
        InputError: an unknown theorem or float mode.
    """
    if theorem not in CERTIFIED_THEOREMS:
        raise InputError(f"--certificate: certificates cover Theorems {', '.join(CERTIFIED_THEOREMS)}; "
                         f"found {theorem!r}")
    if mode == "float":
        raise InputError("--certificate: a float run proves nothing to certify; use --mode exact")


def _fr(v) -> str:
    return format_fraction(Fraction(v))


def _vec(values) -> list[str]:
    return [_fr(v) for v in values]


def _array(a):
    """Nested lists of rational strings."""
    return format_array(np.asarray(a, dtype=object))


def _head(b):
    """A head (binary vector or ``k`` rows) as rational strings."""
    arr = np.asarray(b, dtype=object)
    return [_vec(row) for row in arr] if arr.ndim == 2 else _vec(arr)


def _vanilla_instance(model) -> dict:
    mu = model.mu
    return {"kind": "hmm", "A": _array(model.A), "W": _array(model.W), "pi0": _vec(model.pi0),
            "mu": [_vec(row) for row in mu] if is_multiclass(mu) else _vec(mu)}


def _memory_instance(model) -> dict:
    columns = model.memory_values * model.num_states
    if not _fits(columns, columns, model.num_tokens):
        raise InputError(f"--certificate: the checker's rank computations over {columns} emission columns are "
                         "over its work limit; use a smaller memory instance")
    return {"kind": "memory-hmm", "cells": model.cells, "memory_values": model.memory_values,
            "syntax_states": model.syntax_states, "target_cell": model.target_cell,
            "A": _array(model.A), "W": _array(model.W), "pi0": _array(model.pi0),
            "pM": _array(model.pM), "mu": _array(model.mu)}


def _header(theorem: str, claim: str, instance: dict) -> dict:
    return {"format": certcheck.FORMAT, "version": certcheck.VERSION, "theorem": theorem, "claim": claim,
            "instance": instance}


# ---------------------------------------------------------------- assumption evidence

def _fits(rows: int, cols: int, inner: int) -> bool:
    """Whether the checker's work limit admits a product of these sizes."""
    return rows * cols * inner <= certcheck.LIMITS["matrix_work"]


def _evidence_31(model) -> dict | None:
    if rank(model.W) == model.num_states:
        if not _fits(model.num_states, model.num_states, model.num_tokens):
            return None
        return {"holds": True, "left_inverse": _array(left_inverse(model.W))}
    return {"holds": False, "null_vector": _vec(nullspace_vector(model.W))}


def _evidence_35(model, result: dict) -> dict | None:
    """3.5 holds: ``B``, ``H*`` and a left inverse of ``W[:, H*]``; fails: a state of
    ``supp(mu)`` with a kernel vector on the support of every column of ``A`` that reaches it.
    None when the failure has no such short proof (the complete search refuted every ``B``)."""
    if result.get("holds"):
        H_star = [int(h) for h in result["H_star"]]
        if not _fits(len(H_star), len(H_star), model.num_tokens):
            return None
        out = {"holds": True, "B": [int(h) for h in result["B"]], "H_star": H_star}
        out["left_inverse"] = _array(left_inverse(model.W[:, H_star])) if H_star else []
        return out
    blocking = result.get("blocking") or []
    if not blocking:
        return None
    s = int(blocking[0])
    support = model.transition_support()
    vectors = []
    for h in range(model.num_states):
        if support[s, h]:
            cols = [int(g) for g in np.flatnonzero(support[:, h])]
            v = nullspace_vector(model.W[:, cols])
            if v is None:
                return None
            vectors.append({"column": h, "v": _vec(v)})
    return {"holds": False, "state": s, "null_vectors": vectors}


def _vanilla_assumptions(model, theorem: str, results: dict) -> tuple[dict, list[str]]:
    """The ``assumptions`` block and the names left out (a failure without a short proof)."""
    block, missing = {}, []
    for name in {"3.3": ("3.1", "3.2"), "3.6": ("3.2", "3.5")}[theorem]:
        if name == "3.1":
            entry = _evidence_31(model)
            if entry is None:
                missing.append(name)
            else:
                block[name] = entry
        elif name == "3.2":
            block[name] = {"holds": bool(vasm.check_32(model)["holds"])}
        else:
            result = results.get("3.5") or vasm.check_35(model)
            entry = _evidence_35(model, result)
            if entry is None:
                missing.append(name)
            else:
                block[name] = entry
    return block, missing


def _memory_assumptions(results: dict) -> tuple[dict, list[str]]:
    block, missing = {}, []
    for name, result in results.items():
        if name in ("3.2", "4.4"):
            block[name] = {"holds": bool(result["holds"])}
        elif result.get("holds"):
            block[name] = {"holds": True, "H_star": [int(h) for h in result["H_star"]]}
        elif result.get("evidence"):
            block[name] = {"holds": False, "evidence": [_memory_item(e) for e in result["evidence"]]}
        else:
            missing.append(name)
    return block, missing


def _memory_item(e: dict) -> dict:
    keys = ("s", "kind", "columns", "null_vector", "U_columns", "a", "V_columns", "c")
    return {k: e[k] for k in keys if k in e}


# ---------------------------------------------------------------- theorem certificates

def build_certificate(report) -> dict:
    """The certificate (a JSON-ready dict) of a :class:`~headprompt.verify.api.TheoremReport`.

    Raises:
        InputError: a report no certificate can express (float mode, no model, or an
            assumption failure without evidence the checker can re-derive).
    """
    data, details = report.data, dict(report.details)
    details.setdefault("witness_given", getattr(getattr(report, "request", None), "witness", None) is not None)
    tid = data["theorem"]
    model = details.get("model")
    check_certificate_request(tid, data.get("mode"), None)
    if model is None:
        raise InputError("--certificate: the report has no instance to certify")
    if tid in MEMORY_THEOREMS:
        return _memory_certificate(data, details, model)
    cert = _header(tid, "theorem", _vanilla_instance(model))
    cert["verdict"] = data["verdict"]
    cert["assumptions"], missing = _vanilla_assumptions(model, tid, data.get("assumptions") or {})
    if missing:
        cert["notes"] = f"Assumption {', '.join(missing)}: no evidence the checker can re-derive within its limits; left out"
    if data["verdict"] == "assumptions-fail":
        if all(entry["holds"] for entry in cert["assumptions"].values()):
            raise InputError(f"--certificate: the failed assumption ({', '.join(missing) or data.get('failed')}) "
                             "has no evidence the checker can re-derive, so no certificate is written")
        ev = data.get("counterexample") or {}
        found = ([ev] if ev.get("kind") == "no-linear-head" else
                 [c for c in ev.get("certificates", []) if c.get("kind") == "no-linear-head"])
        found = [c for c in found if _informative(c, tid)]
        if found and not is_multiclass(model.mu):
            cert["motzkin"] = [_motzkin_entry(c, tid) for c in found]
        within_limits(cert, model)
        return cert
    witness = details["witness"]
    u = getattr(witness, "u", None) if tid == "3.6" else None
    cert["witness"] = {"b": _head(witness.b), "u": None if u is None else _vec(u),
                       "source": "given" if details.get("witness_given") else "construction"}
    sequences = [tuple(int(t) for t in s) for s in details.get("sequences", [])]
    if data["verdict"] == "refuted":
        listed, covers = [tuple(data["counterexample"]["sequence"])], "listed"
    else:
        identity = data.get("identity") or {}
        covers = "identity" if identity.get("holds") else "listed"
        if covers == "identity":
            cert["identity"] = {"lambda": _fr(Fraction(str(identity["lambda"])))}
        listed = sequences[:MAX_LISTED]
    cert["covers"] = covers
    cert["sequences_checked_by_verify"] = len(sequences)
    cert["sequences"] = _vanilla_rows(model, tid, witness.b, u, listed, sequences[MAX_LISTED:MAX_LISTED + SCAN_FOR_CLASSES]
                                      if data["verdict"] == "verified" else [])
    within_limits(cert, model)
    return cert


def _vanilla_rows(model, tid, b, u, listed, spare) -> list[dict]:
    """Rows with both margins (or every class score) and labels, exactly; a class that the
    listed rows miss is added from ``spare`` when one of those shows it."""
    multi = is_multiclass(model.mu)
    classes = len(model.mu) if multi else 2
    rows, seen = [], set()

    def row(seq):
        star, head, possible = margins_direct(model, tid, b, u, seq)
        if multi:
            out = {"x": list(seq), "task_scores": _vec(star), "head_scores": _vec(head),
                   "F_star": class_label(star), "F": class_label(head)}
        else:
            out = {"x": list(seq), "task_margin": _fr(star), "head_margin": _fr(head),
                   "F_star": label(star), "F": label(head)}
        return out, possible

    for seq in listed:
        r, possible = row(seq)
        rows.append(r)
        if possible:
            seen.add(r["F_star"])
    for seq in spare:
        if len(seen) == classes:
            break
        r, possible = row(seq)
        if possible and r["F_star"] not in seen:
            seen.add(r["F_star"])
            rows.append(r)
    return rows


def _informative(c: dict, theorem: str) -> bool:
    """False for a Motzkin certificate certcheck rejects as vacuous
    (:func:`~.certificates.vacuous_features`), which the certificate then leaves out."""
    return vacuous_features(c) is None


def _motzkin_entry(c: dict, theorem: str) -> dict:
    out = {"sequences": [[int(t) for t in s] for s in c["sequences"]], "labels": [int(v) for v in c["labels"]],
           "certificate": {"y": [str(v) for v in c["certificate"]["y"]], "z": [str(v) for v in c["certificate"]["z"]]}}
    if theorem == "3.6":
        out["prompt"] = [_fr(v) for v in c["prompt"]]
    return out


def _memory_certificate(data: dict, details: dict, model) -> dict:
    """Theorems 4.3 / 4.6 / C.6: the instance, the assumptions' evidence, the attention witness
    with its ``H*``, and the listed sequences with ``x in R``, the positions ``Z``, both
    margins and the attended set, recomputed here the direct way."""
    from ..checks.memory.check import decide_direct

    tid = data["theorem"]
    cert = _header(tid, "theorem", _memory_instance(model))
    cert["verdict"] = data["verdict"]
    cert["assumptions"], missing = _memory_assumptions(data.get("assumptions") or {})
    if missing:
        cert["notes"] = f"Assumption {', '.join(missing)}: no evidence of the failure; left out"
    if data["verdict"] == "assumptions-fail":
        if all(entry["holds"] for entry in cert["assumptions"].values()):
            raise InputError("--certificate: the failed assumption has no evidence the checker can re-derive, "
                             "so no certificate is written")
        return cert
    witness, H_star = details["witness"], [int(h) for h in details["H_star"]]
    cert["witness"] = {"q": _array(witness.q), "Theta_K": _array(witness.Theta_K), "beta": _array(witness.beta),
                       "Theta_V": _array(witness.Theta_V), "b": _array(witness.b),
                       "u": None if witness.u is None else _array(witness.u), "H_star": H_star,
                       "source": "given" if details.get("witness_given") else "construction"}
    cert["covers"] = "listed"
    sequences = [tuple(int(t) for t in s) for s in details.get("sequences", [])]
    listed = sequences[:MAX_LISTED]
    spare = sequences[MAX_LISTED:MAX_LISTED + SCAN_FOR_CLASSES]
    if data["verdict"] == "refuted":
        listed, spare = [tuple(data["counterexample"]["sequence"])], []
    cert["sequences_checked_by_verify"] = len(sequences)
    rows, seen = [], set()

    def row(seq):
        d = decide_direct(model, witness, H_star, seq)
        out = {"x": list(seq), "in_R": bool(d.possible and d.Z), "Z": [int(i) for i in d.Z]}
        if out["in_R"]:
            if not multi:
                out.update({"task_margin": _fr(d.task_margin), "head_output": _fr(d.head_margin)})
            out.update({"attended": [int(i) for i in d.attended], "F_star": int(d.expected), "F": int(d.got)})
        return out

    multi = is_multiclass(model.mu)
    classes = len(model.mu) if multi else 2
    for seq in listed:
        rows.append(row(seq))
        if rows[-1]["in_R"]:
            seen.add(rows[-1]["F_star"])
    for seq in spare:
        if len(seen) == classes:
            break
        r = row(seq)
        if r["in_R"] and r["F_star"] not in seen:
            seen.add(r["F_star"])
            rows.append(r)
    cert["sequences"] = rows
    within_limits(cert, model)
    return cert


# ---------------------------------------------------------------- statement-level certificates

def evidence_certificate(model, theorem: str, evidence: dict) -> dict:
    """A standalone certificate of statement-level evidence (H2's finders' dicts):

    - ``{"kind": "no-linear-head", "sequences", "labels", "certificate": {"y", "z"}}``, with
      ``"prompt"`` for Theorem 3.6: no linear head on the theorem's features fits ``F*`` on the
      sequences (3.3: ``G_1(∅, x)``; 3.6: ``Gbar_2(u, e(∅), e(x))`` for the one prompt given;
      4.3/4.6/C.6 on a memory model: ``G_1(∅, x)`` of that model, the linear-head baseline);
    - ``{"kind": "no-prompt-and-head", "prompts": "all", ...}`` (Theorem 3.6 only): no prompt and
      no head fit ``F*`` on the sequences.

    Raises:
        InputError: an unknown kind, a theorem that does not match the model, a multiclass task.
    """
    kind = evidence.get("kind")
    memory = isinstance(model, MemoryHMM)
    if theorem not in CERTIFIED_THEOREMS or memory != (theorem in MEMORY_THEOREMS):
        raise InputError(f"evidence certificate: Theorem {theorem!r} does not match a "
                         f"{'memory-augmented' if memory else 'vanilla'} HMM")
    if is_multiclass(model.mu):
        raise InputError("evidence certificate: Motzkin certificates are about binary tasks")
    instance = _memory_instance(model) if memory else _vanilla_instance(model)
    rows = {"sequences": [[int(t) for t in s] for s in evidence["sequences"]],
            "certificate": {"y": [_fr(v) for v in evidence["certificate"]["y"]],
                            "z": [_fr(v) for v in evidence["certificate"]["z"]]}}
    if "labels" in evidence:
        rows["labels"] = [int(v) for v in evidence["labels"]]
    if kind == "no-linear-head":
        cert = {**_header(theorem, "no-linear-head", instance), **rows}
        if theorem == "3.6":
            if evidence.get("prompt") is None:
                raise InputError("evidence certificate: Theorem 3.6's features need the prompt u")
            cert["prompt"] = [_fr(v) for v in evidence["prompt"]]
    elif kind == "no-prompt-and-head":
        if theorem != "3.6":
            raise InputError("evidence certificate: no-prompt-and-head is about Theorem 3.6")
        cert = {**_header(theorem, "no-prompt-and-head", instance), "prompts": "all", **rows}
    else:
        raise InputError(f"evidence certificate: unknown kind {kind!r} (no-linear-head, no-prompt-and-head)")
    within_limits(cert, model)
    return cert


def write_evidence_certificate(model, theorem: str, evidence: dict, path) -> dict:
    """:func:`evidence_certificate` written to ``path`` as JSON; returns it."""
    return unbounded_digits(lambda: write_json(evidence_certificate(model, theorem, evidence), path))


def write_certificate(report, path) -> dict:
    """Build the certificate of ``report`` and write it to ``path`` as JSON; return it."""
    return unbounded_digits(lambda: write_json(build_certificate(report), path))
