"""Public scoring API: ``mjenv.score(...)`` turns a hand in tile notation into fans and points.

One entry point for every game; ``game`` picks the scorer from ``_SCORERS`` (add a game by
adding a function there). Each scorer takes the game's own keyword options and rule fields and
rejects the rest. Invalid input raises ``ValueError`` naming the reason.

>>> s = score(hand="111222444m33399p", win_tile="9p", preset="qq", self_drawn=True)
>>> [f.name for f in s.fans], s.X
(['对对胡', '自摸加底'], 18)
>>> j = score(game="joy_mahjong", hand="123m456p789sEEE16s", win_tile="1s", wild="6s")
>>> j.fan, [(tiles.name(w), tiles.name(t)) for w, t in j.substitution]
(15, [('6s', '1s')])
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import tiles
from .config import (BloodBattleRules, JoyMahjongRules, blood_battle_rules, field_names,
                     joy_mahjong_rules)
from .melds import Meld, parse_meld
from .rules import joy
from .rules.blood_battle import SichuanScore, WinContext, score_win

_VOID = {"m": 0, "p": 1, "s": 2, "万": 0, "筒": 1, "饼": 1, "条": 2, "索": 2}


def _check_text(name: str, value: Any, example: str) -> str:
    """A tile-notation argument must be a str (None or a number is a caller's slip)."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string in tile notation such as {example!r}, "
                         f"got {type(value).__name__} {value!r}")
    return value


def _check_flag(name: str, value: Any) -> bool:
    """A boolean option must be a bool: a string such as 'no' would otherwise count as true."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def _rules(factory: Callable[..., Any], preset: Any, overrides: dict[str, Any]) -> Any:
    """Build the rules; a rule field of the wrong type is bad input like any other (ValueError)."""
    if not isinstance(preset, str):
        raise ValueError(f"preset must be a preset name (a str), got {type(preset).__name__} "
                         f"{preset!r}")
    try:
        return factory(preset, **overrides)
    except TypeError as exc:  # mjenv.config names the field and the type it needs
        raise ValueError(str(exc)) from exc


def _void_suit(void: Union[str, int, None]) -> Optional[int]:
    """S2: a void suit given as ``m``/``p``/``s`` (or 万/筒/条, or 0/1/2)."""
    if void is None:
        return None
    if isinstance(void, int) and not isinstance(void, bool) and 0 <= void <= 2:
        return void
    if isinstance(void, str) and void in _VOID:
        return _VOID[void]
    raise ValueError(f"void must be one of m, p, s (or 0, 1, 2), got {void!r}")


def _check_tiles(hand: str, win_tile: str, melds: Sequence[str]) -> tuple[list[int], list[Meld]]:
    """Parse and check the hand, the win tile and the melds (shared by every game)."""
    kinds = tiles.parse(_check_text("hand", hand, "11224444557799m"))
    _check_text("win_tile", win_tile, "9m")
    for m in melds:
        _check_text("each meld", m, "pong:5p")
    if any(k >= tiles.N_KINDS for k in kinds):
        raise ValueError(f"flowers are not part of a hand: {hand!r}")
    win = tiles.parse_tile(win_tile)
    if win not in kinds:
        raise ValueError(f"win tile {tiles.name(win)} is not in the hand {tiles.fmt(kinds)} "
                         "(the hand must include the winning tile)")
    parsed = [parse_meld(m) for m in melds]
    n = len(kinds) + 3 * len(parsed)
    if n != 14:
        raise ValueError(f"wrong tile count: {len(kinds)} concealed + 3 x {len(parsed)} melds "
                         f"= {n}, expected 14 (a kong counts 3)")
    owned = tiles.to_counts(kinds).astype(int)
    for m in parsed:
        for k in m.kinds():
            owned[k] += 1
    extra = [tiles.name(k) for k in range(tiles.N_KINDS) if owned[k] > 4]
    if extra:
        raise ValueError(f"more than four copies of {', '.join(extra)} (hand and melds together)")
    return kinds, parsed


def _split_options(game: str, options: dict[str, Any], own: dict[str, Any],
                   rules_cls: type) -> tuple[dict[str, Any], dict[str, Any]]:
    """A game's keyword options (``own``: name -> default) and rule fields; others raise."""
    fields = field_names(rules_cls)
    unknown = sorted(set(options) - set(own) - set(fields))
    if unknown:
        raise ValueError(f"unknown rule field(s) or option(s) {unknown} for game {game!r}; "
                         f"options: {', '.join(own)}; rule fields: {', '.join(fields)}")
    mine = {k: options.get(k, default) for k, default in own.items()}
    return mine, {k: v for k, v in options.items() if k in fields}


def _score_blood_battle(hand: str, win_tile: str, melds: Sequence[str], flags: dict[str, bool],
                        options: dict[str, Any]) -> SichuanScore:
    """docs/rules-blood-battle.md: validate a blood-battle hand and score it (options: preset, first_turn,
    dealer, void, and any BloodBattleRules field)."""
    own, rule_overrides = _split_options(
        "blood_battle", options,
        {"preset": "happy", "first_turn": False, "dealer": False, "void": None}, BloodBattleRules)
    rules = _rules(blood_battle_rules, own["preset"], rule_overrides)
    ctx = WinContext(**flags, first_turn=_check_flag("first_turn", own["first_turn"]),
                     dealer=_check_flag("dealer", own["dealer"]))
    void_suit = _void_suit(own["void"])
    kinds, parsed = _check_tiles(hand, win_tile, melds)
    if any(m.kind == "chow" for m in parsed):
        raise ValueError("blood battle has no chow (S3)")
    all_kinds = kinds + [k for m in parsed for k in m.kinds()]
    if any(k >= tiles.N_SUIT_KINDS for k in all_kinds):
        raise ValueError("blood battle has no honours (S1)")
    suits = {tiles.suit_of(k) for k in all_kinds}
    if void_suit is not None and void_suit in suits:
        raise ValueError(f"the hand holds tiles of its void suit {tiles.SUITS[void_suit]} "
                         "and cannot win (S2)")
    if len(suits) == 3:
        raise ValueError("the hand holds all three suits (花猪) and cannot win (S2, 缺门)")
    result = score_win(tiles.to_counts(kinds), parsed, ctx, rules, void_suit)
    if result is None:
        raise ValueError(f"not a winning hand: {tiles.fmt(kinds)}"
                         + (f" with {', '.join(map(str, parsed))}" if parsed else "")
                         + " is neither four melds and a pair nor seven pairs (S7)")
    return result


_WINDS = {"E": 0, "S": 1, "W": 2, "N": 3, "东": 0, "南": 1, "西": 2, "北": 3}


def _wind(name: str, value: Union[str, int]) -> int:
    """A wind given as E/S/W/N (or 东南西北, or 0..3)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
        return value
    if isinstance(value, str) and value in _WINDS:
        return _WINDS[value]
    raise ValueError(f"{name} must be one of E, S, W, N (or 0..3), got {value!r}")


def _score_joy(hand: str, win_tile: str, melds: Sequence[str], flags: dict[str, bool],
               options: dict[str, Any]) -> joy.JoyScore:
    """docs/rules-joy-mahjong.md: validate a Joy Mahjong hand and score it (options: preset, wild, flowers,
    fourth_tile, seat_wind, prevailing_wind, and any JoyMahjongRules field, e.g. room)."""
    own, rule_overrides = _split_options(
        "joy_mahjong", options,
        {"preset": "standard", "wild": None, "flowers": 0, "fourth_tile": False,
         "seat_wind": "E", "prevailing_wind": "E"}, JoyMahjongRules)
    rules = _rules(joy_mahjong_rules, own["preset"], rule_overrides)
    ctx = joy.JoyContext(**flags, fourth_tile=_check_flag("fourth_tile", own["fourth_tile"]),
                         flowers=own["flowers"],
                         seat_wind=_wind("seat_wind", own["seat_wind"]),
                         prevailing_wind=_wind("prevailing_wind", own["prevailing_wind"]))
    wild = None
    if own["wild"] is not None:
        wild = tiles.parse_tile(_check_text("wild", own["wild"], "6m"))
        if wild >= tiles.N_KINDS:
            raise ValueError(f"a flower is never the wildcard (J2): {own['wild']!r}")
    kinds, parsed = _check_tiles(hand, win_tile, melds)
    win = tiles.parse_tile(win_tile)
    result = joy.score_win(tiles.to_counts(kinds), parsed, win, wild, ctx, rules)
    if result is None:
        raise ValueError(f"not a winning hand: {tiles.fmt(kinds)}"
                         + (f" with {', '.join(map(str, parsed))}" if parsed else "")
                         + (f" and wildcard {tiles.name(wild)}" if wild is not None else "")
                         + " completes no shape of J2 (regular, 七对, 十三幺, 全不靠, 组合龙)")
    if not joy.is_legal_win(result, rules):
        raise ValueError(f"the eight_fan room needs at least 8 fan without flowers (J5); "
                         f"this hand has {result.fan_without_flowers}")
    return result


# game -> scorer(hand, win_tile, melds, flags, options); each scorer validates its own
# keyword options and builds its own win context from the flags.
_SCORERS: dict[str, Callable[..., Any]] = {"blood_battle": _score_blood_battle,
                                           "joy_mahjong": _score_joy}


def score(game: str = "blood_battle", hand: str = "11224444557799m", win_tile: str = "9m",
          melds: Sequence[str] = (), *, self_drawn: bool = False, after_kong: bool = False,
          rob_kong: bool = False, last_tile: bool = False,
          **options: Any) -> Union[SichuanScore, joy.JoyScore]:
    """Score one winning hand.

    ``hand`` holds every concealed tile including ``win_tile``; ``melds`` are strings such as
    ``chow:345m``, ``pong:5p``, ``kong:5p``, ``addkong:5p``, ``ankan:5p``; the flags describe
    the win. The other keywords belong to the game:

    - ``blood_battle``: ``preset`` (``happy`` default, as the env's; ``qq``), ``first_turn``, ``dealer``,
      ``void`` (the 定缺 suit), and any rule field (e.g. ``cap_fan=8``); see
      :class:`mjenv.rules.blood_battle.WinContext`.
    - ``joy_mahjong``: ``room`` (``popular``, ``eight_fan``, ``no_fan``) and the other rule
      fields, ``wild`` (the wildcard tile, e.g. ``"6m"``; None: no wildcard), ``flowers``,
      ``fourth_tile`` (和绝张), ``seat_wind`` / ``prevailing_wind`` (E S W N); see
      :class:`mjenv.rules.joy.JoyContext`.

    Raises ``ValueError`` naming the reason for any bad input: an unknown keyword, a value of the
    wrong type (tiles are strings, flags are bools: ``self_drawn="no"`` is refused), a hand
    that does not win.
    """
    scorer = _SCORERS.get(game) if isinstance(game, str) else None
    if scorer is None:
        raise ValueError(f"unknown game {game!r}; choose one of {sorted(_SCORERS)}")
    if isinstance(melds, str):
        melds = (melds,)
    elif not isinstance(melds, (list, tuple)):
        raise ValueError("melds must be a meld string or a list of them, e.g. ['pong:5p'] "
                         f"(() for none), got {type(melds).__name__} {melds!r}")
    flags = {name: _check_flag(name, value) for name, value in
             (("self_drawn", self_drawn), ("after_kong", after_kong), ("rob_kong", rob_kong),
              ("last_tile", last_tile))}
    return scorer(hand, win_tile, tuple(melds), flags, options)
