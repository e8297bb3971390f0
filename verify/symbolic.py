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
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Sequence

from sympy import QQ
from sympy.polys.rings import ring as poly_ring

from ..models.exceptions import InputError

__all__ = [
    "STATEMENTS", "PROVERS", "prove_all", "prop_3_4", "claim_a1", "lemma_b2", "head_3_3",
    "head_3_6", "MAX_SIZE", "MAX_PATH_WORK", "MAX_STRUCTURED_WORK", "path_work", "check_sizes",
    "RationalFunction", "SymbolicHMM", "symbolic_hmm", "sequences", "path_sum", "gbar_path_sum",
    "state_marginal", "backward_likelihood",
    "sequence_probability", "start_posterior", "prompt_weight", "left_inverse",
    "prop_3_4_rhs", "claim_a1_rhs", "lemma_b2_rhs", "gbar2_rhs", "head_3_3_matrix",
    "head_3_3_rhs", "head_3_6_matrix", "structured_case", "nonnegative_polynomial",
]

MAX_SIZE = 4
#: Budgets on :func:`path_work`, set from timings (worst allowed case about 30 s on one core).
MAX_PATH_WORK = 3_000
MAX_STRUCTURED_WORK = 45_000

Vector = tuple  # of polynomials or RationalFunctions, indexed by hidden state or token


class RationalFunction:
    """``prod(num) / prod(den)``: factors are polynomials in ``QQ[params]`` (a sympy
    ``PolyRing``), no denominator factor is the zero polynomial.

    Products keep factors and cancel factors that are equal as polynomials (sparse
    polynomials have a canonical form, so equal is equal); sums bring both terms over the
    least common multiple of the factor lists, as ``sympy.together`` does. :meth:`is_zero` is
    exact: some numerator factor is the zero polynomial.

    >>> from sympy.polys.rings import ring
    >>> R, a = ring("a", QQ)
    >>> r = RationalFunction([a], [a + 1])
    >>> (r + RationalFunction([R.one], [a + 1]) - 1).is_zero()
    True
    """

    __slots__ = ("num", "den")

    def __init__(self, num: Sequence[Any], den: Sequence[Any] = ()) -> None:
        num, den = list(num), list(den)
        one = (num or den)[0].ring.one
        if any(not f for f in den):
            raise ZeroDivisionError("RationalFunction: a denominator factor is the zero polynomial")
        if any(not f for f in num):
            num, den = [num[0].ring.zero], []
        for f in list(num):  # cancel equal factors
            if f in den:
                num.remove(f)
                den.remove(f)
        self.num = tuple(f for f in num if f != 1) or (one,)
        self.den = tuple(f for f in den if f != 1)

    @property
    def ring(self) -> Any:
        return self.num[0].ring

    def _lift(self, other: Any) -> RationalFunction:
        return other if isinstance(other, RationalFunction) else RationalFunction(
            [self.ring(other)])

    @staticmethod
    def _product(factors: Iterable[Any], one: Any) -> Any:
        out = one
        for f in factors:
            out = out * f
        return out

    def __add__(self, other: Any) -> RationalFunction:
        o = self._lift(other)
        if o.is_zero():
            return self
        if self.is_zero():
            return o
        mine, theirs, common = list(self.den), [], list(self.den)
        for f in o.den:  # common = multiset union of the denominators
            if f in mine:
                mine.remove(f)
            else:
                common.append(f)
                theirs.append(f)
        rest = list(common)
        for f in o.den:
            rest.remove(f)
        one = self.ring.one
        num = (self._product(self.num + tuple(theirs), one)
               + self._product(o.num + tuple(rest), one))
        return RationalFunction([num], common)

    __radd__ = __add__

    def __neg__(self) -> RationalFunction:
        return RationalFunction((-self.ring.one,) + self.num, self.den)

    def __sub__(self, other: Any) -> RationalFunction:
        return self + (-self._lift(other))

    def __rsub__(self, other: Any) -> RationalFunction:
        return self._lift(other) - self

    def __mul__(self, other: Any) -> RationalFunction:
        o = self._lift(other)
        return RationalFunction(self.num + o.num, self.den + o.den)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> RationalFunction:
        o = self._lift(other)
        return RationalFunction(self.num + o.den, self.den + o.num)

    def __rtruediv__(self, other: Any) -> RationalFunction:
        return self._lift(other) / self

    def is_zero(self) -> bool:
        return any(not f for f in self.num)

    def numerator(self) -> Any:
        return self._product(self.num, self.ring.one)

    def denominator(self) -> Any:
        return self._product(self.den, self.ring.one)

    def as_expr(self) -> Any:
        """The same rational function as a sympy expression (for ``sympy.cancel``)."""
        return self.numerator().as_expr() / self.denominator().as_expr()

    def __repr__(self) -> str:
        return f"({self.numerator()}) / ({self.denominator()})"


@dataclass(frozen=True)
class SymbolicHMM:
    """A vanilla HMM with symbolic parameters (SPEC section 1), entries in ``QQ[params]``.

    ``A``: ``|H| x |H|`` with ``A[h2][h1] = Pr(H_i = h2 | H_{i-1} = h1)``; ``W``: ``|X| x |H|``
    with ``W[x][h] = Pr(X_i = x | H_i = h)``; ``pi0``: ``P[H_0]``; ``u``: prompt vector in
    ``[0,1]^H`` (Section 3.1); ``empty``: ``e(empty)``, an arbitrary vector. ``constrained``
    says whether columns sum to 1 (see :func:`symbolic_hmm`).
    """

    ring: Any = field(repr=False)
    A: tuple
    W: tuple
    pi0: Vector
    u: Vector
    empty: Vector
    constrained: bool = True

    @property
    def num_states(self) -> int:
        return len(self.pi0)

    @property
    def vocab_size(self) -> int:
        return len(self.W)

    def frac(self, value: Any) -> RationalFunction:
        """``value`` (int, polynomial or :class:`RationalFunction`) as a rational function."""
        if isinstance(value, RationalFunction):
            return value
        return RationalFunction([self.ring(value)])

    def emission(self, token: int) -> Vector:
        """Proper embedding ``e(token) = W[token, :]``, a vector over ``H``."""
        return self.W[token]


def symbolic_hmm(hidden: int, vocab: int, *, constrained: bool = True,
                 A_zeros: Iterable[tuple[int, int]] = ()) -> SymbolicHMM:
    """Symbolic HMM with ``hidden`` states and ``vocab`` tokens.

    Free symbols: ``a{h2}_{h1}`` for ``A``, ``w{x}_{h}`` for ``W``, ``p{h}`` for ``pi0``,
    ``u{h}`` for the prompt and ``e{h}`` for ``e(empty)``. ``A_zeros`` lists entries
    ``(h2, h1)`` of ``A`` fixed to 0. With ``constrained`` the last nonzero entry of every column
    (and of ``pi0``) is ``1 - sum of the others``; otherwise every entry is a free symbol.
    Raises :class:`InputError` for bad sizes or a zero pattern that empties a column.

    >>> hmm = symbolic_hmm(2, 2)
    >>> hmm.A[1][0], hmm.W[1][1], hmm.pi0[1]
    (-a0_0 + 1, -w0_1 + 1, -p0 + 1)
    """
    check_sizes(hidden, vocab, 1)
    zeros = set(A_zeros)
    a_names = [[None if (r, c) in zeros else f"a{r}_{c}" for c in range(hidden)]
               for r in range(hidden)]
    w_names = [[f"w{x}_{h}" for h in range(hidden)] for x in range(vocab)]
    p_names = [f"p{h}" for h in range(hidden)]
    if constrained:  # the last nonzero entry of each column is not a symbol
        for c in range(hidden):
            rows = [r for r in range(hidden) if a_names[r][c] is not None]
            if not rows:
                raise InputError(f"A_zeros: column {c} of A would be all zero; it must sum to 1")
            a_names[rows[-1]][c] = "rest"
        for h in range(hidden):
            w_names[-1][h] = "rest"
        p_names[-1] = "rest"
    names = [n for row in a_names for n in row if n not in (None, "rest")]
    names += [n for row in w_names for n in row if n != "rest"]
    names += [n for n in p_names if n != "rest"]
    names += [f"u{h}" for h in range(hidden)]
    names += [f"e{h}" for h in range(hidden)]
    R, *gens = poly_ring(",".join(names), QQ)
    sym = dict(zip(names, gens))

    def column(entries: list) -> list:
        known = sum((sym[n] for n in entries if n not in (None, "rest")), R.zero)
        return [R.zero if n is None else (R.one - known if n == "rest" else sym[n])
                for n in entries]

    A_cols = [column([a_names[r][c] for r in range(hidden)]) for c in range(hidden)]
    W_cols = [column([w_names[x][h] for x in range(vocab)]) for h in range(hidden)]
    return SymbolicHMM(
        ring=R,
        A=tuple(tuple(A_cols[c][r] for c in range(hidden)) for r in range(hidden)),
        W=tuple(tuple(W_cols[h][x] for h in range(hidden)) for x in range(vocab)),
        pi0=tuple(column(p_names)),
        u=tuple(sym[f"u{h}"] for h in range(hidden)),
        empty=tuple(sym[f"e{h}"] for h in range(hidden)),
        constrained=constrained,
    )


def path_work(hidden: int, vocab: int, length: int) -> int:
    """Brute-force size ``sum_{t=1..T} |X|^t |H|^(t+3)`` (sequences times hidden paths)."""
    return sum(vocab ** t * hidden ** (t + 3) for t in range(1, length + 1))


def check_sizes(hidden: Any, vocab: Any, length: Any, *, structured: bool = False) -> None:
    """Raise :class:`InputError` unless the sizes are integers in ``1..MAX_SIZE`` and
    :func:`path_work` is within :data:`MAX_PATH_WORK` (:data:`MAX_STRUCTURED_WORK` for the
    structured case of Theorem 3.6, whose prompt ``1_B`` keeps polynomials smaller)."""
    for name, value in (("hidden", hidden), ("vocab", vocab), ("length", length)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise InputError(f"symbolic: --{name} must be an integer in 1..{MAX_SIZE}, "
                             f"got {value!r}")
    work, limit = path_work(hidden, vocab, length), (
        MAX_STRUCTURED_WORK if structured else MAX_PATH_WORK)
    if work > limit:
        what = (f"head-3.6's structured case (|H| = {hidden}, |X| = {vocab}, T = {length})"
                if structured else f"--hidden {hidden} --vocab {vocab} --length {length}")
        raise InputError(f"symbolic: {what} needs {work} path terms, more than the limit "
                         f"{limit} (minutes of sympy time); use smaller sizes")


def sequences(vocab: int, length: int) -> Iterator[tuple[int, ...]]:
    """Every token sequence of length ``1..length`` over ``0..vocab-1``, shortest first."""
    for t in range(1, length + 1):
        yield from itertools.product(range(vocab), repeat=t)


# ----------------------------------------------------------------------------------------------
# Left-hand sides: brute force over hidden paths.

def path_sum(hmm: SymbolicHMM, emissions: Sequence[Vector | None], step: int) -> Vector:
    """Joint weight of ``H_step = h`` and the evidence, by enumerating hidden paths.

    ``out[h] = sum over h_0..h_t with h_step = h of
    pi0[h_0] prod_{j=1..t} A[h_j, h_{j-1}] prod_{j: emissions[j-1] given} emissions[j-1][h_j]``,
    ``t = len(emissions)``; ``emissions[j-1]`` is the likelihood vector of the evidence at time
    ``j`` (``None``: unobserved). Shape ``(|H|,)``, entries in ``hmm.ring``.
    """
    n, t = hmm.num_states, len(emissions)
    out = [hmm.ring.zero] * n

    def walk(j: int, prev: int, weight: Any, marked: int) -> None:
        if j > t:
            out[marked] += weight
            return
        for h in range(n):
            w = weight * hmm.A[h][prev]
            if emissions[j - 1] is not None:
                w *= emissions[j - 1][h]
            if w:
                walk(j + 1, h, w, h if j == step else marked)

    for h0 in range(n):
        if hmm.pi0[h0]:
            walk(1, h0, hmm.pi0[h0], h0)
    return tuple(out)


def gbar_path_sum(hmm: SymbolicHMM, embeddings: Sequence[Vector], position: int) -> Vector:
    """``Gbar_i(v) = W tau_i(v) / ||tau_i(v)||_1`` (paper eq. B.1, SPEC section 1) by path sums.

    ``position`` is 0-based (paper's ``i = position + 1``); ``embeddings[position]`` is ignored.
    Shape ``(|X|,)``, entries :class:`RationalFunction`; the norm is a nonzero polynomial here.
    """
    tau = path_sum(hmm, [None if j == position else v for j, v in enumerate(embeddings)],
                   position + 1)
    norm = hmm.frac(sum(tau, hmm.ring.zero))
    return tuple(hmm.frac(sum((hmm.W[z][h] * tau[h] for h in range(hmm.num_states)),
                              hmm.ring.zero)) / norm for z in range(hmm.vocab_size))


def _normalized(hmm: SymbolicHMM, joint: Vector) -> Vector:
    total = hmm.frac(sum(joint, hmm.ring.zero))
    return tuple(hmm.frac(p) / total for p in joint)


# ----------------------------------------------------------------------------------------------
# Right-hand sides: matrix products (messages).

def _matvec(M: Sequence[Vector], v: Vector) -> Vector:
    return tuple(sum((row[c] * v[c] for c in range(len(v))), 0) for row in M)


def _dot(a: Vector, b: Vector) -> Any:
    return sum((p * q for p, q in zip(a, b)), 0)


def state_marginal(hmm: SymbolicHMM, step: int) -> Vector:
    """``P[H_step] = A^step pi0``, shape ``(|H|,)``."""
    v = hmm.pi0
    for _ in range(step):
        v = _matvec(hmm.A, v)
    return v


def backward_likelihood(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``beta[h] = Pr(X_{1:T} = x | H_0 = h)`` by backward messages
    ``beta_{j-1} = A^T (W[x_j, :] ⊙ beta_j)``, ``beta_T = 1``. Shape ``(|H|,)``."""
    n = hmm.num_states
    beta = (hmm.ring.one,) * n
    for z in reversed(x):
        beta = tuple(sum((hmm.A[h2][h] * hmm.W[z][h2] * beta[h2] for h2 in range(n)), 0)
                     for h in range(n))
    return beta


def sequence_probability(hmm: SymbolicHMM, x: Sequence[int], step: int = 0) -> Any:
    """``Pr(X_{step+1:step+T} = x) = P[H_step] . beta`` (stationary emissions/transitions)."""
    return _dot(state_marginal(hmm, step), backward_likelihood(hmm, x))


def start_posterior(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``P[H_0 | X_{1:T} = x] = pi0 ⊙ beta / (pi0 . beta)``, shape ``(|H|,)``."""
    beta = backward_likelihood(hmm, x)
    total = _dot(hmm.pi0, beta)
    return tuple(RationalFunction([p, b], [total]) for p, b in zip(hmm.pi0, beta))


def prompt_weight(hmm: SymbolicHMM) -> Vector:
    """``c = P[Xhat_1 = ztilde, H_2] = A (u ⊙ P[H_1])`` (proof of Theorem 3.6), shape
    ``(|H|,)``."""
    p1 = state_marginal(hmm, 1)
    return _matvec(hmm.A, tuple(u * p for u, p in zip(hmm.u, p1)))


def _determinant(M: Sequence[Sequence[Any]], one: Any) -> Any:
    """Leibniz expansion ``sum_sigma sign(sigma) prod_r M[r][sigma(r)]`` (``k <= 4``)."""
    total = 0 * one
    for perm in itertools.permutations(range(len(M))):
        inversions = sum(a > b for a, b in itertools.combinations(perm, 2))
        term = one
        for r, c in enumerate(perm):
            term = term * M[r][c]
        total = total - term if inversions % 2 else total + term
    return total


def left_inverse(hmm: SymbolicHMM, columns: Sequence[int]) -> dict[int, Vector]:
    """A left inverse of ``W[:, columns]``: rows ``{h: (|X|,)}`` with
    ``sum_x row_h[x] W[x, g] = 1(h = g)`` for ``h, g`` in ``columns``.

    Uses the top ``k x k`` block ``M = W[:k, columns]`` (``k = len(columns) <= |X|``):
    ``M^-1 = adj(M) / det(M)`` (Cramer), padded with zero columns; equals ``W^-1`` when
    ``k = |X|``. Raises :class:`InputError` if ``det(M)`` is the zero polynomial (then
    Assumption 3.1/3.5 fails on the whole parameter space).
    """
    k = len(columns)
    if k > hmm.vocab_size:
        raise InputError(f"W[:, {list(columns)}] has {k} columns but only {hmm.vocab_size} rows; "
                         "it has no left inverse (Assumption 3.1/3.5 needs |X| >= that number)")
    M = [[hmm.W[r][h] for h in columns] for r in range(k)]
    det = _determinant(M, hmm.ring.one)
    if not det:
        raise InputError(f"W[:{k}, {list(columns)}] is singular; no left inverse")

    def cofactor(r: int, c: int) -> Any:  # (-1)^(r+c) det(M without row r and column c)
        minor = [[M[i][j] for j in range(k) if j != c] for i in range(k) if i != r]
        return (-1) ** (r + c) * _determinant(minor, hmm.ring.one)

    zeros = (hmm.frac(0),) * (hmm.vocab_size - k)
    return {h: tuple(RationalFunction([cofactor(x, i)], [det]) for x in range(k)) + zeros
            for i, h in enumerate(columns)}


def prop_3_4_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``W P[H_1 | X_{2:T+1} = x]`` with ``P[H_1 | .] ∝ P[H_1] ⊙ beta`` (Proposition 3.4)."""
    joint = tuple(p * b for p, b in zip(state_marginal(hmm, 1), backward_likelihood(hmm, x)))
    return _matvec([[hmm.frac(w) for w in row] for row in hmm.W], _normalized(hmm, joint))


def claim_a1_rhs(hmm: SymbolicHMM, x: Sequence[int], step: int) -> Vector:
    """``r_x D P[H_0 | X_{1:T} = x]``, ``D = diag(P[H_i] / P[H_0])``,
    ``r_x = Pr(X_{1:T} = x) / Pr(X_{i+1:T+i} = x)`` (Claim A.1, ``i = step``)."""
    r = hmm.frac(sequence_probability(hmm, x)) / hmm.frac(sequence_probability(hmm, x, step))
    d = [hmm.frac(p) / hmm.frac(q) for p, q in zip(state_marginal(hmm, step), hmm.pi0)]
    return tuple(r * dh * ph for dh, ph in zip(d, start_posterior(hmm, x)))


def _lemma_b2_r(hmm: SymbolicHMM, x: Sequence[int]) -> tuple[Any, Any]:
    """``r_x = Pr(X_{1:T} = x) / Pr(Xhat_1 = ztilde, Xhat_{3:T+2} = x)`` as (num, den)."""
    return sequence_probability(hmm, x), _dot(prompt_weight(hmm), backward_likelihood(hmm, x))


def lemma_b2_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``r_x diag(1/P[H_0]) (c ⊙ P[H_0 | X_{1:T} = x])``, ``c = P[Xhat_1 = ztilde, H_2]``
    (Lemma B.2 with ``D = diag(1/P[H_0])``; ``r_x`` as in :func:`_lemma_b2_r`)."""
    num, den = _lemma_b2_r(hmm, x)
    r = hmm.frac(num) / hmm.frac(den)
    return tuple(r * hmm.frac(c) / hmm.frac(p) * q
                 for c, p, q in zip(prompt_weight(hmm), hmm.pi0, start_posterior(hmm, x)))


def gbar2_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``Gbar_2(ehat(x)) = r_x W diag(1/P[H_0]) (c ⊙ P[H_0 | X = x])`` (Theorem 3.6's proof)."""
    return _matvec([[hmm.frac(w) for w in row] for row in hmm.W], lemma_b2_rhs(hmm, x))


def head_3_3_matrix(hmm: SymbolicHMM) -> dict[int, Vector]:
    """``M = D^-1 W^+``, ``D = diag(P[H_1]/P[H_0])``, so Theorem 3.3's head is ``b = mu^T M``
    (proof of Theorem 3.3). Rows ``{h: (|X|,)}`` for every hidden state ``h``."""
    w_plus, p1 = left_inverse(hmm, range(hmm.num_states)), state_marginal(hmm, 1)
    return {h: tuple(RationalFunction([hmm.pi0[h]], [p1[h]]) * w for w in w_plus[h])
            for h in w_plus}


def head_3_3_rhs(hmm: SymbolicHMM, x: Sequence[int]) -> Vector:
    """``r_x P[H_0 | X_{1:T} = x]`` (the coefficient of ``mu`` in ``r_x mu . P[H_0 | x]``),
    ``r_x = Pr(X_{1:T} = x) / Pr(X_{2:T+1} = x)``, shape ``(|H|,)``."""
    r = hmm.frac(sequence_probability(hmm, x)) / hmm.frac(sequence_probability(hmm, x, 1))
    return tuple(r * p for p in start_posterior(hmm, x))


def head_3_6_matrix(hmm: SymbolicHMM, H_star: Sequence[int]) -> dict[int, Vector]:
    """``M = diag(P[H_0] / c)_{H*} W_{H*}^+`` so Theorem 3.6's head is ``b = mu^T M``
    (proof of Theorem 3.6: ``W_{H*}^+`` a left inverse of ``W[:, H*]``, the diagonal undoes
    ``D = diag(1/P[H_0])`` and the prompt weight ``c``). Rows ``{h: (|X|,)}``, zero off ``H*``."""
    w_plus, c = left_inverse(hmm, H_star), prompt_weight(hmm)
    zero = (hmm.frac(0),) * hmm.vocab_size
    return {h: tuple(RationalFunction([hmm.pi0[h]], [c[h]]) * w for w in w_plus[h])
            if h in w_plus else zero for h in range(hmm.num_states)}


def structured_case(vocab: int) -> dict[str, Any]:
    """The Theorem 3.6 instance family used here: ``H* = {0..k-1}``, ``k = min(vocab, 3)``,
    ``|H| = k + 1``, ``B = {0}``, ``A[h, 0] = 0`` for ``h`` outside ``H*`` (so
    ``supp(A[:, 0]) = H*``), ``mu`` supported on ``H*``."""
    k = min(vocab, MAX_SIZE - 1)
    return {"hidden": k + 1, "vocab": vocab, "H_star": list(range(k)), "B": [0],
            "A_zeros": [[k, 0]]}


def nonnegative_polynomial(p: Any) -> bool:
    """True iff ``p`` is a nonzero polynomial whose coefficients are all >= 0 (then ``p > 0``
    wherever every variable is > 0)."""
    return bool(p) and all(c >= 0 for c in p.coeffs())


STATEMENTS = ("prop-3.4", "claim-A.1", "lemma-B.2", "head-3.3", "head-3.6")


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
