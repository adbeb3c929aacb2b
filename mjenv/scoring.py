"""Public scoring API: ``mjenv.score(...)`` turns a hand in tile notation into fans and points.

One entry point for every game; ``game`` picks the scorer from ``_SCORERS`` (add a game by
adding a function there). Invalid input raises ``ValueError`` naming the reason.

>>> s = score(hand="111222444m33399p", win_tile="9p", preset="qq", self_drawn=True)
>>> [f.name for f in s.fans], s.X
(['对对胡', '自摸加底'], 18)
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from . import tiles
from .config import blood_battle_rules
from .melds import Meld, parse_meld
from .rules.sichuan import SichuanScore, WinContext, score_win

_VOID = {"m": 0, "p": 1, "s": 2, "万": 0, "筒": 1, "饼": 1, "条": 2, "索": 2}


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
    kinds = tiles.parse(hand)
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


def _score_blood_battle(hand: str, win_tile: str, melds: Sequence[str], preset: str,
                        flags: dict[str, bool], void: Union[str, int, None],
                        rule_overrides: dict[str, Any]) -> SichuanScore:
    """RULES S: validate a blood-battle hand and score it."""
    rules = blood_battle_rules(preset, **rule_overrides)
    ctx = WinContext(**flags)
    void_suit = _void_suit(void)
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


# game -> scorer(hand, win_tile, melds, preset, flags, void, rule_overrides); each scorer
# validates its own options and builds its own win context from the flags.
_SCORERS: dict[str, Callable[..., Any]] = {"blood_battle": _score_blood_battle}


def score(game: str = "blood_battle", hand: str = "11224444557799m", win_tile: str = "9m",
          melds: Sequence[str] = (), preset: str = "qq", self_drawn: bool = False,
          after_kong: bool = False, rob_kong: bool = False, first_turn: bool = False,
          last_tile: bool = False, dealer: bool = False, void: Union[str, int, None] = None,
          **rule_overrides: Any) -> SichuanScore:
    """Score one winning hand.

    ``hand`` holds every concealed tile including ``win_tile``; ``melds`` are strings such as
    ``pong:5p``, ``kong:5p``, ``addkong:5p``, ``ankan:5p``; the flags describe the win (see
    :class:`mjenv.rules.sichuan.WinContext`); ``void`` is the 定缺 suit; any other keyword is
    a rule field of the preset (e.g. ``cap_fan=8``). Raises ``ValueError`` naming the reason.
    """
    scorer = _SCORERS.get(game)
    if scorer is None:
        raise ValueError(f"unknown game {game!r}; choose one of {sorted(_SCORERS)}")
    if isinstance(melds, str):
        melds = (melds,)
    flags = {"self_drawn": self_drawn, "after_kong": after_kong, "rob_kong": rob_kong,
             "first_turn": first_turn, "dealer": dealer, "last_tile": last_tile}
    return scorer(hand, win_tile, tuple(melds), preset, flags, void, rule_overrides)
