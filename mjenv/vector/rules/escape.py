"""Compiled escape (逃跑 / 强退) settlement (S16, J11): the array form of :mod:`mjenv.rules.escape`,
giving the same beans.

As in the reference, the engine works out each payee's standing at the moment of the escape and
passes it here as arrays in payee order (``payee_*[i]``, ``i < len(out)``); these functions turn
it into points and beans. Rule IDs: docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...rules.escape import JOY_ESCAPE_X, QQ_ESCAPE_UNITS, QQ_LAST_TILES
from .beans import split_in_ratio

JOY_ROOM_ESCAPE_X = np.array([JOY_ESCAPE_X[room] for room in ("popular", "eight_fan", "no_fan")], dtype=np.int64)
"""J11: the default ``escape_x`` per room, in the compiled room order (popular, eight_fan, no_fan)."""


@njit(cache=True, nogil=True)
def draw_check_claims(escaper_pig: bool, escaper_ready: bool, payee_pig: np.ndarray, payee_won: np.ndarray,
                      payee_ready_points: np.ndarray, pig_points: int, out: np.ndarray) -> None:
    """S16.1: C_j into ``out``, the points the escaper would pay each payee if the wall ran out now
    (S15.1 查花猪 by a 花猪 escaper; S15.2 查大叫 by an escaper neither 花猪 nor ready; else 0)."""
    for i in range(len(out)):
        if escaper_pig:
            out[i] = 0 if payee_pig[i] else pig_points
        elif not escaper_ready and not payee_won[i] and payee_ready_points[i] > 0:
            out[i] = payee_ready_points[i]
        else:
            out[i] = 0


@njit(cache=True, nogil=True)
def happy_escape_beans(claims: np.ndarray, in_play: int, cap_points: int, room_coefficient: int, factor: int,
                       min_penalty: int, min_compensation: int, out: np.ndarray) -> int:
    """S16.1 (seed 002 逃跑扣豆): the 赔偿 per payee into ``out``; returns the 扣豆, in beans, before
    any balance limit. 扣豆 = max(min_penalty, N·(cap·u + x·ΣC_j)); 赔偿_j = max(min_compensation, N·x·C_j)."""
    total = 0
    for i in range(len(out)):
        total += claims[i]
        out[i] = max(min_compensation, room_coefficient * factor * claims[i])
    return max(min_penalty, room_coefficient * (cap_points * in_play + factor * total))


@njit(cache=True, nogil=True)
def escape_split(balance: int, keep: bool, penalty: int, compensations: np.ndarray, paid: np.ndarray) -> int:
    """S16.3 (seed 002 逃跑 (a), (b)): what an escaper holding ``balance`` (``keep`` False:
    unlimited) pays of ``penalty`` and ``compensations``; the 赔偿 paid into ``paid``, the 扣豆
    paid returned. Short: (a) all it holds split between 扣豆 and the total 赔偿 in their ratio,
    (b) the 赔偿 share among the payees in the ratio of what each was owed."""
    n = len(paid)
    owed = penalty
    for i in range(n):
        owed += compensations[i]
    if not keep or owed <= balance:
        paid[:] = compensations[:n]
        return penalty
    parts = np.empty(2, np.int64)
    parts[0], parts[1] = penalty, owed - penalty
    shares = np.empty(2, np.int64)
    split_in_ratio(max(balance, 0), parts, shares)
    split_in_ratio(shares[1], compensations, paid)
    return shares[0]


@njit(cache=True, nogil=True)
def qq_escape_points(payee_ready_points: np.ndarray, wall_count: int, base_points: int, out: np.ndarray) -> None:
    """S16.2 (seed 004 逃跑扣分): the points the escaper owes each payee into ``out``: 16倍, or,
    while the wall holds at most 4 tiles, the larger of that and the payee's 查大叫 value."""
    flat = QQ_ESCAPE_UNITS * base_points
    for i in range(len(out)):
        out[i] = flat if wall_count > QQ_LAST_TILES else max(flat, payee_ready_points[i])


@njit(cache=True, nogil=True)
def joy_escape_x(escape_x: int, room: int) -> int:
    """J11: X_e, the points an escaper owes each other seat: ``escape_x``, or (``escape_x`` < 0:
    None) the room's X of an 8-fan win with no bird and no dealer."""
    return JOY_ROOM_ESCAPE_X[room] if escape_x < 0 else escape_x
