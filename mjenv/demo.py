"""``mjenv demo``: play one seeded hand between random agents, render it, print the bean table."""

from __future__ import annotations

import numpy as np

from . import blood_battle_v0, tiles
from .actions import BLOOD_BATTLE as LAYOUT


def run_demo(seed: int = 0, preset: str = "happy", tile_style: str = "zh", every: int = 0) -> str:
    """Play one hand with uniformly random legal actions; return the rendered story.

    ``every`` > 0 renders the table every that many decisions; the final table is always shown.
    """
    for name, value in (("seed", seed), ("every", every)):
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            raise ValueError(f"run_demo: {name} must be an int >= 0, got {value!r}")
    env = blood_battle_v0.env(preset=preset, render_mode="ansi", tile_style=tile_style)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    raw = env.unwrapped
    parts = [f"blood battle, preset {preset!r}, seed {seed}: four random agents", raw.render()]
    beans = {a: 0 for a in env.possible_agents}
    decisions = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        beans[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        if action != LAYOUT.PASS:  # passes are not worth a line
            parts.append(f"{agent}: {raw.action_name(action)}")
        seen = len(raw.game.events)
        env.step(action)
        decisions += 1
        for e in raw.game.events[seen:]:
            if e["type"] == "pay":
                parts.append(f"  player_{e['from']} pays player_{e['to']} {e['beans']} beans ({e['reason']})")
        if every and decisions % every == 0 and not raw.game.over:
            parts.append(raw.render())
    parts.append(raw.render())
    parts.append(_bean_table(raw.game, beans))
    return "\n".join(parts)


def _bean_table(game, beans: dict[str, int]) -> str:
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
