"""``verify counterexample ID [--drop A] [--hidden N] [--vocab K] [--seed S] [--hmm FILE] [--out FILE]
[--certificate FILE] [--examples N] [--max-length T] [--json]``.

The one command for counterexamples when an assumption fails (``verify explore --drop`` is
its search, used here as the fallback). Builds the instance (a construction where the failure
mode is known, else the bounded search, or ``--hmm``), then prints the strongest evidence:
a certificate that the theorem's statement fails (re-checked exactly; ``--certificate`` writes
it for ``python -m headprompt.certcheck``), else a disagreement of the paper's construction on
a task with both labels, else the bound searched (not a proof). Exit 1 a counterexample was
found (exact: a proof), 0 none found or every assumption holds, 2 bad input.
"""

from __future__ import annotations

import os
import sys

from ...models.exceptions import InputError
from ..evidence import SEARCH_MAX_STEPS as MAX_STEPS
from ..reports.render import console, emit_json
from ..runtime.output_paths import check_out_path
from .options import THEOREMS, add_instance_options, add_json_option, add_theorem_id, ascii_int, path_arg

__all__ = ["add_parser", "run"]

DESCRIPTION = ("Find a counterexample to a theorem with one assumption dropped (--drop; default its "
               "non-degeneracy assumption: 3.3 -> 3.1, 3.6 -> 3.5, 4.3 -> 4.2, 4.6 -> 4.5, C.6 -> C.5). "
               "A known construction first (Theorems 3.3 and 3.6, every assumption), else the property-based "
               "search of 'verify explore --drop' within the stated bounds, or the instance given with --hmm. "
               "Prints a certificate that the statement fails (checked exactly), or a disagreement of the "
               "paper's construction on a task with both labels, or the bound searched (not a proof). "
               "Exit 1 a counterexample was found, 0 none found (or every assumption holds), 2 bad input.")


def add_parser(sub) -> None:
    p = sub.add_parser("counterexample", help="a counterexample when an assumption is dropped (certificates)",
                       description=DESCRIPTION)
    add_theorem_id(p)
    p.add_argument("--drop", metavar="ASSUMPTION", default=None,
                   help="the assumption to violate (default: the theorem's non-degeneracy assumption)")
    add_instance_options(p)
    add_json_option(p)
    p.add_argument("--out", metavar="FILE", default=None, type=path_arg,
                   help="save the instance (with the construction's witness), replayable with verify theorem ID --hmm FILE")
    p.add_argument("--certificate", metavar="FILE", default=None, type=path_arg,
                   help="write the statement-level certificate for python -m headprompt.certcheck")
    p.add_argument("--examples", type=ascii_int, default=100, metavar="N",
                   help="instances the fallback search draws (default 100)")
    p.add_argument("--max-length", type=ascii_int, default=3, metavar="T",
                   help="check every sequence of length 1..T (fewer when there would be more than 400) (default 3)")
    p.add_argument("--search", action="store_true",
                   help="Theorem 3.6: also run a numerical search for any prompt + head (opt-in; not a proof)")
    p.add_argument("--search-steps", type=ascii_int, default=150, metavar="N",
                   help=f"Adam steps per fit of --search (budget, 1..{MAX_STEPS}; default 150)")
    p.set_defaults(run=run)


def _check_paths(args) -> None:
    check_out_path(args.out)
    check_out_path(args.certificate, flag="--certificate")
    if args.out and args.certificate and os.path.realpath(args.out) == os.path.realpath(args.certificate):
        raise InputError(f"--out and --certificate both name {args.out}: give two different files")


def run(args) -> int:
    from ..studies.refute import CounterexampleRequest, find_counterexample

    if args.id not in THEOREMS:
        raise InputError(f"theorem {args.id!r}: expected one of {', '.join(THEOREMS)}")
    _check_paths(args)
    if not 1 <= args.search_steps <= MAX_STEPS:
        raise InputError(f"--search-steps {args.search_steps}: expected a value in 1..{MAX_STEPS}")
    if args.search and args.id != "3.6":
        raise InputError(f"--search: the numerical search is for Theorem 3.6 (prompt + head), not {args.id}")
    if args.certificate and args.id in ("4.3", "4.6", "C.6"):
        raise InputError(f"--certificate: Theorem {args.id}'s counterexamples are disagreements of the construction "
                         "(attention heads have no statement-level certificate, and certcheck accepts a memory "
                         "certificate only for an H* that meets the non-degeneracy assumption, which fails here); "
                         f"replay one with verify theorem {args.id} --hmm OUT --witness OUT")
    if args.memory is not None or args.cells is not None:
        raise InputError("--memory/--cells: the search draws memory sizes itself (bounded by --hidden for the "
                         "syntax states); give --hmm FILE to examine a given instance")
    model = None
    if args.hmm:
        from ...models.hmm.files import load_instance
        from ..checks.registry import theorem_spec

        model = load_instance(args.hmm)
        kind = "memory-hmm" if type(model).__name__ == "MemoryHMM" else "hmm"
        if kind != theorem_spec(args.id).kind:
            raise InputError(f"--hmm {args.hmm}: a {kind} instance, but Theorem {args.id} is about a "
                             f"{theorem_spec(args.id).kind}")
    request = CounterexampleRequest(theorem=args.id, drop=args.drop, model=model, source=args.hmm,
                                    hidden=args.hidden, vocab=args.vocab, seed=args.seed,
                                    examples=args.examples, max_length=args.max_length)
    result = find_counterexample(request)
    model = result.pop("model", None)
    witness, H_star = result.pop("witness", None), result.pop("H_star", None)
    if args.search and model is not None:
        from ..evidence.search import optimize_prompt_and_head

        result["search"] = optimize_prompt_and_head(model, samples=1000, steps=args.search_steps, seed=args.seed)
    if args.out and model is not None:
        _save(model, args, result, witness, H_star)
    if args.certificate:
        _certificate(model, args, result, witness, H_star)
    note = result.pop("save_note", None)
    if args.json:
        emit_json(result)
        if note:                                  # the JSON schema has no notes field: stderr
            print(f"note: {note}", file=sys.stderr)
    else:
        render(result)
        if note:
            print(f"note: {note}")
    return 1 if result["found"] else 0


def _save(model, args, result: dict, witness, H_star) -> None:
    from ..reports.instances import save_checked_instance

    wd = None
    if witness is not None:
        wd = witness.as_dict()
        if H_star is not None:
            wd["H_star"] = list(H_star)
    meta = {"theorem": args.id, "counterexample": {"dropped": result["dropped"], "kind": result["kind"],
                                                   "instance": result["instance"]}}
    result["save_note"] = save_checked_instance(model, args.out, witness=wd, meta=meta)
    result["saved"] = args.out


def _certificate(model, args, result: dict, witness, H_star) -> None:
    """Write the certificate through the certificate module's writers: the statement-level
    evidence, or, for a construction-level counterexample, the refuted witness (the verdict of
    ``verify theorem ID --hmm OUT --witness OUT --exhaustive`` on the instance)."""
    from ..evidence import certificate as writer

    if result["kind"] == "statement":
        writer.write_evidence_certificate(model, args.id, result["counterexample"], args.certificate)
    elif result["kind"] == "construction":
        _refuted_witness_certificate(model, args, result, witness, H_star)
    else:
        raise InputError(f"--certificate: no counterexample was found for Theorem {args.id}, so there is nothing "
                         f"to certify ({result['reading']})")
    result["certificate"] = args.certificate


def _refuted_witness_certificate(model, args, result: dict, witness, H_star) -> None:
    import tempfile

    from ...models.hmm.files import save_instance
    from ..api import run_theorem
    from ..evidence.certificate import write_certificate
    from ..reports.requests import TheoremRequest

    wd = witness.as_dict()
    if H_star is not None:
        wd["H_star"] = list(H_star)
    seq = result["counterexample"]["disagreement"]["sequence"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "instance.json")
        save_instance(model, path, witness=wd)
        report = run_theorem(TheoremRequest(id=args.id, hmm=path, witness=path, exhaustive=True, length=len(seq),
                                            progress=False))
        if report.data["verdict"] != "refuted":              # pragma: no cover - the same exact check
            raise InputError(f"--certificate: verify theorem {args.id} does not refute the saved witness "
                             f"({report.data['verdict']})")
        write_certificate(report, args.certificate)


def render(result: dict) -> None:
    """A readable report of a counterexample result."""
    out = console()
    tid, drop = result["theorem"], result["dropped"]
    out.print(f"[bold]counterexample Theorem {tid} without Assumption {drop}[/bold] (exact)")
    inst = result["instance"]
    sizes = ", ".join(f"{k} {v}" for k, v in (result.get("sizes") or {}).items())
    out.print(f"instance: {inst['source']}{' (' + sizes + ')' if sizes else ''}: {inst['how']}")
    for name, a in (result.get("assumptions") or {}).items():
        out.print(f"  assumption {name}: {'holds' if a['holds'] else 'fails'}: {a['why']}")
    ce = result["counterexample"]
    if result["kind"] == "statement":
        out.print(f"[red]statement fails[/red]: {ce['what']}")
        for s, lab, y, z in zip(ce["sequences"], ce["labels"], ce["certificate"]["y"], ce["certificate"]["z"]):
            out.print(f"    x = {s}  F*(x) = {lab}  y = {y}  z = {z}")
    c = result.get("construction")
    if c:
        out.print(f"construction: {c['what']}")
    if result.get("statement") and result["kind"] != "statement":
        out.print(f"statement: {result['statement']['what']}")
    if result.get("search"):
        out.print(f"numerical search: {result['search']['interpretation']}")
    out.print(f"reading: {result['reading']}")
    if result.get("saved"):
        out.print(f"saved to {result['saved']}; replay: verify theorem {tid} --hmm {result['saved']}")
    if result.get("certificate"):
        out.print(f"certificate written to {result['certificate']}; check it: python -m headprompt.certcheck "
                  f"{result['certificate']}")
    out.print(f"time: {result['seconds']:.2f} s")
