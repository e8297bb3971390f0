"""Theorems 3.3 and 3.6: the assumptions (:mod:`.assumptions`), the checker (:mod:`.check`) and
the report (:mod:`.report`). The witnesses are built in :mod:`headprompt.constructions.vanilla`."""
