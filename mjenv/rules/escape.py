"""Escape (逃跑 / 强退) settlement (S16, J11): what an escaping seat owes, and how it pays
from a limited balance (B4).

The docs are in docs/rules-blood-battle.md §10 and docs/rules-joy-mahjong.md §14.

Pure functions over plain ints, so the compiled engine can mirror them one to one. The engine
works out, at the moment of the escape, each other seat's standing (花猪, won, the 查大叫 value
of its hand) and passes it here; these functions turn it into beans.

- ``happy`` (seed 002 逃跑扣豆, S16.1): the escaper pays a penalty to no one (扣豆) and a
  compensation (赔偿) to each other seat still at the table, both built from C_j, what the
  escaper would pay seat j if the wall ran out now (:func:`draw_check_claims`).
- ``qq`` (seed 004 逃跑扣分, S16.2): 16倍 to each other seat that has not won; in the last four
  tiles a ready seat takes its 查大叫 value instead when that is larger (:func:`qq_escape_points`).
- Joy (seeds 000/001, J11): ``escape_x`` points to each other seat (:func:`joy_escape_x`).
"""

from __future__ import annotations

from typing import Sequence

from .beans import split_in_ratio

QQ_ESCAPE_UNITS = 16
"""S16.2: 倍 an escaper pays each other seat not yet won (seed 004: 16倍点数)."""
QQ_LAST_TILES = 4
"""S16.2: 最后4张牌, the wall count at or below which 查大叫 may replace the 16倍."""
JOY_ESCAPE_X = {"popular": 8, "eight_fan": 16, "no_fan": 10}
"""J11: the default ``escape_x`` per room: the room's X of an 8-fan win, no bird, no dealer."""


def draw_check_claims(escaper_pig: bool, escaper_ready: bool, payee_pig: Sequence[bool],
                      payee_won: Sequence[bool], payee_ready_points: Sequence[int],
                      pig_points: int) -> list[int]:
    """S16.1: C_j, the points the escaper would pay each payee j if the wall ran out now.

    S15.1 查花猪: a 花猪 escaper pays ``pig_points`` to each payee that is no 花猪, won or not.
    S15.2 查大叫: an escaper that is neither 花猪 nor ready pays each ready payee that has not
    won its ``payee_ready_points`` (the largest X over its waits). Otherwise 0.
    """
    claims = []
    for pig, won, ready in zip(payee_pig, payee_won, payee_ready_points):
        if escaper_pig:
            claims.append(0 if pig else pig_points)
        elif not escaper_ready and not won and ready > 0:
            claims.append(ready)
        else:
            claims.append(0)
    return claims


def happy_escape_beans(claims: Sequence[int], in_play: int, cap_points: int, room_coefficient: int,
                       factor: int, min_penalty: int, min_compensation: int) -> tuple[int, list[int]]:
    """S16.1 (seed 002 逃跑扣豆): ``(penalty, compensations)`` in beans, before any balance limit.

    ``claims``: C_j per payee (:func:`draw_check_claims`); ``in_play``: u, the other seats that
    have neither won nor escaped; ``cap_points``: the cap amount 6·2^(cap_fan−1); ``factor``: x
    (修正参数). 扣豆 = max(min_penalty, N·(cap·u + x·ΣC_j)); 赔偿_j = max(min_compensation, N·x·C_j).
    """
    n = room_coefficient
    penalty = max(min_penalty, n * (cap_points * in_play + factor * sum(claims)))
    return penalty, [max(min_compensation, n * factor * c) for c in claims]


def escape_split(balance: int | None, penalty: int, compensations: Sequence[int]) -> tuple[int, list[int]]:
    """S16.3 (seed 002 逃跑 (a), (b)): what an escaper holding ``balance`` pays of ``penalty`` and
    ``compensations``. When it holds less than their sum, (a) all it holds is split between 扣豆
    and the total 赔偿 in their ratio, then (b) the 赔偿 share among the payees in the ratio of what
    each was owed. ``balance`` None: unlimited. With no penalty (qq, Joy) this is B4's split."""
    owed = penalty + sum(compensations)
    if balance is None or owed <= balance:
        return penalty, list(compensations)
    paid_penalty, paid_compensation = split_in_ratio(max(balance, 0), [penalty, sum(compensations)])
    return paid_penalty, split_in_ratio(paid_compensation, compensations)


def qq_escape_points(payee_ready_points: Sequence[int], wall_count: int, base_points: int) -> list[int]:
    """S16.2 (seed 004 逃跑扣分): the points the escaper owes each payee (the other seats that
    have not won): 16倍, or, while the wall holds at most 4 tiles, the larger of that and the
    payee's 查大叫 value (``payee_ready_points``, 0 when not ready)."""
    flat = QQ_ESCAPE_UNITS * base_points
    if wall_count > QQ_LAST_TILES:
        return [flat] * len(payee_ready_points)
    return [max(flat, ready) for ready in payee_ready_points]


def joy_escape_x(escape_x: int | None, room: str) -> int:
    """J11: X_e, the points an escaper owes each other seat: ``escape_x``, or by default the
    room's X of an 8-fan win with no bird and no dealer (:data:`JOY_ESCAPE_X`)."""
    return JOY_ESCAPE_X[room] if escape_x is None else escape_x


__all__ = ["JOY_ESCAPE_X", "QQ_ESCAPE_UNITS", "QQ_LAST_TILES", "draw_check_claims", "escape_split",
           "happy_escape_beans", "joy_escape_x", "qq_escape_points"]
