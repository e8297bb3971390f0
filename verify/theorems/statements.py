"""Every numbered statement of Sections 3-4 and Appendices A-C: how the toolkit checks it, and
the result of checking it now (``verify statements``).

Kinds of check: ``exact on instances`` (a ``verify theorem`` run, exact arithmetic, on a small
generated instance), ``symbolic`` (``verify symbolic`` at |H| = |X| = T = 2: identities of
rational functions), ``path sums`` (new exact checks here against brute-force sums over hidden
paths, written independently of the message-passing code), and ``indirect`` (a step of a proof
whose conclusion is checked by the named run; no separate result).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction
from typing import Callable

import numpy as np

from ...models.hmm.values import HMM
from ...models.inference import exact as ie
from ...models.generate.generators import prompt_friendly_hmm, stationary_distribution
from ..api import run_theorem
from .requests import TheoremRequest

__all__ = ["STATEMENTS", "run_statements", "path_joint", "check_lemma_b1", "check_prop_c8",
           "check_claim_c15", "small_instance",
           "memory_path_joint", "check_lemma_c7", "check_prop_c11", "check_claim_c14", "paper_prompt"]

THEOREM_RUN = {"samples": 100, "length": 4}
SIZES = {"3.3": {"hidden": 3, "vocab": 3}, "3.6": {"hidden": 4, "vocab": 3}}


# --------------------------------------------------------------- brute-force path sums

def path_joint(A, W, pi0, emissions, keep: int | None = None):
    """``sum over paths h_0..h_T of pi0[h_0] prod_j A[h_j, h_{j-1}] e_j[h_j]`` where
    ``emissions[j-1]`` is the weight vector ``e_j`` of position ``j`` (a token's column ``W[x]``,
    a prompt ``u``, or all ones for a free position). With ``keep = i`` the vector over
    ``h_i`` instead of the total. Cost ``|H|^(T+1)``: tiny instances only."""
    n = len(pi0)
    out = [Fraction(0)] * n
    for path in itertools.product(range(n), repeat=len(emissions) + 1):
        p = Fraction(pi0[path[0]])
        for j, e in enumerate(emissions, start=1):
            p *= Fraction(A[path[j]][path[j - 1]]) * Fraction(e[path[j]])
            if p == 0:
                break
        out[path[keep or 0]] += p
    return out if keep is not None else sum(out)


def small_instance(seed: int = 0, hidden: int = 3, vocab: int = 2) -> HMM:
    """A small exact instance with a binary task (the generator of Theorem 3.6)."""
    return prompt_friendly_hmm(hidden, vocab, rng=np.random.default_rng(seed))[0]


def check_lemma_b1(hmm: HMM, u, sequences, *, fake=None) -> tuple[bool, str]:
    """Lemma B.1: the prompt acts as a fake token ``z~`` whose emission column is ``u``:
    ``Gbar_2(u, e(∅), e(x))`` (message passing, :func:`ie.gbar`) equals
    ``G_2(z~, ∅, x) = P[X_2 | X_1 = z~, X_{3:} = x]`` of the HMM augmented with ``z~``, computed
    from brute-force joint path sums (``sum_z W[z] = 1``, so the normaliser is the same).
    ``fake`` (default ``u``) is the emission column given to ``z~``: any other column states a
    wrong lemma, which this check must refute."""
    W = [list(r) for r in hmm.W]
    fake = list(u) if fake is None else list(fake)
    for seq in sequences:
        cols = [W[z] for z in seq]
        got = ie.gbar(hmm, [list(u), [Fraction(1)] * hmm.num_states] + cols, 1)
        joint = [path_joint(hmm.A, W, hmm.pi0, [fake, W[z]] + cols) for z in range(hmm.num_tokens)]
        total = sum(joint)
        want = [j / total if total else Fraction(0) for j in joint]
        if got != want:
            return False, f"x = {list(seq)}: Gbar_2 = {got} but G_2 of the augmented HMM = {want}"
    return True, f"equal on {len(sequences)} sequences"


def memory_path_joint(mhmm, weights, *, by_config: bool = False):
    """``sum_m pM[m] sum_paths pi0[h_0] prod_j A[h_j, h_{j-1}] w_j(m, h_j)`` straight from the
    memory HMM's definition (Section 4): ``weights[j-1]`` is ``("token", z)`` (weight
    ``W[z, m_{cell(h)}, h]``) or ``("lifted", v)`` (weight ``v[c |H| + h]`` over the lifted
    states, ``c`` the configuration's index). With ``by_config`` the list of the per-configuration
    sums (lexicographic ``m_1..m_N``) instead of the total. Cost ``|M|^N |H|^(T+1)``: tiny
    instances only."""
    n, S = mhmm.num_states, mhmm.syntax_states
    parts = []
    for c, ms in enumerate(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells)):
        part = Fraction(0)
        if mhmm.pM[c] != 0:
            for path in itertools.product(range(n), repeat=len(weights) + 1):
                p = Fraction(mhmm.pM[c]) * Fraction(mhmm.pi0[path[0]])
                for j, (kind, val) in enumerate(weights, start=1):
                    h = path[j]
                    p *= Fraction(mhmm.A[h, path[j - 1]])
                    p *= Fraction(mhmm.W[val, ms[h // S], h]) if kind == "token" else Fraction(val[c * n + h])
                    if p == 0:
                        break
                part += p
        parts.append(part)
    return parts if by_config else sum(parts, Fraction(0))


def paper_prompt(mhmm) -> list[Fraction]:
    """The prompt of eq. (C.6) over the lifted states, ``u = 1(m_j* in supp(mu))`` (the
    construction's :func:`~headprompt.constructions.memory.prompt_vector`)."""
    from ...constructions.memory import prompt_vector

    return list(prompt_vector(mhmm, [m for m in range(mhmm.memory_values) if mhmm.mu[m] != 0]))


def check_prop_c11(mhmm, u, sequences) -> tuple[bool, str]:
    """Proposition C.11: with the prompt ``u`` as the first input, for every later position
    ``i`` with ``Pr(Xhat_-i = xhat_-i) > 0``, ``supp(P[M_j* | Xhat_-i = xhat_-i]) ⊆ supp(mu)``
    (brute-force sums over memories and hidden paths, position ``i`` left free). A prompt that
    is not zero off ``supp(mu)`` can break it, and this check then says where."""
    ones = [Fraction(1)] * (len(mhmm.pM) * mhmm.num_states)
    support = {m for m in range(mhmm.memory_values) if mhmm.mu[m] != 0}
    configs = list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))
    seen = 0
    for seq in sequences:
        for i in range(1, len(seq) + 1):
            weights = [("lifted", list(u))] + [("token", z) for z in seq]
            weights[i] = ("lifted", ones)
            parts = memory_path_joint(mhmm, weights, by_config=True)
            if sum(parts) == 0:
                continue
            seen += 1
            found = {configs[c][mhmm.target_cell] for c, p in enumerate(parts) if p}
            if not found <= support:
                return False, (f"x = {list(seq)}, position {i}: P[M_j* | Xhat_-i] puts mass on memory "
                               f"values {sorted(found - support)} outside supp(mu) = {sorted(support)}")
    if not seen:
        return False, "no position with Pr(Xhat_-i) > 0 among the sequences given"
    return True, f"supports inside supp(mu) = {sorted(support)} at {seen} (sequence, position) pairs"


def check_claim_c14(mhmm, u, sequences) -> tuple[bool, str]:
    """Claim C.14: for ``xhat = (z~, x)`` with ``Pr(Xhat = xhat) > 0``,
    ``mu . P[M_j* | Xhat = xhat] = mu . P[M_j* | X = x] / Pr(Xhat_1 = z~ | Xhat_{2:} = x)``, each
    side from brute-force sums over memories and hidden paths (the prompt position free for the
    denominator; ``X = x`` on the chain without a prompt). It rests on stationarity
    (Proposition C.8) and on ``u`` being 1 on ``supp(mu)``: a scaled prompt breaks it."""
    ones = [Fraction(1)] * (len(mhmm.pM) * mhmm.num_states)
    configs = list(itertools.product(range(mhmm.memory_values), repeat=mhmm.cells))
    task = [Fraction(mhmm.mu[ms[mhmm.target_cell]]) for ms in configs]
    seen = 0
    for seq in sequences:
        tokens = [("token", z) for z in seq]
        hat = memory_path_joint(mhmm, [("lifted", list(u))] + tokens, by_config=True)
        if sum(hat) == 0:
            continue
        seen += 1
        rest = memory_path_joint(mhmm, [("lifted", ones)] + tokens)          # Pr(Xhat_{2:} = x)
        plain = memory_path_joint(mhmm, tokens, by_config=True)
        lhs = sum(t * p for t, p in zip(task, hat)) / sum(hat) * (sum(hat) / rest)
        rhs = sum(t * p for t, p in zip(task, plain)) / sum(plain)
        if lhs != rhs:
            return False, (f"x = {list(seq)}: mu . P[M_j* | Xhat] Pr(z~ | Xhat_2:) = {lhs} but "
                           f"mu . P[M_j* | X = x] = {rhs}")
    if not seen:
        return False, "no sequence with Pr(Xhat = xhat) > 0 among those given"
    return True, f"equal on {seen} sequences with Pr(xhat) > 0"


def check_lemma_c7(mhmm, u, sequences, *, fake=None) -> tuple[bool, str]:
    """Lemma C.7 (memory analogue of Lemma B.1): ``Gbar_i(u, eta(e(x_1)), ...)`` over the lifted
    states (message passing, :func:`ie.prompt_gbar`) equals ``P[X_i | rest]`` of the memory HMM
    augmented with a fake token whose emission over ``(m_1..m_N, h)`` is ``u``, from brute-force
    sums over memories and hidden paths, at every position ``i``. ``fake`` (default ``u``)
    states a wrong lemma when it differs."""
    fake = list(u) if fake is None else list(fake)
    for seq in sequences:
        for i in range(len(seq) + 1):
            got = ie.prompt_gbar(mhmm, u, list(seq), i)
            weights = [("lifted", fake)] + [("token", z) for z in seq]
            joint = []
            for z in range(mhmm.num_tokens):
                w = list(weights)
                w[i] = ("token", z)
                joint.append(memory_path_joint(mhmm, w))
            total = sum(joint)
            want = [j / total if total else Fraction(0) for j in joint]
            if got != want:
                return False, (f"x = {list(seq)}, i = {i}: Gbar_i = {got} but G_i of the augmented "
                               f"memory HMM = {want}")
    return True, f"equal on {len(sequences)} sequences at every position"


def check_prop_c8(hmm: HMM, sequences, shifts: int = 2) -> tuple[bool, str]:
    """Proposition C.8 (per memory configuration, a chain like this one): with a stationary
    start, ``P[H_i, X_{i+1:i+t} = x]`` does not depend on ``i``; brute-force path sums with
    free (all-ones) positions ``1..i``."""
    ones = [Fraction(1)] * hmm.num_states
    W = [list(r) for r in hmm.W]
    for seq in sequences:
        base = path_joint(hmm.A, W, hmm.pi0, [W[z] for z in seq], keep=0)
        for i in range(1, shifts + 1):
            other = path_joint(hmm.A, W, hmm.pi0, [ones] * i + [W[z] for z in seq], keep=i)
            if other != base:
                return False, f"x = {list(seq)}: P[H_{i}, X_{{{i + 1}:}} = x] = {other} != P[H_0, X = x] = {base}"
    return True, f"shift-invariant on {len(sequences)} sequences, shifts 1..{shifts}"


def check_claim_c15(hmm: HMM, u, sequences) -> tuple[bool, str]:
    """Claim C.15 (its vanilla form): a sequence with ``Pr(x) = 0`` (brute-force path sums)
    has ``P[H_0 | x] = 0`` and ``Gbar = 0`` under the prompt (message passing); at least one
    impossible sequence must be among ``sequences``."""
    W = [list(r) for r in hmm.W]
    seen = 0
    for seq in sequences:
        if path_joint(hmm.A, W, hmm.pi0, [W[z] for z in seq]) != 0:
            continue
        seen += 1
        g = ie.gbar(hmm, [list(u), [Fraction(1)] * hmm.num_states] + [W[z] for z in seq], 1)
        if any(ie.posterior_h0(hmm, seq)) or any(g):
            return False, f"x = {list(seq)} is impossible but P[H_0 | x] or Gbar is not zero"
    if not seen:
        return False, "no impossible sequence among those given"
    return True, f"{seen} impossible sequence(s): posterior and Gbar are zero"


def _impossible_instance() -> tuple[HMM, list]:
    """Three states; token 1 only from state 2, state 2 only reached from state 2 (absent at
    the start): every sequence containing token 1 is impossible."""
    h = HMM.create([["1/2", "1/2", 0], ["1/2", "1/2", 0], [0, 0, 1]],
                   [[1, 1, 0], [0, 0, 1]], ["1/2", "1/2", 0], [1, -1, 0])
    return h, ["1/2", 1, 1]


def _stationary(hmm: HMM) -> HMM:
    pi = stationary_distribution(hmm.A)
    return HMM.create(hmm.A, hmm.W, pi, hmm.mu)


def _words(vocab: int, length: int):
    return [s for t in range(1, length + 1) for s in itertools.product(range(vocab), repeat=t)]


def _theorem(tid: str) -> Callable[[], tuple[bool, str]]:
    def run():
        r = run_theorem(TheoremRequest.from_options(tid, **SIZES.get(tid, {}), **THEOREM_RUN))
        return r.data["verdict"] == "verified", f"verify theorem {tid}: {r.data['verdict']}"
    return run


def _assumption(aid: str, tid: str) -> Callable[[], tuple[bool, str]]:
    def run():
        r = run_theorem(TheoremRequest.from_options(tid, **SIZES.get(tid, {}), **THEOREM_RUN))
        a = r.data["assumptions"].get(aid)
        if a is None:
            return False, f"verify theorem {tid} does not report Assumption {aid}"
        return bool(a["holds"]), f"checked exactly on the instance of verify theorem {tid}: " + (
            "holds" if a["holds"] else "fails")
    return run


def _symbolic(name: str) -> Callable[[], tuple[bool, str]]:
    def run():
        from ..symbolic.proofs import prove_all
        out = prove_all(2, 2, 2, [name])[0]
        return bool(out["holds"]), f"verify symbolic {name} at |H| = |X| = T = 2: " + (
            "proved" if out["holds"] else "fails")
    return run


def _b1():
    hmm = small_instance()
    return check_lemma_b1(hmm, [Fraction(1, 2), Fraction(1), Fraction(1, 3)], _words(hmm.num_tokens, 3))


def _memory_instance():
    r = run_theorem(TheoremRequest.from_options("4.6", hidden=2, memory=2, cells=1, samples=1, length=1))
    return r.details["model"]


def _c7():
    m = _memory_instance()
    size = len(m.pM) * m.num_states
    u = [Fraction(k % 3, 2) for k in range(size)]          # entries 0, 1/2, 1
    return check_lemma_c7(m, u, [(0,), (1, 2)])


def _c8():
    return check_prop_c8(_stationary(small_instance(1)), _words(2, 2))


def _support_instance():
    """A stationary one-cell memory HMM with |M| = 3 and supp(mu) a proper subset of M (so the
    prompt of eq. (C.6) is zero somewhere): the generated Theorem 4.6 instance with mu's last
    entry set to 0."""
    r = run_theorem(TheoremRequest.from_options("4.6", hidden=2, memory=3, cells=1, samples=1, length=1))
    m = r.details["model"]
    return replace(m, mu=np.array([m.mu[0], m.mu[1], Fraction(0)], dtype=object))


def _c11():
    m = _support_instance()
    return check_prop_c11(m, paper_prompt(m), _words(m.num_tokens, 2))


def _c14():
    m = _support_instance()
    return check_claim_c14(m, paper_prompt(m), _words(m.num_tokens, 2))


def _c15():
    hmm, u = _impossible_instance()
    return check_claim_c15(hmm, [Fraction(v) for v in u], _words(2, 3))


SYMB = "symbolic (sympy, |H| = |X| = T = 2)"
EXACT = "exact on instances (verify theorem)"
PATHS = "path sums (brute force vs message passing, exact)"
SUMS = "path sums (brute force over memories and hidden paths, exact)"


def _ind(where: str):
    return ("indirect: a proof step inside " + where, None)


STATEMENTS: list[tuple[str, str, Callable | None]] = [
    ("Assumption 3.1", "exact rank test of the feature matrix; Motzkin certificate when it fails", _assumption("3.1", "3.3")),
    ("Assumption 3.2", "exact positivity/rank checks", _assumption("3.2", "3.3")),
    ("Theorem 3.3", EXACT + " and symbolic head identity (head-3.3)", _theorem("3.3")),
    ("Proposition 3.4", SYMB, _symbolic("prop-3.4")),
    ("Assumption 3.5", "exact search for a basis set B and H*", _assumption("3.5", "3.6")),
    ("Theorem 3.6", EXACT + " and symbolic head identity (head-3.6)", _theorem("3.6")),
    ("Example 4.1", "indirect: the memory HMM family of verify theorem 4.3 (generators)", None),
    ("Assumption 4.2", "exact non-degeneracy check", _assumption("4.2", "4.3")),
    ("Theorem 4.3", EXACT, _theorem("4.3")),
    ("Assumption 4.4", "exact check", _assumption("4.4", "4.6")),
    ("Assumption 4.5", "exact check", _assumption("4.5", "4.6")),
    ("Theorem 4.6", EXACT, _theorem("4.6")),
    ("Claim A.1", SYMB, _symbolic("claim-A.1")),
    ("Lemma B.1", PATHS + ": prompt = fake token with emission u", _b1),
    ("Lemma B.2", SYMB, _symbolic("lemma-B.2")),
    ("Proposition C.1", *_ind("verify theorem 4.3 (the attention head's identity)")),
    ("Lemma C.2", *_ind("verify theorem 4.3")),
    ("Claim C.3", *_ind("verify theorem 4.3")),
    ("Lemma C.4", *_ind("verify theorem 4.3")),
    ("Assumption C.5", "exact check", _assumption("C.5", "C.6")),
    ("Theorem C.6", EXACT, _theorem("C.6")),
    ("Lemma C.7", PATHS + ": memory analogue of Lemma B.1, sums over memories and paths", _c7),
    ("Proposition C.8", PATHS + ": stationary start, shift invariance (per memory configuration)", _c8),
    ("Lemma C.9", *_ind("verify theorem 4.6 / C.6")),
    ("Claim C.10", *_ind("verify theorem 4.6 / C.6")),
    ("Proposition C.11", SUMS + ": supports of P[M_j* | Xhat_-i] under the prompt (C.6), inside supp(mu)", _c11),
    ("Claim C.12", *_ind("verify theorem 4.6 / C.6")),
    ("Lemma C.13", *_ind("verify theorem 4.6 / C.6")),
    ("Claim C.14", SUMS + ": mu . P[M_j* | Xhat] = mu . P[M_j* | X] / Pr(z~ | rest), stationary start", _c14),
    ("Claim C.15", PATHS + " (vanilla form): impossible x gives zero posterior and Gbar", _c15),
]
"""``(name, how it is checked, check)``; ``check()`` returns ``(holds, detail)``, None for indirect."""


def run_statements() -> list[dict]:
    """Run every check; one row per statement: ``statement``, ``how``, ``result``
    (``"holds"``, ``"fails"`` or ``"indirect"``), ``detail``."""
    rows = []
    for name, how, check in STATEMENTS:
        if check is None:
            rows.append({"statement": name, "how": how, "result": "indirect", "detail": None})
            continue
        holds, detail = check()
        rows.append({"statement": name, "how": how, "result": "holds" if holds else "fails", "detail": detail})
    return rows
