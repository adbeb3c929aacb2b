"""Narration: a replay log's events and the seats' answers as lines for people (``mjenv replay
--verbose``, the terminal ``render_mode``), in Chinese tile names, Unicode glyphs or the log's own
notation; how a hand ended, with the rule that ended it (S of docs/rules-blood-battle.md, J of
docs/rules-joy-mahjong.md)."""

from __future__ import annotations

from typing import Any

from . import tiles
from .actions import ITEM_NAMES_ZH, ActionLayout
from .config import ITEMS
from .engine.core import GameCore
from .replay import GAME, GAMES

_WINDS_ZH = ("东", "南", "西", "北")


def game_of(engine: GameCore) -> str:
    """The game name of an engine (by its game's action layout)."""
    return next(name for name, spec in GAMES.items() if spec.layout is type(engine).layout)


def describe_action(rec: dict[str, Any], layout: ActionLayout) -> str | None:
    """A claim-window answer (吃/碰/杠/胡/抢杠胡/过) for people; None for actions that show as
    their events (discards, kongs of one's own turn, 定缺, the items of one's turn); with items,
    the pre-deal choice to use 乾坤大挪移 (keeping it is 过, S17.2)."""
    a = rec["action"]
    if a == layout.ITEM >= 0:
        return f"player_{rec['actor']} -> {layout.name_zh(a)}"
    if 2 * layout.n_kinds <= a < layout.n and not (layout.VOID >= 0 and a >= layout.VOID) and a != layout.ESCAPE:
        return f"player_{rec['actor']} -> {layout.name_zh(a)}"
    return None


def _tile(pai: str, style: str) -> str:
    """A logged tile name for people: Chinese, Unicode glyph or compact."""
    k = tiles.parse_tile(pai)
    return tiles.name_zh(k) if style == "zh" else tiles.glyph(k) if style == "unicode" else pai


def _count(n: int, noun: str) -> str:
    """``n noun`` with the plural s."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def ending_text(game: str, reason: str, wins: int, escapes: int = 0) -> str:
    """How a hand ended, for people: ``reason`` (``win`` / ``draw`` / ``escape``), the number of
    wins and of escapes (S16, J11).

    ``draw`` is always the exhaustive draw (流局 / 荒庄: the wall ran out), never drawing a tile."""
    if reason == "escape":
        rule = "J11" if game == "joy_mahjong" else "S16"
        return f"an escape (逃跑) ends the hand ({rule})"
    if game == "joy_mahjong":
        if reason == "win":
            return "a win ends the hand (J10)"
        return "荒庄, exhaustive draw: the wall ran out with no win"
    if reason == "win" and escapes and wins < 3:
        return f"{_count(wins, 'win')} and {_count(escapes, 'escape')} leave one seat in play (S16.1)"
    if reason == "win":
        # Blood mode ends on the third win; classic mode (S14) at the first discard or draw won on.
        return f"{wins} wins: three seats have won (S14)" if wins >= 3 else "classic mode: the first win ends the hand"
    if wins == 0:
        return "流局, exhaustive draw: the wall ran out with no win"
    return f"{wins} win{'s' if wins > 1 else ''}, then the wall ran out (流局, exhaustive draw)"


def describe_event(ev: dict[str, Any], style: str = "zh", viewer: int | None = None,
                   game: str = GAME, wins: int | None = None, escapes: int = 0) -> str | None:
    """One line about an event for people; ``viewer`` hides what that seat cannot see (None: all);
    ``wins`` and ``escapes``: those of the hand so far, to say how it ended at ``end_hand``."""
    t = ev["type"]
    who = f"player_{ev['actor']}" if "actor" in ev else ""
    hidden = viewer is not None and ev.get("actor") != viewer
    joy = game == "joy_mahjong"
    added_kong = "加杠" if joy else "面下杠"
    if t == "start_hand":
        wind = f", {_WINDS_ZH[ev['prevailing_wind']]}风圈" if "prevailing_wind" in ev else ""
        return f"new hand, dealer player_{ev['dealer']}{wind}"
    if t == "hua":
        return f"{who} 补花 {_tile(ev['pai'], style)}"
    if t == "indicator_flower":
        return f"indicator {_tile(ev['pai'], style)} is a flower: set aside, the next tile is flipped"
    if t == "indicator":
        return f"财神 indicator {_tile(ev['pai'], style)}: the wildcard is {_tile(ev['wild'], style)}"
    if t == "chi":
        consumed = " ".join(_tile(p, style) for p in ev["consumed"])
        return f"{who} 吃 {_tile(ev['pai'], style)} from player_{ev['target']} (with {consumed})"
    if t == "bird":
        return f"鸟 {_tile(ev['pai'], style)} -> player_{ev['seat']}"
    if t == "dingque":
        suit = tiles.SUIT_NAMES_ZH[tiles.SUITS.index(ev["suit"])]
        return f"{who} chose a void suit" if hidden else f"{who} 定缺 {suit}"
    if t == "dingque_reveal":
        voids = ["(escaped)" if v is None else tiles.SUIT_NAMES_ZH[tiles.SUITS.index(v)] for v in ev["voids"]]
        return "定缺: " + ", ".join(f"player_{s} {v}" for s, v in enumerate(voids))
    if t == "escape":
        text = f"{who} 逃跑 escapes: it leaves the hand"
        if "penalty" in ev:
            owed = f" (owed {ev['penalty_owed']})" if "penalty_owed" in ev else ""
            text += f", 扣豆 {ev['penalty']} beans to no one{owed}"
        return text
    if t == "qiankun_deal":
        return "乾坤大挪移: " + ", ".join(f"player_{s}" for s in ev["users"]) + " dealt many tiles of one suit"
    if t == "item":
        return _item_text(ev, style, hidden)
    if t == "tsumo":
        what = "摸牌" if hidden else f"摸 {_tile(ev['pai'], style)}"
        return f"{who} {what}" + ((" (补牌)" if joy else " (杠后补牌)") if ev.get("replacement") else "")
    if t == "dahai":
        return f"{who} 打 {_tile(ev['pai'], style)}"
    if t in ("pon", "daiminkan"):
        label = "碰" if t == "pon" else "直杠"
        return f"{who} {label} {_tile(ev['pai'], style)} from player_{ev['target']}"
    if t == "ankan":
        return f"{who} 暗杠" + ("" if hidden else f" {_tile(ev['pai'], style)}")
    if t == "kakan_declare":
        return f"{who} declares {added_kong} {_tile(ev['pai'], style)}"
    if t == "kakan":
        return f"{who} {added_kong} {_tile(ev['pai'], style)}"
    if t == "hora":
        src = "自摸" if ev["target"] == ev["actor"] else f"player_{ev['target']} 点炮"
        fans = " ".join(f"{name}{fan}" for name, fan in ev["fans"])
        total = f" = {ev['fan']} fan" if "fan" in ev else ""
        return f"{who} 胡 {_tile(ev['pai'], style)} ({src}): {fans}{total} X={ev['X']}"
    if t == "pay":
        owed = f", owed {ev['owed']}" if "owed" in ev else ""
        return f"  player_{ev['from']} pays player_{ev['to']} {ev['beans']} beans ({ev['reason']}{owed})"
    if t == "ryukyoku":
        return ("荒庄" if joy else "流局") + ": the wall is empty"
    if t == "end_hand":
        how = ev["reason"] if wins is None else ending_text(game, ev["reason"], wins, escapes)
        held = f"; balances {ev['balances']}" if "balances" in ev else ""
        return f"hand over: {how}; beans {ev['beans']}{held}"
    return None


def _item_text(ev: dict[str, Any], style: str, hidden: bool) -> str:
    """An item's use (public) and its result (its user's only, S17.10)."""
    who, item = f"player_{ev['actor']}", ev["item"]
    text = f"{who} uses {ITEM_NAMES_ZH[ITEMS.index(item)]}"
    if hidden:
        return text
    if item == "shunfeng":
        return f"{text}: the next draw is {_tile(ev['seen'], style)}"
    if item == "qianliyan":
        where = ("none in the live wall" if ev["part"] < 0
                 else f"the nearest in part {ev['part']} of the live wall (0: the draw end)")
        return f"{text} on {_tile(ev['kind'], style)}: {where}, {ev['wall']} tiles"
    return f"{text}: gives {_tile(ev['give'], style)}, takes {_tile(ev['take'], style)} from the wall"
