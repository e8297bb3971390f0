"""The core of ``verify counterexample ID [--drop A]``: an instance on which assumption ``A``
fails and the others hold, with the strongest evidence known of what breaks.

Order of work:

1. the instance: ``--hmm FILE`` as given; else a *construction* where the failure mode is known
   (:mod:`headprompt.verify.evidence.breaking`: Theorems 3.3 and 3.6, every assumption); else the property-based search of
   :mod:`.explore` (Hypothesis, shrunk to a minimal instance) within stated bounds;
2. *statement-level* evidence, every certificate re-checked exactly: Theorem 3.3, a Motzkin
   certificate that no linear head on ``G_1`` computes ``F*``; Theorem 3.6, a certificate that no
   prompt ``u`` and no head ``b`` do (:mod:`headprompt.verify.evidence.universal`), else (weaker, said so) one certificate
   per prompt ``u = 1_B`` of the paper's family. Attention heads (4.3, 4.6, C.6) have no such
   certificate;
3. *construction-level* evidence: the paper's recipe without the assumption
   (``constructions/relaxed.py``) checked exactly on every short sequence; a disagreement counts
   only on a task that takes both labels there (memory theorems: on sequences in ``R``), and an
   agreement on one label is reported as vacuous, never as agreement.

``found`` is True only for an exact counterexample (statement or construction); otherwise the
reading names the bound searched and says that it is not a proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...models.exceptions import InputError
from ...models.hmm.task import is_multiclass
from ...models.hmm.values import HMM
from ..checks.registry import check_assumptions, theorem_spec
from ..evidence.statement import shortest_statement_certificate, statement_certificate

__all__ = ["CounterexampleRequest", "find_counterexample", "KEY_ASSUMPTION"]

KEY_ASSUMPTION = {"3.3": "3.1", "3.6": "3.5", "4.3": "4.2", "4.6": "4.5", "C.6": "C.5"}
"""The assumption dropped by default: the non-degeneracy condition of each theorem."""
EXTRA_SAMPLES = 500          # sampled sequences added when the short ones give no certificate


@dataclass(frozen=True)
class CounterexampleRequest:
    """What ``verify counterexample`` is asked (sizes and seed apply to constructions and the
    search; ``examples`` and ``max_length`` bound the search and the sequences checked).

    Raises:
        InputError: an unknown theorem or assumption, or a bound outside its range.
    """

    theorem: str
    drop: str | None = None
    model: object = None
    source: str | None = None
    hidden: int | None = None
    vocab: int | None = None
    seed: int = 0
    examples: int = 100
    max_length: int = 3

    def __post_init__(self) -> None:
        spec = theorem_spec(self.theorem)
        if self.drop is not None and self.drop not in spec.assumptions:
            raise InputError(f"--drop {self.drop}: Theorem {spec.id} has assumptions {', '.join(spec.assumptions)}")
        for name, lo, hi in (("examples", 1, 100_000), ("max_length", 1, 6)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise InputError(f"--{name.replace('_', '-')} {v!r}: expected an integer in {lo}..{hi}")

    @property
    def dropped(self) -> str:
        return self.drop or KEY_ASSUMPTION[self.theorem]


def _instance(req: CounterexampleRequest):
    """``(model, info)`` for the request; ``model`` None when the search found nothing."""
    from ..evidence.breaking import known_construction

    if req.model is not None:
        return req.model, {"source": req.source or "given", "how": "read as given"}
    built = known_construction(req.theorem, req.dropped, hidden=req.hidden, vocab=req.vocab, seed=req.seed)
    if built is not None:
        model, how = built
        return model, {"source": "constructed", "how": how, "seed": req.seed}
    from .explore import ExploreRequest, explore

    memory = theorem_spec(req.theorem).memory
    kwargs = {}
    if req.hidden is not None:
        if not 2 <= req.hidden <= 6:
            raise InputError(f"--hidden {req.hidden}: the search for Theorem {req.theorem} without {req.dropped} draws "
                             f"at most --hidden {'syntax ' if memory else ''}states, 2..6")
        kwargs["max_hidden"] = req.hidden
    if req.vocab is not None:
        if memory:
            raise InputError("--vocab: the search's memory instances get the tokens their blocks need; leave it out")
        if not 2 <= req.vocab <= 6:
            raise InputError(f"--vocab {req.vocab}: the search draws at most --vocab tokens, 2..6")
        kwargs["max_vocab"] = req.vocab
    ex = explore(ExploreRequest(theorem=req.theorem, drop=req.dropped, examples=req.examples, seed=req.seed,
                                max_length=req.max_length, **kwargs))
    d = ex.to_dict()
    info = {"source": "search", "how": (f"verify explore {req.theorem} --drop {req.dropped}: {d['drawn']} random "
                                        f"instances (|H| <= {d['bounds']['max_hidden']}, sequences of length <= "
                                        f"{d['bounds']['max_length']}, seed {req.seed}), shrunk by Hypothesis"),
            "bounds": d["bounds"], "drawn": d["drawn"], "seed": req.seed}
    return (ex.model if ex.found else None), info


def find_counterexample(req: CounterexampleRequest) -> dict:
    """The report dict of ``verify counterexample`` (module docstring)."""
    from ...constructions.vanilla import ConstructionError
    from ..evidence.construction import construction_check, short_sequences
    from .explore import instance_sizes

    start = time.perf_counter()
    tid, drop = req.theorem, req.dropped
    model, info = _instance(req)
    if model is not None and req.model is not None and req.drop is None:
        failing = sorted(k for k, v in check_assumptions(model, tid).items() if not v["holds"])
        drop = failing[0] if len(failing) == 1 else drop     # a given instance: what fails on it
    out = {"theorem": tid, "dropped": drop, "instance": info, "assumptions": None, "failed": [],
           "found": False, "kind": None, "proof": False, "counterexample": None, "construction": None,
           "labels": None, "vacuous": None, "certified": True, "mode": "exact"}
    if model is None:
        out["reading"] = (f"no counterexample found: {info['how']}; none of them gave one. This is a bounded search, "
                          "not a proof that none exists")
        out["seconds"] = round(time.perf_counter() - start, 3)
        return out
    out["model"] = model
    results = check_assumptions(model, tid)
    out["assumptions"] = {k: {"holds": v["holds"], "why": v["why"]} for k, v in results.items()}
    out["failed"] = sorted(k for k, v in results.items() if not v["holds"])
    out["sizes"] = instance_sizes(model)
    if not out["failed"]:
        out["reading"] = (f"every assumption of Theorem {tid} holds on this instance: there is nothing to refute "
                          f"(verify theorem {tid} proves the conclusion)")
        out["seconds"] = round(time.perf_counter() - start, 3)
        return out
    seqs = short_sequences(model, req.max_length)
    length = max(len(s) for s in seqs)
    bound = short_bound = f"every sequence of length <= {length} ({len(seqs)} sequences)"
    st = shortest_statement_certificate(model, tid, seqs)
    if st is None and isinstance(model, HMM) and tid in ("3.3", "3.6") and not is_multiclass(model.mu):
        from ..evidence.sequences import sampled

        more = sampled(model, EXTRA_SAMPLES, 6, rng=np.random.default_rng(req.seed + 7))
        seqs_more = list(dict.fromkeys([tuple(s) for s in seqs] + more))
        st = statement_certificate(model, tid, seqs_more)
        bound += f" and {EXTRA_SAMPLES} sampled sequences of length 6"
    chk = None
    try:
        chk = construction_check(model, tid, seqs)
    except ConstructionError as exc:             # the recipe cannot even be carried out
        out["construction"] = {"what": f"the construction cannot be carried out: {exc}"}
    if chk is not None:
        out["construction"] = _construction_summary(chk, tid, short_bound)
        out["labels"], out["vacuous"] = chk["labels"], sum(v > 0 for v in chk["labels"].values()) < 2
        out["witness"] = chk["witness"]
        out["H_star"] = chk["H_star"]
    if st is not None and st.get("refutes_statement"):
        out.update(found=True, kind="statement", proof=True, counterexample=st)
    elif chk is not None and chk["disagreement"] is not None and not out["vacuous"]:
        out.update(found=True, kind="construction", proof=True, counterexample=out["construction"])
        if st is not None:
            out["statement"] = st                # the weaker family certificates, for the record
    elif st is not None:
        out["statement"] = st
    out["reading"] = _reading(out, tid, drop, bound)
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def _construction_summary(chk: dict, tid: str, bound: str) -> dict:
    d = chk["disagreement"]
    one_label = sum(v > 0 for v in chk["labels"].values()) < 2
    where = " in R" if tid not in ("3.3", "3.6") else ""
    counted = chk["in_R"] if tid not in ("3.3", "3.6") else chk["checked"]
    if d is not None and not one_label:
        what = (f"{chk['how']}: its witness disagrees with F* on {d['sequence']}{where} (F*(x) = {d['expected']}, "
                f"F(x) = {d['got']}; checked exactly; F* takes both labels there: {chk['labels']})")
    elif one_label:
        missed = ("" if d is None else f"; its own head disagrees with F* on {d['sequence']} (F*(x) = {d['expected']}, "
                  f"F(x) = {d['got']}), but that shows nothing about the statement")
        what = (f"{chk['how']}: F* takes one label on the {counted} sequences that count ({bound}{where}; labels "
                f"{chk['labels']}), so the check is vacuous: a constant head fits them{missed}"
                + ("" if d is not None else " and nothing could have failed"))
    else:
        what = (f"{chk['how']}: agrees with F* on all {counted} sequences{where} ({bound}; labels {chk['labels']}); "
                "agreement on finitely many sequences, not a proof that the construction works")
    return {"how": chk["how"], "checked": chk["checked"], "agree": chk["agree"], "in_R": chk["in_R"],
            "labels": chk["labels"], "vacuous": one_label, "disagreement": d, "what": what}


def _reading(out: dict, tid: str, drop: str, bound: str) -> str:
    only = out["failed"] == [drop]
    which = (f"Assumption {drop} fails and the others hold" if only else
             f"Assumption {out['failed'][0]} fails (not {drop})" if len(out["failed"]) == 1 else
             f"Assumptions {', '.join(out['failed'])} fail")
    if out["kind"] == "statement":
        claim = ("no prompt u and no linear head b compute F*" if tid == "3.6" else
                 "no linear head on G_1 computes F*")
        return (f"{which}; Theorem {tid}'s conclusion fails on this instance: {claim} on the "
                f"{len(out['counterexample']['sequences'])} listed sequences (a certificate, checked exactly)")
    if out["kind"] == "construction":
        return (f"{which}; the paper's construction fails (its witness disagrees with F* on a sequence, checked "
                "exactly) on a task with both labels; the statement itself is not refuted: "
                + ("attention heads have no certificate that no head works" if tid not in ("3.3", "3.6") else
                   f"no certificate that no head works was found within {bound} (some head may work here)"))
    tail = " (vacuous: F* takes one label there)" if out["vacuous"] else ""
    return (f"{which}; no counterexample found within {bound}{tail}. Not a proof that the statement or the "
            "construction survives")
