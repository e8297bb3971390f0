"""Certificates that no linear head works (Assumption 3.1 fails), and their independent check.

Motzkin's transposition theorem: there is no ``b`` with ``b . g_k >= 0`` on every label-1 row
and ``b . g_k < 0`` on every label-0 row iff there are ``y >= 0`` on the label-0 rows, not all
zero, and ``z >= 0`` on the label-1 rows with ``sum_k y_k g_k - sum_k z_k g_k = 0``. (If such
``y, z`` exist, ``b . sum y g < 0 <= b . sum z g`` contradicts their equality.)

We look for ``y, z`` with a linear program (scipy's HiGHS, in floats), take the support of its
vertex solution, re-solve that small system exactly in rationals, and keep the certificate
only if the exact solution is nonnegative and the identity holds exactly. Features are
``g_k = G_1(x'_k)`` with ``x'_k = (∅, x_k)`` (Theorem 3.3: no linear head on the pretrained
model) or, given a prompt ``u``, ``g_k = Gbar_2(u, e(∅), e(x_k))`` (Theorem 3.6: no linear head
works *with that prompt*); labels ``F*(x_k)`` (``models/task.py``).

For the paper's prompt family ``u = 1_B`` (Theorem 3.6's proof), :func:`prompt_family_certificates`
looks for one certificate per nonempty ``B``; when every ``B`` has one, no prompt of the family
works with any linear head (a statement about that family, not about every ``u`` in
``[0, 1]^|H|``).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np
from scipy.optimize import linprog

from ...models.hmm.linalg import from_fmpq_mat, to_fmpq_mat
from ...models.inference import exact as ie
from ...models.exceptions import InputError
from ...models.hmm.values import HMM, MemoryHMM
from ...models.hmm.rational import format_fraction
from ...models.hmm.task import label, task_margin

__all__ = ["features_and_labels", "motzkin_combination", "find_no_linear_head_certificate", "check_no_linear_head_certificate",
           "vacuous_features", "prompt_family_certificates", "check_prompt_family_certificates", "MAX_FAMILY_SUBSETS"]

MAX_FAMILY_SUBSETS = 255          # |H| <= 8 covers every nonempty B; beyond, the smallest B first


def features_and_labels(model, sequences: Sequence[Sequence[int]], prompt: Sequence | None = None):
    """Exact features and ``F*(x)`` for each sequence with ``Pr(x) > 0``: ``G_1(x')``
    (``x' = (∅, x)``), or ``Gbar_2(u, e(∅), e(x))`` for a prompt ``u`` (``e(∅)`` is the
    all-ones vector; ``Gbar_2`` ignores its own input). On a :class:`MemoryHMM` (no prompt):
    the memory model's ``G_1(x')`` (``Gbar`` with the reverse lifting, SPEC section 1) and
    ``F*(x) = 1(mu . P[M_j* | X = x] >= 0)``. Returns ``(sequences, features, labels)``."""
    if isinstance(model, MemoryHMM):
        if prompt is not None:
            raise InputError("a prompt certificate is about a vanilla HMM (Theorem 3.6)")
        return _memory_features_and_labels(model, sequences)
    hmm = model
    feats, labels, kept = [], [], []
    filler = [Fraction(1)] * hmm.num_states
    u = None if prompt is None else [Fraction(v) for v in prompt]
    for seq in sequences:
        post = ie.posterior_h0(hmm, seq)
        if not any(post):
            continue
        emb = [list(hmm.W[z]) for z in seq]
        g = ie.gbar(hmm, [filler] + emb, 0) if u is None else ie.gbar(hmm, [u, filler] + emb, 1)
        feats.append(g)
        labels.append(label(task_margin(hmm.mu, post)))
        kept.append(list(seq))
    return kept, feats, labels


def _memory_features_and_labels(mhmm: MemoryHMM, sequences):
    feats, labels, kept = [], [], []
    filler = [Fraction(1)] * (mhmm.memory_values * mhmm.num_states)
    emission = mhmm.emission_matrix()
    for seq in sequences:
        post = ie.memory_posterior(mhmm, seq)
        if not any(post):
            continue
        g = ie.memory_gbar(mhmm, [filler] + [list(emission[z]) for z in seq], 0)
        feats.append(g)
        labels.append(label(task_margin(mhmm.mu, post)))
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


def motzkin_combination(feats: Sequence[Sequence[Fraction]], labels: Sequence[int]):
    """Motzkin's transposition theorem on exact rows: ``(used, y, z)`` with ``y >= 0`` on
    label-0 rows (not all zero), ``z >= 0`` on label-1 rows and ``sum y_k g_k = sum z_k g_k``
    exactly (integral, primitive; ``used`` the row indices, sorted), or None when the LP finds
    none (the rows are separable by a linear head) or the exact re-solve on its support fails.

    >>> from fractions import Fraction as F
    >>> motzkin_combination([[F(1), F(1)], [F(1, 2), F(1, 2)], [F(1), F(0)]], [0, 1, 1])
    ([0, 1], [Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(2, 1)])
    """
    if not feats or len(set(labels)) < 2:
        return None
    G = np.array([list(g) for g in feats], dtype=object)      # [K, d] exact
    Gf = G.astype(float)
    # the LP only proposes a support: rows rescaled to max |entry| = 1 (a positive rescaling of a
    # row keeps every certificate one), so that tiny probabilities do not vanish below its tolerances
    scale = np.abs(Gf).max(axis=1)
    Gf = Gf / np.where(scale > 0, scale, 1.0)[:, None]
    lab = np.array(labels)
    label0 = lab == 0
    signs = np.where(label0, 1, -1)
    K = len(feats)
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
    return used, y, z


def find_no_linear_head_certificate(model, sequences: Sequence[Sequence[int]], *,
                                    prompt: Sequence | None = None) -> dict | None:
    """A certificate (SPEC section 4, ``kind: no-linear-head``) among ``sequences``, or None
    when the LP finds none (the labels are linearly separable there) or the exact re-solve fails.

    With ``prompt``, the features are ``Gbar_2(u, e(∅), e(x))`` and the certificate carries
    ``"prompt"``; on a :class:`MemoryHMM` they are the memory model's ``G_1(x')``. The
    certificate lists only the sequences it uses (the support of ``y`` and ``z``).
    """
    seqs, feats, labels = features_and_labels(model, sequences, prompt)
    found = motzkin_combination(feats, labels)
    if found is None:
        return None
    used, y, z = found
    out = {"kind": "no-linear-head",
           "sequences": [seqs[k] for k in used],
           "labels": [int(labels[k]) for k in used],
           "features": [[format_fraction(v) for v in feats[k]] for k in used],
           "certificate": {"y": [format_fraction(v) for v in y], "z": [format_fraction(v) for v in z]},
           "searched": len(seqs)}
    if prompt is not None:
        out["prompt"] = [format_fraction(Fraction(v)) for v in prompt]
    return out


def vacuous_features(cert: dict) -> str | None:
    """Why a no-linear-head certificate shows nothing, or None (SPEC section 4: a claim whose
    features are all zero, or all equal, on its listed sequences is vacuous whatever made them
    so; ``python -m headprompt.certcheck`` judges it the same way). Features all zero (a prompt
    the chain never reaches, ``u = 0``, a dead state) erase every sequence; for a chosen prompt
    (``"prompt"`` in the certificate), features all equal on distinct sequences erase them too.
    Equal ``G_1`` features on sequences of both labels stay evidence: that is Theorem 3.3's own
    failure, with nothing chosen."""
    feats = {tuple(Fraction(v) for v in f) for f in cert.get("features") or []}
    if not feats:
        return None
    if all(v == 0 for f in feats for v in f):
        return "its features are all zero on the listed sequences (the read-out sees nothing)"
    if "prompt" in cert and len(feats) == 1 and len({tuple(s) for s in cert["sequences"]}) > 1:
        return "the prompt makes its features equal on every listed sequence (it erases the input)"
    return None


def check_no_linear_head_certificate(hmm: HMM, cert: dict) -> tuple[bool, str]:
    """Check a certificate independently: recompute every feature ``G_1(x'_k)`` and label
    ``F*(x_k)`` from the instance (the printed ones are not trusted; with ``"prompt"`` the
    features are ``Gbar_2(u, e(∅), e(x_k))``), then check the signs, the zero pattern and
    ``sum y_k g_k - sum z_k g_k = 0`` exactly. Returns ``(ok, reason)``."""
    seqs = [list(s) for s in cert["sequences"]]
    prompt = cert.get("prompt")
    if prompt is not None and len(prompt) != hmm.num_states:
        return False, "the prompt has the wrong length"
    y = [Fraction(v) for v in cert["certificate"]["y"]]
    z = [Fraction(v) for v in cert["certificate"]["z"]]
    if not (len(y) == len(z) == len(seqs)):
        return False, "y, z and sequences have different lengths"
    kept, feats, labels = features_and_labels(hmm, seqs, None if prompt is None else [Fraction(v) for v in prompt])
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


def _subsets(n: int, limit: int) -> tuple[list[tuple[int, ...]], int]:
    """Nonempty subsets of ``0..n-1``, smallest first, at most ``limit``; and how many exist."""
    total = 2 ** n - 1
    out = []
    for k in range(1, n + 1):
        for B in itertools.combinations(range(n), k):
            if len(out) >= limit:
                return out, total
            out.append(B)
    return out, total


def prompt_family_certificates(hmm: HMM, sequences: Sequence[Sequence[int]], *,
                               max_subsets: int = MAX_FAMILY_SUBSETS, first: Sequence[int] | None = None,
                               stop_early: bool = True, seconds: float | None = None) -> dict:
    """One no-linear-head certificate per prompt ``u = 1_B`` of Theorem 3.6's family, each
    checked by :func:`check_no_linear_head_certificate`.

    ``first`` puts one ``B`` ahead of the others (e.g. the construction's); with
    ``stop_early`` the search stops at the first ``B`` without a certificate (a head may work
    with that prompt); ``seconds`` bounds the time spent (the result says how many ``B`` were
    covered). Returns ``{"kind": "no-prompt-in-family", "all": bool, "subsets": total
    number of nonempty B, "covered": B tried, "certified": B with a checked certificate,
    "certificates": [{"B": [...], ...}], "uncertified_B": the first B without one or None,
    "what": ...}``; ``all`` is True only when every nonempty ``B`` has a checked certificate.
    """
    n = hmm.num_states
    subsets, total = _subsets(n, max_subsets)
    if first is not None and tuple(first) in subsets:
        subsets.remove(tuple(first))
        subsets.insert(0, tuple(first))
    import time

    start = time.perf_counter()
    certs, missing, covered = [], None, 0
    for B in subsets:
        if seconds is not None and covered and time.perf_counter() - start > seconds:
            break
        covered += 1
        u = [Fraction(1) if h in B else Fraction(0) for h in range(n)]
        cert = find_no_linear_head_certificate(hmm, sequences, prompt=u)
        ok = cert is not None and check_no_linear_head_certificate(hmm, cert)[0]
        if not ok:
            missing = list(B)
            if stop_early:
                break
            continue
        certs.append({"B": list(B), **cert, "checked": True, "vacuous": vacuous_features(cert) is not None})
    every = missing is None and covered == total
    erased = sum(c["vacuous"] for c in certs)
    if every:
        what = (f"for every one of the {total} prompts u = 1_B (B nonempty) an exact certificate shows that no "
                "linear head b gives F*(x) = 1(b . Gbar_2(u, e(empty), e(x)) >= 0) on the listed sequences")
    elif missing is None:
        what = (f"{len(certs)} of the {total} prompts u = 1_B have a certificate (only {covered} B, smallest "
                "first, were tried within the budget)")
    else:
        what = (f"the prompt u = 1_B with B = {missing} has no certificate on these sequences (some linear head "
                f"may work with it); {len(certs)} B of the {covered} tried have one")
    if erased:        # true of those B, but only because the prompt erases every sequence
        what += (f"; {erased} of these B give features all zero or all equal (the prompt erases the input), "
                 "so their certificates are vacuous and not counted as certified")
    return {"kind": "no-prompt-in-family", "family": "u = 1_B", "all": every, "subsets": total,
            "covered": covered, "certified": len(certs) - erased, "erased": erased, "uncertified_B": missing,
            "certificates": certs, "what": what}


def check_prompt_family_certificates(hmm: HMM, evidence: dict) -> tuple[bool, str]:
    """Recheck a family claim: every listed certificate independently, and, when ``all`` is
    claimed, that the listed ``B`` are exactly every nonempty subset."""
    seen = set()
    for cert in evidence["certificates"]:
        B = tuple(sorted(int(h) for h in cert["B"]))
        u = [Fraction(1) if h in B else Fraction(0) for h in range(hmm.num_states)]
        if [Fraction(v) for v in cert.get("prompt", [])] != u:
            return False, f"the certificate for B = {list(B)} is not about the prompt 1_B"
        ok, why = check_no_linear_head_certificate(hmm, cert)
        if not ok:
            return False, f"B = {list(B)}: {why}"
        seen.add(B)
    if evidence.get("all") and len(seen) != 2 ** hmm.num_states - 1:
        return False, f"claims every B but certifies {len(seen)} of {2 ** hmm.num_states - 1}"
    return True, f"{len(seen)} certificates rechecked exactly"
