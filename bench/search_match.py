"""The search agent (agents/search.py) against three heuristics in the duplicate arena, 1-vs-3,
with the deal-in rates of its seat and of the heuristic in the same seat on the same deals.

    python bench/search_match.py --preset happy --deals 200 --seed 20261207 --out runs/search_happy.json

Deals are played in chunks of ``--chunk`` (each deal: four rotations, the searcher in one seat);
after each chunk the running result is printed and written to ``--out``, so a run stopped early
still reports every finished chunk. The baseline is the same deals with the heuristic in the
searcher's seats (four heuristics). Beans per hand: the searcher's, with the duplicate 95%
interval over per-deal means. Deal-in (点炮) rate: the share of the seat's hands in which it
discarded (or had robbed) a winning tile at least once. Results: docs/experiments/2026-12-07-belief-and-search.md.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from agents.arena import t_quantile_975
from agents.arena.vector import play_deals
from agents.registry import load_policy
from agents.search import DEFAULT_BELIEF, DEFAULT_ROLLOUTS, DEFAULT_Z, SearchPolicy


def seat_stats(records: list, agent: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per hand, agent ``agent``'s beans and whether it dealt in (records of a 1-vs-3 match)."""
    beans, dealt = [], []
    for r in records:
        seat = r.lineup.index(agent)
        beans.append(r.beans[seat])
        dealt.append(any(source == seat for _, source, _, _ in r.wins))
    return np.array(beans, dtype=np.float64), np.array(dealt)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="happy", choices=("happy", "qq"))
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--chunk", type=int, default=10)
    p.add_argument("--seed", type=int, default=20261207, help="arena seed (never used in training)")
    p.add_argument("--rollouts", type=int, default=DEFAULT_ROLLOUTS)
    p.add_argument("--z", type=float, default=DEFAULT_Z)
    p.add_argument("--belief", default=str(DEFAULT_BELIEF), help="belief checkpoint, or 'none' for uniform worlds")
    p.add_argument("--safety", type=float, default=None, help="the agent's danger gate (agents/search.py)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    agent = SearchPolicy(None if a.belief == "none" else a.belief, rollouts=a.rollouts, z=a.z, safety=a.safety)
    heuristic = load_policy("heuristic")
    options = {"preset": a.preset}
    beans, dealt, base_dealt, base_beans = [], [], [], []
    t0, think = time.perf_counter(), 0.0
    for lo in range(0, a.deals, a.chunk):
        hi = min(a.deals, lo + a.chunk)
        t1 = time.perf_counter()
        b, d = seat_stats(play_deals("blood_battle", [agent, heuristic], options, a.seed, lo, hi))
        think += time.perf_counter() - t1
        hb, hd = seat_stats(play_deals("blood_battle", [heuristic, heuristic], options, a.seed, lo, hi))
        beans.append(b), dealt.append(d), base_dealt.append(hd), base_beans.append(hb)
        per_deal = np.concatenate(beans).reshape(-1, 4).mean(axis=1)
        half = t_quantile_975(len(per_deal) - 1) * per_deal.std(ddof=1) / np.sqrt(len(per_deal)) if len(per_deal) > 1 else float("nan")
        result = {
            "preset": a.preset, "seed": a.seed, "deals": int(hi), "hands": int(4 * hi), "rollouts": a.rollouts, "z": a.z, "safety": a.safety,
            "belief": a.belief, "beans_per_hand": float(per_deal.mean()), "interval": [float(per_deal.mean() - half), float(per_deal.mean() + half)],
            "deal_in_rate": float(np.concatenate(dealt).mean()), "heuristic_deal_in_rate": float(np.concatenate(base_dealt).mean()),
            "heuristic_beans_per_hand": float(np.concatenate(base_beans).mean()),
            "per_deal": [float(x) for x in per_deal], "searched": agent.searched, "changed": agent.changed,
            "ms_per_searched_decision": 1000 * think / max(agent.searched, 1), "elapsed_s": time.perf_counter() - t0,
        }
        Path(a.out).write_text(json.dumps(result, indent=1))
        print(f"{hi} deals: {result['beans_per_hand']:+.2f} [{result['interval'][0]:+.2f}, {result['interval'][1]:+.2f}] "
              f"beans/hand; deal-in {result['deal_in_rate']:.1%} (heuristic {result['heuristic_deal_in_rate']:.1%}); "
              f"{agent.changed}/{agent.searched} changed; {result['ms_per_searched_decision']:.0f} ms/search; "
              f"{result['elapsed_s']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
