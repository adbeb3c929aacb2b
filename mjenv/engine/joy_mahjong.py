"""The Joy Mahjong (欢乐麻将) game: the Joy layer on the shared core (:mod:`mjenv.engine.core`).

The core deals, draws, runs the claim windows and settles beans as events (B1–B2; rule IDs:
docs/rules-joy-mahjong.md).
This layer adds the 144-tile wall with flowers and 补花 (J1), the 财神 wildcard (J2), 吃 from the
seat on the left and 截和 (J3), fans and rooms through :mod:`mjenv.rules.joy` (J4, J5, J9), who
pays with the bird and dealer doubling through :mod:`mjenv.rules.joy_settlement` (J6–J8), and
the end of the hand at the first win or an empty wall (荒庄, J10), and, with the rule option
``escape``, at an escape (J11: the escaper pays each other seat ``escape_x``). Kongs pay nothing at
once (their worth is in the fans). It knows nothing about PettingZoo.

Deal, in this order (a pure function of the wall; the ``start_hand`` event also records the
prevailing wind, so a replay log can rebuild the hand):

1. Seat ``dealer`` takes 13 tiles from the head, then each next seat 13, then the dealer a 14th.
2. 补花 of the deal: from the dealer on, in turn order, each seat sets aside every flower it
   holds (in the order dealt) and draws a replacement from the tail for each, again while a
   replacement is a flower. Public events: ``hua`` (a flower set aside; a flower is never
   a ``tsumo``), then ``tsumo`` with ``replacement``.
3. The 财神 indicator: the next head tile is flipped (``indicator`` event); a flower there is
   set aside out of play (it belongs to no seat) and the next head tile flipped. The indicator
   stays face up, out of play; the wildcard is its successor (:func:`mjenv.rules.joy.wildcard_of`).

In play a drawn flower is set aside at once and replaced from the tail (no decision); a win on
that replacement is a plain self-draw, and so is a win on a flower's replacement after a kong
(杠上开花 only when the kong's own replacement tile wins). When a replacement is due and the wall
is empty the hand is a 荒庄. The dealer's ``drawn`` tile is the 14th, or, when that was a
flower, the last replacement the dealer got.

Win context (J9): 和绝张 when the winning kind's other three copies are visible — in the rivers,
in exposed melds (吃/碰/直杠/加杠; not 暗杠, which lie face down) or as the face-up 财神
indicator; the winning tile itself and concealed hands never count. 海底捞月 / 妙手回春 when no
non-flower tile is left to draw (J8: the last tile is the last non-flower tile drawn; it is also
the bird, and no kong is offered after it). Seat winds count from the dealer (dealer = East);
the prevailing wind is given.

Phases: ``turn``, ``claim`` (胡 / 杠 / 碰 / 吃 / pass, asked seat by seat from the discarder,
resolved together: 胡 > 杠/碰 > 吃, several 胡 → the first in turn order wins, J3), ``rob``
(抢杠胡 / pass on a 加杠), ``over``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import tiles
from ..actions import JOY_MAHJONG as L
from ..config import JoyMahjongRules
from ..melds import Meld
from ..rules import escape, joy, joy_settlement
from .core import N_SEATS, Due, GameCore, IllegalActionError, KongIncome, Win, build_script_wall, shuffled

__all__ = ["JOY_TILES", "N_SEATS", "IllegalActionError", "JoyMahjongGame", "KongIncome", "Win",
           "new_game", "scripted_wall", "seeded_wall"]

FLOWERS = list(range(tiles.N_KINDS, tiles.N_KINDS + tiles.N_FLOWERS))
JOY_TILES = [k for k in range(tiles.N_KINDS) for _ in range(4)] + FLOWERS
N_TILES = len(JOY_TILES)  # 144


def seeded_wall(seed: int, hand_index: int = 0) -> tuple[list[int], int, int]:
    """The shuffled 144-tile wall, the dice-rolled dealer and a seeded prevailing wind (0-3 =
    E S W N) of a hand: a pure function of (seed, hand)."""
    wall, (dealer, wind) = shuffled(JOY_TILES, seed, hand_index, n_extra=2)
    return wall, dealer, wind


# k -> (shape, the two kinds from the hand) of each 吃 on a discard of kind k (none on an honour)
_CHOW_TILES = [tuple((shape, *(t for t in (k - shape, k - shape + 1, k - shape + 2) if t != k))
                     for shape in range(3) if k % 9 - shape >= 0 and k % 9 - shape + 2 <= 8)
               if k < tiles.N_SUIT_KINDS else () for k in range(tiles.N_KINDS)]


class JoyMahjongGame(GameCore):
    """One hand of Joy Mahjong, ending at the first win or an empty wall (J10).

    ``prevailing_wind``: 0-3 (E S W N). With ``auto_forced`` (the default) a decision with a
    single legal action is played at once; scripted tests may turn it off.
    """

    layout = L

    def __init__(self, rules: JoyMahjongRules, wall: Sequence[int], dealer: int,
                 prevailing_wind: int = 0, auto_forced: bool = True, balances: Sequence[int] | None = None) -> None:
        if sorted(wall) != JOY_TILES:
            raise ValueError("a Joy Mahjong wall holds each of the 34 kinds 4 times and the 8 flowers once")
        if not (isinstance(prevailing_wind, (int, np.integer)) and 0 <= prevailing_wind < 4):
            raise ValueError(f"prevailing_wind must be 0-3 (E S W N), got {prevailing_wind!r}")
        super().__init__(rules, wall, dealer, auto_forced, balances)
        self.rules: JoyMahjongRules = rules
        self.prevailing_wind = int(prevailing_wind)
        self.events[0]["prevailing_wind"] = self.prevailing_wind  # start_hand: replays need it
        self.seat_winds = [(s - self.dealer) % N_SEATS for s in range(N_SEATS)]  # dealer = East
        self.flowers: list[list[int]] = [[] for _ in range(N_SEATS)]
        # Tiles of each seat's declared melds: the fifth-copy rule of wildcards (J2).
        self.meld_counts = [bytearray(tiles.N_KINDS) for _ in range(N_SEATS)]
        self.indicator = -1
        self.indicator_flowers: list[int] = []  # flowers flipped as indicators, out of play
        self.wild = -1
        self.last_drawn = -1  # the last non-flower tile drawn from the wall: 海底's bird (J8)
        self.bird: int | None = None  # the bird's kind and seat after a win (J8)
        self.bird_seat: int | None = None
        self.next_dealer = (self.dealer + 1) % N_SEATS  # J10: the deal passes every hand
        self._win_scores: dict[tuple[int, int, str, bytes], joy.JoyScore | None] = {}
        # Per seat: (its 3n+1 concealed tiles and melded tiles, whether some tile completes them).
        self._ready_cache: list[tuple[bytearray, bool] | None] = [None] * N_SEATS
        self._deal()

    # ------------------------------------------------------------------ deal

    def _deal(self) -> None:
        """Deal, 补花 and the indicator, in the order of the module docstring."""
        held: list[list[int]] = [[] for _ in range(N_SEATS)]  # flowers dealt, awaiting 补花
        for i in range(N_SEATS):
            seat = (self.dealer + i) % N_SEATS
            for k in self.wall[13 * i : 13 * i + 13]:
                if k >= tiles.N_KINDS:
                    held[seat].append(k)
                else:
                    self.hands[seat][k] += 1
        k = self.wall[52]
        self.head = 53
        fourteenth_flower = k >= tiles.N_KINDS
        if fourteenth_flower:
            held[self.dealer].append(k)
        else:
            self.hands[self.dealer][k] += 1
            self.drawn = self.last_drawn = k
            self.events.append({"type": "tsumo", "actor": self.dealer, "pai": tiles.name(k)})
        for i in range(N_SEATS):
            seat = (self.dealer + i) % N_SEATS
            for f in held[seat]:
                got = self._flower_out(seat, f)
                if seat == self.dealer and fourteenth_flower:
                    self.drawn = got  # the 14th's flower is the dealer's last one
        while True:  # the 财神 indicator (J2)
            k = self.wall[self.head]
            self.head += 1
            if k < tiles.N_KINDS:
                break
            self.indicator_flowers.append(k)
            self.events.append({"type": "indicator_flower", "pai": tiles.name(k)})
        self.indicator, self.wild = k, joy.wildcard_of(k)
        self.events.append({"type": "indicator", "pai": tiles.name(k), "wild": tiles.name(self.wild)})

    def _flower_out(self, s: int, f: int) -> int:
        """补花 of the deal: set flower ``f`` aside, draw its replacement (a full wall never runs
        out here: 8 flowers, 91 tiles left)."""
        self.flowers[s].append(f)
        self.events.append({"type": "hua", "actor": s, "pai": tiles.name(f)})
        got = self._draw(s, from_tail=True)
        assert got is not None
        return got[0]

    # ------------------------------------------------------------------ draws (flowers, J1)

    def _draw(self, s: int, from_tail: bool) -> tuple[int, bool] | None:
        """Draw for seat s from the head or the tail, replacing flowers from the tail (J1).

        Returns (tile, whether a flower was replaced), or None when a flower's replacement
        finds the wall empty."""
        if from_tail:
            self.tail -= 1
            k = self.wall[self.tail]
        else:
            k = self.wall[self.head]
            self.head += 1
        if k >= tiles.N_KINDS:
            while True:
                self.flowers[s].append(k)
                self.events.append({"type": "hua", "actor": s, "pai": tiles.name(k)})
                if self.tail == self.head:
                    return None
                self.tail -= 1
                k = self.wall[self.tail]
                if k < tiles.N_KINDS:
                    break
            self.events.append({"type": "tsumo", "actor": s, "pai": tiles.name(k), "replacement": True})
            self.hands[s][k] += 1
            self.last_drawn = k
            return k, True
        event = {"type": "tsumo", "actor": s, "pai": tiles.name(k)}
        if from_tail:
            event["replacement"] = True
        self.events.append(event)
        self.hands[s][k] += 1
        self.last_drawn = k
        return k, False

    def _next_draw(self, after: int) -> None:
        """The next seat draws from the head; an empty wall ends the hand (荒庄, J10)."""
        s = (after + 1) % N_SEATS
        if self.wall_count == 0:
            self._wall_empty()
            return
        got = self._draw(s, from_tail=False)
        if got is None:
            self._wall_empty()
            return
        self.drawn = got[0]
        self.phase, self.current_player, self.after_kong = "turn", s, False

    def _replacement(self, s: int) -> None:
        """Kong replacement from the tail; 杠上开花 only if it is not a flower's replacement."""
        got = self._draw(s, from_tail=True)
        if got is None:
            self._wall_empty()
            return
        self.phase, self.current_player, self.drawn, self.after_kong = "turn", s, got[0], not got[1]

    # ------------------------------------------------------------------ masks

    def _compute_mask(self) -> np.ndarray:
        mask = bytearray(self.layout.n)  # list-fast item writes; returned as an int8 view
        s = self.current_player
        hand = self.hands[s]
        if self.phase == "turn":
            if self.drawn is not None and self._win_score(s, self.drawn, "self") is not None:
                mask[L.HU] = 1
            mask[L.DISCARD : L.DISCARD + tiles.N_KINDS] = hand.translate(tiles.HELD)
            if not self._wall_spent():
                for k in self._self_kongs(s):
                    mask[L.KONG + k] = 1
        elif self.phase == "claim":
            k = self.claim_tile
            if self._win_score(s, k, "discard") is not None:
                mask[L.HU] = 1
            if hand[k] >= 2:
                mask[L.PONG] = 1
                if hand[k] == 3 and not self._wall_spent():
                    mask[L.DIRECT_KONG] = 1
            if s == (self.claim_from + 1) % N_SEATS:
                for shape in self._chows(s, k):
                    mask[L.CHOW + shape] = 1
            mask[L.PASS] = 1
        elif self.phase == "rob":
            mask[L.ROB_KONG] = 1
            mask[L.PASS] = 1
        return np.frombuffer(mask, np.int8)

    def _self_kongs(self, s: int) -> list[int]:
        """Kinds the seat may kong on its own turn: 暗杠 or 加杠, never the wildcard (J2)."""
        hand = self.hands[s]
        out = [k for k in range(tiles.N_KINDS) if hand[k] == 4 and k != self.wild] if 4 in hand else []
        out += [m.tile for m in self.melds[s] if m.kind == "pong" and hand[m.tile]]
        return sorted(out)

    def _chows(self, s: int, k: int) -> list[int]:
        """吃 shapes (0 low, 1 middle, 2 high: where the claimed tile sits) seat s can make on k;
        the two tiles from the hand are never the wildcard (J2)."""
        hand, w = self.hands[s], self.wild
        return [shape for shape, a, b in _CHOW_TILES[k] if hand[a] and hand[b] and a != w and b != w]

    def _win_score(self, s: int, k: int, how: str) -> joy.JoyScore | None:
        """The score of seat s winning on tile k (``self``-draw: k is in the hand; ``discard`` or
        ``rob``: k is added), or None when it is no legal win (shape, J2; room minimum, J5).

        Scores are computed only for the eight_fan room's minimum; elsewhere the shape check
        decides and :meth:`_settle` scores. Cached until the next action."""
        hand = self.hands[s]
        if how == "self":
            hand[k] -= 1
            ready = self._ready(s)
            hand[k] += 1
        else:
            ready = self._ready(s)
        if not ready:
            return None
        key = (s, k, how, bytes(hand))
        if key in self._win_scores:
            return self._win_scores[key]
        if how != "self":
            hand[k] += 1
        melded = self.meld_counts[s] if self.melds[s] else None
        score: joy.JoyScore | None = None
        if joy.can_win(hand, len(self.melds[s]), self.wild, melded):
            if self.rules.room == "eight_fan":
                # A claimed discard still lies in the river: it is not one of the other copies.
                score = self._score(s, k, how, self._visible(k) - (how == "discard"))
                if score is not None and not joy.is_legal_win(score, self.rules):
                    score = None
            else:
                score = _SHAPE_OK
        if how != "self":
            hand[k] -= 1
        self._win_scores[key] = score
        return score

    def _ready(self, s: int) -> bool:
        """Whether some tile completes seat s's 3n+1 concealed tiles (:func:`joy.can_complete`),
        cached until they change: the fast pre-check of every win test (most hands are far from
        ready)."""
        hand = self.hands[s]
        key = hand + self.meld_counts[s]  # a new bytearray: a snapshot of both
        cached = self._ready_cache[s]
        if cached is None or cached[0] != key:
            melded = self.meld_counts[s] if self.melds[s] else None
            cached = self._ready_cache[s] = (key, joy.can_complete(hand, len(self.melds[s]), self.wild, melded))
        return cached[1]

    def _score(self, s: int, k: int, how: str, seen: int) -> joy.JoyScore | None:
        """J4/J9 score of seat s's hand (k included) through :func:`mjenv.rules.joy.score_win`;
        ``seen``: the other copies of k face up (和绝张 at 3)."""
        ctx = joy.JoyContext(
            self_drawn=how == "self", after_kong=how == "self" and self.after_kong,
            rob_kong=how == "rob", last_tile=how != "rob" and self._wall_spent(),
            fourth_tile=seen == 3, seat_wind=self.seat_winds[s],
            prevailing_wind=self.prevailing_wind, flowers=len(self.flowers[s]))
        return joy.score_win(self.hands[s], self.melds[s], k, self.wild, ctx, self.rules)

    def _wall_spent(self) -> bool:
        """J8/J9: only flowers (or nothing) left to draw: the last tile has been drawn (海底), and
        no kong is offered, as with an empty wall."""
        if self.head < self.tail and self.wall[self.head] < tiles.N_KINDS:
            return False  # the common case, without copying the wall
        return joy_settlement.wall_spent(self.wall[self.head : self.tail])

    def _visible(self, k: int) -> int:
        """Copies of kind k face up on the table: rivers, exposed melds, the indicator (和绝张)."""
        n = int(self.river_counts[:, k].sum()) + (self.indicator == k)
        for melds in self.melds:
            for m in melds:
                if m.kind != "ankan":
                    n += m.kinds().count(k)
        return n

    # ------------------------------------------------------------------ core hooks

    def _claimants(self, s: int, k: int) -> list[int]:
        """Seats that can claim discard k: none for a wildcard (J2), 吃 only from the left (J3)."""
        if k == self.wild:
            return []
        return [t for t in self._seats_after(s)
                if self.hands[t][k] >= 2 or (t == (s + 1) % N_SEATS and self._chows(t, k))
                or self._win_score(t, k, "discard") is not None]

    def _robbers(self, s: int, k: int) -> list[int]:
        return [t for t in self._seats_after(s) if self._win_score(t, k, "rob") is not None]

    def _claim_winners(self, seats: list[int]) -> list[int]:
        """截和 (J3): of several 胡, only the first in turn order from the discarder wins."""
        return seats[:1]

    def _play(self, action: int) -> None:
        self._win_scores.clear()
        super()._play(action)

    def _claim_pong(self, caller: int, src: int, k: int) -> None:
        self.meld_counts[caller][k] += 3
        super()._claim_pong(caller, src, k)

    def _claim_kong(self, caller: int, src: int, k: int) -> None:
        self.meld_counts[caller][k] += 4
        super()._claim_kong(caller, src, k)

    def _claim_chow(self, caller: int, src: int, k: int, shape: int) -> None:
        for t in range(k - shape, k - shape + 3):
            self.meld_counts[caller][t] += 1
        super()._claim_chow(caller, src, k, shape)

    def _self_kong(self, k: int) -> None:
        s = self.current_player
        if self.hands[s][k] == 4:
            self.meld_counts[s][k] += 4
        super()._self_kong(k)

    def _complete_added_kong(self, s: int, k: int) -> None:
        self.meld_counts[s][k] += 1
        super()._complete_added_kong(s, k)

    def _discard_wins(self, winners: list[int], src: int, k: int) -> None:
        self._take_discard(src, k)
        w = winners[0]
        self.hands[w][k] += 1
        self._settle(w, k, src, "discard")

    def _rob_wins(self, robbers: list[int], s: int, k: int) -> None:
        w = robbers[0]
        self.hands[w][k] += 1
        self._settle(w, k, s, "rob")

    def _self_draw_win(self) -> None:
        self._settle(self.current_player, self.drawn, None, "self")

    def _wall_empty(self) -> None:
        """荒庄 (J10): nobody pays; the rake is still taken."""
        self.events.append({"type": "ryukyoku"})
        self._end("draw")

    def _escape_dues(self, s: int) -> tuple[int, list[Due]]:
        """J11: the escaper pays each other seat X_e (``escape_x``); no penalty to no one."""
        x = escape.joy_escape_x(self.rules.escape_x, self.rules.room)
        return 0, [self._due(s, t, x, "escape") for t in self._seats_after(s)]

    # ------------------------------------------------------------------ settlement

    def _settle(self, w: int, k: int, source: int | None, how: str) -> None:
        """Score the win (its tile k already in w's hand), draw the bird, pay (J4–J8), end (J10)."""
        score = self._score(w, k, how, self._visible(k))  # a claimed discard has left the river
        if score is None:  # the mask only offers 胡 for winning hands
            raise AssertionError(f"seat {w} declared a win that does not score: {tiles.fmt(self.hands[w])}")
        self.hands[w][k] -= 1
        self.won_tiles[w].append(k)
        self.won[w] = True
        self.wins.append(Win(w, k, source, score))
        self.events.append({
            "type": "hora", "actor": w, "target": w if source is None else source, "pai": tiles.name(k),
            "fans": [[f.name, f.total] for f in score.fans], "fan": score.fan, "X": score.X,
        })
        self.bird = joy_settlement.bird_tile(self.wall[self.head : self.tail], self.last_drawn)
        self.bird_seat = joy_settlement.bird_seat(self.bird, self.dealer)
        self.events.append({"type": "bird", "pai": tiles.name(self.bird), "seat": self.bird_seat})
        pairs = joy_settlement.payment_pairs(w, source, self.dealer, self.bird_seat, score.X,
                                             self.rules, fan=score.fan)
        self._settle_event([self._due(payer, payee, points, "win") for payer, payee, points in pairs])
        self._end("win")


# A marker for "wins by shape" where no score was needed for the mask (popular, no_fan rooms).
_SHAPE_OK: joy.JoyScore = object()  # type: ignore[assignment]


def new_game(rules: JoyMahjongRules, seed: int, hand_index: int = 0, dealer: int | None = None,
             prevailing_wind: int | None = None) -> JoyMahjongGame:
    """A hand dealt from the seeded wall; dealer and prevailing wind seeded unless given."""
    wall, dice, wind = seeded_wall(seed, hand_index)
    return JoyMahjongGame(rules, wall, dice if dealer is None else dealer,
                          wind if prevailing_wind is None else prevailing_wind)


def scripted_wall(hands: Sequence[str], draws: str = "", tail: str = "", dealer: int = 0) -> list[int]:
    """A wall that deals ``hands`` (13 tiles each, in seat order; flowers allowed, ``1f-8f``),
    then ``draws`` from the head (the first is the dealer's 14th, the next the 财神 indicator
    unless flowers come first) and ``tail`` (in replacement order: 补花 of the deal first, then
    kong and flower replacements) from the tail. The rest fills the middle in kind order, so
    the 144 tiles are conserved."""
    return build_script_wall(JOY_TILES, hands, draws, tail, dealer)
