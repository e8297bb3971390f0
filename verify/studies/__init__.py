"""Studies built on the API, on the top floor of ``verify`` below the command line
(docs/architecture.md): the property-based search for counterexamples (:mod:`.explore`), the
counterexample of ``verify counterexample`` (:mod:`.refute`), the paper's separations
(:mod:`.separation`) and the audit of every numbered statement (:mod:`.statements`)."""
