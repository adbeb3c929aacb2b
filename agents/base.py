"""The policy protocol every agent follows, and the uniform random baseline."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """An agent: picks a legal action from what one seat observes.

    ``observation`` is the env's observation tensor for the seat, ``action_mask`` its int8
    mask. ``rng`` is the only source of randomness, so a seeded arena is deterministic.

    With the rule options ``escape``, ``bankroll`` and ``items`` the env adds planes after the default
    ones, ESCAPE and the item actions after the default actions. The heuristics and networks trained
    without them read the default part (:func:`default_part`) and so never escape nor use an item
    (乾坤大挪移 is kept: its decision offers PASS); ``random`` plays them like any action.
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


def default_part(observations: np.ndarray, action_masks: np.ndarray, planes: int,
                 n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """The default layout's planes and actions of a batch (leading axis) from an env whose rule
    options add planes after the default ones and ESCAPE and the item actions (S17 of
    docs/rules-blood-battle.md) after the default actions; a batch of
    the default layout (or of any other shape, for the caller to refuse) comes back as it is."""
    obs, masks = np.asarray(observations), np.asarray(action_masks)
    if obs.ndim == 3 and obs.shape[1] > planes:
        obs = obs[:, :planes]
    if masks.ndim == 2 and masks.shape[1] > n_actions:
        masks = masks[:, :n_actions]
    return obs, masks


def batch_arrays(observations: np.ndarray, action_masks: np.ndarray, obs_shape: tuple[int, int],
                 n_actions: int, game: str) -> tuple[np.ndarray, np.ndarray]:
    """A batch as the compiled policies read it (contiguous float32 observations, int8 masks of the
    default layout: :func:`default_part`), after checking its shapes and that every mask offers a
    legal action."""
    observations, action_masks = default_part(observations, action_masks, obs_shape[0], n_actions)
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
