"""Certificates that no linear head works (Assumption 3.1 fails), and their independent check.

Motzkin's transposition theorem: there is no ``b`` with ``b . g_k >= 0`` on every label-1 row
and ``b . g_k < 0`` on every label-0 row iff there are ``y >= 0`` on the label-0 rows, not all
zero, and ``z >= 0`` on the label-1 rows with ``sum_k y_k g_k - sum_k z_k g_k = 0``. (If such
``y, z`` exist, ``b . sum y g < 0 <= b . sum z g`` contradicts their equality.)

We look for ``y, z`` with a linear program (scipy's HiGHS, in floats), take the support of its
vertex solution, re-solve that small system exactly in rationals, and keep the certificate
only if the exact solution is nonnegative and the identity holds exactly. Features are
``g_k = G_1(x'_k)`` with ``x'_k = (∅, x_k)``; labels ``F*(x_k)``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np
from scipy.optimize import linprog

from ..models.linalg import from_fmpq_mat, to_fmpq_mat
from ..models import inference_exact as ie
from ..models.hmm import HMM
from ..models.rational import format_fraction

__all__ = ["features_and_labels", "find_no_linear_head_certificate", "check_no_linear_head_certificate"]


def features_and_labels(hmm: HMM, sequences: Sequence[Sequence[int]]):
    """Exact ``G_1(x')`` (``x' = (∅, x)``) and ``F*(x)`` for each sequence with ``Pr(x) > 0``."""
    feats, labels, kept = [], [], []
    filler = [Fraction(1)] * hmm.num_states
    for seq in sequences:
        post = ie.posterior_h0(hmm, seq)
        if not any(post):
            continue
        g = ie.gbar(hmm, [filler] + [list(hmm.W[z]) for z in seq], 0)
        feats.append(g)
        labels.append(int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0))
        kept.append(list(seq))
    return kept, feats, labels


def _exact_on_support(G: np.ndarray, signs: np.ndarray, support: list[int], label0: np.ndarray):
    """Solve ``sum_k s_k l_k g_k = 0``, ``sum_{k in label 0} l_k = 1`` on ``support`` exactly."""
    rows = [[signs[k] * G[k, x] for k in support] for x in range(G.shape[1])]
    rows.append([Fraction(1) if label0[k] else Fraction(0) for k in support])
    M = to_fmpq_mat(np.array(rows, dtype=object))
    rhs = to_fmpq_mat(np.array([[Fraction(0)]] * G.shape[1] + [[Fraction(1)]], dtype=object))
    Mt = M.transpose()
    try:
        sol = from_fmpq_mat((Mt * M).solve(Mt * rhs))[:, 0]
    except (ZeroDivisionError, ValueError):
        return None
    if any(v < 0 for v in sol):
        return None
    residual = from_fmpq_mat(M * to_fmpq_mat(sol.reshape(-1, 1)) - rhs)
    if any(v != 0 for v in residual.flat):
        return None
    return sol


def find_no_linear_head_certificate(hmm: HMM, sequences: Sequence[Sequence[int]]) -> dict | None:
    """A certificate (SPEC section 4, ``kind: no-linear-head``) among ``sequences``, or None
    when the LP finds none (the labels are linearly separable there) or the exact re-solve fails.

    The certificate lists only the sequences it uses (the support of ``y`` and ``z``).
    """
    seqs, feats, labels = features_and_labels(hmm, sequences)
    if not seqs or len(set(labels)) < 2:
        return None
    G = np.array(feats, dtype=object)                       # [K, X] exact
    Gf = G.astype(float)
    lab = np.array(labels)
    label0 = lab == 0
    signs = np.where(label0, 1, -1)
    K = len(seqs)
    # variables l_k >= 0; equalities: (signs * l) @ G = 0 and sum_{label 0} l = 1
    A_eq = np.vstack([(Gf * signs[:, None]).T, label0.astype(float)[None, :]])
    b_eq = np.zeros(A_eq.shape[0])
    b_eq[-1] = 1.0
    res = linprog(np.zeros(K), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return None
    support = [int(k) for k in np.argsort(-res.x) if res.x[k] > 1e-12]
    sol = _exact_on_support(G, signs, support, label0)
    if sol is None:
        return None
    used = sorted(support)
    # a positive rescaling keeps a certificate valid; make it integral and primitive
    scale = math.lcm(*(v.denominator for v in sol))
    ints = [int(v * scale) for v in sol]
    g = math.gcd(*ints) or 1
    lam = dict(zip(support, (Fraction(v // g) for v in ints)))
    y = [lam[k] if label0[k] else Fraction(0) for k in used]
    z = [lam[k] if not label0[k] else Fraction(0) for k in used]
    return {"kind": "no-linear-head",
            "sequences": [seqs[k] for k in used],
            "labels": [int(lab[k]) for k in used],
            "features": [[format_fraction(v) for v in feats[k]] for k in used],
            "certificate": {"y": [format_fraction(v) for v in y], "z": [format_fraction(v) for v in z]},
            "searched": K}


def check_no_linear_head_certificate(hmm: HMM, cert: dict) -> tuple[bool, str]:
    """Check a certificate independently: recompute every feature ``G_1(x'_k)`` and label
    ``F*(x_k)`` from the instance (the printed ones are not trusted), then check the signs, the
    zero pattern and ``sum y_k g_k - sum z_k g_k = 0`` exactly. Returns ``(ok, reason)``."""
    seqs = [list(s) for s in cert["sequences"]]
    y = [Fraction(v) for v in cert["certificate"]["y"]]
    z = [Fraction(v) for v in cert["certificate"]["z"]]
    if not (len(y) == len(z) == len(seqs)):
        return False, "y, z and sequences have different lengths"
    kept, feats, labels = features_and_labels(hmm, seqs)
    if len(kept) != len(seqs):
        return False, "a sequence has probability 0"
    if "labels" in cert and [int(v) for v in cert["labels"]] != labels:
        return False, "the printed labels are not F*(x)"
    if any(v < 0 for v in y + z):
        return False, "y or z has a negative entry"
    if any(yk != 0 for yk, l in zip(y, labels) if l == 1) or any(zk != 0 for zk, l in zip(z, labels) if l == 0):
        return False, "y must vanish on label-1 rows and z on label-0 rows"
    if all(v == 0 for v in y):
        return False, "y is all zero"
    total = [sum((yk - zk) * g[x] for yk, zk, g in zip(y, z, feats)) for x in range(hmm.num_tokens)]
    if any(v != 0 for v in total):
        return False, "sum y g - sum z g is not zero"
    return True, "y >= 0 (not all zero) on label-0 rows, z >= 0 on label-1 rows, sum y g = sum z g exactly"
