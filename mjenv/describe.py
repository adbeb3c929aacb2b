"""Observations for people: one seat's observation tensor as text.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (S).

:func:`describe_observation` decodes an observation through the observer's named views
(:mod:`mjenv.encoding`), so it shows exactly what the seat sees: its own hand, every seat's
exposed melds and discards (counts; the order of only the last four), the number of others'
暗杠, voids once revealed, wins, beans, the wall count and the phase. ``render_mode="seat"``
of both envs prints it for the seat to act. The plane reference, ``docs/observations.md``, is
written by :mod:`mjenv.observation_docs`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tiles
from .encoding import _JOY_PHASES, _PHASES, RECENT

REL = ("self", "下家 (next)", "对家 (across)", "上家 (previous)")
WINDS = "ESWN"
WALL_TILES = {27: 108, 34: 144}  # the wall plane is tiles left / all tiles of the game


def _kinds(counts: np.ndarray) -> list[int]:
    """Kinds with multiplicity from a row of counts."""
    return tiles.from_counts(np.rint(counts).astype(int))


def _show(kinds: list[int], style: str) -> str:
    """Tiles as compact notation (``123m``), Chinese names or glyphs."""
    if not kinds:
        return "-"
    return tiles.fmt(kinds) if style == "compact" else tiles.show(kinds, style)


def describe_observation(observation: np.ndarray, observer: Any, style: str = "compact") -> str:
    """One seat's observation as text; ``observer``: the env's encoder (``env.unwrapped.observer``),
    ``style``: ``compact`` (``123m``), ``zh`` or ``unicode``. A uint8 observation
    (``observation_dtype="uint8"``) is read back to its float32 values first."""
    if style not in ("compact", "zh", "unicode"):
        raise ValueError(f"style must be 'compact', 'zh' or 'unicode', got {style!r}")
    v, w = observer.views, observer.width
    if observation.shape != (observer.planes, w):
        raise ValueError(f"observation has shape {observation.shape}; this observer encodes "
                         f"{(observer.planes, w)}: pass the observer of the env it came from")
    o = observer.from_uint8(observation) if observation.dtype == np.uint8 else observation
    joy = "wild" in v

    def row(name: str, r: int = 0) -> np.ndarray:
        return o[v[name].start + r]

    def scalar(name: str, r: int = 0) -> float:
        return float(row(name, r)[0])

    seat = int(np.argmax(o[v["seat"]][:, 0]))
    phases = _JOY_PHASES if joy else _PHASES
    on = [p for i, p in enumerate(phases) if scalar("phase", i) > 0.5]
    head = (f"player_{seat}'s view ({'Joy Mahjong' if joy else 'blood battle'}) · phase {on[0] if on else 'over'}"
            f" · wall {round(scalar('wall') * WALL_TILES[w])}")
    if joy:
        head += (f" · 财神 {_show(_kinds(row('wild')), style)} (indicator {_show(_kinds(row('indicator')), style)})"
                 f" · prevailing {WINDS[int(np.argmax(o[v['prevailing']][:, 0]))]}"
                 f" · seat wind {WINDS[int(np.argmax(o[v['seat_wind']][:, 0]))]}")
    lines = [head]
    hand = _kinds(o[v["hand"]].sum(axis=0))
    drawn = _kinds(row("drawn"))
    if drawn:
        hand.remove(drawn[0])
    text = f"hand {_show(hand, style)}"
    if drawn:
        text += f"  (just drew {_show(drawn, style)}{', a kong replacement' if scalar('after_kong') else ''})"
    lines.append(text)
    claim = _kinds(row("claim"))
    if claim:
        lines.append(f"on the table: {_show(claim, style)} (a discard to claim, or an added kong to rob)")
    for r in range(4):
        marks = [REL[r], f"player_{(seat + r) % 4}"]
        if scalar("dealer", r):
            marks.append("dealer")
        if "void" in v:
            suits = {tiles.suit_of(k) for k in _kinds(row("void", r))}
            if suits:
                suit = suits.pop()
                marks.append("void " + (tiles.SUIT_NAMES_ZH if style == "zh" else tiles.SUITS)[suit])
        won = _kinds(row("won_tile", r))
        if won or ("won" in v and scalar("won", r)):
            marks.append(f"won on {_show(won, style)}" if won else "won")
        if joy and scalar("flowers", r):
            marks.append(f"{round(scalar('flowers', r) * 8)} flower(s)")
        if "escaped" in v and scalar("escaped", r):
            marks.append("escaped (逃跑)")
        beans = scalar("beans", r) * observer.bean_scale
        held = f", holds {scalar('balance', r) * observer.bean_scale:.0f}" if "balance" in v else ""
        lines.append(f"{' · '.join(marks)}  beans {beans:+.0f}{held}")
        melds = [f"碰 {_show([k] * 3, style)}" for k in _kinds(row("pong", r))]
        melds += [f"杠 {_show([k] * 4, style)}" for k in _kinds(row("kong", r))]
        if joy:
            melds += [f"吃 {_show([k, k + 1, k + 2], style)}" for k in _kinds(row("chow", r))]
        n_ankan = round(scalar("ankan_count", r) * 4)
        if r == 0 and n_ankan:
            melds += [f"暗杠 {_show([k] * 4, style)}" for k in _kinds(row("own_ankan"))]
        elif n_ankan:
            melds.append(f"暗杠 ×{n_ankan} (hidden)")
        lines.append(f"  melds {', '.join(melds) or '-'}")
        river = _kinds(row("river", r) * 4)
        recent = [int(np.argmax(row("recent", RECENT * r + i)))
                  for i in range(RECENT) if row("recent", RECENT * r + i).any()]
        lines.append(f"  river {_show(river, style)} ({len(river)} tiles, sorted)"
                     + (f"; the last, oldest first: {_show(recent[::-1], style)}" if recent else ""))
    return "\n".join(lines)
