"""Stable-Baselines3: sb3-contrib's MaskablePPO learning, its own rate (SB3's ``time/fps``: the
steps learnt over the wall time of ``learn()``), on ``make_vec_env(game, 256)`` (compiled) and on
the documented AEC path (one ``SingleSeatEnv`` in a ``DummyVecEnv``, docs/integrations.md), each
on one core (one torch thread, one engine thread). The notes split the compiled rows' time
between the env (``step_wait``), the policy's forward passes while collecting, SB3's update
(``train``: forward, backward, the rollout buffer's copies, Adam) and the rest of SB3's loop.

    python -m toolkits.sb3            # from bench/; or python bench/bench_toolkits.py --toolkits sb3
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

from mjenv.integrations.gymnasium import SingleSeatEnv
from mjenv.integrations.sb3 import make_vec_env

from .common import rate, row

SETTINGS = {"n_steps": 64, "batch_size": 4096, "n_epochs": 2, "policy_kwargs": {"net_arch": [64, 64]}}
"""The compiled rows: 16,384 steps a rollout over 256 tables, 4 minibatches, 2 epochs, SB3's MLP."""
AEC_SETTINGS = {"n_steps": 512, "batch_size": 128, "n_epochs": 2, "policy_kwargs": {"net_arch": [64, 64]}}
"""The AEC row: docs/integrations.md's example for one table."""


def _timed(obj: Any, name: str, spent: dict[str, float]) -> None:
    """Wrap ``obj.name`` to add its wall time to ``spent[name]``."""
    method = getattr(obj, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

    setattr(obj, name, wrapper)


def _learning(model: MaskablePPO, steps: int) -> Callable[[], int]:
    """``play`` for :func:`rate`: ``learn`` ``steps`` more steps, returning how many it learnt."""

    def play() -> int:
        before = model.num_timesteps
        model.learn(steps, reset_num_timesteps=False)
        return model.num_timesteps - before

    return play


def compiled_row(game: str, opponents: str, dtype: str, tables: int, rollouts: int, repeats: int,
                 settings: dict[str, Any]) -> dict:
    """MaskablePPO on ``make_vec_env``: the median rate and where the time went."""
    envs = make_vec_env(game, tables, opponents=opponents, observation_dtype=dtype)
    model = MaskablePPO("MlpPolicy", envs, seed=0, device="cpu", **settings)
    rollout = tables * settings["n_steps"]
    model.learn(rollout)  # warm-up: torch's first passes, the heuristic's tables
    spent: dict[str, float] = {}
    _timed(envs, "step_wait", spent)
    _timed(model.policy, "forward", spent)
    _timed(model, "train", spent)
    start = time.perf_counter()
    steps_per_s = rate(_learning(model, rollouts * rollout), repeats)
    total = time.perf_counter() - start
    shares = {"env": spent["step_wait"], "forward": spent["forward"], "update": spent["train"]}
    shares["other"] = total - sum(shares.values())
    split = ", ".join(f"{k} {v / total:.0%}" for k, v in shares.items())
    epochs, batch, n_steps = settings["n_epochs"], settings["batch_size"], settings["n_steps"]
    return row("sb3", f"MaskablePPO on make_vec_env, {tables} tables, {dtype}", "compiled", steps_per_s,
               f"opponents={opponents}; n_steps={n_steps}, batch_size={batch}, n_epochs={epochs}, "
               f"net {settings['policy_kwargs']['net_arch']}; time: {split}")


def aec_row(game: str, opponents: str, steps: int, repeats: int) -> dict:
    """MaskablePPO on one SingleSeatEnv (the AEC engine) in a DummyVecEnv."""
    env = DummyVecEnv([lambda: SingleSeatEnv(game, opponents=opponents)])
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu", **AEC_SETTINGS)
    model.learn(AEC_SETTINGS["n_steps"])  # warm-up
    steps_per_s = rate(_learning(model, steps), repeats)
    return row("sb3", "MaskablePPO on SingleSeatEnv in a DummyVecEnv", "aec", steps_per_s,
               f"opponents={opponents}; n_steps=512, batch_size=128, n_epochs=2 (docs/integrations.md)")


def measure(game: str = "blood_battle", quick: bool = False, tables: int = 256, torch_threads: int = 1,
            settings: dict[str, Any] | None = None) -> list[dict]:
    """Learner steps/s of MaskablePPO.learn on the compiled VecEnv (random and heuristic
    opponents, float32 and uint8 observations) and on the AEC path, in one run."""
    settings = settings or SETTINGS
    repeats, rollouts, aec_steps = (2, 1, 1024) if quick else (3, 4, 4096)
    threads = torch.get_num_threads()
    torch.set_num_threads(torch_threads)
    try:
        rows = [compiled_row(game, opponents, dtype, tables, rollouts, repeats, settings)
                for opponents in ("random", "heuristic") for dtype in ("float32", "uint8")]
        rows += [aec_row(game, opponents, aec_steps, repeats) for opponents in ("random", "heuristic")]
    finally:
        torch.set_num_threads(threads)
    return rows


if __name__ == "__main__":  # python -m toolkits.sb3, from bench/
    for r in measure():
        print(r)
