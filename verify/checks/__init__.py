"""Checks, the lowest floor of ``verify`` above :mod:`..runtime` (docs/architecture.md): the theorem
registry (:mod:`.registry`), the exact assumption checks, witness and identity checks and
per-sequence decisions of Theorems 3.3 and 3.6 (:mod:`.vanilla`) and 4.3, 4.6, C.6
(:mod:`.memory`), decisions for tasks with several classes (:mod:`.multiclass`) and the
per-sequence margins with certified bounds (:mod:`.margins`). Checks import nothing from the
evidence, reports, API or commands above them."""
