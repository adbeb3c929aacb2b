"""The search agent (agents/search.py) against three heuristics in the duplicate arena, 1-vs-3,
with the deal-in rates of its seat and of the heuristic in the same seat on the same deals.

    python bench/search_match.py --preset happy --deals 200 --seed 20261207 --out runs/search_happy.json

Deals are played in chunks of ``--chunk`` (each deal: four rotations, the searcher in one seat);
after each chunk the running result is printed and written to ``--out``, so a run stopped early
still reports every finished chunk. The baseline is the same deals with the heuristic in the
searcher's seats (four heuristics). Beans per hand: the searcher's, with the duplicate 95%
interval over per-deal means. Deal-in (点炮) rate: the share of the seat's hands in which it
discarded (or had robbed) a winning tile at least once. With ``--paired`` the search agent with its
defaults also plays the same deals, and the difference of the two (per deal, the option's beans less
the defaults') is reported with its 95% interval; ``--reference FILE`` pairs with the defaults'
per-deal results of an earlier ``--paired`` run on the same seed instead of replaying them (the
agents are deterministic functions of their observations, so a replay gives the same). Results: docs/experiments/2026-12-07-belief-and-search.md.
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
from agents.search import DEFAULT_BELIEF, DEFAULT_EPS, DEFAULT_ROLLOUTS, DEFAULT_Z, WEIGHTINGS, SearchPolicy


def seat_stats(records: list, agent: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per hand, agent ``agent``'s beans and whether it dealt in (records of a 1-vs-3 match)."""
    beans, dealt = [], []
    for r in records:
        seat = r.lineup.index(agent)
        beans.append(r.beans[seat])
        dealt.append(any(source == seat for _, source, _, _ in r.wins))
    return np.array(beans, dtype=np.float64), np.array(dealt)


def interval_half(x: np.ndarray) -> float:
    """Half the 95% interval of the mean of per-deal values (nan for fewer than two)."""
    return t_quantile_975(len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")


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
    p.add_argument("--weighting", default="none", choices=WEIGHTINGS, help="the agent's world weighting")
    p.add_argument("--candidates", type=int, default=None, help="worlds drawn before weighting (default 2 K)")
    p.add_argument("--eps", type=float, default=DEFAULT_EPS, help="the opponents' error rate of the weighting")
    p.add_argument("--paired", action="store_true", help="also play the search's defaults on the same deals")
    p.add_argument("--reference", default=None, help="an earlier --paired run's JSON: pair with its defaults")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    earlier = None
    if a.reference is not None:
        earlier = json.loads(Path(a.reference).read_text())
        if earlier.get("seed") != a.seed or earlier.get("preset") != a.preset or "defaults" not in earlier:
            raise ValueError(f"--reference {a.reference}: not a --paired run of preset {a.preset} and seed {a.seed}")
        if len(earlier["defaults"]["per_deal"]) < a.deals:
            raise ValueError(f"--reference {a.reference}: holds {len(earlier['defaults']['per_deal'])} deals, "
                             f"fewer than --deals {a.deals}")
    agent = SearchPolicy(None if a.belief == "none" else a.belief, rollouts=a.rollouts, z=a.z, safety=a.safety,
                         weighting=a.weighting, candidates=a.candidates, eps=a.eps)
    reference = SearchPolicy(None if a.belief == "none" else a.belief, name="search-defaults")
    ref_beans, ref_think = [], 0.0
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
        half = interval_half(per_deal)
        if a.paired:
            t1 = time.perf_counter()
            ref_beans.append(seat_stats(play_deals("blood_battle", [reference, heuristic], options, a.seed, lo, hi))[0])
            ref_think += time.perf_counter() - t1
        result = {
            "preset": a.preset, "seed": a.seed, "deals": int(hi), "hands": int(4 * hi), "rollouts": a.rollouts, "z": a.z, "safety": a.safety,
            "belief": a.belief, "beans_per_hand": float(per_deal.mean()), "interval": [float(per_deal.mean() - half), float(per_deal.mean() + half)],
            "deal_in_rate": float(np.concatenate(dealt).mean()), "heuristic_deal_in_rate": float(np.concatenate(base_dealt).mean()),
            "heuristic_beans_per_hand": float(np.concatenate(base_beans).mean()),
            "per_deal": [float(x) for x in per_deal], "searched": agent.searched, "changed": agent.changed,
            "ms_per_searched_decision": 1000 * think / max(agent.searched, 1), "elapsed_s": time.perf_counter() - t0,
            "weighting": a.weighting, "candidates": agent.candidates, "eps": a.eps,
        }
        if a.paired or earlier is not None:
            ref = np.concatenate(ref_beans).reshape(-1, 4).mean(axis=1) if a.paired else \
                np.array(earlier["defaults"]["per_deal"][:hi])
            diff = per_deal - ref
            result["defaults"] = {"beans_per_hand": float(ref.mean()), "per_deal": [float(x) for x in ref],
                                  "interval": [float(ref.mean() - interval_half(ref)), float(ref.mean() + interval_half(ref))],
                                  "searched": reference.searched, "changed": reference.changed,
                                  "ms_per_searched_decision": 1000 * ref_think / max(reference.searched, 1),
                                  "from": a.reference or "replayed"}
            if not a.paired:  # not replayed: no counts or times of this run
                result["defaults"].update(searched=None, changed=None, ms_per_searched_decision=None)
            result["paired_difference"] = {"mean": float(diff.mean()), "interval": [float(diff.mean() - interval_half(diff)),
                                                                                    float(diff.mean() + interval_half(diff))]}
        Path(a.out).write_text(json.dumps(result, indent=1))
        print(f"{hi} deals: {result['beans_per_hand']:+.2f} [{result['interval'][0]:+.2f}, {result['interval'][1]:+.2f}] "
              f"beans/hand; deal-in {result['deal_in_rate']:.1%} (heuristic {result['heuristic_deal_in_rate']:.1%}); "
              f"{agent.changed}/{agent.searched} changed; {result['ms_per_searched_decision']:.0f} ms/search; "
              f"{result['elapsed_s']:.0f} s", flush=True)
        if "paired_difference" in result:
            pd = result["paired_difference"]
            ms = f"; defaults {result['defaults']['ms_per_searched_decision']:.0f} ms/search" if a.paired else ""
            print(f"    defaults {result['defaults']['beans_per_hand']:+.2f}; paired difference {pd['mean']:+.2f} "
                  f"[{pd['interval'][0]:+.2f}, {pd['interval'][1]:+.2f}]{ms}", flush=True)


if __name__ == "__main__":
    main()
