"""The shared PettingZoo AEC adapter of every mjenv game (the env only adapts the engine:
docs/layout.md).

:class:`MahjongAECEnv` turns a :class:`~mjenv.engine.core.GameCore` into an ``AECEnv``: four
agents ``player_0`` … ``player_3`` (seats), one flat ``Discrete(n)`` action space and one
``Dict(observation, action_mask)`` space created once, rewards that are the bean deltas the
engine returns (docs/rules-blood-battle.md#B2), matches of several hands, ``render`` and replay logs.
A game module
(``blood_battle_v0``, ``joy_mahjong_v0``) subclasses it and supplies:

- ``metadata`` with the env's name, and ``layout`` (the game's action layout; an instance sets
  its own, with ESCAPE when the rules have ``escape``);
- in ``__init__``: :meth:`_setup` with the game's checked spec (:func:`mjenv.spec.spec`: rules,
  layout, observer, match settings) and the options of this face (render, logs, ``backend``);
- for logs, :meth:`_log_header` (the hands themselves are dealt by the spec's
  :meth:`~mjenv.spec.GameSpec.new_game`, its wall a pure function of (seed, hand)).

With ``backend="compiled"`` the table is one table of the compiled engine
(:class:`mjenv.compiled_table.CompiledTable`) instead of the readable game: the same steps,
observations, rewards and infos, faster.

:func:`checked_action` is the one check of an action against the mask under the
``illegal_action`` modes; the toolkit views of :mod:`mjenv.integrations` pass the option through
to this env.
"""

from __future__ import annotations

import copy
import operator
import os
from collections.abc import Callable, Mapping
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
from .spec import ILLEGAL_ACTION_MODES, GameSpec, check_illegal_action_mode

__all__ = ["ILLEGAL_ACTION_MODES", "MASK_WAY_OUT", "MahjongAECEnv", "check_illegal_action_mode", "checked_action",
           "wrap"]

MASK_WAY_OUT = ("choose an action from the action mask, or make the env with "
                "illegal_action='first_legal' or 'terminate' for a sampler that ignores the mask")


def checked_action(action: Any, mask: np.ndarray, mode: str, describe: Callable[[int], str],
                   who: str = "", way_out: str = MASK_WAY_OUT) -> tuple[int, bool]:
    """``(action, was_illegal)``: a legal ``action`` as an int, unflagged. An illegal one raises
    IllegalActionError (mode ``raise``, the message naming ``who``, the legal actions and
    ``way_out``), becomes the lowest legal action (``first_legal``) or comes back as it is
    (``terminate``: the caller ends the episode). A non-integer, a bool included, is a TypeError."""
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"an action must be an integer action id, not a bool ({action!r})")
    try:
        a = operator.index(action)
    except TypeError:
        raise TypeError(f"an action must be an integer action id, got {type(action).__name__} {action!r}") from None
    if 0 <= a < mask.size and mask[a]:
        return a, False
    legal = np.flatnonzero(mask)
    if mode == "first_legal":
        return int(legal[0]), True
    if mode == "terminate":
        return a, True
    name = describe(a) if 0 <= a < mask.size else "outside the action space"
    legal_text = ", ".join(f"{int(b)} ({describe(int(b))})" for b in legal)
    raise IllegalActionError(f"illegal action {a} ({name}){f' for {who}' if who else ''}; "
                             f"legal: {legal_text}; {way_out}")


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

    def _setup(self, spec: GameSpec, render_mode: str | None, tile_style: str,
               log_path: str | os.PathLike | None, backend: str = "reference") -> None:
        """Take the checked game ``spec`` (:mod:`mjenv.spec`), check the options of a rendered,
        logged table and the engine (``backend``), and create the spaces (once: the same objects
        every call)."""
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if tile_style not in ("zh", "unicode"):
            raise ValueError(f"tile_style must be 'zh' or 'unicode', got {tile_style!r}")
        self.backend = backend
        self._compiled: Any = None  # the compiled engine's table (backend="compiled")
        if backend != "reference":
            from .compiled_table import CompiledTable, check_backend  # numba: only when asked for

            self.backend = check_backend(backend)
            for name, value, ok in (("render_mode", render_mode, (None, "seat")), ("log_path", log_path, (None,))):
                if value not in ok:
                    raise ValueError(f"{name}={value!r} needs the readable engine's table (drawn as text, logged): "
                                     f"make the env with backend='reference' (the default) to use it")
            self._compiled = CompiledTable(spec)
        self.spec = spec
        self.rules, self.preset, self.layout, observer = spec.rules, spec.preset, spec.layout, spec.observer
        self.illegal_action, self.illegal_reward = spec.illegal_action, spec.illegal_reward
        self.observation_dtype, self.match_hands = spec.observation_dtype, spec.match_hands
        self.render_mode, self.tile_style = render_mode, tile_style
        self.log_path = _checked_log_path(log_path)
        self._log_actions: list[tuple[int, int, int, dict[str, Any]]] | None = None
        """(seat, action, events before, analysis) of each decision of the hand being logged."""
        self._log_note: dict[str, Any] = {}  # analysis of the next decision (log_decision)
        self.log_agents: list[str] | None = None
        """Agent names by seat, written into each logged hand's header when set (the arena sets it)."""
        self.possible_agents = [f"player_{i}" for i in range(N_SEATS)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self.observer = observer
        self.script_keys = spec.script_keys
        self._obs_space = compact_repr(spaces.Dict({"observation": spec.observation_box(),
                                                    "action_mask": spaces.Box(0, 1, (self.layout.n,), np.int8)}))
        self._act_space = spaces.Discrete(self.layout.n)
        self.state_space = compact_repr(spec.state_box())
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self.np_random = np.random.default_rng()
        self._hand_seed: int | None = None
        self._script: dict[str, Any] = {}  # the checked reset options of the first hand (log header)
        self.game: GameCore | None = None

    # ------------------------------------------------------------------ game hooks

    def _log_header(self) -> dict[str, Any]:
        """The header line of the finished hand's replay log."""
        raise NotImplementedError

    def _deal(self, seed: int, hand_index: int, previous: Any, script: dict[str, Any]) -> Any:
        """Hand ``hand_index`` of ``seed`` on the env's engine (``previous``: the hand before it in
        a match; ``script``: the checked reset options of the first hand): a new readable game
        (:meth:`mjenv.spec.GameSpec.new_game`), or the compiled table dealt again. A bad script
        raises before anything changes."""
        if self._compiled is None:
            return self.spec.new_game(seed, hand_index, previous, script)
        return self._compiled.deal(seed, hand_index, script)

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
        """Deal a new hand (see ``script_keys`` for the options that script it). Bad arguments
        raise before anything changes: the env stays as it was."""
        script = self._checked_script(options)
        if seed is None:  # the next seed of the stream, drawn from a copy until the deal succeeds
            rng = copy.deepcopy(self.np_random)
            hand_seed = int(rng.integers(2**63))
        else:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise TypeError(f"seed must be None or an int >= 0, got {type(seed).__name__} {seed!r}")
            hand_seed = int(seed)
            rng = np.random.default_rng(hand_seed)
        game = self._deal(hand_seed, 0, None, script)  # a bad scripted wall raises here
        self.np_random, self._hand_seed, self._script = rng, hand_seed, script
        self.hand_index = 0
        self.match_end = ""
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.match_beans = [0] * N_SEATS
        self._start_hand(game)

    def _checked_script(self, options: Any) -> dict[str, Any]:
        """The ``script_keys`` of ``options`` after checking them; other keys are ignored, as
        PettingZoo's api_test expects of reset options."""
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict (e.g. {{'dealer': 0}}) or None, "
                            f"got {type(options).__name__} {options!r}")
        script = {k: options[k] for k in self.script_keys if k in options}
        for key in ("dealer", "prevailing_wind"):
            if key in script:
                v = script[key]
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < N_SEATS:
                    raise ValueError(f"reset option {key!r} must be an int 0-3, got {type(v).__name__} {v!r}")
                script[key] = int(v)
        if "wall" in script and not isinstance(script["wall"], (list, tuple, np.ndarray)):
            raise TypeError(f"reset option 'wall' must be a list of tile kinds, got {type(script['wall']).__name__}")
        return script

    def _start_hand(self, game: GameCore) -> None:
        """Make ``game`` the hand being played."""
        self.game = game
        self._log_actions = [] if self.log_path is not None else None
        self._log_note = {}
        self.agent_selection = self.possible_agents[game.current_player]

    def _require_reset(self, method: str) -> None:
        """A clear error for ``method`` called before the first ``reset``."""
        if self.game is None:
            raise RuntimeError(f"{method}() was called before reset(): call reset() first")

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._require_reset("observe")
        seat = self._seat_of[agent]
        g = self.game
        live = g.current_player == seat and not self.terminations.get(agent, True)  # removed: dead
        mask = g.legal_mask().copy() if live else np.zeros(self.layout.n, dtype=np.int8)
        return {"observation": self.observe_seat(seat), "action_mask": mask}

    def observe_seat(self, seat: int) -> np.ndarray:
        """The observation planes of ``seat`` (0-3) now, in the env's ``observation_dtype``."""
        planes = self._planes(seat)
        return planes if self.observation_dtype == "float32" else self.observer.to_uint8(planes)

    def _planes(self, seat: int) -> np.ndarray:
        """The float32 observation planes of ``seat`` now, from the env's engine."""
        return self.observer.observe(self.game, seat) if self._compiled is None else self.game.observe(seat)

    def state(self) -> np.ndarray:
        self._require_reset("state")
        return self.observer.state(self.game) if self._compiled is None else self.game.state()

    def step(self, action: int) -> None:
        self._require_reset("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        mask = self.game.legal_mask()
        if action is None:
            legal = ", ".join(f"{int(b)} ({self.action_name(b)})" for b in np.flatnonzero(mask))
            raise IllegalActionError(f"{agent} must act (None is the action of a terminated agent); "
                                     f"legal: {legal}; {MASK_WAY_OUT}")
        action, illegal = checked_action(action, mask, self.illegal_action, self.action_name, who=agent)
        if illegal and self.illegal_action == "terminate":
            self._end_for_illegal_action(agent)
            return
        self.infos[agent] = {"illegal_action": True} if illegal else {}
        if self._log_actions is None:
            delta = self.game.apply(action)  # raises IllegalActionError, state unchanged
        else:  # logging: remember where in the event stream the decision was taken
            seat, before = self.game.current_player, len(self.game.events)
            delta = self.game.apply(action)
            self._log_actions.append((seat, action, before, self._log_note))
            self._log_note = {}
        self._cumulative_rewards[agent] = 0
        for i, a in enumerate(self.possible_agents):  # what _accumulate_rewards does, inlined
            self.rewards[a] = delta[i]
            self._cumulative_rewards[a] += delta[i]
            self.match_beans[i] += delta[i]
        log = None
        if self.game.over:
            if self._log_actions is not None:  # taken now: the next deal moves hand_index on
                log = replay.hand_records(self._hand_log_header(), self.game.events, self._log_actions, self.layout)
            self.hand_index += 1
            if self.hand_index < self.match_hands and self._can_go_on():
                self._start_hand(self._deal(self._hand_seed, self.hand_index, self.game, {}))
            else:
                balances = self.game.balances
                for i, a in enumerate(self.possible_agents):
                    self.infos[a] = {**self.infos[a], "beans": self.match_beans[i], "end_reason": self.game.end_reason}
                    if balances is not None:
                        self.infos[a].update(balance=balances[i], match_end=self.match_end or "hands")
                    self.terminations[a] = True
        if not self.game.over:
            self.agent_selection = self.possible_agents[self.game.current_player]
        if self.render_mode == "human":
            self.render()
        if log is not None:  # last: a failed write finds the env consistent
            self._write_log(log)


    def _can_go_on(self) -> bool:
        """B4 场次下限: a seat whose balance fell below ``min_beans`` ends the match after its hand."""
        balances = self.game.balances
        if balances is not None and min(balances) < self.rules.min_beans:
            self.match_end = "min_beans"
            return False
        return True

    def log_decision(self, probs: np.ndarray | None = None) -> None:
        """Record with the next action, in the replay log, the legal actions and ``probs`` (the
        policy's probability of every action, ``(n,)``; None when the agent exposes none)."""
        if self._log_actions is None:
            raise ValueError("log_decision needs a replay log: create the env with log_path=...")
        self._log_note = replay.decision_note(self.game.legal_actions(), probs, self.layout.n)

    def _hand_log_header(self) -> dict[str, Any]:
        """The finished hand's log header, naming the agents by seat when ``log_agents`` is set."""
        header = self._log_header()
        if self.log_agents is not None:
            header["agents"] = list(self.log_agents)
        return header

    def _end_for_illegal_action(self, agent: str) -> None:
        """End the episode at once (``illegal_action="terminate"``): ``agent`` is rewarded
        ``illegal_reward``, every other seat 0, as PettingZoo classic's TerminateIllegalWrapper
        does. The unfinished hand writes no replay log."""
        self._cumulative_rewards[agent] = 0
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = self.illegal_reward if a == agent else 0
            self._cumulative_rewards[a] += self.rewards[a]
            self.terminations[a] = True
            self.infos[a] = {"beans": self.match_beans[i], "end_reason": "illegal_action"}
        self.infos[agent]["illegal_action"] = True
        self._log_actions = None

    def _write_log(self, records: list[dict[str, Any]]) -> None:
        """Append a finished hand to ``log_path``; a failure names the file and what still holds."""
        try:
            replay.append_hand(self.log_path, records)
        except OSError as e:
            raise OSError(f"could not append the finished hand to log_path {os.fspath(self.log_path)!r}: {e}. "
                          "The env is unaffected (the hand was played and its rewards paid) and the next "
                          "hands are logged once the path is writable again") from e

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        if self.render_mode == "seat":
            return describe_observation(self._planes(self._seat_of[self.agent_selection]), self.observer,
                                        self.tile_style)
        text = render_mod.render_table(self.game, self.tile_style)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def compact_repr(space: spaces.Space) -> spaces.Space:
    """``space`` (a Box, or a Dict of them) printed without its bound arrays: a Box whose bounds
    differ by plane shows their range (``Box(-8.0..0.0, 1.0..7.94, (73, 27), float32)``) where
    Gymnasium would print every one of its thousands of values. Returns the same space."""
    if isinstance(space, spaces.Dict):
        for sub in space.spaces.values():
            compact_repr(sub)
    elif isinstance(space, spaces.Box):
        for name, bound in (("low_repr", space.low), ("high_repr", space.high)):
            if bound.size and bound.min() != bound.max():  # Gymnasium shows a uniform bound as its one value
                setattr(space, name, f"{bound.min():g}..{bound.max():g}")
    return space


def _checked_log_path(log_path: Any) -> str | os.PathLike | None:
    """``log_path`` if a log can be appended there: its folder exists and it is no folder."""
    if log_path is None:
        return None
    if not isinstance(log_path, (str, os.PathLike)):
        raise TypeError(f"log_path must be a str or path, got {type(log_path).__name__} {log_path!r}")
    path = os.fspath(log_path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"log_path {path!r}: the folder {folder!r} does not exist; create it first")
    if os.path.isdir(path):
        raise ValueError(f"log_path {path!r} is a folder; name a file in it, e.g. {os.path.join(path, 'hands.jsonl')!r}")
    return log_path
