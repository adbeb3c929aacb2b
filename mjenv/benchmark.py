"""Speed and memory benchmarks behind ``mjenv bench`` and ``bench/``.

Random legal play with the observation built at every decision. Each figure is the median of
``repeats`` runs; RLCard's ``mahjong`` (extra ``bench``) is measured in the same run, when it is
installed, and the ratio printed. Not a timed test: numbers depend on the machine.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

from . import games


def _play_mjenv(make: Callable[[], Any], decisions: int, seed: int) -> tuple[int, float]:
    """Play random legal actions for about ``decisions`` decisions; return (count, seconds)."""
    env = make()
    rng = np.random.default_rng(seed)
    done, hand = 0, 0
    start = time.process_time()
    while done < decisions:
        env.reset(seed=seed + hand)
        hand += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            done += 1
    return done, time.process_time() - start


def _play_rlcard(decisions: int, seed: int) -> tuple[int, float]:
    """RLCard mahjong with random legal actions; its state (observation) is built every step."""
    import rlcard

    env = rlcard.make("mahjong", config={"seed": seed})
    rng = np.random.default_rng(seed)
    done = 0
    start = time.process_time()
    while done < decisions:
        state, player = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"].keys())
            state, player = env.step(legal[rng.integers(len(legal))])
            done += 1
    return done, time.process_time() - start


def decisions_per_second(players: dict[str, Callable[[int, int], tuple[int, float]]], decisions: int,
                         repeats: int, progress: bool = False) -> dict[str, float]:
    """Median decisions/s of each player over ``repeats`` rounds.

    One warm-up round first (memo tables fill on first use); each round then runs every player
    once, interleaved, so a passing load on the machine hits all of them alike. ``progress``: a
    bar on stderr, one step per player run.
    """
    from tqdm import tqdm

    with tqdm(total=(repeats + 1) * len(players), unit="run", desc="bench", disable=not progress) as bar:
        for name, play in players.items():
            bar.set_postfix_str(f"warm-up {name}")
            play(max(decisions // 10, 500), 999_999)
            bar.update()
        rates: dict[str, list[float]] = {name: [] for name in players}
        for r in range(repeats):
            for name, play in players.items():
                bar.set_postfix_str(f"repeat {r + 1}/{repeats} {name}")
                n, dt = play(decisions, 1000 * r)
                rates[name].append(n / dt)
                bar.update()
    return {name: statistics.median(v) for name, v in rates.items()}


def memory_per_env(n_envs: int = 1000, preset: str = "happy", game: str = "blood_battle") -> dict[str, float]:
    """RSS growth of ``n_envs`` live, reset ``raw_env`` instances, measured in a fresh process."""
    table = games.game(game)
    code = f"""
import gc, json, resource, sys
import psutil
import {table.env_module} as mod
p = psutil.Process()
gc.collect(); before = p.memory_info().rss
envs = []
for i in range({n_envs}):
    e = mod.raw_env({table.variant_option}={preset!r}); e.reset(seed=i); e.observe(e.agent_selection); envs.append(e)
gc.collect(); after = p.memory_info().rss
print(json.dumps({{"total_mb": after / 2**20, "growth_mb": (after - before) / 2**20}}))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(game: str = "blood_battle", preset: str | None = None, decisions: int = 20000, repeats: int = 3,
        memory: bool = True, progress: bool = False, compiled: bool = True) -> dict[str, Any]:
    """Measure raw_env, env() and RLCard in one run, and with ``compiled`` the same AEC env on the
    compiled engine (``raw_env(backend="compiled")``); return the figures (also printed).

    ``preset``: the blood battle's preset, or Joy Mahjong's room (default: the game's first);
    ``progress``: report each run and the memory measurement on stderr."""
    table = games.game(game)
    if not (isinstance(decisions, int) and decisions >= 1 and isinstance(repeats, int) and repeats >= 1):
        raise ValueError(f"decisions and repeats must be ints >= 1, got {decisions!r} and {repeats!r}")
    kwargs = table.variant_options(preset)
    preset = kwargs[table.variant_option]
    table.raw_env(**kwargs)  # a bad preset or room fails here, naming it, before any timing

    result: dict[str, Any] = {"game": game, "preset": preset, "decisions": decisions, "repeats": repeats}
    players: dict[str, Callable[[int, int], tuple[int, float]]] = {
        "raw_env": lambda n, s: _play_mjenv(lambda: table.raw_env(**kwargs), n, s),
        "env": lambda n, s: _play_mjenv(lambda: table.env(**kwargs), n, s),
    }
    if compiled:
        players["raw_env_compiled"] = lambda n, s: _play_mjenv(lambda: table.raw_env(backend="compiled", **kwargs), n, s)
    if importlib.util.find_spec("rlcard") is not None:
        players["rlcard_mahjong"] = _play_rlcard
    result.update(decisions_per_second(players, decisions, repeats, progress))
    if "rlcard_mahjong" in result:
        for name in ("raw_env", "env", "raw_env_compiled"):
            if name in result:
                result[f"{name}_ratio"] = result[name] / result["rlcard_mahjong"]
    if memory and importlib.util.find_spec("psutil") is not None:
        if progress:
            print("bench: memory of 1,000 live raw_env instances (a fresh process) …", file=sys.stderr, flush=True)
        result["memory_1000_raw_env"] = memory_per_env(1000, preset, game)
    return result


def format_result(r: dict[str, Any]) -> str:
    """A small table of the figures."""
    lines = [f"{r['game']} ({r['preset']}), median of {r['repeats']} x {r['decisions']} decisions, one core"]
    lines.append(f"  raw_env         {r['raw_env']:>10,.0f} decisions/s")
    lines.append(f"  env()           {r['env']:>10,.0f} decisions/s")
    if "raw_env_compiled" in r:
        lines.append(f"  raw_env compiled{r['raw_env_compiled']:>10,.0f} decisions/s (backend='compiled')")
    if "rlcard_mahjong" in r:
        lines.append(f"  RLCard mahjong  {r['rlcard_mahjong']:>10,.0f} decisions/s")
        lines.append(f"  ratio raw_env / RLCard {r['raw_env_ratio']:.2f}x, env() / RLCard {r['env_ratio']:.2f}x"
                     + (f", compiled raw_env / RLCard {r['raw_env_compiled_ratio']:.2f}x"
                        if "raw_env_compiled_ratio" in r else ""))
    else:
        lines.append("  RLCard not installed (pip install -e '.[bench]'): no ratio")
    if "memory_1000_raw_env" in r:
        m = r["memory_1000_raw_env"]
        lines.append(f"  1,000 live raw_env: {m['growth_mb']:.0f} MB growth, {m['total_mb']:.0f} MB process RSS")
    return "\n".join(lines)


# ---------------------------------------------------------------- the compiled batched engine


def _play_vector(venv: Any, steps: int, seed: int) -> tuple[int, float, float]:
    """Random masked play on a reset ``mjenv.vector`` env: (decisions, CPU seconds, wall seconds)."""
    from .vector import random_actions

    obs, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(steps):
        mask = obs["action_mask"]
        obs, *_ = venv.step(random_actions(mask, rng))
    return steps * venv.num_envs, time.process_time() - cpu, time.perf_counter() - wall


def _engine_only(venv: Any, steps: int, seed: int) -> tuple[int, float]:
    """The backend's compiled steps alone (masks kept, no observation, no autoreset or checks):
    (decisions, CPU seconds). Finished hands are dealt again outside the timing."""
    from .vector import random_actions

    b = venv.backend
    venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    tables, delta = np.arange(venv.num_envs), np.zeros((venv.num_envs, 4), dtype=np.int64)
    cpu, done = 0.0, 0
    for i in range(steps):
        actions = random_actions(b.mask, rng)
        start = time.process_time()
        ended = b.step(actions, tables, delta)
        cpu += time.process_time() - start
        done += venv.num_envs
        over = tables[ended]
        if len(over):
            b.start_hands(over, over + seed + 10_000 * (i + 1), np.zeros(len(over), dtype=np.int64))
    return done, cpu


def _fresh_process(code: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``code`` in a new interpreter; its last stdout line is JSON."""
    import os

    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    return json.loads(out.stdout.strip().splitlines()[-1])


def vector_ready_seconds(game: str, options: dict[str, Any], cache_dir: str | None = None) -> float:
    """Seconds from a new process's ``import mjenv.vector`` to its first stepped batch (the JIT
    compile, cold with an empty ``cache_dir``, else from numba's on-disk cache)."""
    code = f"""
import json, time
start = time.perf_counter()
import numpy as np
import mjenv.vector as mv
v = mv.make({game!r}, 4, **{options!r})
obs, _ = v.reset(seed=0)
v.step(obs["action_mask"].argmax(axis=1))
v.state()
print(json.dumps({{"seconds": time.perf_counter() - start}}))
"""
    return _fresh_process(code, {"NUMBA_CACHE_DIR": cache_dir} if cache_dir else None)["seconds"]


def vector_memory(game: str, options: dict[str, Any], num_envs: int = 10_000) -> dict[str, float]:
    """Resident memory of a process holding ``num_envs`` tables after 20 steps (fresh process)."""
    code = f"""
import json
import numpy as np, psutil
p = psutil.Process()
import mjenv.vector as mv
v = mv.make({game!r}, 2, **{options!r}); v.reset(seed=0)  # compiled code and tables loaded
before = p.memory_info().rss
v = mv.make({game!r}, {num_envs}, copy=False, **{options!r})
obs, _ = v.reset(seed=0)
for _ in range(20):
    obs, *_ = v.step(obs["action_mask"].argmax(axis=1))
after = p.memory_info().rss
print(json.dumps({{"total_mb": after / 2**20, "growth_mb": (after - before) / 2**20}}))
"""
    return _fresh_process(code)


def run_vector(game: str = "blood_battle", preset: str | None = None, num_envs: int = 1024, steps: int = 200,
               repeats: int = 3, rlcard_decisions: int = 20000, memory: bool = True,
               compile_times: bool = True, progress: bool = False) -> dict[str, Any]:
    """``mjenv bench --vector``: the compiled batched engine against RLCard, measured in one run.

    Decisions/s of random masked play with observations on ``num_envs`` tables, one and two
    threads (wall clock, and CPU time for one thread), the engine alone (CPU), RLCard's mahjong
    (CPU, as ``run``), resident memory of 10,000 tables, and the JIT's cold and cached start.
    ``progress``: a bar on stderr over those phases (the cold compile alone takes about a minute).
    """
    import tempfile

    from tqdm import tqdm

    import mjenv.vector as mv

    table = games.game(game)
    for name, value in (("num_envs", num_envs), ("steps", steps), ("repeats", repeats)):
        if not (isinstance(value, int) and value >= 1):
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    options = table.variant_options(preset)
    envs = {t: mv.make(game, num_envs, num_threads=t, copy=False, **options) for t in (1, 2)}
    result: dict[str, Any] = {"game": game, "preset": options[table.variant_option], "num_envs": num_envs, "steps": steps,
                              "repeats": repeats}
    bar = tqdm(total=1 + repeats + memory + 2 * compile_times, unit="phase", desc="bench --vector",
               disable=not progress)
    for venv in envs.values():  # warm-up: compile, fill caches
        _play_vector(venv, 5, 1)
    bar.update()
    runs: dict[str, list[float]] = {"vector_1t_cpu": [], "vector_1t_wall": [], "vector_2t_wall": [],
                                    "engine_only_cpu": [], "rlcard_mahjong": []}
    has_rlcard = importlib.util.find_spec("rlcard") is not None
    for r in range(repeats):  # interleaved, so a passing load on the machine hits all alike
        n, cpu, wall = _play_vector(envs[1], steps, 100 + r)
        runs["vector_1t_cpu"].append(n / cpu)
        runs["vector_1t_wall"].append(n / wall)
        n, _, wall = _play_vector(envs[2], steps, 100 + r)
        runs["vector_2t_wall"].append(n / wall)
        n, cpu = _engine_only(envs[1], steps, 200 + r)
        runs["engine_only_cpu"].append(n / cpu)
        if has_rlcard:
            n, cpu = _play_rlcard(rlcard_decisions, 1000 * r)
            runs["rlcard_mahjong"].append(n / cpu)
        bar.update()
    for venv in envs.values():
        venv.close()
    result.update({k: statistics.median(v) for k, v in runs.items() if v})
    result["two_thread_speedup"] = result["vector_2t_wall"] / result["vector_1t_wall"]
    if has_rlcard:
        result["ratio_1t_cpu_vs_rlcard"] = result["vector_1t_cpu"] / result["rlcard_mahjong"]
    if memory and importlib.util.find_spec("psutil") is not None:
        result["memory_10000_tables"] = vector_memory(game, options)
    bar.update(int(memory))
    if compile_times:
        with tempfile.TemporaryDirectory() as cold:
            result["ready_cold_s"] = vector_ready_seconds(game, options, cold)
        bar.update()
        result["ready_cached_s"] = vector_ready_seconds(game, options)
        bar.update()
    bar.close()
    return result


def format_vector(r: dict[str, Any]) -> str:
    """A small table of ``run_vector``'s figures."""
    lines = [f"mjenv.vector {r['game']} ({r['preset']}), {r['num_envs']} tables, median of {r['repeats']} "
             f"x {r['steps']} steps, random masked play with observations"]
    lines.append(f"  1 thread         {r['vector_1t_cpu']:>12,.0f} decisions/s (CPU time), "
                 f"{r['vector_1t_wall']:,.0f} wall clock")
    lines.append(f"  2 threads        {r['vector_2t_wall']:>12,.0f} decisions/s wall clock "
                 f"({r['two_thread_speedup']:.2f}x one thread)")
    lines.append(f"  engine only      {r['engine_only_cpu']:>12,.0f} decisions/s (CPU, masks, no observations)")
    if "rlcard_mahjong" in r:
        lines.append(f"  RLCard mahjong   {r['rlcard_mahjong']:>12,.0f} decisions/s (CPU); "
                     f"1 thread / RLCard {r['ratio_1t_cpu_vs_rlcard']:.0f}x")
    else:
        lines.append("  RLCard not installed (pip install -e '.[bench]'): no ratio")
    if "memory_10000_tables" in r:
        m = r["memory_10000_tables"]
        lines.append(f"  10,000 tables: {m['growth_mb']:.0f} MB growth, {m['total_mb']:.0f} MB process RSS")
    if "ready_cold_s" in r:
        lines.append(f"  ready to step: {r['ready_cold_s']:.0f} s cold compile, {r['ready_cached_s']:.1f} s from the cache")
    return "\n".join(lines)
