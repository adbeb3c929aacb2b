"""A game and its options as one frozen :class:`GameSpec`: the rules, the action layout, the
observer and the match settings, read by every face of the game (the AEC env, the Parallel env,
the compiled backends of :mod:`mjenv.vector`), so that each validates and sizes a table the same
way without building another (docs/layout.md: the spec layer, below the envs and the backends).

``spec(game, **options)`` takes the AEC env's game options (``preset``, Joy Mahjong's ``room``,
``rules_file``, ``match_hands``, ``illegal_action``, ``illegal_reward``, ``observation_dtype`` and
rule fields by name); what only a rendered, logged table has (``render_mode``, ``tile_style``,
``log_path``) stays with the AEC env. What differs between the games lives in one object per game
(:data:`GAME_RULES`): how options become rules, the observer and its bean scale, the bounds,
how a match deals its hands on the readable engine.
Rule IDs: docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from . import games
from .actions import BLOOD_BATTLE, JOY_MAHJONG, ActionLayout
from .config import (BloodBattleRules, JoyMahjongRules, blood_battle_rules, check_episode_beans,
                     joy_mahjong_rules, load_rules_file)
from .encoding import BloodBattleObserver, JoyMahjongObserver, check_observation_dtype
from .engine import blood_battle as blood_battle_engine
from .engine import joy_mahjong as joy_mahjong_engine
from .engine.blood_battle import BloodBattleGame
from .engine.core import GameCore
from .engine.joy_mahjong import JoyMahjongGame
from .rules import beans as bean_rules
from .rules import escape as escape_rules

ILLEGAL_ACTION_MODES = ("raise", "first_legal", "terminate")
"""What ``step`` does with an action outside the mask: raise :class:`IllegalActionError` and
change nothing; play the lowest legal action instead; or end the episode with a penalty for the
seat that chose it (PettingZoo classic's ``TerminateIllegalWrapper``)."""


def check_illegal_action_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`ILLEGAL_ACTION_MODES`, else a ValueError naming them."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class GameSpec:
    """One table's game, checked: everything an env or a backend needs to play and encode it."""

    game: str
    """The key of :mod:`mjenv.games` (``blood_battle``, ``joy_mahjong``)."""
    preset: str
    rules: Any
    """The validated rules object of :mod:`mjenv.config`."""
    layout: ActionLayout
    """The action layout, with ESCAPE when the rules have ``escape`` and the item actions with
    ``items`` (S17)."""
    observer: Any
    """The encoder of :mod:`mjenv.encoding`, sized and scaled for these rules."""
    script_keys: tuple[str, ...]
    """``reset(options=...)`` keys that script the first hand."""
    match_hands: int = 1
    illegal_action: str = "raise"
    illegal_reward: float = 0.0
    observation_dtype: str = "float32"

    def observation_box(self) -> spaces.Box:
        """The observation planes' Box: their real ranges, or small integers with ``uint8``."""
        if self.observation_dtype == "uint8":
            return spaces.Box(*self.observer.uint8_bounds(), dtype=np.uint8)
        return spaces.Box(*self.observer.bounds(), dtype=np.float32)

    def state_box(self) -> spaces.Box:
        """The Box of ``state()``."""
        return spaces.Box(*self.observer.bounds(state=True), dtype=np.float32)

    def new_game(self, seed: int, hand_index: int, previous: GameCore | None, script: dict[str, Any]) -> GameCore:
        """The readable engine's hand ``hand_index`` of ``seed``: its wall a pure function of
        (seed, hand index); ``previous``, the hand before it in a match (dealer, wind, balances);
        ``script``, the checked reset options of the first hand."""
        return GAME_RULES[self.game].new_game(self, seed, hand_index, previous, script)


class GameRules(ABC):
    """What one game does differently when its options become a spec (subclassed per game)."""

    game: str
    layout: ActionLayout
    script_keys: tuple[str, ...]

    def rules(self, preset: str | None, rules_file: str | None, room: str | None,
              overrides: dict[str, Any]) -> tuple[str, Any]:
        """``(preset, rules)`` from the options, a rules file's fields under the overrides."""
        default = games.game(self.game).preset
        if rules_file is not None:
            spec = load_rules_file(rules_file)
            if spec["game"] != self.game:
                raise ValueError(f"{rules_file}: game {spec['game']!r} is not {self.game}")
            preset, overrides = spec["preset"], {**spec["rules"], **overrides}
        preset = default if preset is None else preset
        return preset, self.make_rules(preset, room, overrides)

    @abstractmethod
    def make_rules(self, preset: str, room: str | None, overrides: dict[str, Any]) -> Any:
        """The game's rules config of ``preset`` (and ``room``) with ``overrides``, checked."""

    bound_fields: str
    """The rule fields that one hand's bean bound grows with (named when it is too large)."""

    @abstractmethod
    def bean_bound(self, rules: Any) -> int:
        """More beans than one seat can win or lose in one hand of ``rules``."""

    @abstractmethod
    def observer(self, rules: Any) -> Any:
        """The encoder of a table of ``rules`` (its bean scale, bounds and rule flags)."""

    @abstractmethod
    def new_game(self, spec: GameSpec, seed: int, hand_index: int, previous: Any, script: dict[str, Any]) -> GameCore:
        """:meth:`GameSpec.new_game` of this game."""


class BloodBattle(GameRules):
    game, layout, script_keys = "blood_battle", BLOOD_BATTLE, ("wall", "dealer")

    def make_rules(self, preset: str, room: str | None, overrides: dict[str, Any]) -> BloodBattleRules:
        if room is not None:  # not a blood-battle field: refused by name, as any unknown field
            overrides = {**overrides, "room": room}
        return blood_battle_rules(preset, **overrides)

    bound_fields = "room_coefficient, base_points, cap_fan, the kong and flower-pig units, rake and the escape fields"

    def bean_bound(self, r: BloodBattleRules) -> int:
        return blood_battle_bean_bound(r)

    def observer(self, r: BloodBattleRules) -> BloodBattleObserver:
        scale = r.base_points * 2 ** (r.cap_fan - 1) * r.room_coefficient
        return BloodBattleObserver(
            bean_scale=scale,  # one capped win's worth of beans: keeps the bean planes near [-3, 3]
            rule_flags=(r.self_draw_bonus == "add_base", r.gang_pao_transfer, r.forced_win_last_four,
                        r.mode == "classic"),
            bean_bound=blood_battle_bean_bound(r) / scale,
            escape=r.escape,
            balance_bound=None if r.bankroll is None else bean_rules.balance_bound(r.bankroll) / scale,
            items=None if r.items is None else max(map(max, r.items)), qianliyan_parts=r.qianliyan_parts,
        )

    def new_game(self, spec: GameSpec, seed: int, hand_index: int, previous: BloodBattleGame | None,
                 script: dict[str, Any]) -> BloodBattleGame:
        """The dealer: scripted (first hand), the last dealer-in in classic mode (S1), else the
        seeded dice; balances carry over a match (B4)."""
        wall, dice = blood_battle_engine.seeded_wall(seed, hand_index)
        if previous is None:
            dealer = script.get("dealer")
            wall = script.get("wall", wall)
        else:
            dealer = previous.next_dealer if spec.rules.mode == "classic" else None
        balances = None if previous is None else previous.balances
        return BloodBattleGame(spec.rules, wall, dice if dealer is None else dealer, balances=balances)


class JoyMahjong(GameRules):
    game, layout, script_keys = "joy_mahjong", JOY_MAHJONG, ("wall", "dealer", "prevailing_wind")

    SCALE_BASE = {"popular": 16, "eight_fan": 24, "no_fan": 10}
    """Points of a typical big win doubled by both the bird and the dealer, per room: with
    ``room_coefficient`` and 4, the bean scale (keeps the bean planes small)."""

    def make_rules(self, preset: str, room: str | None, overrides: dict[str, Any]) -> JoyMahjongRules:
        if room is not None:
            overrides = {**overrides, "room": room}
        return joy_mahjong_rules(preset, **overrides)

    bound_fields = "room_coefficient, rake and escape_x"

    def bean_bound(self, r: JoyMahjongRules) -> int:
        return joy_mahjong_bean_bound(r)

    def observer(self, r: JoyMahjongRules) -> JoyMahjongObserver:
        scale = 4 * self.SCALE_BASE[r.room] * r.room_coefficient
        held = None if r.bankroll is None else bean_rules.balance_bound(r.bankroll) / scale
        return JoyMahjongObserver(bean_scale=scale, room=r.room, all_mcr=r.discard_payers == "all_mcr",
                                  bean_bound=joy_mahjong_bean_bound(r) / scale, balance_bound=held)

    def new_game(self, spec: GameSpec, seed: int, hand_index: int, previous: JoyMahjongGame | None,
                 script: dict[str, Any]) -> JoyMahjongGame:
        """First hand: scripted or seeded dealer; the prevailing wind scripted, else seeded for a
        single hand and East for a match. Then the deal passes to the next seat and the wind
        advances every four hands (J10); balances carry over a match (B4)."""
        wall, dice, wind = joy_mahjong_engine.seeded_wall(seed, hand_index)
        if previous is None:
            prevailing = script.get("prevailing_wind", wind if spec.match_hands == 1 else 0)
            return JoyMahjongGame(spec.rules, script.get("wall", wall), script.get("dealer", dice), prevailing)
        prevailing = (previous.prevailing_wind + (hand_index % 4 == 0)) % 4
        return JoyMahjongGame(spec.rules, wall, previous.next_dealer, prevailing, balances=previous.balances)


GAME_RULES: dict[str, GameRules] = {"blood_battle": BloodBattle(), "joy_mahjong": JoyMahjong()}
"""Game key -> its :class:`GameRules` (the keys of :data:`mjenv.games.GAMES`)."""


def spec(game: str, preset: str | None = None, *, room: str | None = None, rules_file: str | None = None,
         match_hands: int = 1, illegal_action: str = "raise", illegal_reward: float | None = None,
         observation_dtype: str = "float32", **rule_overrides: Any) -> GameSpec:
    """The checked :class:`GameSpec` of ``game`` with the AEC env's game options; a bad option
    raises naming it (unknown rule fields included)."""
    kind = GAME_RULES[games.game(game).name]
    preset, rules = kind.rules(preset, rules_file, room, rule_overrides)
    if not (isinstance(match_hands, int) and match_hands >= 1):
        raise ValueError(f"match_hands must be an int >= 1, got {match_hands!r}")
    check_episode_beans(kind.bean_bound(rules), match_hands, kind.bound_fields)  # no int64 overflow
    check_illegal_action_mode(illegal_action)
    check_observation_dtype(observation_dtype)
    observer = kind.observer(rules)
    if illegal_reward is None:
        illegal_reward = -observer.bean_scale  # one big win's beans: see the env modules
    if isinstance(illegal_reward, bool) or not (isinstance(illegal_reward, (int, float, np.integer, np.floating))
                                                and math.isfinite(illegal_reward)):
        raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
    items = getattr(rules, "items", None) is not None  # S17: blood battle only
    return GameSpec(game, preset, rules, kind.layout.with_options(rules.escape, items), observer, kind.script_keys,
                    match_hands, illegal_action, float(illegal_reward), observation_dtype)


def blood_battle_bean_bound(r: BloodBattleRules) -> int:
    """More beans than one seat can win or lose in one blood-battle hand (the range of the bean
    planes): three capped wins (S11), three 查大叫 payments and three 花猪 payments (S15), and the
    income of every kong a table can make (at most 12 by others or 4 of one's own, 3 payers each),
    once more as 杠上炮 transfers (S12) and once as 退税; then the rake; with ``escape``, three
    escapes' worth (:func:`escape_bean_bound`)."""
    win = r.base_points * 2 ** (r.cap_fan - 1) + (r.base_points if r.self_draw_bonus == "add_base" else 0)
    kong = r.base_points * max(r.direct_kong_units, r.added_kong_units, r.concealed_kong_units)
    points = 3 * win + 3 * win + 3 * r.flower_pig_points + (12 + 9 + 12) * kong
    return points * r.room_coefficient + r.rake + (3 * escape_bean_bound(r) if r.escape else 0)


def escape_bean_bound(r: BloodBattleRules) -> int:
    """More beans than one blood-battle escape moves (S16): the escaper's 扣豆 and 赔偿 to three
    seats, each C_j at most the larger of a 花猪 payment and a capped win (happy); 16倍 or a capped
    win to three (qq)."""
    claim = max(r.flower_pig_points, r.cap_points)
    if r.escape_rule == "qq":
        return 3 * max(escape_rules.QQ_ESCAPE_UNITS * r.base_points, r.cap_points) * r.room_coefficient
    n, x = r.room_coefficient, r.escape_factor
    penalty = max(r.escape_penalty_floor, n * (3 * r.cap_points + 3 * x * claim))
    return penalty + 3 * max(r.escape_compensation_floor, n * x * claim)


MAX_FAN = 400
"""More fan than any Joy Mahjong hand scores: the largest Chinese Official hands stay under 350
fan with every compatible fan counted, and 无财神 (2) and eight 花牌 add 10."""


def joy_mahjong_bean_bound(r: JoyMahjongRules) -> int:
    """More beans than one seat can win or lose in one Joy Mahjong hand (the range of the bean
    planes): a win of ``MAX_FAN`` (J5) doubled by the bird and the dealer (J7, J8), or an escape
    (J11), paid by three seats; then the rake. Kongs pay nothing in Joy Mahjong."""
    per_pair = {"popular": MAX_FAN, "eight_fan": MAX_FAN + 8, "no_fan": 10}[r.room] * 2 * 2
    if r.escape:
        per_pair = max(per_pair, escape_rules.joy_escape_x(r.escape_x, r.room))
    return 3 * per_pair * r.room_coefficient + r.rake
