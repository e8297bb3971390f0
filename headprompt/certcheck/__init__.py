"""Re-check a headprompt certificate with the Python standard library alone.

    python -m headprompt.certcheck FILE
    python -m headprompt.certcheck --separation FILE FILE   (the two halves of a separation:
        each checked in full, and both about the same instance; :func:`check_separation`)

The folder is self-contained: copied anywhere as ``certcheck/``, ``python -I -S -m certcheck
FILE`` runs it (every import inside is relative, and only the standard library is used).

Exit 0: accepted, every claim re-derived from the instance (the line says exactly what is
proven). Exit 1: rejected (one line naming the first claim that fails; ``rejected: vacuous: ...``
when a claim would hold only vacuously). Exit 2: unreadable (not a regular file, over a size
limit, not strict JSON, a missing or malformed field). Nothing printed in the certificate is
trusted: the checker recomputes every posterior, label, feature, rank, left inverse, kernel
vector and support-graph property it relies on.

One module per claim kind, each with its soundness argument as its docstring:

- :mod:`.theorem_vanilla`: ``claim: "theorem"`` for Theorems 3.3 and 3.6 (vanilla HMMs);
- :mod:`.theorem_memory`: ``claim: "theorem"`` for Theorems 4.3, 4.6 and C.6 (memory HMMs);
- :mod:`.no_linear_head`: ``claim: "no-linear-head"`` (Motzkin's transposition theorem);
- :mod:`.no_prompt_and_head`: ``claim: "no-prompt-and-head"`` (Theorem 3.6, every prompt);
- :mod:`.assumptions`: the evidence for each assumption (3.1, 3.2, 3.5, 4.2, 4.4, 4.5, C.5);
- :mod:`.separation`: two halves checked as one claim about one instance.

Shared: :mod:`.reading` (strict JSON), :mod:`.fields` (strict fields), :mod:`.work` (limits and
the work model), :mod:`.exact` (integer linear algebra), :mod:`.vanilla_hmm` and
:mod:`.memory_hmm` (the instances and their messages), :mod:`.certificate` (routing one file),
:mod:`.cli` (the command line). docs/certificates.md has the field-by-field format.

Conventions (SPEC section 1): ``A[h'][h] = P[H' = h' | H = h]``, ``W[x][h] = P[X = x | H = h]``,
``pi0 = P[H_0]``, ``P[H_1] = A pi0``; a binary task is ``F*(x) = 1(mu . P[H_0 | x] >= 0)``, a task
with ``k >= 2`` rows ``F*(x) = argmax_c mu_c . P[H_0 | x]`` (ties to the largest class); heads
likewise. Arithmetic is on integers: each matrix is scaled by one common denominator.
"""

from __future__ import annotations

from .certificate import check, check_file
from .cli import main
from .memory_hmm import Memory
from .outcomes import Rejected, Unreadable, Vacuous
from .reading import FORMAT, VERSION, loads
from .separation import check_separation
from .vanilla_hmm import Vanilla
from .work import LIMITS, backward_cost, digits_of, limb_work, memory_cost, parse_work

__all__ = ["check", "check_file", "check_separation", "main", "loads", "Rejected", "Vacuous", "Unreadable", "FORMAT",
           "VERSION", "LIMITS", "backward_cost", "memory_cost", "digits_of", "limb_work", "parse_work", "Vanilla",
           "Memory"]
