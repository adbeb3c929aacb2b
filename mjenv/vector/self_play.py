"""``SelfPlayVectorEnv``: parameter-shared self-play on the compiled engine, with each seat's
rewards credited to its own decisions, so that a learner in any toolkit needs no bookkeeping.

=====================  ======================================================================
Make                   ``SelfPlayVectorEnv(game, num_envs, *, num_threads=1,
                       final_observations=False, copy=True, **options)`` (``options``: the
                       AEC env's, ``match_hands``, ``illegal_action``, ``illegal_reward``,
                       ``observation_dtype`` and ``backend`` included); ``copy=False`` (as
                       Gymnasium's vector envs): observations and ``info["action_mask"]`` are
                       the engine's buffers, valid until the next step
Observation            ``(N, *obs_shape)``: the view of the seat to act at each table
                       (``info["seat"]``), float32 or uint8 (``observation_dtype``)
Action                 int ``(N,)``: one action per table, for its seat to act; ``step(actions,
                       active)``: only the tables where ``active`` (bool ``(N,)``) is True play,
                       the others wait on the same decision (reward 0, their actions ignored)
Action mask            ``action_masks()`` int8 ``(N, A)``, also ``info["action_mask"]``
Reward                 float32 ``(N,)``: the bean change of the seat to act since its previous
                       decision in the episode (at its first decision: since the episode began)
Episode end            ``terminated[i]`` (never truncated); an episode is a hand, or
                       ``match_hands`` hands; same-step autoreset (``autoreset_mode``, in
                       ``metadata`` too): ``obs[i]`` is the next episode's first decision, its
                       reward 0. On a step where some table ended (``info["_final"]`` marks
                       which): ``info["final_rewards"]`` float32 ``(N, 4)``, each seat's bean
                       change since its last decision (credit it to that decision; 0 at the
                       other tables), ``info["beans"]`` the episode's bean table,
                       ``end_reason``, ``won``; with ``final_observations``,
                       ``info["final_obs"][i]``: the four seats' views
=====================  ======================================================================

**Crediting.** Follow one seat of one table through an episode: the reward that comes with its
decision ``d_k`` (``k >= 1``) belongs to ``d_{k-1}``, and ``final_rewards`` to its last decision.
Every bean is paid once: for each table and episode, the rewards returned with a seat's
decisions plus its ``final_rewards`` sum to its ``beans``. A seat that is never asked in an
episode (a Joy Mahjong hand won on the dealer's first discard) receives its beans in
``final_rewards`` only. The reward that comes with a seat's first decision is what it received
before deciding anything: count it with that first decision, as the trainer's rollouts do (it
is 0 unless beans moved before the seat first decided; the blood battle asks every seat its void
suit first, and in random play of both games it was always 0). With ``match_hands`` > 1 the
crediting runs over the whole episode: a seat's last decision of one hand is credited with what
the seat receives up to its first decision of the next. This is exactly the trainer's
specification, ``train.rollout.credit_rewards`` (``tests/mjenv/vector/test_self_play.py`` compares
the two on the same games), and the trainer's rollouts play this view (``train/vector_rollout.py``);
the bookkeeping is :class:`~mjenv.vector.crediting.Ledger`, shared with the other views.

**Illegal actions** (``illegal_action``) as in :func:`mjenv.vector.make`: ``info["illegal_action"]``
(on steps with one) flags the tables. With ``"terminate"`` the offender's ``illegal_reward``
comes in its ``final_rewards`` while ``beans`` leaves it out (as the AEC env's infos), so that
seat's rewards sum to its beans plus the penalty.

Version history: v0 (mjenv 0.1.0): first release; the reference corrected: crediting runs over
the episode (``match_hands``), the penalty of ``illegal_action="terminate"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from .crediting import Ledger
from .factory import make


class SelfPlayVectorEnv:
    """The seat to act at each of ``num_envs`` tables, with its credited reward; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
    autoreset_mode = AutoresetMode.SAME_STEP

    def __init__(self, game: str = "blood_battle", num_envs: int = 1, *, num_threads: int = 1,
                 final_observations: bool = False, copy: bool = True, **options: Any) -> None:
        self.venv = make(game, num_envs, num_threads=num_threads, copy=copy,
                         final_observations=final_observations, **options)
        self.copy = copy
        self.game, self.num_envs = game, self.venv.num_envs
        self.single_observation_space = self.venv.single_observation_space["observation"]
        self.single_action_space = self.venv.single_action_space
        single = self.single_observation_space
        n = self.num_envs
        self.observation_space = spaces.Box(np.broadcast_to(single.low, (n, *single.shape)),
                                            np.broadcast_to(single.high, (n, *single.shape)), dtype=single.dtype)
        self.action_space = spaces.MultiDiscrete(np.full(n, self.single_action_space.n))
        self._ledger = Ledger(self.num_envs)  # bean changes not yet returned
        self._all = np.arange(self.num_envs)
        self._masks: np.ndarray | None = None

    def reset(self, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every table (the seeding of :func:`mjenv.vector.make`'s env)."""
        obs, info = self.venv.reset(seed=seed, options=options)
        self._ledger.clear()
        self._masks = obs["action_mask"]
        return obs["observation"], {"seat": info["seat"], "action_mask": self._mine(obs["action_mask"])}

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per table for its seat to act; the next seats to act and their rewards.
        ``active`` (bool ``(N,)``, default all): only these tables play, the others wait."""
        obs, rewards, terminated, truncated, info = self.venv.step(actions, active)
        self._ledger.receive(rewards)
        out: dict[str, Any] = {key: value for key, value in info.items() if key != "seat"}
        if terminated.any():  # the finished hand's last credits, before the next hand's seat takes its own
            final = np.zeros((self.num_envs, 4), dtype=np.float32)
            final[terminated] = self._ledger.settle(terminated)
            out["final_rewards"] = final
        seat = info["seat"]
        reward = self._ledger.pay(self._all, seat).astype(np.float32)
        self._masks = obs["action_mask"]
        out.update(seat=seat, action_mask=self._mine(obs["action_mask"]))
        return obs["observation"], reward, terminated, truncated, out

    @property
    def _unpaid(self) -> np.ndarray:
        """(N, 4): each seat's bean changes not yet returned (the ledger's)."""
        return self._ledger.unpaid

    def _mine(self, masks: np.ndarray) -> np.ndarray:
        """The masks as the caller's own array (with ``copy``), else the engine's buffer."""
        return masks.copy() if self.copy else masks

    def action_masks(self) -> np.ndarray:
        """int8 ``(N, A)``: the legal actions of each table's seat to act."""
        if self._masks is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._masks.copy()

    def state(self, tables: Any = None) -> np.ndarray:
        """The perfect-information ``state()`` of every table (for oracle critics); see ``make``."""
        return self.venv.state(tables)

    def close(self) -> None:
        self.venv.close()
