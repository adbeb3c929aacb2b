"""The game-independent core of a four-seat mahjong hand: what every ruleset of mjenv shares.

:class:`GameCore` holds the table (seeded wall with head draws and tail replacement draws,
concealed hands as 34-slot count arrays, melds, rivers, beans, the event log) and sequences one
hand as a state machine: ``current_player`` is asked, ``apply(action)`` checks the action against
``legal_mask()`` (an illegal one raises :class:`IllegalActionError` and changes nothing), plays
it, auto-plays decisions that have a single legal action, and returns each seat's bean change.

Phases shared by every game: ``turn`` (own decision after a draw or a call), ``claim`` (seats
asked one by one, in turn order from the discarder, about a discard; resolved together once all
have answered, so no seat sees another's pending answer: S4 of docs/rules-blood-battle.md, J3 of
docs/rules-joy-mahjong.md), ``rob`` (seats asked
about robbing an added kong), ``over``. A game may add phases of its own (定缺's ``void``).

A game is a subclass that fills in the hooks below; the core never looks at fans or wildcards:

- ``layout`` (class attribute): the game's :class:`~mjenv.actions.ActionLayout`.
- ``_compute_mask()``: the int8 legal mask of ``current_player``.
- ``_play_other(action)``: actions of the game's own phases.
- ``_claimants(s, k)`` / ``_robbers(s, k)``: the seats to ask about a discard / an added kong.
- ``_claim_winners(seats)``: which of the seats that chose 胡 win (all: 一炮多响; first: 截和).
- ``_discard_wins(winners, src, k)``, ``_rob_wins(robbers, s, k)``, ``_self_draw_win()``: scoring
  and paying a win, then ending the hand or playing on.
- ``_kong_units(reason)``: kong payments in points per payer (0 where kongs pay nothing).
- ``_wall_empty()``: what happens when the next draw finds the wall empty.
- ``_escape_dues(s)``, ``_escape_ends_hand()``: what an escaping seat pays, and whether its
  escape ends the hand (rule option ``escape``, S16/J11).

Settlement (B1, B2, B4): every payment of one settlement event (a win, 一炮多响 included; a kong;
each draw check; an escape; the rake) is a :class:`Due` settled together by
:meth:`GameCore._settle_event`. With balances (rule option ``bankroll``) a payer pays at most what
it held when the event began, split among its payees in the ratio owed
(:func:`mjenv.rules.beans.pay_from_balance`); beans and rewards are what really moved.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, NamedTuple, Sequence

import numpy as np

from .. import tiles
from ..actions import ActionLayout
from ..melds import Meld
from ..rules import beans as bean_rules
from ..rules import escape as escape_rules

N_SEATS = 4


class IllegalActionError(ValueError):
    """An action outside the current legal set; the game state is unchanged."""


class Win(NamedTuple):
    """One win: who, on which tile, from whom (None = self-draw), and its score."""

    seat: int
    tile: int
    source: int | None
    score: Any


class KongIncome:
    """Payments a kong earned, kept for 退税 (S15.3) and the 杠上炮 transfer (S12): the points owed
    by each payer and the beans it really paid (less than points·N only with balances, B4)."""

    __slots__ = ("maker", "payments", "paid", "transferred")

    def __init__(self, maker: int) -> None:
        self.maker = maker
        self.payments: dict[int, int] = {}
        self.paid: dict[int, int] = {}
        self.transferred = False


class Due(NamedTuple):
    """One payment owed at a settlement event: ``points`` (as logged) worth ``beans``."""

    payer: int
    payee: int
    points: int
    reason: str
    beans: int


def shuffled(tile_set: Sequence[int], seed: int, hand_index: int, n_extra: int = 1) -> tuple[list[int], list[int]]:
    """A shuffled wall and ``n_extra`` seeded seat/wind rolls (0-3): a pure function of (seed, hand).

    The first roll is the dealer's dice; later rolls are game-specific (the prevailing wind).
    """
    rng = np.random.default_rng([seed, hand_index])
    wall = [tile_set[i] for i in rng.permutation(len(tile_set))]
    return wall, [int(rng.integers(N_SEATS)) for _ in range(n_extra)]


def build_script_wall(tile_set: Sequence[int], hands: Sequence[str], draws: str, tail: str,
                      dealer: int) -> list[int]:
    """A wall dealing ``hands`` (13 each, seat order) from seat ``dealer`` on, then ``draws`` from the
    head and ``tail`` (in replacement order) from the tail; the rest of ``tile_set`` fills the
    middle in kind order, so every tile is conserved."""
    if len(hands) != N_SEATS:
        raise ValueError("give four hands, in seat order")
    dealt = [tiles.parse(h) for h in hands]
    for seat, h in enumerate(dealt):
        if len(h) != 13:
            raise ValueError(f"seat {seat}: a dealt hand has 13 tiles, got {len(h)}")
    head = [k for i in range(N_SEATS) for k in dealt[(dealer + i) % N_SEATS]] + tiles.parse(draws)
    back = tiles.parse(tail)
    left = list(tile_set)
    for k in head + back:
        if k not in left:
            copies = "four copies" if k < tiles.N_KINDS else "one copy"
            raise ValueError(f"more than {copies} of {tiles.name(k)} in the script")
        left.remove(k)
    return head + left + back[::-1]


class GameCore:
    """One hand on a four-seat table. Draws come from the head of ``wall``, replacements from the tail.

    Deal (:meth:`_deal_hands`): seat ``dealer`` takes 13 tiles, then each next seat 13; the game
    then gives the dealer a 14th. With ``auto_forced`` (the default) a decision with a single legal
    action is played at once and its effects land in the same step; scripted tests may turn it off
    to ask every decision.
    """

    layout: ClassVar[ActionLayout]
    no_escape_phases: ClassVar[tuple[str, ...]] = ()
    """Phases of a game in which no seat may escape (the blood battle's item decisions, S17)."""

    def __init__(self, rules: Any, wall: Sequence[int], dealer: int, auto_forced: bool = True,
                 balances: Sequence[int] | None = None) -> None:
        if not 0 <= dealer < N_SEATS:
            raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
        if balances is not None and (rules.bankroll is None or len(balances) != N_SEATS
                                     or not all(isinstance(b, int) and b >= 0 for b in balances)):
            raise ValueError(f"balances must be four ints >= 0 and need the rule option bankroll (B4), "
                             f"got {balances!r} with bankroll={rules.bankroll!r}")
        self.rules = rules
        # S16/J11: ESCAPE comes last; S17: the item actions after it (blood battle only)
        self.layout = type(self).layout.with_options(rules.escape, getattr(rules, "items", None) is not None)
        self.dealer = dealer
        self.auto_forced = auto_forced  # play lone legal actions at once (False: ask, for scripts)
        self.wall = list(wall)
        self.head, self.tail = 0, len(self.wall)
        # Concealed hands as 34-slot count arrays; bytearray: list-fast item access, a negative
        # count raises, and encoders read it as a numpy view without copying.
        self.hands = [bytearray(tiles.N_KINDS) for _ in range(N_SEATS)]
        self.melds: list[list[Meld]] = [[] for _ in range(N_SEATS)]
        self.rivers: list[list[int]] = [[] for _ in range(N_SEATS)]
        self.river_counts = np.zeros((N_SEATS, tiles.N_KINDS), dtype=np.int8)  # for encoders
        self.won_tiles: list[list[int]] = [[] for _ in range(N_SEATS)]
        self.won = [False] * N_SEATS
        self.escaped = [False] * N_SEATS  # S16/J11: left the hand; never asked again
        self.wins: list[Win] = []
        self.beans = [0] * N_SEATS
        # B4: the beans each seat holds (None: unlimited); given for the later hands of a match.
        self.balances = list(balances) if balances is not None else bean_rules.starting_balances(rules.bankroll)
        self.kongs: list[KongIncome] = []
        self.discarded = [False] * N_SEATS
        self.any_call = False  # a 碰/杠/吃 made by anyone (ends 天胡/地胡 chances)
        self.events: list[dict[str, Any]] = [
            {"type": "start_hand", "dealer": self.dealer, "wall": list(self.wall)}
        ]
        if self.balances is not None:
            self.events[0]["balances"] = list(self.balances)
        # Turn state.
        self.phase = "turn"
        self.current_player = self.dealer
        self.drawn: int | None = None  # tile just drawn (None after a call)
        self.after_kong = False  # the current draw is a kong replacement
        self.kong_discard: KongIncome | None = None  # set when the last discard followed a kong
        self.last_kong: KongIncome | None = None
        self.claim_tile = -1  # discard (claim) or tile being added (rob)
        self.claim_from = -1
        self.queue: list[int] = []  # seats still to answer a claim/rob window
        self.answers: dict[int, int] = {}
        self.end_reason = ""
        self.next_dealer = self.dealer
        self._delta = [0] * N_SEATS
        self._mask: np.ndarray | None = None

    def _deal_hands(self) -> None:
        """13 tiles to each seat from the dealer on, straight from the head (no events)."""
        for i in range(N_SEATS):
            seat = (self.dealer + i) % N_SEATS
            for k in self.wall[13 * i : 13 * i + 13]:
                self.hands[seat][k] += 1
        self.head = 52

    # ------------------------------------------------------------------ queries

    @property
    def wall_count(self) -> int:
        return self.tail - self.head

    @property
    def over(self) -> bool:
        return self.phase == "over"

    def legal_mask(self) -> np.ndarray:
        """int8 mask over the action space for ``current_player`` (cached until the next step)."""
        if self._mask is None:
            self._mask = self._compute_mask()
            if self.layout.ESCAPE >= 0 and self.phase not in self.no_escape_phases:
                # S16/J11: every seat asked is in play and may escape
                self._mask[self.layout.ESCAPE] = 1
        return self._mask

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.legal_mask()).tolist()

    def asked_seats(self) -> list[int]:
        """The seats still to answer the decision open now, in the order the engine asks them:
        the queue of a claim or rob window (answers hidden and resolved together, S4, J3), else
        the seat to act. An answer never changes the mask of a later seat (:meth:`mask_of`);
        only an escape changes what the later seats observe (S16, J11)."""
        if self.phase == "over":
            return []
        if self.phase == "claim" or self.phase == "rob":
            return list(self.queue)
        return [self.current_player]

    def mask_of(self, seat: int) -> np.ndarray:
        """A copy of the legal mask ``seat`` (one of :meth:`asked_seats`) gets when it is asked."""
        if seat == self.current_player:
            return self.legal_mask().copy()
        # Masks read only current_player and the table, which the answers before it leave alone.
        asked, cached = self.current_player, self._mask
        self.current_player, self._mask = seat, None
        try:
            return self.legal_mask()
        finally:
            self.current_player, self._mask = asked, cached

    def clone(self) -> "GameCore":
        """An independent copy of the game (for search and oracle rollouts)."""
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ game hooks

    def _compute_mask(self) -> np.ndarray:
        raise NotImplementedError

    def _play_other(self, action: int) -> None:
        """An action of a game-specific phase."""
        raise NotImplementedError

    def _claimants(self, s: int, k: int) -> list[int]:
        """Seats to ask, in turn order from ``s``, about its discard ``k``."""
        raise NotImplementedError

    def _robbers(self, s: int, k: int) -> list[int]:
        """Seats to ask, in turn order from ``s``, about robbing its added kong of ``k``."""
        raise NotImplementedError

    def _claim_winners(self, seats: list[int]) -> list[int]:
        """Which of the seats that declared 胡 (in turn order from the source) win."""
        raise NotImplementedError

    def _discard_wins(self, winners: list[int], src: int, k: int) -> None:
        raise NotImplementedError

    def _rob_wins(self, robbers: list[int], s: int, k: int) -> None:
        raise NotImplementedError

    def _self_draw_win(self) -> None:
        raise NotImplementedError

    def _kong_units(self, reason: str) -> int:
        """Points each payer pays for a kong (``direct_kong``/``added_kong``/``concealed_kong``)."""
        return 0

    def _wall_empty(self) -> None:
        """The next draw finds the wall empty."""
        raise NotImplementedError

    def _escape_dues(self, s: int) -> tuple[int, list[Due]]:
        """What escaping seat s owes (S16/J11): the penalty to no one (扣豆, beans) and its dues."""
        raise NotImplementedError

    def _escape_ends_hand(self) -> bool:
        """Whether the escape just made ends the hand (J11, S16.2: always)."""
        return True

    def _resume_other(self, s: int, phase: str) -> None:
        """Play on after seat s escaped in a game-specific phase."""
        raise NotImplementedError

    # ------------------------------------------------------------------ stepping

    def apply(self, action: int) -> list[int]:
        """Play ``action`` for ``current_player``; return each seat's bean change caused by it."""
        if self.phase == "over":
            raise IllegalActionError("the hand is over; no action can be played")
        L = self.layout
        mask = self.legal_mask()
        if not (isinstance(action, (int, np.integer)) and 0 <= action < L.n and mask[action]):
            legal = ", ".join(f"{a} ({L.name(a)})" for a in np.flatnonzero(mask))
            shown = L.name(int(action)) if isinstance(action, (int, np.integer)) and 0 <= action < L.n else "?"
            raise IllegalActionError(
                f"illegal action {action!r} ({shown}) for seat {self.current_player} "
                f"in phase {self.phase!r}; legal: {legal}"
            )
        self._delta = [0] * N_SEATS
        self._play(int(action))
        # A seat with no choice is not asked (docs/rules-blood-battle.md#forced-moves): a lone forced
        # action is played at
        # once, within this step.
        while self.auto_forced and self.phase != "over":
            mask = self.legal_mask()
            if np.count_nonzero(mask) != 1:
                break
            self._play(int(mask.argmax()))
        return self._delta

    def _play(self, action: int) -> None:
        """Apply one legal action of ``current_player``."""
        self._mask = None
        phase = self.phase
        if action == self.layout.ESCAPE:
            self._escape()
        elif phase == "turn":
            L = self.layout
            if action == L.HU:
                self._self_draw_win()
            elif action < L.KONG:
                self._discard(action)
            else:
                self._self_kong(action - L.KONG)
        elif phase == "claim" or phase == "rob":
            self._answer(action)
        else:
            self._play_other(action)

    def _discard(self, k: int) -> None:
        s = self.current_player
        self.hands[s][k] -= 1
        self.rivers[s].append(k)
        self.river_counts[s, k] += 1
        self.discarded[s] = True
        self.kong_discard = self.last_kong if self.after_kong else None
        self.after_kong = False
        self.drawn = None
        self.events.append({"type": "dahai", "actor": s, "pai": tiles.name(k)})
        self.claim_tile, self.claim_from = k, s
        self.queue = self._claimants(s, k)
        self.answers = {}
        if self.queue:
            self.phase, self.current_player = "claim", self.queue[0]
        else:
            self._next_draw(s)

    def _answer(self, action: int) -> None:
        s = self.queue.pop(0)
        self.answers[s] = action
        self._next_answer()

    def _next_answer(self) -> None:
        """Ask the next seat of the claim/rob window, or resolve it once all have answered."""
        if self.queue:
            self.current_player = self.queue[0]
        elif self.phase == "claim":
            self._resolve_claims()
        else:
            self._resolve_rob()

    def _resolve_claims(self) -> None:
        """All asked seats answered: 胡 first, then 杠/碰, then 吃 (S4, J3)."""
        L = self.layout
        k, src = self.claim_tile, self.claim_from
        winners = [s for s, a in self.answers.items() if a == L.HU]
        if winners:
            self._discard_wins(self._claim_winners(winners), src, k)
            return
        caller = next((s for s, a in self.answers.items() if a == L.PONG or a == L.DIRECT_KONG), None)
        if caller is not None:
            self._take_discard(src, k)
            self.any_call = True
            if self.answers[caller] == L.PONG:
                self._claim_pong(caller, src, k)
            else:
                self._claim_kong(caller, src, k)
            return
        if L.CHOW >= 0:
            caller = next((s for s, a in self.answers.items() if L.CHOW <= a < L.CHOW + 3), None)
            if caller is not None:
                self._take_discard(src, k)
                self.any_call = True
                self._claim_chow(caller, src, k, self.answers[caller] - L.CHOW)
                return
        self._next_draw(src)

    def _claim_pong(self, caller: int, src: int, k: int) -> None:
        self.hands[caller][k] -= 2
        self.melds[caller].append(Meld("pong", k, src))
        self.events.append({"type": "pon", "actor": caller, "target": src, "pai": tiles.name(k)})
        self.phase, self.current_player, self.drawn, self.after_kong = "turn", caller, None, False

    def _claim_kong(self, caller: int, src: int, k: int) -> None:
        self.hands[caller][k] -= 3
        self.melds[caller].append(Meld("kong", k, src))
        self.events.append({"type": "daiminkan", "actor": caller, "target": src, "pai": tiles.name(k)})
        self._kong_made(caller, [src], "direct_kong")
        self._replacement(caller)

    def _claim_chow(self, caller: int, src: int, k: int, shape: int) -> None:
        """吃: ``shape`` 0/1/2 puts the claimed tile lowest/middle/highest in the chow."""
        low = k - shape
        hand = self.hands[caller]
        for t in (low, low + 1, low + 2):
            if t != k:
                hand[t] -= 1
        self.melds[caller].append(Meld("chow", low, src))
        self.events.append({"type": "chi", "actor": caller, "target": src, "pai": tiles.name(k),
                            "consumed": [tiles.name(t) for t in (low, low + 1, low + 2) if t != k]})
        self.phase, self.current_player, self.drawn, self.after_kong = "turn", caller, None, False

    def _self_kong(self, k: int) -> None:
        s = self.current_player
        if self.hands[s][k] == 4:
            self.hands[s][k] = 0
            self.melds[s].append(Meld("ankan", k))
            self.any_call = True
            self.events.append({"type": "ankan", "actor": s, "pai": tiles.name(k)})
            self._kong_made(s, self._others_in_play(s), "concealed_kong")
            self._replacement(s)
            return
        # 面下杠: others may rob it first (S6).
        self.claim_tile, self.claim_from = k, s
        self.queue = self._robbers(s, k)
        self.answers = {}
        self.events.append({"type": "kakan_declare", "actor": s, "pai": tiles.name(k)})
        if self.queue:
            self.phase, self.current_player = "rob", self.queue[0]
        else:
            self._complete_added_kong(s, k)

    def _resolve_rob(self) -> None:
        k, s = self.claim_tile, self.claim_from
        robbers = [t for t, a in self.answers.items() if a == self.layout.ROB_KONG]
        if not robbers:
            self._complete_added_kong(s, k)
            return
        self.hands[s][k] -= 1  # the kong is void; the 碰 stays
        self._rob_wins(self._claim_winners(robbers), s, k)

    def _complete_added_kong(self, s: int, k: int) -> None:
        self.hands[s][k] -= 1
        i = next(i for i, m in enumerate(self.melds[s]) if m.kind == "pong" and m.tile == k)
        self.melds[s][i] = Meld("addkong", k, self.melds[s][i].source)
        self.any_call = True
        self.events.append({"type": "kakan", "actor": s, "pai": tiles.name(k)})
        self._kong_made(s, self._others_in_play(s), "added_kong")
        self._replacement(s)

    # ------------------------------------------------------------------ flow helpers

    def _take_discard(self, src: int, k: int) -> None:
        """A claimed discard leaves the river."""
        self.rivers[src].pop()
        self.river_counts[src, k] -= 1

    def _seats_after(self, s: int) -> list[int]:
        return [(s + 1) % 4, (s + 2) % 4, (s + 3) % 4]

    def _in_play(self, t: int) -> bool:
        """Seat t has neither won nor escaped."""
        return not self.won[t] and not self.escaped[t]

    def _others_in_play(self, s: int) -> list[int]:
        return [t for t in self._seats_after(s) if self._in_play(t)]

    def _draw_head(self, s: int) -> int:
        k = self.wall[self.head]
        self.head += 1
        self.hands[s][k] += 1
        self.events.append({"type": "tsumo", "actor": s, "pai": tiles.name(k)})
        return k

    def _replacement(self, s: int) -> None:
        """Kong replacement draw from the tail of the wall (S5)."""
        self.tail -= 1
        k = self.wall[self.tail]
        self.hands[s][k] += 1
        self.events.append({"type": "tsumo", "actor": s, "pai": tiles.name(k), "replacement": True})
        self.phase, self.current_player, self.drawn, self.after_kong = "turn", s, k, True

    def _next_draw(self, after: int) -> None:
        """The next seat in play after ``after`` draws; an empty wall ends the hand."""
        s = (after + 1) % N_SEATS
        while not self._in_play(s):
            s = (s + 1) % N_SEATS
        if self.wall_count == 0:
            self._wall_empty()
            return
        self.drawn = self._draw_head(s)
        self.phase, self.current_player, self.after_kong = "turn", s, False

    # ------------------------------------------------------------------ escape (S16, J11)

    def _escape(self) -> None:
        """The seat to act leaves the hand at once and pays what the game's escape rule asks; the
        hand ends or plays on without it."""
        s, phase = self.current_player, self.phase
        self.escaped[s] = True
        penalty, dues = self._escape_dues(s)
        balance = None if self.balances is None else self.balances[s]
        paid_penalty, paid = escape_rules.escape_split(balance, penalty, [d.beans for d in dues])
        event: dict[str, Any] = {"type": "escape", "actor": s}
        if penalty:
            event["penalty"] = paid_penalty
            if paid_penalty != penalty:
                event["penalty_owed"] = penalty
        self.events.append(event)
        self._move(s, None, paid_penalty)
        for due, beans in zip(dues, paid):
            if due.beans > 0:
                self._transfer(due, beans)
        if self._escape_ends_hand():
            self._end("escape")
        elif phase == "turn":
            self._next_draw(s)
        elif phase in ("claim", "rob"):
            self.queue.pop(0)  # the escaper gives no answer
            self._next_answer()
        else:
            self._resume_other(s, phase)

    # ------------------------------------------------------------------ settlement

    def _due(self, payer: int, payee: int, points: int, reason: str) -> Due:
        """A payment of ``points``, worth points·N beans (B1)."""
        return Due(payer, payee, points, reason, bean_rules.beans_of(points, self.rules.room_coefficient))

    def _settle_event(self, records: Sequence[Due | dict[str, Any]]) -> list[int]:
        """Pay the dues of one settlement event and log them, with the other events of ``records``
        in their order; returns the beans paid per due (dues of 0 beans are skipped). With balances
        (B4) each payer pays at most what it held when the event began, split in the ratio owed."""
        dues = [r for r in records if isinstance(r, Due) and r.beans > 0]
        paid = [d.beans for d in dues]
        if self.balances is not None:
            held = list(self.balances)
            for payer in dict.fromkeys(d.payer for d in dues):
                mine = [i for i, d in enumerate(dues) if d.payer == payer]
                for i, beans in zip(mine, bean_rules.pay_from_balance(held[payer], [dues[i].beans for i in mine])):
                    paid[i] = beans
        moved = iter(paid)
        for r in records:
            if not isinstance(r, Due):
                self.events.append(r)
            elif r.beans > 0:
                self._transfer(r, next(moved))
        return paid

    def _transfer(self, due: Due, beans: int) -> None:
        """Move ``beans`` for ``due`` and log it (``owed`` when a balance cut it short, B4)."""
        self._move(due.payer, due.payee, beans)
        event = {"type": "pay", "from": due.payer, "to": due.payee, "points": due.points,
                 "beans": beans, "reason": due.reason}
        if beans != due.beans:
            event["owed"] = due.beans
        self.events.append(event)

    def _move(self, payer: int, payee: int | None, beans: int) -> None:
        """Beans from ``payer`` to ``payee`` (None: to no one, the rake and 扣豆) (B2, B4)."""
        for seat, change in ((payer, -beans), (payee, beans)):
            if seat is not None:
                self.beans[seat] += change
                self._delta[seat] += change
                if self.balances is not None:
                    self.balances[seat] += change

    def _kong_made(self, maker: int, payers: list[int], reason: str) -> None:
        """Record a kong and collect what the game's kong payments ask of ``payers``."""
        income = KongIncome(maker)
        points = self._kong_units(reason)
        if points:
            paid = self._settle_event([self._due(p, maker, points, reason) for p in payers])
            for p, beans in zip(payers, paid):
                income.payments[p] = income.payments.get(p, 0) + points
                income.paid[p] = income.paid.get(p, 0) + beans
        self.kongs.append(income)
        self.last_kong = income

    def _end(self, reason: str) -> None:
        """Take the rake (B1; at most what a seat holds, to no one, B4) and close the hand."""
        if self.rules.rake:
            for s in range(N_SEATS):
                self._move(s, None, bean_rules.pay_from_balance(
                    None if self.balances is None else self.balances[s], [self.rules.rake])[0])
        self.events.append({"type": "end_hand", "reason": reason, "beans": list(self.beans)})
        if self.balances is not None:
            self.events[-1]["balances"] = list(self.balances)
        self.end_reason = reason
        self.phase, self.current_player = "over", -1
        self.queue = []
