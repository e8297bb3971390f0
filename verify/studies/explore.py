"""The typed core of ``verify explore`` (SPEC section 4): a Hypothesis-driven search for
counterexamples over instances built to satisfy (or break) a theorem's assumptions.

Without ``drop``, every drawn instance satisfies all of the theorem's assumptions *by
construction* (``models/families.py``); the paper's witness is built and checked exactly on
every sequence of length ``1..max_length``; any disagreement (or an assumption the checker
finds failing) is a bug in the theorem, our reading or the tool.

With ``drop=A``, every drawn instance satisfies the other assumptions and violates ``A``, and
the search looks for

1. *statement* evidence where it can be checked: Theorem 3.3, a Motzkin certificate that no
   linear head on ``G_1`` computes ``F*``; Theorem 3.6, one such certificate for every prompt
   ``u = 1_B`` of the paper's family (on ``Gbar_2(u, e(∅), e(x))``). Attention heads have no
   such certificate: their evidence is about the construction only;
2. *construction* evidence: "the construction" is the paper's recipe applied without the
   assumption (``constructions/relaxed.py``: the same formulas with Moore-Penrose
   pseudo-inverses where an inverse no longer exists), and a sequence where its witness
   disagrees with ``F*`` refutes it; only instances whose task takes both labels on the
   checked sequences count (a constant ``F*`` is fitted by a constant head).

A hit is shrunk by Hypothesis (``hypothesis.find``: no example database, a seeded random
source) and re-evaluated; every certificate is re-checked exactly by
:mod:`headprompt.verify.evidence.certificates`; the construction check is
:mod:`headprompt.verify.evidence.construction`.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ...constructions.relaxed import relaxed_36_witness
from ...constructions.vanilla import ConstructionError
from ...models.exceptions import InputError, InternalError
from ...models.hmm.values import HMM
from ...models.hmm.task import is_multiclass
from ...models.hmm.files import instance_to_dict

from ..checks.registry import check_assumptions, theorem_spec
from ..evidence.construction import construction_check, empty_labels, short_sequences, witness_dict

__all__ = ["ExploreRequest", "ExploreResult", "explore", "evaluate", "statement_evidence", "instance_sizes",
           "STATEMENT_EVIDENCE", "replay_statement_evidence"]

# theorems whose statement (not only the construction) has checkable evidence
STATEMENT_EVIDENCE = {"3.3": "a Motzkin certificate that no linear head on G_1 computes F*",
                      "3.6": "a certificate that no prompt u and no linear head compute F* (else a Motzkin "
                             "certificate for every prompt u = 1_B of the paper's family)"}


@dataclass(frozen=True)
class ExploreRequest:
    """What ``verify explore`` is asked to do.

    Raises:
        InputError: an unknown theorem or assumption, or a bound outside its range.
    """

    theorem: str
    drop: str | None = None
    examples: int = 100
    seed: int = 0
    max_hidden: int = 4
    max_vocab: int = 3
    max_length: int = 3
    classes: int | None = None
    shrink_seconds: float = 30.0

    def __post_init__(self) -> None:
        spec = theorem_spec(self.theorem)
        if self.drop is not None and self.drop not in spec.assumptions:
            raise InputError(f"--drop {self.drop}: Theorem {spec.id} has assumptions "
                             f"{', '.join(spec.assumptions)}")
        limits = {"examples": (1, 100_000), "seed": (0, 2 ** 32 - 1), "max_hidden": (1, 6),
                  "max_vocab": (1, 6), "max_length": (1, 6)}
        for name, (lo, hi) in limits.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise InputError(f"--{name.replace('_', '-')} {v!r}: expected an integer in {lo}..{hi}")
        if self.classes is not None and (isinstance(self.classes, bool) or not isinstance(self.classes, int)
                                         or not 2 <= self.classes <= 8):
            raise InputError(f"--classes {self.classes!r}: expected an integer in 2..8")
        if self.drop is not None and self.max_hidden < 2:
            raise InputError(f"--max-hidden {self.max_hidden}: breaking an assumption needs at least 2 states")
        if not spec.memory and self.max_vocab < 2:
            raise InputError(f"--max-vocab {self.max_vocab}: use at least 2 tokens")
        vocab = self.max_vocab if not spec.memory else 6
        if sum(vocab ** k for k in range(1, self.max_length + 1)) > 20_000:
            raise InputError(f"--max-length {self.max_length} with up to {vocab} tokens: too many sequences "
                             "to check exhaustively per example (limit 20000); lower --max-length")


@dataclass
class ExploreResult:
    """The outcome: ``to_dict()`` is the JSON of SPEC section 4 (plus counts)."""

    request: ExploreRequest
    found: bool
    drawn: int
    counterexample: dict | None
    seconds: float
    labels: dict = field(default_factory=lambda: {"0": 0, "1": 0})
    searched: list = field(default_factory=list)
    model: Any = None
    witness: dict | None = None

    @property
    def exit_code(self) -> int:
        return 1 if self.found else 0

    def to_dict(self) -> dict:
        r = self.request
        out = {"theorem": r.theorem, "dropped": r.drop, "examples": r.examples, "found": self.found,
               **({"classes": r.classes} if r.classes else {}),
               "drawn": self.drawn, "rejected": 0, "by_construction": True, "seed": r.seed,
               "bounds": {"max_hidden": r.max_hidden, "max_vocab": r.max_vocab, "max_length": r.max_length},
               "searched": self.searched, "certified": True, "mode": "exact",
               "labels": dict(self.labels), "vacuous": _vacuous(self.labels),
               "counterexample": self.counterexample, "seconds": round(self.seconds, 3)}
        return out


# ---------------------------------------------------------------- one instance

def _vacuous(labels: dict) -> bool:
    """Binary: one label never occurs. ``k`` classes: fewer than two classes occur (a constant
    ``F*`` is fitted by a constant head)."""
    return sum(v > 0 for v in labels.values()) < 2


def statement_evidence(model, theorem: str, sequences, *, first_B=None) -> dict | None:
    """Checked statement-level evidence (module docstring), or None when there is none: the
    certificates of :func:`~.statement.statement_certificate` (for 3.6 the per-prompt family counts
    here too, as the search's statement-level evidence about that family)."""
    from ..evidence.statement import statement_certificate

    st = statement_certificate(model, theorem, sequences, first_B=first_B, family_seconds=None)
    return st if st is not None and st["checked"] else None


def evaluate(model, theorem: str, drop: str | None, max_length: int, *, want: str = "any") -> dict | None:
    """The counterexample ``model`` gives, or None.

    ``want``: ``"statement"`` (statement-level evidence only), ``"construction"`` (a
    disagreement of the construction's witness only) or ``"any"``. Without ``drop``, only the
    paper's construction is checked (and an assumption reported failing is itself a finding).
    """
    seqs = short_sequences(model, max_length)
    if drop is None:
        results = check_assumptions(model, theorem)
        failed = sorted(k for k, v in results.items() if not v["holds"])
        if failed:
            return {"kind": "construction", "evidence": {
                "what": f"bug: an instance built to satisfy every assumption fails {failed}",
                "assumptions": {k: {"holds": v["holds"], "why": v["why"]} for k, v in results.items()}}}
        try:
            chk = construction_check(model, theorem, seqs, relaxed_ok=False)
        except ConstructionError as exc:
            return {"kind": "construction", "evidence": {"what": f"bug: the construction failed: {exc}"}}
        if chk["disagreement"] is None:
            return None
        return {"kind": "construction", "evidence": _construction_evidence(chk, theorem)}
    if want in ("statement", "any") and theorem in STATEMENT_EVIDENCE and not is_multiclass(model.mu):
        first = None
        if theorem == "3.6":
            first = tuple(relaxed_36_witness(model).B)
        st = statement_evidence(model, theorem, seqs, first_B=first)
        if st is not None:
            return {"kind": "statement", "evidence": st}
    if want in ("construction", "any"):
        chk = construction_check(model, theorem, seqs)
        # a disagreement on a task with both labels: a constant F* would be fitted by a constant head
        if chk["disagreement"] is not None and not _vacuous(chk["labels"]):
            return {"kind": "construction", "evidence": _construction_evidence(chk, theorem)}
    return None


def _construction_evidence(chk: dict, theorem: str) -> dict:
    d = chk["disagreement"]
    where = "in R " if theorem not in ("3.3", "3.6") else ""
    return {"what": f"the witness of {chk['how']} disagrees with F* on the sequence {d['sequence']} {where}"
                    f"(F*(x) = {d['expected']}, F(x) = {d['got']}); checked exactly",
            "construction": chk["how"], "disagreement": d, "witness": witness_dict(chk["witness"], chk["H_star"]),
            "sequences": {"checked": chk["checked"], "agree": chk["agree"], "in_R": chk["in_R"]},
            "labels": chk["labels"]}


# ---------------------------------------------------------------- the search

def _strategy(request: ExploreRequest):
    from ...models.generate.strategies import theorem_instances

    return theorem_instances(request.theorem, violate=request.drop, max_hidden=request.max_hidden,
                             max_vocab=request.max_vocab, classes=request.classes)


def _search(request: ExploreRequest, want: str, progress: Callable | None, state: dict):
    """``hypothesis.find`` over the strategy; returns the shrunk model or None."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    seen: dict[str, bool] = {}          # one answer per instance, so replays agree (no flakiness)

    def condition(model) -> bool:
        key = json.dumps(instance_to_dict(model), sort_keys=True)
        if state["found_at"] is None:
            state["drawn"] += 1
            if progress is not None:
                progress(1)
        if key in seen:
            return seen[key]
        if state["found_at"] is not None:
            if time.perf_counter() - state["found_at"] > request.shrink_seconds:
                return False                           # shrink budget spent: new candidates lose
            state["shrink_calls"] += 1
        hit = evaluate(model, request.theorem, request.drop, request.max_length, want=want)
        if hit is not None and state["found_at"] is None:
            state["found_at"] = time.perf_counter()
        seen[key] = hit is not None
        return seen[key]

    config = settings(database=None, max_examples=request.examples, deadline=None, derandomize=False,
                      suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                      report_multiple_bugs=False)
    try:
        return find(_strategy(request), condition, settings=config,
                    random=random.Random(request.seed * 2 + (want == "construction")))
    except NoSuchExample:
        return None


def _count_labels(request: ExploreRequest, progress_total: int) -> dict:
    """``F*`` label counts over the sequences that count, on a fixed sample of drawn instances
    (the honest-verdict ``labels`` of a run that found nothing)."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    labels = {str(c): 0 for c in range(request.classes or 2)}

    @seed(request.seed)
    @settings(database=None, max_examples=min(20, request.examples), deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(_strategy(request))
    def count(model):
        try:
            chk = construction_check(model, request.theorem, short_sequences(model, request.max_length))
        except ConstructionError:
            return
        for k, v in chk["labels"].items():
            labels[k] += v

    count()
    return labels


def explore(request: ExploreRequest, *, progress: Callable | None = None,
            on_phase: Callable[[str], None] | None = None) -> ExploreResult:
    """Run the search (statement-level evidence first where it exists, then the construction),
    shrink a hit and re-evaluate it on the minimal instance."""
    start = time.perf_counter()
    statement = request.theorem in STATEMENT_EVIDENCE and not request.classes    # certificates are binary
    wants = ["any"] if request.drop is None else ((["statement"] if statement else []) + ["construction"])
    drawn, searched = 0, []
    for want in wants:
        if on_phase is not None:
            on_phase(want)
        state = {"drawn": 0, "found_at": None, "shrink_calls": 0}
        model = _search(request, want, progress, state)
        drawn += state["drawn"]
        searched.append({"looked_for": "construction" if want == "any" else want, "drawn": state["drawn"],
                         "found": model is not None, "shrink_calls": state["shrink_calls"]})
        if model is None:
            continue
        hit = evaluate(model, request.theorem, request.drop, request.max_length, want=want)
        if hit is None:                                   # pragma: no cover - shrinking keeps the property
            raise InternalError("the shrunk instance no longer gives a counterexample")
        seqs = short_sequences(model, request.max_length)
        chk = None
        try:
            chk = construction_check(model, request.theorem, seqs)
        except ConstructionError:
            pass
        evidence = hit["evidence"]
        if hit["kind"] == "statement" and chk is not None:
            evidence = {**evidence, "construction": _construction_summary(chk)}
        labels = chk["labels"] if chk is not None else empty_labels(model)
        witness = None
        if chk is not None:
            witness = chk["witness"].as_dict()
            if chk["H_star"] is not None:
                witness["H_star"] = list(chk["H_star"])
        assumptions = check_assumptions(model, request.theorem)
        if hit["kind"] == "construction" and request.drop is not None and statement:
            replay = replay_statement_evidence(model, request.theorem)
            if replay is not None:
                evidence = {**evidence, "statement_on_replay": replay}
        counterexample = {"instance": instance_to_dict(model), "kind": hit["kind"], "evidence": evidence,
                          "sizes": instance_sizes(model),
                          "assumptions": {k: {"holds": v["holds"], "why": v["why"]} for k, v in assumptions.items()},
                          "labels": labels, "sequences_checked": len(seqs)}
        return ExploreResult(request, True, drawn, counterexample, time.perf_counter() - start, labels=labels,
                             searched=searched, model=model, witness=witness)
    labels = _count_labels(request, drawn)
    return ExploreResult(request, False, drawn, None, time.perf_counter() - start, labels=labels,
                         searched=searched)


def replay_statement_evidence(model, theorem: str) -> dict | None:
    """The statement-level evidence that ``verify theorem ID --hmm`` (the same routine, its own
    sequence set) finds on ``model``, or None: so that explore never says "none found" about an
    instance whose replay prints certificates. Exact; ``{"found", "what"}``."""
    from ..api import run_theorem
    from ..reports.render import lengths_text
    from ..reports.requests import TheoremRequest

    data = run_theorem(TheoremRequest(id=theorem, model=model, samples=2000, progress=False)).data
    ce = data.get("counterexample") or {}
    if theorem == "3.3" and ce.get("kind") == "no-linear-head":
        return {"found": True, "what": f"verify theorem 3.3 on this instance: a Motzkin certificate on "
                                       f"{len(ce['sequences'])} sequences shows that no linear head computes F*"}
    family = ce.get("prompt_family") or {}
    if theorem == "3.6" and ce.get("statement_refuted_for_family"):
        return {"found": True, "what": f"verify theorem 3.6 on this instance: for every one of the "
                                       f"{family.get('subsets', '?')} prompts u = 1_B (B nonempty) an exact certificate shows that no "
                                       "linear head computes F* with it (a statement about the prompt family)"}
    seqs = data.get("sequences") or {}
    scope = (f" on its {seqs['checked']} {seqs.get('how', 'checked')} sequences ({lengths_text(seqs)})"
             if seqs.get("checked") and seqs.get("length") else "")
    return {"found": False, "what": f"verify theorem {theorem} on this instance finds no statement-level "
                                    f"certificate either{scope} (none found there, not none exists)"}


def _construction_summary(chk: dict) -> dict:
    out = {"how": chk["how"], "checked": chk["checked"], "agree": chk["agree"]}
    if chk["disagreement"] is not None:
        out["disagreement"] = chk["disagreement"]
    return out


def instance_sizes(model) -> dict:
    if isinstance(model, HMM):
        return {"hidden": model.num_states, "vocab": model.num_tokens}
    return {"cells": model.cells, "memory": model.memory_values, "syntax_states": model.syntax_states,
            "hidden": model.num_states, "vocab": model.num_tokens}
