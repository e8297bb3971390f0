"""What each theorem id fixes: the instance kind, the assumptions, the features a linear head
reads, and how a witness's origin is worded."""

from __future__ import annotations

__all__ = ["THEOREMS", "FEATURES", "ORIGIN"]


THEOREMS = {"3.3": ("hmm", ("3.1", "3.2")), "3.6": ("hmm", ("3.2", "3.5")),
            "4.3": ("memory-hmm", ("3.2", "4.2")), "4.6": ("memory-hmm", ("4.4", "4.5")),
            "C.6": ("memory-hmm", ("4.4", "C.5"))}
"""theorem -> (instance kind, its assumptions), as the paper states them."""

FEATURES = {"3.3": "G_1(∅, x)", "3.6": "Gbar_2(u, e(∅), e(x))", "4.3": "G_1(∅, x) of the memory-augmented HMM",
            "4.6": "G_1(∅, x) of the memory-augmented HMM", "C.6": "G_1(∅, x) of the memory-augmented HMM"}


ORIGIN = {"construction": "the paper's construction, as its writer says", "given": "a given witness"}
