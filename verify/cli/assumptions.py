"""``verify assumptions ID --hmm FILE [--json]``: check a theorem's assumptions exactly.

Exit 0 when all hold, 3 when one fails (the report says which and why), 2 on bad input.
"""

from __future__ import annotations

from ...models.exceptions import InputError
from ...models.hmm.values import HMM
from ...models.hmm.files import load_instance

from ..reports import rationalized
from ..reports.rationalized import rationalized_source
from ..checks.registry import public_assumptions
from .options import THEOREMS, add_json_option, add_rationalize_option, add_theorem_id, path_arg
from ..reports.render import console, emit_json

__all__ = ["add_parser", "run"]

DESCRIPTION = ("Check a theorem's assumptions exactly on an instance file, each with a reason and "
               "evidence. Exit 0 when all hold, 3 when one fails, 2 on bad input.")



def add_parser(sub) -> None:
    p = sub.add_parser("assumptions", help="check a theorem's assumptions on an instance",
                       description=DESCRIPTION)
    add_theorem_id(p)
    p.add_argument("--hmm", metavar="FILE", required=True, type=path_arg,
                   help="the instance file (JSON: kind, A, W, pi0, mu, ...)")
    add_json_option(p)
    add_rationalize_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    if args.id not in THEOREMS:
        raise InputError(f"theorem {args.id!r}: expected one of {', '.join(THEOREMS)}")
    model, conversion = rationalized_source(args.hmm, args.rationalize)
    if conversion is None:
        with rationalized.hinting_float_models(None):
            model = load_instance(args.hmm, exact=True)
    if args.id in ("3.3", "3.6"):
        if not isinstance(model, HMM):
            raise InputError(f"{args.hmm}: Theorem {args.id} is about vanilla HMMs, found kind 'memory-hmm'")
        if args.id == "3.6" and model.mu is None:
            raise InputError(f"{args.hmm}: Assumption 3.5 needs the task vector \"mu\"; add it to the file")
        results = public_assumptions(model, args.id)
    else:
        from ..checks.memory import assumptions as memory_assumptions

        results = memory_assumptions.check_all(model, args.id)
    holds = all(v["holds"] for v in results.values())
    result = {"theorem": args.id, "holds": holds, "assumptions": results, "source": args.hmm}
    if conversion is not None:
        result["rationalized"] = conversion.to_dict()
    if args.json:
        emit_json(result)
    else:
        out = console()
        if conversion is not None:
            out.print(conversion.describe())
        for name, a in results.items():
            out.print(f"Assumption {name}: {'holds' if a['holds'] else '[red]fails[/red]'}: {a['why']}")
    return 0 if holds else 3
