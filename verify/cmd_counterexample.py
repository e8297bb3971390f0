"""``verify counterexample ID [--hidden N] [--vocab K] [--seed S] [--hmm FILE] [--json]``.

Builds (or reads) an instance on which the theorem's key assumption fails and prints checkable
evidence of what goes wrong: for Theorem 3.3 a Motzkin certificate that no linear head fits
``F*`` (checked exactly and independently); for 3.6 the requirement no basis set meets, with
the best accuracy a numerically optimized prompt and head reach (a search, not a proof); for
3.2 the step of the construction that breaks. Exit 3 when an assumption fails (evidence
printed), 0 when every assumption holds (nothing to refute), 2 on bad input.
"""

from __future__ import annotations

import numpy as np

from ..models.exceptions import InputError
from ..models.generators import prompt_friendly_hmm, task_with_tie
from ..models.hmm import HMM
from ..models.instances import save_instance
from ..models.rational import round_to_denominator

from .cmd_assumptions import vanilla_assumptions
from .cmd_theorem import THEOREMS, add_instance_options, check_common
from .common import check_out_path, check_theorem_flags
from .render import console, emit_json
from .vanilla_report import counterexample_for, load_or_generate

__all__ = ["add_parser", "run", "failing_instance"]


def add_parser(sub) -> None:
    p = sub.add_parser("counterexample", help="evidence of what breaks when an assumption fails",
                       description=__doc__.splitlines()[0])
    p.add_argument("id", metavar="ID", help="one of " + ", ".join(THEOREMS))
    add_instance_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="FILE", default=None, help="save the instance")
    p.set_defaults(run=run, length=None, samples=0)


def failing_instance(theorem_id: str, hidden: int, vocab: int, seed: int) -> tuple[HMM, str]:
    """A generated instance on which the theorem's non-degeneracy assumption fails.

    3.3: the Theorem 3.6 recipe (when ``|H| > |X|`` rank W < |H| automatically; otherwise two
    columns of ``W`` are made equal). 3.6: the same recipe with dense transition columns, so
    every one-step reach is all of ``H`` and no independent ``H*`` can cover ``supp(mu)``
    once ``|H| > |X|``.
    """
    rng = np.random.default_rng(seed)
    hmm, info = prompt_friendly_hmm(hidden, vocab, rng=rng)
    if theorem_id == "3.3":
        if hidden <= vocab:
            W = hmm.W.copy()
            W[:, 1] = W[:, 0]
            hmm = HMM(hmm.A, W, hmm.pi0, hmm.mu)
            return hmm, "Theorem 3.6 recipe with W[:, 1] = W[:, 0], so rank W < |H| (Assumption 3.1 fails)"
        return hmm, f"Theorem 3.6 recipe; |H| = {hidden} > |X| = {vocab} forces rank W < |H| (Assumption 3.1 fails)"
    if hidden <= vocab:
        raise InputError(f"--hidden {hidden}: Assumption 3.5 can only be made to fail generically "
                         f"with |H| > |X| = {vocab}; use a larger --hidden or --hmm FILE")
    A = round_to_denominator(rng.random((hidden, hidden)) + 0.05, 100)
    dense = HMM(A, hmm.W, hmm.pi0)
    mu = task_with_tie(dense, range(hidden), rng=rng, tie_sequence=info["tie_sequence"])
    return dense.with_task(mu), ("dense positive A (every column reaches all of H), so H* = H for any B and "
                                 f"rank W = {vocab} < {hidden}: Assumption 3.5 fails")


def run(args) -> int:
    if args.id not in THEOREMS:
        raise InputError(f"theorem {args.id!r}: expected one of {', '.join(THEOREMS)}")
    check_theorem_flags(args, defaults={"vocab": 10})
    check_out_path(args.out)
    check_common(args)
    if args.id not in ("3.3", "3.6"):
        from . import memory_report

        result = memory_report.counterexample(args)
    else:
        if args.hmm:
            hmm, instance = load_or_generate(args, args.id)
        else:
            hidden = 25 if args.hidden is None else args.hidden
            hmm, how = failing_instance(args.id, hidden, args.vocab, args.seed)
            instance = {"hidden": hidden, "vocab": args.vocab, "seed": args.seed, "source": "generated",
                        "how": how}
        results = vanilla_assumptions(hmm, args.id)
        failed = {k: v for k, v in results.items() if not v["holds"]}
        result = {"theorem": args.id, "instance": instance, "assumptions": results,
                  "failed": sorted(failed),
                  "counterexample": counterexample_for(hmm, args.id, failed, seed=args.seed) if failed else None}
        if args.out:
            save_instance(hmm, args.out, meta={"theorem": args.id, "instance": instance})
    if args.json:
        emit_json(result)
    else:
        _render(result)
    return 3 if result["failed"] else 0


def _render(result: dict) -> None:
    from .vanilla_report import render

    if not result["failed"]:
        out = console()
        out.print(f"Theorem {result['theorem']}: every assumption holds on this instance; "
                  "there is nothing to refute (run verify theorem to prove the conclusion).")
        return
    render({"verdict": "assumptions-fail", "mode": "exact", **result})
