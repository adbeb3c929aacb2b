"""Self-play trainers for mjenv (torch): PPO for the blood battle, ``python -m train``.

- ``train/config.py``: :class:`TrainConfig`, the documented fields; YAML + command-line loading.
- ``train/ppo.py``: the trainer, top to bottom (rollouts → GAE → PPO → logs → pool → checkpoint → eval).
- ``train/rollout.py``: self-play hands in lockstep envs, reward crediting per seat.
- ``train/pool.py``: the opponent pool of past snapshots with prioritised sampling.
- ``train/backends.py``: where the rollout workers run (local processes, Ray actors, inline).

The network and the agent that plays a checkpoint are in :mod:`agents.neural`; the checkpoint format
(checksums, the atomic write, every check on reading, the resume checks) in :mod:`agents.checkpoint`.
"""

from .config import TrainConfig, make_config, parse_args

__all__ = ["TrainConfig", "make_config", "parse_args"]
