"""``verify counterexample ID [--hidden N] [--vocab K] [--seed S] [--hmm FILE] [--json]``.

Builds (or reads) an instance on which the theorem's key assumption fails and prints checkable
evidence of what goes wrong: for Theorem 3.3 a Motzkin certificate that no linear head fits
``F*`` (checked exactly and independently); for 3.6 the requirement no basis set meets, the
paper's recipe applied without it (checked exactly), a certificate that no head works with its
prompt and certificates for the prompt family ``u = 1_B``, in seconds; ``--search`` adds a
numerical search over every prompt (opt-in, with a progress bar), read against the majority
baseline and the head-only fit. Memory theorems: exact certificates that no ``S*`` exists and
the construction without it, checked. Exit 3 when an assumption fails (evidence printed), 0
when every assumption holds (nothing to refute), 2 on bad input.
"""

from __future__ import annotations

import sys

from ...models.exceptions import InputError
from ..evidence import SEARCH_MAX_STEPS as MAX_STEPS
from ..render import console, emit_json
from ..theorems.common import check_out_path
from ..theorems.requests import TheoremRequest
from .common import THEOREMS, add_instance_options, add_json_option, add_theorem_id, ascii_int

__all__ = ["add_parser", "run"]

DESCRIPTION = ("Build (or read) an instance on which the theorem's key assumption fails and print "
               "checkable evidence of what breaks: a Motzkin certificate that no linear head works, the "
               "paper's construction applied without the assumption, and, with --search, a numerical "
               "search over prompts and heads. Exit 3 when an assumption fails (evidence printed), 0 "
               "when every assumption holds, 2 on bad input.")



def add_parser(sub) -> None:
    p = sub.add_parser("counterexample", help="evidence of what breaks when an assumption fails",
                       description=DESCRIPTION)
    add_theorem_id(p)
    add_instance_options(p)
    add_json_option(p)
    p.add_argument("--out", metavar="FILE", default=None, help="save the instance")
    p.add_argument("--search", action="store_true",
                   help="Theorem 3.6: also run a numerical search for any prompt + head (opt-in; minutes on "
                        "large instances)")
    p.add_argument("--search-steps", type=ascii_int, default=150, metavar="N",
                   help=f"Adam steps per fit of --search (budget, 1..{MAX_STEPS}; default 150)")
    p.set_defaults(run=run, length=None, samples=0)


def run(args) -> int:
    # the evidence builders import torch and scipy: imported here, so that --help stays fast
    import numpy as np

    from ...models.generate.families import failing_vanilla_instance
    from ...models.hmm.files import save_instance
    from ..theorems.registry import public_assumptions
    from ..theorems.vanilla.report import load_or_generate
    if args.id not in THEOREMS:
        raise InputError(f"theorem {args.id!r}: expected one of {', '.join(THEOREMS)}")
    request = TheoremRequest(id=args.id, hidden=args.hidden, vocab=args.vocab, memory=args.memory,
                             cells=args.cells, seed=args.seed, hmm=args.hmm, out=args.out)
    check_out_path(args.out)
    if not 1 <= args.search_steps <= MAX_STEPS:
        raise InputError(f"--search-steps {args.search_steps}: expected a value in 1..{MAX_STEPS}")
    if args.search and args.id != "3.6":
        raise InputError(f"--search: the numerical search is for Theorem 3.6 (prompt + head), not {args.id}")
    if args.id not in ("3.3", "3.6"):
        from ..theorems.memory import report as memory_report

        result = memory_report.counterexample(request)
    else:
        if args.hmm:
            hmm, instance = load_or_generate(request, args.id)
        else:
            hidden = 25 if args.hidden is None else args.hidden
            hmm, how = failing_vanilla_instance(args.id, hidden, request.vocab,
                                                rng=np.random.default_rng(args.seed))
            instance = {"hidden": hidden, "vocab": request.vocab, "seed": args.seed, "source": "generated",
                        "how": how}
        results = public_assumptions(hmm, args.id)
        failed = {k: v for k, v in results.items() if not v["holds"]}
        result = {"theorem": args.id, "instance": instance, "assumptions": results,
                  "failed": sorted(failed),
                  "counterexample": _evidence(hmm, args, failed) if failed else None}
        if args.out:
            save_instance(hmm, args.out, meta={"theorem": args.id, "instance": instance})
    if args.json:
        emit_json(result)
    else:
        _render(result)
    return 3 if result["failed"] else 0


def _evidence(hmm, args, failed: dict) -> dict | None:
    """The evidence of ``counterexample_for``; for 3.6 with ``--search`` the search too, with a
    progress bar on a terminal."""
    from ..theorems.vanilla.report import counterexample_for, no_basis_set_evidence

    if not (args.search and "3.5" in failed):
        return counterexample_for(hmm, args.id, failed, seed=args.seed)
    bar = None
    if not args.json and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=2 * args.search_steps, desc="searching prompt + head", file=sys.stderr, leave=False,
                   unit="step")
    try:
        return no_basis_set_evidence(hmm, failed["3.5"], seed=args.seed, search=True,
                                     search_steps=args.search_steps, progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()


def _render(result: dict) -> None:
    from ..theorems.vanilla.report import render

    if not result["failed"]:
        out = console()
        out.print(f"Theorem {result['theorem']}: every assumption holds on this instance; "
                  "there is nothing to refute (run verify theorem to prove the conclusion).")
        return
    render({"verdict": "assumptions-fail", "mode": "exact", **result})
