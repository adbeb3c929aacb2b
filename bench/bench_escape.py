"""What the rule options escape and bankroll cost the compiled engine: an A/B of ``mjenv.vector``
random play, the default rules against ``escape=True, bankroll=...``, interleaved repeats.

    python bench/bench_escape.py --game blood_battle --preset happy --tables 256 --steps 400 --repeats 7

Two policies, both random legal play: ``uniform`` draws every legal action alike (with the
option, ESCAPE as often as any other action: hands end much sooner, so more deals per step), and
``escape2`` draws a random game action and escapes at 2% of the decisions (hands of about the
default length). Decisions per CPU second of this process (``time.process_time``: the machine is
shared), median over the repeats; the ratio is with the options / without.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import mjenv.vector as mv
from mjenv.games import GAME_NAMES


def actions(mask: np.ndarray, rng: np.random.Generator, policy: str, n_game: int) -> np.ndarray:
    """One action per table: uniform over the legal ones, or (``escape2``) a uniform game action
    and ESCAPE at 2% of the decisions."""
    if policy == "uniform" or mask.shape[1] == n_game:
        return mv.random_actions(mask, rng)
    a = mv.random_actions(np.ascontiguousarray(mask[:, :n_game]), rng)
    a[rng.random(len(a)) < 0.02] = n_game
    return a


def decisions_per_s(game: str, options: dict[str, Any], policy: str, tables: int, steps: int) -> tuple[float, int]:
    """(decisions per CPU second, episodes ended) of ``steps`` steps after 50 of warm-up."""
    venv = mv.make(game, tables, copy=False, **options)
    n_game = 62 if game == "blood_battle" else 76
    obs, _ = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs, *_ = venv.step(actions(obs["action_mask"], rng, policy, n_game))
    episodes = 0
    start = time.process_time()
    for _ in range(steps):
        obs, _, term, _, _ = venv.step(actions(obs["action_mask"], rng, policy, n_game))
        episodes += int(term.sum())
    return tables * steps / (time.process_time() - start), episodes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="blood_battle", choices=GAME_NAMES)
    p.add_argument("--preset", default=None, help="blood battle preset (happy, qq) or Joy room")
    p.add_argument("--bankroll", type=int, default=100_000)
    p.add_argument("--tables", type=int, default=256)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    key = "preset" if args.game == "blood_battle" else "room"
    base = {key: args.preset or ("happy" if args.game == "blood_battle" else "popular")}
    configs = {"default": base, "escape+bankroll": {**base, "escape": True, "bankroll": args.bankroll}}
    for policy in ("uniform", "escape2"):
        speed: dict[str, list[float]] = {name: [] for name in configs}
        episodes: dict[str, int] = {}
        for _ in range(args.repeats):  # interleaved, so that the machine's load hits both alike
            for name, options in configs.items():
                dps, episodes[name] = decisions_per_s(args.game, options, policy, args.tables, args.steps)
                speed[name].append(dps)
        for name in configs:
            print(f"{args.game} {base[key]} {policy:8s} {name:16s} median {statistics.median(speed[name]):9,.0f} "
                  f"decisions/s, runs {[round(x) for x in speed[name]]}, episodes per run {episodes[name]}")
        ratio = statistics.median(speed["escape+bankroll"]) / statistics.median(speed["default"])
        print(f"  ratio with the options / without: {ratio:.3f}")


if __name__ == "__main__":
    main()
