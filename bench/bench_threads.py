"""How far two threads can speed up the compiled engine on this machine, and how far the
lockstep ``VectorEnv`` gets: the ceiling behind ``mjenv bench --vector``'s two-thread figure.

    python bench/bench_threads.py --game blood_battle --tables 1024 --steps 200 --repeats 5

Three figures, each the median over repeats of (two threads / one thread), measured in one run:

- ``independent``: each thread plays its half of the tables with its own random policy and never
  waits for the other (the machine's ceiling for this code: cores, memory bandwidth);
- ``barrier``: the same, but both threads meet after every step (the cost of lockstep alone);
- ``VectorEnv``: ``make(..., num_threads=2)`` against ``num_threads=1`` with the caller choosing
  every table's action (the public API; its serial part is the action check, the rewards and
  the hands that ended).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import numpy as np

import mjenv.vector as mv
from mjenv.games import GAME_NAMES
from mjenv.vector import random_actions


def play_halves(venv: mv.env.VectorEnv, steps: int, threads: int, barrier: bool, seed: int) -> float:
    """Seconds for ``steps`` steps of every table, the tables split over ``threads`` free threads."""
    b, n = venv.backend, venv.num_envs
    venv.reset(seed=seed)
    parts = np.array_split(np.arange(n, dtype=np.int64), threads)
    meet = threading.Barrier(threads) if barrier else None

    def loop(part: int, tables: np.ndarray) -> None:
        rng = np.random.default_rng(seed + part)
        delta = np.zeros((n, 4), dtype=np.int64)
        actions = np.zeros(n, dtype=np.int64)
        for i in range(steps):
            actions[tables] = random_actions(b.mask[tables], rng)
            ended = b.step(actions, tables, delta, venv._obs, part=part)
            over = tables[ended]
            if len(over):
                b.start_hands(over, over + 10_000 * (i + 1), np.zeros(len(over), dtype=np.int64), part=part)
                b.observe(over, venv._obs, part)
            if meet is not None:
                meet.wait()

    workers = [threading.Thread(target=loop, args=(p, t)) for p, t in enumerate(parts)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - start


def play_env(venv: mv.env.VectorEnv, steps: int, seed: int) -> float:
    """Seconds for ``steps`` lockstep steps of the public API."""
    obs, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for _ in range(steps):
        obs, *_ = venv.step(random_actions(obs["action_mask"], rng))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="blood_battle", choices=GAME_NAMES)
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    envs = {t: mv.make(args.game, args.tables, num_threads=t, copy=False) for t in (1, 2)}
    play_env(envs[1], 5, 0)  # compile
    play_env(envs[2], 5, 0)
    ratios: dict[str, list[float]] = {"independent": [], "barrier": [], "VectorEnv": []}
    for r in range(args.repeats):
        one = play_halves(envs[2], args.steps, 1, False, r)
        ratios["independent"].append(one / play_halves(envs[2], args.steps, 2, False, r))
        ratios["barrier"].append(one / play_halves(envs[2], args.steps, 2, True, r))
        ratios["VectorEnv"].append(play_env(envs[1], args.steps, r) / play_env(envs[2], args.steps, r))
    print(f"{args.game}, {args.tables} tables, {args.steps} steps, median of {args.repeats}: "
          "two threads / one thread")
    for name, values in ratios.items():
        print(f"  {name:<12} {statistics.median(values):.2f}x   (runs: {', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
