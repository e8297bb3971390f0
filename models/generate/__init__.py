"""Making instances and data: Appendix D's generators (:mod:`.generators`, :mod:`.memory`),
families that satisfy or break each assumption by construction (:mod:`.families`), hypothesis
strategies over them (:mod:`.strategies`) and sampling of sequences (:mod:`.sampling`)."""
