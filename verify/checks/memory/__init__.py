"""Theorems 4.3, 4.6 and C.6: the exact assumption checks (:mod:`.assumptions`) and the checker of
membership in ``R`` and ``F = F*`` per sequence (:mod:`.check`, with its exact, direct and float
routes :mod:`.decisions`, :mod:`.direct`, :mod:`.fast`). The witnesses are built in
:mod:`headprompt.constructions.memory`; the report is :mod:`headprompt.verify.reports.memory`."""
