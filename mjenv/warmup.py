"""``mjenv warmup``: compile the batched engine, its encoders and the compiled heuristics now, so
that later processes load them from numba's cache (a cluster job whose nodes share the install,
a container image built once) instead of each compiling for a minute or two.

It plays a few steps of every path a run takes: the Gymnasium single-seat view with heuristic
opponents on one thread and on two (float32 and uint8 observations), which compiles the engine,
the encoders, the seeding and the compiled heuristics, and a one-deal duplicate arena (``mjenv
eval``, ``mjenv rate``), for each game asked. The games compile in parallel processes, one per
game up to ``jobs`` (default: one per core), since numba compiles on one thread.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence, TextIO

from . import games


def _play(game: str, *, num_threads: int, observation_dtype: str, steps: int = 64) -> None:
    """A few steps of the single-seat view (first legal action) against heuristic opponents."""
    from .integrations.gymnasium import SingleSeatVectorEnv

    env = SingleSeatVectorEnv(game, 4, opponents="heuristic", num_threads=num_threads,
                              observation_dtype=observation_dtype)
    try:
        _, info = env.reset(seed=0)
        for _ in range(steps):
            _, _, _, _, info = env.step(info["action_mask"].argmax(axis=1))
    finally:
        env.close()


def _arena(game: str) -> None:
    """One duplicate deal of heuristic against random on the compiled engine (mjenv eval's path)."""
    from agents.arena import run_arena  # lazily: only this command needs the agents

    run_arena(game=game, agents=["heuristic", "random"], deals=1, progress=False, backend="compiled")


def cache_folders() -> list[str]:
    """Where numba keeps the compiled code of mjenv and of the compiled agents (``__pycache__`` next
    to the sources where it can write, else numba's cache folder: ``NUMBA_CACHE_DIR``)."""
    import agents.compiled.heuristic as heuristic
    from .vector import blood_battle

    return [str(f._cache._cache_path) for f in (blood_battle._step_chunk, heuristic.win_points)]


def warmup(names: Sequence[str] = games.GAME_NAMES, log: TextIO | None = sys.stderr,
           jobs: int | None = None) -> dict[str, float]:
    """Compile every path of the games ``names``, in up to ``jobs`` processes (default: one per core,
    at most one per game); returns the seconds each step took."""
    names = [games.game(name).name for name in names]
    jobs = min(len(names), jobs or os.cpu_count() or 1)
    if jobs > 1:  # each game in a spawned process of its own (a fork would inherit nothing useful)
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            parts = pool.map(_warmup_quietly, [[name] for name in names])
            seconds = {what: s for part in parts for what, s in part.items()}
        if log is not None:
            for what, s in seconds.items():
                print(f"  {what}: {s:.1f} s", file=log, flush=True)
        return seconds
    steps: list[tuple[str, Callable[[], Any]]] = []
    for name in names:
        game = games.game(name).name
        steps += [(f"{game}: engine, encoder and heuristic opponents",
                   lambda g=game: _play(g, num_threads=1, observation_dtype="float32")),
                  (f"{game}: two threads, uint8 observations",
                   lambda g=game: _play(g, num_threads=2, observation_dtype="uint8")),
                  (f"{game}: duplicate arena", lambda g=game: _arena(g))]
    seconds = {}
    for what, step in steps:
        start = time.perf_counter()
        step()
        seconds[what] = time.perf_counter() - start
        if log is not None:
            print(f"  {what}: {seconds[what]:.1f} s", file=log, flush=True)
    return seconds


def _warmup_quietly(names: list[str]) -> dict[str, float]:
    """:func:`warmup` in one process, its lines left to the caller (which has said that it
    compiles, so the first-compile notice stays quiet)."""
    from .vector.cache import announce_first_compile

    announce_first_compile().told = True
    return warmup(names, log=None, jobs=1)


__all__ = ["cache_folders", "warmup"]
