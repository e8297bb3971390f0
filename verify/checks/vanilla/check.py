"""The checker for Theorems 3.3 and 3.6: exact identities and per-sequence verdicts.

It never trusts the builder: it recomputes ``P[H_0]``, ``P[H_1]`` and the forward message of
the prompt from the instance, and decides every sequence from message passing.

For a sequence ``x`` let ``beta(x)[h] = Pr(X_{1:t} = x | H_0 = h)`` (the backward message; the
chain is time-homogeneous, so it is also ``Pr(x | H_1 = h)`` for the shifted ``x'`` and
``Pr(x | H_2 = h)`` after the prompt). Message passing gives, with ``pre`` the forward message
into the read position (``A P[H_0]`` for Theorem 3.3's ``G_1(x')``, ``c = A(u ⊙ A P[H_0])`` for
Theorem 3.6's ``Gbar_2(ehat(x))``)::

    tau = pre ⊙ beta(x),   b . Gbar = (W^T b ⊙ pre) . beta / (pre . beta)
    mu . P[H_0 | x] = (mu ⊙ P[H_0]) . beta / (P[H_0] . beta)

so four integer dot products with ``beta(x)`` decide ``F(x)``, ``F*(x)``, the zero-norm case
and ``Pr(x) > 0``. Backward messages of sequences that share a suffix are shared (a trie).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import flint
import numpy as np

from ....models.inference import bounds as ib
from ....models.inference import exact as ie
from ....models.inference.device_messages import backward_contractions
from ....models.hmm.values import HMM
from ....models.inference.exact import head_weights, integer_hmm, prior_h1, scaled_integer_vector, transition_apply
from ...runtime.cost import check_fallback
from ....models.hmm.task import class_label, is_multiclass, label, labels, task_margin, task_scores
from ..multiclass import MulticlassRows, multiclass_columns, multiclass_identity

__all__ = ["read_position_prior", "Decision", "CheckResult", "check_sequences", "identity_check",
           "decide_direct", "margins_direct"]


def read_position_prior(hmm: HMM, theorem: str, u: Sequence[Fraction] | None) -> np.ndarray:
    """The forward message ``pre`` into the read position, from the definitions.

    Theorem 3.3 reads ``G_1((∅, x))``: ``pre = A pi0``. Theorem 3.6 reads ``Gbar_2`` of
    ``(u, e(∅), e(x))``: ``pre = A (u ⊙ (A pi0))``.
    """
    p1 = prior_h1(hmm)
    if theorem == "3.3":
        return p1
    return transition_apply(hmm, np.asarray(u, dtype=object) * p1)


@dataclass
class Decision:
    sequence: tuple[int, ...]
    possible: bool
    expected: int            # F*(x)
    got: int                 # F(x)
    tie: bool                # mu . P[H_0 | x] == 0
    zero_norm: bool          # ||tau||_1 == 0, so Gbar = 0
    identity: bool           # b . Gbar == lambda * r_x * mu . P[H_0 | x]
    certified_by: str = "exact"


@dataclass
class CheckResult:
    checked: int = 0
    agree: int = 0
    outside_support: int = 0
    ties: int = 0
    zero_norm: int = 0
    identity_agree: int = 0
    exact_fallbacks: int = 0
    decided_by: dict = field(default_factory=dict)      # path -> sequences it decided
    expected_labels: list = field(default_factory=list)  # F*(x) of each sequence with Pr(x) > 0
    first_disagreement: Decision | None = None
    decisions: list = field(default_factory=list)
    messages: list = field(default_factory=list)         # certified kernel's per-length results, reused


def identity_check(hmm: HMM, theorem: str, b: Sequence, u: Sequence | None) -> dict:
    """Whether ``b^T W diag(pre) = lambda * mu^T diag(P[H_0])`` for one ``lambda > 0``: then
    ``b . Gbar = lambda r_x mu . P[H_0 | x]`` with ``r_x = Pr(x) / ||tau||_1 > 0`` for every
    ``x`` at once (Theorem 3.3: ``mu^T D^-1 W^+ W D = mu^T``; Theorem 3.6: Lemma B.2 with
    ``supp(c) = H*``)."""
    pre = read_position_prior(hmm, theorem, u)
    if is_multiclass(hmm.mu):                # k heads, one lambda for every class
        return multiclass_identity([head_weights(hmm, row) * pre for row in b], [m * hmm.pi0 for m in hmm.mu],
                                   read="G_1(x')" if theorem == "3.3" else "Gbar_2(ehat(x))",
                                   pre="A P[H_0]" if theorem == "3.3" else "A(u ⊙ A P[H_0])", task="P[H_0]")
    lhs = head_weights(hmm, b) * pre
    rhs = hmm.mu * hmm.pi0
    ratios = {lhs[h] / rhs[h] for h in range(hmm.num_states) if rhs[h] != 0}
    zeros_ok = all(lhs[h] == 0 for h in range(hmm.num_states) if rhs[h] == 0)
    lam = next(iter(ratios)) if len(ratios) == 1 else None
    holds = zeros_ok and lam is not None and lam > 0
    if not any(rhs[h] != 0 for h in range(hmm.num_states)):
        holds, lam = all(v == 0 for v in lhs), Fraction(1)
    read = "G_1(x')" if theorem == "3.3" else "Gbar_2(ehat(x))"
    what = (f"b^T W diag(pre) = {lam} * mu^T diag(P[H_0]) exactly, with pre = "
            + ("A P[H_0]" if theorem == "3.3" else "A(u ⊙ A P[H_0])")
            + f"; hence b . {read} = {lam} * r_x * mu . P[H_0 | X = x], r_x = Pr(x)/||tau||_1 > 0, "
              "for every x in supp(P[X])") if holds else (
        "b^T W diag(pre) is not a positive multiple of mu^T diag(P[H_0]); agreement then rests "
        "on the sequences checked alone")
    return {"holds": bool(holds), "what": what, "lambda": lam if holds else None}


class _Rows:
    """Integer rows ``[W^T b ⊙ pre, mu ⊙ pi0, pre, pi0]`` and their positive scales; float
    parts of the same rows for the float kernel."""

    def __init__(self, hmm: HMM, theorem: str, b, u, lam):
        pre = read_position_prior(hmm, theorem, u)
        rows = [head_weights(hmm, b) * pre, hmm.mu * hmm.pi0, pre, hmm.pi0]
        self.ints, self.scales = [], []
        for r in rows:
            ints, d = scaled_integer_vector([Fraction(v) for v in r])
            self.ints.append(ints)
            self.scales.append(d)
        self.matrix = flint.fmpz_mat(self.ints)
        self.lam = lam
        # float kernel: the four rows and the identity row W^T b ⊙ pre - lambda mu ⊙ pi0, split
        # into nonnegative parts pos, neg ([H, 5]) for the a priori bound
        ident = rows[0] - (lam if lam is not None else Fraction(1)) * rows[1]
        self.pos, self.neg, rmin, self.usable = ib.split_rows(rows + [ident])
        chain = ib.bound_chain(hmm)
        self.usable = self.usable and chain.usable
        self.floor = chain.floor_for(rmin)

    def decide(self, seq, v0, v1, v2, v3, how="exact") -> Decision:
        sF, sS = self.scales[0], self.scales[1]
        lam = self.lam if self.lam is not None else Fraction(1)
        identity = (v0 * sS * lam.denominator == v1 * sF * lam.numerator) and v2 > 0 and v3 > 0
        return Decision(tuple(seq), possible=v3 > 0, expected=label(v1), got=label(v0),
                        tie=v1 == 0, zero_norm=v2 == 0, identity=bool(identity), certified_by=how)


def _by_length(sequences) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(positions in the input, tokens [n, t])`` per distinct length."""
    if isinstance(sequences, np.ndarray):
        return [(np.arange(len(sequences)), sequences.astype(np.int64, copy=False))]
    groups: dict[int, list[int]] = {}
    for k, s in enumerate(sequences):
        groups.setdefault(len(s), []).append(k)
    return [(np.array(where), np.array([sequences[k] for k in where], dtype=np.int64))
            for _, where in sorted(groups.items())]


class _Rowwise:
    """Rows of a token array as tuples, made on demand (fallbacks and kept decisions only)."""

    def __init__(self, tokens: np.ndarray):
        self.tokens = tokens

    def __len__(self) -> int:
        return len(self.tokens)

    def __getitem__(self, k) -> tuple[int, ...]:
        return tuple(int(z) for z in self.tokens[k])

    def __iter__(self):
        return (self[k] for k in range(len(self)))


_PATHS = ("exact", "bound", "exact-fallback", "float (uncertified)")


def check_sequences(hmm: HMM, theorem: str, b, u, sequences, *, mode: str = "exact",
                    lam: Fraction | None = None, keep: bool = False, progress=None) -> CheckResult:
    """Decide ``F(x) = F*(x)`` for every sequence (those with ``Pr(x) = 0`` are counted apart).

    Modes: ``exact`` (integers end to end), ``certified`` (the float kernel
    :func:`models.inference_float.scaled_messages` with the a priori bound of
    :mod:`models.inference_bounds`; a sequence whose bound does not exclude 0, or that trips
    the underflow guard, is decided exactly, all of them in one batch), ``float`` (the same
    kernel, uncertified). ``sequences`` is a list of token tuples or an ``int`` array
    ``[n, t]``. ``result.decided_by`` counts the sequences each path decided. A ``k``-row
    task (and ``k``-row head) is decided exactly in every mode (:mod:`..multiclass`).
    """
    result = CheckResult()
    ih = integer_hmm(hmm)
    seq_list = sequences if not isinstance(sequences, np.ndarray) else _Rowwise(sequences)
    multiclass = is_multiclass(hmm.mu)
    rows = None if multiclass else _Rows(hmm, theorem, b, u, lam)
    if multiclass:
        pre = read_position_prior(hmm, theorem, u)
        mrows = MulticlassRows([head_weights(hmm, row) * pre for row in b], [m * hmm.pi0 for m in hmm.mu],
                               pre, hmm.pi0, lam)
        columns = multiclass_columns(ih, mrows, seq_list, _PATHS.index("exact"))
        order = np.arange(len(seq_list))
    elif mode == "exact":
        columns = _exact_columns(ih, rows, seq_list, "exact", progress=progress)
        order = np.arange(len(seq_list))
        progress = None
    else:
        columns, order = _fast_columns(hmm, ih, rows, sequences, seq_list, mode, progress=progress,
                                       keep_messages=result.messages)
        progress = None
    if progress is not None:
        progress(len(seq_list))
    possible, expected, got, tie, zero_norm, identity, how = columns
    result.outside_support = int((~possible).sum())
    result.checked = int(possible.sum())
    result.ties = int((tie & possible).sum())
    result.zero_norm = int((zero_norm & possible).sum())
    result.identity_agree = int((identity & possible).sum())
    agree = (expected == got) & possible
    result.agree = int(agree.sum())
    result.expected_labels = expected[possible].tolist()
    for code, name in enumerate(_PATHS):
        count = int((how == code).sum())
        if count:
            result.decided_by[name] = count
    result.exact_fallbacks = result.decided_by.get("exact-fallback", 0)
    bad = np.flatnonzero(possible & ~agree)
    if bad.size:
        first = bad[np.argmin(order[bad])]                  # the first in input order
        result.first_disagreement = _decision(seq_list, order, columns, int(first))
    if keep:
        back = np.argsort(order, kind="stable")             # rows in input order
        result.decisions = [_decision(seq_list, order, columns, int(k)) for k in back]
    return result


def _decision(seq_list, order, columns, k: int) -> Decision:
    possible, expected, got, tie, zero_norm, identity, how = columns
    return Decision(tuple(seq_list[order[k]]), possible=bool(possible[k]), expected=int(expected[k]),
                    got=int(got[k]), tie=bool(tie[k]), zero_norm=bool(zero_norm[k]),
                    identity=bool(identity[k]), certified_by=_PATHS[int(how[k])])


def _empty_columns(n: int, how: str) -> list[np.ndarray]:
    """``[possible, expected, got, tie, zero_norm, identity, path]`` for ``n`` sequences."""
    return [np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8),
            np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool),
            np.full(n, _PATHS.index(how), dtype=np.int8)]


def _exact_columns(ih, rows: _Rows, seq_list, how: str, progress=None) -> list[np.ndarray]:
    """Exact decisions (integer backward messages shared along suffixes), in input order;
    ``progress(n)`` after every 256 distinct sequences."""
    cols = _empty_columns(len(seq_list), how)
    where: dict[tuple, list[int]] = {}
    for k, s in enumerate(seq_list):
        where.setdefault(tuple(s), []).append(k)
    done = told = 0
    for seq, beta in ie.shared_backward_messages(ih, list(where)):
        v = rows.matrix * beta
        d = rows.decide(seq, *(int(v[r, 0]) for r in range(4)))
        for k in where[seq]:
            cols[0][k], cols[1][k], cols[2][k] = d.possible, d.expected, d.got
            cols[3][k], cols[4][k], cols[5][k] = d.tie, d.zero_norm, d.identity
        done += len(where[seq])
        if progress is not None and done - told >= 256:
            progress(done - told)
            told = done
    if progress is not None and done > told:
        progress(done - told)
    return cols


def _fast_columns(hmm, ih, rows: _Rows, sequences, seq_list, mode: str, progress=None,
                  keep_messages: list | None = None):
    """Float-kernel decisions per length group; in certified mode each is proven by the a priori
    bound or redone exactly. Returns the column arrays and each row's input index; in certified
    mode ``keep_messages`` receives per length group ``(where, t, P, N, minpos, floor, usable)``
    (the contractions of the backward messages with the rows; the robustness block reuses them)."""
    chain = ib.bound_chain(hmm)
    certified = mode == "certified"
    parts, orders = [], []
    for where, tokens in _by_length(sequences):
        t, n = tokens.shape[1], len(where)
        # beta0 [n, H] ∝ Pr(x | H_0 = h) contracted with the rows: P, N [n, 5] each, nonnegative
        # (on the device of an enclosing use_device block, else numpy)
        m = backward_contractions(chain, np.ascontiguousarray(tokens.T), rows.pos, rows.neg, track=certified)
        P, N = m["P"], m["N"]
        if certified and keep_messages is not None:
            keep_messages.append((where, t, P, N, m["minpos"], rows.floor, rows.usable))
        if not certified:
            v = P - N
            cols = [v[:, 3] > 0, labels(v[:, 1]), labels(v[:, 0]), v[:, 1] == 0, v[:, 2] == 0,
                    np.zeros(n, dtype=bool), np.full(n, _PATHS.index("float (uncertified)"), dtype=np.int8)]
        else:
            count = ib.backward_count(t, hmm.num_states) + 1 + hmm.num_states
            sign, decided, _ = ib.certified_signs(P, N, count)
            ok = decided[:, [0, 1, 4]].all(axis=1) & (m["minpos"] >= rows.floor) & rows.usable
            possible, nonzero_norm = sign[:, 3] > 0, sign[:, 2] > 0
            cols = [possible, labels(sign[:, 1]), labels(sign[:, 0]), sign[:, 1] == 0, ~nonzero_norm,
                    (sign[:, 4] == 0) & nonzero_norm & possible, np.full(n, _PATHS.index("bound"), dtype=np.int8)]
            redo = np.flatnonzero(~ok)
            if redo.size:                                   # one exact batch per length group
                check_fallback(int(redo.size), t, hmm.num_states, model=hmm)
                exact = _exact_columns(ih, rows, [seq_list[where[k]] for k in redo], "exact-fallback")
                for c, e in zip(cols, exact):
                    c[redo] = e
        parts.append(cols)
        orders.append(where)
        if progress is not None:
            progress(n)
    if not parts:
        return _empty_columns(0, "exact"), np.zeros(0, dtype=np.int64)
    return [np.concatenate([p[c] for p in parts]) for c in range(7)], np.concatenate(orders)


def margins_direct(hmm: HMM, theorem: str, b, u, seq) -> tuple[Fraction, Fraction, bool]:
    """``(mu . P[H_0 | x], b . g(x), possible)`` exactly (lists of class scores for a ``k``-row task), the slow, general way:
    ``ie.posterior_h0`` and ``ie.gbar`` on the actual embedding sequence (``(e(∅), e(x))`` for
    Theorem 3.3, ``(u, e(∅), e(x))`` for 3.6). ``F*(x)`` and ``F(x)`` are their labels."""
    post = ie.posterior_h0(hmm, seq)
    possible = any(v != 0 for v in post)
    rows = {z: list(hmm.W[z]) for z in set(seq)}      # e(z), one object per token
    emb = [rows[z] for z in seq]
    filler = [Fraction(1)] * hmm.num_states          # e(∅): any vector (its own position is ignored)
    if theorem == "3.3":
        g = ie.gbar(hmm, [filler] + emb, 0)
    else:
        g = ie.gbar(hmm, [list(u), filler] + emb, 1)
    if is_multiclass(hmm.mu):
        return task_scores(hmm.mu, post), task_scores([[Fraction(v) for v in row] for row in b], g), possible
    return task_margin(hmm.mu, post), task_margin([Fraction(bb) for bb in b], g), possible


def decide_direct(hmm: HMM, theorem: str, b, u, seq) -> tuple[int, int, bool]:
    """``(F*(x), F(x), possible)`` from :func:`margins_direct`. Used to cross-check the fast
    path on a sample and to print counterexamples."""
    star, head, possible = margins_direct(hmm, theorem, b, u, seq)
    if is_multiclass(hmm.mu):
        return class_label(star), class_label(head), possible
    return label(star), label(head), possible
