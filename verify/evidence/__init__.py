"""Evidence beyond a verdict: sequence sets (:mod:`.sequences`), Motzkin certificates
(:mod:`.certificates`), robustness radii (:mod:`.robustness`), numerical search
(:mod:`.search`) and property-based exploration (:mod:`.explore`)."""
