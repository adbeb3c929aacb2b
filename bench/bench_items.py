"""What the rule option items (S17) costs the compiled engine: an A/B of ``mjenv.vector`` random
play, items off against ``items=2``, interleaved repeats.

    python bench/bench_items.py --preset happy --tables 256 --steps 400 --repeats 7

Three runs per repeat, all random legal play: ``off`` (the default rules), ``on, unused`` (items
on, the policy draws among the game's own actions only: it keeps 乾坤大挪移 and never uses an
item, so the hands are the default ones and what is measured is the option's overhead: the wider
masks, the 40 item planes, the checks) and ``on, used`` (uniform over every legal action: items
are used whenever drawn, their give/name steps are extra decisions). Decisions per CPU second of
this process (``time.process_time``: the machine is shared), median over the repeats; the ratios
are with items / without. Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mjenv.vector as mv
from mjenv.actions import BLOOD_BATTLE


def decisions_per_s(preset: str, items: bool, use: bool, tables: int, steps: int) -> tuple[float, int]:
    """(decisions per CPU second, episodes ended) of ``steps`` steps after 50 of warm-up."""
    venv = mv.make("blood_battle", tables, copy=False, preset=preset, **({"items": 2} if items else {}))
    obs, _ = venv.reset(seed=0)
    rng = np.random.default_rng(0)

    def act(mask: np.ndarray) -> np.ndarray:
        return mv.random_actions(mask if use else np.ascontiguousarray(mask[:, :BLOOD_BATTLE.n]), rng)

    for _ in range(50):
        obs, *_ = venv.step(act(obs["action_mask"]))
    episodes = 0
    start = time.process_time()
    for _ in range(steps):
        obs, _, term, _, _ = venv.step(act(obs["action_mask"]))
        episodes += int(term.sum())
    return tables * steps / (time.process_time() - start), episodes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", default="happy", choices=("happy", "qq"))
    p.add_argument("--tables", type=int, default=256)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    configs = {"off": (False, False), "on, unused": (True, False), "on, used": (True, True)}
    speed: dict[str, list[float]] = {name: [] for name in configs}
    episodes: dict[str, int] = {}
    for _ in range(args.repeats):  # interleaved, so that the machine's load hits every run alike
        for name, (items, use) in configs.items():
            dps, episodes[name] = decisions_per_s(args.preset, items, use, args.tables, args.steps)
            speed[name].append(dps)
    for name in configs:
        print(f"blood_battle {args.preset} items {name:11s} median {statistics.median(speed[name]):9,.0f} "
              f"decisions/s, runs {[round(x) for x in speed[name]]}, episodes per run {episodes[name]}")
    base = statistics.median(speed["off"])
    for name in ("on, unused", "on, used"):
        print(f"  ratio items {name} / off: {statistics.median(speed[name]) / base:.3f}")


if __name__ == "__main__":
    main()
