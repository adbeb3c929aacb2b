"""PettingZoo: the Parallel env against the AEC env, one table each, random legal actions of every
seat asked, in the same run. Both run on the readable engine (there is no compiled path), so
both rows are ``aec``. A Parallel step takes every deciding seat's action at once (several AEC
steps in a claim window or 定缺) and returns all four observations; the notes give both views'
decisions per second, the quantity to compare."""

from __future__ import annotations

import importlib

import numpy as np

from mjenv import games

from .common import rate, row


def _parallel_player(env, rng: np.random.Generator, steps: int, counts: dict):
    """A function that plays ``steps`` Parallel steps and returns them, counting decisions."""
    state = {"obs": env.reset(seed=0)[0]}

    def play() -> int:
        for _ in range(steps):
            obs = state["obs"]
            actions = {}
            for agent, o in obs.items():
                legal = np.flatnonzero(o["action_mask"])
                if legal.size > 1:  # a deciding seat; the others wait (their one action is the no-op)
                    actions[agent] = int(legal[rng.integers(legal.size)])
            counts["decisions"] += len(actions)
            state["obs"] = env.step(actions)[0]
            if not env.agents:
                state["obs"] = env.reset()[0]
        counts["steps"] += steps
        return steps

    return play


def _aec_player(env, rng: np.random.Generator, steps: int):
    """A function that plays ``steps`` AEC steps (one decision each) through ``last()``."""
    env.reset(seed=0)

    def play() -> int:
        for _ in range(steps):
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.reset()
                obs = env.last()[0]
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
        return steps

    return play


def measure(game: str = "blood_battle", quick: bool = False) -> list[dict]:
    """Steps/s of ``parallel_env`` and of ``env`` (the wrapped AEC env), median of repeats."""
    module = importlib.import_module(games.game(game).env_module)
    repeats, steps = (2, 300) if quick else (5, 3000)
    rng = np.random.default_rng(0)
    counts = {"steps": 0, "decisions": 0}
    parallel = _parallel_player(module.parallel_env(), rng, steps, counts)
    parallel()  # warm-up (lookup caches of the rules)
    counts.update(steps=0, decisions=0)
    parallel_rate = rate(parallel, repeats)
    per_step = counts["decisions"] / counts["steps"]
    aec_rate = rate(_aec_player(module.env(), rng, steps), repeats)
    return [
        row("pettingzoo", "parallel_env, one table", "aec", parallel_rate,
            f"{per_step:.2f} decisions per step: {parallel_rate * per_step:,.0f} decisions/s; "
            "all four observations per step"),
        row("pettingzoo", "env (AEC), one table", "aec", aec_rate,
            "one decision per step, the acting seat's observation (last())"),
    ]


if __name__ == "__main__":  # python -m toolkits.pettingzoo, from bench/
    for r in measure():
        print(r)
