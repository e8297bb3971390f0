"""``headprompt.models.strategies``: kept as an import path; the strategies live in
:mod:`headprompt.models.generate.strategies`."""

from .generate.strategies import *  # noqa: F401,F403
from .generate.strategies import __all__  # noqa: F401
