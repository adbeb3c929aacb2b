"""``run_arena``: an arena run from its arguments, on either engine, in one process or several.

**Engines.** ``engine="vector"`` (the default) plays on the compiled engine
(:mod:`agents.arena.vector`): a worker's deals are dealt on four tables each and played in
lockstep, each policy choosing for all its tables in one ``act_batch`` call. ``engine="aec"``
plays the reference env one hand at a time (:mod:`agents.arena.aec`); replay logs (``log_dir``)
need it. Both give the same records for every policy that follows the ``Policy`` protocol (tested).
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Sequence

from agents.registry import load_policy
from mjenv.config import as_dict

from . import aec, vector
from .protocol import N_SEATS, HandRecord, lineup
from .results import ArenaResult, agent_labels

ENGINES = ("vector", "aec")
"""``vector``: the compiled engine (:mod:`agents.arena.vector`); ``aec``: the reference env, hand by hand."""


def _play_deals_vector(game: str, agent_specs: Sequence[Any], env_options: dict[str, Any], seed: int,
                       start: int, stop: int, on_deal: Callable[[int], None] | None = None,
                       worker: bool = False) -> list[HandRecord]:
    """Entry point of the compiled engine: deals [start, stop), 4 rotations each, in lockstep.
    A ``worker`` process runs torch on one thread: the workers are the parallelism."""
    policies = [load_policy(spec, game) for spec in agent_specs]
    if worker and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return vector.play_deals(game, policies, env_options, seed, start, stop, on_deal=on_deal,
                             names=agent_labels(agent_specs))


def run_arena(game: str = "blood_battle", agents: Sequence[Any] = ("heuristic", "random"),
              deals: int = 100, seed: int = 0, workers: int = 1,
              env_options: dict[str, Any] | None = None, progress: bool = True,
              log_dir: str | os.PathLike | None = None, engine: str | None = None,
              desc: str | None = None) -> ArenaResult:
    """Play ``deals`` duplicate sets (each deal × 4 rotations) and collect the records.

    ``agents``: 2 (1-vs-3) or 4 policy names or picklable Policy objects. ``workers`` > 1 runs
    chunks of deals in spawned processes; the result does not depend on it. ``log_dir``: write
    ``deal_00000.jsonl`` … there, one replay log per deal (its four rotations, agents named in the
    headers, every decision with its legal actions and, for neural agents, their probabilities).
    ``engine``: ``"vector"`` (the compiled engine, all tables of a chunk in lockstep, batched
    policies) or ``"aec"`` (the reference env, one hand at a time); default ``vector``, or ``aec``
    with ``log_dir`` (the logs need the Python game). Both give the same records. ``desc``: the
    progress bar's label.
    """
    agents = list(agents)
    env_options = dict(env_options or {})
    lineup(len(agents), 0)  # validates the number of agents
    if not (isinstance(deals, int) and deals >= 1):
        raise ValueError(f"deals must be an int >= 1, got {deals!r}")
    if not (isinstance(seed, int) and seed >= 0):
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if engine is None:
        engine = "aec" if log_dir is not None else "vector"
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {list(ENGINES)}")
    if engine == "vector" and log_dir is not None:
        raise ValueError("replay logs (log_dir) need the Python game: use engine 'aec' to write them")
    raw = aec.make_env(game, env_options)  # fails fast on bad options, before any worker starts
    for spec in agents:
        load_policy(spec, game)
    if log_dir is not None:  # made once everything else is known good
        aec.check_log_dir(log_dir)
    # as_dict leaves out the option groups that are off (escape, bankroll): results written
    # before those options existed still pair with new ones (mjenv compare).
    rules = as_dict(raw.rules) if dataclasses.is_dataclass(raw.rules) else {}
    rake = int(getattr(raw.rules, "rake", 0))

    from tqdm import tqdm

    start = time.perf_counter()
    records: list[HandRecord] = []
    with tqdm(total=deals, unit="deal", desc=desc or f"{game} arena", disable=not progress) as bar:
        if workers == 1 and engine == "vector":
            records = _play_deals_vector(game, agents, env_options, seed, 0, deals, on_deal=bar.update)
        elif workers == 1:
            step = max(1, deals // 100)
            for lo in range(0, deals, step):
                hi = min(deals, lo + step)
                records += aec.play_deals(game, agents, env_options, seed, lo, hi, log_dir)
                bar.update(hi - lo)
        else:
            # Small chunks keep both the bar and the load balance smooth; the compiled engine
            # wants large ones (its batches are the chunk's tables).
            if engine == "vector":
                size = math.ceil(deals / (workers * 2))
                play, extra = _play_deals_vector, (None, True)
            else:
                size = max(1, min(25, math.ceil(deals / (workers * 8))))
                play, extra = aec.play_deals, (log_dir,)
            chunks: dict[int, list[HandRecord]] = {}
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futures = {pool.submit(play, game, agents, env_options, seed, lo, min(deals, lo + size), *extra): lo
                           for lo in range(0, deals, size)}
                for fut in as_completed(futures):
                    lo = futures[fut]
                    chunks[lo] = fut.result()
                    bar.update(len(chunks[lo]) // N_SEATS)
            records = [rec for lo in sorted(chunks) for rec in chunks[lo]]
    elapsed = time.perf_counter() - start
    return ArenaResult(game, agents, agent_labels(agents), seed, deals, env_options, rules, rake,
                       records, workers, elapsed, raw.preset, engine)
