"""Load a policy by name, or wrap an object or callable."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .base import Policy, RandomPolicy

_CHECKPOINT_DIR = Path(__file__).with_name("checkpoints")
SHIPPED_CHECKPOINTS = {name: _CHECKPOINT_DIR / f"{name}.pt"
                       for name in ("blood_battle_happy", "blood_battle_qq", "joy_mahjong_popular",
                                    "joy_mahjong_eight_fan")}
"""The trained policies shipped in the repository, by name (``load_policy("blood_battle_qq")``);
each file name starts with its game. docs/baselines.md has their training commands and evaluations."""

SHIPPED_DEFAULT = {"blood_battle": "blood_battle_happy", "joy_mahjong": "joy_mahjong_popular"}
"""The shipped policy ``load_policy("ppo", game)`` loads: the one of the game's default preset or room."""


def _shipped_game(name: str) -> str:
    """The game a shipped checkpoint's name starts with."""
    return next(game for game in SHIPPED_DEFAULT if name.startswith(game + "_"))


def _shipped_policy(game: str, name: str = "ppo") -> Policy:
    """A shipped checkpoint as a greedy NeuralPolicy: ``name`` is ``"ppo"`` (the game's default) or a
    key of SHIPPED_CHECKPOINTS, which must belong to ``game``."""
    if name == "ppo":
        if game not in SHIPPED_DEFAULT:
            raise ValueError(f"no trained policy is shipped for {game!r} (only for {sorted(SHIPPED_DEFAULT)})")
        key = SHIPPED_DEFAULT[game]
    elif _shipped_game(name) != game:
        raise ValueError(f"the shipped policy {name!r} plays {_shipped_game(name)}, not {game!r}")
    else:
        key = name
    from .neural import NeuralPolicy  # lazily: only checkpoints need torch

    return NeuralPolicy.load(SHIPPED_CHECKPOINTS[key], name=name)


HEURISTIC_VARIANTS = {"blood_battle": ("heuristic", "heuristic-nodefence", "heuristic-plain", "heuristic-greedy",
                                      "heuristic-novoid"),
                      "joy_mahjong": ("heuristic", "heuristic-nocalls", "heuristic-greedy")}
"""The heuristic of each game and its weaker variants, strongest first (``agents.heuristic.VARIANTS``,
``agents.heuristic_joy.VARIANTS``): rungs of the reference ladders."""


def _heuristic(game: str, name: str = "heuristic") -> Policy:
    """The heuristic baseline of ``game`` or its variant ``name``: :class:`agents.heuristic_joy.JoyHeuristicPolicy`
    for Joy Mahjong, else :class:`agents.heuristic.HeuristicPolicy` (which refuses a game it does not play)."""
    # Imported on first use: the heuristics load numba and their compiled kernels.
    from . import heuristic, heuristic_joy

    if name not in HEURISTIC_VARIANTS.get(game, ("heuristic",)):
        games = [g for g, names in HEURISTIC_VARIANTS.items() if name in names]
        raise ValueError(f"the policy {name!r} plays {' and '.join(games)}, not {game!r}")
    if game == "joy_mahjong":
        return heuristic_joy.JoyHeuristicPolicy(heuristic_joy.VARIANTS[name])
    return heuristic.HeuristicPolicy(game, flags=heuristic.VARIANTS[name])


def _heuristic_items(game: str) -> Policy:
    """The blood-battle heuristic with simple item rules (:mod:`agents.heuristic_items`)."""
    from .heuristic_items import HeuristicItemsPolicy  # lazily, as the heuristics

    return HeuristicItemsPolicy(game)


def _search(game: str) -> Policy:
    """The search agent (:mod:`agents.search`) with its defaults and the shipped belief."""
    from .search import search_policy  # lazily: it loads torch and the compiled engine

    return search_policy(game)


# name -> factory(game): the built-in policies, and those added with register_policy.
_FACTORIES: dict[str, Callable[[str], Policy]] = {
    "random": lambda game: RandomPolicy(),
    **{name: (lambda game, name=name: _heuristic(game, name))
       for name in dict.fromkeys(n for names in HEURISTIC_VARIANTS.values() for n in names)},
    "heuristic-items": _heuristic_items,
    "ppo": _shipped_policy,
    "search": _search,
    **{name: (lambda game, name=name: _shipped_policy(game, name)) for name in SHIPPED_CHECKPOINTS},
}


def register_policy(name: str, factory: Callable[[str], Policy]) -> None:
    """Make ``load_policy(name)`` build a policy with ``factory(game)``."""
    _FACTORIES[name] = factory


def policy_names() -> list[str]:
    """Names ``load_policy`` accepts (besides objects and callables)."""
    return sorted(_FACTORIES)


class _CallablePolicy:
    """Adapts ``f(observation, action_mask, rng) -> action`` to the Policy protocol."""

    def __init__(self, f: Callable[..., Any], name: str) -> None:
        self._f, self.name = f, name

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self._f(observation, action_mask, rng))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        return np.array([self.act(o, m, rng) for o, m in zip(observations, action_masks)], dtype=np.int64)


def _import_policy(spec: str) -> Policy:
    """``module:Class``: an instance of a Policy class (made with no arguments) imported from a module."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {module_name!r} of policy {spec!r}: {exc}") from None
    if not hasattr(module, attr):
        raise ValueError(f"module {module_name!r} has no {attr!r} (policy {spec!r})")
    policy = getattr(module, attr)
    policy = policy() if isinstance(policy, type) else policy
    if not isinstance(policy, Policy):
        raise ValueError(f"{spec!r} is not a policy: it needs a name, act and act_batch (agents.base.Policy)")
    return policy


def load_policy(spec: Any, game: str = "blood_battle") -> Policy:
    """A policy from a name (``random``, ``heuristic``, ``ppo`` = the game's shipped trained policy, or a
    shipped checkpoint's name such as ``blood_battle_qq``: SHIPPED_CHECKPOINTS), a trainer
    checkpoint path ending ``.pt`` (a ``str`` or ``os.PathLike``), ``module:Class`` (a Policy class,
    made with no arguments), a Policy object, or a callable."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, str) and spec.endswith(".pt"):
        from .neural import NeuralPolicy  # lazily: only checkpoints need torch

        return NeuralPolicy.load(spec)
    if isinstance(spec, str):
        if spec in _FACTORIES:
            return _FACTORIES[spec](game)
        if ":" in spec:
            return _import_policy(spec)
        raise ValueError(f"unknown policy {spec!r}; use one of {policy_names()}")
    if isinstance(spec, Policy):
        return spec
    if callable(spec):
        return _CallablePolicy(spec, getattr(spec, "__name__", "callable"))
    raise TypeError(f"cannot make a policy from {type(spec).__name__}")
