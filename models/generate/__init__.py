"""Making instances and data: Appendix D's generators (:mod:`.generators`, :mod:`.memory`),
families that satisfy or break each assumption by construction (:mod:`.families`,
:mod:`.memory_families`, :mod:`.choices`), tasks that are never vacuous (:mod:`.tasks`,
:mod:`.label_tasks`), hypothesis strategies over them (:mod:`.strategies`, with
:mod:`.strategy_options` and :mod:`.strategy_tasks`) and sampling of sequences
(:mod:`.sampling`)."""
