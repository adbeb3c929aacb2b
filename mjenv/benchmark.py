"""Speed and memory benchmarks behind ``mjenv bench`` and ``bench/``.

Random legal play with the observation built at every decision. Each figure is the median of
``repeats`` runs; RLCard's ``mahjong`` (extra ``bench``) is measured in the same run, when it is
installed, and the ratio printed. Not a timed test: numbers depend on the machine.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np


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


GAMES = {"blood_battle": ("blood_battle_v0", "preset", "happy"), "joy_mahjong": ("joy_mahjong_v0", "room", "popular")}
"""game -> (env module, the option ``preset`` names, its default)."""


def memory_per_env(n_envs: int = 1000, preset: str = "happy", game: str = "blood_battle") -> dict[str, float]:
    """RSS growth of ``n_envs`` live, reset ``raw_env`` instances, measured in a fresh process."""
    module, option, _ = GAMES[game]
    code = f"""
import gc, json, resource, sys
import psutil
from mjenv import {module} as mod
p = psutil.Process()
gc.collect(); before = p.memory_info().rss
envs = []
for i in range({n_envs}):
    e = mod.raw_env({option}={preset!r}); e.reset(seed=i); e.observe(e.agent_selection); envs.append(e)
gc.collect(); after = p.memory_info().rss
print(json.dumps({{"total_mb": after / 2**20, "growth_mb": (after - before) / 2**20}}))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(game: str = "blood_battle", preset: str | None = None, decisions: int = 20000, repeats: int = 3,
        memory: bool = True, progress: bool = False) -> dict[str, Any]:
    """Measure raw_env, env() and RLCard in one run; return the figures (also printed).

    ``preset``: the blood battle's preset, or Joy Mahjong's room (default: the game's first);
    ``progress``: report each run and the memory measurement on stderr."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; available: {', '.join(GAMES)}")
    if not (isinstance(decisions, int) and decisions >= 1 and isinstance(repeats, int) and repeats >= 1):
        raise ValueError(f"decisions and repeats must be ints >= 1, got {decisions!r} and {repeats!r}")
    module, option, default = GAMES[game]
    mod = importlib.import_module(f"mjenv.{module}")
    preset = default if preset is None else preset
    kwargs = {option: preset}
    mod.raw_env(**kwargs)  # a bad preset or room fails here, naming it, before any timing

    result: dict[str, Any] = {"game": game, "preset": preset, "decisions": decisions, "repeats": repeats}
    players: dict[str, Callable[[int, int], tuple[int, float]]] = {
        "raw_env": lambda n, s: _play_mjenv(lambda: mod.raw_env(**kwargs), n, s),
        "env": lambda n, s: _play_mjenv(lambda: mod.env(**kwargs), n, s),
    }
    if importlib.util.find_spec("rlcard") is not None:
        players["rlcard_mahjong"] = _play_rlcard
    result.update(decisions_per_second(players, decisions, repeats, progress))
    if "rlcard_mahjong" in result:
        result["raw_env_ratio"] = result["raw_env"] / result["rlcard_mahjong"]
        result["env_ratio"] = result["env"] / result["rlcard_mahjong"]
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
    if "rlcard_mahjong" in r:
        lines.append(f"  RLCard mahjong  {r['rlcard_mahjong']:>10,.0f} decisions/s")
        lines.append(f"  ratio raw_env / RLCard {r['raw_env_ratio']:.2f}x, env() / RLCard {r['env_ratio']:.2f}x")
    else:
        lines.append("  RLCard not installed (pip install -e '.[bench]'): no ratio")
    if "memory_1000_raw_env" in r:
        m = r["memory_1000_raw_env"]
        lines.append(f"  1,000 live raw_env: {m['growth_mb']:.0f} MB growth, {m['total_mb']:.0f} MB process RSS")
    return "\n".join(lines)
