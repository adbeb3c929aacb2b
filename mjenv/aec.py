"""The shared PettingZoo AEC adapter of every mjenv game (DESIGN §2: the env only adapts the engine).

:class:`MahjongAECEnv` turns a :class:`~mjenv.engine.core.GameCore` into an ``AECEnv``: four
agents ``player_0`` … ``player_3`` (seats), one flat ``Discrete(n)`` action space and one
``Dict(observation, action_mask)`` space created once, rewards that are the bean deltas the
engine returns (RULES.md B2), matches of several hands, ``render`` and replay logs. A game module
(``blood_battle_v0``, ``joy_mahjong_v0``) subclasses it and supplies:

- ``metadata`` with the env's name, and ``layout`` (the game's action layout);
- in ``__init__``: the rules object and an observer, then :meth:`_setup`;
- :meth:`_new_game` (the engine of hand ``hand_index``, its wall a pure function of (seed, hand))
  and, for logs, :meth:`_log_header` / :meth:`_log_records`.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import render as render_mod
from . import replay
from .describe import describe_observation
from .actions import ActionLayout
from .engine.core import N_SEATS, GameCore, IllegalActionError


RENDER_MODES = ["ansi", "human", "seat"]
"""``ansi``: the whole table as a str; ``human``: printed at every step; ``seat``: a str of what
the seat to act observes, decoded from its observation (:mod:`mjenv.describe`)."""
RENDER_FPS = 4  # for players of ``human`` output; the env itself never waits


def wrap(env: AECEnv) -> AECEnv:
    """The wrapped environment (order enforcing)."""
    return wrappers.OrderEnforcingWrapper(env)


class MahjongAECEnv(AECEnv):
    """One table of four seats playing ``match_hands`` hands of a game; see the game modules."""

    metadata: ClassVar[dict[str, Any]] = {"name": "mahjong", "render_modes": RENDER_MODES,
                                          "render_fps": RENDER_FPS, "is_parallelizable": False}
    layout: ClassVar[ActionLayout]
    script_keys: ClassVar[tuple[str, ...]] = ("wall", "dealer")
    """``reset(options=...)`` keys that script the first hand; other keys are ignored."""

    def _setup(self, observer: Any, render_mode: str | None, match_hands: int, tile_style: str,
               log_path: str | os.PathLike | None) -> None:
        """Check the common options and create the spaces (once: the same objects every call)."""
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if not (isinstance(match_hands, int) and match_hands >= 1):
            raise ValueError(f"match_hands must be an int >= 1, got {match_hands!r}")
        if tile_style not in ("zh", "unicode"):
            raise ValueError(f"tile_style must be 'zh' or 'unicode', got {tile_style!r}")
        self.render_mode, self.match_hands, self.tile_style = render_mode, match_hands, tile_style
        if log_path is not None and not isinstance(log_path, (str, os.PathLike)):
            raise TypeError(f"log_path must be a str or path, got {type(log_path).__name__} {log_path!r}")
        self.log_path = log_path
        self._log_actions: list[tuple[int, int, int, dict[str, Any]]] | None = None
        """(seat, action, events before, analysis) of each decision of the hand being logged."""
        self._log_note: dict[str, Any] = {}  # analysis of the next decision (log_decision)
        self.log_agents: list[str] | None = None
        """Agent names by seat, written into each logged hand's header when set (the arena sets it)."""
        self.possible_agents = [f"player_{i}" for i in range(N_SEATS)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self.observer = observer
        n = self.layout.n
        obs_box = spaces.Box(*observer.bounds(), dtype=np.float32)  # the planes' real ranges
        mask_box = spaces.Box(0, 1, (n,), np.int8)
        self._obs_space = spaces.Dict({"observation": obs_box, "action_mask": mask_box})
        self._act_space = spaces.Discrete(n)
        self.state_space = spaces.Box(*observer.bounds(state=True), dtype=np.float32)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self.np_random = np.random.default_rng()
        self._hand_seed: int | None = None
        self._script: dict[str, Any] = {}
        self.game: GameCore | None = None

    # ------------------------------------------------------------------ game hooks

    def _new_game(self, hand_index: int, previous: GameCore | None) -> GameCore:
        """The engine of hand ``hand_index`` (``previous``: the hand before it in a match)."""
        raise NotImplementedError

    def _log_header(self) -> dict[str, Any]:
        """The header line of the finished hand's replay log."""
        raise NotImplementedError

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def action_name(self, action: int) -> str:
        """Name of an action, e.g. ``discard 5m`` or ``pong``."""
        return self.layout.name(int(action))

    def action_name_zh(self, action: int) -> str:
        """Chinese name of an action, e.g. ``打 五万`` or ``碰``."""
        return self.layout.name_zh(int(action))

    # ------------------------------------------------------------------ AEC API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new hand (see ``script_keys`` for the options that script it)."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            self._hand_seed = int(seed)
        else:
            self._hand_seed = int(self.np_random.integers(2**63))
        # Other keys are ignored, as PettingZoo's api_test expects of reset options.
        self._script = {k: v for k, v in (options or {}).items() if k in self.script_keys}
        self.hand_index = 0
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.match_beans = [0] * N_SEATS
        self._deal(None)

    def _deal(self, previous: GameCore | None) -> None:
        """Start hand ``hand_index``."""
        self.game = self._new_game(self.hand_index, previous)
        self._log_actions = [] if self.log_path is not None else None
        self._log_note = {}
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of[agent]
        g = self.game
        mask = g.legal_mask().copy() if g.current_player == seat else np.zeros(self.layout.n, dtype=np.int8)
        return {"observation": self.observer.observe(g, seat), "action_mask": mask}

    def state(self) -> np.ndarray:
        return self.observer.state(self.game)

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act; legal: {self.game.legal_actions()}")
        if self._log_actions is None:
            delta = self.game.apply(action)  # raises IllegalActionError, state unchanged
        else:  # logging: remember where in the event stream the decision was taken
            seat, before = self.game.current_player, len(self.game.events)
            delta = self.game.apply(action)
            self._log_actions.append((seat, int(action), before, self._log_note))
            self._log_note = {}
        self._cumulative_rewards[agent] = 0
        for i, a in enumerate(self.possible_agents):  # what _accumulate_rewards does, inlined
            self.rewards[a] = delta[i]
            self._cumulative_rewards[a] += delta[i]
            self.match_beans[i] += delta[i]
        if self.game.over:
            if self._log_actions is not None:
                self._write_log()
            self.hand_index += 1
            if self.hand_index < self.match_hands:
                self._deal(self.game)
            else:
                for i, a in enumerate(self.possible_agents):
                    self.terminations[a] = True
                    self.infos[a] = {"beans": self.match_beans[i], "end_reason": self.game.end_reason}
        if not self.game.over:
            self.agent_selection = self.possible_agents[self.game.current_player]
        if self.render_mode == "human":
            self.render()

    def log_decision(self, probs: np.ndarray | None = None) -> None:
        """Record with the next action, in the replay log, the legal actions and ``probs`` (the
        policy's probability of every action, ``(n,)``; None when the agent exposes none)."""
        if self._log_actions is None:
            raise ValueError("log_decision needs a replay log: create the env with log_path=...")
        legal = self.game.legal_actions()
        self._log_note = {"legal": legal}
        if probs is not None:
            probs = np.asarray(probs, dtype=np.float64)
            if probs.shape != (self.layout.n,):
                raise ValueError(f"probs must have shape ({self.layout.n},), one per action, got {probs.shape}")
            self._log_note["probs"] = [round(float(probs[a]), 4) for a in legal]

    def _write_log(self) -> None:
        """Append the finished hand to ``log_path``."""
        header = self._log_header()
        if self.log_agents is not None:
            header["agents"] = list(self.log_agents)
        records = replay.hand_records(header, self.game.events, self._log_actions, self.layout)
        replay.append_hand(self.log_path, records)

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        if self.render_mode == "seat":
            return describe_observation(self.observe(self.agent_selection)["observation"], self.observer,
                                        self.tile_style)
        text = render_mod.render_table(self.game, self.tile_style)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
