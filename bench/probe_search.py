"""How much a one-step search over heuristic rollouts gains, by what it knows.

    python bench/probe_search.py --deals 100 --rollouts 32 --workers 2
    python bench/probe_search.py --game joy_mahjong --claims --z 1

One seat searches, three compiled heuristics play the others, on the duplicate arena's deals
(every deal in four rotations, the arena's seeds). At each own-turn decision with a choice (not
胡, which the heuristic always takes; with ``--claims`` also each claim window), the searcher
copies its table K times, *resamples* what it must not see, and plays every legal action in each
copy followed by four heuristics to the end of the hand (common random numbers: all actions see
the same K worlds). It plays the action with the best mean bean change when its lead over the
heuristic's own choice exceeds ``z`` standard errors (z = 0: the best mean), else the heuristic's
choice. The kinds of ``--worlds`` (what is redrawn) are described in
``agents/compiled/search.py``, which holds the blood battle's compiled search; Joy Mahjong has
only ``known-hands`` (``agents/compiled/search_joy.py``: the wall is redrawn, the hands are
known), the teacher ``train/distill.py`` labels with.

Prints the searcher's beans per hand with the duplicate 95% interval (per-deal means over the
four rotations), the searched and changed decisions, and the time. A research probe, not a
shipped agent: it reads the engine's state, where a ``Policy`` sees only its observation.
Results are in docs/experiments/2026-12-03-search-probe.md (blood battle) and
docs/experiments/2026-12-03-joy-search-teacher.md (Joy Mahjong).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import mjenv.vector as mv
from agents.arena import deal_seed, lineup, t_quantile_975
from agents.compiled import features as cf
from agents.compiled.search import (MAX_DISCARDS, SHANTEN_COLS, WORLDS, action_values, context,
                                    shanten_counts)
from agents.heuristic import HeuristicPolicy
from mjenv.games import GAME_NAMES
from mjenv.vector.engine import blood_battle as eng
from train.distill import Teacher, teacher


def shanten_profile(preset: str, tables: int = 400, seed: int = 999) -> np.ndarray:
    """Counts of (discards, shanten + 1) of the seats in play over one hand per table of four
    heuristics (the ``inferred`` worlds' opponent model)."""
    venv = mv.make("blood_battle", tables, copy=False, preset=preset)
    heuristic = HeuristicPolicy(rules=venv.backend.rules)
    profile = np.zeros((MAX_DISCARDS, SHANTEN_COLS), np.float64)
    obs, _ = venv.reset(seed=seed)
    active = np.ones(tables, dtype=np.bool_)
    while active.any():
        shanten_counts(venv.backend.st, profile, cf.suit_table())
        actions = heuristic.act_batch(obs["observation"], obs["action_mask"], None)
        obs, _, terminated, _, _ = venv.step(actions, active=active)
        active &= ~terminated
    venv.close()
    return profile


def searcher(game: str, backend: object, world: int, rollouts: int, profile: np.ndarray,
             claims: bool) -> Teacher:
    """The search of ``game`` over ``rollouts`` worlds of kind ``WORLDS[world]`` on ``backend``'s
    table, with the phases it searches (own turns, and claim windows with ``claims``)."""
    k = max(rollouts, 1)
    if game == "joy_mahjong":  # known hands only
        found = teacher(game, backend, k)
    else:
        ctx, scratch = context(backend), eng.new_state(eng.N_ACTIONS * k)
        found = Teacher(HeuristicPolicy(rules=backend.rules), {eng.TURN: "turn", eng.CLAIM: "claim"},
                        eng.HU_A, eng.N_ACTIONS, lambda arrays, t, legal, key: action_values(
                            arrays, t, legal, world, rollouts, key, profile, ctx, scratch))
    kept = {code: name for code, name in found.phase_names.items() if name == "turn" or claims and name == "claim"}
    return found._replace(phase_names=kept)


def play(game: str, options: dict[str, str], world: int, rollouts: int, z: float, seed: int, start: int,
         stop: int, profile: np.ndarray, claims: bool = False) -> tuple[np.ndarray, int, int]:
    """The searcher's beans in each hand of deals ``[start, stop)`` × 4 rotations (deal-major) of
    ``game`` with ``options``, and the decisions searched and changed."""
    n = 4 * (stop - start)
    deal, rotation = start + np.arange(n) // 4, np.arange(n) % 4
    agent_at = np.array([lineup(2, r) for r in range(4)])[rotation]  # 0: the searcher
    venv = mv.make(game, n, copy=False, **options)
    arrays = venv.backend.arrays
    search = searcher(game, venv.backend, world, rollouts, profile, claims)
    phases = np.array(list(search.phase_names))
    obs, info = venv.reset(seed=[deal_seed(seed, int(d)) for d in deal])
    active, beans = np.ones(n, dtype=np.bool_), np.zeros((n, 4))
    decisions = np.zeros((n, 2), dtype=np.int64)  # own turns, claim windows
    searched = changed = 0
    while active.any():
        seat = info["seat"]
        actions = search.heuristic.act_batch(obs["observation"], obs["action_mask"], None)
        mine = active & (agent_at[np.arange(n), seat] == 0) & np.isin(arrays.phase, phases)
        for t in np.flatnonzero(mine) if rollouts else ():
            legal = np.flatnonzero(arrays.mask[t])
            if len(legal) < 2 or arrays.mask[t, search.hu]:
                continue
            claim = search.phase_names[int(arrays.phase[t])] == "claim"
            tag = "claim:" if claim else ""  # own-turn keys as before claims were searched
            key = zlib.crc32(f"{seed},{deal[t]},{rotation[t]},{tag}{decisions[t, claim]}".encode())
            decisions[t, claim] += 1
            values = search.values(arrays, t, legal, key)
            lead = values - values[:, [int(np.flatnonzero(legal == actions[t])[0])]]
            mean = lead.mean(axis=0)
            se = lead.std(axis=0, ddof=1) / np.sqrt(rollouts) if rollouts > 1 else np.zeros(len(legal))
            score = np.where(mean > z * se, mean, 0.0)
            searched += 1
            if score.max() > 0:
                actions[t] = legal[int(np.argmax(score))]
                changed += 1
        obs, _, terminated, _, info = venv.step(actions, active=active)
        for t in np.flatnonzero(terminated & active):
            beans[t] = info["beans"][t]
        active &= ~terminated
    venv.close()
    mine = beans[agent_at == 0]  # one searcher seat per table, in table order
    return mine, searched, changed


def _chunk(args: tuple) -> tuple[np.ndarray, int, int]:
    """``play`` in a worker process."""
    return play(*args)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="blood_battle", choices=GAME_NAMES)
    p.add_argument("--preset", default="happy", choices=("happy", "qq"), help="blood battle preset")
    p.add_argument("--room", default="popular", help="Joy Mahjong room")
    p.add_argument("--deals", type=int, default=100)
    p.add_argument("--seed", type=int, default=12345, help="arena seed (deal d: deal_seed(seed, d))")
    p.add_argument("--rollouts", type=int, default=32, help="worlds K per decision (0: the heuristic itself)")
    p.add_argument("--z", type=float, default=0.0, help="standard errors a lead must exceed")
    p.add_argument("--worlds", nargs="+", choices=WORLDS,
                   help="kinds of worlds (default: all; known-hands for Joy Mahjong and --claims)")
    p.add_argument("--claims", action="store_true", help="also search claim windows (known-hands only)")
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    if a.deals < 2 or a.rollouts < 0 or a.workers < 1:
        p.error("need --deals >= 2 (for an interval), --rollouts >= 0 and --workers >= 1")
    joy = a.game == "joy_mahjong"
    if a.worlds is None:
        a.worlds = ["known-hands"] if joy or a.claims else list(WORLDS)
    if (joy or a.claims) and a.worlds != ["known-hands"]:
        p.error("Joy Mahjong and --claims search only --worlds known-hands")
    options = {"room": a.room} if joy else {"preset": a.preset}
    modelled = {"inferred", "consistent"} & set(a.worlds)
    profile = shanten_profile(a.preset) if modelled else np.zeros((MAX_DISCARDS, SHANTEN_COLS))
    bounds = np.linspace(0, a.deals, a.workers + 1).astype(int)
    table = f"Joy Mahjong ({a.room})" if joy else f"blood battle ({a.preset})"
    print(f"{table}, 1 searcher vs 3 heuristics, {a.deals} deals x 4 rotations, K = {a.rollouts}, "
          f"z = {a.z}, {'turns and claims' if a.claims else 'turns'}, arena seed {a.seed}")
    print("| worlds | beans/hand ± 95% CI | searched | changed | seconds |\n|---|---|---|---|---|")
    for name in a.worlds:
        t0 = time.perf_counter()
        jobs = [(a.game, options, WORLDS.index(name), a.rollouts, a.z, a.seed, int(lo), int(hi), profile, a.claims)
                for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
            parts = list(pool.map(_chunk, jobs))
        per_deal = np.concatenate([m for m, _, _ in parts]).reshape(-1, 4).mean(axis=1)
        half = t_quantile_975(len(per_deal) - 1) * per_deal.std(ddof=1) / np.sqrt(len(per_deal))
        searched, changed = sum(s for _, s, _ in parts), sum(c for _, _, c in parts)
        print(f"| {name} | {per_deal.mean():+.2f} ± {half:.2f} | {searched} | "
              f"{changed / max(searched, 1):.0%} | {time.perf_counter() - t0:.0f} |", flush=True)


if __name__ == "__main__":
    main()
