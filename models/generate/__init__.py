"""Making instances and data: Appendix D's generators (:mod:`.generators`, :mod:`.memory`),
families that satisfy or break each assumption by construction (:mod:`.families`), tasks that
are never vacuous (:mod:`.tasks`), hypothesis strategies over them (:mod:`.strategies`) and
sampling of sequences (:mod:`.sampling`)."""
