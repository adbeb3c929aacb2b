"""What a rollout returns (the kept decisions, the hands, the baselines' demonstrations) and the
lineup codes of who sits where; shared by both rollout paths (``train/rollout.py``,
``train/vector_rollout.py``) and the learner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

N_SEATS = 4
LEARNER = -1
"""Lineup entry of a seat played by the learning policy (snapshots have ids >= 0)."""
TEACHER = -2
"""Lineup entry of the teacher's seats while collecting demonstrations."""
BASELINE = -3
"""Lineup entry of ``cfg.baseline_opponents[i]`` is ``BASELINE - i``."""

Weights = dict[str, np.ndarray]


@dataclass
class HandSummary:
    """One finished hand: who sat where, the beans and wins per seat, every action (for replays)."""

    seed: int
    lineup: tuple[int, ...]
    beans: tuple[int, ...]
    won: tuple[bool, ...]
    actions: list[int]


@dataclass
class Rollout:
    """What a worker returns for one update: the learning policy's decisions and the hands."""

    obs: np.ndarray
    mask: np.ndarray
    state: np.ndarray | None
    action: np.ndarray
    logprob: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    """Credited beans / reward scale (float32)."""
    beans: np.ndarray
    """Credited beans (int64): exact, for accounting."""
    done: np.ndarray
    """True at the last decision of a seat in a hand."""
    hand: np.ndarray
    """Index into ``hands`` of each decision."""
    seat: np.ndarray
    hands: list[HandSummary]
    all_decisions: int
    """Decisions of every policy, snapshots included."""
    seconds: float
    demos: "Demos | None" = None
    """The baselines' decisions, for ``bc_coef`` (else None)."""
    par: np.ndarray | None = None
    """With ``duplicate_rollouts``: each decision's seat par for its hand, in reward units (else None)."""

    @staticmethod
    def concat(parts: Sequence["Rollout"]) -> "Rollout":
        """One rollout from several workers' (hand indices shifted)."""
        offsets = np.cumsum([0] + [len(p.hands) for p in parts[:-1]])

        def cat(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts])

        return Rollout(
            obs=cat("obs"), mask=cat("mask"),
            state=None if parts[0].state is None else cat("state"),
            action=cat("action"), logprob=cat("logprob"), value=cat("value"), reward=cat("reward"),
            beans=cat("beans"), done=cat("done"),
            hand=np.concatenate([p.hand + o for p, o in zip(parts, offsets)]), seat=cat("seat"),
            hands=[h for p in parts for h in p.hands],
            all_decisions=sum(p.all_decisions for p in parts),
            seconds=max(p.seconds for p in parts),
            demos=None if parts[0].demos is None else Demos.concat([p.demos for p in parts]),
            par=None if parts[0].par is None else cat("par"),
        )


@dataclass
class Demos:
    """Decisions of the baselines (``baseline_opponents``) as the network's inputs and their actions."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray

    @staticmethod
    def concat(parts: Sequence["Demos"]) -> "Demos":
        """One set from several."""
        return Demos(*(np.concatenate([getattr(p, name) for p in parts]) for name in ("obs", "mask", "action")))


DECISION_FIELDS = ("obs", "mask", "state", "action", "logprob", "value")
"""What :meth:`RolloutWorker.decide` returns for a batch of seats, as the Rollout fields of those names:
the network's inputs, the actions, their log-probabilities and values (0 for baselines and the
teacher), and the ``env.state()`` planes for an oracle critic (else None)."""
Decisions = dict[str, Any]
