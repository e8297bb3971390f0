"""Statement-level evidence on a list of sequences (``verify counterexample``, ``verify explore``,
``verify separate``): a certificate, re-checked exactly, that the theorem's *conclusion* fails,
not only the paper's construction.

- Theorem 3.3: a Motzkin certificate that no linear head on ``G_1(∅, x)`` computes ``F*``
  (:mod:`.certificates`);
- Theorem 3.6: a certificate that no prompt ``u`` and no linear head compute ``F*``
  (:mod:`.universal`), else, weaker and marked ``refutes_statement: False``, one Motzkin
  certificate for every prompt ``u = 1_B`` of the paper's family.

Attention heads (Theorems 4.3, 4.6, C.6) have no such certificate.
"""

from __future__ import annotations

from ...models.hmm.task import is_multiclass
from ...models.hmm.values import HMM

__all__ = ["statement_certificate", "shortest_statement_certificate"]


def statement_certificate(model, theorem: str, sequences, *, first_B=None,
                          family_seconds: float | None = 3.0) -> dict | None:
    """Checked statement-level evidence on ``sequences`` (module docstring), or None.
    The result carries ``checked`` (the independent re-check passed), ``what``, and
    ``refutes_statement`` (False for the weaker per-prompt family)."""
    from .certificates import (check_no_linear_head_certificate, find_no_linear_head_certificate,
                               prompt_family_certificates)
    from .universal import check_prompt_universal_certificate, find_prompt_universal_certificate

    if not isinstance(model, HMM) or is_multiclass(model.mu) or theorem not in ("3.3", "3.6"):
        return None
    if theorem == "3.3":
        cert = find_no_linear_head_certificate(model, sequences)
        if cert is None:
            return None
        ok, why = check_no_linear_head_certificate(model, cert)
        return {**cert, "checked": ok, "refutes_statement": ok,
                "what": "no linear head b gives F*(x) = 1(b . G_1(x') >= 0) on these sequences: " + why}
    cert = find_prompt_universal_certificate(model, sequences)
    if cert is not None:
        ok, why = check_prompt_universal_certificate(model, cert)
        return {**cert, "checked": ok, "refutes_statement": ok, "what": why}
    family = prompt_family_certificates(model, sequences, first=first_B, seconds=family_seconds)
    if family["all"]:
        return {**family, "checked": True, "refutes_statement": False,
                "what": family["what"] + " (the paper's prompt family only, not every prompt u)"}
    return None


def shortest_statement_certificate(model, theorem: str, sequences) -> dict | None:
    """:func:`statement_certificate` on the sequences of length 1, then 1..2, and so on: small
    exact systems and short certificates first."""
    longest = max((len(s) for s in sequences), default=0)
    for L in range(1, longest + 1):
        st = statement_certificate(model, theorem, [s for s in sequences if len(s) <= L])
        if st is not None:
            return st
    return None
