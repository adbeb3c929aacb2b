"""Decisions/s of parameter-shared self-play: ``SelfPlayVectorEnv`` on the compiled engine against
the PettingZoo AEC env, both with uniformly random legal actions.

    python bench/toolkits/selfplay.py [--game joy_mahjong] [--quick]

Each figure is the median over a few interleaved repeats of CPU-time rates
(``mjenv.benchmark.decisions_per_second``: a shared machine's other work counts less); a
decision is one seat's choice with its observation built. The AEC path steps one table with
``agent_iter``/``last``; the compiled path steps ``num_envs`` tables per call and credits each
seat's rewards; the raw ``mjenv.vector.make`` env it wraps is measured too, to show what the
crediting costs.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import mjenv.vector as mv
from mjenv import games
from mjenv.benchmark import _play_mjenv, decisions_per_second
from mjenv.vector import SelfPlayVectorEnv, random_actions

COMPILED_PER_AEC = 20
"""The compiled paths play this many times the AEC path's decisions per repeat (similar seconds)."""


def batched_play(env: Any, decisions: int, seed: int) -> tuple[int, float]:
    """Random legal play on a batched env (the self-play view or the raw one) for about
    ``decisions`` decisions: (decisions, CPU seconds)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = max(1, decisions // env.num_envs)
    start = time.process_time()
    for _ in range(steps):
        env.step(random_actions(env.action_masks(), rng))
    return steps * env.num_envs, time.process_time() - start


def measure(game: str = "blood_battle", quick: bool = False) -> list[dict]:
    """The AEC path, the view and the raw env underneath, interleaved, median of the repeats."""
    repeats, decisions, num_envs = (2, 2_000, 256) if quick else (5, 10_000, 1024)
    view, raw = SelfPlayVectorEnv(game, num_envs), mv.make(game, num_envs)
    rates = decisions_per_second({
        "aec": lambda d, seed: _play_mjenv(games.game(game).env, d, seed),
        "view": lambda d, seed: batched_play(view, COMPILED_PER_AEC * d, seed),
        "raw": lambda d, seed: batched_play(raw, COMPILED_PER_AEC * d, seed),
    }, decisions, repeats)
    compiled_notes = (f"decisions/s (CPU time, one thread), median of {repeats} repeats of "
                      f"{COMPILED_PER_AEC * decisions:,} decisions")
    return [
        {"toolkit": "selfplay", "path": f"{game}_v0.env() agent_iter/last, random legal actions, 1 table",
         "engine": "aec", "steps_per_s": rates["aec"],
         "notes": f"decisions/s (CPU time), median of {repeats} repeats of {decisions:,} decisions"},
        {"toolkit": "selfplay", "path": f"SelfPlayVectorEnv({game!r}, {num_envs}), random legal actions",
         "engine": "compiled", "steps_per_s": rates["view"], "notes": f"{compiled_notes}; rewards credited per seat"},
        {"toolkit": "selfplay", "path": f"mjenv.vector.make({game!r}, {num_envs}) underneath, random legal actions",
         "engine": "compiled", "steps_per_s": rates["raw"],
         "notes": f"{compiled_notes}; the raw env the view wraps (every seat's rewards, no crediting)"},
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="blood_battle", choices=games.GAME_NAMES)
    parser.add_argument("--quick", action="store_true", help="fewer and shorter repeats")
    cli = parser.parse_args()
    rows = measure(cli.game, cli.quick)
    for row in rows:
        print(f"{row['engine']:>8}  {row['steps_per_s']:>12,.0f} decisions/s  {row['path']}  ({row['notes']})")
    print(f"compiled / aec: {rows[1]['steps_per_s'] / rows[0]['steps_per_s']:.0f}x")
