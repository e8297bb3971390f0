"""Certificates that *no* prompt and *no* linear head compute ``F*`` (Theorem 3.6's statement
refuted for every prompt at once), and their independent exact check.

With ``beta_k[h] = P[X_{1:T} = x_k | H_0 = h]`` (the backward message) and a prompt ``u``,
Theorem 3.6's features are ``Gbar_2(u, e(∅), e(x_k)) = W tau_k / ||tau_k||_1`` with
``tau_k = beta_k ⊙ c(u)`` and ``c(u) = A (u ⊙ A pi0)`` (SPEC section 1, eq. B.1). If
``y >= 0`` on label-0 rows (not all zero) and ``z >= 0`` on label-1 rows satisfy

    W diag(d) A diag(A pi0) = 0   with   d = sum_k (y_k - z_k) beta_k,

then ``sum_k (y_k - z_k) W tau_k = W diag(d) A diag(A pi0) u = 0`` for *every* ``u``. A head
``b`` fitting ``F*`` with some ``u`` would have ``b . W tau_k < 0`` on every label-0 row (a
row whose norm is 0 has ``Gbar = 0``, reads label 1 and already fails) and ``b . W tau_k >= 0``
on every label-1 row, so ``b . sum (y_k - z_k) W tau_k < 0``: a contradiction. The condition
is a Motzkin certificate on the rows ``vec(W diag(beta_k) A diag(A pi0))`` (linear in
``beta_k``), found by :func:`~.certificates.motzkin_combination` and re-checked here exactly.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from ...models.hmm.integer import integer_hmm
from ...models.hmm.rational import format_fraction
from ...models.hmm.task import label, task_margin
from ...models.hmm.values import HMM
from ...models.inference.exact import prior_h1, shared_backward_messages
from ...models.hmm.integer import column_entries

from .certificates import motzkin_combination

__all__ = ["backward_messages", "universal_rows", "find_prompt_universal_certificate",
           "check_prompt_universal_certificate"]


def backward_messages(hmm: HMM, sequences: Sequence[Sequence[int]]) -> dict[tuple, list[Fraction]]:
    """``beta(x)[h] = P[X_{1:T} = x | H_0 = h]`` for every sequence, exactly (the integer
    backward messages of :func:`~headprompt.models.inference.exact.shared_backward_messages`
    at their true scale ``(dA dW)^-T``).

    >>> h = HMM.create([[1, '1/2'], [0, '1/2']], [['1/2', 1], ['1/2', 0]], ['1/2', '1/2'])
    >>> [str(v) for v in backward_messages(h, [(1,)])[(1,)]]
    ['1/2', '1/4']
    """
    ih = integer_hmm(hmm)
    out = {}
    for seq, vec in shared_backward_messages(ih, [tuple(int(z) for z in s) for s in sequences]):
        scale = (ih.dA * ih.dW) ** len(seq)
        out[seq] = [Fraction(int(v), scale) for v in column_entries(vec)]
    return out


def universal_rows(hmm: HMM, sequences: Sequence[Sequence[int]]):
    """``(sequences, rows, labels, betas)`` for the sequences with ``Pr(x) > 0``: each row is
    ``vec(W diag(beta_k) A diag(A pi0))`` (``|X| |H|`` entries, row-major), each label ``F*(x_k)``."""
    p1 = prior_h1(hmm)
    betas = backward_messages(hmm, sequences)
    n, X = hmm.num_states, hmm.num_tokens
    AD = [[hmm.A[h, g] * p1[g] for g in range(n)] for h in range(n)]           # A diag(A pi0)
    kept, rows, labels, kept_betas = [], [], [], []
    for seq in sequences:
        beta = betas[tuple(int(z) for z in seq)]
        joint = [p * b for p, b in zip(hmm.pi0, beta)]                          # P[H_0 = h, X = x]
        if not any(joint):
            continue
        row = [sum((hmm.W[x, h] * beta[h] * AD[h][g] for h in range(n) if beta[h]), Fraction(0))
               for x in range(X) for g in range(n)]
        kept.append([int(z) for z in seq])
        rows.append(row)
        labels.append(label(task_margin(hmm.mu, joint)))
        kept_betas.append(beta)
    return kept, rows, labels, kept_betas


def find_prompt_universal_certificate(hmm: HMM, sequences: Sequence[Sequence[int]]) -> dict | None:
    """A certificate (``kind: no-prompt-and-head``, ``prompts: "all"``) among ``sequences`` that
    no prompt ``u`` and no linear head ``b`` give ``F*(x) = 1(b . Gbar_2(u, e(∅), e(x)) >= 0)``
    on them, or None when the LP finds none. It lists only the sequences it uses; ``beta``
    holds their backward messages (for a reader; the checker recomputes them)."""
    seqs, rows, labels, betas = universal_rows(hmm, sequences)
    found = motzkin_combination(rows, labels)
    if found is None:
        return None
    used, y, z = found
    return {"kind": "no-prompt-and-head", "prompts": "all",
            "sequences": [seqs[k] for k in used], "labels": [int(labels[k]) for k in used],
            "beta": [[format_fraction(v) for v in betas[k]] for k in used],
            "certificate": {"y": [format_fraction(v) for v in y], "z": [format_fraction(v) for v in z]},
            "searched": len(seqs)}


def check_prompt_universal_certificate(hmm: HMM, cert: dict) -> tuple[bool, str]:
    """Re-check a ``no-prompt-and-head`` certificate exactly from the instance alone: every
    listed sequence has ``Pr(x) > 0`` and the printed label ``F*(x)``, the signs and zero
    pattern of ``y, z``, and ``W diag(d) A diag(A pi0) = 0`` for ``d = sum (y_k - z_k) beta_k``
    (``beta_k`` recomputed). Returns ``(ok, reason)``."""
    seqs = [list(s) for s in cert["sequences"]]
    y = [Fraction(v) for v in cert["certificate"]["y"]]
    z = [Fraction(v) for v in cert["certificate"]["z"]]
    if not seqs or not len(y) == len(z) == len(seqs):
        return False, "y, z and sequences have different lengths (or no sequence)"
    kept, _, labels, betas = universal_rows(hmm, seqs)
    if len(kept) != len(seqs):
        return False, "a listed sequence has probability 0"
    if "labels" in cert and [int(v) for v in cert["labels"]] != labels:
        return False, "the printed labels are not F*(x)"
    if any(v < 0 for v in y + z):
        return False, "y or z has a negative entry"
    if any(yk for yk, lab in zip(y, labels) if lab == 1) or any(zk for zk, lab in zip(z, labels) if lab == 0):
        return False, "y must vanish on label-1 rows and z on label-0 rows"
    if not any(y):
        return False, "y is all zero"
    n = hmm.num_states
    d = [sum(((yk - zk) * b[h] for yk, zk, b in zip(y, z, betas)), Fraction(0)) for h in range(n)]
    p1 = prior_h1(hmm)
    for x in range(hmm.num_tokens):
        for g in range(n):
            if sum((hmm.W[x, h] * d[h] * hmm.A[h, g] * p1[g] for h in range(n)), Fraction(0)) != 0:
                return False, f"W diag(d) A diag(A pi0) is not zero at ({x}, {g})"
    return True, (f"y >= 0 (not all zero) on label-0 rows, z >= 0 on label-1 rows, and W diag(d) A diag(A pi0) = 0 "
                  f"exactly for d = sum (y_k - z_k) beta_k over {len(seqs)} sequences with Pr(x) > 0: no prompt u "
                  "and no linear head b give F* on them")
