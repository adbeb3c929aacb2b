"""The policy protocol every agent follows, and the uniform random baseline."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """An agent: picks a legal action from what one seat observes.

    ``observation`` is the env's observation tensor for the seat, ``action_mask`` its int8
    mask. ``rng`` is the only source of randomness, so a seeded arena is deterministic.
    """

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """One action for one seat."""
        ...

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """Actions for a batch of seats (leading axis), e.g. many envs at once."""
        ...


class BatchByLoop:
    """Mixin: ``act_batch`` as a loop over ``act`` (policies without a faster batch path)."""

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        return np.array([self.act(o, m, rng) for o, m in zip(observations, action_masks)], dtype=np.int64)


class RandomPolicy:
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("the action mask has no legal action")
        return int(legal[rng.integers(legal.size)])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        # Gumbel-style: a random score per legal action, argmax per row (one vectorised draw).
        masks = np.asarray(action_masks, dtype=bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action mask in the batch has no legal action")
        scores = np.where(masks, rng.random(masks.shape), -1.0)
        return scores.argmax(axis=1)
