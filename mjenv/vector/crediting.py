"""Reward crediting, written once for the batched views: a :class:`Ledger` of each seat's bean
changes that no reward has paid yet.

Every view pays a seat's beans as rewards the same way: the engine's per-step bean changes of
every seat go into the ledger (``receive``), and a seat is paid what it holds when its reward is
due (``pay``): at its next decision, when its episode ends (``settle``). Every bean is paid once,
so a seat's rewards over an episode sum to its beans. What differs between the views is only
*when* a seat is paid: :class:`~mjenv.vector.SelfPlayVectorEnv` pays the seat to act at each
step and every seat at an episode's end; :class:`~mjenv.vector.single_seat.SingleSeatView` pays
the learning seat after its decision's opponents have played; RLlib's multi-agent envs
(:mod:`mjenv.integrations.rllib`) pay a seat with its next observation.
"""

from __future__ import annotations

import numpy as np

N_SEATS = 4


class Ledger:
    """float64 ``unpaid`` (num_tables, 4): each seat's bean changes not yet paid as a reward."""

    def __init__(self, num_tables: int) -> None:
        self.unpaid = np.zeros((num_tables, N_SEATS), dtype=np.float64)

    def receive(self, rewards: np.ndarray) -> None:
        """Every table's and seat's bean changes ``(num_tables, 4)`` from one engine step."""
        self.unpaid += rewards

    def hold(self, tables: np.ndarray, seats: np.ndarray, beans: np.ndarray) -> None:
        """Put ``beans[j]`` back on seat ``seats[j]`` of table ``tables[j]`` (paid with its next payment)."""
        self.unpaid[tables, seats] += beans

    def pay(self, tables: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """What seat ``seats[j]`` of table ``tables[j]`` is owed, now paid (its entry cleared)."""
        owed = self.unpaid[tables, seats].copy()
        self.unpaid[tables, seats] = 0
        return owed

    def settle(self, tables: np.ndarray) -> np.ndarray:
        """``(len(tables), 4)``: every seat's unpaid beans at the listed tables, now paid (an episode's end)."""
        owed = self.unpaid[tables].copy()
        self.unpaid[tables] = 0
        return owed

    def clear(self, tables: np.ndarray | slice = slice(None)) -> None:
        """Forget the listed tables' unpaid beans (a new deal, or a hand left out of every episode)."""
        self.unpaid[tables] = 0
