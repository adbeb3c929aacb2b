"""``mjenv play``: a person plays one seat of a hand in the terminal against agents.

Games: the blood battle (``game="blood_battle"``) and Joy Mahjong (``game="joy_mahjong"``).
The person sees only what their seat may see: their own hand, every river and meld (another
seat's 暗杠 face down), the voids once all four are chosen (blood battle), the 财神 and its
indicator, the seat winds and everyone's flowers (Joy Mahjong), wins and beans. Actions are
entered by their number in the action space (listed with English and Chinese names); ``q`` or
end of input quits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import games, tiles
from .actions import BLOOD_BATTLE as LAYOUT
from .actions import ActionLayout
from .engine.core import GameCore
from .render import SEAT_WINDS, render_table
from .narration import describe_event

QUIT_WORDS = ("q", "quit", "exit")


@dataclass
class PlayResult:
    """How a session ended: the bean table, and whether the hand was played to the end."""

    beans: list[int]
    finished: bool
    end_reason: str
    decisions: int


def _policies(opponents: str | Sequence[Any], human: int, game: str = "blood_battle") -> dict[int, Any]:
    """One policy per other seat: a single spec for all three, or three comma-separated/listed."""
    from agents.registry import load_policy  # agents sit above mjenv (docs/layout.md); only play needs them

    specs = [s.strip() for s in opponents.split(",")] if isinstance(opponents, str) else list(opponents)
    if len(specs) == 1:
        specs = specs * 3
    if len(specs) != 3:
        raise ValueError(f"give one opponent for all three seats or three (comma-separated), got {len(specs)}")
    others = [s for s in range(4) if s != human]
    return {seat: load_policy(spec, game) for seat, spec in zip(others, specs)}


HONOUR_EN = {"E": "east", "S": "south", "W": "west", "N": "north", "C": "red dragon",
             "F": "green dragon", "P": "white dragon"}
"""The mjai letters of action names, spelled out: ``discard P`` is 白, not a 筒 (p) tile."""


def _tiles(kinds: Sequence[int], style: str, wild: int | None = None) -> str:
    """Tiles for people; each 财神 (``wild``) marked with ``*``."""
    if not kinds:
        return "-"
    if wild is None or wild not in kinds:
        return tiles.show(kinds, style)
    return (" " if style == "zh" else "").join(tiles.show([k], style) + ("*" if k == wild else "")
                                                for k in sorted(kinds))


def _view(g: GameCore, me: int, style: str) -> str:
    """The table as seat ``me`` sees it: no other seat's concealed tiles, voids once revealed."""
    void = getattr(g, "void", None)  # blood battle
    joy = hasattr(g, "wild")  # Joy Mahjong: 财神, winds, flowers
    revealed = void is not None and all(v >= 0 for v in void)
    lines = [f"wall {g.wall_count}  dealer player_{g.dealer}"]
    if joy:
        lines[0] += (f"  {SEAT_WINDS[g.prevailing_wind]}风圈  财神 {_tiles([g.wild], style)}"
                     f" (indicator {_tiles([g.indicator], style)})")
    for s in range(4):
        marks = ["(you)"] if s == me else []
        if joy:
            marks.append(SEAT_WINDS[g.seat_winds[s]])
        if s == g.dealer:
            marks.append("庄")
        if void is not None and void[s] >= 0 and (revealed or s == me):
            marks.append("缺" + tiles.SUIT_NAMES_ZH[void[s]])
        if joy and g.flowers[s]:
            marks.append("花 " + _tiles(g.flowers[s], style))
        if g.won[s]:
            marks.append("胡 " + _tiles([w.tile for w in g.wins if w.seat == s], style))  # all 一炮多响 winners
        melds = " ".join(_meld(m, style, s == me, joy) for m in g.melds[s]) or "-"
        lines.append(f"{' '.join([f'player_{s}', *marks])}  beans {g.beans[s]:+d}  melds {melds}")
        lines.append(f"  river {' '.join(_tiles([k], style) for k in g.rivers[s]) or '-'}")
    hand = list(g.hands[me])
    drawn = g.drawn if g.current_player == me and g.phase == "turn" else None
    if drawn is not None:
        hand[drawn] -= 1
    wild = g.wild if joy else None
    text = f"your hand: {_tiles(tiles.from_counts(hand), style, wild)}"
    if drawn is not None:
        text += f"   摸 {_tiles([drawn], style, wild)}"
    if joy and g.hands[me][g.wild]:
        text += "   (* = 财神, the wildcard)"
    lines.append(text)
    if g.phase in ("claim", "rob"):
        what = "discard" if g.phase == "claim" else f"{'加杠' if joy else '面下杠'} tile (rob it?)"
        lines.append(f"on the table: {_tiles([g.claim_tile], style)} ({what} of player_{g.claim_from})")
    return "\n".join(lines)


def _meld(m: Any, style: str, own: bool, joy: bool = False) -> str:
    """A meld as others see it: a 暗杠's tile is shown to its owner only."""
    label = {"chow": "吃", "pong": "碰", "kong": "直杠", "addkong": "加杠" if joy else "面下杠",
             "ankan": "暗杠"}[m.kind]
    if m.kind == "ankan" and not own:
        return f"[{label}]"
    return f"[{label} {_tiles(m.kinds(), style)}]"


def _action_list(mask: np.ndarray, style: str, layout: ActionLayout = LAYOUT) -> str:
    """The legal actions, one a line: number, English name, Chinese name."""
    rows = []
    for a in np.flatnonzero(mask):
        zh = layout.name_zh(int(a))
        if style == "unicode" and a < layout.KONG:
            zh = f"打 {tiles.glyph(int(a))}"
        name = layout.name(int(a))
        letter = name.rsplit(" ", 1)[-1]
        if letter in HONOUR_EN:
            name += f" ({HONOUR_EN[letter]})"
        rows.append(f"  [{a:2d}] {name:<24} {zh}")
    return "\n".join(rows)


def ask_action(mask: np.ndarray, input_fn: Callable[[str], str],
               print_fn: Callable[..., None], layout: ActionLayout = LAYOUT) -> int | None:
    """Prompt until a legal action number is entered; None on ``q`` or end of input."""
    legal = [int(a) for a in np.flatnonzero(mask)]
    while True:
        try:
            text = input_fn("your action (number, q to quit): ").strip()
        except EOFError:
            return None
        if text.lower() in QUIT_WORDS:
            return None
        try:
            a = int(text)
        except ValueError:
            print_fn(f"not a number: {text!r}. Enter one of {legal}, or q to quit.")
            continue
        if not 0 <= a < layout.n:
            print_fn(f"{a} is out of range: actions are numbered 0-{layout.n - 1}. Enter one of {legal}.")
            continue
        if not mask[a]:
            print_fn(f"{a} ({layout.name(a)}) is not legal now. Enter one of {legal}.")
            continue
        return a


def bean_table(g: GameCore, me: int) -> str:
    """Per-seat beans and wins of the hand."""
    lines = ["seat            beans  wins"]
    for s in range(4):
        who = f"player_{s}" + (" (you)" if s == me else "")
        won = ", ".join(f"{tiles.name_zh(w.tile)} {'+'.join(f.name for f in w.score.fans)} X={w.score.X}"
                        for w in g.wins if w.seat == s)
        lines.append(f"{who:<15} {g.beans[s]:>+6d}  {won or '-'}")
    lines.append(f"{'total':<15} {sum(g.beans):>+6d}")
    return "\n".join(lines)


def run_play(seat: int = 0, opponents: str | Sequence[Any] = "random", preset: str | None = None,
             seed: int | None = None, tile_style: str = "zh", log_path: str | os.PathLike | None = None,
             input_fn: Callable[[str], str] = input, print_fn: Callable[..., None] = print,
             game: str = "blood_battle", **options: Any) -> PlayResult:
    """Play one hand of ``game`` with a person at ``seat``; ``preset`` defaults to the blood
    battle's ``happy`` (Joy Mahjong: ``standard``), as in every other command; ``seed`` None: a
    fresh one, printed so the hand can be played again; ``options`` go to the env (``mode``,
    ``room``, rule fields)."""
    table = games.game(game)
    if not (isinstance(seat, int) and 0 <= seat < 4):
        raise ValueError(f"seat must be 0-3, got {seat!r}")
    preset = table.preset if preset is None else preset
    policies = _policies(opponents, seat, game)
    drawn_seed = seed is None
    if drawn_seed:
        seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
    env = table.env(preset=preset, tile_style=tile_style, log_path=log_path, **options)
    env.reset(seed=seed)
    raw = env.unwrapped
    layout = raw.layout
    rng = np.random.default_rng(seed)  # the opponents' only randomness: a seed replays the game
    names = ", ".join(f"player_{s} {getattr(p, 'name', p)}" for s, p in policies.items())
    setting = table.variant(preset, raw.rules)
    again = f" (drawn at random; --seed {seed} deals it again)" if drawn_seed else ""
    print_fn(f"{table.title} ({setting}), seed {seed}{again}: you are player_{seat}; opponents {names}")
    shown, decisions = 0, 0  # events printed so far; the person's decisions
    finished = True
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        s = raw.possible_agents.index(agent)
        if s != seat:
            env.step(int(policies[s].act(obs["observation"], obs["action_mask"], rng)))
            continue
        shown = _print_events(raw.game, shown, seat, tile_style, print_fn, game)
        print_fn("")
        print_fn(_view(raw.game, seat, tile_style))
        print_fn("legal actions:")
        print_fn(_action_list(obs["action_mask"], tile_style, layout))
        action = ask_action(obs["action_mask"], input_fn, print_fn, layout)
        if action is None:
            finished = False
            break
        env.step(action)
        decisions += 1
    g = raw.game
    if finished:
        _print_events(g, shown, seat, tile_style, print_fn, game)
        print_fn("")
        print_fn(render_table(g, tile_style))  # the hand is over: every hand face up; its last line ends it
    else:
        print_fn("quit; the hand is not finished. Beans so far:")
        if log_path is not None:
            print_fn(f"no log written to {log_path}: a replay log holds whole hands only")
    print_fn(bean_table(g, seat))
    env.close()
    return PlayResult(list(g.beans), finished, g.end_reason, decisions)


def _print_events(g: GameCore, shown: int, me: int, style: str, print_fn: Callable[..., None],
                  game: str = "blood_battle") -> int:
    """Print the events since ``shown`` as seat ``me`` may see them; return the new count."""
    for ev in g.events[shown:]:
        if ev["type"] in ("start_hand", "end_hand"):  # the table shows the deal; the final table the end
            continue
        text = describe_event(ev, style, viewer=me, game=game)
        if text is not None:
            print_fn(text)
    return len(g.events)
