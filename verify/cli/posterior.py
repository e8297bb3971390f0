"""``verify posterior --hmm FILE (--seq "0 3 1 2" | --seq-file FILE) [--mode exact|float] [--json]``
(SPEC section 4).

Prints ``P[H_0 | X_{1:T} = x]`` (``P[M_{j*} | X_{1:T} = x]`` for a memory HMM) and
``G_i(x) = P[X_i | X_{-i} = x_{-i}]`` for every position ``i``. Long sequences go in a file
(``--seq-file``; a command-line argument holds about 65,000 tokens at most). Exact output grows
as ``T^2 |X|`` digits, so exact mode refuses sequences beyond :data:`MAX_EXACT_WORK` up front
(float mode takes them).
"""

from __future__ import annotations

import numpy as np

from ...models.inference import exact as ie
from ...models.inference import floats as iff
from ...models.hmm.values import HMM
from ...models.exceptions import InputError, LimitError
from ...models.hmm.files import load_instance, read_text_file
from ...models.hmm.rational import format_array

from ..reports import rationalized
from .sequence_text import parse_sequence
from ..reports.rationalized import rationalized_source
from ..reports.render import console, emit_json
from .options import add_rationalize_option, path_arg

__all__ = ["add_parser", "run", "posterior_result", "MAX_EXACT_WORK", "MAX_FLOAT_WORK"]

DESCRIPTION = ("Print the posterior P[H_0 | X = x] (P[M_j* | X = x] for a memory HMM), the task's mu . P "
               "and F*(x), and every conditional G_i(x) for one token sequence. Decimals by default; "
               "--exact prints the exact rationals. Exit 0, or 2 on bad input (including a sequence the "
               "HMM cannot emit).")


MAX_EXACT_WORK = 10_000_000
"""Exact mode: ``T^2 max(|X|, states)`` (output digits and big-integer work grow so)."""

MAX_FLOAT_WORK = 50_000_000
"""Float mode: ``T max(|X|, states)`` entries."""


def add_parser(sub) -> None:
    p = sub.add_parser("posterior", help="exact or float posterior and conditionals G_i(x)",
                       description=DESCRIPTION)
    p.add_argument("--hmm", required=True, metavar="FILE", type=path_arg,
                   help="the instance file (JSON: kind, A, W, pi0, mu, ...; a memory HMM too)")
    seq = p.add_mutually_exclusive_group(required=True)
    seq.add_argument("--seq", help='token sequence, e.g. "0 3 1 2" (tokens separated by spaces or commas: '
                                   '"0,3,1,2" is the same sequence)')
    seq.add_argument("--seq-file", metavar="FILE", type=path_arg, help="read the token sequence from a file (spaces, commas or newlines)")
    p.add_argument("--mode", choices=("exact", "float"), default="exact",
                   help="exact: rational arithmetic (the default); float: float64, for long sequences "
                        "(exit 5: nothing is proven)")
    p.add_argument("--exact", action="store_true",
                   help="print the exact rationals instead of decimals (exact mode; JSON always has them)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_rationalize_option(p)
    p.set_defaults(run=run)


def posterior_result(model, tokens: list[int], mode: str) -> dict:
    """The result dict: ``sequence``, ``mode``, ``posterior`` and ``G`` (``G[i]`` is the paper's
    ``G_{i+1}(x)``); exact values as ``"p/q"`` strings, float values as numbers."""
    if mode == "exact":
        if isinstance(model, HMM):
            post = ie.posterior_h0(model, tokens)
            G = ie.conditionals(model, tokens)
        else:
            post = ie.memory_posterior(model, tokens)
            G = ie.conditionals(model.lift(), tokens)
        post_out, G_out = format_array(np.array(post, dtype=object)), format_array(np.array(G, dtype=object))
        possible = any(v != 0 for v in post)
    else:
        f = model.to_float()
        if isinstance(f, HMM):
            post = iff.posterior_h0(f, [tokens])[0]
            G = iff.conditionals(f, [tokens])[0]
        else:
            post = iff.memory_posterior(f, [tokens])[0]
            G = iff.conditionals(f.lift(), [tokens])[0]
        post_out, G_out = post.tolist(), G.tolist()
        possible = bool(np.any(post != 0))
    return {"sequence": tokens, "mode": mode, "posterior": post_out, "G": G_out, "_possible": possible}


def change_bounds(model, tokens: list[int], conversion) -> dict:
    """Bounds (eq. 2 of :mod:`headprompt.models.hmm.rationalize`) on how far the posterior and each
    ``G_i(x)`` of the given float model can be from the exact ones printed, as floats rounded
    up. A memory HMM is bounded through its lifted chain (the memory drawn once at the start)."""
    import math
    from fractions import Fraction

    from ..evidence.robustness import sequence_probability

    chain = model if isinstance(model, HMM) else model.lift()
    T = len(tokens)
    variants = [tuple(tokens[:i] + [z] + tokens[i + 1:]) for i in range(T) for z in range(chain.num_tokens)]
    prob = sequence_probability(chain, [tuple(tokens)] + variants)
    up = lambda q: float(q) if Fraction(float(q)) >= q else math.nextafter(float(q), math.inf)  # noqa: E731
    G = [up(conversion.conditional_bound(T, sum(prob[tuple(tokens[:i] + [z] + tokens[i + 1:])]
                                                for z in range(chain.num_tokens)))) for i in range(T)]
    return {"posterior_change_at_most": up(conversion.conditional_bound(T, prob[tuple(tokens)])),
            "G_change_at_most": G}


def run(args) -> int:
    if args.exact and args.mode == "float":       # float values have no exact rationals to print
        raise InputError("--exact prints exact rationals, which --mode float does not compute; "
                         "leave out one of the two")
    model, conversion = rationalized_source(args.hmm, args.rationalize)
    if conversion is None:
        with rationalized.hinting_float_models(None):
            model = load_instance(args.hmm, exact=args.mode == "exact")
    if args.seq_file is not None:
        tokens = parse_sequence(read_text_file(args.seq_file, what="sequence file"), model.num_tokens,
                                name=f"--seq-file {args.seq_file}")
    else:
        tokens = parse_sequence(args.seq, model.num_tokens)
    check_length(model, len(tokens), args.mode)
    result = posterior_result(model, tokens, args.mode)
    possible = result.pop("_possible")
    if conversion is not None:
        result["rationalized"] = {**conversion.to_dict(), **change_bounds(model, tokens, conversion)}
    result.update(_task_block(model, result))
    result["outside_support"] = not possible
    if not possible:
        result.update({k: None for k in ("mu_dot_posterior", "label") if k in result})
        # Pr(X = x) = 0: the posterior is undefined (shown as 0) and F*(x) means nothing; bad input
        if args.json:
            emit_json(result)
        raise InputError(f"the sequence {' '.join(map(str, tokens))} has probability 0 under this HMM "
                         "(Pr(X = x) = 0): its posterior is undefined; give a sequence the HMM can emit")
    # float values are not proven: exit 5, so no script reads them as exact
    code = 0 if args.mode == "exact" else 5
    if args.json:
        emit_json(result)
        return code
    _render(model, result, exact=args.exact)
    return code


def _task_block(model, result: dict) -> dict:
    """``mu . P`` and ``F*(x)`` when the instance has a task: ``mu_dot_posterior`` (a string
    ``"p/q"`` in exact mode, a number in float mode; a list of class scores for a task with
    several classes) and ``label`` (``F*(x)``, decided exactly in exact mode)."""
    from fractions import Fraction

    from ...models.hmm.rational import format_fraction
    from ...models.hmm.task import is_multiclass, task_label, task_margin, task_scores

    mu = getattr(model, "mu", None)
    if mu is None:
        return {}
    exact = result["mode"] == "exact"
    post = [Fraction(v) for v in result["posterior"]] if exact else [float(v) for v in result["posterior"]]
    label = int(task_label(mu, post))
    as_out = (lambda s: format_fraction(Fraction(s))) if exact else float   # noqa: E731
    if is_multiclass(mu):
        shown = [as_out(s) for s in task_scores(mu, post)]
    else:
        shown = as_out(task_margin(mu, post))
    return {"mu_dot_posterior": shown, "label": label}


def check_length(model, length: int, mode: str) -> None:
    """Refuse a sequence too long for ``mode`` before any work (SPEC section 2).

    Raises:
        LimitError: naming the length, the limit and the way forward.
    """
    states = model.lift().num_states if not isinstance(model, HMM) else model.num_states
    width = max(model.num_tokens, states)
    if mode == "exact" and length * length * width > MAX_EXACT_WORK:
        longest = int((MAX_EXACT_WORK / width) ** 0.5)
        raise LimitError(f"a sequence of {length} tokens: exact posteriors and G_i grow as T^2 max(|X|, states) "
                         f"= {length * length * width} digits of work; the limit is {MAX_EXACT_WORK}, so at most "
                         f"{longest} tokens for this instance (use --mode float, or a shorter sequence)")
    if length * width > MAX_FLOAT_WORK:
        raise LimitError(f"a sequence of {length} tokens: T max(|X|, states) = {length * width} entries; the limit "
                         f"is {MAX_FLOAT_WORK} (use a shorter sequence)")


PRINTED_TOKENS = 64       # the widest G table printed (--json has every value)


def _shown(value, exact: bool) -> str:
    """A value as printed: the rational itself with ``--exact``, else a decimal (6 significant
    digits; exact zeros and ones stay ``0`` and ``1``)."""
    from fractions import Fraction

    if isinstance(value, str):
        if exact:
            return value
        q = Fraction(value)
        if q.denominator == 1:
            return str(q)
        from decimal import Context, Decimal

        return f"{Context(prec=6).divide(Decimal(q.numerator), Decimal(q.denominator)):g}"    # any magnitude
    return f"{value:.6g}"


def _render(model, result: dict, *, exact: bool = False) -> None:
    from rich.table import Table

    out = console()
    memory = not isinstance(model, HMM)
    what = f"P[M_{model.target_cell + 1} | X = x]" if memory else "P[H_0 | X_{1:T} = x]"
    decimals = result["mode"] == "exact" and not exact
    out.print(f"sequence {' '.join(map(str, result['sequence']))}   mode: {result['mode']}"
              + ("   (decimals rounded to 6 digits; --exact prints the exact rationals)" if decimals else ""))
    table = Table(title=what)
    table.add_column("memory value" if memory else "hidden state", justify="right")
    table.add_column("probability", justify="right")
    for k, v in enumerate(result["posterior"]):
        table.add_row(str(k), _shown(v, exact))
    out.print(table)
    if "label" in result:
        score = result["mu_dot_posterior"]
        shown = (", ".join(_shown(s, exact) for s in score) if isinstance(score, list) else _shown(score, exact))
        if isinstance(score, list):
            out.print(f"task: mu_c . P = [{shown}]  ->  F*(x) = {result['label']} (argmax, ties to the largest class)")
        else:
            out.print(f"task: mu . P = {shown}  ->  F*(x) = {result['label']} (1 when mu . P >= 0)")
    if model.num_tokens > PRINTED_TOKENS:        # a table millions of columns wide helps nobody
        out.print(f"G_i(x) = P[X_i = z | X_-i = x_-i] has |X| = {model.num_tokens} columns, more than the "
                  f"{PRINTED_TOKENS} printed; --json gives every value")
        return
    g = Table(title="G_i(x) = P[X_i = z | X_-i = x_-i]  (rows: position i, 1-based; columns: token z)")
    g.add_column("i", justify="right")
    g.add_column("x_i", justify="right")
    for z in range(model.num_tokens):
        g.add_column(f"z={z}", justify="right")
    for i, row in enumerate(result["G"]):
        g.add_row(str(i + 1), str(result["sequence"][i]), *[_shown(v, exact) for v in row])
    out.print(g)
