"""Stable-Baselines3 view of the mjenv games: one learning seat per table, many tables, one VecEnv.

:func:`make_vec_env` returns a :class:`MahjongVecEnv`, a ``stable_baselines3`` ``VecEnv`` of
``num_envs`` tables on the compiled engine: a :class:`~mjenv.integrations.gymnasium.SingleSeatVectorEnv`
in ``SAME_STEP`` autoreset mode (SB3's convention) seen through SB3's API; the episode rules are
:class:`mjenv.vector.SingleSeatView`'s. sb3-contrib's
``MaskablePPO`` trains on it as it is::

    envs = VecMonitor(make_vec_env("blood_battle", 256, opponents="heuristic", preset="qq"))
    MaskablePPO("MlpPolicy", envs, n_steps=64, batch_size=4096, n_epochs=2).learn(1_000_000)

=====================  ======================================================================
Make                   ``make_vec_env(game, num_envs, *, opponents="random", seat=0, **options)``;
                       ``options``: ``SingleSeatVectorEnv``'s (``illegal_action``,
                       ``observation_dtype``, ``num_threads``) and the env's (``preset``,
                       ``room``, rule fields, ``match_hands``); not ``autoreset_mode``
Observation            ``(N, *obs_shape)``, the learning seat's planes; ``observation_space`` is
                       one table's ``Box``, float32 or uint8 (``observation_dtype``)
Action space           ``Discrete(A)`` per table (62 blood battle, 76 Joy); ``step`` takes ``(N,)``
Action mask            ``action_masks()`` int8 ``(N, A)``; ``env_method("action_masks")`` (what
                       sb3-contrib calls on a VecEnv) gives its rows, one engine read for all tables
Reward                 float32 ``(N,)``: the learning seat's bean change since its previous decision
Done                   the table's hand (or match) ended; the returned observation is already the
                       next hand's first decision (SB3's autoreset); never truncated
Infos                  a list of ``N`` dicts, empty but at a table whose episode ended:
                       ``terminal_observation``, ``TimeLimit.truncated`` (False), ``beans`` int64
                       ``(4,)``, ``seat``, ``end_reason``, ``won``, ``skipped_hands``; with the
                       rule options ``escaped``, ``penalty``, ``balances``, ``item_uses`` and ``skipped_beans``
                       (``SingleSeatVectorEnv``'s); and ``illegal_action`` (True) where the
                       learner's action was illegal
Seeding                ``seed(s)`` then ``reset()``: table ``i`` deals the AEC env's
                       ``reset(seed=s + i)``, opponents draw from ``s`` (as ``SingleSeatVectorEnv``)
Self-play              :func:`frozen_policy` (an opponent that plays a frozen copy of a model's
                       policy, seeing what the learner sees) and :class:`SelfPlayCallback` (refreshes
                       it every ``every`` learner steps); ``set_opponents`` swaps opponents in
=====================  ======================================================================

The rewards of an episode sum to the learning seat's bean delta, ``info["beans"][info["seat"]]``
(a hand that ends before the seat acts: merged into the next episode, or left out with
``bankroll``, as in :mod:`mjenv.integrations.gymnasium`), so ``VecMonitor`` records exactly the
bean deltas, and ``VecNormalize.get_original_reward()``
the raw beans. ``get_attr`` reads attributes shared by all tables (of this env, else of the
``SingleSeatVectorEnv`` in ``.env``); ``set_attr`` is refused (the tables share one engine).
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecNormalize
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from .gymnasium import SingleSeatVectorEnv
from .opponents import FrozenNetwork

__all__ = ["FrozenPolicy", "MahjongVecEnv", "SelfPlayCallback", "frozen_policy", "make_vec_env"]

_FINAL_KEYS = ("beans", "end_reason", "won", "skipped_hands")
_OPTION_KEYS = ("skipped_beans", "escaped", "penalty", "balances", "item_uses")
"""Final-info fields of the rule options (bankroll, escape, items), present only with them."""


def make_vec_env(game: str, num_envs: int, *, opponents: Any = "random", seat: int | str = 0,
                 **options: Any) -> MahjongVecEnv:
    """An SB3 ``VecEnv`` of ``num_envs`` tables of ``game``, one learning seat each (module docstring)."""
    if "autoreset_mode" in options:
        raise ValueError("an SB3 VecEnv resets in the step that ends an episode (SAME_STEP); "
                         "autoreset_mode cannot be chosen here")
    return MahjongVecEnv(SingleSeatVectorEnv(game, num_envs, opponents=opponents, seat=seat,
                                             autoreset_mode=AutoresetMode.SAME_STEP, **options))


class MahjongVecEnv(VecEnv):
    """SB3's ``VecEnv`` API over a ``SAME_STEP`` :class:`SingleSeatVectorEnv` (``.env``)."""

    def __init__(self, env: SingleSeatVectorEnv) -> None:
        if not isinstance(env, SingleSeatVectorEnv) or env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise TypeError("MahjongVecEnv wraps a SingleSeatVectorEnv in SAME_STEP autoreset mode; "
                            "use make_vec_env(game, num_envs, ...)")
        self.env = env
        self.render_mode = None
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    # ------------------------------------------------------------------ SB3 VecEnv API

    def reset(self) -> VecEnvObs:
        """Deal every table (seeded by the last ``seed`` call, scripted by ``set_options``)."""
        seed, options = _one_seed(self._seeds), _one_options(self._options)
        obs, info = self.env.reset(seed=seed, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{"seat": int(s)} for s in info["seat"]]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("call step_async(actions) before step_wait()")
        actions, self._actions = np.asarray(self._actions), None
        if actions.ndim == 2 and actions.shape[1] == 1:  # (N, 1), as some callers pass Discrete actions
            actions = actions[:, 0]
        obs, rewards, terminated, _, info = self.env.step(actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if "final_info" in info:
            final, final_obs = info["final_info"], info["final_obs"]
            for i in np.flatnonzero(terminated):
                infos[i] = {"terminal_observation": final_obs[i], "TimeLimit.truncated": False,
                            "seat": int(final["seat"][i]), **{k: final[k][i] for k in _FINAL_KEYS},
                            **{k: final[k][i] for k in _OPTION_KEYS if k in final}}
        for i in np.flatnonzero(info.get("illegal_action", ())):
            infos[i]["illegal_action"] = True
        return obs, rewards, terminated, infos

    def action_masks(self) -> np.ndarray:
        """int8 ``(N, A)``: the learning seat's legal actions at every table."""
        return self.env.action_masks()

    def set_opponents(self, opponents: Any) -> None:
        """New opponents from the next step on (``SingleSeatVectorEnv.set_opponents``)."""
        self.env.set_opponents(opponents)

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute, shared by every table: this env's, else its ``SingleSeatVectorEnv``'s."""
        owner = self if hasattr(self, attr_name) else self.env
        return [getattr(owner, attr_name)] * len(self._table_list(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r} per table: the tables share one engine "
                             "(set options when making the env, or use set_opponents)")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``"action_masks"`` gives each listed table's mask row (read once for all tables)."""
        if method_name != "action_masks":
            raise AttributeError(f"env_method supports 'action_masks' only (the tables share one engine), "
                                 f"got {method_name!r}")
        masks = self.action_masks()
        return list(masks) if indices is None else [masks[i] for i in self._table_list(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._table_list(indices))

    def _table_list(self, indices: VecEnvIndices) -> list[int]:
        """``indices`` as a list of table numbers, checked."""
        tables = list(self._get_indices(indices))
        if not all(isinstance(i, (int, np.integer)) and 0 <= i < self.num_envs for i in tables):
            raise IndexError(f"indices must be table numbers in [0, {self.num_envs}), got {indices!r}")
        return tables


def _one_seed(seeds: Sequence[int | None]) -> int | None:
    """The seed ``s`` of SB3's per-env seeds ``s + i`` (what ``VecEnv.seed(s)`` sets), or None."""
    if all(s is None for s in seeds):
        return None
    first = seeds[0]
    if first is None or list(seeds) != [first + i for i in range(len(seeds))]:
        raise ValueError(f"the tables are seeded together: call seed(s) (table i gets s + i), got {seeds!r}"[:300])
    return int(first)


def _one_options(options: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The one options dict of every table (``set_options(dict)``), or None."""
    if not any(options):
        return None
    first = options[0]
    if any(o is not first for o in options):  # set_options(dict) repeats one (deep-copied) dict
        raise ValueError("the tables take one options dict together: call set_options(dict)")
    return first


# ---------------------------------------------------------------------- self-play


def policy_logits(policy: Any, observations: torch.Tensor) -> torch.Tensor:
    """Logits of an SB3 (Maskable) actor-critic policy's action distribution (its ``FrozenNetwork``
    forward)."""
    return policy.get_distribution(observations).distribution.logits


class FrozenPolicy(FrozenNetwork):
    """An opponent playing a frozen copy of a model's policy. Opponents get float32 planes; this
    turns them into what the model's policy reads (uint8 if its env quantises, normalised with a
    frozen copy of ``VecNormalize``'s statistics if it normalises) before its forward."""

    def __init__(self, model: BaseAlgorithm, greedy: bool = False, name: str = "frozen_policy") -> None:
        _check_model(model)
        super().__init__(model.policy, forward=policy_logits, greedy=greedy, name=name)
        self._learner_view = _LearnerView(model)

    def update(self, model: BaseAlgorithm) -> None:  # type: ignore[override]
        """Copy the model's current weights (and observation statistics) into the frozen copy."""
        _check_model(model)
        super().update(model.policy)
        self._learner_view = _LearnerView(model)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return super().act_batch(self._learner_view(observations), action_masks, rng)


def frozen_policy(model: BaseAlgorithm, *, greedy: bool = False, name: str = "frozen_policy") -> FrozenPolicy:
    """A frozen copy of ``model``'s policy as an opponent (``set_opponents``, a ``Mixture`` entry);
    refresh it with :class:`SelfPlayCallback` or ``update(model)``. ``greedy``: the masked argmax."""
    return FrozenPolicy(model, greedy=greedy, name=name)


def _check_model(model: Any) -> None:
    if not isinstance(model, BaseAlgorithm) or not hasattr(model.policy, "get_distribution"):
        raise TypeError(f"expected a Stable-Baselines3 model with an actor-critic policy (MaskablePPO, PPO), "
                        f"got {type(model).__name__}")


class _LearnerView:
    """float32 planes -> the observation the model's policy reads, frozen at construction."""

    def __init__(self, model: BaseAlgorithm) -> None:
        env = model.get_env()
        base = env.unwrapped if env is not None else None
        self.to_uint8 = None
        if isinstance(base, MahjongVecEnv):
            if base.env.observation_dtype == "uint8":
                self.to_uint8 = base.env.venv.backend.observer.to_uint8
        elif model.observation_space.dtype != np.float32:
            raise TypeError("a frozen copy of a model that reads uint8 observations needs the model's env "
                            "(a MahjongVecEnv) to quantise the opponents' float32 planes")
        vecnorm = model.get_vec_normalize_env()
        self.norm: tuple[np.ndarray, np.ndarray, float] | None = None
        if vecnorm is not None and vecnorm.norm_obs:
            rms = copy.deepcopy(vecnorm.obs_rms)
            self.norm = (rms.mean, np.sqrt(rms.var + vecnorm.epsilon), vecnorm.clip_obs)

    def __call__(self, planes: np.ndarray) -> np.ndarray:
        obs = self.to_uint8(planes) if self.to_uint8 is not None else planes
        if self.norm is not None:  # VecNormalize.normalize_obs with the frozen statistics
            mean, std, clip = self.norm
            obs = np.clip((obs - mean) / std, -clip, clip).astype(np.float32)
        return obs


class SelfPlayCallback(BaseCallback):
    """Refreshes frozen copies of the learner (:func:`frozen_policy`) with its current weights at
    the start of the first rollout after every ``every`` learner steps."""

    def __init__(self, frozen: FrozenPolicy | Sequence[FrozenPolicy], every: int, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.frozen = list(frozen) if isinstance(frozen, (list, tuple)) else [frozen]
        if not self.frozen or not all(isinstance(f, FrozenPolicy) for f in self.frozen):
            raise TypeError("SelfPlayCallback refreshes FrozenPolicy opponents (from frozen_policy(model))")
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"every must be a number of learner steps >= 1, got {every!r}")
        self.every = int(every)
        self.refreshed_at = 0

    def _on_rollout_start(self) -> None:
        steps = self.model.num_timesteps
        if steps - self.refreshed_at >= self.every:
            for f in self.frozen:
                f.update(self.model)
            self.refreshed_at = steps
            if self.verbose:
                print(f"self-play: opponents refreshed at {steps} steps")

    def _on_step(self) -> bool:
        return True
