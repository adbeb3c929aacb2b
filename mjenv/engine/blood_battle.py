"""The blood-battle (血战到底) game: the Sichuan layer on the shared core (:mod:`mjenv.engine.core`).

The core deals, draws, asks one seat at a time (``current_player``), checks actions against
``legal_mask()`` and settles beans as events (B1–B2; rule IDs: docs/rules-blood-battle.md). This layer
adds what only the
blood battle has: 定缺 (the ``void`` phase, S2), the masks of S2–S6 and S13, 一炮多响 (S4),
kong payments (S5), the Sichuan fans (S7–S12), play on after a win (S14), the exhaustive
draw checks (S15) and, with the rule option ``escape``, escapes (S16: ``happy`` plays on without
the escaper, ``qq`` ends the hand); with the rule option ``items``, the items (S17: the rules in
:mod:`mjenv.rules.items`, sequenced here). It knows nothing about PettingZoo.

Phases: ``void`` (定缺, S2), ``turn`` (own decision after a draw or a 碰), ``claim`` (seats asked
in turn order about a discard, S4), ``rob`` (seats asked about robbing a 面下杠, S6), ``over``;
with ``items``, ``qiankun`` (the pre-deal 乾坤大挪移 decisions), ``give`` and ``name`` (an item's
follow-up decisions: the kind to give, the kind to name, S17.2).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import tiles
from ..actions import BLOOD_BATTLE as L
from ..config import BloodBattleRules
from ..rules import blood_battle as bb
from ..rules import escape, shapes
from ..rules import items as item_rules
from .core import N_SEATS, Due, GameCore, IllegalActionError, KongIncome, Win, build_script_wall, shuffled

__all__ = ["N_SEATS", "SUIT_TILES", "BloodBattleGame", "IllegalActionError", "KongIncome", "Win",
           "new_game", "scripted_wall", "seeded_wall"]

SUIT_TILES = [k for k in range(tiles.N_SUIT_KINDS) for _ in range(4)]


def seeded_wall(seed: int, hand_index: int = 0) -> tuple[list[int], int]:
    """The shuffled wall and the dice-rolled dealer of a hand: a pure function of (seed, hand)."""
    wall, (dealer,) = shuffled(SUIT_TILES, seed, hand_index)
    return wall, dealer


class BloodBattleGame(GameCore):
    """One hand of blood battle. Draws come from the head of ``wall``, kong replacements from the tail.

    Deal: seat ``dealer`` takes 13 tiles, then each next seat 13, then the dealer a 14th.
    With ``auto_forced`` (the default) a decision with a single legal action is played at once
    and its effects land in the same step; scripted tests may turn it off to ask every decision.
    """

    layout = L
    no_escape_phases = ("qiankun", "give", "name")  # S17: an item decision is finished first

    def __init__(self, rules: BloodBattleRules, wall: Sequence[int], dealer: int,
                 auto_forced: bool = True, balances: Sequence[int] | None = None) -> None:
        if sorted(wall) != SUIT_TILES:
            raise ValueError("a blood-battle wall holds each of the 27 suited kinds exactly 4 times")
        super().__init__(rules, wall, dealer, auto_forced, balances)
        self.rules: BloodBattleRules = rules
        self.void = [-1] * N_SEATS
        self._waits_cache: list[tuple[bytes, frozenset[int]] | None] = [None] * N_SEATS
        self.items = rules.items is not None
        if self.items:
            self._init_items()
            holders = [(dealer + i) % N_SEATS for i in range(N_SEATS)
                       if self.inventory[(dealer + i) % N_SEATS][item_rules.QIANKUN]]
            if holders:  # S17.2: the pre-deal decisions, in turn order from the dealer
                self.phase, self.current_player = "qiankun", holders[0]
                self._qiankun_queue, self._qiankun_users = holders[1:], []
                return
        self._start_deal()

    def _start_deal(self) -> None:
        """Deal 13 to each seat, then the dealer's 14th (it counts as drawn: 天胡); 定缺 follows."""
        self._deal_hands()
        self.phase, self.current_player = "void", self.dealer
        self.drawn = self._draw_head(self.dealer)

    # ------------------------------------------------------------------ items (S17)

    def _init_items(self) -> None:
        """Each seat's inventory (S17.1), its uses this hand, its live knowledge, and the seeded
        draws of 乾坤大挪移 and 移花接木: a pure function of the wall, so a log's wall replays them."""
        self.inventory = [list(c) for c in self.rules.items]
        self.item_uses = [[0] * len(item_rules.ITEMS) for _ in range(N_SEATS)]
        self.turn_used = [False] * len(item_rules.ITEMS)  # of the seat whose turn it is
        self.item_pending: tuple[int, int] | None = None  # (item, kind given or -1) between steps
        self.swapped = False  # the tile in hand came from a swap this turn: no 杠上花 (S17.8)
        self.shunfeng: list[tuple[int, int] | None] = [None] * N_SEATS  # (wall index, kind) heard
        self.qianliyan: list[dict[int, tuple[int, int]]] = [{} for _ in range(N_SEATS)]  # kind -> (part, wall count)
        self._item_rng = np.random.default_rng(np.asarray(self.wall, dtype=np.uint32))

    def _new_turn(self) -> None:
        """A seat's turn starts (a draw or a 碰): every item may be used once again (S17.2)."""
        self.turn_used = [False] * len(item_rules.ITEMS)
        self.swapped = False

    def _draw_head(self, s: int) -> int:
        if self.items:
            self._new_turn()
        return super()._draw_head(s)

    def _replacement(self, s: int) -> None:
        if self.items:
            self._new_turn()
        super()._replacement(s)

    def _claim_pong(self, caller: int, src: int, k: int) -> None:
        super()._claim_pong(caller, src, k)
        if self.items:
            self._new_turn()

    def shunfeng_tile(self, seat: int) -> int:
        """S17.7: the kind ``seat`` heard with 顺风耳 while the knowledge holds (not drawn, not
        moved), else -1."""
        heard = self.shunfeng[seat] if self.items else None
        if heard is None or not self.head <= heard[0] < self.tail:
            return -1
        return heard[1]

    def _item_mask(self, s: int, mask: bytearray) -> None:
        """S17.2: the items seat s may use now, on its own turn before it discards."""
        lay = self.layout
        for i in range(item_rules.TOUTIAN, len(item_rules.ITEMS)):
            if self.inventory[s][i] and not self.turn_used[i] and self.wall_count > 0:  # S17.7
                mask[lay.ITEM + i] = 1

    def _use_item(self, item: int) -> None:
        """A seat chooses an item: 乾坤大挪移 before the deal, else its follow-up step or its effect."""
        s = self.current_player
        self.inventory[s][item] -= 1
        self.item_uses[s][item] += 1
        if item == item_rules.QIANKUN:
            self._qiankun_users.append(s)
            self._next_qiankun()
            return
        self.turn_used[item] = True
        if item in (item_rules.TOUTIAN, item_rules.YIHUA):
            self.item_pending, self.phase = (item, -1), "give"
        elif item == item_rules.QIANLIYAN:
            self.item_pending, self.phase = (item, -1), "name"
        else:  # S17.7 顺风耳
            self.shunfeng[s] = (self.head, self.wall[self.head])
            self.events.append({"type": "item", "actor": s, "item": "shunfeng", "seen": tiles.name(self.wall[self.head])})

    def _next_qiankun(self) -> None:
        """The next holder decides, or the deal is made (S17.3) and 定缺 starts."""
        if self._qiankun_queue:
            self.current_player = self._qiankun_queue.pop(0)
            return
        if self._qiankun_users:
            self.wall = item_rules.qiankun_wall(self.wall, self.dealer, self._qiankun_users,
                                                self.rules.qiankun_tiles, self._item_rng)
            self.events.append({"type": "qiankun_deal", "users": list(self._qiankun_users), "wall": list(self.wall)})
        self._start_deal()

    def _item_step(self, action: int) -> None:
        """The follow-up decisions of an item: the kind to give (偷天换日, 移花接木), the kind to
        name (偷天换日, 千里眼); then its effect, and the seat decides again (S17.2)."""
        lay, s = self.layout, self.current_player
        item, given = self.item_pending
        if self.phase == "give":
            given = action - lay.GIVE
            if item == item_rules.TOUTIAN:
                self.item_pending, self.phase = (item, given), "name"
                return
            i = int(self._item_rng.integers(self.head, self.tail))  # S17.5
            self._swap(s, "yihua", given, i)
        else:
            named = action - lay.NAME
            if item == item_rules.TOUTIAN:  # S17.4
                self._swap(s, "toutian", given, item_rules.nearest(self.wall, self.head, self.tail, named))
            else:  # S17.6
                part = item_rules.qianliyan_part(self.wall, self.head, self.tail, named, self.rules.qianliyan_parts)
                self.qianliyan[s][named] = (part, self.wall_count)
                self.events.append({"type": "item", "actor": s, "item": "qianliyan", "kind": tiles.name(named),
                                    "part": part, "wall": self.wall_count})
        self.item_pending, self.phase = None, "turn"

    def _swap(self, s: int, item: str, given: int, i: int) -> None:
        """The given tile takes wall index i's place; that tile comes to the hand as if drawn, so
        胡 is offered as 自摸 on it (S17.8), never as 杠上花."""
        taken = self.wall[i]
        self.wall[i] = given
        self.hands[s][given] -= 1
        self.hands[s][taken] += 1
        for t in range(N_SEATS):  # S17.7: a heard tile that moved is no longer known
            if self.shunfeng[t] is not None and self.shunfeng[t][0] == i:
                self.shunfeng[t] = None
        self.drawn, self.swapped = taken, True
        self.events.append({"type": "item", "actor": s, "item": item, "give": tiles.name(given),
                            "take": tiles.name(taken), "index": i})

    # ------------------------------------------------------------------ queries

    def holds_void(self, seat: int) -> bool:
        """Whether the seat still holds tiles of its void suit (S2)."""
        v = self.void[seat]
        return v >= 0 and any(self.hands[seat][9 * v : 9 * v + 9])

    def asked_seats(self) -> list[int]:
        """As the core's; during 定缺 every seat still to choose (choices stay hidden until all
        are made, S2), in the order :meth:`_next_void` asks them."""
        if self.phase != "void":
            return super().asked_seats()
        seats = [self.current_player]
        for step in range(1, N_SEATS):
            t = (self.current_player + step) % N_SEATS
            if t == self.dealer:
                break
            if not self.escaped[t]:
                seats.append(t)
        return seats

    def clone(self) -> "BloodBattleGame":
        """An independent copy of the game (for search and oracle rollouts)."""
        return super().clone()  # type: ignore[return-value]

    # ------------------------------------------------------------------ masks

    def _compute_mask(self) -> np.ndarray:
        # Built as bytes (list-fast item writes, bytes.translate for a run of kinds), returned
        # as an int8 view of them.
        mask = bytearray(self.layout.n)
        s, hand = self.current_player, self.hands[self.current_player] if self.current_player >= 0 else None
        if self.phase == "void":
            mask[L.VOID : L.VOID + 3] = b"\1\1\1"
        elif self.phase == "turn":
            if self.drawn is not None and self._can_win_now(s):
                mask[L.HU] = 1
                if self._forced():
                    return np.frombuffer(mask, np.int8)
            v = self.void[s]
            lo, hi = (9 * v, 9 * v + 9) if self.holds_void(s) else (0, tiles.N_SUIT_KINDS)
            mask[L.DISCARD + lo : L.DISCARD + hi] = hand[lo:hi].translate(tiles.HELD)
            if self.wall_count > 0:
                for k in self._self_kongs(s):
                    mask[L.KONG + k] = 1
            if self.items:
                self._item_mask(s, mask)
        elif self.phase == "qiankun":  # S17.2: use 乾坤大挪移 or keep it (PASS)
            mask[self.layout.ITEM + item_rules.QIANKUN] = mask[L.PASS] = 1
        elif self.phase == "give":  # any concealed tile
            mask[self.layout.GIVE : self.layout.GIVE + tiles.N_SUIT_KINDS] = hand[: tiles.N_SUIT_KINDS].translate(tiles.HELD)
        elif self.phase == "name":  # 偷天换日: kinds in the live wall (S17.4); 千里眼: any kind
            lay = self.layout
            if self.item_pending[0] == item_rules.TOUTIAN:
                mask[lay.NAME : lay.NAME + tiles.N_SUIT_KINDS] = item_rules.live_kinds(self.wall, self.head, self.tail).tobytes()
            else:
                mask[lay.NAME : lay.NAME + tiles.N_SUIT_KINDS] = b"\1" * tiles.N_SUIT_KINDS
        elif self.phase == "claim":
            k = self.claim_tile
            if self._can_win_on(s, k):
                mask[L.HU] = 1
                if self._forced():
                    return np.frombuffer(mask, np.int8)
            if k // 9 != self.void[s]:
                if hand[k] >= 2:
                    mask[L.PONG] = 1
                if hand[k] == 3 and self.wall_count > 0:
                    mask[L.DIRECT_KONG] = 1
            mask[L.PASS] = 1
        elif self.phase == "rob":
            mask[L.ROB_KONG] = 1
            if not self._forced():
                mask[L.PASS] = 1
        return np.frombuffer(mask, np.int8)

    def _forced(self) -> bool:
        """S13: once a draw (head or tail) has taken one of the last four tiles, every win must
        be taken. Only draws empty the wall, so that is exactly when <= 3 tiles are left: the
        fifth-last tile (drawn with 5 left) and a discard after it are outside the window."""
        return self.rules.forced_win_last_four and self.wall_count <= 3

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

    # ------------------------------------------------------------------ core hooks

    def _play(self, action: int) -> None:
        """The item actions (S17) and their steps; every other action as the core plays it."""
        if self.items and self.phase != "over":
            lay = self.layout
            if self.phase == "qiankun" and action == L.PASS:
                self._mask = None
                self._next_qiankun()
                return
            if lay.ITEM <= action < lay.GIVE:
                self._mask = None
                self._use_item(action - lay.ITEM)
                return
            if self.phase in ("give", "name"):
                self._mask = None
                self._item_step(action)
                return
        super()._play(action)

    def _play_other(self, action: int) -> None:
        """定缺 (S2): the only phase of its own."""
        self._choose_void(action - L.VOID)

    def _resume_other(self, s: int, phase: str) -> None:
        """An escape during 定缺: the next seat chooses (S16)."""
        self._next_void(s)

    def _choose_void(self, suit: int) -> None:
        s = self.current_player
        self.void[s] = suit
        self.events.append({"type": "dingque", "actor": s, "suit": tiles.SUITS[suit]})
        self._next_void(s)

    def _next_void(self, s: int) -> None:
        """The next seat in play after s chooses; after the last one before the dealer the choices
        become public and the dealer plays (S2), or, when it escaped, the next seat draws (S16)."""
        nxt = (s + 1) % N_SEATS
        while nxt != self.dealer and self.escaped[nxt]:
            nxt = (nxt + 1) % N_SEATS
        if nxt != self.dealer:
            self.current_player = nxt
            return
        # A seat that escaped before choosing shows no void (null).
        self.events.append({"type": "dingque_reveal",
                            "voids": [tiles.SUITS[v] if v >= 0 else None for v in self.void]})
        self.phase = "turn"
        if self.escaped[self.dealer]:
            self._next_draw(self.dealer)
        else:
            self.current_player = self.dealer

    def _claimants(self, s: int, k: int) -> list[int]:
        """Seats that can claim (S4): the cheap 碰 test first, then the cached waits."""
        suit = k // 9
        return [
            t for t in ((s + 1) % 4, (s + 2) % 4, (s + 3) % 4)
            if self._in_play(t) and ((suit != self.void[t] and self.hands[t][k] >= 2) or self._can_win_on(t, k))
        ]

    def _robbers(self, s: int, k: int) -> list[int]:
        return [t for t in self._others_in_play(s) if self._can_win_on(t, k)]

    def _claim_winners(self, seats: list[int]) -> list[int]:
        """一炮多响 (S4): every seat that declares 胡 wins."""
        return seats

    def _kong_units(self, reason: str) -> int:
        """S5, in points: 直杠 from the discarder, 面下杠 and 暗杠 from every seat in play."""
        r = self.rules
        units = {"direct_kong": r.direct_kong_units, "added_kong": r.added_kong_units,
                 "concealed_kong": r.concealed_kong_units}[reason]
        return units * r.base_points

    def _discard_wins(self, winners: list[int], src: int, k: int) -> None:
        """一炮多响 (S4): every winner settles one to one with the discarder, in one settlement
        event (B4: a short discarder splits what it holds among them)."""
        self._take_discard(src, k)
        self.won_tiles[winners[0]].append(k)
        records: list[Due | dict] = []
        income = self.kong_discard if self.rules.gang_pao_transfer else None
        for w in winners:
            first = not self.discarded[w] and not self.any_call
            ctx = bb.WinContext(after_kong=self.kong_discard is not None, first_turn=first,
                                     dealer=w == self.dealer, last_tile=self.wall_count == 0)
            records += self._score_win(w, k, src, ctx)
            if income is not None and income.payments:  # S12: the kong's income, to each winner
                records.append(Due(src, w, sum(income.payments.values()), "gang_pao_transfer",
                                   sum(income.paid.values())))
        if income is not None:
            income.transferred = True
        self._settle_event(records)
        self._after_wins(winners, src)

    def _rob_wins(self, robbers: list[int], s: int, k: int) -> None:
        self.won_tiles[robbers[0]].append(k)
        records: list[Due | dict] = []
        for w in robbers:
            ctx = bb.WinContext(rob_kong=True, dealer=w == self.dealer)
            records += self._score_win(w, k, s, ctx)
        self._settle_event(records)
        self._after_wins(robbers, s)

    def _self_draw_win(self) -> None:
        s = self.current_player
        k = self.drawn
        first = not self.discarded[s] and not self.any_call
        swapped = self.items and self.swapped  # S17.8: a swapped-in tile is never 杠上花
        ctx = bb.WinContext(self_drawn=True, after_kong=self.after_kong and not swapped, first_turn=first,
                                 dealer=s == self.dealer, last_tile=self.wall_count == 0)
        self._settle_event(self._score_win(s, k, None, ctx))
        self.hands[s][k] -= 1
        self.won_tiles[s].append(k)
        self._after_wins([s], s)

    def _wall_empty(self) -> None:
        self._exhaustive_draw()

    def _escape_dues(self, s: int) -> tuple[int, list[Due]]:
        """S16: what escaping seat s owes the other seats still at the table (not escaped).

        ``qq``: 16倍 to each that has not won, in the last four tiles the larger of that and its
        查大叫 value (S16.2). ``happy``: 扣豆 to no one and 赔偿 to each, from C_j, what s would pay
        j at an exhaustive draw now (S16.1)."""
        r = self.rules
        payees = [t for t in self._seats_after(s) if not self.escaped[t]]
        if r.escape_rule == "qq":
            payees = [t for t in payees if not self.won[t]]
            last_four = self.wall_count <= escape.QQ_LAST_TILES
            ready = [self._ready_now(t) if last_four else 0 for t in payees]
            points = escape.qq_escape_points(ready, self.wall_count, r.base_points)
            return 0, [self._due(s, t, p, "escape") for t, p in zip(payees, points)]
        pig = bb.flower_pig_now(self.hands[s], self.melds[s])
        ready = not pig and self._ready_now(s) > 0
        # The payees' 查大叫 values matter only to an escaper that would pay them.
        payee_pig = [bb.flower_pig_now(self.hands[t], self.melds[t]) for t in payees]
        payee_ready = [0 if pig or ready or self.won[t] or p else self._ready_now(t)
                       for t, p in zip(payees, payee_pig)]
        claims = escape.draw_check_claims(pig, ready, payee_pig, [self.won[t] for t in payees], payee_ready,
                                          r.flower_pig_points)
        penalty, beans = escape.happy_escape_beans(
            claims, sum(self._in_play(t) for t in payees), r.cap_points, r.room_coefficient, r.escape_factor,
            r.escape_penalty_floor, r.escape_compensation_floor)
        return penalty, [Due(s, t, c, "escape", b) for t, c, b in zip(payees, claims, beans)]

    def _escape_ends_hand(self) -> bool:
        """S16.2 (qq): always; S16.1 (happy): once fewer than two seats are still in play."""
        return self.rules.escape_rule == "qq" or sum(map(self._in_play, range(N_SEATS))) < 2

    def _ready_now(self, s: int) -> int:
        """Seat s's 查大叫 value if the wall ran out now (S16)."""
        void = self.void[s] if self.void[s] >= 0 else None
        return bb.ready_points_now(self.hands[s], self.melds[s], self.rules, void)

    # ------------------------------------------------------------------ flow and settlement

    def _after_wins(self, winners: list[int], source: int) -> None:
        """Blood battle continues after the last winner (S14) while two seats are still in play
        (three wins, or fewer after escapes, S16.1); classic ends at the first win."""
        for w in winners:
            self.won[w] = True
        if self.rules.mode == "classic" or sum(map(self._in_play, range(N_SEATS))) < 2:
            self.next_dealer = source
            self._end("win")
            return
        last = max(winners, key=lambda w: (w - source - 1) % N_SEATS)
        self._next_draw(last)

    def _score_win(self, w: int, k: int, source: int | None, ctx: bb.WinContext) -> list[Due | dict]:
        """Score a win: its ``hora`` event and its dues from the discarder or every seat in play (S11)."""
        hand = list(self.hands[w])
        if source is not None:
            hand[k] += 1
        score = bb.score_win(hand, self.melds[w], ctx, self.rules, self.void[w])
        if score is None:  # the mask only offers 胡 for winning hands
            raise AssertionError(f"seat {w} declared a win that does not score: {tiles.fmt(hand)}")
        self.wins.append(Win(w, k, source, score))
        hora = {
            "type": "hora", "actor": w, "target": w if source is None else source, "pai": tiles.name(k),
            "fans": [[f.name, f.fan] for f in score.fans], "X": score.X,
        }
        payers = [source] if source is not None else self._others_in_play(w)
        return [hora, *(self._due(p, w, score.X, "win") for p in payers)]

    def _exhaustive_draw(self) -> None:
        """流局 checks in order, each one settlement event: 查花猪, 查大叫, 退税 (S15), among the
        seats that have not escaped (S16: an escaper is no longer at the table)."""
        self.events.append({"type": "ryukyoku"})
        seats = [s for s in range(N_SEATS) if not self.escaped[s]]
        pigs = [s for s in seats if bb.is_flower_pig(self.hands[s], self.melds[s])]
        self._settle_event([self._due(p, t, self.rules.flower_pig_points, "flower_pig")
                            for p in pigs for t in seats if t not in pigs])
        in_play = [s for s in seats if not self.won[s] and s not in pigs]
        ready = {
            s: bb.ready_points(self.hands[s], self.melds[s], self.rules, self.void[s])
            for s in in_play
        }
        self._settle_event([self._due(s, t, ready[t], "not_ready")
                            for s in in_play if ready[s] == 0 for t in in_play if ready[t] > 0])
        refunds = []
        for income in self.kongs:
            m = income.maker
            if self._in_play(m) and (m in pigs or ready.get(m, 0) == 0) and not income.transferred:
                refunds += [Due(m, payer, points, "kong_refund", income.paid[payer])
                            for payer, points in income.payments.items() if not self.escaped[payer]]
        self._settle_event(refunds)
        self._end("draw")


def new_game(rules: BloodBattleRules, seed: int, hand_index: int = 0,
             dealer: int | None = None) -> BloodBattleGame:
    """A hand dealt from the seeded wall; the dealer comes from the seeded dice unless given."""
    wall, dice_dealer = seeded_wall(seed, hand_index)
    return BloodBattleGame(rules, wall, dice_dealer if dealer is None else dealer)


def scripted_wall(hands: Sequence[str], draws: str = "", tail: str = "", dealer: int = 0) -> list[int]:
    """A wall that deals ``hands`` (13 tiles each, in seat order; the dealer's 14th is the first
    of ``draws``), then draws ``draws`` from the head and ``tail`` (in replacement order) from
    the tail. The remaining tiles fill the middle in kind order, so 108 tiles are conserved."""
    return build_script_wall(SUIT_TILES, hands, draws, tail, dealer)
