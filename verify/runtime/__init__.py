"""The machine a run uses, below every other floor of ``verify`` (docs/architecture.md): what a check
will cost in time and memory (:mod:`.cost`, the cost model), the Ray cluster that split checks and
experiments run on (:mod:`.cluster`), and output paths shown writable before any work
(:mod:`.output_paths`). Nothing here imports the rest of ``verify``."""
