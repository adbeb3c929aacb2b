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


def batch_arrays(observations: np.ndarray, action_masks: np.ndarray, obs_shape: tuple[int, int],
                 n_actions: int, game: str) -> tuple[np.ndarray, np.ndarray]:
    """A batch as the compiled policies read it (contiguous float32 observations, int8 masks),
    after checking its shapes and that every mask offers a legal action."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    masks = np.ascontiguousarray(action_masks, dtype=np.int8)
    if obs.ndim != 3 or obs.shape[1:] != obs_shape:
        raise ValueError(f"observations must have shape (N, {obs_shape[0]}, {obs_shape[1]}) for {game} "
                         f"(one observation tensor per row), got {obs.shape}")
    if masks.shape != (len(obs), n_actions):
        raise ValueError(f"action_masks must have shape ({len(obs)}, {n_actions}) for {game} "
                         f"(one mask per observation), got {masks.shape}")
    empty = np.flatnonzero(~masks.any(axis=1))
    if empty.size:
        raise ValueError(f"the action mask of row {int(empty[0])} has no legal action")
    return obs, masks


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
