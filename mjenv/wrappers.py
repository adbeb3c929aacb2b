"""Views of the mjenv games for RL toolkits that do not speak PettingZoo's AEC API.

:class:`SingleSeatEnv` is a ``gymnasium.Env``: one learning seat plays a hand (or a match) against
three opponent policies from :mod:`agents`, for single-agent libraries such as Stable-Baselines3
and sb3-contrib's ``MaskablePPO``. :func:`rllib_env` builds the multi-agent adapter for RLlib's
new API stack (:mod:`mjenv.rllib_env`, which imports ray). This module imports neither ray nor
torch (a checkpoint opponent loads torch when it is built). docs/integrations.md has a runnable
example per toolkit; ``gymnasium.make("mjenv/SingleSeat-v0", game=...)`` also builds the env.

=====================  ======================================================================
Make                   ``SingleSeatEnv(game="blood_battle"|"joy_mahjong", opponents="random",
                       seat=0, illegal_action="raise", **env_options)``
Observation space      the game's observation ``Box`` (``(73, 27)`` blood battle, ``(82, 34)``
                       Joy Mahjong, float32): the learning seat's view, the same encoder as the AEC env
Action space           ``Discrete(62)`` / ``Discrete(76)``: the game's flat action space
Action mask            ``env.action_masks()`` (int8, what sb3-contrib reads) and ``info["action_mask"]``
Reward                 the learning seat's bean delta (float) since its previous decision
Episode                one hand (``match_hands=N``: N hands); ``terminated`` at its end, never truncated
=====================  ======================================================================

**Opponents.** ``opponents`` is one spec for all three or a list of three, each a policy name
(``"random"``, ``"heuristic"``, ``"ppo"``), a trainer checkpoint path ending ``.pt``, a Policy
object (``act(observation, action_mask, rng)``) or a callable with that signature; names and
paths go through ``agents.load_policy(spec, game)``. Opponent ``i`` sits ``i + 1`` seats after
the learning seat (its right-hand neighbour first). They draw their randomness from one generator
seeded from ``reset``'s seed.

**Seat.** ``seat`` is a fixed seat 0–3 (``player_0`` … ``player_3`` of the AEC env) or
``"random"``: drawn per episode from the seeded ``np_random``. ``info["seat"]`` tells which.

**Reward.** Everything that reaches the learning seat's beans counts: its own wins and kongs, the
kong payments and wins of other seats between its turns (a 直杠 on its discard, a self-drawn win
that it pays), and the settlement at the end of the hand (the draw checks, the rake). A reward
that arrives after the seat's last decision lands in the final step (``terminated=True``). The
rewards of an episode therefore sum to the seat's bean total in the AEC env
(``info["beans"]`` at the end). Rarely an episode ends before the learning seat is ever asked (a
Joy Mahjong dealer's first discard won at once); ``reset`` then deals the next one from the seeded
stream and adds the skipped episode's beans to the first step's reward (``info["carried_reward"]``
at reset), so the sum of all rewards still equals the beans of every hand played.

**Illegal actions.** ``illegal_action`` goes to the AEC env underneath (the same option, the
same check). ``"raise"`` (the default): ``step`` with an action outside the mask raises
:class:`~mjenv.engine.core.IllegalActionError` naming the action, the legal ones and the way out,
and changes nothing. Checkers that step with ``action_space.sample()`` and no mask (gymnasium's
``check_env``, RLlib's env pre-check) need one of the others: ``"first_legal"`` plays the lowest
legal action instead; ``"terminate"`` ends the episode, the step's reward then holding the
penalty ``illegal_reward`` (default: minus the observation's bean scale, see the game modules).
Either way ``info["illegal_action"]`` is True for that step. The opponents' actions are always
checked strictly: an illegal one raises, naming the opponent.

**Determinism.** ``reset(seed=s)`` makes the episode a pure function of ``s`` and the actions:
with a fixed seat the deal is the AEC env's ``reset(seed=s)``.
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from .aec import RENDER_FPS, MahjongAECEnv, check_illegal_action_mode, checked_action
from .engine.core import N_SEATS

GAMES = {"blood_battle": "mjenv.blood_battle_v0", "joy_mahjong": "mjenv.joy_mahjong_v0"}
"""Game name -> env module (the names ``agents.load_policy`` takes as ``game``)."""

_MAX_SKIPPED = 1000  # episodes in a row that end before the learning seat acts: surely a bug


def make_raw_env(game: str, **options: Any) -> MahjongAECEnv:
    """The unwrapped AEC env of ``game`` (``blood_battle`` or ``joy_mahjong``) with ``options``."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; use one of {sorted(GAMES)}")
    return importlib.import_module(GAMES[game]).raw_env(**options)


def _load_opponent(spec: Any, game: str) -> Any:
    """A Policy from a name, a checkpoint path, a Policy object or a callable."""
    if hasattr(spec, "act") and not isinstance(spec, str):
        return spec  # a Policy object: used as it is, without importing agents
    from agents import load_policy  # lazily: agents depends on mjenv, not the other way

    return load_policy(spec, game)


class SingleSeatEnv(gymnasium.Env):
    """One learning seat against three opponent policies; see the module docstring."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": RENDER_FPS}

    def __init__(self, game: str = "blood_battle", opponents: Any = "random", seat: int | str = 0,
                 illegal_action: str = "raise", **env_options: Any) -> None:
        self.game = game
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.aec_env = make_raw_env(game, illegal_action=illegal_action, **env_options)
        """The AEC env underneath (``aec_env.game`` is the engine: wins, events, beans)."""
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != N_SEATS - 1:
                raise ValueError(f"opponents must be one spec or a list of {N_SEATS - 1}, got {len(opponents)}")
            specs: Sequence[Any] = opponents
        else:
            specs = [opponents] * (N_SEATS - 1)
        cache: dict[Any, Any] = {}  # one policy object per distinct name or path
        self.opponents = []
        for spec in specs:
            key = spec if isinstance(spec, str) else id(spec)
            if key not in cache:
                cache[key] = _load_opponent(spec, game)
            self.opponents.append(cache[key])
        if not (seat == "random" or (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < N_SEATS)):
            raise ValueError(f"seat must be 0-{N_SEATS - 1} or 'random', got {seat!r}")
        self.seat_option = seat
        agent0 = self.aec_env.possible_agents[0]
        self.observation_space = self.aec_env.observation_space(agent0)["observation"]
        self.action_space = self.aec_env.action_space(agent0)
        self.render_mode = self.aec_env.render_mode
        self.seat = seat if isinstance(seat, int) else 0
        self._opponent_at: dict[int, Any] = {}
        self._opp_rng = np.random.default_rng()
        self._done = True
        self._pending = 0.0  # learning-seat beans not yet returned as a reward

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal an episode and play the opponents until the learning seat must act.

        ``options`` go to the AEC env's ``reset`` (``wall``, ``dealer``… script the first hand).
        """
        super().reset(seed=seed)
        rng = self.np_random
        self.seat = int(rng.integers(N_SEATS)) if self.seat_option == "random" else self.seat_option
        self._agent = self.aec_env.possible_agents[self.seat]
        self._opponent_at = {(self.seat + 1 + i) % N_SEATS: p for i, p in enumerate(self.opponents)}
        self._opp_rng = np.random.default_rng(rng.integers(2**63))
        deal_seed = seed if seed is not None else int(rng.integers(2**63))
        carried, skipped = 0.0, 0
        while True:
            self.aec_env.reset(seed=deal_seed, options=options)
            self._pending = 0.0
            if self._play_opponents():
                break
            carried += self._pending
            skipped += 1
            if skipped >= _MAX_SKIPPED:
                raise RuntimeError(f"{skipped} episodes in a row ended before seat {self.seat} was asked to act")
            deal_seed, options = int(rng.integers(2**63)), None
        self._pending += carried
        self._done = False
        info = self._info()
        if skipped:
            info["carried_reward"], info["skipped_episodes"] = carried, skipped
        return self._observe(), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learning seat's ``action``, then the opponents until it must act again or the
        episode ends."""
        if self._done:
            raise RuntimeError("the episode has ended (or reset was never called): call reset() first")
        self._step_aec(action)  # the AEC env applies illegal_action
        asked = self._play_opponents()
        reward, self._pending = float(self._pending), 0.0
        self._done = not asked
        info = self._info()
        aec_info = self.aec_env.infos[self._agent]
        if aec_info.get("illegal_action"):
            info["illegal_action"] = True
        if self._done:
            info["beans"], info["end_reason"] = aec_info["beans"], aec_info["end_reason"]
        return self._observe(), reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """The learning seat's int8 mask (all zeros once the episode has ended)."""
        if self._done or self.aec_env.game is None:
            return np.zeros(self.action_space.n, dtype=np.int8)
        return self.aec_env.game.legal_mask().copy()

    def action_name(self, action: int) -> str:
        """Name of an action, e.g. ``discard 5m``."""
        return self.aec_env.action_name(action)

    def render(self) -> str | None:
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()

    # ------------------------------------------------------------------ internals

    def _step_aec(self, action: Any) -> None:
        """One AEC step; the learning seat's share of its bean deltas goes to ``_pending``."""
        self.aec_env.step(action)
        self._pending += self.aec_env.rewards[self._agent]

    def _play_opponents(self) -> bool:
        """Step opponents until the learning seat must act (True) or the episode ends (False)."""
        env = self.aec_env
        while not env.terminations[self._agent]:
            seat = env.game.current_player
            if seat == self.seat:
                return True
            obs = env.observe(env.agent_selection)
            policy = self._opponent_at[seat]
            action = policy.act(obs["observation"], obs["action_mask"], self._opp_rng)
            # Checked here, strictly: the env's illegal_action mode is for the learning seat only.
            action, _ = checked_action(action, obs["action_mask"], "raise", env.action_name,
                                       who=f"opponent {getattr(policy, 'name', policy)!r} at seat {seat}",
                                       way_out="an opponent policy must choose from the mask it is given")
            self._step_aec(action)
        return False

    def _observe(self) -> np.ndarray:
        return self.aec_env.observer.observe(self.aec_env.game, self.seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.seat}


def rllib_env(game: str = "blood_battle", **options: Any):
    """RLlib's multi-agent view of ``game`` (imports ray): see :class:`mjenv.rllib_env.MahjongMultiAgentEnv`."""
    from .rllib_env import MahjongMultiAgentEnv

    return MahjongMultiAgentEnv(game=game, **options)
