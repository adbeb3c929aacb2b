"""Joy Mahjong (欢乐麻将) settlement of one hand: room, payers, dealer, bird, beans (J5-J8, J10, B1).

The docs are in docs/rules-joy-mahjong.md (§7-§12).

Pure functions with no game state. The engine scores the winning hand (fan, J4/J9), turns the
fan into the room's per-pair base with :func:`room_base` (J5), draws the bird with
:func:`bird_tile` and locates it with :func:`bird_seat` (J8), gets the point deltas of the win
with :func:`payments` (J6-J8), and turns points into beans with :func:`settle_hand` (B1, J10).

Seats are ``0..3`` in turn order; the seat after ``s`` (下家) is ``(s + 1) % 4``.

One rule covers both doublings. For every paying pair (winner, payer):

- J7 dealer: the pair's amount is doubled when the winner or that payer is the dealer (庄家翻倍);
- J8 bird: the pair's amount is doubled when the bird lands on the winner or on that payer (中鸟).

This per-pair reading reproduces both sentences of J8: on a discard win the only pair is
(winner, discarder), so a bird on either doubles the discarder's payment and a bird on a third
seat does nothing; on a self-draw a bird on the winner is in all three pairs (all payments
double) and a bird on a loser is in that loser's pair only. Both doublings stack (×4 at most).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, Sequence

from ..tiles import N_FLOWERS, N_KINDS, rank_of
from .beans import settle_points

N_SEATS = 4
N_TILE_KINDS = N_KINDS + N_FLOWERS
"""Kinds 0..41: 34 playing kinds and 8 flowers (mjenv.tiles)."""
ROOMS = ("popular", "eight_fan", "no_fan")
EIGHT_FAN_MINIMUM = 8
"""J5: fan a win needs in the 8番场, flowers not counted."""
NO_FAN_BASE = 10
"""J5: the fixed per-pair base of the 无番场."""
MCR_FLAT = 8
"""J6 ``all_mcr``: the flat points every loser pays on a discard win (the discarder adds the fan)."""


def _is_int(value: Any) -> bool:
    """An integer (numpy integers included), but not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def _check_seat(name: str, seat: Any) -> None:
    """A seat is an int 0..3 (bool is not a seat)."""
    if not _is_int(seat) or not 0 <= seat < N_SEATS:
        raise ValueError(f"{name} must be a seat 0-{N_SEATS - 1}, got {seat!r}")


def _check_kind(name: str, kind: Any) -> None:
    """A tile kind is an int 0..41."""
    if not _is_int(kind) or not 0 <= kind < N_TILE_KINDS:
        raise ValueError(f"{name} must be a tile kind 0-{N_TILE_KINDS - 1}, got {kind!r}")


def _check_count(name: str, value: Any, low: int) -> None:
    """A non-bool int >= low."""
    if not _is_int(value) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def room_base(fan: int, room: str) -> int:
    """J5: the per-pair base X of a win worth ``fan`` (flowers included), before bird and dealer.

    ``popular`` 大众场: ``fan``; ``eight_fan`` 8番场: ``fan + 8``; ``no_fan`` 无番场: 10 whatever
    the fan. Whether the hand may win at all in the 8番场 is :func:`room_allows_win`.
    """
    _check_count("fan", fan, 0)
    if room == "popular":
        return fan
    if room == "eight_fan":
        return fan + 8  # J5: (游戏番数 + 8)
    if room == "no_fan":
        return NO_FAN_BASE
    raise ValueError(f"room must be one of {ROOMS}, got {room!r}")


def room_allows_win(fan_without_flowers: int, room: str) -> bool:
    """J5: may a hand worth ``fan_without_flowers`` (花牌 not counted) win in ``room``?

    Only the 8番场 has a minimum (8 fan without flowers); the other rooms take any winning hand.
    """
    _check_count("fan_without_flowers", fan_without_flowers, 0)
    if room not in ROOMS:
        raise ValueError(f"room must be one of {ROOMS}, got {room!r}")
    return room != "eight_fan" or fan_without_flowers >= EIGHT_FAN_MINIMUM


def bird_seat(bird: int, dealer: int) -> int:
    """J8: the seat the bird tile ``bird`` (a kind 0..33) lands on, counting from ``dealer``.

    The bird's number is its rank: 1-9 for suited tiles, 东南西北中发白 = 1-7. Counting starts at
    the dealer in turn order: 1, 5, 9 → the dealer; 2, 6 → the next seat (下家); 3, 7 → the
    opposite seat (对家); 4, 8 → the previous seat (上家). A flower is never a bird (J8 skips
    flowers), so a flower raises ValueError.
    """
    _check_kind("bird", bird)
    _check_seat("dealer", dealer)
    if bird >= N_KINDS:
        raise ValueError(f"bird must not be a flower (kinds 34-41 are skipped when the bird is "
                         f"drawn, J8), got {bird!r}")
    return (int(dealer) + rank_of(int(bird)) - 1) % N_SEATS


def wall_spent(remaining_wall: Sequence[int]) -> bool:
    """J8/J9: no non-flower tile is left to draw, so the last tile drawn was the wall's last
    tile (海底: 妙手回春 on it, 海底捞月 on the discard after it). ``remaining_wall`` as in
    :func:`bird_tile`; a wall of flowers only is spent."""
    return all(kind >= N_KINDS for kind in remaining_wall)


def bird_tile(remaining_wall: Sequence[int], last_drawn: int) -> int:
    """J8: the bird's tile kind after a win.

    ``remaining_wall`` is the wall still to be drawn, head (the next draw) first — what the
    engine holds as ``wall[head:tail]``; the 财神 indicator is already out of it (J2).
    ``last_drawn`` is the last non-flower tile drawn from the wall (head or tail) in the hand.

    - The bird is the first non-flower tile of ``remaining_wall`` (flowers skipped).
    - When none is left (:func:`wall_spent`: the wall is empty or holds only flowers), the win
      came on the last tile or on the discard after it (海底), and the bird is that last tile,
      ``last_drawn`` (seed 000: 如果海底胡，即以海底為牌為鳥).

    The bird is only looked at, not drawn: it does not change the wall.
    """
    _check_kind("last_drawn", last_drawn)
    if last_drawn >= N_KINDS:
        raise ValueError(f"last_drawn must not be a flower (a drawn flower is set aside and "
                         f"replaced, J1), got {last_drawn!r}")
    for i, kind in enumerate(remaining_wall):
        _check_kind(f"remaining_wall[{i}]", kind)
        if kind < N_KINDS:
            return int(kind)
    return int(last_drawn)


def _dealer_factor(winner: int, payer: int, dealer: int) -> int:
    """J7: ×2 when the winner or the payer is the dealer."""
    return 2 if dealer in (winner, payer) else 1


def _bird_factor(winner: int, payer: int, bird: int | None) -> int:
    """J8: ×2 when the bird is on the winner or on the payer."""
    return 2 if bird is not None and bird in (winner, payer) else 1


def payment_pairs(winner: int, discarder: int | None, dealer: int, bird: int | None, base: int,
                  rules: Any, fan: int = 0) -> list[tuple[int, int, int]]:
    """The ``(payer, payee, points)`` payments of one win (J6-J8), for :func:`mjenv.rules.beans.settle`.

    Arguments as :func:`payments`. Payers are listed in turn order from the winner.
    """
    _check_seat("winner", winner)
    _check_seat("dealer", dealer)
    if discarder is not None:
        _check_seat("discarder", discarder)
        if discarder == winner:
            raise ValueError(f"discarder must differ from winner (a seat cannot win on its own "
                             f"discard; pass discarder=None for a self-draw), got both {winner}")
    if bird is not None:
        _check_seat("bird (the bird's seat from bird_seat, or None)", bird)
    _check_count("base", base, 1)
    _check_count("fan", fan, 0)
    mode = getattr(rules, "discard_payers", None)
    if mode not in ("discarder", "all_mcr"):
        raise ValueError(f"rules.discard_payers must be 'discarder' or 'all_mcr', got {mode!r}")
    winner, dealer, base, fan = int(winner), int(dealer), int(base), int(fan)
    discarder = None if discarder is None else int(discarder)
    bird = None if bird is None else int(bird)

    losers = [(winner + k) % N_SEATS for k in range(1, N_SEATS)]
    if discarder is None:  # J6 self-draw: all three pay the room's base
        amounts = {seat: base for seat in losers}
    elif mode == "discarder":  # J6 discard win (and 抢杠和): the discarder alone
        amounts = {discarder: base}
    else:  # J6 all_mcr: the discarder fan + 8, the two others 8
        if fan < 1:
            raise ValueError("discard_payers='all_mcr' needs the hand's fan (>= 1) on a discard "
                             f"win: the discarder pays fan + {MCR_FLAT}; got fan={fan!r}")
        amounts = {seat: MCR_FLAT for seat in losers}
        amounts[discarder] = fan + MCR_FLAT
    return [
        (payer, winner,
         amounts[payer] * _dealer_factor(winner, payer, dealer) * _bird_factor(winner, payer, bird))
        for payer in losers if payer in amounts
    ]


def payments(winner: int, discarder: int | None, dealer: int, bird: int | None, base: int,
             rules: Any, fan: int = 0) -> list[int]:
    """Per-seat point deltas of one win (sum 0), before the room coefficient N and the rake (J6-J8).

    - ``winner``, ``dealer``: seats 0..3.
    - ``discarder``: the seat whose discard won, or the kong-maker on a 抢杠和; None for a
      self-draw (自摸, a win on a flower or kong replacement included).
    - ``bird``: the bird's *seat* (:func:`bird_seat`), or None when no bird could be drawn.
    - ``base``: the J5 per-pair base X before bird and dealer (:func:`room_base`), >= 1.
    - ``rules``: a :class:`mjenv.config.JoyMahjongRules`; only ``discard_payers`` is read.
    - ``fan``: the hand's total fan, flowers included; read only by ``all_mcr`` on a discard win.

    Who pays (J6): on a self-draw each of the three others pays ``base``. On a discard win with
    ``discard_payers="discarder"`` the discarder alone pays ``base``; with ``"all_mcr"`` the
    discarder pays ``fan + 8`` and each of the two others pays 8, whatever the room (the MCR
    amounts; a self-draw still pays ``base`` each). Then every pair's amount is doubled by the
    dealer (J7) and by the bird (J8) as the module docstring says — in ``all_mcr`` too, so the
    two bystanders' 8 is doubled when the dealer or the bird is on them or on the winner.

    Raises ValueError for a seat outside 0..3, ``winner == discarder``, ``base < 1``, or
    ``all_mcr`` on a discard win with ``fan < 1``.
    """
    deltas = [0] * N_SEATS
    for payer, payee, points in payment_pairs(winner, discarder, dealer, bird, base, rules, fan):
        deltas[payer] -= points
        deltas[payee] += points
    return deltas


def settle_hand(deltas_points: Sequence[int] | None, rules: Any) -> list[int]:
    """Net beans per seat of one hand from its point deltas (B1, J10).

    Each seat moves ``points · N`` beans (N = ``rules.room_coefficient``) and pays the rake A
    (``rules.rake``) once, the winner included, so the seats sum to ``−4·A``. A 荒庄 (exhaustive
    draw, J10) pays nothing but the rake: pass ``None`` or four zeros.

    Raises ValueError unless the deltas are four ints summing to 0.
    """
    if deltas_points is None:
        deltas_points = [0] * N_SEATS
    deltas = list(deltas_points)
    if len(deltas) != N_SEATS:
        raise ValueError(f"deltas_points must have {N_SEATS} entries (one per seat), got {len(deltas)}")
    for i, d in enumerate(deltas):
        if not _is_int(d):
            raise ValueError(f"deltas_points[{i}] must be an int, got {d!r}")
    if sum(deltas) != 0:
        raise ValueError(f"deltas_points must sum to 0 (points only move between seats), "
                         f"got {deltas} (sum {sum(deltas)})")
    return settle_points([int(d) for d in deltas], rules.room_coefficient, rules.rake)


__all__ = [
    "EIGHT_FAN_MINIMUM", "MCR_FLAT", "NO_FAN_BASE", "ROOMS", "bird_seat", "bird_tile",
    "payment_pairs", "payments", "room_allows_win", "room_base", "settle_hand", "wall_spent",
]
