"""The paper's theorems as data: each theorem's model kind and assumptions, in the paper's order.

One table, read by the instance families (:mod:`headprompt.models.generate.families`) and by
the theorem registry (:mod:`headprompt.verify.theorems.registry`).

>>> THEOREM_ASSUMPTIONS["3.6"], THEOREM_KINDS["C.6"]
(('3.2', '3.5'), 'memory-hmm')
"""

from __future__ import annotations

__all__ = ["THEOREM_ASSUMPTIONS", "THEOREM_KINDS", "VANILLA_ASSUMPTIONS", "MEMORY_ASSUMPTIONS"]

THEOREM_ASSUMPTIONS: dict[str, tuple[str, ...]] = {
    "3.3": ("3.1", "3.2"),
    "3.6": ("3.2", "3.5"),
    "4.3": ("3.2", "4.2"),
    "4.6": ("4.4", "4.5"),
    "C.6": ("4.4", "C.5"),
}
THEOREM_KINDS: dict[str, str] = {"3.3": "hmm", "3.6": "hmm", "4.3": "memory-hmm", "4.6": "memory-hmm",
                                 "C.6": "memory-hmm"}
VANILLA_ASSUMPTIONS = ("3.1", "3.2", "3.5")
MEMORY_ASSUMPTIONS = ("3.2", "4.2", "4.4", "4.5", "C.5")
