"""``verify statements [--json]``: every numbered statement of Sections 3-4 and Appendices A-C,
how it is checked, and the result of checking it now (a few seconds).

Exit 0 when no checked statement fails, 1 otherwise.
"""

from __future__ import annotations

from ..render import emit_json
from .common import add_json_option

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("statements", help="every numbered statement of the paper: how checked, result now",
                       description="List every numbered statement of Sections 3-4 and Appendices A-C (assumptions, "
                                   "theorems, propositions, lemmas, claims, the example) with how it is checked "
                                   "(exact on instances, symbolic, brute-force path sums, or indirectly inside "
                                   "a theorem check) and run the checks now. Exit 0 when none fails, 1 otherwise.")
    add_json_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..theorems.statements import run_statements      # imported here: --help stays fast

    rows = run_statements()
    failed = [r["statement"] for r in rows if r["result"] == "fails"]
    if args.json:
        emit_json({"statements": rows, "failed": failed})
    else:
        width = max(len(r["statement"]) for r in rows)
        for r in rows:
            line = f"{r['statement']:<{width}}  {r['result']:<8}  {r['how']}"
            print(line + (f" -- {r['detail']}" if r["detail"] else ""))
        print(f"{len(rows)} statements: {sum(r['result'] == 'holds' for r in rows)} hold, "
              f"{len(failed)} fail, {sum(r['result'] == 'indirect' for r in rows)} checked indirectly")
    return 1 if failed else 0
