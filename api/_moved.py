"""Import paths from before the subpackage layout (0.1), kept working.

Modules moved into subpackages by concern (``models/hmm/``, ``models/inference/``,
``verify/theorems/``, ...). A script that imports an old path, e.g.
``headprompt.models.rationalize``, gets the module at its new path (the same module object),
so its functions and classes are the same objects as well.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["MOVED", "install"]

# old module (below ``headprompt.``) -> new module
MOVED: dict[str, str] = {
    "models.attention": "models.inference.attention",
    "models.families": "models.generate.families",
    "models.generators": "models.generate.generators",
    "models.inference_bounds": "models.inference.bounds",
    "models.inference_exact": "models.inference.exact",
    "models.inference_float": "models.inference.floats",
    "models.inference_torch": "models.inference.torch_backend",
    "models.instances": "models.hmm.files",
    "models.learned": "models.hmm.learned",
    "models.limits": "models.hmm.limits",
    "models.linalg": "models.hmm.linalg",
    "models.memory_generators": "models.generate.memory",
    "models.mlm": "models.mlm.model",
    "models.mlm_cache": "models.mlm.cache",
    "models.mlm_gate": "models.mlm.gate",
    "models.rational": "models.hmm.rational",
    "models.rationalize": "models.hmm.rationalize",
    "models.sampling": "models.generate.sampling",
    "models.task": "models.hmm.task",
    "models.tuning": "models.mlm.tuning",
    "verify.assumptions": "verify.theorems.vanilla.assumptions",
    "verify.certificates": "verify.evidence.certificates",
    "verify.cmd_assumptions": "verify.cli.assumptions",
    "verify.cmd_counterexample": "verify.cli.counterexample",
    "verify.cmd_experiment": "verify.cli.experiment",
    "verify.cmd_explore": "verify.cli.explore",
    "verify.cmd_posterior": "verify.cli.posterior",
    "verify.cmd_symbolic": "verify.cli.symbolic",
    "verify.cmd_theorem": "verify.cli.theorem",
    "verify.common": "verify.theorems.common",
    "verify.experiment": "verify.experiments.figure3",
    "verify.experiment_config": "verify.experiments.config",
    "verify.experiment_jobs": "verify.experiments.jobs",
    "verify.experiment_plot": "verify.experiments.plot",
    "verify.experiment_ray": "verify.experiments.ray_tasks",
    "verify.experiment_stats": "verify.experiments.stats",
    "verify.explore": "verify.evidence.explore",
    "verify.memory_assumptions": "verify.theorems.memory.assumptions",
    "verify.memory_check": "verify.theorems.memory.check",
    "verify.memory_report": "verify.theorems.memory.report",
    "verify.rationalized": "verify.theorems.rationalized",
    "verify.registry": "verify.theorems.registry",
    "verify.requests": "verify.theorems.requests",
    "verify.robustness": "verify.evidence.robustness",
    "verify.search": "verify.evidence.search",
    "verify.sequences": "verify.evidence.sequences",
    "verify.symbolic_algebra": "verify.symbolic.algebra",
    "verify.symbolic_sides": "verify.symbolic.sides",
    "verify.vanilla": "verify.theorems.vanilla.check",
    "verify.vanilla_report": "verify.theorems.vanilla.report",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:
        pass


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("headprompt."):
            return None
        new = MOVED.get(fullname[len("headprompt."):])
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias("headprompt." + new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
