"""Sequence checks of the large-model path (:mod:`headprompt.verify.reports.scale`): certified decisions batch by batch
over the nonzeros of ``A`` (or one GEMM per step for a dense ``A``), the exact integer fallback
for what the bound cannot decide, a few exact cross-checks, and the same split into Ray tasks."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np

from ....models.exceptions import InternalError, LimitError
from ....models.hmm.large import LargeHMM
from ....models.hmm.task import label, labels
from ....models.inference import bounds as ib
from ....models.inference.device_messages import DEVICE_BATCH, backward_contractions, current_device
from ....models.inference.sparse import BATCH, exact_backward0
from ...runtime.cost import MAX_SECONDS, large_exact_seconds

__all__ = ["check_sequences_large", "check_on_ray", "cross_check", "DENSE_KERNEL_DENSITY", "CROSS_CHECKS"]

DENSE_KERNEL_DENSITY = 0.05   # above this share of nonzeros, A runs through the dense GEMM kernel
CROSS_CHECKS = 3


def _exact_decide(model, rows, lam, seq):
    """``(possible, expected, got, tie, zero_norm, identity)`` of one sequence, exactly: the
    rows' dot products with the integer backward message (a positive multiple of ``beta``)."""
    beta, _ = exact_backward0(model, seq)
    v = [_dot(r, beta) for r in rows[:4]]
    identity = v[0] == lam * v[1] and v[2] > 0 and v[3] > 0
    return v[3] > 0, label(v[1]), label(v[0]), v[1] == 0, v[2] == 0, bool(identity)


def _dot(row, beta) -> Fraction:
    """``sum_h row[h] beta[h]`` exactly, adding the integer products of entries that share a
    denominator first (rows carry a few distinct denominators; adding thousands of Fractions
    one by one would reduce each partial sum)."""
    by_den: dict[int, int] = {}
    for r, bv in zip(row, beta.tolist()):
        if r and bv:
            by_den[r.denominator] = by_den.get(r.denominator, 0) + r.numerator * bv
    return sum((Fraction(n, d) for d, n in by_den.items()), Fraction(0))


def check_on_ray(model: LargeHMM, rows, lam, tokens: np.ndarray, certified: bool, address: str,
                  progress=None) -> dict:
    """:func:`check_sequences_large` split into Ray tasks (one chunk of sequences each; the model and the rows
    are put in the object store once); the columns are joined in input order, so every
    decision is the one a local run makes (each sequence is decided alone)."""
    from ...runtime.cluster import ray_session

    with ray_session(address) as ray:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = max(BATCH, -(-len(tokens) // (2 * workers)))
        remote = ray.remote(check_sequences_large)
        model_ref, rows_ref = ray.put(model), ray.put(rows)
        refs = [remote.remote(model_ref, rows_ref, lam, tokens[lo:lo + size], certified)
                for lo in range(0, len(tokens), size)]
        parts = []
        for ref in refs:
            parts.append(ray.get(ref))
            if progress is not None:
                progress(len(parts[-1]["expected"]))
    if not parts:
        return check_sequences_large(model, rows, lam, tokens, certified)
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def check_sequences_large(model: LargeHMM, rows, lam, tokens: np.ndarray, certified: bool, progress=None) -> dict:
    """Certified (or float) decisions for every row of ``tokens``, batch by batch; the bound's
    undecided sequences are decided exactly. The float kernel runs where
    :func:`~headprompt.models.inference.device_messages.use_device` says (the host's numpy by
    default; the exact fallback always on the host)."""
    f = model.float_form()
    pos, neg, rmin, usable = ib.split_rows(np.array(rows[:5], dtype=object))
    A = f["A"]
    if A.nnz > DENSE_KERNEL_DENSITY * A.shape[0] ** 2:         # a dense A: one GEMM per step beats the nonzeros
        A = np.ascontiguousarray(A.toarray())
    chain = ib.make_chain(A, f["pi0"], f["W"], True)
    usable = usable and chain.usable
    floor = chain.floor_for(rmin)
    n, t = tokens.shape
    count = ib.backward_count(t, model.num_states) + 1 + model.num_states
    cols = {k: np.zeros(n, dtype=bool) for k in ("possible", "tie", "zero_norm", "identity", "fallback")}
    expected, got = np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8)
    device = current_device()                   # None: the numpy kernel; else torch on that device
    batch = BATCH if device is None else DEVICE_BATCH
    for lo in range(0, n, batch):
        idx = np.ascontiguousarray(tokens[lo:lo + batch].T)
        m = backward_contractions(chain, idx, pos, neg, track=certified, device=device)
        P, N = m["P"], m["N"]
        sl = slice(lo, lo + idx.shape[1])
        if not certified:
            v = P - N
            cols["possible"][sl], expected[sl], got[sl] = v[:, 3] > 0, labels(v[:, 1]), labels(v[:, 0])
            cols["tie"][sl], cols["zero_norm"][sl] = v[:, 1] == 0, v[:, 2] == 0
        else:
            sign, decided, _ = ib.certified_signs(P, N, count)
            ok = decided[:, [0, 1, 4]].all(axis=1) & (m["minpos"] >= floor) & usable
            cols["possible"][sl], expected[sl], got[sl] = sign[:, 3] > 0, labels(sign[:, 1]), labels(sign[:, 0])
            cols["tie"][sl], cols["zero_norm"][sl] = sign[:, 1] == 0, sign[:, 2] <= 0
            cols["identity"][sl] = (sign[:, 4] == 0) & (sign[:, 2] > 0) & (sign[:, 3] > 0)
            cols["fallback"][sl] = ~ok
        if progress is not None:
            progress(idx.shape[1])
    redo = np.flatnonzero(cols["fallback"])
    if redo.size:
        est = large_exact_seconds(redo.size, t, model.A.nnz, model.num_states)
        if est > MAX_SECONDS:
            raise LimitError(f"{redo.size} sequences could not be decided by the certified bound and redoing them "
                             f"exactly would take about {est / 60:.0f} minutes; use fewer --samples")
        for k in redo.tolist():
            d = _exact_decide(model, rows, lam, tokens[k].tolist())
            cols["possible"][k], expected[k], got[k], cols["tie"][k], cols["zero_norm"][k], cols["identity"][k] = d
    return {"expected": expected, "got": got, **cols}


def cross_check(model, rows, lam, tokens, res, mode) -> None:
    """A few sequences decided again in exact integer arithmetic; a mismatch is a bug."""
    if mode == "float" or not len(tokens):
        return
    for k in random.Random(0).sample(range(len(tokens)), min(CROSS_CHECKS, len(tokens))):
        possible, expected, got, *_ = _exact_decide(model, rows, lam, tokens[k].tolist())
        if (bool(res["possible"][k]), int(res["expected"][k]), int(res["got"][k])) != (possible, expected, got):
            raise InternalError(f"certified and exact checks differ on {tokens[k].tolist()}")
