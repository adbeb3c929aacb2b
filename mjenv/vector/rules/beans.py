"""Compiled bean balances (B4): the array form of the balance functions of
:mod:`mjenv.rules.beans`, giving the same shares.

Amounts are int64. A share is ``amount·weight // total`` with ``amount <= total`` (a payer only
splits when it holds less than it owes), so the products stay below ``total²``: the backends
refuse rules whose one-hand beans could overflow that (:mod:`mjenv.vector.backend`).
Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...rules.beans import starting_balances


def bankroll_vector(v: np.ndarray, r: Any, balances: int, bankroll: int, min_beans: int) -> None:
    """B4 into a game's rule vector ``v``: ``v[balances]`` 1 when balances are kept (``bankroll``
    set), the four starting balances at ``v[bankroll : bankroll + 4]``, ``v[min_beans]``."""
    start = starting_balances(r.bankroll)
    v[balances] = start is not None
    v[bankroll : bankroll + 4] = start or 0
    v[min_beans] = r.min_beans


@njit(cache=True, nogil=True)
def split_in_ratio(amount: int, weights: np.ndarray, out: np.ndarray) -> None:
    """``amount`` split in the ratio of ``weights[:len(out)]`` into ``out`` (B4; seed 002 逃跑 (a),
    (b)): each share rounded down, then the beans left over one each to the largest remainders,
    the earlier share first on a tie. All-zero weights share nothing."""
    n = len(out)
    total = 0
    for i in range(n):
        total += weights[i]
    if total <= 0:
        out[:] = 0
        return
    left = amount
    for i in range(n):
        out[i] = amount * weights[i] // total
        left -= out[i]
    taken = 0  # bit i: share i already took a spare bean
    for _ in range(left):
        best, best_rem = -1, -1
        for i in range(n):
            rem = amount * weights[i] % total
            if not taken >> i & 1 and rem > best_rem:
                best, best_rem = i, rem
        out[best] += 1
        taken |= 1 << best


@njit(cache=True, nogil=True)
def pay_from_balance(balance: int, owed: np.ndarray, out: np.ndarray) -> None:
    """What a payer holding ``balance`` pays against ``owed[:len(out)]`` at one settlement event,
    into ``out`` (B4): everything when it holds enough, else all it holds, split in the ratio owed."""
    total = 0
    for i in range(len(out)):
        total += owed[i]
    if total <= balance:
        out[:] = owed[: len(out)]
    else:
        split_in_ratio(max(balance, 0), owed, out)
