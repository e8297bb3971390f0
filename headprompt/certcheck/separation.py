"""``--separation FILE FILE``: the two halves of a separation checked as one claim.

One half shows that a head works (Theorem 3.6 ``verified`` on a vanilla HMM; Theorem 4.3
``verified`` on a memory-augmented HMM), the other that no linear head does (a
``no-linear-head`` certificate with Theorem 3.3's features, or Theorem 4.3's). Each half is
checked in full as :func:`.certificate.check` does, and both must be about the same instance,
value by value (exact): two true certificates about two different instances prove no
separation.
"""

from __future__ import annotations

from .certificate import check
from .memory_hmm import Memory
from .outcomes import Rejected, Unreadable
from .vanilla_hmm import Vanilla

__all__ = ["check_separation"]


# a separation: (theorem of the half that works, theorem of the no-linear-head half, what each says)
_SEPARATIONS = {"hmm": ("3.6", "3.3", "a prompt and a linear head compute F*",
                        "no linear head on G_1(∅, x) computes F* (none fits the listed sequences)"),
                "memory-hmm": ("4.3", "4.3", "an attention head computes F*",
                               "no linear head on the memory model's G_1(∅, x) computes F* (none fits the listed sequences)")}


def _same_instance(first, second) -> bool:
    """Whether two parsed instances are the same model, value by value (exact)."""
    if type(first) is not type(second):
        return False
    names = ("n", "m", "A", "W", "pi0", "mu") if isinstance(first, Vanilla) else (
        "N", "M", "S", "j", "A", "W", "pi0", "pM", "mu_rows")
    return all(getattr(first, k) == getattr(second, k) for k in names)


def check_separation(first, second) -> str:
    """Check the two halves of a separation (parsed certificates, in either order): each is
    checked in full as :func:`check` does, and together they must be one certificate that a head
    works (Theorem 3.6 ``verified``, or Theorem 4.3 ``verified`` for a memory HMM) and one that no
    linear head does (``no-linear-head``: Theorem 3.3's features, or Theorem 4.3's) **on the
    same instance**, exactly; two true certificates about two different instances prove no
    separation.

    Raises:
        Rejected (Vacuous), Unreadable: as :func:`check`, for either half or for the pair.
    """
    lines = []
    for k, cert in enumerate((first, second)):
        try:
            lines.append(check(cert))
        except (Rejected, Unreadable) as exc:
            raise type(exc)(f"half {k + 1}: {exc}") from None
    kinds = [cert["instance"]["kind"] for cert in (first, second)]
    if kinds[0] != kinds[1]:
        raise Rejected(f"the halves are about a {kinds[0]!r} and a {kinds[1]!r} instance: not one instance")
    works, fails, says_works, says_fails = _SEPARATIONS[kinds[0]]
    role = {}
    for k, cert in enumerate((first, second)):
        if cert["claim"] == "theorem" and cert["theorem"] == works and cert.get("verdict") == "verified":
            role.setdefault("works", k)
        elif cert["claim"] == "no-linear-head" and cert["theorem"] == fails:
            role.setdefault("fails", k)
    if set(role) != {"works", "fails"}:
        raise Rejected(f"a separation on a {kinds[0]!r} instance needs one Theorem {works} certificate with verdict "
                       f"verified and one no-linear-head certificate with Theorem {fails}'s features; found "
                       + " and ".join(f"{c['claim']} (Theorem {c['theorem']}{', ' + str(c.get('verdict')) if c['claim'] == 'theorem' else ''})"
                                      for c in (first, second)))
    parsed = [Vanilla(c["instance"]) if kinds[0] == "hmm" else Memory(c["instance"]) for c in (first, second)]
    if not _same_instance(*parsed):
        raise Rejected("the two halves are about different instances (their A, W, pi0, mu or memory fields differ): "
                       "each may be true, but together they separate nothing")
    scope = {"identity": " on every sequence x with Pr(x) > 0",
             "listed": " on the listed sequences" + (" in R" if kinds[0] == "memory-hmm" else "")}
    says_works += scope.get((first, second)[role["works"]].get("covers"), "")
    return (f"accepted: separation on one instance: {says_works} and {says_fails}; "
            f"[{lines[role['works']]}] [{lines[role['fails']]}]")
