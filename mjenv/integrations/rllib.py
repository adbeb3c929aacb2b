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
Rewards                a seat's bean changes since its previous observation, paid with its next
                       observation (never a reward without one, see below)
Episode end            every seat gets a final observation (all-zero mask) with its last
                       reward; ``terminateds`` holds every seat and ``"__all__"``; nothing is
                       truncated
=====================  ======================================================================

**Why rewards travel with observations.** RLlib's ``MultiAgentEpisode`` keeps a reward that
reaches an agent without an observation "hanging" until that agent's next observation. When an
``EnvRunner`` cuts an episode into sample chunks (``rollout_fragment_length``) and the hand ends
without a last observation for a seat, that seat's hanging rewards never reach its returns (RLlib
2.60). So the env holds each seat's bean changes until it observes, and ends every hand with an
observation for all four seats: each finished episode's per-agent returns are the seats' beans.
A seat that is never asked during a hand (a Joy Mahjong win before its first turn) has no agent
episode in RLlib, so its beans of that hand do not appear there.

**Illegal actions.** ``illegal_action`` (``"raise"``, ``"first_legal"``, ``"terminate"``) and
``illegal_reward`` go to the AEC env (see :mod:`mjenv.aec`); a replaced or penalised action sets
``info["illegal_action"]`` for that seat. RLlib's env pre-check steps one action sampled without
the mask: pass ``disable_env_checking=True`` to ``config.environment(...)``, or one of the other
modes here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from .. import games


class MahjongMultiAgentEnv(MultiAgentEnv):
    """The four seats of one mjenv table as RLlib agents; see the module docstring."""

    def __init__(self, config: dict | None = None, **options: Any) -> None:
        super().__init__()
        options = {**(config or {}), **options}
        game = options.pop("game", "blood_battle")
        self.aec_env = games.game(game).raw_env(**options)
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
        self._unpaid = dict.fromkeys(self.possible_agents, 0.0)  # bean changes not yet returned

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.aec_env.reset(seed=seed, options=options)
        self._unpaid = dict.fromkeys(self.possible_agents, 0.0)
        agent = self.aec_env.agent_selection
        return {agent: self._observe(agent)}, {}

    def step(self, action_dict: dict) -> tuple[dict, dict, dict, dict, dict]:
        env = self.aec_env
        agent = env.agent_selection
        if env.terminations[agent]:
            raise RuntimeError("the episode has ended: call reset() first")
        if agent not in action_dict:
            raise KeyError(f"{agent} must act, but action_dict has only {sorted(action_dict)}")
        env.step(action_dict[agent])  # the AEC env checks the action (illegal_action)
        for a in self.possible_agents:
            self._unpaid[a] += env.rewards[a]
        infos: dict[str, dict] = {agent: {"illegal_action": True}} if env.infos[agent].get("illegal_action") else {}
        if env.terminations[agent]:  # every seat terminates together
            terminateds = {a: True for a in self.possible_agents}
            terminateds["__all__"] = True
            for a in self.possible_agents:
                infos[a] = {**infos.get(a, {}), **env.infos[a]}
            obs = {a: self._observe(a) for a in self.possible_agents}
            return obs, self._pay(obs), terminateds, {"__all__": False}, infos
        nxt = env.agent_selection
        obs = {nxt: self._observe(nxt)}
        return obs, self._pay(obs), {"__all__": False}, {"__all__": False}, infos

    def _pay(self, observed: dict) -> dict[str, float]:
        """The rewards of the observed seats: their bean changes since their previous observation."""
        rewards = {a: float(self._unpaid[a]) for a in observed}
        for a in observed:
            self._unpaid[a] = 0.0
        return rewards

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.aec_env.observe(agent)
        return {"observations": obs["observation"].reshape(-1),
                "action_mask": obs["action_mask"].astype(np.float32)}

    def render(self) -> str | None:
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()
