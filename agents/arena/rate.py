"""Placing any agent on a reference ladder (``mjenv rate``).

Against every rung of the ladder the agent plays two 1-vs-3 duplicate matches, as the rungs did
among themselves (:func:`agents.arena.ladder.pairings`): in one seat against three copies of the
rung, and in three seats against one copy, on deals of its own seed (:data:`RATE_SEED`, not the
ladder's). Its rating is then fitted with the ladder's stored matches
(:func:`agents.arena.rating.place`): the rungs keep their stored ratings, and the interval is a
bootstrap over the agent's deals.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from mjenv.outputs import atomic_write

from . import ladder, rating
from .protocol import N_SEATS
from .results import spec_name

SCHEMA = "mjenv.rating/1"
RATE_SEED = 4044
"""The arena seed of ``mjenv rate``'s deals: not the ladders' (:data:`agents.arena.ladder.LADDER_SEED`)."""
DEFAULT_HANDS = 2000
"""Hands of each match by default (500 deals × 4 rotations); two matches per rung."""
PROBE_DEALS = 16
"""Deals of every match that time a ``--budget-s`` run before its full length is chosen."""


def play_both_ways(agent: Any, spec: ladder.LadderSpec, rungs: list[str], deals: int, seed: int, workers: int,
                   log: Any = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """For every rung, the agent's match against three copies of it and the rung's against three of the agent."""
    out = []
    for rung in rungs:
        ahead = ladder.play_match(spec, agent, rung, deals, seed, workers)
        behind = ladder.play_match(spec, rung, agent, deals, seed, workers)
        out.append((ahead, behind))
        if log is not None:
            print(f"{spec_name(agent)} vs 3 x {rung}: {ahead['mean_beans']:+.2f} beans/hand; {rung} vs 3 x "
                  f"{spec_name(agent)}: {behind['mean_beans']:+.2f} ({ahead['elapsed_s'] + behind['elapsed_s']:.0f} s)",
                  file=log, flush=True)
    return out


def deals_for_budget(agent: Any, spec: ladder.LadderSpec, data: dict[str, Any], budget_s: float, seed: int,
                     workers: int) -> int:
    """The most deals per match that fit what is left of ``budget_s`` seconds after two timed probes
    (:data:`PROBE_DEALS` and four times as many deals of every match), which tell the fixed cost of
    a run (loading, compiling, small batches) from the cost per deal."""
    rungs = [r["name"] for r in data["rungs"]]
    start = time.perf_counter()
    play_both_ways(agent, spec, rungs, PROBE_DEALS, seed, workers)
    small = time.perf_counter() - start
    play_both_ways(agent, spec, rungs, 4 * PROBE_DEALS, seed, workers)
    large = time.perf_counter() - start - small
    per_deal = max((large - small) / (3 * PROBE_DEALS), 1e-6)
    fixed = max(small - PROBE_DEALS * per_deal, 0.0)
    left = budget_s - (time.perf_counter() - start) - fixed
    return max(PROBE_DEALS, int(left / per_deal))


def rate(agent: Any, spec: ladder.LadderSpec, deals: int, seed: int = RATE_SEED, workers: int = 1,
         log: Any = None) -> dict[str, Any]:
    """Play ``agent`` both ways against every rung of the stored ladder ``spec`` and place it: the
    rating record (``agent``, ``ladder``, ``rating``, ``ci``, ``nearest``, ``rungs`` with the agent's
    beans per hand against three copies of each, ``matches`` with every outcome per deal)."""
    data = ladder.load(spec)
    start = time.perf_counter()
    names = [r["name"] for r in data["rungs"]]
    played = play_both_ways(agent, spec, names, deals, seed, workers, log)
    k = len(names)
    new = [m for j, (ahead, behind) in enumerate(played)
           for m in ((k, j, rating.outcome_array(ahead["outcomes"])), (j, k, rating.outcome_array(behind["outcomes"])))]
    rung_ratings = np.array([r["rating"] for r in data["rungs"]])
    value, samples = rating.place(rung_ratings, ladder.score_matches(names, data["matches"]), new, seed)
    low, high = (float(x) for x in rating.percentile_interval(samples))
    others = [r for r in data["rungs"] if r["name"] != spec_name(agent)]  # a rung rated again is not its own neighbour
    below = [r for r in others if r["rating"] <= value]
    above = [r for r in others if r["rating"] > value]
    keys = ("mean_beans", "ci_low", "ci_high", "wins", "ties", "losses", "win_rate", "deal_in_rate", "mean_fan")
    return {
        "schema": SCHEMA, "agent": spec_name(agent), "ladder": spec.name, "game": spec.game,
        "env_options": spec.env_options, "seed": seed, "deals": deals, "hands_per_match": deals * N_SEATS,
        "rating": value, "ci": [low, high],
        "nearest": {"below": below[-1]["name"] if below else None, "above": above[0]["name"] if above else None},
        "rungs": [{"name": r["name"], "rating": r["rating"], "ci": r["ci"], "vs": {key: ahead[key] for key in keys},
                   "rung_vs_agent": {key: behind[key] for key in keys}}
                  for r, (ahead, behind) in zip(data["rungs"], played)],
        "interval": f"95% percentile bootstrap over the agent's deals ({rating.BOOTSTRAP} refits), rungs fixed",
        "elapsed_s": time.perf_counter() - start,
        "matches": [m for pair in played for m in pair],
    }


def format_rating(result: dict[str, Any]) -> str:
    """The rating, its nearest rungs and the agent's results against each rung, for the terminal."""
    near = result["nearest"]
    where = " and ".join(f"{side} {near[side]}" for side in ("below", "above") if near[side]) or "no rung"
    lines = [f"{result['agent']} on {result['ladder']}: rating {result['rating']:.0f} "
             f"[{result['ci'][0]:.0f}, {result['ci'][1]:.0f}] (95% CI); nearest rungs: {where}",
             f"{result['deals']:,} deals × 4 rotations per match, both ways against each rung, seed {result['seed']}, "
             f"{result['elapsed_s']:.0f} s", "",
             f"| rung | rung rating [95% CI] | {result['agent']} vs 3 × rung: beans/hand [95% CI], W/T/L | "
             f"rung vs 3 × {result['agent']} |",
             "|---|---|---|---|"]
    for r in reversed(result["rungs"]):
        ahead, behind = r["vs"], r["rung_vs_agent"]
        lines.append(f"| `{r['name']}` | {r['rating']:.0f} [{r['ci'][0]:.0f}, {r['ci'][1]:.0f}] | {_match(ahead)} | "
                     f"{_match(behind)} |")
    return "\n".join(lines)


def _match(v: dict[str, Any]) -> str:
    """A match's beans per hand with its interval, and its wins, ties and losses per deal."""
    return f"{v['mean_beans']:+.2f} [{v['ci_low']:+.2f}, {v['ci_high']:+.2f}], {v['wins']}/{v['ties']}/{v['losses']}"


def plot(result: dict[str, Any], path: str) -> None:
    """PNG: the rungs' ratings with their intervals and the agent's, on one axis."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rungs = result["rungs"]
    fig = Figure(figsize=(7, 0.5 * len(rungs) + 1.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    names = [r["name"] for r in rungs] + [f"{result['agent']} (rated)"]
    values = [r["rating"] for r in rungs] + [result["rating"]]
    cis = [r["ci"] for r in rungs] + [result["ci"]]
    y = np.arange(len(names))
    err = np.array([[v - lo for v, (lo, _) in zip(values, cis)], [hi - v for v, (_, hi) in zip(values, cis)]])
    colours = ["tab:blue"] * len(rungs) + ["tab:red"]
    for i in range(len(names)):
        ax.errorbar(values[i], y[i], xerr=err[:, i:i + 1], fmt="o", color=colours[i], capsize=4)
    ax.set_yticks(y, names)
    ax.set_xlabel("rating (heuristic = 1000; 95% intervals)")
    ax.set_title(f"{result['agent']} on {result['ladder']}", fontsize=10)
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png")


def hands_to_deals(hands: int) -> int:
    """Deals (× 4 rotations) that give at least ``hands`` hands."""
    return math.ceil(hands / N_SEATS)

