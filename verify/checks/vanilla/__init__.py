"""Theorems 3.3 and 3.6: the exact assumption checks (:mod:`.assumptions`), the checker of the
witness, identity and per-sequence decisions (:mod:`.check`), and their large-model forms
(:mod:`.large`, :mod:`.scale_check`). The witnesses are built in
:mod:`headprompt.constructions.vanilla`; the reports are :mod:`headprompt.verify.reports.vanilla`
and :mod:`headprompt.verify.reports.scale`."""
