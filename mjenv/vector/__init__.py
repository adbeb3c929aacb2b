"""``mjenv.vector``: compiled batched engines, step for step the same game as the AEC envs.

``make(game, num_envs, *, num_threads=1, **options)`` returns a :class:`VectorEnv` of
``num_envs`` tables played in lockstep; see ``docs/vector.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .backend import Backend
from .cache import drop_stale_cache
from .sampling import random_actions


def _drop_stale_cache() -> None:
    """Drop this package's numba cache when its sources changed (see :mod:`.cache`)."""
    root = Path(__file__).parent
    # The package, and the reference modules whose constants (layouts, plane offsets) it compiles in.
    drop_stale_cache(root, [*sorted(root.rglob("*.py")), root.parent / "actions.py", root.parent / "encoding.py"])


_drop_stale_cache()

__all__ = ["Backend", "SingleSeatVectorEnv", "make", "random_actions"]

GAMES = ("blood_battle", "joy_mahjong")


def _backend(game: str, num_envs: int, options: dict[str, Any]) -> Backend:
    """The game's backend, imported lazily (each compiles its own functions)."""
    if game == "blood_battle":
        from .blood_battle import BloodBattleBackend

        return BloodBattleBackend(num_envs, **options)
    if game == "joy_mahjong":
        from .joy_mahjong import JoyMahjongBackend

        return JoyMahjongBackend(num_envs, **options)
    raise ValueError(f"unknown game {game!r}; choose one of {GAMES}")


def make(game: str, num_envs: int, *, num_threads: int = 1, copy: bool = True, **options: Any) -> Any:
    """A batched env of ``num_envs`` tables of ``game``; ``options`` are the AEC env's options.

    ``copy=False`` returns the env's own observation and mask buffers, overwritten by the next step.
    """
    from .env import VectorEnv

    if not (isinstance(num_envs, int) and num_envs >= 1):
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    if not (isinstance(num_threads, int) and num_threads >= 1):
        raise ValueError(f"num_threads must be an int >= 1, got {num_threads!r}")
    return VectorEnv(_backend(game, num_envs, options), num_threads=num_threads, copy=copy)


def __getattr__(name: str) -> Any:
    """``SingleSeatVectorEnv`` on first use (it imports gymnasium's vector API)."""
    if name == "SingleSeatVectorEnv":
        from .single_seat import SingleSeatVectorEnv

        return SingleSeatVectorEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
