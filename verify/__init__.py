"""The checker: exact assumption checks, witness verification, counterexamples, experiments."""
