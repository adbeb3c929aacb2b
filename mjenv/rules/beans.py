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


# ---------------------------------------------------------------- balances (B4)


def starting_balances(bankroll: int | Sequence[int] | None) -> list[int] | None:
    """The four seats' balances at the start of an episode (B4): one bankroll for every seat, or
    one per seat; None: unlimited (no balances kept)."""
    if bankroll is None:
        return None
    if isinstance(bankroll, int):
        return [bankroll] * 4
    return [int(b) for b in bankroll]


def balance_bound(bankroll: int | Sequence[int]) -> int:
    """More beans than a seat can hold (B4): all the seats' bankrolls together, since balances
    never go below 0 and their sum only shrinks (the rake and 扣豆 leave the table)."""
    return sum(starting_balances(bankroll))


def split_in_ratio(amount: int, weights: Sequence[int]) -> list[int]:
    """``amount`` beans split in the ratio of ``weights`` (B4; seed 002 逃跑 (a), (b)).

    Each share is rounded down, then the beans left over go one each to the shares with the
    largest remainders (the earlier share first on a tie), so the shares sum to ``amount``.
    All-zero weights share nothing.
    """
    total = sum(weights)
    if total <= 0:
        return [0] * len(weights)
    shares = [amount * w // total for w in weights]
    remainders = [amount * w % total for w in weights]
    left = amount - sum(shares)
    for i in sorted(range(len(weights)), key=lambda i: -remainders[i])[:left]:
        shares[i] += 1
    return shares


def pay_from_balance(balance: int | None, owed: Sequence[int]) -> list[int]:
    """What a payer holding ``balance`` beans pays against the amounts ``owed`` at one settlement
    event (B4): everything when it holds enough, else all it holds, split in the ratio owed.
    ``balance`` None: unlimited."""
    if balance is None or sum(owed) <= balance:
        return list(owed)
    return split_in_ratio(max(balance, 0), owed)
