"""What items (道具) are worth: ``heuristic-items`` 1-vs-3 against the heuristic, duplicate deals.

    python examples/items_study.py --deals 2000 --workers 2 --out items_study.json

Each config is a preset and an ``items`` option (S17 of docs/rules-blood-battle.md): an int (that
many of every item) or item names joined by ``+`` (one of each, the others absent: the per-item
ablation and its pairs). The three heuristics never use an item, so the table's beans/hand is the
items' worth to the heuristic-items seat (a table of four heuristics scores 0 by symmetry).
docs/experiments/2026-12-07-what-items-are-worth.md has the results.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from agents.arena.run import run_arena
from mjenv.config import ITEMS

CONFIGS = [("happy", 1), ("qq", 1), ("happy", 2), ("qq", 2),
           ("happy", "toutian"), ("happy", "yihua"), ("happy", "qiankun"), ("happy", "shunfeng"),
           ("qq", "toutian"), ("qq", "yihua"), ("qq", "qiankun"),
           ("happy", "qiankun+toutian"), ("happy", "toutian+yihua")]


def study(preset: str, items: int | str, deals: int, seed: int, workers: int) -> dict[str, Any]:
    """One config's arena run, summarised for the table."""
    option = items if isinstance(items, int) else dict.fromkeys(items.split("+"), 1)
    result = run_arena("blood_battle", ["heuristic-items", "heuristic"], deals=deals, seed=seed, workers=workers,
                       env_options={"preset": preset, "items": option}, progress=False)
    s = result.stats()["heuristic-items"]
    return {"preset": preset, "items": items, "deals": deals, "seed": seed, "elapsed_s": result.elapsed_s,
            "beans": s["mean_beans"], "ci": s["ci_halfwidth"], "win_rate": s["win_rate"],
            "self_draw_rate": s["self_draw_rate"], "deal_in_rate": s["deal_in_rate"], "mean_fan": s["mean_fan"],
            "uses_per_hand": {k: v / s["seat_hands"] for k, v in s["item_uses"].items()}}


def row(r: dict[str, Any]) -> str:
    """A markdown table row."""
    uses = " / ".join(f"{r['uses_per_hand'][k]:.2f}" for k in ITEMS)
    return (f"| {r['preset']} | {r['items']} | {r['deals']} | {r['beans']:+.1f} ± {r['ci']:.1f} | "
            f"{r['win_rate']:.1%} | {r['self_draw_rate']:.1%} | {r['mean_fan']:.2f} | {uses} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=500)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--only", nargs="*", help="config indices to run (default all)", type=int)
    p.add_argument("--out", default="items_study.json")
    args = p.parse_args()
    rows = []
    print("| preset | items | deals | beans/hand ± 95% CI | win | tsumo | fan | uses/hand " + " / ".join(ITEMS) + " |")
    for i, (preset, items) in enumerate(CONFIGS):
        if args.only and i not in args.only:
            continue
        rows.append(study(preset, items, args.deals, args.seed, args.workers))
        print(row(rows[-1]), flush=True)
        with open(args.out, "w") as f:  # after each config: a cut-short run keeps what it measured
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
