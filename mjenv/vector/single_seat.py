"""``SingleSeatVectorEnv``: a ``gymnasium.vector.VectorEnv`` of one learning seat per table against
batched opponents, on the compiled engines of :mod:`mjenv.vector`.

=====================  ======================================================================
Make                   ``SingleSeatVectorEnv(game, num_envs, opponents="random", seat=0,
                       num_threads=1, **env_options)``
Observation            float32 ``(N, *obs_shape)``: the learning seat's view (the AEC encoder)
Action space           ``MultiDiscrete([A] * N)``; ``single_action_space``: ``Discrete(A)``
Action mask            ``action_masks()`` int8 ``(N, A)`` (what MaskablePPO reads), also ``info["action_mask"]``
Reward                 float32 ``(N,)``: the seat's bean change since its previous decision
Autoreset              same step: ``terminated[i]`` and the observation is already the next
                       episode's first decision of the seat; ``info["beans"]`` holds the
                       finished episode's beans (all four seats) where ``info["_final"]``
=====================  ======================================================================

**Opponents.** ``"random"`` (uniform over the legal actions, from a generator seeded by ``reset``)
or a callable ``(observations, action_masks) -> actions`` over a batch of the opponent decisions
waiting at some tables (e.g. a torch network's argmax over masked logits). Every table waits
until its learning seat is to act; opponents are called as often as needed, batched over tables.

**Reward.** Every bean change of the learning seat counts, on its own decisions and on the
opponents' between them (kongs, wins it pays, the draw checks and rake at the end). A step that
ends an episode carries that episode's last changes; the rewards of an episode sum to the seat's
beans in ``info["beans"]``. The learner is never handed a decision without a legal action.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from . import make

Opponent = Callable[[np.ndarray, np.ndarray], np.ndarray]


class SingleSeatVectorEnv(VectorEnv):
    """One learning seat per table, batched opponents; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game: str = "blood_battle", num_envs: int = 1, *, opponents: str | Opponent = "random",
                 seat: int = 0, num_threads: int = 1, **env_options: Any) -> None:
        if not (isinstance(seat, int) and 0 <= seat < 4):
            raise ValueError(f"seat must be a seat 0-3, got {seat!r}")
        if opponents != "random" and not callable(opponents):
            raise ValueError(f"opponents must be 'random' or a callable (observations, action_masks) -> "
                             f"actions, got {opponents!r}")
        self.venv = make(game, num_envs, num_threads=num_threads, copy=False, **env_options)
        self.seat, self.opponents, self.num_envs = seat, opponents, num_envs
        single = self.venv.single_observation_space["observation"]
        self.single_observation_space = single
        self.single_action_space = self.venv.single_action_space
        self.observation_space = spaces.Box(-np.inf, np.inf, (num_envs, *single.shape), np.float32)
        self.action_space = spaces.MultiDiscrete([self.single_action_space.n] * num_envs)
        self._rng = np.random.default_rng()
        self._obs: dict[str, np.ndarray] | None = None
        self._seats = np.zeros(num_envs, dtype=np.int64)
        self._reward = np.zeros(num_envs, dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every table (the vector env's seeding) and play the opponents up to the seat's turn."""
        self._rng = np.random.default_rng(seed)
        obs, info = self.venv.reset(seed=seed, options=options)
        self._obs, self._seats = obs, info["seat"]
        self._reward[:] = 0
        info = self._advance(np.zeros(self.num_envs, dtype=np.bool_), {})
        return self._obs["observation"].copy(), info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learning seat's action at every table, then the opponents up to its next decision."""
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        self._reward[:] = 0
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        final: dict[str, np.ndarray] = {}
        self._play(np.asarray(actions), None, terminated, final)
        info = self._advance(terminated, final)
        return (self._obs["observation"].copy(), self._reward.copy(), terminated,
                np.zeros(self.num_envs, dtype=np.bool_), info)

    def action_masks(self) -> np.ndarray:
        """int8 (N, A): the legal actions of the learning seat at each table."""
        return self._obs["action_mask"].copy()

    def close(self, **kwargs: Any) -> None:
        if hasattr(self, "venv"):  # gymnasium closes in __del__, also after a failed __init__
            self.venv.close()

    # ------------------------------------------------------------------ helpers

    def _play(self, actions: np.ndarray, active: np.ndarray | None, terminated: np.ndarray,
              final: dict[str, np.ndarray]) -> None:
        """Step the vector env; collect the seat's rewards and finished episodes."""
        obs, rewards, term, _, info = self.venv.step(actions, active)
        self._obs, self._seats = obs, info["seat"]
        self._reward += rewards[:, self.seat]
        if term.any():
            if not final:
                final.update(beans=np.zeros_like(info["beans"]), end_reason=np.full(self.num_envs, "", object))
            final["beans"][term] = info["beans"][term]
            final["end_reason"][term] = info["end_reason"][term]
            terminated |= term

    def _advance(self, terminated: np.ndarray, final: dict[str, np.ndarray]) -> dict[str, Any]:
        """Let the opponents act, batched over tables, until every table waits on the seat."""
        while True:
            waiting = self._seats != self.seat
            if not waiting.any():
                break
            obs = self._obs
            actions = np.zeros(self.num_envs, dtype=np.int64)
            rows = np.flatnonzero(waiting)
            masks = obs["action_mask"][rows]
            if self.opponents == "random":
                actions[rows] = (self._rng.random(masks.shape) * masks).argmax(axis=1)
            else:
                actions[rows] = np.asarray(self.opponents(obs["observation"][rows], masks))
            self._play(actions, waiting, terminated, final)
        info: dict[str, Any] = {"action_mask": self._obs["action_mask"].copy()}
        if final:
            info.update(final, _final=terminated.copy())
        return info
