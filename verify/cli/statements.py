"""``verify statements [--json]``: every numbered statement of Sections 3-4 and Appendices A-C,
how it is checked, on what scope, and the result of checking it now (seconds).

Exit 0 when no checked row fails or is vacuous, 1 otherwise.
"""

from __future__ import annotations

import time

from ..reports.render import emit_json
from .options import add_json_option

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("statements", help="every numbered statement of the paper: how checked, scope, result now",
                       description="List every numbered statement of Sections 3-4 and Appendices A-C (assumptions, "
                                   "theorems, propositions, lemmas, claims, the example) with how it is checked "
                                   "(brute-force sums against message passing, the assumption checkers against "
                                   "independent oracles, exact theorem runs on several instances with ties, "
                                   "symbolic proofs, or indirectly inside a theorem check), the scope of each "
                                   "check, and run the checks now. Exit 0 when none fails or is vacuous, 1 otherwise.")
    add_json_option(p)
    p.set_defaults(run=run)


def _scope_text(scope: dict) -> str:
    return "; ".join(f"{k}: {v}" for k, v in scope.items())


def run(args) -> int:
    from ..studies.statements import run_statements      # imported here: --help stays fast

    start = time.perf_counter()
    rows = run_statements()
    failed = [r["statement"] for r in rows if r["result"] in ("fails", "vacuous")]
    seconds = round(time.perf_counter() - start, 2)
    if args.json:
        emit_json({"statements": rows, "failed": failed, "seconds": seconds})
    else:
        width = max(len(r["statement"]) for r in rows)
        pad = " " * (width + 12)
        for r in rows:
            print(f"{r['statement']:<{width}}  {r['result']:<8}  {r['how']}")
            print(f"{pad}scope: {_scope_text(r['scope'])}")
            if r["detail"]:
                print(f"{pad}result: {r['detail']}")
        n = {k: sum(r["result"] == k for r in rows) for k in ("holds", "agrees", "indirect")}
        print(f"{len(rows)} statements: {n['holds']} hold on their scope, {n['agrees']} assumption checkers agree "
              f"with their oracles, {len(failed)} fail or are vacuous, {n['indirect']} checked indirectly "
              f"({seconds} s)")
    return 1 if failed else 0
