"""Bean settlement (docs/rules-blood-battle.md#B1): points move as X·N beans; the rake A leaves every
seat once."""

from __future__ import annotations

from typing import Iterable, Sequence


def beans_of(points: int, room_coefficient: int) -> int:
    """Beans that ``points`` of X are worth in a room with coefficient N (B1)."""
    return points * room_coefficient


def settle(payments: Iterable[tuple[int, int, int]], room_coefficient: int, rake: int,
           n_seats: int = 4) -> list[int]:
    """Net beans per seat of a hand from ``(payer, payee, points)`` payments and the rake (B1).

    Each loser pays X·N + A and the winner receives N·ΣX − A; the seats sum to −n·A.
    """
    net = [-rake] * n_seats
    for payer, payee, points in payments:
        b = beans_of(points, room_coefficient)
        net[payer] -= b
        net[payee] += b
    return net


def settle_points(points: Sequence[int], room_coefficient: int, rake: int) -> list[int]:
    """Net beans per seat from each seat's point balance of a hand (B1).

    The same sums as :func:`settle` when the balances come from payments: a seat's gross is its
    points · N, and the rake A leaves every seat once (a hand with no payment still pays it).
    """
    return [beans_of(p, room_coefficient) - rake for p in points]
