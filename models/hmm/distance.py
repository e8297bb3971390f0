"""How far two HMMs with the same shape can be apart where the theorems look: the bound of
:mod:`headprompt.models.hmm.rationalize` (its module docstring, eqs. 1 and 2), used for every
explicit conversion of a model (rationalization, renormalisation of a float32 fit).

From per-parameter column distances ``tv`` (``"start"``, ``"A"``, ``"W"``: the largest total
variation between corresponding columns), the path measures on ``L`` emitting positions are
within ``delta_L = tv_start + L (tv_A + tv_W)`` (a hybrid argument, one kernel at a time), and
any conditional law given an event ``B`` of probability ``Q(B)`` moves by at most
``min(1, 2 delta_L / Q(B))``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

__all__ = ["path_tv", "conditional_bound"]


def path_tv(tv: dict, length: int):
    """``delta_L = tv_0 + L (tv_A + tv_W)`` from per-parameter column distances ``tv`` (keys
    ``"start"``, ``"A"``, ``"W"``): a bound on the total-variation distance of the path measures
    on ``L`` emitting positions (eq. 1 of the module docstring). Exact for exact ``tv``."""
    return tv["start"] + length * (tv["A"] + tv["W"])


def conditional_bound(tv: dict, length: int, event_probability: Any):
    """``min(1, 2 delta_L / Q(B))`` (eq. 2): how far any entry of a conditional law given ``B``
    (a posterior, a ``G_i``, a prompt read-out) can differ between two models whose column
    distances are ``tv``; ``event_probability`` is ``Q(B)``. 1 when ``Q(B) = 0``."""
    q = Fraction(event_probability)
    if q <= 0:
        return Fraction(1)
    return min(Fraction(1), 2 * Fraction(path_tv(tv, length)) / q)
