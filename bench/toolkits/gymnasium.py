"""Gymnasium: SingleSeatVectorEnv (compiled) against SingleSeatEnv (AEC), random masked actions of
the learning seat, three opponents; the figures are the learning seat's steps per second."""

from __future__ import annotations

import gymnasium
import numpy as np

import mjenv  # noqa: F401  (registers the ids)
from mjenv import games

from .common import rate, row


def measure(game: str = "blood_battle", quick: bool = False, tables: int = 256, opponents: str = "random") -> list[dict]:
    """Learner steps/s of the vector view (``tables`` tables) and of the AEC single table."""
    gym_id = games.game(game).gym_id
    repeats, steps, aec_steps = (2, 20, 200) if quick else (5, 200, 2000)
    rng = np.random.default_rng(0)
    rows = []
    for dtype in ("float32", "uint8"):
        envs = gymnasium.make_vec(gym_id, num_envs=tables, opponents=opponents, observation_dtype=dtype)
        state = {"info": envs.reset(seed=0)[1]}

        def play_vector() -> int:
            for _ in range(steps):
                mask = state["info"]["action_mask"]
                state["info"] = envs.step((rng.random(mask.shape) * mask).argmax(axis=1))[4]
            return steps * tables

        play_vector()  # warm-up (compilation is cached, the heuristic's tables fill)
        rows.append(row("gymnasium", f"SingleSeatVectorEnv, {tables} tables, {dtype}", "compiled",
                        rate(play_vector, repeats), f"opponents={opponents}"))
    env = gymnasium.make(gym_id, opponents=opponents)
    single = {"info": env.reset(seed=0)[1]}

    def play_aec() -> int:
        for _ in range(aec_steps):
            action = int(rng.choice(np.flatnonzero(single["info"]["action_mask"])))
            _, _, done, _, single["info"] = env.step(action)
            if done:
                single["info"] = env.reset()[1]
        return aec_steps

    rows.append(row("gymnasium", "SingleSeatEnv, one table", "aec", rate(play_aec, repeats), f"opponents={opponents}"))
    return rows


if __name__ == "__main__":  # python -m toolkits.gymnasium, from bench/
    for r in measure():
        print(r)
