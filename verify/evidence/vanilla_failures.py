"""Evidence when an assumption of Theorem 3.3 or 3.6 fails (the ``counterexample`` block of a
``verify theorem`` report whose verdict is ``assumptions-fail``, and the prompt evidence of a
refuted user witness): Motzkin certificates that no linear head works (checked exactly), the
paper's recipe applied without the assumption (``constructions/relaxed.py``) checked on every
short sequence, certificates for the prompt family ``u = 1_B`` within a time budget, and the
opt-in numerical search. Binary tasks only: a task with several classes gets a note."""

from __future__ import annotations

import numpy as np

from ...models.hmm.rational import format_array
from ...models.hmm.task import is_multiclass, num_classes
from ...models.hmm.values import HMM

from . import sequences
from .certificates import (check_no_linear_head_certificate, find_no_linear_head_certificate, vacuous_features,
                           prompt_family_certificates)

__all__ = ["counterexample_for", "no_basis_set_evidence", "given_prompt_evidence", "EVIDENCE_SEQUENCES",
           "FAMILY_SECONDS"]


def counterexample_for(hmm: HMM, theorem_id: str, failed: dict, *, seed: int = 0,
                       construction_error: str | None = None) -> dict | None:
    """Concrete evidence for a failed assumption (the certificates and searches are for binary
    tasks: a ``k``-row task gets a note instead)."""
    if is_multiclass(hmm.mu):
        return {"kind": "none-found", "what": f"Assumption(s) {', '.join(sorted(failed))} fail; the "
                "certificates and constructions without the assumption are for binary tasks, so no evidence "
                f"is searched for this {num_classes(hmm.mu)}-class task (check one row, or a difference "
                "mu_d - mu_c, as a binary task)"}
    if "3.1" in failed:
        pool = sequences.exhaustive(hmm.num_tokens, 2)
        cert = find_no_linear_head_certificate(hmm, pool)
        if cert is None:
            pool = pool + sequences.sampled(hmm, 2000, 6, rng=np.random.default_rng(seed + 7))
            cert = find_no_linear_head_certificate(hmm, pool)
        if cert is None:
            return {"kind": "none-found", "what": "Assumption 3.1 fails; conclusion not refuted within "
                    f"this search ({len(pool)} sequences: no Motzkin certificate, so some linear head "
                    "may fit them all)"}
        ok, why = check_no_linear_head_certificate(hmm, cert)
        cert["checked"] = ok
        cert["what"] = ("no linear head b can give F*(x) = 1(b . G_1(x') >= 0) on these sequences: " + why
                        if ok else f"certificate failed its own check: {why}")
        return cert
    if "3.5" in failed:
        return no_basis_set_evidence(hmm, failed["3.5"], seed=seed)
    if "3.2" in failed:
        evidence = {k: v for k, v in failed["3.2"].items() if k not in ("holds", "why")}
        if construction_error:
            relaxed = _relaxed_construction(hmm, theorem_id)
            if relaxed["disagreement"] is None:      # undefined as written, yet nothing it gets wrong
                return {"kind": "construction-undefined", "what": f"{construction_error}; the recipe applied "
                        f"anyway agrees with F* on all {relaxed['checked']} short sequences checked, so this is "
                        "no counterexample", "evidence": evidence, "construction": relaxed}
            return {"kind": "construction-breaks", "what": construction_error, "evidence": evidence,
                    "construction": relaxed}
        return {"kind": "construction-survives",
                "what": f"Assumption 3.2 fails ({failed['3.2']['why']}), but the construction only "
                        "divides by P[H_0] and P[H_1] (and c on H*), which are positive where needed here; "
                        "the witness was built and checked anyway (see sequences)",
                "evidence": evidence}
    if construction_error:
        return {"kind": "construction-breaks", "what": construction_error}
    return None


EVIDENCE_SEQUENCES = 200        # exhaustive short sequences for construction-level evidence
FAMILY_SECONDS = 3.0            # time budget of the per-B certificates in a report


def _short_sequences(num_tokens: int, limit: int = EVIDENCE_SEQUENCES) -> list[tuple[int, ...]]:
    L = 1
    while L < 3 and sum(num_tokens ** k for k in range(1, L + 2)) <= limit:
        L += 1
    return sequences.exhaustive(num_tokens, L)


def given_prompt_evidence(hmm: HMM, u) -> dict:
    """For a refuted user prompt: is the prompt itself hopeless? A Motzkin certificate (checked
    exactly) that no linear head works with ``u`` on the short sequences, or a note that some
    head may work with it (only ``b`` was wrong)."""
    pool = _short_sequences(hmm.num_tokens)
    cert = find_no_linear_head_certificate(hmm, pool, prompt=list(u))
    if cert is None:
        return {"kind": "none-found", "what": f"no certificate on the {len(pool)} short sequences: some linear "
                                              "head may work with this prompt (the given b is what fails)"}
    erased = vacuous_features(cert)
    if erased is not None:                 # true, but only because the prompt erases the input
        return {"kind": "vacuous-prompt", "what": f"no linear head can work with this prompt u: {erased}, so a "
                "Motzkin certificate for it would be vacuous and none is given", "prompt": cert["prompt"],
                "sequences": cert["sequences"], "features": cert["features"]}
    ok, why = check_no_linear_head_certificate(hmm, cert)
    cert["checked"] = ok
    cert["what"] = f"no linear head works with this prompt u: {why}" if ok else f"certificate failed its check: {why}"
    return cert


def _relaxed_construction(hmm: HMM, theorem_id: str) -> dict:
    """The paper's recipe applied anyway (pseudo-inverses; ``constructions/relaxed.py``),
    checked exactly on every short sequence: what breaks, not only that a step is undefined."""
    from .construction import construction_check

    pool = _short_sequences(hmm.num_tokens)
    chk = construction_check(hmm, theorem_id, pool)
    d = chk["disagreement"]
    what = (f"{chk['how']}: disagrees with F* on {d['sequence']} (F* = {d['expected']}, F = {d['got']}; "
            "checked exactly)" if d is not None else
            f"{chk['how']}: agrees with F* on all {chk['checked']} short sequences checked")
    return {"how": chk["how"], "checked": chk["checked"], "agree": chk["agree"], "labels": chk["labels"],
            "disagreement": d, "what": what}


def no_basis_set_evidence(hmm: HMM, failed35: dict, *, seed: int = 0, search: bool = False,
                          search_steps: int = 150, progress=None) -> dict:
    """Construction-level evidence when Assumption 3.5 fails (in seconds): the paper's recipe
    applied without the assumption (``constructions/relaxed.py``) checked exactly on every
    short sequence, a certificate that no linear head works with its prompt, and certificates
    for the prompt family ``u = 1_B`` within a time budget. ``search`` adds the numerical
    search of :mod:`headprompt.verify.evidence.search` (opt-in; minutes on large instances)."""
    from .construction import construction_check

    pool = _short_sequences(hmm.num_tokens)
    chk = construction_check(hmm, "3.6", pool)
    w = chk["witness"]
    construction = {"how": chk["how"], "B": list(w.B), "H_star": list(w.H_star), "u": format_array(w.u),
                    "b": format_array(w.b), "checked": chk["checked"], "agree": chk["agree"],
                    "labels": chk["labels"], "disagreement": chk["disagreement"],
                    "sequences": f"every sequence of length <= {max(len(s) for s in pool)}"}
    cert = find_no_linear_head_certificate(hmm, pool, prompt=list(w.u))
    if cert is not None and vacuous_features(cert) is not None:
        cert = {**cert, "checked": False, "vacuous": True,
                "what": f"the construction's prompt u = 1_B, B = {list(w.B)}: {vacuous_features(cert)}; a "
                        "certificate for it would be vacuous"}
    elif cert is not None:
        ok, why = check_no_linear_head_certificate(hmm, cert)
        cert["checked"] = ok
        cert["what"] = (f"no linear head works with the construction's prompt u = 1_B, B = {list(w.B)}: " + why
                        if ok else f"certificate failed its own check: {why}")
    family = prompt_family_certificates(hmm, pool, first=tuple(w.B), seconds=FAMILY_SECONDS)
    parts = [failed35["why"]]
    if chk["disagreement"] is not None:
        d = chk["disagreement"]
        parts.append(f"the paper's recipe without the assumption gives a prompt and head that disagree with F* on "
                     f"{d['sequence']} (F* = {d['expected']}, F = {d['got']}; checked exactly)")
    else:
        parts.append(f"the paper's recipe without the assumption still agrees with F* on all {chk['checked']} "
                     "short sequences checked")
    if cert is not None and cert["checked"]:
        parts.append("an exact certificate shows that no linear head works with its prompt")
    parts.append(family["what"])
    out = {"kind": "no-basis-set", "what": "; ".join(parts), "blocking_states": failed35.get("blocking", []),
           "construction": construction, "prompt_certificate": cert, "prompt_family": family,
           "statement_refuted_for_family": bool(family["all"])}
    if search:
        from .search import optimize_prompt_and_head

        out["search"] = optimize_prompt_and_head(hmm, samples=1000, steps=search_steps, seed=seed, progress=progress)
    else:
        out["search"] = None
        out["search_hint"] = ("a numerical search over every prompt u in [0, 1]^|H| is opt-in: "
                              "verify counterexample 3.6 --hmm FILE --search")
    return out
