"""``verify theorem ID ...``: build or read an instance, check the assumptions exactly, build
(or read) the witness, and verify it against ``F*`` on every checked sequence (SPEC section 4).

Exit codes: 0 verified, 1 refuted (a disagreement is printed), 3 an assumption fails (the
report says which and why, with a counterexample), 2 bad input.
"""

from __future__ import annotations

from ..models.exceptions import InputError

from . import rationalized
from .api import run_theorem
from .common import check_out_path
from .registry import THEOREM_IDS, theorem_spec
from .render import emit_json
from .requests import SIZE_LIMITS, TheoremRequest

__all__ = ["add_parser", "run", "THEOREMS", "add_instance_options", "check_common"]

THEOREMS = THEOREM_IDS


def add_instance_options(p, *, sizes: bool = True) -> None:
    if sizes:
        p.add_argument("--hidden", type=int, default=None, metavar="N",
                       help="hidden states |H| of a generated instance (default 25; memory HMMs: syntax states)")
        p.add_argument("--vocab", type=int, default=None, metavar="K", help="tokens |X| (default 10)")
        p.add_argument("--memory", type=int, default=None, metavar="M", help="memory values |M| (memory HMMs)")
        p.add_argument("--cells", type=int, default=None, metavar="N", help="memory cells (memory HMMs)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated instance and samples")
    p.add_argument("--hmm", metavar="FILE", default=None, help="check this instance file instead")


def add_parser(sub) -> None:
    p = sub.add_parser("theorem", help="verify a theorem on a generated or given instance",
                       description=__doc__.splitlines()[0])
    p.add_argument("id", metavar="ID", help="one of " + ", ".join(THEOREMS))
    add_instance_options(p)
    p.add_argument("--length", type=int, default=None, metavar="T",
                   help="sequence length (default 8 sampled; 4 with --exhaustive)")
    p.add_argument("--witness", metavar="FILE", default=None, help="check these head/prompt parameters")
    p.add_argument("--samples", type=int, default=None, metavar="N", help="sampled sequences (default 10000)")
    p.add_argument("--exhaustive", action="store_true", help="check every sequence of length 1..T")
    p.add_argument("--mode", choices=("exact", "certified", "float"), default=None,
                   help="exact (rationals throughout), certified (float with proven error bounds, "
                        "exact near ties; a proof too) or float (no proof). Default: exact, or "
                        "certified when exact would exceed the time limit (the report says so)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="FILE", default=None, help="save the checked instance with its witness")
    rationalized.add_option(p)
    p.set_defaults(run=run)


def check_common(args) -> None:
    """Reject sizes outside :data:`~.requests.SIZE_LIMITS` with one clear line (the commands
    that build no :class:`TheoremRequest` call this)."""
    for name, (lo, hi) in SIZE_LIMITS.items():
        value = getattr(args, name, None)
        if value is not None and not lo <= value <= hi:
            raise InputError(f"--{name} {value}: expected a value in {lo}..{hi}")


def run(args) -> int:
    request = TheoremRequest.from_namespace(args)      # validates every option, fills defaults
    check_out_path(args.out)
    with rationalized.hinting_float_models(request.rationalize):
        report = run_theorem(request)
    if args.json:
        emit_json(report.data)
    else:
        theorem_spec(request.id).report().render(report.data)
    return report.exit_code
