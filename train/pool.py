"""Opponent pool: snapshots of past policies, drawn by how often they beat the learner.

A snapshot *beats the learner* in a hand when its seat ends the hand with more beans than the
learning policy's seats on average (a tie counts one half). Its priority is ``p^power`` with
``p = (beats + 1) / (games + 2)`` (Laplace-smoothed, so a new snapshot starts at 1/2): the
snapshots the learner still loses to come up most often (prioritised fictitious self-play).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import torch

from .records import LEARNER, HandSummary, Weights


@dataclass
class Snapshot:
    """A frozen copy of the policy and its record against the learner."""

    id: int
    update: int
    """The update after which it was taken."""
    weights: Weights
    games: float = 0.0
    beats: float = 0.0

    @property
    def beat_rate(self) -> float:
        """Smoothed rate at which it beat the learner."""
        return (self.beats + 1.0) / (self.games + 2.0)


class OpponentPool:
    """At most ``size`` snapshots, oldest out first, sampled with PFSP priorities."""

    def __init__(self, size: int, power: float) -> None:
        self.size, self.power = size, power
        self.snapshots: list[Snapshot] = []
        self.next_id = 0

    def add(self, weights: Weights, update: int) -> None:
        """Add a snapshot (dropping the oldest beyond ``size``)."""
        if self.size == 0:
            return
        self.snapshots.append(Snapshot(self.next_id, update, weights))
        self.next_id += 1
        del self.snapshots[:-self.size]

    def priorities(self) -> list[tuple[int, float]]:
        """(snapshot id, probability) pairs for the workers."""
        if not self.snapshots:
            return []
        w = np.array([s.beat_rate for s in self.snapshots]) ** self.power
        p = w / w.sum()
        return [(s.id, float(pi)) for s, pi in zip(self.snapshots, p)]

    def record(self, hands: Iterable[HandSummary]) -> None:
        """Update each snapshot's games and beats from finished hands."""
        by_id = {s.id: s for s in self.snapshots}
        for hand in hands:
            mine = [b for b, who in zip(hand.beans, hand.lineup) if who == LEARNER]
            learner = float(np.mean(mine))
            for b, who in zip(hand.beans, hand.lineup):
                if who != LEARNER and who in by_id:
                    by_id[who].games += 1
                    by_id[who].beats += 1.0 if b > learner else (0.5 if b == learner else 0.0)

    def state_dict(self) -> dict[str, Any]:
        """Tensors and plain values only (for ``torch.load(weights_only=True)``)."""
        return {
            "size": self.size, "power": self.power, "next_id": self.next_id,
            "snapshots": [{"id": s.id, "update": s.update, "games": s.games, "beats": s.beats,
                           "weights": {k: torch.from_numpy(v) for k, v in s.weights.items()}}
                          for s in self.snapshots],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` (the size and power stay those of the config)."""
        self.next_id = int(state["next_id"])
        self.snapshots = [Snapshot(int(s["id"]), int(s["update"]),
                                   {k: v.numpy() for k, v in s["weights"].items()},
                                   float(s["games"]), float(s["beats"]))
                          for s in state["snapshots"]][-self.size:] if self.size else []
