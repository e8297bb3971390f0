"""``headprompt.strategies``: the hypothesis strategies for property tests over HMMs (defined in
:mod:`headprompt.models.strategies`; see its docstring for every option)."""

from .models.strategies import *  # noqa: F401,F403
from .models.strategies import __all__  # noqa: F401
