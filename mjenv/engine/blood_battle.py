"""The blood-battle (血战到底) game state machine: one hand, from the seeded wall to the last payment.

The engine sequences the pure rules of ``mjenv.rules``: it deals, asks one seat at a time
(``current_player``), checks actions against ``legal_mask()``, and settles beans as events
(RULES.md B1–B2). It knows nothing about PettingZoo.

Phases: ``void`` (定缺, S2), ``turn`` (own decision after a draw or a 碰), ``claim`` (seats asked
in turn order about a discard, S4), ``rob`` (seats asked about robbing a 面下杠, S6), ``over``.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple, Sequence

import numpy as np

from .. import tiles
from ..actions import BLOOD_BATTLE as L
from ..config import BloodBattleRules
from ..melds import Meld
from ..rules import beans as bean_rules
from ..rules import shapes, sichuan

N_SEATS = 4
SUIT_TILES = [k for k in range(tiles.N_SUIT_KINDS) for _ in range(4)]


class Win(NamedTuple):
    """One win: who, on which tile, from whom (None = self-draw), and its score."""

    seat: int
    tile: int
    source: int | None
    score: sichuan.SichuanScore


class KongIncome:
    """Payments a kong earned, kept for 退税 (S15.3) and the 杠上炮 transfer (S12)."""

    __slots__ = ("maker", "payments", "transferred")

    def __init__(self, maker: int) -> None:
        self.maker = maker
        self.payments: dict[int, int] = {}
        self.transferred = False


class IllegalActionError(ValueError):
    """An action outside the current legal set; the game state is unchanged."""


def seeded_wall(seed: int, hand_index: int = 0) -> tuple[list[int], int]:
    """The shuffled wall and the dice-rolled dealer of a hand: a pure function of (seed, hand)."""
    rng = np.random.default_rng([seed, hand_index])
    wall = [SUIT_TILES[i] for i in rng.permutation(len(SUIT_TILES))]
    return wall, int(rng.integers(N_SEATS))


class BloodBattleGame:
    """One hand of blood battle. Draws come from the head of ``wall``, kong replacements from the tail.

    Deal: seat ``dealer`` takes 13 tiles, then each next seat 13, then the dealer a 14th.
    With ``auto_forced`` (the default) a decision with a single legal action is played at once
    and its effects land in the same step; scripted tests may turn it off to ask every decision.
    """

    def __init__(self, rules: BloodBattleRules, wall: Sequence[int], dealer: int,
                 auto_forced: bool = True) -> None:
        if sorted(wall) != SUIT_TILES:
            raise ValueError("a blood-battle wall holds each of the 27 suited kinds exactly 4 times")
        if not 0 <= dealer < N_SEATS:
            raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
        self.rules = rules
        self.dealer = dealer
        self.auto_forced = auto_forced  # play lone legal actions at once (False: ask, for scripts)
        self.wall = list(wall)
        self.head, self.tail = 0, len(self.wall)
        # Concealed hands as 34-slot count arrays; bytearray: list-fast item access, a negative
        # count raises, and encoders read it as a numpy view without copying.
        self.hands = [bytearray(tiles.N_KINDS) for _ in range(N_SEATS)]
        for i in range(N_SEATS):
            seat = (dealer + i) % N_SEATS
            for k in self.wall[13 * i : 13 * i + 13]:
                self.hands[seat][k] += 1
        self.head = 52
        self.melds: list[list[Meld]] = [[] for _ in range(N_SEATS)]
        self.rivers: list[list[int]] = [[] for _ in range(N_SEATS)]
        self.river_counts = np.zeros((N_SEATS, tiles.N_KINDS), dtype=np.int8)  # for encoders
        self.won_tiles: list[list[int]] = [[] for _ in range(N_SEATS)]
        self.void = [-1] * N_SEATS
        self.won = [False] * N_SEATS
        self.wins: list[Win] = []
        self.beans = [0] * N_SEATS
        self.kongs: list[KongIncome] = []
        self.discarded = [False] * N_SEATS
        self.any_call = False  # a 碰/杠 made by anyone (ends 天胡/地胡 chances)
        self.events: list[dict[str, Any]] = [
            {"type": "start_hand", "dealer": dealer, "wall": list(self.wall)}
        ]
        # Turn state.
        self.phase = "void"
        self.current_player = dealer
        self.drawn: int | None = None  # tile just drawn (None after a 碰)
        self.after_kong = False  # the current draw is a kong replacement
        self.kong_discard: KongIncome | None = None  # set when the last discard followed a kong
        self.last_kong: KongIncome | None = None
        self.claim_tile = -1  # discard (claim) or tile being added (rob)
        self.claim_from = -1
        self.queue: list[int] = []  # seats still to answer a claim/rob window
        self.answers: dict[int, int] = {}
        self.end_reason = ""
        self.next_dealer = dealer
        self._delta = [0] * N_SEATS
        self._mask: np.ndarray | None = None
        self._waits_cache: list[tuple[bytes, frozenset[int]] | None] = [None] * N_SEATS
        # Deal the dealer's 14th tile; it counts as drawn (天胡).
        self.drawn = self._draw_head(dealer)

    # ------------------------------------------------------------------ queries

    @property
    def wall_count(self) -> int:
        return self.tail - self.head

    @property
    def over(self) -> bool:
        return self.phase == "over"

    def holds_void(self, seat: int) -> bool:
        """Whether the seat still holds tiles of its void suit (S2)."""
        v = self.void[seat]
        return v >= 0 and any(self.hands[seat][9 * v : 9 * v + 9])

    def legal_mask(self) -> np.ndarray:
        """int8 mask over the action space for ``current_player`` (cached until the next step)."""
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.legal_mask()).tolist()

    def clone(self) -> "BloodBattleGame":
        """An independent copy of the game (for search and oracle rollouts)."""
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ masks

    def _compute_mask(self) -> np.ndarray:
        mask = np.zeros(L.n, dtype=np.int8)
        s, hand = self.current_player, self.hands[self.current_player] if self.current_player >= 0 else None
        if self.phase == "void":
            mask[L.VOID : L.VOID + 3] = 1
        elif self.phase == "turn":
            if self.drawn is not None and self._can_win_now(s):
                mask[L.HU] = 1
                if self._forced():
                    return mask
            v = self.void[s]
            lo, hi = (9 * v, 9 * v + 9) if self.holds_void(s) else (0, tiles.N_SUIT_KINDS)
            mask[[L.DISCARD + k for k in range(lo, hi) if hand[k]]] = 1
            if self.wall_count > 0:
                for k in self._self_kongs(s):
                    mask[L.KONG + k] = 1
        elif self.phase == "claim":
            k = self.claim_tile
            if self._can_win_on(s, k):
                mask[L.HU] = 1
                if self._forced():
                    return mask
            if k // 9 != self.void[s]:
                if hand[k] >= 2:
                    mask[L.PONG] = 1
                if hand[k] == 3 and self.wall_count > 0:
                    mask[L.DIRECT_KONG] = 1
            mask[L.PASS] = 1
        elif self.phase == "rob":
            mask[L.ROB_KONG] = 1
            mask[L.PASS] = 1
        return mask

    def _forced(self) -> bool:
        """S13: with <= 4 tiles left a seat that can win must win."""
        return self.rules.forced_win_last_four and self.wall_count <= 4

    def _self_kongs(self, s: int) -> list[int]:
        """Kinds the seat may kong on its own turn: 暗杠 or 面下杠 (S5), never its void suit."""
        hand, v = self.hands[s], self.void[s]
        out = [k for k in range(tiles.N_SUIT_KINDS) if hand[k] == 4 and k // 9 != v] if 4 in hand else []
        if self.melds[s]:
            out += [m.tile for m in self.melds[s] if m.kind == "pong" and hand[m.tile] and m.tile // 9 != v]
            out.sort()
        return out

    def _can_win_on(self, s: int, k: int) -> bool:
        """Whether seat s (holding 3n+1) wins on tile k: shape, no void tile (S2, S7)."""
        if self.won[s] or k // 9 == self.void[s] or self.holds_void(s):
            return False
        # A winning tile joins a pair, pung or chow, so it needs a held copy or a neighbour
        # within two ranks: a cheap test that spares most waits computations.
        hand, r = self.hands[s], k % 9
        if not (hand[k] or (r > 0 and hand[k - 1]) or (r > 1 and hand[k - 2])
                or (r < 8 and hand[k + 1]) or (r < 7 and hand[k + 2])):
            return False
        return k in self._waits(s)

    def _waits(self, s: int) -> frozenset[int]:
        """Winning tiles of seat s's 3n+1 hand, cached until that hand changes."""
        key = bytes(self.hands[s])
        cached = self._waits_cache[s]
        if cached is None or cached[0] != key:
            cached = self._waits_cache[s] = (key, frozenset(shapes.waits(self.hands[s])))
        return cached[1]

    def _can_win_now(self, s: int) -> bool:
        """Whether seat s wins on its own 3n+2 hand (self-draw): the drawn tile is one of the
        waits of the hand before the draw, which is usually cached from the last discard."""
        k = self.drawn
        hand = self.hands[s]
        hand[k] -= 1
        wins = self._can_win_on(s, k)
        hand[k] += 1
        return wins

    # ------------------------------------------------------------------ stepping

    def apply(self, action: int) -> list[int]:
        """Play ``action`` for ``current_player``; return each seat's bean change caused by it."""
        if self.phase == "over":
            raise IllegalActionError("the hand is over; no action can be played")
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
        # A seat with no choice is not asked (DESIGN §4): a lone forced void discard or a
        # forced win (S13) is played at once, within this step.
        while self.auto_forced and self.phase != "over":
            mask = self.legal_mask()
            if np.count_nonzero(mask) != 1:
                break
            self._play(int(mask.argmax()))
        return self._delta

    def _play(self, action: int) -> None:
        """Apply one legal action of ``current_player``."""
        self._mask = None
        if self.phase == "void":
            self._choose_void(action - L.VOID)
        elif self.phase == "turn":
            if action == L.HU:
                self._self_draw_win()
            elif action < L.KONG:
                self._discard(action)
            else:
                self._self_kong(action - L.KONG)
        else:
            self._answer(action)

    def _choose_void(self, suit: int) -> None:
        s = self.current_player
        self.void[s] = suit
        self.events.append({"type": "dingque", "actor": s, "suit": tiles.SUITS[suit]})
        nxt = (s + 1) % N_SEATS
        if nxt == self.dealer:  # all four chose: choices become public, the dealer plays
            self.events.append({"type": "dingque_reveal", "voids": [tiles.SUITS[v] for v in self.void]})
            self.phase = "turn"
        self.current_player = nxt

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
        # Seats that can claim (S4): the cheap 碰 test first, then the cached waits.
        suit = k // 9
        self.queue = [
            t for t in ((s + 1) % 4, (s + 2) % 4, (s + 3) % 4)
            if not self.won[t] and ((suit != self.void[t] and self.hands[t][k] >= 2) or self._can_win_on(t, k))
        ]
        self.answers = {}
        if self.queue:
            self.phase, self.current_player = "claim", self.queue[0]
        else:
            self._next_draw(s)

    def _answer(self, action: int) -> None:
        s = self.queue.pop(0)
        self.answers[s] = action
        if self.queue:
            self.current_player = self.queue[0]
        elif self.phase == "claim":
            self._resolve_claims()
        else:
            self._resolve_rob()

    def _resolve_claims(self) -> None:
        k, src = self.claim_tile, self.claim_from
        winners = [s for s, a in self.answers.items() if a == L.HU]
        if winners:
            self._take_discard(src, k)
            self.won_tiles[winners[0]].append(k)
            for w in winners:
                first = not self.discarded[w] and not self.any_call
                ctx = sichuan.WinContext(after_kong=self.kong_discard is not None, first_turn=first,
                                         dealer=w == self.dealer, last_tile=self.wall_count == 0)
                self._settle_win(w, k, src, ctx)
                if self.kong_discard is not None and self.rules.gang_pao_transfer:
                    income = sum(self.kong_discard.payments.values())
                    self._pay(src, w, income, "gang_pao_transfer")
                    self.kong_discard.transferred = True
            self._after_wins(winners, src)
            return
        caller = next((s for s, a in self.answers.items() if a in (L.PONG, L.DIRECT_KONG)), None)
        if caller is None:
            self._next_draw(src)
            return
        self._take_discard(src, k)
        self.any_call = True
        if self.answers[caller] == L.PONG:
            self.hands[caller][k] -= 2
            self.melds[caller].append(Meld("pong", k, src))
            self.events.append({"type": "pon", "actor": caller, "target": src, "pai": tiles.name(k)})
            self.phase, self.current_player, self.drawn, self.after_kong = "turn", caller, None, False
        else:
            self.hands[caller][k] -= 3
            self.melds[caller].append(Meld("kong", k, src))
            self.events.append({"type": "daiminkan", "actor": caller, "target": src, "pai": tiles.name(k)})
            income = KongIncome(caller)
            self._kong_pay(income, [src], self.rules.direct_kong_units, "direct_kong")
            self._replacement(caller)

    def _self_kong(self, k: int) -> None:
        s = self.current_player
        if self.hands[s][k] == 4:
            self.hands[s][k] = 0
            self.melds[s].append(Meld("ankan", k))
            self.any_call = True
            self.events.append({"type": "ankan", "actor": s, "pai": tiles.name(k)})
            income = KongIncome(s)
            self._kong_pay(income, self._others_in_play(s), self.rules.concealed_kong_units, "concealed_kong")
            self._replacement(s)
            return
        # 面下杠: others may rob it first (S6).
        self.claim_tile, self.claim_from = k, s
        self.queue = [t for t in self._seats_after(s) if self._can_win_on(t, k)]
        self.answers = {}
        self.events.append({"type": "kakan_declare", "actor": s, "pai": tiles.name(k)})
        if self.queue:
            self.phase, self.current_player = "rob", self.queue[0]
        else:
            self._complete_added_kong(s, k)

    def _resolve_rob(self) -> None:
        k, s = self.claim_tile, self.claim_from
        robbers = [t for t, a in self.answers.items() if a == L.ROB_KONG]
        if not robbers:
            self._complete_added_kong(s, k)
            return
        self.hands[s][k] -= 1  # the kong is void; the 碰 stays
        self.won_tiles[robbers[0]].append(k)
        for w in robbers:
            ctx = sichuan.WinContext(rob_kong=True, dealer=w == self.dealer)
            self._settle_win(w, k, s, ctx)
        self._after_wins(robbers, s)

    def _complete_added_kong(self, s: int, k: int) -> None:
        self.hands[s][k] -= 1
        i = next(i for i, m in enumerate(self.melds[s]) if m.kind == "pong" and m.tile == k)
        self.melds[s][i] = Meld("addkong", k, self.melds[s][i].source)
        self.any_call = True
        self.events.append({"type": "kakan", "actor": s, "pai": tiles.name(k)})
        income = KongIncome(s)
        self._kong_pay(income, self._others_in_play(s), self.rules.added_kong_units, "added_kong")
        self._replacement(s)

    def _self_draw_win(self) -> None:
        s = self.current_player
        k = self.drawn
        first = not self.discarded[s] and not self.any_call
        ctx = sichuan.WinContext(self_drawn=True, after_kong=self.after_kong, first_turn=first,
                                 dealer=s == self.dealer, last_tile=self.wall_count == 0)
        self._settle_win(s, k, None, ctx)
        self.hands[s][k] -= 1
        self.won_tiles[s].append(k)
        self._after_wins([s], s)

    # ------------------------------------------------------------------ flow helpers

    def _take_discard(self, src: int, k: int) -> None:
        """A claimed discard leaves the river."""
        self.rivers[src].pop()
        self.river_counts[src, k] -= 1

    def _seats_after(self, s: int) -> list[int]:
        return [(s + 1) % 4, (s + 2) % 4, (s + 3) % 4]

    def _others_in_play(self, s: int) -> list[int]:
        return [t for t in self._seats_after(s) if not self.won[t]]

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
        """The next seat in play after ``after`` draws; an empty wall ends the hand (S15)."""
        s = (after + 1) % N_SEATS
        while self.won[s]:
            s = (s + 1) % N_SEATS
        if self.wall_count == 0:
            self._exhaustive_draw()
            return
        self.drawn = self._draw_head(s)
        self.phase, self.current_player, self.after_kong = "turn", s, False

    def _after_wins(self, winners: list[int], source: int) -> None:
        """Blood battle continues after the last winner (S14); classic ends at the first win."""
        for w in winners:
            self.won[w] = True
        if self.rules.mode == "classic" or sum(self.won) >= 3:
            self.next_dealer = source
            self._end("win")
            return
        last = max(winners, key=lambda w: (w - source - 1) % N_SEATS)
        self._next_draw(last)

    # ------------------------------------------------------------------ settlement

    def _pay(self, payer: int, payee: int, points: int, reason: str) -> None:
        """Move ``points``·N beans between two seats, at once (B1, B2)."""
        if points <= 0:
            return
        beans = bean_rules.beans_of(points, self.rules.room_coefficient)
        self.beans[payer] -= beans
        self.beans[payee] += beans
        self._delta[payer] -= beans
        self._delta[payee] += beans
        self.events.append({"type": "pay", "from": payer, "to": payee, "points": points,
                            "beans": beans, "reason": reason})

    def _kong_pay(self, income: KongIncome, payers: list[int], units: int, reason: str) -> None:
        points = units * self.rules.base_points
        for p in payers:
            self._pay(p, income.maker, points, reason)
            if points:
                income.payments[p] = income.payments.get(p, 0) + points
        self.kongs.append(income)
        self.last_kong = income

    def _settle_win(self, w: int, k: int, source: int | None, ctx: sichuan.WinContext) -> None:
        """Score a win and collect from the discarder or every seat in play (S11)."""
        hand = list(self.hands[w])
        if source is not None:
            hand[k] += 1
        score = sichuan.score_win(hand, self.melds[w], ctx, self.rules, self.void[w])
        if score is None:  # the mask only offers 胡 for winning hands
            raise AssertionError(f"seat {w} declared a win that does not score: {tiles.fmt(hand)}")
        self.wins.append(Win(w, k, source, score))
        self.events.append({
            "type": "hora", "actor": w, "target": w if source is None else source, "pai": tiles.name(k),
            "fans": [[f.name, f.fan] for f in score.fans], "X": score.X,
        })
        payers = [source] if source is not None else self._others_in_play(w)
        for p in payers:
            self._pay(p, w, score.X, "win")

    def _exhaustive_draw(self) -> None:
        """流局 checks in order: 查花猪, 查大叫, 退税 (S15)."""
        self.events.append({"type": "ryukyoku"})
        pigs = [s for s in range(N_SEATS) if sichuan.is_flower_pig(self.hands[s], self.melds[s])]
        for p in pigs:
            for t in range(N_SEATS):
                if t not in pigs:
                    self._pay(p, t, self.rules.flower_pig_points, "flower_pig")
        in_play = [s for s in range(N_SEATS) if not self.won[s] and s not in pigs]
        ready = {
            s: sichuan.ready_points(self.hands[s], self.melds[s], self.rules, self.void[s])
            for s in in_play
        }
        for s in in_play:
            if ready[s] == 0:
                for t in in_play:
                    if ready[t] > 0:
                        self._pay(s, t, ready[t], "not_ready")
        for income in self.kongs:
            m = income.maker
            if not self.won[m] and (m in pigs or ready.get(m, 0) == 0) and not income.transferred:
                for payer, points in income.payments.items():
                    self._pay(m, payer, points, "kong_refund")
        self._end("draw")

    def _end(self, reason: str) -> None:
        """Take the rake (B1) and close the hand."""
        if self.rules.rake:
            for s in range(N_SEATS):
                self.beans[s] -= self.rules.rake
                self._delta[s] -= self.rules.rake
        self.events.append({"type": "end_hand", "reason": reason, "beans": list(self.beans)})
        self.end_reason = reason
        self.phase, self.current_player = "over", -1
        self.queue = []


def new_game(rules: BloodBattleRules, seed: int, hand_index: int = 0,
             dealer: int | None = None) -> BloodBattleGame:
    """A hand dealt from the seeded wall; the dealer comes from the seeded dice unless given."""
    wall, dice_dealer = seeded_wall(seed, hand_index)
    return BloodBattleGame(rules, wall, dice_dealer if dealer is None else dealer)


def scripted_wall(hands: Sequence[str], draws: str = "", tail: str = "", dealer: int = 0) -> list[int]:
    """A wall that deals ``hands`` (13 tiles each, in seat order; the dealer's 14th is the first
    of ``draws``), then draws ``draws`` from the head and ``tail`` (in replacement order) from
    the tail. The remaining tiles fill the middle in kind order, so 108 tiles are conserved."""
    if len(hands) != N_SEATS:
        raise ValueError("give four hands, in seat order")
    dealt = [tiles.parse(h) for h in hands]
    for seat, h in enumerate(dealt):
        if len(h) != 13:
            raise ValueError(f"seat {seat}: a dealt hand has 13 tiles, got {len(h)}")
    head = [k for i in range(N_SEATS) for k in dealt[(dealer + i) % N_SEATS]] + tiles.parse(draws)
    back = tiles.parse(tail)
    used = head + back
    left = list(SUIT_TILES)
    for k in used:
        if k not in left:
            raise ValueError(f"more than four copies of {tiles.name(k)} in the script")
        left.remove(k)
    return head + left + back[::-1]
