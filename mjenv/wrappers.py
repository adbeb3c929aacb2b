"""Deprecated: the single-seat Gymnasium view moved to :mod:`mjenv.integrations.gymnasium` (mjenv
0.1). Its names import from here for one more minor version, each with a DeprecationWarning
naming its new place; removed in mjenv 0.2. Nothing is imported until a name is used (the
toolkit views stand above every other layer)."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_MOVED = {"SingleSeatEnv": "mjenv.integrations.gymnasium", "GAMES": "mjenv.games"}
"""Old name -> the module that holds it now."""


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"mjenv.wrappers.{old} is deprecated and will be removed in mjenv 0.2: use {new}",
                  DeprecationWarning, stacklevel=3)


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _deprecated(name, f"{_MOVED[name]}.{name}")
    value = getattr(importlib.import_module(_MOVED[name]), name)
    if name == "GAMES":  # this dict held each game's env module; mjenv.games.GAMES holds a Game
        return {key: game.env_module for key, game in value.items()}
    return value


def make_raw_env(game: str, **options: Any) -> Any:
    """Deprecated: ``mjenv.games.game(game).raw_env(**options)``."""
    _deprecated("make_raw_env", "mjenv.games.game(name).raw_env(**options)")
    return importlib.import_module("mjenv.games").game(game).raw_env(**options)


def rllib_env(game: str = "blood_battle", **options: Any) -> Any:
    """Deprecated: ``mjenv.integrations.rllib.MahjongMultiAgentEnv(game=game, **options)`` (imports ray)."""
    _deprecated("rllib_env", "mjenv.integrations.rllib.MahjongMultiAgentEnv(game=name, **options)")
    return importlib.import_module("mjenv.integrations.rllib").MahjongMultiAgentEnv(game=game, **options)
