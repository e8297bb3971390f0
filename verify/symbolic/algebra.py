"""Symbolic HMMs for the sympy proofs (:mod:`.proofs`): rational functions in the HMM
parameters, the parameter ring with the stochastic constraints built in, and the size budgets.

Values are :class:`RationalFunction` fractions ``num / den`` of polynomials in
``QQ[parameters]`` (sympy's sparse ``PolyRing``); the last free entry of each column of ``A``
and ``W`` and the last entry of ``pi0`` is ``1 - (sum of the others)``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from sympy import QQ
from sympy.polys.rings import ring as poly_ring

from ...models.exceptions import InputError
from .limits import MAX_PATH_WORK, MAX_SIZE, MAX_STRUCTURED_WORK, path_work

__all__ = ["MAX_SIZE", "MAX_PATH_WORK", "MAX_STRUCTURED_WORK", "Vector", "RationalFunction", "SymbolicHMM",
           "symbolic_hmm", "path_work", "check_sizes", "sequences"]

#: Budgets on :func:`path_work`, set from timings (worst allowed case about 30 s on one core).

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
