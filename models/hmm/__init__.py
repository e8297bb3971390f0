"""The HMM value types and everything exact about an instance.

- :mod:`.values`: :class:`HMM` (:mod:`.vanilla`) and :class:`MemoryHMM` (:mod:`.memory`),
  immutable and validated once (their shared base in :mod:`.base`, the validated, owned arrays
  in :mod:`.arrays`, user input read by :mod:`.reading`);
- :mod:`.files`: instance and witness files, read and written exactly;
- :mod:`.task`: the downstream task ``F*``; :mod:`.limits`: input limits decided from sizes;
- :mod:`.rational`, :mod:`.linalg`: exact numbers and exact linear algebra;
- :mod:`.rationalize`, :mod:`.learned`: float (learned) models made exact, hmmlearn and dynamax
  interop (:mod:`.start_law`: which ``pi0`` a fitted start law stands for; :mod:`.conversion`:
  the record ``model.conversion`` of how a model was made); :mod:`.distance`: how far such a
  conversion moves what the theorems read.
"""

from .values import FLOAT_TOLERANCE, HMM, MemoryHMM, as_array
from . import files as _files   # noqa: E402,F401  registers the file reader/writer behind HMM.save / HMM.load

__all__ = ["HMM", "MemoryHMM", "FLOAT_TOLERANCE", "as_array"]
