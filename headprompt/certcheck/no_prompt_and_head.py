"""``claim: "no-prompt-and-head"`` (Theorem 3.6 only): no prompt ``u`` in ``[0, 1]^|H|`` and no
linear head ``b`` on ``Gbar_2(u, e(∅), e(x))`` give ``F*`` on the listed sequences, so Theorem
3.6's conclusion fails on the instance.

Soundness. With ``d = sum_k (y_k - z_k) beta_k`` (``beta_k`` the backward message of ``x_k``,
recomputed), the checker verifies ``W diag(d) A diag(A pi0) = 0`` exactly. Then for every ``u``,
``sum_k (y_k - z_k) W tau_k(u) = W diag(d) A diag(A pi0) u = 0`` where
``tau_k(u) = beta_k ⊙ A (u ⊙ A pi0)``. Dividing row ``k`` by ``||tau_k(u)||_1 > 0`` is a positive
rescaling (a row with ``tau_k(u) = 0`` has ``Gbar_2 = 0``, reads label 1 and already fails a
label-0 row), so the Motzkin argument of :mod:`.no_linear_head` applies to every prompt at once.
"""

from __future__ import annotations

from fractions import Fraction

from .fields import field, same_ints
from .no_linear_head import duplicates, motzkin_label, motzkin_pattern, motzkin_rows
from .outcomes import Accepted, Rejected, Unreadable
from .work import METER, digits, fraction_ops, matrix_work

__all__ = ["no_prompt_and_head"]


def no_prompt_and_head(inst, entry, where):
    """Theorem 3.6, every prompt: ``W diag(d) A diag(A pi0) = 0`` with
    ``d = sum_k (y_k - z_k) beta_k``; then ``sum_k (y_k - z_k) W tau_k(u) = 0`` for every ``u``."""
    if field(entry, "prompts", where) != "all":
        raise Unreadable(f"{where}.prompts: expected \"all\"")
    if not inst.binary:
        raise Unreadable(f"{where}: Motzkin certificates are about binary tasks")
    seqs, y, z = motzkin_rows(entry, inst.m, where)
    matrix_work(inst.nnz + inst.n, inst.m, 1, f"{where}: W diag(d) A diag(A pi0)")
    d = [Fraction(0)] * inst.n
    labels = [None] * len(seqs)
    for k, beta in inst.betas(seqs):
        labels[k] = motzkin_label(inst, beta, k, where)
        coef = Fraction(y[k] - z[k]) / (inst.DA * inst.DW) ** len(seqs[k])
        if coef:
            METER.charge(fraction_ops(2 * inst.n, digits(coef.denominator) + digits(max(beta))),
                         f"{where}: d = sum_k (y_k - z_k) beta_k")
            for h in range(inst.n):
                if beta[h]:
                    d[h] += coef * beta[h]
    if "labels" in entry and not same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    motzkin_pattern(y, z, labels, where)
    p1 = inst.step(inst.pi0)
    METER.charge(fraction_ops(inst.nnz * inst.m + inst.nnz, max(digits(v.denominator) for v in d) + inst.wdigits),
                 f"{where}: W diag(d) A diag(A pi0)")
    for g in range(inst.n):
        if not p1[g]:
            continue
        v = {i: d[i] * a for i, a in inst.cols[g] if d[i]}
        for x in range(inst.m):
            if sum(inst.W[x][i] * c for i, c in v.items()):
                raise Rejected(f"{where}: W diag(d) A diag(A pi0) is not zero (row {x}, column {g})")
    return Accepted(f"no prompt u in [0, 1]^|H| and no linear head b on Gbar_2(u, e(∅), e(x)) give F* on these "
                    f"{len(set(seqs))} sequences{duplicates(seqs)}", lists=seqs)
