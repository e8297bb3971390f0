"""One certificate: its header (format, version, theorem, claim, instance kind) read strictly,
the instance parsed, and the claim routed to the module that re-derives it."""

from __future__ import annotations

import json

from .fields import field, known_keys
from .memory_hmm import Memory
from .no_linear_head import memory_motzkin, vanilla_motzkin
from .no_prompt_and_head import no_prompt_and_head
from .outcomes import Accepted, Rejected, Unreadable
from .reading import FORMAT, VERSION, read_file, unicode_text, with_digits
from .theorem_memory import memory_theorem
from .theorem_vanilla import vanilla_theorem
from .theorems import FEATURES, THEOREMS
from .vanilla_hmm import Vanilla
from .work import METER

__all__ = ["check", "check_file", "judge"]


_TOP = ("format", "version", "theorem", "claim", "instance", "notes")


def check(cert) -> str:
    """Re-derive every claim of a parsed certificate; return the one-line statement accepted.

    Raises:
        Rejected (Vacuous): a claim fails (holds only vacuously). Unreadable: malformed.
    """
    return str(with_digits(lambda: judge(cert)))


def judge(cert) -> Accepted:
    """:func:`check`, returning the accepted line with the sets of sequences it is about
    (:class:`.Accepted`; what a separation needs)."""
    return with_digits(lambda: _check(cert))


def _check(cert) -> Accepted:
    METER.reset()
    unicode_text(cert)
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise Unreadable(f"not a {FORMAT} file (field \"format\")")
    version = cert.get("version")
    if isinstance(version, bool) or version != VERSION:
        raise Unreadable(f"version {json.dumps(version)[:20]}: this checker reads "
                         f"version {VERSION} (the JSON integer) "
                         "(rewrite the certificate with this headprompt's verify)")
    theorem = field(cert, "theorem", "certificate")
    if not isinstance(theorem, str) or theorem not in THEOREMS:
        raise Unreadable(f"theorem {str(theorem)[:20]!r}: expected one of {', '.join(THEOREMS)}")
    claim = field(cert, "claim", "certificate")
    if not isinstance(claim, str):
        raise Unreadable("claim: expected theorem, no-linear-head or no-prompt-and-head (a string)")
    block = field(cert, "instance", "certificate")
    kind = field(block, "kind", "instance")
    if not isinstance(kind, str) or kind not in ("hmm", "memory-hmm"):
        raise Unreadable("instance.kind: expected \"hmm\" or \"memory-hmm\"")
    if kind != THEOREMS[theorem][0]:
        raise Rejected(f"Theorem {theorem} is about {'vanilla' if THEOREMS[theorem][0] == 'hmm' else 'memory-augmented'} "
                       f"HMMs; the instance is {kind!r}")
    inst = Vanilla(block) if kind == "hmm" else Memory(block)
    if theorem == "4.6" and inst.N != 1:
        raise Rejected(f"Theorem 4.6 is about one memory cell; the instance has {inst.N} (Theorem C.6 covers several)")
    if claim == "theorem":
        if cert.get("verdict") == "assumptions-fail":     # each verdict has its own fields, no others
            allowed = ("verdict", "assumptions") + (("motzkin",) if kind == "hmm" else ())
        else:
            allowed = ("verdict", "assumptions", "witness", "covers", "sequences", "sequences_checked_by_verify")
            allowed += ("identity",) if cert.get("covers") == "identity" else ()
        known_keys(cert, _TOP + allowed, "certificate")
        return (vanilla_theorem if kind == "hmm" else memory_theorem)(cert, theorem, inst)
    if claim == "no-linear-head":
        known_keys(cert, _TOP + ("sequences", "labels", "certificate", "prompt"), "certificate")
        entry = {k: cert[k] for k in ("sequences", "labels", "certificate", "prompt") if k in cert}
        said = (vanilla_motzkin(inst, theorem, entry, "certificate") if kind == "hmm"
                else memory_motzkin(inst, theorem, entry, "certificate"))
        tail = ": Theorem 3.3's conclusion fails on this instance" if theorem == "3.3" else ""
        return said.said(f"accepted: {said}{tail} (Theorem {theorem}'s features {FEATURES[theorem]})")
    if claim == "no-prompt-and-head":
        if theorem != "3.6":
            raise Rejected("a no-prompt-and-head certificate is about Theorem 3.6's prompts")
        known_keys(cert, _TOP + ("sequences", "labels", "certificate", "prompts"), "certificate")
        said = no_prompt_and_head(inst, cert, "certificate")
        return said.said(f"accepted: {said}: Theorem 3.6's conclusion fails on this instance")
    raise Unreadable(f"claim {str(claim)[:30]!r}: expected theorem, no-linear-head or no-prompt-and-head")


def check_file(path: str) -> str:
    """Read (strictly, bounded) and check the certificate at ``path``."""
    return str(with_digits(lambda: _check(read_file(path))))
