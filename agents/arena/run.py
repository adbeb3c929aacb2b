"""``run_arena``: an arena run from its arguments, on either backend, in one process or several.

**Backends.** One code path (:mod:`agents.arena.vector`): a worker's deals are dealt on four
tables each of a batched env of :mod:`mjenv.vector` and played in lockstep, each policy choosing
for all its tables in one ``act_batch`` call. ``backend="compiled"`` (the default) plays on the
compiled engine; ``backend="reference"`` on the readable one, which also writes replay logs
(``log_dir``). Both give the same records for every policy that follows the ``Policy``
protocol, and the same as the AEC env hand by hand (:mod:`agents.arena.aec`; tested).
``engine="vector" | "aec"`` is the deprecated name of ``backend="compiled" | "reference"``.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Sequence

from agents.registry import load_policy
from mjenv.config import as_dict

from . import aec, vector
from .logs import check_log_dir
from .protocol import N_SEATS, HandRecord, lineup
from .results import ArenaResult, agent_labels

BACKENDS = ("compiled", "reference")
"""``compiled``: the compiled engine; ``reference``: the readable engine (replay logs)."""

ENGINES = {"vector": "compiled", "aec": "reference"}
"""Deprecated (mjenv 0.1; removed in 0.2): the old ``engine`` names and the backend each now means."""


def _play_deals(game: str, agent_specs: Sequence[Any], env_options: dict[str, Any], seed: int,
                start: int, stop: int, backend: str, log_dir: str | os.PathLike | None = None,
                on_deal: Callable[[int], None] | None = None, worker: bool = False) -> list[HandRecord]:
    """Worker entry point (top level, so spawn can pickle it): deals [start, stop), 4 rotations
    each, in lockstep on ``backend``. A ``worker`` process runs torch on one thread: the workers
    are the parallelism."""
    policies = [load_policy(spec, game) for spec in agent_specs]
    if worker and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return vector.play_deals(game, policies, env_options, seed, start, stop, on_deal=on_deal,
                             names=agent_labels(agent_specs), backend=backend, log_dir=log_dir)


def checked_backend(backend: str | None, engine: str | None, log_dir: Any) -> str:
    """The arena's backend from ``backend`` or the deprecated ``engine`` (a DeprecationWarning);
    by default ``compiled``, or ``reference`` with ``log_dir`` (the logs need the readable engine)."""
    if engine is not None:
        warnings.warn("engine= is deprecated and will be removed in mjenv 0.2: use backend= ('compiled' for "
                      "'vector', 'reference' for 'aec')", DeprecationWarning, stacklevel=3)
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {list(ENGINES)} (deprecated: use backend= "
                             f"{list(BACKENDS)})")
        if backend is not None and backend != ENGINES[engine]:
            raise ValueError(f"engine={engine!r} (backend {ENGINES[engine]!r}) contradicts backend={backend!r}: "
                             f"give backend= alone")
        backend = ENGINES[engine]
    if backend is None:
        backend = "reference" if log_dir is not None else "compiled"
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {list(BACKENDS)}")
    if backend == "compiled" and log_dir is not None:
        raise ValueError("replay logs (log_dir) are kept by the readable engine: use backend 'reference' "
                         "to write them")
    return backend


def run_arena(game: str = "blood_battle", agents: Sequence[Any] = ("heuristic", "random"),
              deals: int = 100, seed: int = 0, workers: int = 1,
              env_options: dict[str, Any] | None = None, progress: bool = True,
              log_dir: str | os.PathLike | None = None, backend: str | None = None,
              desc: str | None = None, engine: str | None = None) -> ArenaResult:
    """Play ``deals`` duplicate sets (each deal × 4 rotations) and collect the records.

    ``agents``: 2 (1-vs-3) or 4 policy names or picklable Policy objects. ``workers`` > 1 runs
    chunks of deals in spawned processes; the result does not depend on it. ``log_dir``: write
    ``deal_00000.jsonl`` … there, one replay log per deal (its four rotations, agents named in the
    headers, every decision with its legal actions and, for neural agents, their probabilities).
    ``backend``: ``"compiled"`` (the compiled engine) or ``"reference"`` (the readable engine), the
    tables of a chunk in lockstep with batched policies either way; default ``compiled``, or
    ``reference`` with ``log_dir`` (the logs need it). Both give the same records. ``desc``: the
    progress bar's label. ``engine``: deprecated, ``"vector"`` for ``backend="compiled"``,
    ``"aec"`` for ``backend="reference"``.
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
    backend = checked_backend(backend, engine, log_dir)
    raw = aec.make_env(game, env_options)  # fails fast on bad options, before any worker starts
    for spec in agents:
        load_policy(spec, game)
    if log_dir is not None:  # made once everything else is known good
        check_log_dir(log_dir)
    # as_dict leaves out the option groups that are off (escape, bankroll): results written
    # before those options existed still pair with new ones (mjenv compare).
    rules = as_dict(raw.rules) if dataclasses.is_dataclass(raw.rules) else {}
    rake = int(getattr(raw.rules, "rake", 0))

    from tqdm import tqdm

    start = time.perf_counter()
    records: list[HandRecord] = []
    with tqdm(total=deals, unit="deal", desc=desc or f"{game} arena", disable=not progress) as bar:
        if workers == 1:
            records = _play_deals(game, agents, env_options, seed, 0, deals, backend, log_dir, on_deal=bar.update)
        else:
            # Two chunks per worker on the compiled engine, which wants large ones (its batches are
            # the chunk's tables); eight on the readable engine, for a smooth bar and load balance.
            size = math.ceil(deals / (workers * (2 if backend == "compiled" else 8)))
            chunks: dict[int, list[HandRecord]] = {}
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futures = {pool.submit(_play_deals, game, agents, env_options, seed, lo, min(deals, lo + size),
                                       backend, log_dir, None, True): lo
                           for lo in range(0, deals, size)}
                for fut in as_completed(futures):
                    lo = futures[fut]
                    chunks[lo] = fut.result()
                    bar.update(len(chunks[lo]) // N_SEATS)
            records = [rec for lo in sorted(chunks) for rec in chunks[lo]]
    elapsed = time.perf_counter() - start
    return ArenaResult(game, agents, agent_labels(agents), seed, deals, env_options, rules, rake,
                       records, workers, elapsed, raw.preset, backend)
