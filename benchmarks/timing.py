"""Timing shared by the benchmarks."""

from __future__ import annotations

import time

__all__ = ["best_time"]


def best_time(fn, repeat: int) -> float:
    """The best of ``repeat`` wall-clock timings of ``fn()`` in seconds, after one untimed call
    (warm-up: jit compilation, caches)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
