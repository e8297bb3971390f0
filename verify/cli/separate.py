"""``verify separate [--hmm FILE] [--seed S] [--certificate-dir DIR] [--json]``: the paper's
separations, each on one instance, side by side (``verify/studies/separation.py``).

Vanilla HMM: head tuning provably fails (a Motzkin certificate: no linear head on ``G_1``)
while prompt tuning provably succeeds (Theorem 3.6's exact identity, every ``x`` with
``Pr(x) > 0``). Memory-augmented HMM: the attention head of Theorem 4.3 recovers ``F*`` on every
``x`` in ``R`` (exact identities) while no linear head on the memory model's ``G_1`` does (a
Motzkin certificate). ``--hmm`` runs the pair of that instance's kind on it. Exit 0 when every
half is proven, 1 when one is not, 2 bad input.
"""

from __future__ import annotations

import os

from ...models.exceptions import InputError
from ..reports.render import console, emit_json
from ..runtime.output_paths import probe_writable_dir
from .options import add_json_option, ascii_int, path_arg

__all__ = ["add_parser", "run"]

DESCRIPTION = ("Show on one instance each that head tuning provably fails where prompt tuning provably "
               "succeeds (vanilla HMM: Motzkin certificate vs Theorem 3.6's identity), and that an attention "
               "head recovers the task on every sequence in R where no linear head on G_1 can (memory HMM). "
               "--certificate-dir writes the four certificates for python -m headprompt.certcheck. Exit 0 "
               "when every half is proven, 5 when one is not (nothing is claimed for it: no proof), 2 bad input.")


def add_parser(sub) -> None:
    p = sub.add_parser("separate", help="head vs prompt tuning (and attention) on one instance, with certificates",
                       description=DESCRIPTION)
    p.add_argument("--hmm", metavar="FILE", default=None, type=path_arg,
                   help="use this instance (vanilla: the head/prompt pair; memory: the attention/linear pair)")
    p.add_argument("--seed", type=ascii_int, default=0, help="seed of the generated instances (default 0)")
    p.add_argument("--certificate-dir", metavar="DIR", default=None, type=path_arg,
                   help="write the certificates of the proven halves into this folder (created if missing)")
    add_json_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..studies.separation import separate

    vanilla = memory = None
    which = ("vanilla", "memory")
    if args.hmm:
        from ...models.hmm.files import load_instance
        from ...models.hmm.values import MemoryHMM

        model = load_instance(args.hmm)
        if isinstance(model, MemoryHMM):
            memory, which = model, ("memory",)
        else:
            vanilla, which = model, ("vanilla",)
    if args.certificate_dir is not None:
        d = args.certificate_dir
        if os.path.exists(d) and not os.path.isdir(d):
            raise InputError(f"--certificate-dir {d}: exists and is not a folder")
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--certificate-dir {d}: cannot create it ({exc.strerror})") from None
        probe_writable_dir(d, message=f"--certificate-dir {d}: cannot write a file there")
    result = separate(vanilla=vanilla, memory=memory, seed=args.seed, certificate_dir=args.certificate_dir,
                      which=which, source=args.hmm)
    if args.json:
        emit_json(result)
    else:
        render(result)
    # a half not shown proves nothing: 5 (no proof), never 1, which scripts read as a refutation
    return 0 if result["proven"] else 5


def _mark(half: dict) -> str:
    return "[green]PROVEN[/green]" if half["proven"] else "[red]NOT SHOWN[/red]"


def render(result: dict) -> None:
    """Both pairs side by side, each half with its evidence and certificate."""
    out = console()
    if "vanilla" in result:
        v = result["vanilla"]
        inst = v["instance"]
        out.print(f"[bold]vanilla HMM[/bold] (|H| = {inst['hidden']}, |X| = {inst['vocab']}, "
                  f"{inst.get('source', '')}; assumptions {v['assumptions']})")
        out.print(f"  head tuning fails    {_mark(v['head'])}: {v['head']['what']}")
        out.print(f"  prompt tuning works  {_mark(v['prompt'])}: {v['prompt']['what']}")
        for key in ("head", "prompt"):
            if v[key]["certificate"]:
                out.print(f"    certificate: {v[key]['certificate']}")
    if "memory" in result:
        m = result["memory"]
        inst = m["instance"]
        out.print(f"[bold]memory-augmented HMM[/bold] ({inst.get('cells')} cells, |M| = {inst.get('memory')}, "
                  f"|S| = {inst.get('syntax_states')}, |X| = {inst.get('vocab')}, {inst.get('source', '')}; "
                  f"assumptions {m['assumptions']})")
        out.print(f"  attention head works {_mark(m['attention'])}: {m['attention']['what']}")
        out.print(f"  linear head fails    {_mark(m['linear'])}: {m['linear']['what']}")
        for key in ("attention", "linear"):
            if m[key]["certificate"]:
                covers = m[key].get("certificate_covers")
                out.print(f"    certificate: {m[key]['certificate']}" + (f" (covers {covers})" if covers else ""))
    verdict = "every half proven" if result["proven"] else "NOT every half proven"
    out.print(f"{verdict}; time {result['seconds']:.1f} s"
              + ("" if result["certificates_written"] else " (add --certificate-dir DIR to write the certificates)")
              + ("; check each pair: python -m headprompt.certcheck --separation FILE FILE"
                 if result["certificates_written"] else ""))
