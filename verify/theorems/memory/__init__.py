"""Theorems 4.3, 4.6 and C.6: the assumptions (:mod:`.assumptions`), the checker (:mod:`.check`)
and the report (:mod:`.report`). The witnesses are built in :mod:`headprompt.constructions.memory`."""
