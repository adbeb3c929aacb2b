"""Rollout throughput of the trainer: env plus inference, local backend.

    python bench/bench_rollout.py --workers 2 --repeats 5
    python bench/bench_rollout.py --config configs/beat_heuristic_blood_battle.yaml

Starts the trainer's local rollout workers (``train/backends.py``) with the given config, runs one
warm-up collection, then ``--repeats`` timed collections of ``decisions_per_worker`` learning-policy
decisions per worker. Prints, as medians over the repeats, the decisions per second of every seat
(env steps, each with a network or baseline decision) and of the learning policy alone (the
samples PPO trains on), and their ratio to a single-process raw_env played by uniform random
actions, measured in the same run (the ceiling set by the env alone).
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    """Parse the arguments, run the workers, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a training config (configs/*.yaml); default: the quickstart network")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--decisions-per-worker", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    values = load_yaml(args.config) if args.config else {"channels": 32, "blocks": 2, "envs_per_worker": 16}
    values.update(workers=args.workers, decisions_per_worker=args.decisions_per_worker, progress=False)
    cfg = make_config(values)
    probe = blood_battle_v0.raw_env(**cfg.env_options)
    net = PolicyValueNet(probe.observer.planes, cfg.channels, cfg.blocks, 0, cfg.lookahead)
    weights = all_weights(net)
    workers = LocalWorkers(cfg)
    try:
        workers.collect(0, weights, {}, [])  # warm-up: process start, imports, first batches
        learner, every = [], []
        for update in range(1, args.repeats + 1):
            start = time.perf_counter()
            rollout = workers.collect(update, weights, {}, [])
            seconds = time.perf_counter() - start
            learner.append(len(rollout.action) / seconds)
            every.append(rollout.all_decisions / seconds)
    finally:
        workers.close()
    env_rate = random_play_rate(cfg.env_options, 20_000)
    print(f"network {cfg.channels} channels x {cfg.blocks} blocks, lookahead={cfg.lookahead}, "
          f"{cfg.workers} workers x {cfg.envs_per_worker} envs, medians of {args.repeats}")
    print(f"rollout, every seat:        {statistics.median(every):10,.0f} decisions/s")
    print(f"rollout, learning policy:   {statistics.median(learner):10,.0f} decisions/s")
    print(f"raw_env random play, 1 process: {env_rate:10,.0f} decisions/s "
          f"(rollout/env = {statistics.median(every) / env_rate:.2f})")


if __name__ == "__main__":
    main()
