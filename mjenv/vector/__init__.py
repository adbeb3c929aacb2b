"""``mjenv.vector``: compiled batched engines, step for step the same game as the AEC envs.

``make(game, num_envs, *, num_threads=1, **options)`` returns a :class:`VectorEnv` of
``num_envs`` tables played in lockstep; see ``docs/vector.md``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numba

from .backend import Backend
from .sampling import random_actions


def _drop_stale_cache() -> None:
    """Delete numba's on-disk cache when any source of this package changed.

    numba checks only the timestamp of the file that defines a compiled function, not of the
    files whose functions and constants it compiles in: an edited engine would otherwise run
    stale machine code.
    """
    root = Path(__file__).parent
    digest = hashlib.sha1(numba.__version__.encode())
    # The package, and the reference modules whose constants (layouts, plane offsets) it compiles in.
    for path in [*sorted(root.rglob("*.py")), root.parent / "actions.py", root.parent / "encoding.py"]:
        digest.update(path.name.encode() + path.read_bytes())
    stamp = root / "__pycache__" / "numba-sources.sha1"
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except FileNotFoundError:
        pass
    for cached in [*root.rglob("*.nbi"), *root.rglob("*.nbc")]:
        cached.unlink(missing_ok=True)
    try:
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install: numba then caches elsewhere or not at all
        pass


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
