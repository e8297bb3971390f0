"""The paper's separations on one instance each (``verify separate``), every half with a
certificate for :mod:`headprompt.certcheck`.

Vanilla pair (Theorems 3.3 and 3.6 on one HMM where Assumption 3.1 fails and 3.2, 3.5 hold):

- *head tuning provably fails*: a Motzkin certificate (re-checked exactly) that no linear head
  ``b`` gives ``F*(x) = 1(b . G_1(∅, x) >= 0)`` on the listed sequences, all with ``Pr(x) > 0``:
  Theorem 3.3's conclusion is false on this instance;
- *prompt tuning provably succeeds*: ``verify theorem 3.6`` verifies the construction's prompt
  ``u = 1_B`` and head ``b`` by its exact identity ``b^T W diag(pre) = lambda mu^T diag(P[H_0])``,
  which gives ``F = F*`` on every ``x`` with ``Pr(x) > 0`` (Lemma B.2).

Memory pair (a memory-augmented HMM where Assumptions 3.2 and 4.2 hold):

- *the attention head of Theorem 4.3 recovers F\\* on every x in R*: ``verify theorem 4.3``
  verifies its exact identities (Lemmas C.2/C.4), checked besides on the sequences listed;
- *no linear head on the memory model's G_1 features does*: a Motzkin certificate on
  ``G_1(∅, x)`` of the same memory model, searched among sequences in ``R`` only, and those
  sequences are listed in the attention half's certificate too, so that ``certcheck
  --separation`` sees one claim about one set (the attention head right on each, no linear
  head right on all).

``proven`` is True only when all four halves are proven and their certificates written.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ...models.hmm.values import HMM, MemoryHMM
from ..api import run_theorem
from ..reports.requests import TheoremRequest

__all__ = ["separate", "CERTIFICATE_FILES", "VANILLA_SIZES", "MEMORY_SIZES"]

CERTIFICATE_FILES = {"head": "vanilla-head-fails.json", "prompt": "vanilla-prompt-works.json",
                     "attention": "memory-attention-works.json", "linear": "memory-linear-head-fails.json"}
VANILLA_SIZES = (5, 3)        # |H| > |X|: Assumption 3.1 cannot hold, 3.5 can
MEMORY_SIZES = {"memory": 2, "cells": 2, "hidden": 2, "vocab": 8}
"""Two cells (with one cell the linear head on G_1 often does fit these small instances)."""
MEMORY_SAMPLES, MEMORY_LENGTH = 200, 4
SAMPLES = 200                 # sampled sequences checked beside the identities (which cover every x)


def _write(kind: str, directory: str | None, write) -> str | None:
    if directory is None:
        return None
    path = os.path.join(directory, CERTIFICATE_FILES[kind])
    write(path)
    return path


def _vanilla(model: HMM | None, seed: int, directory: str | None) -> dict:
    from ..evidence.certificate import write_certificate, write_evidence_certificate
    from ..evidence.construction import short_sequences
    from ..evidence.statement import shortest_statement_certificate

    hidden, vocab = VANILLA_SIZES
    opts = {"model": model} if model is not None else {"hidden": hidden, "vocab": vocab}
    prompt = run_theorem(TheoremRequest(id="3.6", seed=seed, samples=SAMPLES, progress=False, **opts))
    model = prompt.details["model"]
    head = run_theorem(TheoremRequest(id="3.3", model=model, seed=seed, samples=SAMPLES, progress=False))
    ident = prompt.data.get("identity") or {}
    prompt_ok = (prompt.data["verdict"] == "verified" and bool(ident.get("holds")) and prompt.data["mode"] != "float"
                 and not prompt.data.get("vacuous"))       # a one-label task: a prompt "works" for nothing
    # the shortest certificate first (short sequences, so that it can be re-derived by path sums),
    # else the one verify theorem 3.3's own search found
    shown = shortest_statement_certificate(model, "3.3", short_sequences(model, 4))
    head_ok = shown is not None and shown["checked"]
    if not head_ok:
        ev = head.data.get("counterexample") or {}
        if head.data["verdict"] == "assumptions-fail" and ev.get("kind") == "no-linear-head" and ev.get("checked"):
            shown, head_ok = ev, True
    head_cert = (_write("head", directory, lambda p: write_evidence_certificate(model, "3.3", shown, p))
                 if head_ok else None)
    prompt_cert = _write("prompt", directory, lambda p: write_certificate(prompt, p)) if prompt_ok else None
    a31 = head.data["assumptions"].get("3.1", {})
    return {"instance": {**prompt.data["instance"], "hidden": model.num_states, "vocab": model.num_tokens},
            "assumptions": {**{k: v["holds"] for k, v in prompt.data["assumptions"].items()},
                            "3.1": a31.get("holds")},
            "head": {"proven": head_ok, "certificate": head_cert,
                     "what": (f"no linear head on G_1(∅, x) computes F*: a Motzkin certificate on "
                              f"{len(shown['sequences'])} sequences with Pr(x) > 0, checked exactly "
                              f"(Assumption 3.1 fails: {a31.get('why', '?')})") if head_ok else
                     f"verify theorem 3.3 gives {head.data['verdict']} and no certificate was found",
                     "sequences": shown["sequences"] if head_ok else None},
            "prompt": {"proven": prompt_ok, "certificate": prompt_cert, "witness": prompt.data.get("witness"),
                       "what": (f"verify theorem 3.6: {prompt.data['verdict']}; exact identity "
                                f"{ident.get('what', 'no identity')}") if prompt_ok else
                       (f"verify theorem 3.6 gives verified, but F* takes one label on the sequences checked "
                        f"(labels {prompt.data.get('labels')}): vacuous, no separation"
                        if prompt.data["verdict"] == "verified" and prompt.data.get("vacuous") else
                        f"verify theorem 3.6 gives {prompt.data['verdict']}"),
                       "sequences_checked": (prompt.data.get("sequences") or {}).get("checked")}}


def _memory(model: MemoryHMM | None, seed: int, directory: str | None) -> dict:
    from ..checks.memory.check import decide_direct
    from ..evidence.certificate import write_certificate, write_evidence_certificate
    from ..evidence.certificates import check_no_linear_head_certificate, find_no_linear_head_certificate
    from ..evidence.construction import short_sequences
    from ..evidence.sequences import sampled

    opts = {"model": model} if model is not None else dict(MEMORY_SIZES)
    attn = run_theorem(TheoremRequest(id="4.3", seed=seed, samples=SAMPLES, progress=False, **opts))
    model = attn.details["model"]
    ident = attn.data.get("identity") or {}
    seqs = attn.data.get("sequences") or {}
    attn_ok = (attn.data["verdict"] == "verified" and bool(ident.get("holds")) and attn.data["mode"] != "float"
               and not attn.data.get("vacuous"))
    witness, H_star = attn.details.get("witness"), [int(h) for h in attn.details.get("H_star") or []]

    def in_R(seqs):         # the linear half lists sequences in R, where the attention half is proven
        if witness is None:
            return []
        return [tuple(s) for s in seqs if (lambda d: d.possible and d.Z)(decide_direct(model, witness, H_star, s))]

    pool = in_R(short_sequences(model, 2))
    cert = find_no_linear_head_certificate(model, pool) if pool else None
    if cert is None:
        more = sampled(model.lift(), MEMORY_SAMPLES, MEMORY_LENGTH, rng=np.random.default_rng(seed))
        pool = list(dict.fromkeys(pool + in_R(more)))
        cert = find_no_linear_head_certificate(model, pool) if pool else None
    linear_ok = cert is not None and check_no_linear_head_certificate(model, cert)[0]
    if linear_ok:           # the attention certificate lists the linear half's sequences first
        used = [tuple(int(t) for t in s) for s in cert["sequences"]]
        attn.details["sequences"] = used + [s for s in attn.details["sequences"] if tuple(s) not in set(used)]
    attn_cert = _write("attention", directory, lambda p: write_certificate(attn, p)) if attn_ok else None
    linear_cert = (_write("linear", directory, lambda p: write_evidence_certificate(model, "4.3", cert, p))
                   if linear_ok else None)
    return {"instance": attn.data["instance"],
            "assumptions": {k: v["holds"] for k, v in attn.data["assumptions"].items()},
            "attention": {"proven": attn_ok, "certificate": attn_cert,
                          # certcheck re-derives the listed sequences in R, not the identity over all of R
                          "certificate_covers": ("the listed sequences in R (the identity over every x in R is "
                                                 "verify's own check, not part of the certificate)"),
                          "what": (f"verify theorem 4.3: {attn.data['verdict']}; "
                                   f"{ident.get('what', 'no identity')}; besides, {seqs.get('in_R')} checked "
                                   f"sequences in R agree (labels {attn.data.get('labels')})") if attn_ok else
                          f"verify theorem 4.3 gives {attn.data['verdict']}"},
            "linear": {"proven": linear_ok, "certificate": linear_cert,
                       "what": (f"no linear head on the memory model's G_1(∅, x) computes F*: a Motzkin certificate "
                                f"on {len(cert['sequences'])} sequences with Pr(x) > 0, checked exactly") if linear_ok
                       else (f"no Motzkin certificate among the sequences tried (every sequence of length <= 2 and "
                             f"{MEMORY_SAMPLES} sampled of length {MEMORY_LENGTH}): not a proof that a linear head works"),
                       "sequences": cert["sequences"] if linear_ok else None}}


def separate(*, vanilla: HMM | None = None, memory: MemoryHMM | None = None, seed: int = 0,
             certificate_dir: str | None = None, which: tuple[str, ...] = ("vanilla", "memory"),
             source: str | None = None) -> dict:
    """Both separations (module docstring); with ``certificate_dir`` the proven halves'
    certificates are written there (:data:`CERTIFICATE_FILES`). ``source`` names a given
    instance's file in the report."""
    start = time.perf_counter()
    out = {"seed": seed}
    if "vanilla" in which:
        out["vanilla"] = _vanilla(vanilla, seed, certificate_dir)
    if "memory" in which:
        out["memory"] = _memory(memory, seed, certificate_dir)
    for key in ("vanilla", "memory"):
        if key in out and source is not None:
            out[key]["instance"]["source"] = source
    halves = [out["vanilla"]["head"], out["vanilla"]["prompt"]] if "vanilla" in out else []
    halves += [out["memory"]["attention"], out["memory"]["linear"]] if "memory" in out else []
    out["proven"] = bool(halves) and all(h["proven"] for h in halves)
    out["certificates_written"] = certificate_dir is not None
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out
