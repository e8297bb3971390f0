"""Hypothesis plugin (entry point group ``hypothesis``, see ``pyproject.toml``): when Hypothesis
is imported it calls :func:`_hypothesis_setup_hook`, which registers the package's strategies
for its value types, so ``st.from_type(HMM)`` and ``st.from_type(MemoryHMM)`` draw valid
instances (``headprompt.strategies.hmms(with_task=True)``, ``memory_hmms()``) without
importing ``headprompt.strategies`` first. Importing ``headprompt`` alone never imports
Hypothesis."""

from __future__ import annotations

__all__ = ["_hypothesis_setup_hook"]


def _hypothesis_setup_hook() -> None:
    from hypothesis import strategies as st

    from .models.hmm.values import HMM, MemoryHMM

    def vanilla(_type):
        from .models.generate.strategies import hmms

        return hmms(with_task=True)

    def memory(_type):
        from .models.generate.strategies import memory_hmms

        return memory_hmms()

    st.register_type_strategy(HMM, vanilla)
    st.register_type_strategy(MemoryHMM, memory)
