"""Symbolic proofs (sympy) of the HMM identities behind Theorems 3.3 and 3.6.

Every statement is proven as an identity of rational functions in symbolic HMM parameters,
for every token sequence ``x`` of each length ``1..T``, at small sizes (default ``|H| = 2``,
``|X| = 2``, ``T = 3``). The stochastic constraints are built in: the last free entry of each
column of ``A`` and ``W`` and the last entry of ``pi0`` are ``1 - (sum of the others)``, so an
identity proven here holds on the whole parameter space (wherever its denominators are
nonzero, i.e. on a dense open set containing the interior).

Two independent computations meet in every proof (SPEC section 1 conventions, 0-based states
and tokens, hidden chain ``H_0, H_1, ...`` with ``H_0`` silent):

- left-hand sides by brute force over hidden paths (:func:`path_sum`, the SPEC's definition of
  ``tau_i`` read literally);
- right-hand sides from the paper's formula, with the probabilities in it computed by matrix
  products (forward marginals ``A^i pi0``, backward messages ``Pr(X_{1:T} = x | H_0)``).

Equality is decided as ``sympy.together`` decides it: values are :class:`RationalFunction`
fractions ``num / den`` of polynomials in ``QQ[parameters]`` (sympy's sparse ``PolyRing``), every
denominator a nonzero polynomial; the difference of the two sides, brought over the common
denominator, must have the zero polynomial as numerator. (No gcds are taken: reducing by them,
as ``sympy.cancel`` does, changes nothing about whether the numerator is 0 and costs minutes.)
Every statement function takes a hook that replaces the right-hand side (or the head, the
prompt, ...), so a wrong formula can be fed in and is rejected.

Positivity of ``r_x``: its numerator and denominator are computed once more with every entry of
``A``, ``W``, ``pi0`` (and ``u``) a free symbol (constraints not substituted); both are checked
to be nonzero polynomials with nonnegative coefficients, which proves ``r_x > 0`` wherever every
such entry is positive (and ``r_x`` used in the identities is this ratio with the constraints
substituted).

The module is split along its seams: :mod:`.algebra` (the symbolic HMM and its
rational functions, size budgets), :mod:`.sides` (brute-force left-hand sides and the
paper's right-hand sides) and this module (the statements and their proofs); the names of all
three are importable from here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from ...models.exceptions import InputError

from .algebra import *  # noqa: F401,F403 - re-exported
from .algebra import __all__ as _algebra_names
from .algebra import (RationalFunction, SymbolicHMM, Vector, check_sizes, sequences,
                               symbolic_hmm)
from .sides import *  # noqa: F401,F403 - re-exported
from .sides import __all__ as _sides_names
from .sides import _dot, _lemma_b2_r, _normalized
from .sides import (claim_a1_rhs, gbar2_rhs, gbar_path_sum, head_3_3_matrix,
                             head_3_3_rhs, head_3_6_matrix, lemma_b2_rhs, left_inverse,
                             nonnegative_polynomial, path_sum, prompt_weight, prop_3_4_rhs,
                             sequence_probability, start_posterior, structured_case)

__all__ = ["STATEMENTS", "PROVERS", "prove_all", "prop_3_4", "claim_a1", "lemma_b2", "head_3_3",
           "head_3_6", *_algebra_names, *_sides_names]

from .limits import STATEMENTS  # noqa: E402 - the one list of names

# ----------------------------------------------------------------------------------------------
# The statements.

RhsHook = Callable[..., Any]


def _emb(hmm: SymbolicHMM, x: Sequence[int]) -> list[Vector]:
    return [hmm.emission(z) for z in x]


def _equal(hmm: SymbolicHMM, lhs: Any, rhs: Any) -> bool:
    """True iff ``lhs - rhs`` is the zero rational function (componentwise for vectors)."""
    if not isinstance(lhs, tuple):
        lhs, rhs = (lhs,), (rhs,)
    return len(lhs) == len(rhs) and all((hmm.frac(a) - hmm.frac(b)).is_zero()
                                        for a, b in zip(lhs, rhs))


def _result(name: str, statement: str, sizes: dict, checked: int, what: str,
            failure: dict | None, r_x: dict | None = None, **checks: bool) -> dict[str, Any]:
    """The plain result dict; ``holds`` is the conjunction of the identity and side checks."""
    holds = failure is None and all(checks.values())
    return {"name": name, "statement": statement, "holds": holds, "sizes": sizes,
            "sequences_checked": checked, "what": what, "failure": failure,
            "checks": {"identity": failure is None, **checks}, "r_x": r_x}


def _r_positive(parts: Iterable[tuple[Any, Any]]) -> bool:
    return all(nonnegative_polynomial(num) and nonnegative_polynomial(den) for num, den in parts)


def _r_example(formula: str, num: Any, den: Any) -> dict[str, str]:
    """``r_x`` for ``x = (0,)`` in the entries of ``A, W, pi0, u`` (column constraints not yet
    substituted, so every coefficient shows as nonnegative)."""
    return {"formula": formula, "x": "[0]", "value": f"({num.as_expr()}) / ({den.as_expr()})"}


def prop_3_4(hidden: int = 2, vocab: int = 2, length: int = 3, *,
             rhs: RhsHook | None = None) -> dict[str, Any]:
    """Proposition 3.4 on the HMM (``U = X_1``, ``Z = H_1``, ``V = X_{2:T+1}``):
    ``P[X_1 | X_{2:T+1} = x] = G_1(x') = W P[H_1 | X_{2:T+1} = x]``, ``x' = (empty, x)``.

    Left: the token conditional from the joint law (paths and ``X_1 = z`` summed by brute
    force), and ``Gbar_1(e(x'))`` from the SPEC's ``tau_1`` with a symbolic ``e(empty)``.
    Right: ``rhs(hmm, x)`` (default :func:`prop_3_4_rhs`), shape ``(|X|,)``.
    """
    check_sizes(hidden, vocab, length)
    hmm, rhs = symbolic_hmm(hidden, vocab), rhs or prop_3_4_rhs
    checked, failure = 0, None
    for x in sequences(vocab, length):
        target = rhs(hmm, x)
        joint = tuple(sum(path_sum(hmm, [hmm.emission(z)] + _emb(hmm, x), 1), hmm.ring.zero)
                      for z in range(vocab))
        checked += 1
        for label, lhs in (("P[X_1 | X_{2:T+1} = x]", _normalized(hmm, joint)),
                           ("Gbar_1(e(x'))", gbar_path_sum(hmm, [hmm.empty] + _emb(hmm, x), 0))):
            if not _equal(hmm, lhs, target):
                failure = {"sequence": list(x), "left": label}
                break
        if failure:
            break
    what = ("P[X_1 | X_{2:T+1}=x] (joint law, brute force) and G_1(x') = Gbar_1(e(empty), e(x)) "
            "(SPEC tau_1, symbolic e(empty)) both equal W P[H_1 | X_{2:T+1}=x] as rational "
            "functions, for every x of length 1..T")
    return _result("prop-3.4", "Proposition 3.4: G_1(x') = W P[H_1 | X_{2:T+1} = x]",
                   {"hidden": hidden, "vocab": vocab, "length": length}, checked, what, failure)


def claim_a1(hidden: int = 2, vocab: int = 2, length: int = 3, *, steps: Sequence[int] = (1, 2),
             rhs: RhsHook | None = None) -> dict[str, Any]:
    """Claim A.1: ``P[H_i | X_{i+1:T+i} = x] = r_x D P[H_0 | X_{1:T} = x]`` with
    ``D = diag(P[H_i] / P[H_0])`` and ``r_x = Pr(X_{1:T} = x) / Pr(X_{i+1:T+i} = x)``.

    Left: brute-force path sum over ``h_0..h_{T+i}``. Right: ``rhs(hmm, x, i)`` (default
    :func:`claim_a1_rhs`), shape ``(|H|,)``. Checked for each ``i`` in ``steps``.
    """
    check_sizes(hidden, vocab, length)
    if not steps or any(isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= 3
                        for i in steps):
        raise InputError(f"claim-A.1: steps must be integers in 1..3, got {list(steps)!r}")
    hmm, free = symbolic_hmm(hidden, vocab), symbolic_hmm(hidden, vocab, constrained=False)
    rhs = rhs or claim_a1_rhs
    checked, failure = 0, None
    for i in steps:
        for x in sequences(vocab, length):
            lhs = _normalized(hmm, path_sum(hmm, [None] * i + _emb(hmm, x), i))
            checked += 1
            if not _equal(hmm, lhs, rhs(hmm, x, i)):
                failure = {"sequence": list(x), "step": i}
                break
        if failure:
            break
    positive = _r_positive((sequence_probability(free, x), sequence_probability(free, x, i))
                           for i in steps for x in sequences(vocab, length))
    what = ("P[H_i | X_{i+1:T+i}=x] (brute force) = r_x diag(P[H_i]/P[H_0]) P[H_0 | X_{1:T}=x] "
            f"for i in {list(steps)}, every x of length 1..T, with r_x = Pr(X_{{1:T}}=x) / "
            "Pr(X_{i+1:T+i}=x); numerator and denominator of r_x are nonzero polynomials with "
            "nonnegative coefficients in the unconstrained entries of A, W, pi0, so r_x > 0 "
            "wherever all entries are positive")
    return _result("claim-A.1", "Claim A.1: P[H_i | X_{i+1:T+i} = x] = r_x D P[H_0 | X_{1:T} = x]",
                   {"hidden": hidden, "vocab": vocab, "length": length, "steps": list(steps)},
                   checked, what, failure, r_x_positive=positive, r_x=_r_example(
                       f"Pr(X_{{1:T}}=x) / Pr(X_{{{steps[0] + 1}:T+{steps[0]}}}=x)",
                       sequence_probability(free, (0,)),
                       sequence_probability(free, (0,), steps[0])))


def lemma_b2(hidden: int = 2, vocab: int = 2, length: int = 3, *,
             rhs: RhsHook | None = None) -> dict[str, Any]:
    """Lemma B.2: ``P[H_2 | Xhat_1 = ztilde, Xhat_{3:T+2} = x] =
    r_x D (P[Xhat_1 = ztilde, H_2] ⊙ P[H_0 | X_{1:T} = x])``, ``D = diag(1/P[H_0])``,
    ``P[Xhat_1 = ztilde, H_2] = c = A (u ⊙ P[H_1])``,
    ``r_x = Pr(X_{1:T} = x) / Pr(Xhat_1 = ztilde, Xhat_{3:T+2} = x)``, symbolic ``u``.

    Left: brute-force path sum in the modified HMM of Lemma B.1 (emission ``u`` at time 1,
    time 2 unobserved). Right: ``rhs(hmm, x)`` (default :func:`lemma_b2_rhs`), shape ``(|H|,)``.
    """
    check_sizes(hidden, vocab, length)
    hmm, free = symbolic_hmm(hidden, vocab), symbolic_hmm(hidden, vocab, constrained=False)
    rhs = rhs or lemma_b2_rhs
    checked, failure = 0, None
    for x in sequences(vocab, length):
        lhs = _normalized(hmm, path_sum(hmm, [hmm.u, None] + _emb(hmm, x), 2))
        checked += 1
        if not _equal(hmm, lhs, rhs(hmm, x)):
            failure = {"sequence": list(x)}
            break
    positive = _r_positive(_lemma_b2_r(free, x) for x in sequences(vocab, length))
    what = ("P[H_2 | Xhat_1=ztilde, Xhat_{3:T+2}=x] (brute force, prompt u symbolic) = r_x "
            "diag(1/P[H_0]) (c ⊙ P[H_0 | X_{1:T}=x]), c = A(u ⊙ P[H_1]) = "
            "P[Xhat_1=ztilde, H_2], "
            "r_x = Pr(X_{1:T}=x) / Pr(Xhat_1=ztilde, Xhat_{3:T+2}=x) (= Pr(X_{1:T}=x) / "
            "(c . P[X_{1:T}=x | H_0])), every x of length 1..T; r_x's numerator and denominator "
            "have nonnegative coefficients in the unconstrained entries of A, W, pi0, u")
    return _result("lemma-B.2", "Lemma B.2: P[H_2 | Xhat_1 = ztilde, Xhat_{3:T+2} = x] = "
                   "r_x diag(1/P[H_0]) (c ⊙ P[H_0 | X_{1:T} = x])",
                   {"hidden": hidden, "vocab": vocab, "length": length}, checked, what, failure,
                   r_x_positive=positive, r_x=_r_example(
                       "Pr(X_{1:T}=x) / Pr(Xhat_1=ztilde, Xhat_{3:T+2}=x)",
                       *_lemma_b2_r(free, (0,))))


def _head_identity(hmm: SymbolicHMM, M: dict[int, Vector], G: Vector, target: Vector,
                   states: Iterable[int]) -> bool:
    """``(M G)_h = target_h`` for every ``h`` in ``states``: with ``b = mu^T M`` and ``mu`` free on
    ``states``, ``b . G - mu . target = sum_h mu_h ((M G)_h - target_h)`` vanishes identically
    iff every coefficient does, so this proves the head identity for symbolic ``mu``."""
    return all(_equal(hmm, _dot(M[h], G), target[h]) for h in states)


def head_3_3(hidden: int = 2, vocab: int = 2, length: int = 3, *, head: RhsHook | None = None,
             rhs: RhsHook | None = None) -> dict[str, Any]:
    """Theorem 3.3's head: ``b = mu^T D^-1 W^+``, ``D = diag(P[H_1]/P[H_0])``, gives
    ``b . G_1(x') = r_x mu . P[H_0 | X_{1:T} = x]``, ``r_x = Pr(X_{1:T}=x) / Pr(X_{2:T+1}=x)``,
    for every ``mu`` in ``R^H``.

    ``W^+`` is a left inverse (``W^-1`` when ``|X| = |H|``). ``head(hmm)`` (default
    :func:`head_3_3_matrix`) gives ``M`` with ``b = mu^T M``; ``rhs(hmm, x)`` (default
    :func:`head_3_3_rhs`) the coefficient vector of ``mu`` on the right, shape ``(|H|,)``.
    Raises :class:`InputError` if ``vocab < hidden`` (Assumption 3.1 cannot hold).
    """
    check_sizes(hidden, vocab, length)
    if vocab < hidden:
        raise InputError(f"head-3.3: Theorem 3.3 needs |X| >= |H| (Assumption 3.1, W with "
                         f"independent columns); got --hidden {hidden} --vocab {vocab}")
    hmm, free = symbolic_hmm(hidden, vocab), symbolic_hmm(hidden, vocab, constrained=False)
    w_plus = left_inverse(hmm, range(hidden))
    inverse_ok = all(_equal(hmm, _dot(w_plus[h], [row[g] for row in hmm.W]), int(h == g))
                     for h in range(hidden) for g in range(hidden))
    M, rhs = (head or head_3_3_matrix)(hmm), rhs or head_3_3_rhs
    checked, failure = 0, None
    for x in sequences(vocab, length):
        G = gbar_path_sum(hmm, [hmm.empty] + _emb(hmm, x), 0)
        checked += 1
        if not _head_identity(hmm, M, G, rhs(hmm, x), range(hidden)):
            failure = {"sequence": list(x)}
            break
    positive = _r_positive((sequence_probability(free, x), sequence_probability(free, x, 1))
                           for x in sequences(vocab, length))
    what = ("b = mu^T diag(P[H_1]/P[H_0])^-1 W^+ (W^+ W = I as rational functions) satisfies "
            "b . Gbar_1(e(empty), e(x)) = r_x mu . P[H_0 | X_{1:T}=x] for every mu (checked "
            "coefficient by coefficient in mu), r_x = Pr(X_{1:T}=x) / Pr(X_{2:T+1}=x) > 0 "
            "(nonnegative-coefficient numerator and denominator), every x of length 1..T")
    return _result("head-3.3", "Theorem 3.3 head: b . G_1(x') = r_x mu . P[H_0 | X_{1:T} = x]",
                   {"hidden": hidden, "vocab": vocab, "length": length}, checked, what, failure,
                   left_inverse=inverse_ok, r_x_positive=positive, r_x=_r_example(
                       "Pr(X_{1:T}=x) / Pr(X_{2:T+1}=x)", sequence_probability(free, (0,)),
                       sequence_probability(free, (0,), 1)))


def _indicator(hmm: SymbolicHMM, B: Sequence[int]) -> Vector:
    """``u = 1_B`` (proof of Theorem 3.6)."""
    return tuple(int(h in B) for h in range(hmm.num_states))


def head_3_6(hidden: int = 2, vocab: int = 2, length: int = 3, *, rhs: RhsHook | None = None,
             head: RhsHook | None = None, prompt: RhsHook | None = None,
             mu_support: Iterable[int] | None = None) -> dict[str, Any]:
    """Theorem 3.6, in two parts.

    1. ``Gbar_2(ehat(x)) = r_x W diag(1/P[H_0]) (c ⊙ P[H_0 | X_{1:T} = x])``,
       ``ehat(x) = (u, e(empty), e(x))`` (eq. 3.2), ``c = A (u ⊙ P[H_1])``, with symbolic
       ``A, W, pi0, u, e(empty)``; left by the SPEC's ``tau_2`` path sum, right ``rhs(hmm, x)``
       (default :func:`gbar2_rhs`), shape ``(|X|,)``.
    2. On :func:`structured_case` (Assumption 3.5 with ``H*``, ``B``): with ``u = prompt(hmm, B)``
       (default ``1_B``), ``supp(c) = H*``, and ``b = mu^T M``, ``M = head(hmm, H*)`` (default
       :func:`head_3_6_matrix`), gives ``b . Gbar_2(ehat(x)) = r_x mu . P[H_0 | X_{1:T} = x]``
       for every ``mu`` supported on ``mu_support`` (default ``H*``), ``r_x`` that of Lemma B.2.
    """
    check_sizes(hidden, vocab, length)
    case = structured_case(vocab)
    check_sizes(case["hidden"], vocab, length, structured=True)
    H_star, B = case["H_star"], case["B"]
    hmm = symbolic_hmm(hidden, vocab)
    rhs = rhs or gbar2_rhs
    checked, failure = 0, None
    for x in sequences(vocab, length):
        lhs = gbar_path_sum(hmm, [hmm.u, hmm.empty] + _emb(hmm, x), 1)
        checked += 1
        if not _equal(hmm, lhs, rhs(hmm, x)):
            failure = {"part": 1, "sequence": list(x)}
            break

    zeros = [tuple(e) for e in case["A_zeros"]]
    s_hmm = symbolic_hmm(case["hidden"], vocab, A_zeros=zeros)
    s_free = symbolic_hmm(case["hidden"], vocab, A_zeros=zeros, constrained=False)
    prompt = prompt or _indicator
    s_hmm = replace(s_hmm, u=tuple(s_hmm.ring(v) for v in prompt(s_hmm, B)))
    s_free = replace(s_free, u=tuple(s_free.ring(v) for v in prompt(s_free, B)))
    c, c_free = prompt_weight(s_hmm), prompt_weight(s_free)
    support_ok = all(bool(c[h]) == (h in H_star) for h in range(case["hidden"])) and all(
        nonnegative_polynomial(c_free[h]) for h in H_star)
    states = sorted(set(H_star if mu_support is None else mu_support))
    if failure is None:
        try:
            M = (head or head_3_6_matrix)(s_hmm, H_star)
            for x in sequences(vocab, length):
                G = gbar_path_sum(s_hmm, [s_hmm.u, s_hmm.empty] + _emb(s_hmm, x), 1)
                num, den = _lemma_b2_r(s_hmm, x)
                target = tuple(RationalFunction([num], [den]) * p
                               for p in start_posterior(s_hmm, x))
                checked += 1
                if not _head_identity(s_hmm, M, G, target, states):
                    failure = {"part": 2, "sequence": list(x)}
                    break
        except ZeroDivisionError as exc:  # e.g. a prompt with c = 0 on H*
            failure = {"part": 2, "error": str(exc)}
    positive = _r_positive(_lemma_b2_r(s_free, x) for x in sequences(vocab, length))
    what = ("(1) Gbar_2(u, e(empty), e(x)) (SPEC tau_2, symbolic u and e(empty)) = r_x W "
            "diag(1/P[H_0]) (c ⊙ P[H_0 | X_{1:T}=x]), c = A(u ⊙ P[H_1]), every x of length "
            "1..T; "
            f"(2) structured case |H| = {case['hidden']}, |X| = {vocab}, H* = {H_star}, B = {B}, "
            "A[h,0] = 0 for h not in H*: with u = 1_B, supp(c) = H* and b = mu^T "
            "diag(P[H_0]/c)_{H*} W_{H*}^+ gives b . Gbar_2(ehat(x)) = r_x mu . P[H_0 | X_{1:T}=x] "
            "for every mu supported on H* (coefficient by coefficient), r_x = Pr(X_{1:T}=x) / "
            "Pr(Xhat_1=ztilde, Xhat_{3:T+2}=x) > 0 (nonnegative-coefficient numerator and "
            "denominator)")
    return _result("head-3.6", "Theorem 3.6 head: Gbar_2(ehat(x)) = r_x W diag(1/P[H_0]) "
                   "(c ⊙ P[H_0 | x]) and b . Gbar_2(ehat(x)) = r_x mu . P[H_0 | x]",
                   {"hidden": hidden, "vocab": vocab, "length": length, "structured": case},
                   checked, what, failure, support_of_c=support_ok, r_x_positive=positive,
                   r_x=_r_example("Pr(X_{1:T}=x) / Pr(Xhat_1=ztilde, Xhat_{3:T+2}=x), u = 1_B",
                                  *_lemma_b2_r(s_free, (0,))))


PROVERS: dict[str, Callable[..., dict[str, Any]]] = {
    "prop-3.4": prop_3_4, "claim-A.1": claim_a1, "lemma-B.2": lemma_b2,
    "head-3.3": head_3_3, "head-3.6": head_3_6,
}


def prove_all(hidden: int = 2, vocab: int = 2, length: int = 3,
              names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Run the provers in ``names`` (default all of :data:`STATEMENTS`) at the given sizes.

    Raises :class:`InputError` for bad sizes or names, before any proof starts.
    """
    names = list(STATEMENTS if not names else names)
    unknown = [n for n in names if n not in PROVERS]
    if unknown:
        raise InputError(f"symbolic: unknown statement {unknown[0]!r}; choose from "
                         f"{', '.join(STATEMENTS)}")
    check_sizes(hidden, vocab, length)
    if "head-3.6" in names:
        check_sizes(structured_case(vocab)["hidden"], vocab, length, structured=True)
    if "head-3.3" in names and vocab < hidden:
        raise InputError(f"head-3.3: Theorem 3.3 needs |X| >= |H| (Assumption 3.1, W with "
                         f"independent columns); got --hidden {hidden} --vocab {vocab}; "
                         "raise --vocab or leave out head-3.3")
    return [PROVERS[n](hidden, vocab, length) for n in names]
