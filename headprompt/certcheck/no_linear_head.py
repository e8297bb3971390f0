"""``claim: "no-linear-head"``: no linear head ``b`` gives ``F*(x) = 1(b . g(x) >= 0)`` on the
listed sequences, where ``g`` is the theorem's feature: 3.3 ``G_1(∅, x)``; 3.6
``Gbar_2(u, e(∅), e(x))`` for the one prompt ``u`` the certificate gives; 4.3, 4.6, C.6
``G_1(∅, x)`` of the memory-augmented HMM (the linear-head baseline, which says nothing against
the memory theorems, whose head is attention). Binary tasks only.

Soundness (Motzkin's transposition theorem). The checker recomputes every feature ``g_k`` and
every label ``F*(x_k)`` (a row with ``Pr(x) = 0`` is rejected: its label is not defined), then
checks ``y >= 0`` vanishing on label-1 rows and not all zero, ``z >= 0`` vanishing on label-0
rows, and ``sum_k (y_k - z_k) g_k = 0`` exactly. A head with ``b . g_k < 0`` on label-0 rows and
``b . g_k >= 0`` on label-1 rows would give ``0 = b . sum_k (y_k - z_k) g_k < 0``.
"""

from __future__ import annotations

from fractions import Fraction

from .exact import label, scaled
from .fields import field, known_keys, listed_rows, prompt_vector, same_ints, tokens, vector
from .outcomes import Rejected, Unreadable, Vacuous
from .work import matrix_work

__all__ = ["motzkin_pattern", "motzkin_rows", "vanilla_motzkin", "motzkin_label", "memory_motzkin"]


def motzkin_pattern(y, z, labels, where):
    if any(v < 0 for v in y + z):
        raise Rejected(f"{where}: y or z has a negative entry")
    if any(y[i] for i in range(len(y)) if labels[i] == 1) or any(z[i] for i in range(len(z)) if labels[i] == 0):
        raise Rejected(f"{where}: y must vanish on label-1 rows and z on label-0 rows")
    if not any(y):
        raise Rejected(f"{where}: y is all zero")


def motzkin_rows(entry, m, where):
    seqs = [tokens(s, m, f"{where}.sequences[{i}]")
            for i, s in enumerate(listed_rows(field(entry, "sequences", where), f"{where}.sequences"))]
    if not seqs:
        raise Vacuous(f"{where}: no sequences")
    cert = field(entry, "certificate", where)
    known_keys(cert, ("y", "z"), f"{where}.certificate")
    y = vector(field(cert, "y", where), len(seqs), f"{where}.certificate.y")
    z = vector(field(cert, "z", where), len(seqs), f"{where}.certificate.z")
    return seqs, y, z


def vanilla_motzkin(inst, theorem, entry, where):
    """A no-linear-head certificate on the theorem's features; returns the claim proven."""
    known_keys(entry, ("sequences", "labels", "certificate", "prompt"), where)
    if not inst.binary:
        raise Unreadable(f"{where}: Motzkin certificates are about binary tasks")
    seqs, y, z = motzkin_rows(entry, inst.m, where)
    u = None
    if theorem == "3.3":
        if "prompt" in entry:
            raise Rejected(f"{where}: Theorem 3.3 reads G_1(∅, x); a prompt has no place in its certificate")
    else:
        if entry.get("prompt") is None:
            raise Rejected(f"{where}: Theorem 3.6 reads Gbar_2(u, e(∅), e(x)); the certificate names no prompt u")
        u = prompt_vector(entry["prompt"], inst.n, f"{where}.prompt")
        if not any(u):
            raise Vacuous(f"{where}: the prompt u = 0 makes every feature 0")
    matrix_work(len(seqs), inst.m, inst.n, f"{where}: the features")
    pre, Dpre = scaled(inst.pre(theorem, u))
    total = [Fraction(0)] * inst.m
    labels = [None] * len(seqs)
    for k, beta in inst.betas(seqs):
        labels[k] = motzkin_label(inst, beta, k, where)
        coef = y[k] - z[k]
        if not coef:
            continue
        tau = [p * b for p, b in zip(pre, beta)]
        norm = sum(tau)
        if norm:
            for x in range(inst.m):
                total[x] += coef * Fraction(sum(w * t for w, t in zip(inst.Wint[x], tau) if t), norm)
    if "labels" in entry and not same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    motzkin_pattern(y, z, labels, where)
    if any(total):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")
    count = len(set(seqs))
    if u is None:
        return f"no linear head b on G_1(∅, x) gives F* on these {count} sequences"
    return (f"for the prompt u = [{', '.join(str(v) for v in u[:8])}{', ...' if len(u) > 8 else ''}] "
            f"no linear head b on Gbar_2(u, e(∅), e(x)) gives F* on these {count} sequences")


def motzkin_label(inst, beta, k, where) -> int:
    """``F*`` of a Motzkin row of a vanilla instance from its backward message; a row with
    ``Pr(x) = 0`` is rejected (its label is not defined)."""
    nums, den = inst.task(beta)
    if den == 0:
        raise Rejected(f"{where}: sequence {k} has probability 0")
    return label([nums[0]], True)


def memory_motzkin(inst, theorem, entry, where):
    """No linear head on ``G_1(∅, x)`` of the memory model fits ``F*`` on the listed sequences."""
    known_keys(entry, ("sequences", "labels", "certificate"), where)
    if not inst.binary:
        raise Unreadable(f"{where}: Motzkin certificates are about binary tasks")
    seqs, y, z = motzkin_rows(entry, inst.m, where)
    inst.budget(seqs)
    total = [Fraction(0)] * inst.m
    labels = []
    filler = [1] * inst.L
    for k, seq in enumerate(seqs):
        plain = [inst.lifted_emission(t) for t in seq]
        joint = inst.messages(plain)[0]
        if sum(joint) == 0:
            raise Rejected(f"{where}: sequence {k} has probability 0")
        labels.append(label([inst.task_margin(joint)], True))
        if y[k] - z[k]:
            g = inst.gbar(inst.messages([filler] + plain)[1][0])
            for x in range(inst.m):
                total[x] += (y[k] - z[k]) * g[x]
    if "labels" in entry and not same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    motzkin_pattern(y, z, labels, where)
    if any(total):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")
    return (f"no linear head b on G_1(∅, x) of this memory-augmented HMM gives F* on these {len(set(seqs))} "
            f"sequences (the linear-head baseline; this says nothing against Theorem {theorem}, whose head is attention)")
