"""``verify theorem ID ...``: build or read an instance, check the assumptions exactly, build
(or read) the witness, and verify it against ``F*`` on every checked sequence (SPEC section 4).

Exit codes: 0 verified, 1 refuted (a disagreement is printed), 3 an assumption fails (the
report says which and why, with a counterexample), 2 bad input.
"""

from __future__ import annotations

import os
import sys

from ...models.exceptions import InputError
from ..reports import rationalized
from ..api import run_theorem
from ..runtime.output_paths import check_out_path
from ..reports.builders import render_report
from ..reports.render import console, emit_json
from ..reports.requests import TheoremRequest
from .options import add_instance_options, add_json_option, add_rationalize_option, add_theorem_id, ascii_int, path_arg

__all__ = ["add_parser", "run"]

DESCRIPTION = ("Build (or read) an instance, check the theorem's assumptions exactly, build (or read) "
               "the head and prompt, and verify them against the task F* on every checked sequence. Exit "
               "0 verified, 1 refuted (the disagreeing sequence is printed), 3 an assumption fails "
               "(which one, why, and evidence), 2 bad input, 5 an uncertified result (--mode float).")



def add_parser(sub) -> None:
    p = sub.add_parser("theorem", help="verify a theorem on a generated or given instance",
                       description=DESCRIPTION)
    add_theorem_id(p)
    add_instance_options(p)
    p.add_argument("--length", type=ascii_int, default=None, metavar="T",
                   help="sequence length (default 8 sampled; 4 with --exhaustive)")
    p.add_argument("--witness", metavar="FILE", default=None, type=path_arg, help="check these head/prompt parameters")
    p.add_argument("--samples", type=ascii_int, default=None, metavar="N", help="sampled sequences (default 10000)")
    p.add_argument("--exhaustive", action="store_true", help="check every sequence of length 1..T")
    p.add_argument("--mode", choices=("exact", "certified", "float"), default=None,
                   help="exact (rationals throughout), certified (float with proven error bounds, "
                        "exact near ties; a proof too) or float (no proof). Default: exact, or "
                        "certified when exact would exceed the time limit (the report says so)")
    add_json_option(p)
    p.add_argument("--out", metavar="FILE", default=None, type=path_arg, help="save the checked instance with its witness")
    p.add_argument("--certificate", metavar="FILE", default=None, type=path_arg,
                   help="write a JSON certificate of the verdict (binary tasks; docs/certificates.md) "
                        "that `python -m headprompt.certcheck FILE` re-checks with the standard library alone")
    p.add_argument("--classes", type=ascii_int, default=None, metavar="K",
                   help="generate a task with K >= 2 classes (mu a K x |H| matrix, F* = argmax_c mu_c . p, "
                        "ties to the largest class; checked exactly)")
    add_rationalize_option(p)
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="above 1,000 states or tokens: split the sequence checks into Ray tasks, on a local "
                        "Ray without ADDRESS, else on the cluster at ADDRESS (needs the 'cluster' extra)")
    p.add_argument("--path", choices=("auto", "dense", "large"), default="auto",
                   help="3.3/3.6 on a given instance: auto (default: the cost model's choice, named in the "
                        "report), dense (every entry a Fraction; the report carries the robustness block) or "
                        "large (the sparse exact form)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                   help="where the float kernels of certified (and float) mode run: cpu (default), cuda (a GPU "
                        "through torch, float64, the same a priori bound; exit 2 without CUDA) or auto (cuda "
                        "when present); verdicts are the same on every device, the exact fallback runs on the CPU")
    p.set_defaults(run=run)


def run(args) -> int:
    request = TheoremRequest.from_namespace(args)      # validates every option, fills defaults
    check_out_path(args.out)
    check_out_path(args.certificate, flag="--certificate")
    if args.out and args.certificate and os.path.realpath(args.out) == os.path.realpath(args.certificate):
        raise InputError(f"--out and --certificate both name {args.out}: one file would overwrite the other; "
                         "give two different files")
    with rationalized.hinting_float_models(request.rationalize):
        report = run_theorem(request, device=args.device)
    # the --hmm file's own witness, not checked; a witness that did not fit the --out file
    notes = [n for n in (report.details.get("instance_witness_note"), report.details.get("save_note")) if n]
    if args.out:
        notes.append(f"wrote the checked instance to {args.out} (replay: verify theorem {request.id} --hmm {args.out})")
    if args.certificate:
        notes.append(f"wrote the certificate to {args.certificate} (check: python -m headprompt.certcheck "
                     f"{args.certificate})")
    if args.json:
        emit_json(report.data)
        for note in notes:                        # the JSON schema has no notes field: stderr
            print(f"note: {note}", file=sys.stderr)
    else:
        render_report(report.data)
        if args.device != "cpu":                  # asked for: say where the float kernels ran
            console().print(f"device: {report.data['device']}", markup=False)
        for note in notes:
            console().print(f"note: {note}", markup=False)
    return report.exit_code
