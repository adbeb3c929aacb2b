"""Observations for people: one seat's observation tensor as text, and the plane reference.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (S).

:func:`describe_observation` decodes an observation through the observer's named views
(:mod:`mjenv.encoding`), so it shows exactly what the seat sees: its own hand, every seat's
exposed melds and discards (counts; the order of only the last four), the number of others'
暗杠, voids once revealed, wins, beans, the wall count and the phase. ``render_mode="seat"``
of both envs prints it for the seat to act.

:func:`observation_docs` writes ``docs/observations.md`` (``python -m mjenv.describe >
docs/observations.md``); a test regenerates it, so the table cannot drift from the encoder.
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
    ``style``: ``compact`` (``123m``), ``zh`` or ``unicode``."""
    if style not in ("compact", "zh", "unicode"):
        raise ValueError(f"style must be 'compact', 'zh' or 'unicode', got {style!r}")
    v, w = observer.views, observer.width
    if observation.shape != (observer.planes, w):
        raise ValueError(f"observation has shape {observation.shape}; this observer encodes "
                         f"{(observer.planes, w)}: pass the observer of the env it came from")
    o = observation
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


# ---------------------------------------------------------------- the plane reference


def plane_table(observer: Any) -> str:
    """A markdown table of the observation planes: index range, view name, meaning, value range,
    and the uint8 form (``observation_dtype="uint8"``): the scale, with the offset where there is one."""
    ranges = observer.ranges()
    scale, offset = observer.uint8_codec
    rows = ["| planes | view | meaning | values | uint8 |", "|---|---|---|---|---|"]
    for name, sl in observer.views.items():
        idx = f"{sl.start}" if sl.stop - sl.start == 1 else f"{sl.start}–{sl.stop - 1}"
        lo, hi = ranges.get(name, (0.0, 1.0))
        values = f"[{lo:g}, {hi:g}]"
        factor, shift = scale[sl.start], offset[sl.start]
        u8 = f"× {factor:g}" + (f" + {shift:g}, clipped" if shift else "")
        rows.append(f"| {idx} | `{name}` | {observer.meanings[name]} | {values} | {u8} |")
    return "\n".join(rows)


def optional_table(observer: Any) -> str:
    """The optional planes of an observer made with every option on, as in :func:`plane_table`,
    with their plane numbers in the observation when they are all there."""
    full = plane_table(observer).split("\n")
    return "\n".join(full[:2] + [row for row in full[2:] if row.split("`")[1] in observer.optional])


def observation_docs() -> str:
    """The text of ``docs/observations.md``, from the encoders of the default envs."""
    from . import blood_battle_v0, joy_mahjong_v0

    bb = blood_battle_v0.raw_env().observer
    joy = joy_mahjong_v0.raw_env().observer
    bb_all = blood_battle_v0.raw_env(escape=True, bankroll=1000).observer
    joy_all = joy_mahjong_v0.raw_env(escape=True, bankroll=1000).observer
    return f"""# Observations

<!-- Generated by `python -m mjenv.describe > docs/observations.md` from the encoders in
mjenv/encoding.py; tests/test_describe.py fails when this file and the encoder differ. -->

Each seat observes one `float32` tensor of shape `(planes, kinds)`: one column per tile kind
(27 for the blood battle: 1m–9m, 1p–9p, 1s–9s; 34 for Joy Mahjong, then E S W N C F P).
"Per relative seat" views have four planes in the order self, 下家 (next), 对家 (across), 上家
(previous). Scalars fill a whole plane with one value. The value ranges below are the bounds of
the observation `Box` (`env.observation_space(agent)["observation"].low/high`). The bean planes
hold the seat's beans of the current hand over `bean_scale`; their bound is the most one hand can
move (`hand_bean_bound` of each env module), shown here for the default rules (it grows with
`room_coefficient` and `rake`).

With `observation_dtype="uint8"` (an option of every env and view) each plane holds the same
values as small integers, a quarter of the bytes: `uint8 = round(value · scale + offset)`, the
scale and offset in the last column, so `(uint8 − offset) / scale` is the float32 value exactly
(`observer.from_uint8`), for every plane but the beans. No byte holds the beans exactly: their
planes keep 1/16 of `bean_scale` and clip beyond [−8, 7.94] (the beans of one hand rarely pass
a few `bean_scale`).

To read one observation as text: `mjenv.describe.describe_observation(obs["observation"],
env.unwrapped.observer)`, or create the env with `render_mode="seat"` and call `env.render()`
(the view of the seat to act).

## Blood battle (`blood_battle_v0`, {bb.planes} × {bb.width}, encoder v{bb.version})

`bean_scale` = one capped win (`6 · 2^(cap_fan−1) · room_coefficient`) = {bb.bean_scale:g} by default.

{plane_table(bb)}

## Joy Mahjong (`joy_mahjong_v0`, {joy.planes} × {joy.width}, encoder v{joy.version})

`bean_scale` = {joy.bean_scale:g} in the popular room by default. Rule IDs (J2…) are anchors of
[the Joy Mahjong rules](rules-joy-mahjong.md).

{plane_table(joy)}

## Optional planes

Two rule options add planes after the default ones; with both off (the default) the shapes above
hold. `escape=True` (blood battle only, S16 of docs/rules-blood-battle.md) adds `escaped`: a Joy Mahjong escape ends the
hand. `bankroll` (either game, B4) adds `balance`, the beans each seat holds, over the same
`bean_scale` as the bean planes; its bound is the sum of the four bankrolls (balances never go
below 0 and their sum only shrinks), here for `bankroll=1000`. `state()` appends the same views
after its default planes, per absolute seat. With both options the blood battle observes
{bb_all.planes} × {bb_all.width} planes and Joy Mahjong {joy_all.planes} × {joy_all.width}:

{optional_table(bb_all)}

Joy Mahjong with `bankroll`:

{optional_table(joy_all)}
"""


if __name__ == "__main__":
    print(observation_docs(), end="")
