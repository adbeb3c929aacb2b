"""Decisions per second of the Python baselines and of their compiled batch copies (agents.compiled).

    python bench/bench_policies.py --repeats 5

Records the observations and masks met in seeded hands played by four heuristic seats (blood
battle, happy preset; Joy Mahjong, popular room), then times, over that pool, the Python ``act``
(one call per decision), the compiled ``act_batch`` one decision at a time (batch 1) and in
batches of ``--batch`` rows; likewise the look-ahead planes (``lookahead`` per observation against
``with_lookahead``). Every path first runs once over the pool untimed, so numba's compilation and
both sides' memo tables are warm. Prints medians over the repeats and the compiled/Python ratios
measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import numpy as np

from agents.heuristic import HeuristicPolicy
from agents.heuristic_joy import JoyHeuristicPolicy
from agents.lookahead import lookahead, with_lookahead
from mjenv import blood_battle_v0, joy_mahjong_v0


def recorded_decisions(raw, policy, decisions: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``decisions`` (observation, mask) pairs of hands played by ``policy`` at every seat."""
    obs, masks, hand = [], [], 0
    rng = np.random.default_rng(seed)
    while len(obs) < decisions:
        raw.reset(seed=seed + hand)
        hand += 1
        while not raw.game.over and len(obs) < decisions:
            o = raw.observe(raw.agent_selection)
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            raw.step(int(policy.act_batch(obs[-1][None], masks[-1][None], rng)[0]))
    return np.stack(obs), np.stack(masks)


def rate(run: Callable[[], None], n: int, repeats: int) -> float:
    """Median decisions/s of ``run`` (``n`` decisions each), after one untimed warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return n / statistics.median(times)


def bench_policy(name: str, policy, obs: np.ndarray, masks: np.ndarray, python_n: int, batch: int,
                 repeats: int) -> dict[str, float]:
    """Python act, compiled batch 1 and compiled batch ``batch`` over the pool (Python on its first
    ``python_n`` rows: it is the slow side)."""
    rng = np.random.default_rng(0)
    n = len(obs)

    def python() -> None:
        for i in range(python_n):
            policy.act(obs[i], masks[i], rng)

    def one() -> None:
        for i in range(n):
            policy.act_batch(obs[i:i + 1], masks[i:i + 1], rng)

    def batched() -> None:
        for i in range(0, n, batch):
            policy.act_batch(obs[i:i + batch], masks[i:i + batch], rng)

    return {"name": name, "python": rate(python, python_n, repeats), "batch 1": rate(one, n, repeats),
            f"batch {batch}": rate(batched, n, repeats)}


def bench_lookahead(obs: np.ndarray, rules, python_n: int, batch: int, repeats: int) -> dict[str, float]:
    """The look-ahead planes, the same three ways."""
    n = len(obs)

    def python() -> None:
        for i in range(python_n):
            lookahead(obs[i], rules)

    def one() -> None:
        for i in range(n):
            with_lookahead(obs[i:i + 1], rules)

    def batched() -> None:
        for i in range(0, n, batch):
            with_lookahead(obs[i:i + batch], rules)

    return {"name": "look-ahead planes", "python": rate(python, python_n, repeats),
            "batch 1": rate(one, n, repeats), f"batch {batch}": rate(batched, n, repeats)}


def main() -> None:
    """Parse the arguments, record the pools, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=8192, help="pool size per game")
    parser.add_argument("--python-decisions", type=int, default=2048,
                        help="rows the Python side is timed on (Joy's Python heuristic is the slowest)")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    blood, joy = blood_battle_v0.raw_env(), joy_mahjong_v0.raw_env()
    blood_policy, joy_policy = HeuristicPolicy(rules=blood.rules), JoyHeuristicPolicy()
    blood_pool = recorded_decisions(blood, blood_policy, args.decisions, args.seed)
    joy_pool = recorded_decisions(joy, joy_policy, args.decisions, args.seed)
    python_n = min(args.python_decisions, args.decisions)
    rows = [
        bench_policy("blood-battle heuristic", blood_policy, *blood_pool, python_n, args.batch, args.repeats),
        bench_policy("Joy heuristic", joy_policy, *joy_pool, python_n, args.batch, args.repeats),
        bench_lookahead(blood_pool[0], blood.rules, python_n, args.batch, args.repeats),
    ]
    big = f"batch {args.batch}"
    print(f"decisions/s, median of {args.repeats} ({args.decisions} recorded decisions per game; "
          f"Python timed on {python_n})")
    ratio = f"x (b={args.batch})"
    print(f"{'':24} {'python':>10} {'batch 1':>10} {big:>11} {'x (b=1)':>8} {ratio:>10}")
    for r in rows:
        print(f"{r['name']:24} {r['python']:10.0f} {r['batch 1']:10.0f} {r[big]:11.0f} "
              f"{r['batch 1'] / r['python']:8.1f} {r[big] / r['python']:10.1f}")


if __name__ == "__main__":
    main()
