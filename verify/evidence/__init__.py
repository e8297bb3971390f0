"""Evidence beyond a verdict: sequence sets (:mod:`.sequences`), Motzkin certificates
(:mod:`.certificates`), robustness radii (:mod:`.robustness`), numerical search
(:mod:`.search`) and property-based exploration (:mod:`.explore`)."""

# the numerical search's step budget (``verify counterexample --search-steps``), here so that the
# command line can state it without importing torch
SEARCH_MAX_STEPS = 5000
