"""RLlib's multi-agent view of the mjenv games (new API stack). Importing this module imports ray
(and, through RLlib, torch); ``import mjenv`` never imports it.

:class:`MahjongMultiAgentEnv` is a ``ray.rllib.env.multi_agent_env.MultiAgentEnv`` over the AEC
env: the four seats are the agents ``player_0`` … ``player_3``; each ``step`` takes the action of
the one seat that must act and returns the observation of the next one (turn-based).

=====================  ======================================================================
Make                   ``MahjongMultiAgentEnv(config)`` with ``config = {"game": "blood_battle"
                       | "joy_mahjong", **env_options}`` (what ``PPOConfig().environment(env=
                       MahjongMultiAgentEnv, env_config=...)`` passes), or keyword arguments
Observation space      ``Dict(observations=Box(-inf, inf, (planes * width,), float32),
                       action_mask=Box(0, 1, (n,), float32))``: the keys and the float mask that
                       RLlib's ``ActionMaskingTorchRLModule`` example module expects; the
                       observation is the AEC env's, flattened (RLlib's default encoders build
                       MLPs for 1-D boxes only)
Action space           the game's ``Discrete(n)``
Rewards                every seat's bean delta at every step (RLlib adds a reward that reaches a
                       seat between its turns to that seat's next step)
Episode end            ``terminateds`` holds every seat and ``"__all__"``; nothing is truncated
=====================  ======================================================================

An illegal action raises :class:`~mjenv.engine.core.IllegalActionError`. RLlib's env pre-check
steps one action sampled without the mask: pass ``disable_env_checking=True`` to
``config.environment(...)``, or ``illegal_action="first_legal"`` here (the lowest legal action
replaces an illegal one, and that seat's ``info["illegal_action"]`` is True).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from .wrappers import check_illegal_action_mode, checked_action, make_raw_env


class MahjongMultiAgentEnv(MultiAgentEnv):
    """The four seats of one mjenv table as RLlib agents; see the module docstring."""

    def __init__(self, config: dict | None = None, **options: Any) -> None:
        super().__init__()
        options = {**(config or {}), **options}
        game = options.pop("game", "blood_battle")
        self.illegal_action = check_illegal_action_mode(options.pop("illegal_action", "raise"))
        self.aec_env = make_raw_env(game, **options)
        self.game = game
        self.possible_agents = list(self.aec_env.possible_agents)
        self.agents = list(self.possible_agents)
        self._agent_ids = set(self.possible_agents)  # what RLlib's env pre-check looks for
        inner = self.aec_env.observation_space(self.possible_agents[0])["observation"]
        n = self.aec_env.action_space(self.possible_agents[0]).n
        obs_space = spaces.Dict({
            "observations": spaces.Box(-np.inf, np.inf, (int(np.prod(inner.shape)),), np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (n,), np.float32),
        })
        act_space = self.aec_env.action_space(self.possible_agents[0])
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.render_mode = self.aec_env.render_mode

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.aec_env.reset(seed=seed, options=options)
        agent = self.aec_env.agent_selection
        return {agent: self._observe(agent)}, {}

    def step(self, action_dict: dict) -> tuple[dict, dict, dict, dict, dict]:
        env = self.aec_env
        agent = env.agent_selection
        if env.terminations[agent]:
            raise RuntimeError("the episode has ended: call reset() first")
        if agent not in action_dict:
            raise KeyError(f"{agent} must act, but action_dict has only {sorted(action_dict)}")
        action, was_illegal = checked_action(action_dict[agent], env.game.legal_mask(),
                                             self.illegal_action, env.action_name)
        env.step(action)
        rewards = {a: float(env.rewards[a]) for a in self.possible_agents}
        infos: dict[str, dict] = {agent: {"illegal_action": True}} if was_illegal else {}
        if env.terminations[agent]:  # every seat terminates together
            terminateds = {a: True for a in self.possible_agents}
            terminateds["__all__"] = True
            for a in self.possible_agents:
                infos[a] = {**infos.get(a, {}), **env.infos[a]}
            return {}, rewards, terminateds, {"__all__": False}, infos
        nxt = env.agent_selection
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, infos

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.aec_env.observe(agent)
        return {"observations": obs["observation"].reshape(-1),
                "action_mask": obs["action_mask"].astype(np.float32)}

    def render(self) -> str | None:
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()
