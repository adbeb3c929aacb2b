"""Text rendering of a table for people: Chinese names or Unicode glyphs.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (B, S) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

from typing import Any

from . import tiles
from .narration import ending_text, game_of

SEAT_WINDS = ("东", "南", "西", "北")


def _tiles(kinds: list[int], style: str) -> str:
    return tiles.show(kinds, style) if kinds else "-"


def _meld(m: Any, style: str) -> str:
    label = {"pong": "碰", "kong": "直杠", "addkong": "面下杠", "ankan": "暗杠", "chow": "吃"}[m.kind]
    return f"[{label} {_tiles(m.kinds(), style)}]"


def render_table(g: Any, style: str = "zh") -> str:
    """The whole table, every hand face up: for watching and debugging, not an observation.

    Game-specific marks are shown where the game has them: 定缺 (blood battle); the 财神, its
    indicator, winds and flowers, the bird (Joy Mahjong); escapes and balances with those rule
    options (S16/J11, B4)."""
    name = tiles.name_zh if style == "zh" else tiles.glyph
    void = getattr(g, "void", None)
    flowers = getattr(g, "flowers", None)
    lines = [f"wall {g.wall_count}  phase {g.phase}  dealer player_{g.dealer}"]
    if flowers is not None:
        lines[0] += (f"  {SEAT_WINDS[g.prevailing_wind]}风圈  财神 {name(g.wild)}"
                     f" (indicator {name(g.indicator)})")
    for s in range(4):
        marks = []
        if flowers is not None:
            marks.append(SEAT_WINDS[g.seat_winds[s]])
        if s == g.dealer:
            marks.append("庄")
        if void is not None and void[s] >= 0:
            marks.append("缺" + tiles.SUIT_NAMES_ZH[void[s]])
        if flowers is not None and flowers[s]:
            marks.append("花 " + " ".join(name(f) for f in flowers[s]))
        if g.won[s]:
            marks.append("胡")
        if g.escaped[s]:
            marks.append("逃 escaped")
        if s == g.current_player:
            marks.append("<- to act")
        hand = tiles.from_counts(g.hands[s])
        melds = " ".join(_meld(m, style) for m in g.melds[s])
        held = "" if g.balances is None else f"  holds {g.balances[s]}"
        lines.append(f"player_{s} {' '.join(marks)}  beans {g.beans[s]:+d}{held}")
        lines.append(f"  hand  {_tiles(hand, style)} {melds}".rstrip())
        lines.append(f"  river {' '.join(name(k) for k in g.rivers[s]) or '-'}")  # in discard order
    for win in g.wins:
        names = " ".join(f"{f.name}{getattr(f, 'total', f.fan)}" for f in win.score.fans)
        src = "自摸" if win.source is None else f"player_{win.source} 点炮"
        lines.append(f"胡 player_{win.seat} on {tiles.name_zh(win.tile)} ({src}): {names} X={win.score.X}")
    if getattr(g, "bird", None) is not None:
        lines.append(f"鸟 {tiles.name_zh(g.bird)} -> player_{g.bird_seat}")
    if g.over:
        how = ending_text(game_of(g), g.end_reason, len(g.wins), sum(g.escaped))
        lines.append(f"hand over: {how}; beans {g.beans}")
    return "\n".join(lines)
