"""The checker for Theorems 4.3, 4.6 and C.6: membership in ``R`` and ``F = F*`` per sequence.

It never trusts the builder: the witness is read as plain numbers ``(q, Theta_K, beta,
Theta_V, b[, u])`` and evaluated on the model outputs computed from the instance alone.

Set ``R`` (eq. 4.3): ``x in R`` iff ``Pr(X = x) > 0`` and some position ``i`` has
``supp(P[H_i | X_-i = x_-i]) ⊆ H*``. On the lifted chain ``Htil = (m_1..m_N, h)`` (SPEC
section 1), ``tau_i = pre_i ⊙ beta_i = P[Htil_i, X_-i = x_-i]`` up to one positive factor, so
``i`` qualifies iff ``sum over lifted states with h not in H* of tau_i`` is exactly 0 (and
``sum tau_i > 0``, implied by ``Pr(x) > 0``). Exact supports, integer arithmetic.

Head outputs. For a token functional ``f`` (length ``|X|``),
``f . Gbar_i = (W_lift^T f) . tau_i / ||tau_i||_1`` (SPEC: ``Gbar_i = W phi(tau_i) /
||phi(tau_i)||_1``, and ``phi`` sums over the other cells with the common factor
``|M|^-(N-1)`` which cancels), and ``Gbar_i = 0`` when the norm is 0. Hence

    score_i = (W_lift^T Theta_K^T q) . tau_i / ||tau_i|| + q . beta_i
    V_i     = (W_lift^T Theta_V^T (b ⊙ phi(v_i))) . tau_i / ||tau_i||

with ``v_i`` the (lifted) input embedding at position ``i``: ``eta(e(x_i))`` (so
``phi(v_i) = e(x_i)``) or the prompt ``u``. Theorem 4.3 reads ``(G_i(x), e(x_i))_{i=1..t}``;
Theorems 4.6/C.6 read ``(Gbar_i(ehat(x)), ehat_i(x))_{i=1..t+1}`` with ``ehat(x) = (u,
eta(e(x_1)), ..., eta(e(x_t)))``. ``Attn`` averages ``V_i`` over every maximizer of the score
(exact ties), ``F(x) = 1(Attn >= 0)``, ``F*(x) = 1(mu . P[M_j* | X = x] >= 0)``.

Sequences outside ``R`` are counted apart and never as a success or a failure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Sequence

import flint
import numpy as np

from ..constructions.witnesses import AttentionWitness
from ..models.attention import attention
from ..models import inference_exact as ie
from ..models import inference_float as iff
from ..models.exceptions import InputError, InternalError
from ..models.hmm import MemoryHMM
from ..models.inference_exact import integer_hmm, scaled_integer_vector

__all__ = ["MemoryDecision", "MemoryCheckResult", "check_sequences", "region_positions",
           "decide_direct", "identity_check", "FLOAT_TIE_TOLERANCE"]

FLOAT_TIE_TOLERANCE = 1e-9


@dataclass
class MemoryDecision:
    sequence: tuple[int, ...]
    possible: bool                  # Pr(X = x) > 0
    Z: tuple[int, ...]              # 0-based positions of x with supp P[H_i | X_-i] ⊆ H*
    expected: int | None = None     # F*(x)      (None when not evaluated)
    got: int | None = None          # F(x)
    attended: tuple[int, ...] = ()  # positions of the head's input averaged over
    tie: bool = False               # mu . P[M_j* | x] == 0
    certified_by: str = "exact"

    @property
    def in_R(self) -> bool:
        return self.possible and bool(self.Z)


@dataclass
class MemoryCheckResult:
    checked: int = 0                # sequences with Pr(x) > 0
    in_R: int = 0
    agree: int = 0                  # among in_R
    outside_support: int = 0
    outside_R: int = 0
    ties: int = 0                   # in R with mu . P = 0
    attended_is_Z: int = 0          # in R: attended set = Z (shifted by the prompt)
    first_disagreement: MemoryDecision | None = None
    decisions: list = field(default_factory=list)


def _int_row(values) -> tuple[list[int], int]:
    return scaled_integer_vector([Fraction(v) for v in values])


class _Functionals:
    """Integer functionals over lifted states (each ``= ints / scale``, ``scale > 0``)."""

    def __init__(self, mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int]):
        lifted = mhmm.lift()
        W_lift = lifted.W                                            # |X| x L
        n, L = mhmm.num_states, lifted.num_states
        Wf = mhmm.emission_matrix()
        self.outside = [0 if (k % n) in set(H_star) else 1 for k in range(L)]
        mu = mhmm.mu
        j = mhmm.target_cell
        self.task = [mu[ms[j]] for ms in mhmm.memory_configurations() for _ in range(n)]
        self.task_int, _ = _int_row(self.task)
        key_tokens = np.asarray(witness.Theta_K, dtype=object).T.dot(np.asarray(witness.q, dtype=object))
        self.key, self.key_scale = _int_row(W_lift.T.dot(key_tokens))
        self.q_beta = [Fraction(np.asarray(witness.q, dtype=object).dot(r)) for r in witness.beta]
        ThetaV_T = np.asarray(witness.Theta_V, dtype=object).T                   # |X| x |M||H|
        b = np.asarray(witness.b, dtype=object)
        self.value, self.value_scale = [], []
        for z in range(mhmm.num_tokens):
            ints, d = _int_row(W_lift.T.dot(ThetaV_T.dot(b * Wf[z])))
            self.value.append(ints)
            self.value_scale.append(d)
        self.prompt_value = None
        if witness.u is not None:
            phi_u = ie.reverse_lift(mhmm, [Fraction(v) for v in witness.u])
            self.prompt_value = _int_row(W_lift.T.dot(ThetaV_T.dot(b * np.array(phi_u, dtype=object))))
        # float copies for the float mode
        self.f_outside = np.array(self.outside, dtype=float)
        self.f_key = np.array([float(v) for v in W_lift.T.dot(key_tokens)])
        self.f_value = np.array([[float(v) / s for v in row] for row, s in zip(self.value, self.value_scale)])
        self.f_qbeta = np.array([float(v) for v in self.q_beta])
        self.f_task = np.array([float(v) for v in self.task])

    def qbeta(self, i: int) -> Fraction:
        return self.q_beta[min(i, len(self.q_beta) - 1)]


def _dot(a: Sequence, b: Sequence):
    return sum((x * y for x, y in zip(a, b) if x), flint.fmpz(0))


class _Chain:
    """Integer messages on the lifted chain; ``tau_i = pre_i ⊙ beta_i`` share one scale."""

    def __init__(self, mhmm: MemoryHMM, u: Sequence[Fraction] | None):
        self.ih = integer_hmm(mhmm.lift())
        self.ones = flint.fmpz_mat([[1]] * self.ih.num_states)
        self.u_fwd = self.u_bwd = None
        if u is not None:
            ints, _ = scaled_integer_vector([Fraction(v) for v in u])
            L = self.ih.num_states
            D = flint.fmpz_mat(L, L)
            for k, w in enumerate(ints):
                D[k, k] = w
            self.u_fwd, self.u_bwd = D * self.ih.A_int, self.ih.AT_int * D

    def taus(self, seq: Sequence[int], *, prompt: bool = False):
        """``(tau_i entries for every position, total mass Pr(x) up to scale)``."""
        ih = self.ih
        fwd = ([self.u_fwd] if prompt else []) + [ih.forward[z] for z in seq]
        bwd = ([self.u_bwd] if prompt else []) + [ih.backward[z] for z in seq]
        pre, alpha = [], ih.pi0_int
        for F in fwd:
            pre.append(ih.A_int * alpha)
            alpha = F * alpha
        out = [None] * len(fwd)
        b = self.ones
        for j in range(len(fwd) - 1, -1, -1):
            out[j] = [p * q for p, q in zip(_entries(pre[j]), _entries(b))]
            b = bwd[j] * b
        return out, _entries(alpha)


def _entries(col) -> list:
    return [col[r, 0] for r in range(col.nrows())]


def region_positions(taus: list, outside: Sequence[int]) -> tuple[int, ...]:
    """Positions whose ``tau_i`` has mass, all of it on ``H*`` (exact)."""
    return tuple(i for i, t in enumerate(taus) if sum(t) > 0 and _dot(outside, t) == 0)


def _exact_head(fn: _Functionals, taus: list, tokens: Sequence[int], prompt: bool):
    """``(Attn numerator sign input, attended)``: the exact argmax set and the sum of values."""
    scores = []
    for i, t in enumerate(taus):
        N = sum(t)
        s = fn.qbeta(i)
        if N > 0:
            s += Fraction(int(_dot(fn.key, t)), int(N) * fn.key_scale)
        scores.append(s)
    top = max(scores)
    attended = tuple(i for i, s in enumerate(scores) if s == top)
    total = Fraction(0)
    for i in attended:
        t = taus[i]
        N = sum(t)
        if N == 0:
            continue
        if prompt and i == 0:
            ints, d = fn.prompt_value
        else:
            z = tokens[i - 1] if prompt else tokens[i]
            ints, d = fn.value[z], fn.value_scale[z]
        total += Fraction(int(_dot(ints, t)), int(N) * d)
    return total, attended


def check_sequences(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int],
                    sequences: Iterable[Sequence[int]], *, mode: str = "exact", keep: bool = False,
                    evaluate_outside_R: bool = False, progress=None) -> MemoryCheckResult:
    """Decide ``x in R`` and, on ``R``, ``F(x) = F*(x)`` for every sequence.

    ``mode``: ``exact`` (integers and Fractions end to end) or ``float`` (float64 batched,
    uncertified; maximizers within ``FLOAT_TIE_TOLERANCE`` relative count as ties);
    ``certified`` runs the exact checker (every verdict is then exact). With
    ``evaluate_outside_R`` the head is evaluated on every possible sequence (for tests); the
    counts still only count sequences in ``R``.

    Raises:
        InputError: an unknown mode, a witness whose shapes do not fit, or a sequence with a
            token outside the vocabulary.
    """
    if mode not in ("exact", "certified", "float"):
        raise InputError(f"--mode {mode!r}: expected exact, certified or float")
    _check_witness_shapes(mhmm, witness)
    seqs = [tuple(ie.check_tokens(s, mhmm.num_tokens)) for s in sequences]
    fn = _Functionals(mhmm, witness, H_star)
    decisions = (_float_decisions(mhmm, witness, fn, seqs, evaluate_outside_R) if mode == "float"
                 else _exact_decisions(mhmm, witness, fn, seqs, evaluate_outside_R))
    result = MemoryCheckResult()
    prompt = witness.u is not None
    for d in decisions:
        if progress is not None:
            progress()
        if keep:
            result.decisions.append(d)
        if not d.possible:
            result.outside_support += 1
            continue
        result.checked += 1
        if not d.in_R:
            result.outside_R += 1
            continue
        result.in_R += 1
        result.ties += d.tie
        shifted = tuple(i + 1 for i in d.Z) if prompt else d.Z
        result.attended_is_Z += d.attended == shifted
        if d.expected == d.got:
            result.agree += 1
        elif result.first_disagreement is None:
            result.first_disagreement = d
    return result


def _exact_decisions(mhmm, witness, fn: _Functionals, seqs, evaluate_outside_R):
    chain = _Chain(mhmm, witness.u)
    prompt = witness.u is not None
    for seq in seqs:
        taus, alpha = chain.taus(seq)
        possible = sum(alpha) > 0
        Z = region_positions(taus, fn.outside) if possible else ()
        d = MemoryDecision(seq, bool(possible), Z)
        if possible and (Z or evaluate_outside_R):
            star = _dot(fn.task_int, alpha)
            d.expected, d.tie = int(star >= 0), bool(star == 0)
            head_taus = chain.taus(seq, prompt=True)[0] if prompt else taus
            total, d.attended = _exact_head(fn, head_taus, seq, prompt)
            d.got = int(total >= 0)
        yield d


def _float_decisions(mhmm, witness, fn: _Functionals, seqs, evaluate_outside_R):
    f = mhmm.to_float()
    lifted = f.lift()
    A, pi0, W = (np.asarray(a, dtype=float) for a in (lifted.A, lifted.pi0, lifted.W))
    prompt = witness.u is not None
    u = None if not prompt else np.array([float(v) for v in witness.u])
    phi_u = None
    if prompt:
        phi_u = np.array([float(v) for v in ie.reverse_lift(mhmm, [Fraction(v) for v in witness.u])])
        ThV, b = np.asarray(witness.Theta_V, dtype=float), np.asarray(witness.b, dtype=float)
        prompt_value = W.T @ (ThV.T @ (b * phi_u))
    by_length: dict[int, list] = {}
    for s in seqs:
        by_length.setdefault(len(s), []).append(s)
    for length, group in sorted(by_length.items()):
        tokens = np.array(group, dtype=np.int64)
        emb = W[tokens]                                                 # [n, t, L]
        pre, alpha, beta = iff.messages(A, pi0, emb)
        tau = pre * beta                                                # [n, t, L], rows ∝ tau_i
        mass = tau.sum(axis=2)
        outside = tau @ fn.f_outside                                    # [n, t]
        # Pr(x) > 0 iff the unnormalised forward message survives: zeros stay exactly zero
        possible = (emb[:, -1] * pre[:, -1]).sum(axis=1) > 0
        star = iff.memory_posterior(f, tokens) @ np.asarray(f.mu, dtype=float)
        if prompt:
            emb_p = np.concatenate([np.broadcast_to(u, (len(group), 1, len(u))), emb], axis=1)
            pre_p, _, beta_p = iff.messages(A, pi0, emb_p)
            tau_h = pre_p * beta_p
        else:
            tau_h = tau
        mass_h = tau_h.sum(axis=2, keepdims=True)
        tn = tau_h / np.where(mass_h > 0, mass_h, 1.0)                  # normalised, zero rows kept
        t_h = tn.shape[1]
        qb = np.array([fn.f_qbeta[min(i, len(fn.f_qbeta) - 1)] for i in range(t_h)])
        scores = tn @ fn.f_key + qb[None, :]
        for r, seq in enumerate(group):
            Z = tuple(int(i) for i in range(length) if mass[r, i] > 0 and outside[r, i] == 0) if possible[r] else ()
            d = MemoryDecision(seq, bool(possible[r]), Z, certified_by="float (uncertified)")
            if possible[r] and (Z or evaluate_outside_R):
                top = scores[r].max()
                att = tuple(int(i) for i in range(t_h) if scores[r, i] >= top - FLOAT_TIE_TOLERANCE * (1 + abs(top)))
                vals = []
                for i in att:
                    if prompt and i == 0:
                        vals.append(tn[r, 0] @ prompt_value)
                    else:
                        z = seq[i - 1] if prompt else seq[i]
                        vals.append(tn[r, i] @ fn.f_value[z])
                d.expected, d.tie = int(star[r] >= 0), bool(star[r] == 0)
                d.got, d.attended = int(np.mean(vals) >= 0), att
            yield d


def _check_witness_shapes(mhmm: MemoryHMM, w: AttentionWitness) -> None:
    n, X, M = mhmm.num_states, mhmm.num_tokens, mhmm.memory_values
    L = M ** mhmm.cells * n
    want = {"q": (n + 1,), "Theta_K": (n + 1, X), "Theta_V": (M * n, X), "b": (M * n,)}
    for name, shape in want.items():
        got = np.asarray(getattr(w, name)).shape
        if got != shape:
            raise InputError(f"witness {name}: expected shape {shape}, found {got}")
    beta = np.asarray(w.beta)
    if beta.ndim != 2 or beta.shape[1] != n + 1 or beta.shape[0] < 1:
        raise InputError(f"witness beta: expected rows of length {n + 1} (|H| + 1), found shape {beta.shape}")
    if w.u is not None and np.asarray(w.u).shape != (L,):
        raise InputError(f"witness u: expected {L} entries (one per lifted state (m_1..m_N, h)), "
                         f"found shape {np.asarray(w.u).shape}")


# ---------------------------------------------------------------- the slow, direct route

def decide_direct(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int],
                  tokens: Sequence[int]) -> MemoryDecision:
    """The same decision the general way: ``G_i`` from ``ie.memory_gbar`` / ``ie.prompt_gbar``,
    ``R`` from ``tau_i`` of the lifted chain per position, the head from
    :func:`constructions.memory.attention`, ``F*`` from ``memory_posterior``."""
    seq = tuple(tokens)
    lifted = mhmm.lift()
    n = mhmm.num_states
    possible = ie.posterior_h0(lifted, seq) != [0] * lifted.num_states
    emb = [list(mhmm.emission_matrix()[z]) for z in seq]
    Z = []
    if possible:
        for i in range(len(seq)):
            t = ie.tau(lifted, [list(lifted.W[z]) for z in seq], i)
            if sum(t) > 0 and all(v == 0 for k, v in enumerate(t) if (k % n) not in set(H_star)):
                Z.append(i)
    d = MemoryDecision(seq, bool(possible), tuple(Z), certified_by="exact (direct)")
    if not possible:
        return d
    post = ie.memory_posterior(mhmm, seq)
    star = sum((Fraction(m) * p for m, p in zip(mhmm.mu, post)), Fraction(0))
    d.expected, d.tie = int(star >= 0), star == 0
    if witness.u is None:
        G = [ie.memory_gbar(mhmm, emb, i) for i in range(len(seq))]
        values = emb
    else:
        G = [ie.prompt_gbar(mhmm, witness.u, seq, i) for i in range(len(seq) + 1)]
        values = [ie.reverse_lift(mhmm, [Fraction(v) for v in witness.u])] + emb
    res = attention(witness, G, values)
    d.got, d.attended = int(res.output >= 0), res.attended
    return d


def cross_check(mhmm, witness, H_star, sequences, *, count: int = 20, seed: int = 0) -> int:
    """Recompute a random sample of exact decisions the direct way; a mismatch is an internal
    error and raises ``InternalError``. Returns the number compared."""
    sample = random.Random(seed).sample(list(sequences), min(count, len(sequences)))
    fast = check_sequences(mhmm, witness, H_star, sample, keep=True, evaluate_outside_R=True)
    for d in fast.decisions:
        slow = decide_direct(mhmm, witness, H_star, d.sequence)
        if (d.possible, d.Z, d.expected, d.got, d.attended) != (slow.possible, slow.Z, slow.expected,
                                                                 slow.got, slow.attended):
            raise InternalError(f"fast and direct checks differ on {list(d.sequence)}")
    return len(sample)


# ---------------------------------------------------------------- an identity for all x

def identity_check(mhmm: MemoryHMM, witness: AttentionWitness, H_star: Sequence[int]) -> dict:
    """Exact identities on the emission columns that prove ``F = F*`` on all of ``R`` at once.

    With ``a_(m,h) = (Theta_K^T q) . W_(m,h)`` and ``g_z = Theta_V^T (b ⊙ e(z))``, over the
    relevant columns ``Omega`` (every ``(m, h)`` for Theorem 4.3; for a prompt, ``m in M_u`` in
    the target cell and every ``m`` elsewhere):

    (K) ``a_(m,h) = kappa`` on ``H*`` and ``< kappa`` off ``H*``, ``q . beta_i`` equal for the
        read positions (all for 4.3; positions ``>= 2`` with a prompt), and for a prompt
        ``max(0, max_x (Theta_K^T q)_x) + q . beta_1 < min(0, min a) + q . beta_2``;
    (V) ``g_z . W_(m,h) = lambda mu_m W[z, m, h] 1(h in H*)`` for one ``lambda > 0`` (for 4.3
        only ``h in H*`` is needed);
    (U) for a prompt: ``u = 1(m_j* in M_u)`` with ``supp(mu) ⊆ M_u``, and ``P[H_0] = A P[H_0]``.

    Then the head attends exactly to ``Z`` (shifted by one with a prompt; Claim C.12) and
    ``V_i = lambda r_i mu . P[M_j* | X = x]`` with ``r_i > 0`` there (Lemmas C.4 / C.13), or
    every value is 0 and ``mu . P = 0`` when the prompt makes ``xhat`` impossible (Claim C.15).
    """
    n, X, M = mhmm.num_states, mhmm.num_tokens, mhmm.memory_values
    j = mhmm.target_cell
    Hs = set(H_star)
    q = np.asarray(witness.q, dtype=object)
    key = np.asarray(witness.Theta_K, dtype=object).T.dot(q)
    Wf = mhmm.emission_matrix()
    prompt = witness.u is not None
    why = []
    M_u = set(range(M))
    if prompt:
        configs = mhmm.memory_configurations()
        u = [Fraction(v) for v in witness.u]
        M_u = {ms[j] for c, ms in enumerate(configs) if u[c * n] == 1}
        expect = [Fraction(1) if ms[j] in M_u else Fraction(0) for ms in configs for _ in range(n)]
        if u != expect:
            why.append("u is not the 0/1 indicator of a set of values of m_j* (eq. C.6's form)")
        if any(mhmm.mu[m] != 0 and m not in M_u for m in range(M)):
            why.append("supp(mu) is not inside the set the prompt keeps")
        if list(mhmm.A.dot(mhmm.pi0)) != list(mhmm.pi0):
            why.append("P[H_0] is not stationary (Assumption 4.4), so Proposition C.8 is unavailable")
    omega = [(m, h) for h in range(n) for m in range(M) if mhmm.cell_of(h) != j or m in M_u]
    a = {(m, h): key.dot(Wf[:, m * n + h]) for m, h in omega}
    on = {a[c] for c in omega if c[1] in Hs}
    kappa = next(iter(on)) if len(on) == 1 else None
    if kappa is None:
        why.append("q . Theta_K W_(m,h) is not one constant on H*")
    elif any(a[c] >= kappa for c in omega if c[1] not in Hs):
        why.append("q . Theta_K W_(m,h) is not below its H* value off H*")
    qb = [q.dot(r) for r in witness.beta]
    read = qb[1:] if prompt else qb
    if prompt and len(qb) == 1:
        read = qb
    if len(set(read)) > 1:
        why.append("q . beta_i differs between read positions")
    if prompt and read:
        lo = min([Fraction(0)] + list(a.values())) + read[0]
        hi = max([Fraction(0)] + list(key)) + qb[0]
        if not hi < lo:
            why.append(f"the prompt position's score can reach {hi}, not below {lo}")
    ThV_T = np.asarray(witness.Theta_V, dtype=object).T
    b = np.asarray(witness.b, dtype=object)
    lam = None
    ratios, bad = set(), False
    for z in range(X):
        g = ThV_T.dot(b * Wf[z])
        for m, h in omega:
            if not prompt and h not in Hs:
                continue
            lhs = g.dot(Wf[:, m * n + h])
            rhs = Fraction(mhmm.mu[m]) * mhmm.W[z, m, h] * (1 if h in Hs else 0)
            if rhs == 0:
                bad |= lhs != 0
            else:
                ratios.add(lhs / rhs)
    if bad or len(ratios) > 1 or (ratios and next(iter(ratios)) <= 0):
        why.append("b . ((Theta_V W_(m,h)) ⊙ e(z)) is not a positive multiple of mu_m W[z,m,h] on H*")
    elif ratios:
        lam = next(iter(ratios))
    else:
        lam = Fraction(1)
    holds = not why
    if holds:
        what = (f"exact identities hold: q.Theta_K W_(m,h) = {kappa} on H* and less off it, equal q.beta on the "
                f"read positions; b.((Theta_V W_(m,h)) ⊙ e(z)) = {lam} mu_m W[z,m,h] on H*"
                + ("; u = 1(m_j* in supp-set ⊇ supp(mu)), P[H_0] stationary" if prompt else "")
                + "; hence F = F* on every x in R (Lemmas C.2/C.4" + (", C.9/C.13)" if prompt else ")"))
    else:
        what = "; ".join(why) + "; agreement then rests on the sequences checked alone"
    return {"holds": holds, "what": what}
