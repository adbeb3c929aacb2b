"""Rollout throughput of the trainer: env plus inference, local backend, both env backends in one run.

    python bench/bench_rollout.py --workers 2 --repeats 5
    python bench/bench_rollout.py --config configs/beat_heuristic_blood_battle.yaml
    python bench/bench_rollout.py --engines compiled --tables 512     # more tables: bigger network batches
    python bench/bench_rollout.py --engines compiled --rollout-dtypes float32 bfloat16   # workers' precision

Starts the trainer's local rollout workers (``train/backends.py``) with the given config (default:
the quickstart's network and tables), once per engine (``--engines compiled reference``: the
``mjenv.vector`` env on the compiled backend, then on the readable one with ``--reference-envs``
tables per worker), runs one warm-up
collection, then ``--repeats`` timed collections of ``decisions_per_worker`` learning-policy
decisions per worker (once per ``--rollout-dtypes`` entry, the workers' ``rollout_dtype``). Prints, as medians over the repeats, the decisions per second of every seat
(env steps, each with a network or baseline decision) and of the learning policy alone (the
samples PPO trains on), the compiled/reference ratio, and a single-process raw_env played by uniform
random actions, measured in the same run (the AEC env's own ceiling).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np

from mjenv import blood_battle_v0
from train.backends import LocalWorkers
from train.config import load_yaml, make_config
from train.rollout import all_weights
from agents.neural import PolicyValueNet


def random_play_rate(options: dict, decisions: int, seed: int = 0) -> float:
    """Decisions/s of raw_env with uniform random legal actions (one process)."""
    env, rng = blood_battle_v0.raw_env(**options), np.random.default_rng(seed)
    done, hand = 0, 0
    start = time.perf_counter()
    while done < decisions:
        env.reset(seed=hand)
        hand += 1
        while not env.game.over:
            mask = env.observe(env.agent_selection)["action_mask"]
            legal = np.flatnonzero(mask)
            env.step(int(legal[rng.integers(legal.size)]))
            done += 1
    return done / (time.perf_counter() - start)


def measure(cfg, weights: dict, repeats: int) -> tuple[float, float]:
    """Median decisions/s of every seat and of the learning policy over ``repeats`` collections."""
    workers = LocalWorkers(cfg)
    try:
        workers.collect(0, weights, {}, [])  # warm-up: process start, imports, JIT cache, first batches
        learner, every = [], []
        for update in range(1, repeats + 1):
            start = time.perf_counter()
            rollout = workers.collect(update, weights, {}, [])
            seconds = time.perf_counter() - start
            learner.append(len(rollout.action) / seconds)
            every.append(rollout.all_decisions / seconds)
    finally:
        workers.close()
    return statistics.median(every), statistics.median(learner)


def main() -> None:
    """Parse the arguments, run the workers of each engine, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a training config (configs/*.yaml); default: the quickstart network")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--decisions-per-worker", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--engines", nargs="+", choices=["compiled", "reference"], default=["compiled", "reference"])
    parser.add_argument("--reference-envs", type=int, default=16, help="tables per worker on the reference backend")
    parser.add_argument("--tables", type=int, help="tables per worker on the compiled backend (default: the config's)")
    parser.add_argument("--rollout-dtypes", nargs="+", choices=["float32", "bfloat16"], default=["float32"],
                        help="the workers' forward-pass precision (config rollout_dtype), each measured in turn")
    args = parser.parse_args()
    values = load_yaml(args.config) if args.config else {"channels": 32, "blocks": 2, "envs_per_worker": 128}
    values.update(workers=args.workers, decisions_per_worker=args.decisions_per_worker, progress=False)
    if args.tables:
        values["envs_per_worker"] = args.tables
    cfg = make_config(values)
    probe = blood_battle_v0.raw_env(**cfg.env_options)
    net = PolicyValueNet(probe.observer.planes, cfg.channels, cfg.blocks, 0, cfg.lookahead)
    weights = all_weights(net)
    rates = {}
    for engine in args.engines:
        tables = cfg.envs_per_worker if engine == "compiled" else args.reference_envs
        for dtype in args.rollout_dtypes:
            rate = measure(dataclasses.replace(cfg, engine=engine, envs_per_worker=tables, rollout_dtype=dtype),
                           weights, args.repeats)
            rates.setdefault(engine, rate)  # the first dtype's rate is the engine's
            print(f"{engine:9s} {cfg.workers} workers x {tables} tables, {dtype}: every seat {rate[0]:10,.0f} "
                  f"decisions/s, learning policy {rate[1]:10,.0f} decisions/s", flush=True)
    env_rate = random_play_rate(cfg.env_options, 20_000)
    print(f"network {cfg.channels} channels x {cfg.blocks} blocks, lookahead={cfg.lookahead}, "
          f"baselines={cfg.baseline_opponents} p={cfg.baseline_prob}, medians of {args.repeats}")
    if len(rates) == 2:
        print(f"compiled / reference: every seat {rates['compiled'][0] / rates['reference'][0]:.2f}x, "
              f"learning policy {rates['compiled'][1] / rates['reference'][1]:.2f}x")
    print(f"raw_env random play, 1 process: {env_rate:10,.0f} decisions/s")


if __name__ == "__main__":
    main()
