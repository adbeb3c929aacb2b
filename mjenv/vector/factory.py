"""``make``: a batched env of a game on its compiled backend, after checking the arguments and the memory."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from .. import games
from .backend import checked_spec


def backend_class(game: str) -> type:
    """The game's backend class, imported lazily (each compiles its own functions)."""
    module, name = games.game(game).backend.split(":")
    return getattr(importlib.import_module(module), name)


def _count(name: str, value: Any) -> int:
    """``value`` as an int >= 1 (numpy ints too, bools not), else a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {type(value).__name__} {value!r}")
    return int(value)


def _check_memory(game: str, num_envs: int) -> None:
    """Refuse a table count whose arrays alone would not fit in this machine's available memory."""
    need = num_envs * backend_class(game).bytes_per_table()
    free = available_memory()
    if free is not None and need > free:
        raise ValueError(f"num_envs={num_envs:,} {game} tables need about {need / 2**30:.1f} GiB "
                         f"({need / num_envs / 1024:.1f} KiB a table); {free / 2**30:.1f} GiB are available")


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux ``MemAvailable``), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


BACKENDS = ("compiled", "reference")
"""The engines a batched env plays on: the compiled one (the default, the fast path) or the
readable one (:mod:`.reference`, the specification, one Python game per table)."""


def make(game: str, num_envs: int, *, backend: str = "compiled", num_threads: int = 1, copy: bool = True,
         final_observations: bool = False, **options: Any) -> Any:
    """A batched env of ``num_envs`` tables of ``game`` on ``backend``; ``options`` are the AEC
    env's options.

    ``copy=False`` returns the env's own observation and mask buffers, overwritten by the next step;
    ``final_observations=True`` adds every seat's view of each finished table to the step's info.
    """
    from .env import VectorEnv

    games.game(game)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    num_envs, num_threads = _count("num_envs", num_envs), _count("num_threads", num_threads)
    for name, flag in (("copy", copy), ("final_observations", final_observations)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {type(flag).__name__} {flag!r}")
    if backend == "reference":
        from .reference import ReferenceBackend

        engine = ReferenceBackend(num_envs, checked_spec(game, options))
    else:
        _check_memory(game, num_envs)
        engine = backend_class(game)(num_envs, **options)
    return VectorEnv(engine, num_threads=num_threads, copy=bool(copy), final_observations=bool(final_observations))
