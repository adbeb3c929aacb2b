"""What the toolkit benchmarks share: repeats, medians and the row format of bench_toolkits.py."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def rate(play: Callable[[], int], repeats: int) -> float:
    """Median steps/s over ``repeats`` runs of ``play`` (it returns the steps it played)."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        steps = play()
        rates.append(steps / (time.perf_counter() - start))
    return statistics.median(rates)


def row(toolkit: str, path: str, engine: str, steps_per_s: float, notes: str = "") -> dict:
    """One line of the table: ``engine`` is ``"aec"`` or ``"compiled"``."""
    return {"toolkit": toolkit, "path": path, "engine": engine, "steps_per_s": steps_per_s, "notes": notes}
