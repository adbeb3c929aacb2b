"""``mjenv demo``: play one seeded hand between random agents, tell every event, print the bean table."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import games, tiles
from .narration import describe_event

DEMO_SEEDS = {"blood_battle": 138, "joy_mahjong": 6}
"""The default seed of each game's demo (default rules), chosen so that the first hand a newcomer
sees shows the scoring: blood battle 138 has two wins, payments and the draw checks; Joy Mahjong 6
is the first seed from 0 with a win. Random agents rarely win a blood battle (the first 70 seeds
are draws, seed 0 one in which no bean moves). Checked by tests/mjenv/test_first_hour.py."""


def run_demo(seed: int | None = None, preset: str | None = None, tile_style: str = "zh", every: int = 0,
             log_path: str | os.PathLike | None = None, game: str = "blood_battle") -> str:
    """Play one hand of ``game`` with uniformly random legal actions; return the story, one line per event.

    Every event is told: draws, discards (a seat's only legal discard, played without asking it,
    is marked ``(forced)``), 碰/杠/吃 with the seat the tile came from, wins and payments.
    ``seed``: default :data:`DEMO_SEEDS` (a hand with a win). ``preset``: the game's variant
    (blood battle: happy or qq; Joy Mahjong: the room, popular, eight_fan or no_fan).
    ``every`` > 0 renders the table every that many decisions; the final table is always shown.
    ``log_path``: also append the hand's replay log there (``mjenv view`` draws it).
    """
    spec = games.game(game)
    seed = DEMO_SEEDS[spec.name] if seed is None else seed
    for name, value in (("seed", seed), ("every", every)):
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            raise ValueError(f"run_demo: {name} must be an int >= 0, got {value!r}")
    variant = spec.variants[0] if preset is None else preset
    if variant not in spec.variants:
        raise ValueError(f"run_demo: {spec.title} plays {', '.join(spec.variants)}, got {variant!r}")
    env = spec.env(**spec.variant_options(variant), render_mode="ansi", tile_style=tile_style, log_path=log_path)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    raw = env.unwrapped
    what = "preset" if spec.variant_option == "preset" else spec.variant_option
    parts = [f"{spec.title}, {what} {variant!r}, seed {seed}: four random agents", raw.render()]
    beans = {a: 0 for a in env.possible_agents}
    decisions, shown, wins = 0, 1, 0  # events told so far (start_hand is the table above)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        beans[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        seat = raw.possible_agents.index(agent)
        env.step(action)
        decisions += 1
        chosen = seat, tiles.name(action) if action < raw.layout.n_kinds else None
        for ev in raw.game.events[shown:]:
            wins += ev["type"] == "hora"
            text = describe_event(ev, tile_style, game=spec.name, wins=wins)
            if ev["type"] == "dahai":
                if (ev["actor"], ev["pai"]) == chosen:
                    chosen = None  # the decision of this step; later discards were the only legal move
                else:
                    text += " (forced)"
            if text is not None:
                parts.append(text)
        shown = len(raw.game.events)
        if every and decisions % every == 0 and not raw.game.over:
            parts.append(raw.render())
    parts.append(raw.render())
    parts.append(_bean_table(raw.game, beans))
    return "\n".join(parts)


def _bean_table(game: Any, beans: dict[str, int]) -> str:
    """Per-seat bean totals and what each win scored."""
    lines = ["", "seat        beans  wins"]
    for seat, (agent, total) in enumerate(beans.items()):
        won = [w for w in game.wins if w.seat == seat]
        what = ", ".join(
            f"{tiles.name_zh(w.tile)} {'+'.join(f.name for f in w.score.fans)} X={w.score.X}" for w in won
        )
        lines.append(f"{agent:<10} {total:>+7d}  {what or '-'}")
    lines.append(f"{'total':<10} {sum(beans.values()):>+7d}")
    return "\n".join(lines)
