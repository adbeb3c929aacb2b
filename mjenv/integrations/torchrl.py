"""TorchRL view of the mjenv games: a batched ``EnvBase`` of ``num_envs`` tables on the compiled
engine, one learning seat per table against opponents (built on
:class:`~mjenv.integrations.gymnasium.SingleSeatVectorEnv`, whose episode rules are
:class:`mjenv.vector.SingleSeatView`'s). ``docs/integrations/torchrl.md`` is the guide.

=====================  ======================================================================
Make                   ``make_env(game, num_envs, *, opponents="random", seat=0,
                       observation_dtype="float32", illegal_action="raise", illegal_reward=None,
                       num_threads=1, seed=None, device="cpu", **env_options)`` ->
                       :class:`SingleSeatTorchEnv`, ``batch_size == (num_envs,)``
Observation spec       ``"observation"``: ``(N, *obs_shape)`` float32 or uint8 (``Bounded``), the
                       learning seat's planes; ``"action_mask"``: bool ``(N, A)``, True = legal;
                       ``"seat"``: int64 ``(N,)`` the learning seat; ``"beans"``: int64 ``(N, 4)``,
                       the finished table's bean table on the step that ends its episode, else 0
Action spec            ``Categorical(A)``, int64 ``(N,)``; the env keeps its mask up to date, so
                       ``env.rand_action`` (``env.rollout()`` without a policy) plays legal actions
Reward                 float32 ``(N, 1)``: the learning seat's bean change since its previous decision
Done                   ``"done"`` = ``"terminated"`` bool ``(N, 1)``: the table's episode ended;
                       ``"truncated"`` always False
Reset                  ``reset()``: every table deals a new hand; with ``"_reset"`` (what
                       ``step_and_maybe_reset`` and the collectors pass): the finished tables
                       start the hand the engine already dealt them (no engine work); a
                       ``"_reset"`` naming every table while some are mid-hand deals them all
Partial steps          ``"_step"`` (``rollout(break_when_all_done=True)``): the other tables wait
Seeding                ``set_seed(s)`` (or ``seed=s``): the next ``reset()`` is
                       ``SingleSeatVectorEnv.reset(seed=s)`` (table ``i`` deals the AEC env's
                       ``reset(seed=s + i)``); later full resets draw their seeds from ``s``
=====================  ======================================================================

**Autoreset.** The engine deals a finished table's next hand at once (``SAME_STEP``); TorchRL
resets explicitly. The step that ends table ``i``'s episode returns the learning seat's view of the
finished table (its mask row all True, as TorchRL's PettingZoo wrapper fills rows where nobody
acts, so masked distributions stay finite), ``done`` and ``beans``; the next hand's first decision
waits until TorchRL asks for table ``i``'s reset. Stepping a finished table before its reset
raises. A table in the middle of its hand cannot be reset alone (hands end by themselves; there is
nothing to truncate): ``"_reset"`` must name finished tables only, or every table.

**Exactness.** The rewards of an episode sum to ``beans[i, seat[i]]`` of its last step (the
learning seat's bean change over the hand, opponents' moves between its decisions included), so
TorchRL's ``RewardSum`` records the bean deltas exactly.

Version history: v0 (mjenv 0.1.0): first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from ..engine.core import N_SEATS
from .gymnasium import SingleSeatVectorEnv

__all__ = ["SingleSeatTorchEnv", "make_env"]

_SEED_LIMIT = 2**62  # the engine takes seeds up to 2**63 - num_envs


def make_env(game: str = "blood_battle", num_envs: int = 1, **options: Any) -> SingleSeatTorchEnv:
    """A batched TorchRL env of ``num_envs`` tables, one learning seat each; see the module docstring."""
    return SingleSeatTorchEnv(game, num_envs, **options)


class SingleSeatTorchEnv(EnvBase):
    """``num_envs`` tables of ``game`` on the compiled engine as one TorchRL env; see the module docstring."""

    def __init__(self, game: str = "blood_battle", num_envs: int = 1, *, opponents: Any = "random",
                 seat: int | str = 0, observation_dtype: str = "float32", illegal_action: str = "raise",
                 illegal_reward: float | None = None, num_threads: int = 1, seed: int | None = None,
                 device: Any = "cpu", **env_options: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        vector_env = SingleSeatVectorEnv(
            game, int(num_envs), opponents=opponents, seat=seat, autoreset_mode=AutoresetMode.SAME_STEP,
            illegal_action=illegal_action, illegal_reward=illegal_reward, observation_dtype=observation_dtype,
            num_threads=num_threads, **env_options)
        super().__init__(device=device, batch_size=torch.Size([vector_env.num_envs]))
        self.vector_env = vector_env
        """The :class:`SingleSeatVectorEnv` underneath (``SAME_STEP``)."""
        self.game = vector_env.game
        n = self.num_envs = vector_env.num_envs
        self._make_specs()
        self._action_leaf = self.full_action_spec["action"]  # the leaf whose mask the env updates
        self._finished = np.zeros(n, dtype=np.bool_)  # episode ended, next hand not yet handed out
        self._final: dict[str, np.ndarray] = {}  # finished tables' last "next" rows (partial steps)
        self._view: dict[str, np.ndarray] = {}  # each table's decision after a reset (empty before the first)
        self._seed: int | None = None  # the next full reset's seed, from set_seed
        self._seeds = np.random.default_rng()
        if seed is not None:
            self.set_seed(seed)

    # ------------------------------------------------------------------ specs

    def _make_specs(self) -> None:
        env, n = self.vector_env, self.num_envs
        space = env.single_observation_space
        dtype = torch.uint8 if space.dtype == np.uint8 else torch.float32
        shape = (n, *space.shape)
        n_actions = int(env.single_action_space.n)
        self.observation_spec = Composite(
            observation=Bounded(low=torch.as_tensor(space.low).expand(shape),
                                high=torch.as_tensor(space.high).expand(shape), shape=shape, dtype=dtype),
            action_mask=Binary(n=n_actions, shape=(n, n_actions), dtype=torch.bool),
            seat=Bounded(low=0, high=N_SEATS - 1, shape=(n,), dtype=torch.int64),
            beans=Unbounded(shape=(n, N_SEATS), dtype=torch.int64),
            shape=(n,))
        self.action_spec = Categorical(n_actions, shape=(n,), dtype=torch.int64)
        self.reward_spec = Unbounded(shape=(n, 1), dtype=torch.float32)
        self.done_spec = Composite(
            done=Categorical(2, shape=(n, 1), dtype=torch.bool),
            terminated=Categorical(2, shape=(n, 1), dtype=torch.bool),
            truncated=Categorical(2, shape=(n, 1), dtype=torch.bool),
            shape=(n,))

    # ------------------------------------------------------------------ EnvBase

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        requested = None if tensordict is None else tensordict.get("_reset", None)
        rows = None if requested is None else self._rows(requested, "_reset")
        if rows is None or not self._view or (rows.all() and not self._finished.all()):
            self._deal()
        else:
            mid_hand = np.flatnonzero(rows & ~self._finished)
            if len(mid_hand):
                raise ValueError(
                    f"'_reset' asks to reset tables {mid_hand[:10].tolist()} in the middle of their hands; only "
                    "finished tables can be reset alone (hands end by themselves), or every table at once")
            self._finished[rows] = False  # they start the hand the engine dealt them when they finished
        view = self._view
        self._action_leaf.update_mask(torch.from_numpy(view["action_mask"]).to(self.device))
        done = torch.from_numpy(self._finished.reshape(-1, 1).copy())
        return self._tensordict(view["observation"], view["action_mask"], view["seat"],
                                np.zeros((self.num_envs, N_SEATS), dtype=np.int64), done=done)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        if not self._view:
            raise RuntimeError("call reset() before step()")
        partial = tensordict.get("_step", None)
        active = None if partial is None else self._rows(partial, "_step")
        moving = self._finished if active is None else self._finished & active
        if moving.any():
            raise RuntimeError(
                f"tables {np.flatnonzero(moving)[:10].tolist()} finished their episodes and were not reset: "
                "reset them first ('_reset', as env.step_and_maybe_reset and the collectors do)")
        action = tensordict.get("action")
        if action.is_floating_point() or action.is_complex() or action.dtype == torch.bool:
            raise TypeError(f"actions must be integers (one per table), got {action.dtype}")
        actions = action.detach().to("cpu", torch.int64).reshape(-1).numpy()
        obs, reward, term, _, info = self.vector_env.step(actions, active)
        mask = info["action_mask"].view(np.bool_)  # a fresh int8 0/1 array: viewed, not copied
        self._view.update(observation=obs, action_mask=mask, seat=info["seat"])  # in place: EnvBase is an nn.Module
        beans = np.zeros((self.num_envs, N_SEATS), dtype=np.int64)
        held = None if active is None else self._finished & ~active  # finished earlier, waiting
        if term.any() or (held is not None and held.any()):
            obs, mask, seat = obs.copy(), mask.copy(), info["seat"].copy()  # the reset view stays as it is
            if term.any():
                self._record_ends(term, info, obs, mask, seat, beans)
            if held is not None and held.any():
                for name, value in (("observation", obs), ("action_mask", mask), ("seat", seat), ("beans", beans)):
                    value[held] = self._final[name][held]
        else:
            seat = info["seat"]
        done = torch.from_numpy((self._finished if held is None else self._finished | held).reshape(-1, 1).copy())
        self._action_leaf.update_mask(torch.from_numpy(mask).to(self.device))
        return self._tensordict(obs, mask, seat, beans, done=done,
                                reward=torch.from_numpy(reward).reshape(-1, 1))

    def _set_seed(self, seed: int | None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                                 or not 0 <= seed <= _SEED_LIMIT):
            raise ValueError(f"seed must be an int in [0, 2**62] or None, got {seed!r}")
        self._seed = None if seed is None else int(seed)
        self._seeds = np.random.default_rng(seed)

    def close(self, *, raise_if_closed: bool = True) -> None:
        if hasattr(self, "vector_env"):
            self.vector_env.close()
        super().close(raise_if_closed=raise_if_closed)

    # ------------------------------------------------------------------ helpers

    def _deal(self) -> None:
        """Every table deals a new hand: the seed from ``set_seed``, else one drawn from its generator."""
        seed = self._seed if self._seed is not None else int(self._seeds.integers(_SEED_LIMIT))
        self._seed = None
        obs, info = self.vector_env.reset(seed=seed)
        self._view.update(observation=obs, action_mask=info["action_mask"].view(np.bool_), seat=info["seat"])
        self._finished[:] = False

    def _record_ends(self, term: np.ndarray, info: dict[str, Any], obs: np.ndarray, mask: np.ndarray,
                     seat: np.ndarray, beans: np.ndarray) -> None:
        """Write the finished tables' last views into this step's outputs and keep them until reset."""
        final = info["final_info"]
        rows = np.flatnonzero(term)
        for i in rows:
            obs[i] = info["final_obs"][i]
        mask[rows] = True  # no action is taken on a final view (TorchRL's filler for such rows)
        seat[rows] = final["seat"][rows]
        beans[rows] = final["beans"][rows]
        self._finished[term] = True
        if not self._final:
            self._final.update(observation=np.zeros_like(obs), action_mask=np.ones_like(mask),
                               seat=np.zeros_like(seat), beans=np.zeros_like(beans))
        for name, value in (("observation", obs), ("seat", seat), ("beans", beans)):
            self._final[name][rows] = value[rows]

    def _rows(self, flags: torch.Tensor, key: str) -> np.ndarray:
        """A ``"_reset"`` / ``"_step"`` entry as a bool numpy array, one entry per table."""
        if flags.dtype != torch.bool or flags.numel() != self.num_envs:
            raise ValueError(f"'{key}' must be a bool tensor with one entry per table ({self.num_envs}), "
                             f"got {flags.dtype} {tuple(flags.shape)}")
        return flags.detach().cpu().reshape(-1).numpy()

    def _tensordict(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, beans: np.ndarray,
                    done: torch.Tensor, reward: torch.Tensor | None = None) -> TensorDictBase:
        """The env's outputs as one tensordict (numpy arrays shared, not copied)."""
        out = {"observation": torch.from_numpy(obs), "action_mask": torch.from_numpy(mask),
               "seat": torch.from_numpy(seat), "beans": torch.from_numpy(beans),
               "done": done, "terminated": done.clone(), "truncated": torch.zeros_like(done)}
        if reward is not None:
            out["reward"] = reward
        return TensorDict(out, batch_size=self.batch_size, device=self.device)
