"""Load a policy by name, or wrap an object or callable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .base import Policy, RandomPolicy

SHIPPED_CHECKPOINTS = {"blood_battle": Path(__file__).with_name("checkpoints") / "blood_battle_happy.pt"}
"""The trained policy shipped for each game (``load_policy("ppo")``); docs/baselines.md has its evaluation."""


def _shipped_policy(game: str) -> Policy:
    """The shipped PPO checkpoint of ``game`` as a greedy NeuralPolicy."""
    if game not in SHIPPED_CHECKPOINTS:
        raise ValueError(f"no trained policy is shipped for {game!r} (only for {sorted(SHIPPED_CHECKPOINTS)})")
    from .neural import NeuralPolicy  # lazily: only checkpoints need torch

    return NeuralPolicy.load(SHIPPED_CHECKPOINTS[game], name="ppo")


# name -> factory(game) ; filled by the modules that define baselines.
_FACTORIES: dict[str, Callable[[str], Policy]] = {"random": lambda game: RandomPolicy(), "ppo": _shipped_policy}


def register_policy(name: str, factory: Callable[[str], Policy]) -> None:
    """Make ``load_policy(name)`` build a policy with ``factory(game)``."""
    _FACTORIES[name] = factory


def policy_names() -> list[str]:
    """Names ``load_policy`` accepts (besides objects and callables)."""
    _load_builtin()
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


def _load_builtin() -> None:
    """Import the modules that register the built-in baselines."""
    from . import heuristic  # noqa: F401  (registers "heuristic")


def load_policy(spec: Any, game: str = "blood_battle") -> Policy:
    """A policy from a name (``random``, ``heuristic``, ``ppo`` = the shipped trained policy), a trainer
    checkpoint path ending ``.pt`` (a ``str`` or ``os.PathLike``), a Policy object, or a callable."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, str) and spec.endswith(".pt"):
        from .neural import NeuralPolicy  # lazily: only checkpoints need torch

        return NeuralPolicy.load(spec)
    if isinstance(spec, str):
        _load_builtin()
        if spec in _FACTORIES:
            return _FACTORIES[spec](game)
        raise ValueError(f"unknown policy {spec!r}; use one of {policy_names()}")
    if isinstance(spec, Policy):
        return spec
    if callable(spec):
        return _CallablePolicy(spec, getattr(spec, "__name__", "callable"))
    raise TypeError(f"cannot make a policy from {type(spec).__name__}")
