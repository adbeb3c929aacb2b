"""``mjenv.vector``: compiled batched engines, step for step the same game as the AEC envs.

``make(game, num_envs, *, num_threads=1, **options)`` returns a :class:`VectorEnv` of
``num_envs`` tables played in lockstep (every seat's rewards; the engine-level API of the arena
and the trainer); :class:`SelfPlayVectorEnv` is its view for parameter-shared self-play (the seat
to act and the rewards credited to it), :class:`SingleSeatView` its view for one learning seat
per table against opponent policies (the episode rules of every toolkit's single-seat env, e.g.
:class:`mjenv.integrations.gymnasium.SingleSeatVectorEnv`). See ``docs/vector.md``.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path
from typing import Any

from .backend import Backend
from .cache import announce_first_compile, drop_stale_cache
from .factory import available_memory, make
from .sampling import random_actions
from .self_play import SelfPlayVectorEnv
from .single_seat import SingleSeatView


_PYTHON_ONLY = ("__init__.py", "reference.py", "self_play.py", "single_seat.py", "crediting.py")
"""Modules of this package without compiled code: numba's cache does not depend on them."""


def _drop_stale_cache() -> None:
    """Drop this package's numba cache when its sources changed (see :mod:`.cache`)."""
    root = Path(__file__).parent
    # The package, and the reference modules whose constants (layouts, plane offsets) it compiles in.
    # The modules that compile nothing (the reference backend, the views) keep the cache when edited.
    python_only = {root / name for name in _PYTHON_ONLY}
    drop_stale_cache(root, [*sorted(p for p in root.rglob("*.py") if p not in python_only),
                            root.parent / "actions.py", root.parent / "encoding.py"])


_drop_stale_cache()
announce_first_compile()

__all__ = ["Backend", "SelfPlayVectorEnv", "SingleSeatView", "available_memory", "make", "random_actions"]

_MOVED = {"SingleSeatVectorEnv": "mjenv.integrations.gymnasium"}
"""Names that lived here, and their module now: they import for one more minor version, with a
DeprecationWarning (by name, so the toolkit view above this package is never imported from here
otherwise)."""


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"mjenv.vector.{name} is deprecated and will be removed in mjenv 0.2: import it from "
                  f"{_MOVED[name]}", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(_MOVED[name]), name)
