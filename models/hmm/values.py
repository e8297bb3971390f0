"""The HMM value types (SPEC section 1): the vanilla :class:`HMM` (:mod:`.vanilla`) and the
memory-augmented :class:`MemoryHMM` (:mod:`.memory`), immutable and validated once, exported
here under the import path every layer uses."""

from .base import register_file_io
from .limits import FLOAT_TOLERANCE
from .memory import MemoryHMM
from .reading import as_array
from .vanilla import HMM

__all__ = ["HMM", "MemoryHMM", "FLOAT_TOLERANCE", "as_array", "register_file_io"]
