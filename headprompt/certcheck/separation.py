"""``--separation FILE FILE``: the two halves of a separation checked as one claim about one
set of sequences.

One half shows that a head works (Theorem 3.6 ``verified`` on a vanilla HMM; Theorem 4.3
``verified`` on a memory-augmented HMM), the other that no linear head does (a
``no-linear-head`` certificate with Theorem 3.3's features, or Theorem 4.3's, listing a set
``S`` of sequences, each with ``Pr(x) > 0``). The pair is accepted only when

1. each half is accepted in full, as :func:`.certificate.check` accepts it;
2. both are about the same instance, value by value (exact): two true certificates about two
   different instances prove no separation;
3. the working half covers every sequence of ``S``: by the identity (``covers: "identity"``:
   every sequence with ``Pr(x) > 0``, which includes ``S``), or by listing each sequence of
   ``S`` among its sequences with ``Pr(x) > 0`` (vanilla, ``covers: "listed"``), or, for a
   memory HMM, among its listed sequences in ``R`` (the attention head is proven right there
   only).

Soundness: on ``S`` the working half's witness gives ``F = F*`` on every sequence (3., by the
identity's proof or by recomputation row by row), while no linear head on the failing half's
features gives ``F*`` on all of ``S`` (Motzkin). So the accepted line, "on these ``|S|``
sequences a head of the one kind computes ``F*`` and no linear head does", is one claim about
one set, which each half alone does not make. A working half that covers only other sequences
separates nothing (a prompt right on some sequences and a head wrong on others), and is
rejected with the first sequence of ``S`` it leaves out.
"""

from __future__ import annotations

from .certificate import judge
from .memory_hmm import Memory
from .outcomes import Rejected, Unreadable
from .vanilla_hmm import Vanilla

__all__ = ["check_separation"]

# a separation: (theorem of the half that works, theorem of the no-linear-head half, what each says)
_SEPARATIONS = {"hmm": ("3.6", "3.3", "a prompt and a linear head compute F*", "no linear head on G_1(∅, x) does"),
                "memory-hmm": ("4.3", "4.3", "an attention head computes F*",
                               "no linear head on the memory model's G_1(∅, x) does")}


def _same_instance(first, second) -> bool:
    """Whether two parsed instances are the same model, value by value (exact)."""
    if type(first) is not type(second):
        return False
    names = ("n", "m", "A", "W", "pi0", "mu") if isinstance(first, Vanilla) else (
        "N", "M", "S", "j", "A", "W", "pi0", "pM", "mu_rows")
    return all(getattr(first, k) == getattr(second, k) for k in names)


def check_separation(first, second) -> str:
    """Check the two halves of a separation (parsed certificates, in either order) as one claim
    about one set of sequences (the module docstring states what is accepted and why).

    Raises:
        Rejected (Vacuous), Unreadable: as :func:`.certificate.check`, for either half or for the pair.
    """
    lines = []
    for k, cert in enumerate((first, second)):
        try:
            lines.append(judge(cert))
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
    working, failing = lines[role["works"]], lines[role["fails"]]
    listed = sorted(failing.lists, key=lambda s: (len(s), s))
    if working.every:
        how = "every sequence with Pr(x) > 0, by the identity"
    else:
        where = "listed in R" if kinds[0] == "memory-hmm" else "listed with Pr(x) > 0"
        left_out = [s for s in listed if s not in working.covers]
        if left_out:
            x = list(left_out[0])
            raise Rejected(f"the working half does not cover the failing half's sequences: {len(left_out)} of the "
                           f"{len(listed)} it lists (first x = {x[:20]}{' ...' if len(x) > 20 else ''}) are not "
                           f"{where} in the working half, where its witness is proven right: the pair is two claims "
                           "about two sets, not a separation")
        how = f"each {where} in the working half"
    return (f"accepted: separation on one instance, on the {len(listed)} sequences the no-linear-head half lists "
            f"({how}): {says_works} on them and {says_fails}; [{working}] [{failing}]")
