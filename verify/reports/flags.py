"""Flag checks of ``verify theorem`` and ``check()``: options that do not apply to the request are
refused by the name the user typed, before any default is filled in."""

from __future__ import annotations

from ...models.exceptions import InputError

__all__ = ["check_theorem_flags"]


def check_theorem_flags(args, *, defaults: dict, option=lambda name: f"--{name}") -> None:
    """Refuse flags that do not apply to the request, naming the flag (never a default the
    user did not type), then fill in the defaults of the flags left out.

    Sizes apply to generated instances only (an instance file fixes them); ``--memory`` and
    ``--cells`` to memory theorems only; ``--samples`` not with ``--exhaustive``.

    ``option(name)`` is how the user wrote an option (``--hidden`` on the command line,
    ``hidden=`` in Python).

    Raises:
        InputError: the first flag that does not apply.
    """
    from ..checks.registry import theorem_spec

    spec = theorem_spec(args.id)
    typed = {option(name): getattr(args, name, None) for name in ("hidden", "vocab", "memory", "cells")}
    typed = {flag: v for flag, v in typed.items() if v is not None}
    if not spec.memory:
        for flag in (option("memory"), option("cells")):
            if flag in typed:
                raise InputError(f"{flag} does not apply to Theorem {spec.id} (a vanilla HMM has no memory); "
                                 "drop it, or use theorem 4.3, 4.6 or C.6")
    if getattr(args, "hmm", None) and typed:
        flag = next(iter(typed))
        given = "--hmm" if option("hmm") == "--hmm" else "a given instance"
        raise InputError(f"{flag} does not apply with {given}: the instance fixes the sizes; drop {flag}")
    if spec.memory and getattr(args, "ray", None):
        raise InputError(f"{option('ray')} does not apply to Theorem {spec.id}: it splits the vanilla large-model "
                         "checks (3.3, 3.6 above 1,000 states or tokens); drop it")
    if getattr(args, "exhaustive", False) and getattr(args, "samples", None) is not None:
        raise InputError(f"{option('samples')} does not apply with {option('exhaustive')} (every sequence of "
                         "length 1..T is checked); drop one of them")
    seed = getattr(args, "seed", 0)
    if seed is not None and seed < 0:
        raise InputError(f"{option('seed')} {seed}: expected a nonnegative integer")
    for name, value in defaults.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
