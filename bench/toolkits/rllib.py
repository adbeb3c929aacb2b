"""RLlib (new API stack) PPO sampling: env steps/s of an EnvRunner's ``sample()`` on the compiled
engine (``ppo_config``: one learning seat, and self-play) against the AEC path (the stock
``MultiAgentEnvRunner`` over ``MahjongMultiAgentEnv``), in one run.

    cd bench && python -m toolkits.rllib [--game joy_mahjong] [--quick] [--tables 64]

Every path samples in this process (``num_env_runners=0``) with one torch thread and the
``MaskedPPOModule`` of ``ppo_config`` (RLlib's default ``fcnet_hiddens=[256, 256]``), exploring,
``tables`` envs per runner. A figure is env steps as RLlib counts them (the learning seat's
decisions; every decision in self-play) per CPU second of ``sample()``, median of the repeats
after a warm-up. Where the time goes, per vector step (CPU time): the env's ``step``, the
module's forward pass, RLlib's two connector pipelines, and the rest of RLlib's loop (episode
objects, metrics). RLlib's ceiling: the same runner and module sampling a zero-cost env of the
same spaces and episode lengths, what no env can beat.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from typing import Any, Callable

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local Ray without token authentication

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

from mjenv import games
from mjenv.integrations.rllib import MahjongMultiAgentEnv, SelfPlayEnvRunner, ppo_config

_ZERO_COST_ID = "mjenv-bench/ZeroCostSingleSeat-v0"


class _Timed:
    """Calls ``target`` and adds its CPU time to ``clock[key]``; any other attribute is the target's."""

    def __init__(self, target: Any, clock: dict[str, float], key: str) -> None:
        self._target, self._clock, self._key = target, clock, key

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return self._target(*args, **kwargs)
        finally:
            self._clock[self._key] += time.process_time() - start

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def _clocked(runner: Any) -> dict[str, float]:
    """Times the runner's env step, module forward and connector pipelines from now on."""
    clock: dict[str, float] = defaultdict(float)
    runner.env.step = _Timed(runner.env.step, clock, "env")
    runner.module.forward_exploration = _Timed(runner.module.forward_exploration, clock, "module")
    runner._env_to_module = _Timed(runner._env_to_module, clock, "connectors")
    runner._module_to_env = _Timed(runner._module_to_env, clock, "connectors")
    return clock


def _sample_rate(runner: Any, steps: int, repeats: int) -> tuple[float, dict[str, float], float]:
    """Median env steps per CPU second of ``runner.sample``; the CPU ms per vector step of each
    part; the mean episode length RLlib reports."""
    runner.sample(num_timesteps=steps // 4)  # warm-up: episodes under way, torch's kernels chosen
    clock = _clocked(runner)
    rates, total, sampled = [], 0.0, 0
    for _ in range(repeats):
        start = time.process_time()
        got = sum(len(episode) for episode in runner.sample(num_timesteps=steps))
        seconds = time.process_time() - start
        rates.append(got / seconds)
        total, sampled = total + seconds, sampled + got
    vector_steps = sampled / runner.num_envs
    parts = {key: 1000 * clock[key] / vector_steps for key in ("env", "module", "connectors")}
    parts["rest"] = 1000 * total / vector_steps - sum(parts.values())
    length = float(runner.get_metrics().get("episode_len_mean", "nan"))  # nan: no episode ended
    return statistics.median(rates), parts, length


class _ZeroCostSingleSeat(gymnasium.vector.VectorEnv):
    """A vector env of the single-seat spaces that costs nothing: constant observations, reward 0,
    episodes of ``length`` steps (staggered), NEXT_STEP autoreset."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, like: spaces.Dict, n_actions: int, length: int) -> None:
        self.num_envs, self.length = num_envs, length
        self.single_observation_space, self.single_action_space = like, spaces.Discrete(n_actions)
        self.observation_space = gymnasium.vector.utils.batch_space(like, num_envs)
        self.action_space = spaces.MultiDiscrete([n_actions] * num_envs)
        self._obs = {key: np.zeros((num_envs, *space.shape), space.dtype) for key, space in like.spaces.items()}
        self._obs["action_mask"][:] = 1
        self._t = np.zeros(num_envs, dtype=np.int64)

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[dict, dict]:
        self._t = np.arange(self.num_envs) % self.length
        return {key: value.copy() for key, value in self._obs.items()}, {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        ended = self._t % self.length == self.length - 1
        self._t += 1
        n = self.num_envs
        return ({key: value.copy() for key, value in self._obs.items()}, np.zeros(n, np.float32), ended,
                np.zeros(n, np.bool_), {})


class _ZeroCostTables:
    """Stands in for the ``SelfPlayVectorEnv`` of a ``SelfPlayMultiAgentVectorEnv``: constant views,
    the seats in turn, hands of ``length`` decisions (staggered), rewards 0."""

    def __init__(self, like: Any, length: int) -> None:
        n, shape = like.num_envs, like.single_observation_space.shape
        self.num_envs, self.length = n, length
        self._obs = np.zeros((n, *shape), like.single_observation_space.dtype)
        self._mask = np.ones((n, like.single_action_space.n), np.int8)
        self._final = np.empty(n, dtype=object)
        for i in range(n):
            self._final[i] = np.zeros((4, *shape), like.single_observation_space.dtype)
        self._t = np.zeros(n, dtype=np.int64)

    def reset(self, seed: Any = None, options: Any = None) -> tuple[np.ndarray, dict]:
        self._t = np.arange(self.num_envs) % self.length
        return self._obs.copy(), {"seat": self._t % 4, "action_mask": self._mask.copy()}

    def step(self, actions: Any, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        n = self.num_envs
        ended = active & (self._t % self.length == self.length - 1)
        self._t += active
        info: dict[str, Any] = {"seat": self._t % 4, "action_mask": self._mask.copy()}
        if ended.any():
            info.update(final_rewards=np.zeros((n, 4), np.float32), final_obs=self._final,
                        beans=np.zeros((n, 4), np.int64), end_reason=np.full(n, "", dtype=object))
        return self._obs.copy(), np.zeros(n, np.float32), ended, np.zeros(n, np.bool_), info

    def close(self) -> None:
        """Nothing to release."""


def _zero_cost_self_play(length: int) -> type:
    """A SelfPlayEnvRunner whose env plays :class:`_ZeroCostTables` instead of the engine."""

    class ZeroCostRunner(SelfPlayEnvRunner):
        def make_env(self) -> None:
            super().make_env()
            self.env.selfplay = _ZeroCostTables(self.env.selfplay, length)

    return ZeroCostRunner


def _config(config: Any, seed: int = 0) -> Any:
    return config.env_runners(num_env_runners=0).debugging(seed=seed)


def measure(game: str = "blood_battle", quick: bool = False, tables: int = 64) -> list[dict]:
    """The AEC path and the two compiled paths, each with RLlib's ceiling and its breakdown."""
    torch.set_num_threads(1)
    name = games.game(game).name
    repeats, steps = (2, 100 * tables) if quick else (5, 200 * tables)  # hands end within a repeat
    runs: dict[str, tuple[float, dict[str, float], float]] = {}

    single = ppo_config(name, num_envs_per_env_runner=tables)
    runs["single"] = _sample_rate(SingleAgentEnvRunner(config=_config(single)), steps, repeats)
    probe = SingleAgentEnvRunner(config=_config(single))  # its spaces, for the zero-cost env
    obs_space, n_actions = probe.env.single_observation_space, probe.env.single_action_space.n
    probe.stop()
    length = max(1, round(np.nan_to_num(runs["single"][2], nan=1.0)))
    if _ZERO_COST_ID in gymnasium.registry:
        del gymnasium.registry[_ZERO_COST_ID]
    gymnasium.register(_ZERO_COST_ID, vector_entry_point=lambda num_envs, **kw: _ZeroCostSingleSeat(
        num_envs, obs_space, n_actions, length))
    runs["single ceiling"] = _sample_rate(SingleAgentEnvRunner(config=_config(
        single.copy(copy_frozen=False).environment(_ZERO_COST_ID, env_config={}))), steps, repeats)

    self_play = ppo_config(name, multi_agent=True, num_envs_per_env_runner=tables)
    runs["self-play"] = _sample_rate(SelfPlayEnvRunner(config=_config(self_play)), steps, repeats)
    ceiling_runner = _zero_cost_self_play(max(4, round(np.nan_to_num(runs["self-play"][2], nan=4.0))))
    runs["self-play ceiling"] = _sample_rate(ceiling_runner(config=_config(self_play)), steps, repeats)

    aec = self_play.copy(copy_frozen=False).env_runners(env_runner_cls=MultiAgentEnvRunner)
    aec_steps = steps // 4  # the AEC path is slow: fewer steps take as long
    runs["aec"] = _sample_rate(MultiAgentEnvRunner(config=_config(aec)), aec_steps, repeats)

    def notes(key: str, extra: str = "") -> str:
        rate, parts, length = runs[key]
        split = ", ".join(f"{part} {ms:.1f}" for part, ms in parts.items())
        out = f"{extra}CPU ms per vector step of {tables}: {split}; mean episode length {length:.1f}"
        if f"{key} ceiling" in runs:
            ceiling = runs[f"{key} ceiling"][0]
            out += (f"; RLlib's ceiling (same runner and module, a zero-cost env of the same spaces and "
                    f"episode length): {ceiling:,.0f} steps/s, this path reaches {rate / ceiling:.0%} of it")
        return out

    return [
        {"toolkit": "rllib", "path": f"MultiAgentEnvRunner over MahjongMultiAgentEnv x {tables}, PPO sampling",
         "engine": "aec", "steps_per_s": runs["aec"][0], "notes": notes("aec", "env steps = decisions; ")},
        {"toolkit": "rllib", "path": f"ppo_config({name!r}): SingleAgentEnvRunner, SingleSeatVectorEnv x {tables}",
         "engine": "compiled", "steps_per_s": runs["single"][0],
         "notes": notes("single", "env steps = the learning seat's decisions, opponents random; ")},
        {"toolkit": "rllib", "path": f"ppo_config({name!r}, multi_agent=True): SelfPlayEnvRunner, {tables} tables",
         "engine": "compiled", "steps_per_s": runs["self-play"][0],
         "notes": notes("self-play", "env steps = decisions of all seats; ")},
    ]


def _main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="blood_battle", choices=games.GAME_NAMES)
    parser.add_argument("--quick", action="store_true", help="fewer and shorter repeats")
    parser.add_argument("--tables", type=int, default=64, help="envs per runner (default 64)")
    cli = parser.parse_args(argv)
    for row in measure(cli.game, cli.quick, cli.tables):
        print(f"{row['engine']:>8}  {row['steps_per_s']:>9,.0f} steps/s  {row['path']}\n          {row['notes']}")


if __name__ == "__main__":
    _main()
