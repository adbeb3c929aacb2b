"""``mjenv demo``: play one seeded hand between random agents, tell every event, print the bean table."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import blood_battle_v0, tiles
from .narration import describe_event


def run_demo(seed: int = 0, preset: str = "happy", tile_style: str = "zh", every: int = 0,
             log_path: str | os.PathLike | None = None) -> str:
    """Play one hand with uniformly random legal actions; return the story, one line per event.

    Every event is told: draws, discards (a seat's only legal discard, played without asking it,
    is marked ``(forced)``), 碰/杠 with the seat the tile came from, wins and payments.
    ``every`` > 0 renders the table every that many decisions; the final table is always shown.
    ``log_path``: also append the hand's replay log there (``mjenv view`` draws it).
    """
    for name, value in (("seed", seed), ("every", every)):
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            raise ValueError(f"run_demo: {name} must be an int >= 0, got {value!r}")
    env = blood_battle_v0.env(preset=preset, render_mode="ansi", tile_style=tile_style, log_path=log_path)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    raw = env.unwrapped
    parts = [f"blood battle, preset {preset!r}, seed {seed}: four random agents", raw.render()]
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
            text = describe_event(ev, tile_style, wins=wins)
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
