"""Steps/s of every toolkit view of docs/integrations.md, the AEC path and the compiled path of
each, measured in one run on the same machine (the table of docs/integrations.md).

    python bench/bench_toolkits.py                       # every toolkit, blood battle
    python bench/bench_toolkits.py --toolkits gymnasium sb3 --game joy_mahjong --quick

Each toolkit's module under ``bench/toolkits/`` measures its own paths (``measure(game, quick)``,
medians of repeats); this script runs them one after another and prints one Markdown table with
the compiled/AEC ratio per toolkit. ``--json F`` also writes the rows.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time

from mjenv.games import GAME_NAMES

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TOOLKITS = ("gymnasium", "sb3", "torchrl", "rllib", "pettingzoo", "selfplay")


def counterpart(compiled: dict, rows: list[dict]) -> dict | None:
    """The same toolkit's AEC row with the same opponents (the notes' first field), else its first."""
    aec = [x for x in rows if x["toolkit"] == compiled["toolkit"] and x["engine"] == "aec"]
    setting = compiled["notes"].split(";")[0]
    same = [x for x in aec if x["notes"].split(";")[0] == setting]
    return (same or aec or [None])[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toolkits", nargs="+", default=list(TOOLKITS), choices=TOOLKITS)
    parser.add_argument("--game", default="blood_battle", choices=GAME_NAMES)
    parser.add_argument("--quick", action="store_true", help="few, short repeats (a smoke test)")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    rows = []
    for name in args.toolkits:
        start = time.perf_counter()
        module = importlib.import_module(f"toolkits.{name}")
        got = module.measure(args.game, quick=args.quick)
        rows += got
        print(f"{name}: {len(got)} paths in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    print(f"{args.game}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d')}\n")
    print("| toolkit | path | engine | steps/s | vs the toolkit's AEC path | notes |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ratio = ""
        if r["engine"] == "compiled":
            aec = counterpart(r, rows)
            ratio = f"{r['steps_per_s'] / aec['steps_per_s']:.1f}×" if aec else ""
        print(f"| {r['toolkit']} | {r['path']} | {r['engine']} | {r['steps_per_s']:,.0f} | {ratio} | {r['notes']} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
