"""RLlib (new API stack) on the mjenv games: ready PPO configs on the compiled engine, and the
AEC-based multi-agent env they are measured against. Importing this module imports ray and torch;
``import mjenv`` never imports it.

``ppo_config(game, multi_agent=False, num_envs_per_env_runner=64, **options)`` returns a
``PPOConfig`` whose env runners sample the compiled engine (:mod:`mjenv.vector`) with
:class:`MaskedPPOModule`; refine it with the usual calls (``.training(...)``,
``.env_runners(...)``, ``.rl_module(...)``) and ``build_algo()``. ``docs/integrations/rllib.md``
is the guide.

=====================  ======================================================================
Single seat            ``ppo_config(game)``: RLlib's ``SingleAgentEnvRunner`` makes the
                       registered id (``mjenv/BloodBattle-v0``, ``mjenv/JoyMahjong-v0``) with
                       ``gym_env_vectorize_mode="vector_entry_point"``: a
                       :class:`~mjenv.integrations.gymnasium.SingleSeatVectorEnv` of
                       ``num_envs_per_env_runner`` tables, ``mask_in_observation=True``, NEXT_STEP
                       autoreset; ``options`` go to it (``opponents``, ``seat``, ``preset`` ...).
                       An episode's return is the learning seat's beans, its length the
                       seat's decisions
Self-play              ``ppo_config(game, multi_agent=True)``: :class:`SelfPlayEnvRunner` samples a
                       :class:`SelfPlayMultiAgentVectorEnv` (one ``SelfPlayVectorEnv`` of
                       ``num_envs_per_env_runner`` tables); the four seats ``player_0`` …
                       ``player_3`` share the module ``"shared"``; ``options`` go to the env
                       (``preset`` / ``room``, ``match_hands``, rule fields ...). An episode's
                       per-agent returns are the seats' beans, its length the decisions of the hand
Observation            ``Dict(observations=Box((planes * width,)), action_mask=Box(0, 1, (A,),
                       float32))``: the seat's planes flattened (float32, or uint8 with
                       ``observation_dtype="uint8"``) and its legal actions; the layout of RLlib's
                       ``ActionMaskingTorchRLModule`` example, which also runs on these envs
Module                 :class:`MaskedPPOModule`: an MLP (``model_config``: ``fcnet_hiddens``,
                       ``fcnet_activation``, ``vf_share_layers``) with policy and value heads;
                       illegal logits set to the float minimum
Reference (AEC)        :class:`MahjongMultiAgentEnv`: one table on the readable engine, the seats as
                       agents, for RLlib's stock ``MultiAgentEnvRunner``
=====================  ======================================================================

**Self-play on the compiled engine.** RLlib's ``MultiAgentEnvRunner`` vectorises a multi-agent
env as N separate env objects stepped in a Python loop. :class:`SelfPlayMultiAgentVectorEnv`
is instead one RLlib ``VectorMultiAgentEnv`` over one
:class:`~mjenv.vector.SelfPlayVectorEnv` (``final_observations=True``): a step takes the one
acting seat's action at each table (``[{agent: action}] * N``) and returns, per table, the next
seat's observation with the beans credited to it since its previous decision. It follows
RLlib's next-step autoreset: the step that ends a hand returns every seat's last view (all-zero
mask) with its last beans, ``terminateds`` for all four and ``"__all__"``; the next step
ignores that table's action and returns the first decision of its next hand. Beans a seat
receives before its first decision of an episode are paid with its next observation (RLlib leaves a
reward that comes with an agent's first observation out of its return). :class:`SelfPlayEnvRunner`
is a ``MultiAgentEnvRunner`` whose ``make_env`` builds that env from ``config.env_config``
(``game`` and options); set it with ``config.env_runners(env_runner_cls=SelfPlayEnvRunner)``, as
``ppo_config`` does. ``config.env`` is then :class:`MahjongMultiAgentEnv` (the same game on the
AEC engine, what the stock runner would sample).

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
episode in RLlib, so its beans of that hand do not appear there (in every env of this module).

**Illegal actions.** ``illegal_action`` (``"raise"``, ``"first_legal"``, ``"terminate"``) and
``illegal_reward`` go to the AEC env (see :mod:`mjenv.aec`); a replaced or penalised action sets
``info["illegal_action"]`` for that seat. RLlib's env pre-check steps one action sampled without
the mask: pass ``disable_env_checking=True`` to ``config.environment(...)``, or one of the other
modes here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.utils import make_callback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.models.utils import get_activation_fn
from ray.rllib.utils.torch_utils import FLOAT_MIN

from .. import games
from ..vector import SelfPlayVectorEnv
from ..vector.crediting import Ledger

__all__ = ["MahjongMultiAgentEnv", "MaskedPPOModule", "SelfPlayEnvRunner", "SelfPlayMultiAgentVectorEnv",
           "ppo_config", "shared_module"]

AGENTS = tuple(f"player_{seat}" for seat in range(4))
"""The agent of each seat, in every env of this module."""
SHARED_MODULE = "shared"
"""The module id every seat maps to in the self-play config."""


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
        self._ledger = Ledger(1)  # each seat's bean changes not yet returned

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.aec_env.reset(seed=seed, options=options)
        self._ledger.clear()
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
        self._ledger.receive(np.array([[env.rewards[a] for a in self.possible_agents]], dtype=np.float64))
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
        seats = np.array([self.possible_agents.index(a) for a in observed], dtype=np.int64)
        paid = self._ledger.pay(np.zeros(len(seats), dtype=np.int64), seats)
        return {a: float(beans) for a, beans in zip(observed, paid)}

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.aec_env.observe(agent)
        return {"observations": obs["observation"].reshape(-1),
                "action_mask": obs["action_mask"].astype(np.float32)}

    def render(self) -> str | None:
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()


# ---------------------------------------------------------------- the masking module


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO's policy and value networks over ``Dict(observations, action_mask)``: an MLP over the
    observations (flattened, as float32), the logits of illegal actions set to the float minimum.
    ``model_config``: ``fcnet_hiddens`` (default [256, 256]), ``fcnet_activation`` ("tanh"),
    ``vf_share_layers`` (True: one trunk for both heads)."""

    def setup(self) -> None:
        space = self.observation_space
        if not (isinstance(space, spaces.Dict) and set(space.spaces) == {"observations", "action_mask"}):
            raise ValueError("MaskedPPOModule needs a Dict observation space with the keys 'observations' and "
                             f"'action_mask', got {space}")
        config = self.model_config or {}
        hidden = list(config.get("fcnet_hiddens", [256, 256]))
        activation = config.get("fcnet_activation", "tanh")
        width = int(np.prod(space["observations"].shape))
        self._trunk = _mlp(width, hidden, activation)
        self._vf_trunk = self._trunk if config.get("vf_share_layers", True) else _mlp(width, hidden, activation)
        features = hidden[-1] if hidden else width
        self._pi = torch.nn.Linear(features, self.action_space.n)
        self._vf = torch.nn.Linear(features, 1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: self._logits(self._trunk(_flat(obs)), obs["action_mask"])}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        features = self._trunk(_flat(obs))
        return {Columns.ACTION_DIST_INPUTS: self._logits(features, obs["action_mask"]),
                Columns.EMBEDDINGS: features if self._vf_trunk is self._trunk else None}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """The value head (PPO's critic) on the observations, or on the shared trunk's features."""
        if embeddings is None:
            embeddings = self._vf_trunk(_flat(batch[Columns.OBS]))
        return self._vf(embeddings).squeeze(-1)

    def _logits(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self._pi(features).masked_fill(mask <= 0, FLOAT_MIN)


def _mlp(width: int, hidden: list[int], activation: str) -> torch.nn.Module:
    """Linear layers of the ``hidden`` sizes, each followed by ``activation``."""
    act = get_activation_fn(activation, framework="torch")
    layers: list[torch.nn.Module] = []
    for size in hidden:
        layers += [torch.nn.Linear(width, size), *([act()] if act else [])]
        width = size
    return torch.nn.Sequential(*layers)


def _flat(obs: dict[str, torch.Tensor]) -> torch.Tensor:
    """The observations of a batch as float32 rows."""
    x = obs["observations"]
    return x.reshape(x.shape[0], -1).float()


def _obs_space(planes: spaces.Box, n_actions: int) -> spaces.Dict:
    """One seat's observation: its planes flattened and its float32 mask."""
    return spaces.Dict({"observations": spaces.Box(planes.low.reshape(-1), planes.high.reshape(-1), dtype=planes.dtype),
                        "action_mask": spaces.Box(0.0, 1.0, (n_actions,), np.float32)})


# ---------------------------------------------------------------- self-play on the compiled engine


class _TableSpaces(MultiAgentEnv):
    """What RLlib reads of one table (``envs[i]``): the agents and their spaces. The tables are
    stepped together by the vector env, never one by one."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        super().__init__()
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {a: observation_space for a in AGENTS}
        self.action_spaces = {a: action_space for a in AGENTS}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        raise NotImplementedError("the tables of a SelfPlayMultiAgentVectorEnv are stepped together: "
                                  "call the vector env's reset()")

    def step(self, action_dict: dict) -> tuple[dict, dict, dict, dict, dict]:
        raise NotImplementedError("the tables of a SelfPlayMultiAgentVectorEnv are stepped together: "
                                  "call the vector env's step()")


class SelfPlayMultiAgentVectorEnv(VectorMultiAgentEnv):
    """``num_envs`` tables of self-play as one RLlib ``VectorMultiAgentEnv``, next-step autoreset;
    see the module docstring. ``options`` go to :class:`~mjenv.vector.SelfPlayVectorEnv`."""

    metadata = {"autoreset_mode": "next_step"}

    def __init__(self, game: str = "blood_battle", num_envs: int = 1, *, num_threads: int = 1,
                 **options: Any) -> None:
        super().__init__()
        if "final_observations" in options:
            raise ValueError("SelfPlayMultiAgentVectorEnv takes no final_observations option: every seat "
                             "always gets a last observation")
        self.selfplay = SelfPlayVectorEnv(game, num_envs, num_threads=num_threads, final_observations=True,
                                          **options)
        self.game, self.num_envs = self.selfplay.game, self.selfplay.num_envs
        n = self.num_envs
        self.possible_agents = list(AGENTS)
        obs_space = _obs_space(self.selfplay.single_observation_space, self.selfplay.single_action_space.n)
        self.single_observation_spaces = {a: obs_space for a in AGENTS}
        self.single_action_spaces = {a: self.selfplay.single_action_space for a in AGENTS}
        self.single_observation_space = spaces.Dict(self.single_observation_spaces)
        self.single_action_space = spaces.Dict(self.single_action_spaces)
        self.observation_space, self.action_space = self.single_observation_space, self.single_action_space
        self.envs = [_TableSpaces(obs_space, self.selfplay.single_action_space)] * n  # RLlib reads spaces there
        self._no_mask = np.zeros(self.selfplay.single_action_space.n, dtype=np.float32)
        self._no_mask.flags.writeable = False  # the last views' mask, shared
        self._seat = np.zeros(n, dtype=np.int64)  # each table's seat to act
        self._waiting = np.zeros(n, dtype=np.bool_)  # the hand ended last step: the next one starts now
        self._asked = np.zeros((n, 4), dtype=np.bool_)  # the seat decided in the table's episode
        self._held = Ledger(n)  # beans of a seat's first decision, paid with its next
        self._rows = np.arange(n)

    def reset(self, *, seed: Any = None, options: dict | None = None) -> tuple[list[dict], list[dict]]:
        """Deal every table (``SelfPlayVectorEnv``'s seeding); each returns its first seat's observation."""
        super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
        obs, info = self.selfplay.reset(seed=seed, options=options)
        self._waiting[:] = False
        self._asked[:] = False
        self._held.clear()
        self._seat = info["seat"]
        self._asked[self._rows, self._seat] = True
        flat, masks = obs.reshape(self.num_envs, -1), info["action_mask"].astype(np.float32)
        return ([{AGENTS[s]: {"observations": flat[i], "action_mask": masks[i]}} for i, s in enumerate(self._seat)],
                [{} for _ in range(self.num_envs)])

    def step(self, actions: list[dict]) -> tuple[list[dict], list[dict], list[dict], list[dict], list[dict]]:
        """Each table's ``{agent: action}`` for its seat to act (ignored at a table whose hand ended
        at the previous step); per table the dicts of RLlib's ``MultiAgentEnv.step``."""
        n = self.num_envs
        if len(actions) != n:
            raise ValueError(f"actions must hold one dict per table ({n}), got {len(actions)}")
        playing = ~self._waiting
        acts = np.zeros(n, dtype=np.int64)
        for i in np.flatnonzero(playing):
            agent = AGENTS[self._seat[i]]
            if agent not in actions[i]:
                raise KeyError(f"table {i}: {agent} must act, but its actions hold only {sorted(actions[i])}")
            acts[i] = actions[i][agent]
        acting = self._seat.copy()
        obs, credited, terminated, _, info = self.selfplay.step(acts, playing)
        final = self._finish(terminated, info)
        seat = info["seat"]
        rows, seats = self._rows[playing], seat[playing]  # a waiting table's seat keeps what it holds
        first = ~self._asked[rows, seats]  # a seat's first decision: its reward waits for the next one
        reward = np.zeros(n, dtype=np.float64)
        reward[rows] = np.where(first, 0.0, credited[rows] + self._held.pay(rows, seats))
        self._held.hold(rows[first], seats[first], credited[rows[first]])
        self._asked[rows, seats] = True
        flat, masks = obs.reshape(n, -1), info["action_mask"].astype(np.float32)
        illegal = info.get("illegal_action")
        out: tuple[list[dict], ...] = ([], [], [], [], [])
        for i in range(n):
            if terminated[i]:
                table = final[i]
            elif self._waiting[i]:  # the next hand's first decision, as a reset of the table
                table = ({AGENTS[seat[i]]: {"observations": flat[i], "action_mask": masks[i]}},
                         dict.fromkeys(AGENTS, 0.0), _flags(False), _flags(False), {})
            else:
                agent = AGENTS[seat[i]]
                table = ({agent: {"observations": flat[i], "action_mask": masks[i]}}, {agent: float(reward[i])},
                         {"__all__": False}, {"__all__": False}, {})
            if illegal is not None and illegal[i]:
                table[4].setdefault(AGENTS[acting[i]], {})["illegal_action"] = True
            for column, value in zip(out, table):
                column.append(value)
        self._waiting = terminated.copy()
        self._seat = seat
        return out

    def _finish(self, terminated: np.ndarray, info: dict[str, Any]) -> dict[int, tuple]:
        """The step's dicts of the tables whose episode ended: every seat's last view and beans."""
        final: dict[int, tuple] = {}
        ended = np.flatnonzero(terminated)
        for i, held in zip(ended, self._held.settle(ended)):
            views = info["final_obs"][i].reshape(4, -1)
            paid = info["final_rewards"][i] + held
            final[i] = ({a: {"observations": views[s], "action_mask": self._no_mask} for s, a in enumerate(AGENTS)},
                        {a: float(paid[s]) for s, a in enumerate(AGENTS)},
                        _flags(True), _flags(False),
                        {a: {"beans": int(info["beans"][i, s]), "end_reason": str(info["end_reason"][i])}
                         for s, a in enumerate(AGENTS)})
        self._asked[terminated] = False
        return final

    def close_extras(self, **kwargs: Any) -> None:
        if hasattr(self, "selfplay"):  # RLlib closes in __del__, also after a failed __init__
            self.selfplay.close()


def _flags(value: bool) -> dict[str, bool]:
    """``terminateds`` / ``truncateds`` of a table: every agent and ``"__all__"`` set to ``value``."""
    return {**dict.fromkeys(AGENTS, value), "__all__": value}


class SelfPlayEnvRunner(MultiAgentEnvRunner):
    """RLlib's ``MultiAgentEnvRunner`` sampling a :class:`SelfPlayMultiAgentVectorEnv` of
    ``num_envs_per_env_runner`` tables, made from ``config.env_config`` (``game`` and options)."""

    def make_env(self) -> None:
        if self.config.env is not MahjongMultiAgentEnv:
            raise ValueError("SelfPlayEnvRunner plays mjenv's games: configure them with config.environment("
                             f"MahjongMultiAgentEnv, env_config={{'game': ...}}), got env={self.config.env!r}")
        if self.env is not None:
            self.env.close()
        options = dict(self.config.env_config)
        game = options.pop("game", "blood_battle")
        self.env = SelfPlayMultiAgentVectorEnv(game, self.config.num_envs_per_env_runner, **options)
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        make_callback("on_environment_created", callbacks_objects=self._callbacks,
                      callbacks_functions=self.config.callbacks_on_environment_created,
                      kwargs=dict(env_runner=self, metrics_logger=self.metrics, env=self.env,
                                  env_context=self.config.env_config))


# ---------------------------------------------------------------- the configs


def shared_module(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """The self-play policy mapping: every seat plays the one module ``"shared"``."""
    return SHARED_MODULE


_SET_BY_CONFIG = {False: ("autoreset_mode", "mask_in_observation"), True: ("final_observations",)}


def ppo_config(game: str = "blood_battle", *, multi_agent: bool = False, num_envs_per_env_runner: int = 64,
               **options: Any) -> PPOConfig:
    """A ``PPOConfig`` (new API stack) sampling ``game`` on the compiled engine with
    :class:`MaskedPPOModule`: one learning seat per table (``options`` for ``SingleSeatVectorEnv``),
    or with ``multi_agent=True`` self-play of all four seats sharing one module (``options`` for
    ``SelfPlayVectorEnv``). See the module docstring."""
    name = games.game(game).name
    taken = [key for key in _SET_BY_CONFIG[bool(multi_agent)] if key in options]
    if taken:
        raise ValueError(f"ppo_config sets {taken} itself (RLlib needs them so); leave them out")
    if (not isinstance(num_envs_per_env_runner, int) or isinstance(num_envs_per_env_runner, bool)
            or num_envs_per_env_runner < 1):
        raise ValueError(f"num_envs_per_env_runner must be an int >= 1, got {num_envs_per_env_runner!r}")
    module = RLModuleSpec(module_class=MaskedPPOModule)
    # Episodes stay lists: RLlib 2.60 numpy'izes every done episode again at each vector step.
    config = PPOConfig().env_runners(episodes_to_numpy=False)
    if multi_agent:
        return (config.environment(MahjongMultiAgentEnv, env_config={"game": name, **options},
                                   disable_env_checking=True)
                .env_runners(env_runner_cls=SelfPlayEnvRunner, num_envs_per_env_runner=num_envs_per_env_runner)
                .multi_agent(policies={SHARED_MODULE}, policy_mapping_fn=shared_module)
                .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_MODULE: module})))
    return (config.environment(games.game(name).gym_id, env_config={**options, "mask_in_observation": True})
            .env_runners(num_envs_per_env_runner=num_envs_per_env_runner,
                         gym_env_vectorize_mode="vector_entry_point")
            .rl_module(rl_module_spec=module))
