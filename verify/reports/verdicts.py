"""The verdict rules of a theorem report (SPEC section 4): which verdict a report's findings give
(:func:`settle_verdict`), what the ``F*`` labels of the sequences that count were and whether
the check was vacuous (:func:`label_counts`), and what exact ties contribute (:func:`mark_ties`)."""

from __future__ import annotations

__all__ = ["settle_verdict", "mark_ties", "label_counts"]


def settle_verdict(report: dict, *, witness_given: bool, failed: dict, construction_error: str | None) -> dict:
    """Set ``report["verdict"]`` (SPEC section 4) and return the failed assumptions.

    A user's witness is judged alone (``verified`` or ``refuted``); otherwise a failed
    assumption or a construction that could not be built gives ``assumptions-fail`` (the
    construction error then counts as the failure when no assumption check failed)."""
    mark_ties(report)
    if witness_given or not (failed or construction_error):
        report["verdict"] = "refuted" if report["counterexample"] else "verified"
        return failed
    report["verdict"] = "assumptions-fail"
    if construction_error and not failed:
        failed = {"construction": {"holds": False, "why": construction_error}}
    report["failed"] = sorted(failed)
    return failed



def mark_ties(report: dict) -> None:
    """Say what exact ties (``mu . p = 0``, label 1 by the ``>=`` rule) contribute to a binary
    report's labels: ``"labels_off_ties"`` counts each label over the sequences that count and
    are not ties, and ``"weak": true`` (with ``"weak_why"``) when a label occurs only on ties, so
    that no sequence strictly on that side of the threshold was checked. Vacuous reports and
    tasks with several classes are left as they are.

    >>> r = {"labels": {"0": 5, "1": 2}, "vacuous": False, "sequences": {"ties": 2}}
    >>> mark_ties(r); r["labels_off_ties"], r["weak"]
    ({'0': 5, '1': 0}, True)
    """
    labels, seqs = report.get("labels"), report.get("sequences") or {}
    if not labels or len(labels) != 2 or "ties" not in seqs:
        return
    ties = int(seqs.get("ties") or 0)
    off = {"0": labels["0"], "1": max(0, labels["1"] - ties)}
    report["labels_off_ties"] = off
    report["weak"] = bool(not report.get("vacuous") and min(off.values()) == 0)
    if report["weak"]:
        side = "0" if off["0"] == 0 else "1"
        report["weak_why"] = (f"every sequence of label {side} that counts is an exact tie (mu . p = 0): the "
                              f"check saw no sequence strictly on that side of the threshold")



def label_counts(expected, classes: int = 2) -> dict:
    """The honest-verdict fields of a report (SPEC section 4) from the ``F*`` labels of the
    sequences that count (memory theorems: those in ``R``): ``labels`` ``{"0": n0, "1": n1}``
    (``{"0": n0, ..., "k-1": n_{k-1}}`` for a task with ``classes = k``) and ``vacuous``, true
    when a label never occurs (or nothing counts), so that the check could not have failed on it.

    >>> label_counts([1, 1, 0])
    {'labels': {'0': 1, '1': 2}, 'vacuous': False}
    >>> label_counts([2, 0, 2], classes=3)
    {'labels': {'0': 1, '1': 0, '2': 2}, 'vacuous': True}
    >>> label_counts([])["vacuous"]
    True
    """
    counts = {str(c): sum(1 for e in expected if e == c) for c in range(classes)}
    return {"labels": counts, "vacuous": min(counts.values()) == 0}
