"""Symbolic proofs (sympy): the proofs (:mod:`.proofs`), symbolic HMMs (:mod:`.algebra`) and
the two sides of every identity (:mod:`.sides`)."""
