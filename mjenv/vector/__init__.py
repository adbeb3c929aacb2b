"""``mjenv.vector``: compiled batched engines, step for step the same game as the AEC envs.

``make(game, num_envs, *, num_threads=1, **options)`` returns a :class:`VectorEnv` of
``num_envs`` tables played in lockstep (every seat's rewards; the engine-level API of the arena
and the trainer); :class:`SelfPlayVectorEnv` is its view for parameter-shared self-play (the seat
to act and the rewards credited to it). The single-seat Gymnasium view is
:class:`mjenv.integrations.gymnasium.SingleSeatVectorEnv`. See ``docs/vector.md``.
"""

from __future__ import annotations

from pathlib import Path

from .backend import Backend
from .cache import announce_first_compile, drop_stale_cache
from .factory import available_memory, make
from .sampling import random_actions
from .self_play import SelfPlayVectorEnv


def _drop_stale_cache() -> None:
    """Drop this package's numba cache when its sources changed (see :mod:`.cache`)."""
    root = Path(__file__).parent
    # The package, and the reference modules whose constants (layouts, plane offsets) it compiles in.
    drop_stale_cache(root, [*sorted(root.rglob("*.py")), root.parent / "actions.py", root.parent / "encoding.py"])


_drop_stale_cache()
announce_first_compile()

__all__ = ["Backend", "SelfPlayVectorEnv", "available_memory", "make", "random_actions"]
