"""Figure 3: the run (:mod:`.figure3`), its configurations (:mod:`.config`), independent jobs
(:mod:`.jobs`, :mod:`.ray_tasks`), statistics (:mod:`.stats`) and plots (:mod:`.plot`)."""
