"""Sichuan blood battle (血战到底) as a PettingZoo AEC environment.

======================  =====================================================================
Import                  ``from mjenv import blood_battle_v0``
Make                    ``blood_battle_v0.env(preset="happy"|"qq", **options)``; ``raw_env`` unwrapped
Agents                  ``player_0`` … ``player_3`` (seats; the dealer is rolled by seeded dice)
Action space            ``Discrete(62)``, the same for every seat (see below)
Observation space       ``Dict(observation=Box(-inf, inf, (73, 27), float32), action_mask=Box(0, 1, (62,), int8))``
State space             ``Box((134, 27), float32)``: every hand, chosen voids, the wall order
Rewards                 bean deltas (欢乐豆) at the step they happen (RULES.md B1–B2)
Render modes            ``ansi`` (returns a str), ``human`` (prints)
======================  =====================================================================

**Options.** ``preset``: ``happy`` (seed 002) or ``qq`` (seed 004); ``mode``: ``blood`` or
``classic`` (first win ends the hand); any field of :class:`mjenv.config.BloodBattleRules` by
name (``cap_fan=8``, ``room_coefficient=200``, ``rake=400`` …); ``rules_file``: a YAML file of
``configs/``; ``match_hands`` (default 1): hands per episode, the dealer passing per S1;
``render_mode``; ``tile_style``: ``zh`` or ``unicode``; ``log_path`` (default None): append a
JSON-lines replay log of every finished hand to this file (a header with the rules and seed,
then every event and decision; see :mod:`mjenv.replay`, verify with ``mjenv replay FILE``).
Unknown options and bad values raise at construction, naming the field.

**Actions** (``env.unwrapped.action_name(a)``)::

    [ 0, 27)  discard kind k (0-8 1m-9m, 9-17 1p-9p, 18-26 1s-9s)
    [27, 54)  kong of kind k on one's own turn: 暗杠 if four in hand, else 面下杠 onto one's 碰
    54 碰 · 55 直杠 (kong on the discard) · 56 胡 · 57 抢杠胡 · 58 pass (过)
    [59, 62)  定缺 void suit m, p, s

**Action mask.** ``int8``; only the seat to act has ones. 定缺 phase: the three suits. Own
turn: 胡 when the hand wins (never while holding a void tile); discards, limited to the void
suit while any is held; kongs (never of the void suit, never with an empty wall). Claim on a
discard: 胡 / 直杠 / 碰 / pass, asked seat by seat in turn order and resolved after all have
answered (一炮多响). Rob window after a 面下杠: 抢杠胡 / pass. A seat with no choice is never
asked: a decision with one legal action (a lone void-suit discard, qq's forced win S13) is
played at once, and its effects land in the same step.

**Observation** (see :class:`mjenv.encoding.BloodBattleObserver` for the named plane ranges):
own hand, drawn tile, the claimable tile, each seat's melds, discards (counts and the last 4),
void suits once all four are chosen, wins and winning tiles, 暗杠 counts, dealer, beans, the
observer's seat, the phase, the wall count, whether the current draw is a kong replacement,
and the rule flags that change play (add_base bonus, 杠上炮 transfer, forced win, classic mode).
Seat-relative order.

**Rewards and episode end.** A seat's reward at a step is its bean change at that step: kong
payments and wins settle at once (实时结算), the draw checks (查花猪, 查大叫, 退税) and the rake at
the end. Seats that have won stay in ``agents`` (never selected) until the hand ends; every seat
terminates together. ``infos`` hold ``beans`` and ``end_reason`` at the end.

**Version history.** v0 (mjenv 0.1.0): first release, encoder v0; ``log_path`` replay logs.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import render as render_mod
from . import replay
from .actions import BLOOD_BATTLE as LAYOUT
from .config import BloodBattleRules, blood_battle_rules, load_rules_file
from .encoding import BloodBattleObserver
from .engine.blood_battle import N_SEATS, BloodBattleGame, IllegalActionError, seeded_wall


def env(**options: Any) -> AECEnv:
    """The wrapped environment (order enforcing)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**options))


class raw_env(AECEnv):
    """Blood battle AEC environment; see the module docstring for the reference table."""

    metadata = {"name": "blood_battle_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}

    def __init__(self, preset: str = "happy", render_mode: str | None = None, match_hands: int = 1,
                 tile_style: str = "zh", rules_file: str | None = None,
                 log_path: str | os.PathLike | None = None, **rule_overrides: Any) -> None:
        super().__init__()
        if rules_file is not None:
            spec = load_rules_file(rules_file)
            if spec["game"] != "blood_battle":
                raise ValueError(f"{rules_file}: game {spec['game']!r} is not blood_battle")
            preset, rule_overrides = spec["preset"], {**spec["rules"], **rule_overrides}
        self.rules: BloodBattleRules = blood_battle_rules(preset, **rule_overrides)
        self.preset = preset
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
        self._log_actions: list[tuple[int, int, int]] | None = None  # (seat, action, events before)
        self.possible_agents = [f"player_{i}" for i in range(N_SEATS)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        # One capped win's worth of beans: keeps the bean planes near [-3, 3].
        r = self.rules
        self.observer = BloodBattleObserver(
            bean_scale=r.base_points * 2 ** (r.cap_fan - 1) * r.room_coefficient,
            rule_flags=(r.self_draw_bonus == "add_base", r.gang_pao_transfer, r.forced_win_last_four,
                        r.mode == "classic"),
        )
        obs_box = spaces.Box(-np.inf, np.inf, (self.observer.planes, self.observer.width), np.float32)
        mask_box = spaces.Box(0, 1, (LAYOUT.n,), np.int8)
        self._obs_space = spaces.Dict({"observation": obs_box, "action_mask": mask_box})
        self._act_space = spaces.Discrete(LAYOUT.n)
        self.state_space = spaces.Box(-np.inf, np.inf, (self.observer.state_planes, self.observer.width), np.float32)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self.np_random = np.random.default_rng()
        self._hand_seed: int | None = None
        self.game: BloodBattleGame | None = None

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def action_name(self, action: int) -> str:
        """Name of an action, e.g. ``discard 5m`` or ``pong``."""
        return LAYOUT.name(int(action))

    # ------------------------------------------------------------------ AEC API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new hand. ``options``: ``wall`` (108 kinds, head first) and ``dealer`` for scripts."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            self._hand_seed = int(seed)
        else:
            self._hand_seed = int(self.np_random.integers(2**63))
        # Other keys are ignored, as PettingZoo's api_test expects of reset options.
        self._script = {k: v for k, v in (options or {}).items() if k in ("wall", "dealer")}
        self.hand_index = 0
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.match_beans = [0] * N_SEATS
        self._deal(self._script.get("dealer"))

    def _deal(self, dealer: int | None) -> None:
        """Start hand ``hand_index``: the wall is a pure function of (seed, hand index)."""
        wall, dice = seeded_wall(self._hand_seed, self.hand_index)
        if self.hand_index == 0 and "wall" in self._script:
            wall = self._script["wall"]
        self.game = BloodBattleGame(self.rules, wall, dice if dealer is None else dealer)
        self._log_actions = [] if self.log_path is not None else None
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of[agent]
        g = self.game
        mask = g.legal_mask().copy() if g.current_player == seat else np.zeros(LAYOUT.n, dtype=np.int8)
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
            self._log_actions.append((seat, int(action), before))
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
                classic = self.rules.mode == "classic"
                self._deal(self.game.next_dealer if classic else None)
            else:
                for i, a in enumerate(self.possible_agents):
                    self.terminations[a] = True
                    self.infos[a] = {"beans": self.match_beans[i], "end_reason": self.game.end_reason}
        if not self.game.over:
            self.agent_selection = self.possible_agents[self.game.current_player]
        if self.render_mode == "human":
            self.render()

    def _write_log(self) -> None:
        """Append the finished hand to ``log_path``."""
        header = replay.hand_header(self.preset, self.rules, self._hand_seed, self.hand_index)
        replay.append_hand(self.log_path, replay.hand_records(header, self.game.events, self._log_actions))

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = render_mod.render_table(self.game, self.tile_style)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
