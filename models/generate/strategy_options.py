"""The options of the Hypothesis strategies (:mod:`.strategies`), checked: each accepts a value
or a strategy; a bad value raises ``hypothesis.errors.InvalidArgument`` when the strategy is
built, and a drawn value is checked again once drawn (:func:`_draw`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..paper import THEOREM_ASSUMPTIONS

__all__ = ["MAX_SIZE"]

MAX_SIZE = 12          # largest size a default strategy draws is far below; a guard on user values
_VANILLA = ("3.3", "3.6")
_MEMORY = ("4.3", "4.6", "C.6")


def _is_strategy(value: Any) -> bool:
    return isinstance(value, st.SearchStrategy)


def _check_int(name: str, value: Any, lo: int, hi: int | None = None) -> None:
    if _is_strategy(value):
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgument(f"{name}={value!r}: expected an integer or a strategy of integers")
    if value < lo or (hi is not None and value > hi):
        raise InvalidArgument(f"{name}={value!r}: expected an integer in {lo}..{'' if hi is None else hi}")


def _check_prob(name: str, value: Any) -> None:
    if _is_strategy(value):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or not 0 <= value < 1:
        raise InvalidArgument(f"{name}={value!r}: expected a probability in [0, 1) or a strategy")


def _check_bool(name: str, value: Any) -> None:
    if not (_is_strategy(value) or isinstance(value, bool)):
        raise InvalidArgument(f"{name}={value!r}: expected True, False or a strategy of booleans")


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r}: expected True or False")


def _check_two_labels_possible(fn: str, sizes: dict) -> None:
    """Refuse fixed sizes (``{name: (value, what it counts)}``) below 2, where no task has both
    labels, pointing to ``allow_one_label=True``."""
    for name, (value, noun) in sizes.items():
        if isinstance(value, int) and value < 2:
            raise InvalidArgument(f"{fn}({name}={value}): no task has both labels with fewer than 2 {noun}; pass "
                                  "allow_one_label=True for such one-label tasks")


def _draw(draw, value: Any, check=None) -> Any:
    """A drawn value (for a strategy option) or the value itself, checked again once drawn."""
    if _is_strategy(value):
        value = draw(value)
        if check is not None:
            check(value)
    return value


def _theorem_sets(theorem: Any, satisfy: Any, violate: Any, kinds: tuple[str, ...], fn: str
                  ) -> dict[str, bool] | None:
    """``{assumption: must hold}`` for a theorem option, validated eagerly."""
    if theorem is None:
        if satisfy is not None or violate is not None:
            raise InvalidArgument(f"{fn}: satisfy= and violate= need theorem= (one of {', '.join(kinds)})")
        return None
    if theorem not in kinds:
        other = "memory_hmms" if fn == "hmms" else "hmms"
        hint = f" ({theorem!r} is drawn by {other})" if theorem in _VANILLA + _MEMORY else ""
        raise InvalidArgument(f"{fn}: theorem={theorem!r}: expected one of {', '.join(kinds)}{hint}")
    names = THEOREM_ASSUMPTIONS[theorem]
    if satisfy is None:
        satisfy = [a for a in names if a != violate]
    if isinstance(satisfy, str) or not isinstance(satisfy, Iterable):
        raise InvalidArgument(f"{fn}: satisfy={satisfy!r}: expected a list of assumption ids from {names}")
    satisfy = list(satisfy)
    for a in satisfy + ([] if violate is None else [violate]):
        if a not in names:
            raise InvalidArgument(f"{fn}: assumption {a!r} is not one of Theorem {theorem}'s {names}")
    if violate is not None and violate in satisfy:
        raise InvalidArgument(f"{fn}: assumption {violate!r} cannot be both satisfied and violated")
    holds = {a: True for a in satisfy}
    if violate is not None:
        holds[violate] = False
    if holds.get("3.1") is True and holds.get("3.5") is False:
        raise InvalidArgument(f"{fn}: Assumption 3.5 cannot fail while 3.1 and 3.2 hold")
    return holds
