"""``verify explore ID [--drop A] [--examples N] [--seed S] [--max-hidden N] [--max-vocab K]
[--max-length T] [--out FILE] [--json]``: property-based search for counterexamples.

Without ``--drop``, instances satisfying every assumption of theorem ``ID`` by construction are
checked like ``verify theorem`` (a failure would be a bug). With ``--drop A``, instances that
violate ``A`` and keep the other assumptions are searched for a counterexample: statement-level
evidence where it can be checked (Motzkin certificates), else a disagreement of the paper's
construction; a hit is shrunk to a minimal instance, printed, and saved with ``--out`` so that
``verify theorem ID --hmm FILE`` replays it. Exit 0 nothing found, 1 found, 2 bad input.
"""

from __future__ import annotations

import sys

from ..reports.instances import save_checked_instance

from ..studies.explore import STATEMENT_EVIDENCE, ExploreRequest, explore
from ..checks.registry import THEOREM_IDS
from ..reports.render import emit_json
from .options import ascii_int, path_arg

__all__ = ["add_parser", "run"]

DESCRIPTION = ("Search random instances (Hypothesis) for a counterexample to a theorem, with all of its "
               "assumptions or with one dropped (--drop), and shrink what is found to a minimal "
               "instance. Exit 0 nothing found, 1 a counterexample was found, 2 bad input. For a "
               "counterexample with a certificate, start with 'verify counterexample ID --drop A': it uses "
               "the known constructions first and this search as its fallback.")



def add_parser(sub) -> None:
    p = sub.add_parser("explore", help="property-based search for counterexamples (the search behind "
                                       "verify counterexample)",
                       description=DESCRIPTION)
    p.add_argument("id", metavar="ID", help="one of " + ", ".join(THEOREM_IDS))
    p.add_argument("--drop", metavar="ASSUMPTION", default=None,
                   help="violate this assumption (keep the others) and look for what breaks")
    p.add_argument("--examples", type=ascii_int, default=100, metavar="N", help="instances to draw per search (default 100)")
    p.add_argument("--seed", type=ascii_int, default=0, help="seed of the search (default 0)")
    p.add_argument("--max-hidden", type=ascii_int, default=4, metavar="N",
                   help="largest |H| (memory HMMs: syntax states, at most 3) (default 4)")
    p.add_argument("--max-vocab", type=ascii_int, default=3, metavar="K",
                   help="largest |X| of vanilla instances (memory instances get what their blocks need) (default 3)")
    p.add_argument("--max-length", type=ascii_int, default=3, metavar="T",
                   help="check every sequence of length 1..T (fewer when there would be more than 400) (default 3)")
    p.add_argument("--classes", type=ascii_int, default=None, metavar="K",
                   help="draw tasks with K classes (2..8; K - 1 extra rows of mu on supp(mu)); the "
                        "statement-level certificates are binary, so only the construction is searched")
    p.add_argument("--out", metavar="FILE", default=None, type=path_arg, help="save the minimal counterexample (instance + witness)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..runtime.output_paths import check_out_path

    check_out_path(args.out)                # a missing folder or a directory: exit 2 before the search
    request = ExploreRequest(theorem=args.id, drop=args.drop, examples=args.examples, seed=args.seed,
                             max_hidden=args.max_hidden, max_vocab=args.max_vocab, max_length=args.max_length,
                             classes=args.classes)
    bar = None
    progress = None
    on_phase = None
    if not args.json and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=request.examples, file=sys.stderr, leave=False, unit="instance")

        def phase(want: str) -> None:
            bar.reset(total=request.examples)
            bar.set_description(f"explore {request.theorem}: {'statement' if want == 'statement' else 'construction'}")

        progress, on_phase = bar.update, phase
    try:
        result = explore(request, progress=progress, on_phase=on_phase)
    finally:
        if bar is not None:
            bar.close()
    data = result.to_dict()
    if args.out and result.found:
        meta = {"theorem": request.theorem, "explore": {"dropped": request.drop, "kind": data["counterexample"]["kind"],
                                                         "seed": request.seed, "examples": request.examples}}
        note = save_checked_instance(result.model, args.out, witness=result.witness, meta=meta)
        if note:                          # on stderr: the JSON schema has no notes field
            print(f"note: {note}", file=sys.stderr)
        data["saved"] = args.out
    elif args.out:
        data["saved"] = None                # nothing found: --out FILE is left untouched (said below)
    if args.json:
        emit_json(data)
    else:
        render(data)
    return result.exit_code


def render(data: dict) -> None:
    """A readable report of an explore result."""
    from ..reports.render import console

    out = console()
    tid, drop = data["theorem"], data["dropped"]
    what = f"instances violating {drop} and keeping the other assumptions" if drop else \
        "instances satisfying every assumption by construction"
    if data.get("classes"):
        what += f", tasks with {data['classes']} classes"
    out.print(f"[bold]explore Theorem {tid}[/bold]: {what} (exact; |H| <= {data['bounds']['max_hidden']}, "
              f"sequences of length <= {data['bounds']['max_length']})")
    for s in data["searched"]:
        out.print(f"  looked for {s['looked_for']}-level counterexamples: {s['drawn']} instances drawn, 0 rejected, "
                  f"{'found' if s['found'] else 'none found'}")
    if drop and tid not in STATEMENT_EVIDENCE:
        out.print("  (attention heads have no certificate that no head works: the evidence is about the "
                  "construction only)")
    if drop:
        out.print(f"  (verify counterexample {tid} --drop {drop} tries the known constructions first and writes "
                  "certificates with --certificate)")
    if not data["found"]:
        out.print(f"[green]nothing found[/green] in {data['drawn']} examples; F* labels over the sequences that "
                  f"count on 20 of them: {data['labels']}" + ("  [vacuous: fewer than two labels occur]" if data["vacuous"] else ""))
        if "saved" in data:
            out.print("  nothing to save: --out FILE was not written (it is written only when a counterexample is found)")
        out.print(f"time: {data['seconds']:.1f} s")
        return
    ce = data["counterexample"]
    sizes = ", ".join(f"{k} {v}" for k, v in ce["sizes"].items())
    out.print(f"[red]counterexample found[/red] ({ce['kind']}-level), shrunk to {sizes}:")
    for name, a in ce["assumptions"].items():
        out.print(f"  assumption {name}: {'holds' if a['holds'] else 'fails'}: {a['why']}")
    inst = ce["instance"]
    for key in ("A", "W", "pi0", "pM", "pM_cells", "mu"):
        if key in inst:
            out.print(f"  {key} = {inst[key]}")
    ev = ce["evidence"]
    out.print(f"  {ev.get('what', '')}")
    if ce["kind"] == "statement" and "certificates" in ev:
        for c in ev["certificates"]:
            out.print(f"    B = {c['B']}: sequences {c['sequences']}, labels {c['labels']}, "
                      f"y = {c['certificate']['y']}, z = {c['certificate']['z']}")
    elif ce["kind"] == "statement":
        out.print(f"    sequences {ev['sequences']}, labels {ev['labels']}, y = {ev['certificate']['y']}, "
                  f"z = {ev['certificate']['z']}")
    replay = ev.get("statement_on_replay")
    if replay is not None:
        out.print(f"  statement level on this instance: {replay['what']}"
                  + (" (the search above drew its instances with sequences of length <= "
                     f"{data['bounds']['max_length']} only)" if replay["found"] else ""))
    if ce["labels"] and min(ce["labels"].values()) == 0:
        out.print(f"  note: F* labels on the checked sequences {ce['labels']}: a label never occurs (vacuous for it)")
    if "saved" in data:
        out.print(f"saved to {data['saved']}; replay: verify theorem {tid} --hmm {data['saved']} "
                  f"(the construction's witness: add --witness {data['saved']})")
    out.print(f"time: {data['seconds']:.1f} s")
