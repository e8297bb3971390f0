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

import math
from fractions import Fraction

from .exact import label, scaled, vector_sum
from .fields import field, known_keys, listed_rows, prompt_vector, same_ints, tokens, vector
from .outcomes import Accepted, Rejected, Unreadable, Vacuous
from .work import METER, digits, int_ops

__all__ = ["motzkin_pattern", "motzkin_rows", "vanilla_motzkin", "FeatureSpread", "duplicates", "motzkin_label",
           "memory_motzkin"]


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
    """A no-linear-head certificate on the theorem's features; returns the claim proven
    (:class:`.Accepted`, listing the distinct sequences)."""
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
    inst.feature_budget(seqs, where)
    pre, Dpre = scaled(inst.pre(theorem, u))
    terms = []                          # (y_k - z_k) tau_k / ||tau_k||_1 on the states, as (numerators, denominator)
    labels = [None] * len(seqs)
    features = FeatureSpread()
    for k, beta in inst.betas(seqs):
        labels[k] = motzkin_label(inst, beta, k, where)
        tau = [p * b for p, b in zip(pre, beta)]
        norm = sum(tau)
        features.add(inst.feature(tau)[0] if u is not None else None, norm)
        coef = y[k] - z[k]
        if coef and norm:           # W (sum_k c_k tau_k / norm_k) = sum_k c_k g_k: |H| integers a row, not |X| fractions
            METER.charge(int_ops(inst.n, digits(coef.numerator), digits(max(tau))), f"{where}: the Motzkin combination")
            terms.append(([coef.numerator * t for t in tau], coef.denominator * norm))
    if "labels" in entry and not same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    motzkin_pattern(y, z, labels, where)
    acc = vector_sum(terms, inst.n, f"{where}: the Motzkin combination")[0]
    if any(acc) and any(inst.feature(acc)[0]):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")
    name = "G_1(∅, x)" if u is None else "Gbar_2(u, e(∅), e(x)) for this prompt"
    features.judge(f"{where}: the features {name}", len(set(seqs)), chosen=u is not None)
    count = len(set(seqs))
    said = (f"no linear head b on G_1(∅, x) gives F* on these {count} sequences" if u is None else
            f"for the prompt u = [{', '.join(str(v) for v in u[:8])}{', ...' if len(u) > 8 else ''}] "
            f"no linear head b on Gbar_2(u, e(∅), e(x)) gives F* on these {count} sequences")
    return Accepted(said + duplicates(seqs), lists=seqs)


class FeatureSpread:
    """Whether the features of the listed rows are all zero, or all equal. A claim whose
    features are all zero on its listed sequences is vacuous whatever made them so (an
    unreachable prompt, ``u = 0``, a dead state): every head outputs 0 on every row. With a
    chosen prompt (Theorem 3.6's ``Gbar_2(u, e(∅), e(x))``), features all equal are vacuous too:
    every head gives every row the same output, so the claim shows only that this ``u`` erases
    the sequences, nothing about heads. ``G_1(∅, x)`` involves no choice: there, sequences with
    equal features and different labels are the instance's own failure (the features lose what
    ``F*`` reads; Theorem 3.3's conclusion fails), a claim with content, and are accepted.
    Features are compared exactly as ``numerators / norm`` (``norm = 0``: the zero feature)."""

    def __init__(self):
        self.first, self.differ, self.nonzero = None, False, False

    def add(self, numerators, norm) -> None:
        """One row's feature ``numerators / norm``; ``numerators`` None where only zero matters
        (``G_1``, whose features are a distribution when ``norm > 0``)."""
        self.nonzero = self.nonzero or (norm != 0 and (numerators is None or any(numerators)))
        if self.differ or numerators is None:
            return
        if self.first is None:
            self.first = (numerators, norm)
            return
        first, norm0 = self.first
        if (norm == 0) != (norm0 == 0):
            self.differ = True
        elif norm:
            METER.charge(int_ops(2 * len(first), digits(norm0), digits(max(first, key=abs))), "comparing features")
            self.differ = any(a * norm0 != b * norm for a, b in zip(numerators, first))

    def judge(self, what: str, count: int, chosen: bool) -> None:
        """Raise :class:`.Vacuous` as the class docstring says (``count``: distinct sequences)."""
        if not self.nonzero:
            raise Vacuous(f"{what} are all zero on the {count} listed sequence{'s' if count > 1 else ''}: every head "
                          "outputs 0 on each, so the claim says nothing about heads")
        if chosen and count > 1 and not self.differ:
            raise Vacuous(f"{what} are all equal on the {count} listed sequences: every head gives them the same "
                          "output, so the claim says nothing about heads")


def duplicates(seqs) -> str:
    """What the line says of repeated rows: counts in accepted lines are of distinct sequences."""
    repeated = len(seqs) - len(set(seqs))
    return f" ({repeated} repeated row{'s' if repeated > 1 else ''} counted once)" if repeated else ""


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
    features = FeatureSpread()
    for k, seq in enumerate(seqs):
        plain = [inst.lifted_emission(t) for t in seq]
        joint = inst.messages(plain)[0]
        if sum(joint) == 0:
            raise Rejected(f"{where}: sequence {k} has probability 0")
        labels.append(label([inst.task_margin(joint)], True))
        g = inst.gbar(inst.messages([filler] + plain)[1][0])
        den = math.lcm(*(v.denominator for v in g))
        features.add([v.numerator * (den // v.denominator) for v in g], den if any(g) else 0)
        if y[k] - z[k]:
            for x in range(inst.m):
                total[x] += (y[k] - z[k]) * g[x]
    if "labels" in entry and not same_ints(entry["labels"], labels):
        raise Rejected(f"{where}: the printed labels are not F*(x) = {labels[:20]}")
    motzkin_pattern(y, z, labels, where)
    if any(total):
        raise Rejected(f"{where}: sum y g - sum z g is not zero")
    features.judge(f"{where}: the features G_1(∅, x)", len(set(seqs)), chosen=False)
    return Accepted(f"no linear head b on G_1(∅, x) of this memory-augmented HMM gives F* on these {len(set(seqs))} "
                    f"sequences{duplicates(seqs)} (the linear-head baseline; this says nothing against Theorem {theorem}, "
                    "whose head is attention)", lists=seqs)
