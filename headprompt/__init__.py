"""headprompt: run, check and break the head- and prompt-tuning theorems of Wei, Xie and Ma
(NeurIPS 2021).

The import root. Its three subpackages follow the data flow:

- ``headprompt.models``: HMM value types, instance files, inference backends, generators, the
  masked language model;
- ``headprompt.constructions``: the paper's witnesses, exact (no torch);
- ``headprompt.verify``: checkers, reports and the ``verify`` command.

The root exports the one-call API (SPEC section 5)::

    import headprompt
    report = headprompt.check("instance.json", "3.6", mode="certified")
    report.verdict, report.to_dict()

Importing the root imports neither torch nor hypothesis; ``headprompt.strategies`` (the
hypothesis strategies) is loaded on first access.
"""

from importlib import import_module as _import_module

from .models.exceptions import HeadpromptError, InputError
from .models.hmm.values import HMM, MemoryHMM
from .models.hmm.rationalize import rationalize
from .verify.api import TheoremReport, check, load
from .verify.checks.registry import THEOREMS

__all__ = ["HMM", "MemoryHMM", "load", "check", "rationalize", "TheoremReport", "THEOREMS", "strategies",
           "HeadpromptError", "InputError"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "strategies":
        return _import_module(".strategies", __name__)
    raise AttributeError(f"module 'headprompt' has no attribute {name!r}")
