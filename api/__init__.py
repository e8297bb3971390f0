"""headprompt: run, check and break the head- and prompt-tuning theorems of Wei, Xie and Ma
(NeurIPS 2021).

The import root. Its three subpackages follow the data flow:

- ``headprompt.models``: HMM value types, instance files, inference backends, generators, the
  masked language model;
- ``headprompt.constructions``: the paper's witnesses, exact (no torch);
- ``headprompt.verify``: checkers, reports and the ``verify`` command.
"""

from .models.hmm import HMM, MemoryHMM

__all__ = ["HMM", "MemoryHMM"]
__version__ = "0.1.0"
