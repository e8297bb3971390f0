"""``headprompt.strategies``: the hypothesis strategies for property tests over HMMs (defined in
:mod:`headprompt.models.generate.strategies`; see its docstring for every option)."""

from .models.generate.strategies import *  # noqa: F401,F403
from .models.generate.strategies import __all__  # noqa: F401
