"""TorchRL: ``make_env`` (compiled, 256 tables) against ``PettingZooWrapper`` on the AEC env, both
driven by TorchRL's own masked random rollout. Compiled frames are learning-seat decisions (one per
table per step, the three opponents playing in between); AEC frames are the decisions of any seat
at the one table.

The notes split each compiled rollout: ``SingleSeatVectorEnv`` (the engine and the opponents), the
adapter's own work around it (``_step`` / ``_reset``: tensordicts, the final views), TorchRL's
per-step work (random actions from the mask, the ``ActionMask`` transform, ``step_mdp``, merging
partial resets) and the final stacking of the steps (timed apart on the same loop).
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
from torchrl.envs import ActionMask, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper

from mjenv import games
from mjenv.integrations.torchrl import make_env

from .common import rate, row


class _Clock:
    """Seconds spent inside some methods of one object, while in the ``with`` block."""

    def __init__(self, owner: Any, *names: str) -> None:
        self.owner, self.names, self.seconds = owner, names, 0.0

    def __enter__(self) -> _Clock:
        for name in self.names:
            setattr(self.owner, name, self._timed(getattr(self.owner, name)))
        return self

    def __exit__(self, *exc: Any) -> None:
        for name in self.names:
            delattr(self.owner, name)  # the class's method shows through again

    def _timed(self, method: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed


def _split(env: TransformedEnv, steps: int) -> str:
    """Where one rollout's time goes: SingleSeatVectorEnv (engine and opponents), the TorchRL
    adapter around it, TorchRL per step, the final stack. The loop is
    ``rollout(break_when_any_done=False)``'s own (random action, ``step_and_maybe_reset``), spelled
    out so that the stack of its steps can be timed apart."""
    base = env.base_env
    with _Clock(base, "_step", "_reset") as adapter, _Clock(base.vector_env, "step", "reset") as vector:
        start = time.perf_counter()
        td, steps_td = env.reset(), []
        for _ in range(steps):
            out, td = env.step_and_maybe_reset(env.rand_action(td))
            steps_td.append(out)
        loop = time.perf_counter() - start
    start = time.perf_counter()
    torch.stack(steps_td, dim=1)
    stack = time.perf_counter() - start
    total = loop + stack
    return (f"SingleSeatVectorEnv {vector.seconds / total:.0%}, adapter {(adapter.seconds - vector.seconds) / total:.0%}, "
            f"TorchRL per step {(loop - adapter.seconds) / total:.0%}, stacking {stack / total:.0%}")


def measure(game: str = "blood_battle", quick: bool = False, tables: int = 256, steps: int = 200,
            opponents: str = "random") -> list[dict]:
    """Frames/s of TorchRL's masked random rollout on ``tables`` compiled tables (uint8 and float32
    observations) and on the AEC env through ``PettingZooWrapper``; torch on one thread."""
    repeats, aec_steps = (2, 200) if quick else (5, 2000)
    steps = 20 if quick else steps
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows = []
        for dtype in ("uint8", "float32"):
            env = TransformedEnv(make_env(game, tables, opponents=opponents, observation_dtype=dtype, seed=0),
                                 ActionMask())

            def play() -> int:
                env.rollout(steps, break_when_any_done=False)
                return steps * tables

            play()  # warm-up: compiled code loaded, buffers allocated
            frames = rate(play, repeats)
            rows.append(row("torchrl", f"make_env, {tables} tables, {dtype}, ActionMask rollout({steps})",
                            "compiled", frames, f"{_split(env, steps)}; opponents={opponents}"))
            env.close()
        base = games.game(game).env()
        aec = PettingZooWrapper(env=base, use_mask=True, group_map={"seats": base.possible_agents}, seed=0)

        def play_aec() -> int:
            aec.rollout(aec_steps, break_when_any_done=False)
            return aec_steps

        rows.append(row("torchrl", f"PettingZooWrapper on the AEC env, masked rollout({aec_steps})", "aec",
                        rate(play_aec, repeats), "frames: decisions of any seat at one table"))
        return rows
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":  # python -m toolkits.torchrl, from bench/
    for r in measure():
        print(r)
