"""Evidence, the floor above the checks (docs/architecture.md): sequence sets (:mod:`.sequences`),
Motzkin certificates (:mod:`.certificates`, :mod:`.universal`, :mod:`.statement`), the
construction checked on short sequences (:mod:`.construction`), instances built to break an
assumption (:mod:`.breaking`), robustness radii (:mod:`.robustness`), numerical search
(:mod:`.search`) and the certificate files for :mod:`headprompt.certcheck` (:mod:`.certificate`).
Evidence imports checks, never the reports, API or studies above it."""

# the numerical search's step budget (``verify counterexample --search-steps``), here so that the
# command line can state it without importing torch
SEARCH_MAX_STEPS = 5000
