"""Placing any agent on a reference ladder (``mjenv rate``).

Against every rung of the ladder the agent plays two 1-vs-3 duplicate matches, as the rungs did
among themselves (:func:`agents.arena.ladder.pairings`): in one seat against three copies of the
rung, and in three seats against one copy, on deals of its own seed (:data:`RATE_SEED`, not the
ladder's). Its rating is then fitted with the ladder's stored matches
(:func:`agents.arena.rating.place`): the rungs keep their stored ratings, and the interval is a
bootstrap over the agent's deals. With fewer than :data:`MIN_DEALS` deals per match the bootstrap
has too few distinct resamples to say anything: the rating then has no interval (``ci`` null)
and a warning says how many hands are needed.
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
MIN_DEALS = 10
"""Fewest deals per match for an interval: below it a bootstrap over deals has too few distinct
resamples (with 4 deals, 35) for its 2.5% and 97.5% points to mean anything; the rating then
has no interval."""
MAX_HANDS = 10_000_000
"""Most hands per match (``--hands``): 2.5 million deals, days of play against a ladder."""
MAX_BUDGET_S = 7 * 24 * 3600.0
"""Longest ``--budget-s``: a week; longer is a typo, refused before the probes run."""


def check_size(hands: int | None = None, budget_s: float | None = None) -> None:
    """Refuse a run beyond reason before anything is played (ValueError naming the option)."""
    if hands is not None and not 1 <= hands <= MAX_HANDS:
        raise ValueError(f"--hands must be between 1 and {MAX_HANDS:,} (hands per match), got {hands:,}")
    if budget_s is not None and not (0 < budget_s <= MAX_BUDGET_S):
        raise ValueError(f"--budget-s must be more than 0 and at most {MAX_BUDGET_S:.0f} seconds (a week), "
                         f"got {budget_s:g}")


def hands_note(hands: int) -> str | None:
    """What ``--hands`` becomes when it is not a whole number of deals, e.g. ``7 hands -> 8 (2 deals
    of 4 rotations)``; None when it is."""
    deals = hands_to_deals(hands)
    if deals * N_SEATS == hands:
        return None
    plural = "s" if deals > 1 else ""
    return f"{hands:,} hand{'s' if hands > 1 else ''} -> {deals * N_SEATS:,} ({deals:,} deal{plural} of {N_SEATS} rotations)"


def too_few_deals(deals: int) -> str | None:
    """The warning for a run too short to bootstrap an interval (None when it is long enough)."""
    if deals >= MIN_DEALS:
        return None
    return (f"{deals} deal{'s' if deals > 1 else ''} per match {'are' if deals > 1 else 'is'} too few to bootstrap "
            f"an interval: the rating has none; give at least {MIN_DEALS} deals (--hands {MIN_DEALS * N_SEATS})")


def play_both_ways(agent: Any, spec: ladder.LadderSpec, rungs: list[str], deals: int, seed: int, workers: int,
                   log: Any = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """For every rung, the agent's match against three copies of it and the rung's against three of
    the agent; with ``log``, a progress bar per match (``mjenv eval``'s, on stderr) and a line each."""
    out = []
    for rung in rungs:
        ahead = ladder.play_match(spec, agent, rung, deals, seed, workers, progress=log is not None)
        behind = ladder.play_match(spec, rung, agent, deals, seed, workers, progress=log is not None)
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
    return max(PROBE_DEALS, min(int(left / per_deal), MAX_HANDS // N_SEATS))


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
    ci = None if too_few_deals(deals) else [float(x) for x in rating.percentile_interval(samples)]
    others = [r for r in data["rungs"] if r["name"] != spec_name(agent)]  # a rung rated again is not its own neighbour
    below = [r for r in others if r["rating"] <= value]
    above = [r for r in others if r["rating"] > value]
    keys = ("mean_beans", "ci_low", "ci_high", "wins", "ties", "losses", "win_rate", "deal_in_rate", "mean_fan")
    return {
        "schema": SCHEMA, "agent": spec_name(agent), "ladder": spec.name, "game": spec.game,
        "env_options": spec.env_options, "seed": seed, "deals": deals, "hands_per_match": deals * N_SEATS,
        "rating": value, "ci": ci,
        "nearest": {"below": below[-1]["name"] if below else None, "above": above[0]["name"] if above else None},
        "rungs": [{"name": r["name"], "rating": r["rating"], "ci": r["ci"], "vs": {key: ahead[key] for key in keys},
                   "rung_vs_agent": {key: behind[key] for key in keys}}
                  for r, (ahead, behind) in zip(data["rungs"], played)],
        "interval": (f"95% percentile bootstrap over the agent's deals ({rating.BOOTSTRAP} refits), rungs fixed"
                     if ci else f"none: {too_few_deals(deals)}"),
        "elapsed_s": time.perf_counter() - start,
        "matches": [m for pair in played for m in pair],
    }


def placement(result: dict[str, Any]) -> str:
    """Where the rating lies among the rungs: ``between random (39) and heuristic-novoid (754)``,
    ``below every rung (lowest: ...)`` or ``above every rung (highest: ...)``."""
    near, rated = result["nearest"], {r["name"]: r["rating"] for r in result["rungs"]}
    below, above = (f"{near[side]} ({rated[near[side]]:.0f})" if near[side] else None for side in ("below", "above"))
    every = "every other rung" if result["agent"] in rated else "every rung"  # its own rung is no neighbour
    if below and above:
        return f"between {below} and {above}"
    if above:
        return f"below {every} (lowest: {above})"
    return f"above {every} (highest: {below})" if below else "no rung to compare with"


def format_rating(result: dict[str, Any]) -> str:
    """The rating, where it lies among the rungs and the agent's results against each rung, for the terminal."""
    ci = result["ci"]
    interval = f"[{ci[0]:.0f}, {ci[1]:.0f}] (95% CI)" if ci else "(no interval: too few deals)"
    lines = [f"{result['agent']} on {result['ladder']}: rating {result['rating']:.0f} {interval}; "
             f"{placement(result)}",
             f"{result['deals']:,} deal{'s' if result['deals'] > 1 else ''} × 4 rotations per match, both ways "
             f"against each rung, seed {result['seed']}, "
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
    """A match's beans per hand with its interval (none from a single deal), and its wins, ties
    and losses per deal."""
    interval = "" if v["ci_low"] is None else f" [{v['ci_low']:+.2f}, {v['ci_high']:+.2f}]"
    return f"{v['mean_beans']:+.2f}{interval}, {v['wins']}/{v['ties']}/{v['losses']}"


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
    cis = [r["ci"] for r in rungs] + [result["ci"] or [result["rating"]] * 2]  # no interval: a bare point
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

