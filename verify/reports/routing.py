"""Which path a ``verify theorem 3.3|3.6`` request takes, for every input kind: the dense path
(:mod:`.vanilla`, every entry as a Fraction) or the large path (:mod:`.scale`, the sparse exact
form), the cheaper that can decide (:func:`~headprompt.verify.runtime.paths.choose_path`).

- an ``.npz`` file: priced from its headers (sizes and nonzeros) before anything is read;
- a JSON file or an exact :class:`HMM` object: priced from the model's shapes and nonzeros once
  it is read (the reading is common to both paths), before any check
  (:func:`route_loaded`); on the large path it is checked through its sparse exact form
  (:func:`large_form`: per-column integer numerators), with the same verdicts;
- a :class:`LargeHMM` object: the large path; a generated instance: its size's generator
  (:data:`~.scale.DENSE_MAX_STATES`), since the two generators differ.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...models.exceptions import InputError
from ...models.hmm.large import LargeHMM
from ..runtime.cost import stays_exact
from ..runtime.paths import choose_path, dense_path_estimate, large_fallback_seconds, model_counts

__all__ = ["path_for", "use_scale_path", "route_loaded", "large_form", "large_blocked", "dense_refused"]

INT64 = 2 ** 63


def _asked(args) -> str:
    return getattr(args, "path", None) or "auto"


def _named(args, value: str) -> str:
    """``--path VALUE`` or ``path='VALUE'``, as the user wrote it."""
    return args.shown("path", value) if hasattr(args, "shown") else f"--path {value}"


def _choose(args, dense, large, **blocked) -> dict:
    """:func:`choose_path` with the request's ``--path`` said in ``why``; when the cost model picks
    the large path, ``why`` also says how to keep the dense path's robustness block."""
    path = choose_path(dense, large, **blocked)
    asked = _asked(args)
    if asked != "auto" and path["chosen"] == asked:
        path["why"] = f"asked ({_named(args, asked)}); the cost model's estimates are beside it"
    elif asked == "auto" and path["chosen"] == "large" and not blocked.get("dense_blocked") and dense is not None:
        path["why"] += (f"; the dense path's report also carries the robustness block ({_named(args, 'dense')} "
                        f"runs it)")
    return path


def dense_refused(args) -> str | None:
    """``"--path large"`` when the request asks for the large path, else None."""
    return f"{_named(args, 'large')} asked" \
        if _asked(args) == "large" else None


def large_blocked(args) -> str | None:
    """Why the large path cannot decide the request (an option only the dense path serves, or
    ``--path dense``), else None."""
    if _asked(args) == "dense":
        return f"{_named(args, 'dense')} asked"
    if args.witness is not None:
        return "a given witness"
    if args.exhaustive:
        return "--exhaustive"
    if args.mode == "exact":
        return "exact mode"
    if getattr(args, "classes", None):
        return "several classes"
    if getattr(args, "certificate", None):
        return "a certificate"
    if args.out and not str(args.out).lower().endswith(".npz"):
        return "--out to a JSON file"
    return None


def _estimates(args, H: int, X: int, nnz_A: int, nnz_W: int, *, read: bool, bits=None) -> tuple[dict, dict]:
    """``(dense, large)`` estimates of this request (``read``: a file still to be read; an
    in-memory model is priced without the reading, and the large path with its conversion;
    ``bits()``: the bits of ``A``'s and ``W``'s common denominators, asked only for a run the
    dense path keeps exact)."""
    from .scale import ADVERSARIAL, estimate

    samples = 10000 if args.samples is None else int(args.samples)
    length = 8 if args.length is None else args.length
    count = samples + ADVERSARIAL
    large = estimate(H, X, nnz_A, nnz_W, count, length, all_columns=args.id == "3.3" and H <= X,
                     three_three=args.id == "3.3", read=read)
    large["seconds"] = round(large["seconds"] + large_fallback_seconds(count, length, nnz_A, H), 1)
    exact = args.mode is None and stays_exact(H, X, count, length)
    return dense_path_estimate(H, X, nnz_A, count, length, read=read, near_tie_work=_near_tie_work(H, X, length),
                               exact=exact, nnz_W=nnz_W, exact_bits=(bits() if exact and bits else 64)), large


def _file_bits(path) -> int:
    """Bits of the common denominators of ``A``'s and ``W``'s columns in an exact ``.npz`` file
    (its ``A.den`` and ``W.den`` entries alone are read; 64 for a float file)."""
    with np.load(path, allow_pickle=False) as z:
        if "A.den" not in z.files or "W.den" not in z.files:
            return 64
        return sum(math.lcm(*{int(d) for d in z[f"{name}.den"].tolist()}).bit_length() for name in ("A", "W"))


def _model_bits(hmm) -> int:
    """:func:`_file_bits` of an in-memory exact HMM."""
    from ...models.hmm.rational import common_denominator

    return sum(common_denominator(np.asarray(m, dtype=object).reshape(-1).tolist()).bit_length()
               for m in (hmm.A, hmm.W))


def _near_tie_work(H: int, X: int, length: int) -> int:
    """Multiply-adds of the dense path's exact near-tie search on these sizes (binary task):
    the lengths :func:`~headprompt.verify.evidence.sequences.near_tie_reach` allows, each its
    candidates x length x ``|H|^2``, as that function counts them."""
    from types import SimpleNamespace

    from ..evidence.sequences import near_tie_reach

    shape = SimpleNamespace(mu=np.zeros(H), num_tokens=X, num_states=H)
    reach = near_tie_reach(shape, length)
    return sum((X ** t if X ** t <= 512 else 16 * X) * t * H * H for t in range(1, reach + 1))


def path_for(args) -> dict:
    """The path of a request, chosen before any work: ``{"chosen": "dense" | "large", "why",
    "seconds", "estimates"}``; for a JSON file or an HMM object ``"pending": True`` (priced by
    :func:`route_loaded` once the model is read)."""
    from ...models.hmm.files import NPZ_MAX_DENSE_STATES
    from ...models.hmm.npz import is_npz, npz_counts
    from .scale import DENSE_MAX_STATES, DENSE_MAX_TOKENS

    if args.hmm and is_npz(args.hmm):
        H, X, nnz_A, nnz_W = npz_counts(args.hmm)
        dense, large = _estimates(args, H, X, nnz_A, nnz_W, read=True, bits=lambda: _file_bits(args.hmm))
        if getattr(args, "ray", None):
            return choose_path(dense, large, dense_blocked="--ray splits the large path's checks")
        too_big = H > NPZ_MAX_DENSE_STATES or X > NPZ_MAX_DENSE_STATES
        if too_big and _asked(args) == "dense":
            raise InputError(f"{_named(args, 'dense')}: the dense path "
                             f"reads at most {NPZ_MAX_DENSE_STATES} states and tokens, this file has {H} and {X}")
        return _choose(args, dense, large, dense_blocked=(f"above {NPZ_MAX_DENSE_STATES} states or tokens"
                                                          if too_big else dense_refused(args)),
                       large_blocked=large_blocked(args))
    model = getattr(args, "model", None)
    if isinstance(model, LargeHMM):
        return choose_path(None, None, dense_blocked="a LargeHMM object") | {"chosen": "large",
                                                                             "why": "a LargeHMM object"}
    if args.hmm or model is not None:
        return choose_path(None, None) | {"why": "priced once read", "pending": True}
    hidden = 25 if args.hidden is None else args.hidden
    if hidden > DENSE_MAX_STATES or (args.vocab or 10) > DENSE_MAX_TOKENS:
        return choose_path(None, None) | {"chosen": "large", "why": f"generated above {DENSE_MAX_STATES} states or "
                                                                    f"{DENSE_MAX_TOKENS} tokens (block-sparse generator)"}
    return choose_path(None, None) | {"why": f"generated at most {DENSE_MAX_STATES} states and tokens (dense generator)"}


def use_scale_path(args) -> bool:
    """Whether a request goes to the large path before anything is read (:func:`path_for`; a
    JSON file or an HMM object is priced once read, :func:`route_loaded`)."""
    return path_for(args)["chosen"] == "large"


def _columns(mat) -> tuple[list, list, list, np.ndarray] | str:
    """CSC parts of an exact ``|rows| x |cols|`` Fraction matrix over per-column common
    denominators, or why it has none in int64."""
    mat = np.asarray(mat, dtype=object)
    data, indices, indptr, dens = [], [], [0], []
    for j in range(mat.shape[1]):
        col = mat[:, j]
        rows = [i for i, v in enumerate(col.tolist()) if v != 0]
        d = math.lcm(*(Fraction(col[i]).denominator for i in rows)) if rows else 1
        nums = [int(Fraction(col[i]) * d) for i in rows]
        if d >= INT64 or any(abs(n) >= INT64 for n in nums):
            return "entries beyond int64 over a column's common denominator"
        data += nums
        indices += rows
        indptr.append(len(indices))
        dens.append(d)
    return data, indices, indptr, np.array(dens, dtype=np.int64)


def _over_one(values) -> tuple[list[int], int]:
    vals = [Fraction(v) for v in np.asarray(values, dtype=object).reshape(-1).tolist()]
    d = math.lcm(*(v.denominator for v in vals)) if vals else 1
    return [int(v * d) for v in vals], d


def large_form(hmm) -> LargeHMM | str:
    """The sparse exact form of an exact vanilla :class:`HMM` (the same values: per-column
    integer numerators over int64 denominators), or why the large path cannot take it."""
    from scipy import sparse

    if not getattr(hmm, "exact", False):
        return "a float model"
    if hmm.mu is None or np.ndim(hmm.mu) != 1:
        return "several classes" if hmm.mu is not None else "no task vector"
    parts = {}
    for name in ("A", "W"):
        got = _columns(getattr(hmm, name))
        if isinstance(got, str):
            return f"{name}: {got}"
        data, indices, indptr, den = got
        shape = np.asarray(getattr(hmm, name)).shape
        parts[name] = (sparse.csc_array((np.array(data, dtype=np.int64), np.array(indices, dtype=np.int64),
                                         np.array(indptr, dtype=np.int64)), shape=shape), den)
    pi0, dpi = _over_one(hmm.pi0)
    mu, dmu = _over_one(hmm.mu)
    if dpi >= INT64 or dmu >= INT64:
        return "pi0 or mu: a common denominator beyond int64"
    return LargeHMM.create(parts["A"][0], parts["A"][1], parts["W"][0], parts["W"][1], pi0, dpi, mu, dmu)


def route_loaded(args, hmm, instance: dict) -> tuple[dict, dict | None]:
    """``(path, report)`` for a JSON file or an HMM object once read: the cost model's choice
    from the model's shapes and nonzeros; ``report`` is the large path's report when it is
    chosen (the model checked through :func:`large_form`), else None (the dense path runs)."""
    import copy

    from .scale import theorem_at_scale

    H, X, nnz_A, nnz_W = model_counts(hmm)
    dense, large = _estimates(args, H, X, nnz_A, nnz_W, read=False,
                              bits=(lambda: _model_bits(hmm)) if getattr(hmm, "exact", False) else None)
    blocked = large_blocked(args)
    if blocked is None and ("rationalized" in instance or "_conversion" in instance):
        blocked = "a rationalized model (the dense path reports the conversion)"
    if blocked is not None and _asked(args) == "large":
        raise InputError(f"{_named(args, 'large')}: the large path "
                         f"cannot decide this request ({blocked})")
    path = _choose(args, dense, large, large_blocked=blocked, dense_blocked=dense_refused(args))
    if path["chosen"] == "large" or getattr(args, "ray", None):
        form = large_form(hmm)
        if isinstance(form, str) and _asked(args) == "large":
            raise InputError(f"{_named(args, 'large')}: the large path "
                             f"cannot take this instance ({form})")
        if isinstance(form, str):
            if getattr(args, "ray", None):
                raise InputError(f"{args.option('ray') if hasattr(args, 'option') else '--ray'} splits the checks "
                                 f"of the large-model path, which cannot take this instance ({form})")
            return choose_path(dense, large, large_blocked=form), None
        if path["chosen"] == "dense":
            path = choose_path(dense, large, dense_blocked="--ray splits the large path's checks")
        given = copy.copy(args)                      # the same request, on the model's sparse exact form
        for name, value in (("hmm", None), ("model", form)):
            object.__setattr__(given, name, value)
        report = theorem_at_scale(given)
        report["instance"].update(source=instance.get("source"), seed=instance.get("seed"))
        report["path"] = path
        return path, report
    return path, None
