"""Regenerate the minimal counterexamples in this folder and the README's assumption table.

For every (theorem, assumption) pair, runs ``verify explore ID --drop A`` (the Python core,
seed 0) and saves each counterexample found as ``<ID>-drop-<A>.json`` (instance, the
construction's witness and, under ``meta.explore``, the evidence), replayable with
``verify theorem ID --hmm FILE``. Prints the README table (markdown). Takes a few minutes;
not run by the test suite (tests/verify/evidence/test_counterexamples_replay.py replays the
files). Its defaults (500 examples per search, seed 0) are the settings of the committed table.
A pair where nothing is found never deletes a committed file: the table then says so and the
file is left for you to inspect (``--prune`` removes such files).

    python examples/counterexamples/regenerate.py [--examples N] [--prune]
"""

import argparse
import json
import sys
from pathlib import Path

from headprompt.models.hmm.files import save_instance
from headprompt.verify.studies.explore import STATEMENT_EVIDENCE, ExploreRequest, explore
from headprompt.verify.checks.registry import THEOREMS

HERE = Path(__file__).parent


DEFAULT_EXAMPLES = 500


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES,
                        help=f"examples per search (default {DEFAULT_EXAMPLES}, the committed table's setting)")
    parser.add_argument("--prune", action="store_true",
                        help="delete the file of a pair where this run found nothing (default: keep it)")
    args = parser.parse_args(argv)
    rows = []
    for tid, spec in THEOREMS.items():
        for a in spec.assumptions:
            res = explore(ExploreRequest(tid, a, examples=args.examples, seed=0))
            d = res.to_dict()
            path = HERE / f"{tid}-drop-{a}.json"
            if res.found:
                ce = d["counterexample"]
                meta = {"theorem": tid, "explore": {"dropped": a, "kind": ce["kind"], "seed": 0,
                                                    "examples": args.examples, "evidence": ce["evidence"]}}
                save_instance(res.model, path, witness=res.witness, meta=meta)
                sizes = ", ".join(f"{k} {v}" for k, v in ce["sizes"].items())
                ev = ce["evidence"]
                if ce["kind"] == "statement":
                    outcome = "statement fails with a certificate"
                    detail = ("Motzkin certificate: no linear head on G_1" if tid == "3.3" else
                              "a certificate that no prompt u and no head work" if ev.get("kind") == "no-prompt-and-head"
                              else f"a Motzkin certificate for each of the {ev['subsets']} prompts u = 1_B")
                else:
                    dis = ev["disagreement"]
                    outcome = "construction fails"
                    detail = f"disagrees on {dis['sequence']} (F* = {dis['expected']}, F = {dis['got']})"
                rows.append(f"| {tid} | {a} | {outcome} | {detail}; shrunk to {sizes} | `{path.name}` |")
            else:
                if path.exists() and not args.prune:
                    print(f"{path.name}: nothing found in this run; the committed file is kept (--prune removes it)",
                          file=sys.stderr)
                elif args.prune:
                    path.unlink(missing_ok=True)
                n = args.examples
                where = ("statement-level and construction searches, each" if tid in STATEMENT_EVIDENCE
                         else "construction only (no certificate exists for attention heads)")
                rows.append(f"| {tid} | {a} | nothing found in {n} examples | {where} checked on every "
                            f"sequence of length <= 3 | - |")
            print(rows[-1], f"({d['seconds']:.0f} s)", file=sys.stderr, flush=True)
    print("| theorem | dropped | outcome | evidence | file |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
