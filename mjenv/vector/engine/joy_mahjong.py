"""The compiled Joy Mahjong game: the flow of :mod:`mjenv.engine.joy_mahjong` and
:mod:`mjenv.engine.core` over a struct of arrays, one row per table.

Every function takes the :class:`State`, a table index ``t`` (and the ``rules`` array where a
rule field matters) and mirrors the reference method of the same name (``_discard`` → :func:`discard` ...), so a rule is found in
the same place in both engines. Actions arrive checked against ``mask``; :func:`apply` plays one
and then every lone legal action (the reference's ``auto_forced``), adding each seat's bean
change to ``delta``.

Fans (J4, J9) are the one thing not compiled: where a score is needed — the 胡 mask of the
eight_fan room and every win's settlement — :func:`score` returns to Python (numba ``objmode``)
and calls :func:`mjenv.rules.joy.score_win` with the same context the reference builds, then
resumes. Everything else (deal, 补花, 财神, claims, masks, bird, payments) is compiled.
Rule IDs: docs/rules-joy-mahjong.md (B: docs/rules-blood-battle.md).

The rule options follow the reference too: ``escape`` (J11) adds ESCAPE, the last action, to
every mask, and an escape ends the hand; ``bankroll`` (B4) pays each settlement event's payments
together from limited balances (:mod:`.settlement`).
"""

from __future__ import annotations

from collections import namedtuple
from functools import lru_cache

import numpy as np
from numba import njit, objmode
from numba.experimental import structref

from ...actions import JOY_MAHJONG as L
from ...config import JoyMahjongRules
from ...melds import Meld
from ...rules import joy as ref_joy
from ..rules.beans import bankroll_vector
from ..rules.escape import escape_split, joy_escape_x
from ..rules.joy import bird_seat, can_complete, can_win, chow_shapes, need_tables, wildcard_of
from .settlement import MAX_DUES, close_hand, owe, settle_event, transfer
from .structs import ArraysType

N_TILES = 144
W = 34  # kinds; flowers are 34..41 in the wall
MAX_RIVER = 48  # a seat discards at most once per draw or call; 48 is never reached
TURN, CLAIM, ROB, OVER = 0, 1, 2, 3
"""Phases, in the encoder's order (the reference's ``turn``, ``claim``, ``rob``, ``over``)."""
END_NONE, END_WIN, END_DRAW, END_ESCAPE = 0, 1, 2, 3
CHOW_M, PONG_M, KONG_M, ADDKONG_M, ANKAN_M = 0, 1, 2, 3, 4
"""Meld kinds (``meld_kind``), in the order of :data:`MELD_NAMES`."""
MELD_NAMES = ("chow", "pong", "kong", "addkong", "ankan")
HOW_SELF, HOW_DISCARD, HOW_ROB = 0, 1, 2
"""How a win is made: self-drawn, on a discard, robbing an added kong."""
SCORE_CACHE = 8  # win checks remembered per table until the next action (the reference's _win_scores)
# rules array fields; J11 escape (R_ESCAPE_X -1: the room's default) and B4 balances (the
# bankroll takes four entries, one per seat)
R_ROOM, R_ALL_MCR, R_WBW, R_COEF, R_RAKE, R_ESCAPE, R_ESCAPE_X, R_BALANCES = range(8)
R_BANKROLL, R_MIN_BEANS, R_SIZE = 8, 12, 13
ROOMS = ("popular", "eight_fan", "no_fan")
EIGHT_FAN = 1

DISCARD_A, KONG_A, CHOW_A, PONG_A, DIRECT_KONG_A, HU_A, ROB_A, PASS_A, N_ACTIONS = (
    L.DISCARD, L.KONG, L.CHOW, L.PONG, L.DIRECT_KONG, L.HU, L.ROB_KONG, L.PASS, L.n)
ESCAPE_A = L.with_escape(True).ESCAPE  # J11: the last action, in a mask one column wider

FIELDS = (
    "wall", "head", "tail", "dealer", "prevailing", "hands", "meld_counts", "meld_kind", "meld_tile",
    "n_melds", "river", "river_len", "river_counts", "flowers", "indicator", "wild", "won",
    "win_seat", "win_tile", "win_from", "win_fan", "win_x", "bird", "bird_seat", "beans", "phase",
    "current", "drawn", "after_kong", "claim_tile", "claim_from", "queue", "answers", "q_len", "q_pos",
    "end_reason", "last_drawn", "ready_key", "ready_val", "sc_n", "sc_key", "sc_val", "mask", "delta",
    # J11 and B4 (rule options escape and bankroll): who left, the beans held (kept over a
    # match) and the due queue of a settlement event.
    "escaped", "balances", "due_n", "due_from", "due_to", "due_beans",
    "suit_need", "honour_need",  # shared look-up tables of the win check, not per table
)
Arrays = namedtuple("Arrays", FIELDS)
"""The state's arrays, for Python (the compiled code reads the same buffers through :class:`State`)."""


@structref.register
class StateType(ArraysType):
    """The numba type of :class:`State`."""


class State(structref.StructRefProxy):
    """The arrays of every table, passed to compiled functions by reference: one pointer per call
    instead of a tuple of arrays whose reference counts every call would touch."""


structref.define_proxy(State, StateType, list(FIELDS))


def new_state(n: int, n_actions: int = N_ACTIONS) -> tuple[State, Arrays]:
    """Zeroed arrays for ``n`` tables (:func:`deal` fills a table), and the compiled view of them;
    ``n_actions``: the width of the masks (one more with the ESCAPE action)."""
    i8, i16, i32, i64 = np.int8, np.int16, np.int32, np.int64
    suit_need, honour_need = need_tables()
    arrays = Arrays(
        wall=np.zeros((n, N_TILES), i8), head=np.zeros(n, i16), tail=np.zeros(n, i16),
        dealer=np.zeros(n, i8), prevailing=np.zeros(n, i8), hands=np.zeros((n, 4, W), i8),
        meld_counts=np.zeros((n, 4, W), i8), meld_kind=np.zeros((n, 4, 4), i8),
        meld_tile=np.zeros((n, 4, 4), i8), n_melds=np.zeros((n, 4), i8),
        river=np.zeros((n, 4, MAX_RIVER), i8), river_len=np.zeros((n, 4), i8),
        river_counts=np.zeros((n, 4, W), i8), flowers=np.zeros((n, 4), i8),
        indicator=np.zeros(n, i8), wild=np.zeros(n, i8), won=np.zeros((n, 4), i8),
        win_seat=np.full(n, -1, i8), win_tile=np.full(n, -1, i8), win_from=np.full(n, -1, i8),
        win_fan=np.zeros(n, i32), win_x=np.zeros(n, i32), bird=np.full(n, -1, i8),
        bird_seat=np.full(n, -1, i8), beans=np.zeros((n, 4), i64), phase=np.full(n, OVER, i8),
        current=np.full(n, -1, i8), drawn=np.full(n, -1, i8), after_kong=np.zeros(n, i8),
        claim_tile=np.zeros(n, i8), claim_from=np.zeros(n, i8), queue=np.zeros((n, 3), i8),
        answers=np.zeros((n, 3), i8), q_len=np.zeros(n, i8), q_pos=np.zeros(n, i8),
        end_reason=np.zeros(n, i8), last_drawn=np.full(n, -1, i8), ready_key=np.full((n, 4, 2 * W), -1, i8),
        ready_val=np.zeros((n, 4), i8), sc_n=np.zeros(n, i8), sc_key=np.zeros((n, SCORE_CACHE), i32),
        sc_val=np.zeros((n, SCORE_CACHE), i8), mask=np.zeros((n, n_actions), i8),
        delta=np.zeros((n, 4), i64), escaped=np.zeros((n, 4), i8), balances=np.zeros((n, 4), i64),
        due_n=np.zeros(n, i8), due_from=np.zeros((n, MAX_DUES), i8), due_to=np.zeros((n, MAX_DUES), i8),
        due_beans=np.zeros((n, MAX_DUES), i64), suit_need=suit_need, honour_need=honour_need,
    )
    return State(*arrays), arrays


def rules_array(rules: JoyMahjongRules) -> np.ndarray:
    """The rule fields the compiled engine reads, as an int64 array (R_* indices)."""
    out = np.zeros(R_SIZE, np.int64)
    out[R_ROOM] = ROOMS.index(rules.room)
    out[R_ALL_MCR] = rules.discard_payers == "all_mcr"
    out[R_WBW] = rules.wucaishen_blocks_wufanhe
    out[R_COEF] = rules.room_coefficient
    out[R_RAKE] = rules.rake
    out[R_ESCAPE] = rules.escape
    out[R_ESCAPE_X] = -1 if rules.escape_x is None else rules.escape_x
    bankroll_vector(out, rules, R_BALANCES, R_BANKROLL, R_MIN_BEANS)
    return out


# ------------------------------------------------------------------ fans (the reference scorer)


@lru_cache(maxsize=None)
def _scoring_rules(room: int, wbw: bool) -> JoyMahjongRules:
    """The rules object score_win reads (room and the 无番和 rule only)."""
    return JoyMahjongRules(room=ROOMS[room], wucaishen_blocks_wufanhe=wbw)


def score_py(hand: np.ndarray, kinds: np.ndarray, tiles: np.ndarray, k: int, wild: int, how: int,
             after_kong: bool, last_tile: bool, fourth: bool, seat_wind: int, prevailing: int,
             flowers: int, room: int, wbw: bool) -> tuple[int, int, int]:
    """:func:`mjenv.rules.joy.score_win` of one win: (fan, fan without flowers, X), or -1s when
    it does not score. Called from the compiled engine (``objmode``)."""
    melds = [Meld(MELD_NAMES[kinds[i]], int(tiles[i])) for i in range(len(kinds))]
    ctx = ref_joy.JoyContext(
        self_drawn=how == HOW_SELF, after_kong=bool(after_kong), rob_kong=how == HOW_ROB,
        last_tile=bool(last_tile), fourth_tile=bool(fourth), seat_wind=int(seat_wind),
        prevailing_wind=int(prevailing), flowers=int(flowers))
    sc = ref_joy.score_win(hand, melds, int(k), int(wild), ctx, _scoring_rules(int(room), bool(wbw)))
    if sc is None:
        return -1, -1, -1
    return sc.fan, sc.fan_without_flowers, sc.X


@njit(cache=True)
def _call_scorer(hand: np.ndarray, kinds: np.ndarray, tiles: np.ndarray, k: int, wild: int, how: int,
                 after_kong: bool, last_tile: bool, fourth: bool, seat_wind: int, prevailing: int,
                 flowers: int, room: int, wbw: bool) -> tuple[int, int, int]:
    """Back to Python for the fan count (holds the GIL only inside)."""
    with objmode(fan="int64", fwo="int64", x="int64"):
        fan, fwo, x = score_py(hand, kinds, tiles, k, wild, how, after_kong, last_tile, fourth,
                               seat_wind, prevailing, flowers, room, wbw)
    return fan, fwo, x


@njit(cache=True, nogil=True)
def visible(st: State, t: int, k: int) -> int:
    """Copies of kind k face up: rivers, exposed melds, the indicator (和绝张, J9)."""
    n = 0
    for s in range(4):
        n += st.river_counts[t, s, k]
        for i in range(st.n_melds[t, s]):
            kind, tile = st.meld_kind[t, s, i], st.meld_tile[t, s, i]
            if kind == CHOW_M:
                n += tile <= k <= tile + 2
            elif kind == PONG_M:
                n += 3 * (tile == k)
            elif kind != ANKAN_M:
                n += 4 * (tile == k)
    return n + (st.indicator[t] == k)


@njit(cache=True, nogil=True)
def wall_count(st: State, t: int) -> int:
    return st.tail[t] - st.head[t]


@njit(cache=True, nogil=True)
def wall_spent(st: State, t: int) -> bool:
    """J8/J9: only flowers (or nothing) left to draw: the last tile has been drawn (海底), and no
    kong is offered, as with an empty wall."""
    for i in range(st.head[t], st.tail[t]):
        if st.wall[t, i] < W:
            return False
    return True


@njit(cache=True, nogil=True)
def score(st: State, rules: np.ndarray, t: int, s: int, k: int, how: int, seen: int) -> tuple[int, int, int]:
    """J4/J9 score of seat s's hand (k included): the reference's ``_score``."""
    n = st.n_melds[t, s]
    return _call_scorer(
        st.hands[t, s].copy(), st.meld_kind[t, s, :n].copy(), st.meld_tile[t, s, :n].copy(), k,
        st.wild[t], how, how == HOW_SELF and st.after_kong[t] != 0,
        how != HOW_ROB and wall_spent(st, t), seen == 3, (s - st.dealer[t]) % 4,
        st.prevailing[t], st.flowers[t, s], rules[R_ROOM], rules[R_WBW] != 0)


# ------------------------------------------------------------------ win checks


@njit(cache=True, nogil=True)
def ready(st: State, t: int, s: int) -> bool:
    """Whether some tile completes seat s's 3n+1 concealed tiles, cached on its tiles and melds
    (the reference's ``_ready``: the pre-check of every win test)."""
    hand, melded, key = st.hands[t, s], st.meld_counts[t, s], st.ready_key[t, s]
    same = True
    for k in range(W):
        if key[k] != hand[k] or key[W + k] != melded[k]:
            same = False
            break
    if not same:
        key[:W] = hand
        key[W:] = melded
        st.ready_val[t, s] = can_complete(hand, st.n_melds[t, s], st.wild[t], melded, st.suit_need,
                                          st.honour_need)
    return st.ready_val[t, s] != 0


@njit(cache=True, nogil=True)
def win_ok(st: State, rules: np.ndarray, t: int, s: int, k: int, how: int) -> bool:
    """Whether seat s may win on tile k (self: k is in the hand; discard/rob: k is added) — the
    shape (J2) and the eight_fan room's minimum (J5): the reference's ``_win_score``."""
    hand = st.hands[t, s]
    if how == HOW_SELF:
        hand[k] -= 1
        r = ready(st, t, s)
        hand[k] += 1
    else:
        r = ready(st, t, s)
    if not r:
        return False
    key = (s * 3 + how) * W + k
    for i in range(st.sc_n[t]):
        if st.sc_key[t, i] == key:
            return st.sc_val[t, i] != 0
    if how != HOW_SELF:
        hand[k] += 1
    ok = can_win(hand, st.n_melds[t, s], st.wild[t], st.meld_counts[t, s], st.suit_need, st.honour_need)
    if ok and rules[R_ROOM] == EIGHT_FAN:
        # A claimed discard still lies in the river: it is not one of the other copies.
        fan, fwo, x = score(st, rules, t, s, k, how, visible(st, t, k) - (how == HOW_DISCARD))
        ok = fan >= 0 and fwo >= 8
    if how != HOW_SELF:
        hand[k] -= 1
    i = st.sc_n[t]
    if i < SCORE_CACHE:
        st.sc_key[t, i], st.sc_val[t, i] = key, ok
        st.sc_n[t] = i + 1
    return ok


# ------------------------------------------------------------------ deal and draws (J1, J2)


@njit(cache=True, nogil=True)
def draw(st: State, t: int, s: int, from_tail: bool) -> int:
    """Draw for seat s from the head or the tail, replacing flowers from the tail (J1).

    Returns the tile, plus 64 when a flower was replaced; -1 when a flower's replacement finds
    the wall empty."""
    if from_tail:
        st.tail[t] -= 1
        k = st.wall[t, st.tail[t]]
    else:
        k = st.wall[t, st.head[t]]
        st.head[t] += 1
    if k < W:
        st.hands[t, s, k] += 1
        st.last_drawn[t] = k
        return k
    while True:
        st.flowers[t, s] += 1
        if st.tail[t] == st.head[t]:
            return -1
        st.tail[t] -= 1
        k = st.wall[t, st.tail[t]]
        if k < W:
            break
    st.hands[t, s, k] += 1
    st.last_drawn[t] = k
    return k + 64


@njit(cache=True, nogil=True)
def deal(st: State, t: int, wall: np.ndarray, dealer: int, prevailing: int) -> None:
    """A new hand on table t: deal, 补花 and the 财神 indicator (the reference's ``_deal``)."""
    st.wall[t, :] = wall
    st.dealer[t], st.prevailing[t] = dealer, prevailing
    st.hands[t] = 0
    st.meld_counts[t] = 0
    st.n_melds[t] = 0
    st.river_len[t] = 0
    st.river_counts[t] = 0
    st.flowers[t] = 0
    st.won[t] = 0
    st.win_seat[t] = st.win_tile[t] = st.win_from[t] = -1
    st.win_fan[t] = st.win_x[t] = 0
    st.bird[t] = st.bird_seat[t] = -1
    st.beans[t] = 0
    st.after_kong[t] = 0
    st.q_len[t] = st.q_pos[t] = 0
    st.end_reason[t] = END_NONE
    st.escaped[t] = 0
    st.due_n[t] = 0
    st.ready_key[t] = -1
    st.sc_n[t] = 0
    st.drawn[t] = st.last_drawn[t] = -1
    held = np.zeros((4, 14), np.int8)  # flowers dealt, awaiting 补花, in the order dealt
    n_held = np.zeros(4, np.int64)
    for i in range(4):
        seat = (dealer + i) % 4
        for j in range(13 * i, 13 * i + 13):
            k = wall[j]
            if k >= W:
                held[seat, n_held[seat]] = k
                n_held[seat] += 1
            else:
                st.hands[t, seat, k] += 1
    k = wall[52]
    st.head[t], st.tail[t] = 53, N_TILES
    fourteenth_flower = k >= W
    if fourteenth_flower:
        held[dealer, n_held[dealer]] = k
        n_held[dealer] += 1
    else:
        st.hands[t, dealer, k] += 1
        st.drawn[t] = st.last_drawn[t] = k
    for i in range(4):
        seat = (dealer + i) % 4
        for _ in range(n_held[seat]):
            st.flowers[t, seat] += 1
            got = draw(st, t, seat, True) % 64  # 8 flowers, 91 tiles left: never empty here
            if seat == dealer and fourteenth_flower:
                st.drawn[t] = got
    while True:  # the 财神 indicator (J2); a flower there is set aside, out of play
        k = st.wall[t, st.head[t]]
        st.head[t] += 1
        if k < W:
            break
    st.indicator[t], st.wild[t] = k, wildcard_of(k)
    st.phase[t], st.current[t] = TURN, dealer


@njit(cache=True, nogil=True)
def next_draw(st: State, rules: np.ndarray, t: int, after: int) -> None:
    """The next seat draws from the head; an empty wall ends the hand (荒庄, J10)."""
    s = (after + 1) % 4
    if wall_count(st, t) == 0:
        end(st, rules, t, END_DRAW)
        return
    got = draw(st, t, s, False)
    if got < 0:
        end(st, rules, t, END_DRAW)
        return
    st.drawn[t] = got % 64
    st.phase[t], st.current[t], st.after_kong[t] = TURN, s, 0


@njit(cache=True, nogil=True)
def replacement(st: State, rules: np.ndarray, t: int, s: int) -> None:
    """Kong replacement from the tail; 杠上开花 only if it is not a flower's replacement."""
    got = draw(st, t, s, True)
    if got < 0:
        end(st, rules, t, END_DRAW)
        return
    st.phase[t], st.current[t], st.drawn[t] = TURN, s, got % 64
    st.after_kong[t] = got < 64


# ------------------------------------------------------------------ masks


@njit(cache=True, nogil=True)
def compute_mask(st: State, rules: np.ndarray, t: int) -> int:
    """The legal mask of ``current`` into ``mask[t]``; returns the number of legal actions. With
    the rule option escape every seat asked may also escape (J11)."""
    n = game_mask(st, rules, t)
    if n and rules[R_ESCAPE]:
        st.mask[t, ESCAPE_A] = 1
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def game_mask(st: State, rules: np.ndarray, t: int) -> int:
    """The legal actions of the game into ``mask[t]`` (all of them but ESCAPE); returns how many."""
    mask = st.mask[t]
    mask[:] = 0
    phase = st.phase[t]
    if phase == OVER:
        return 0
    s = st.current[t]
    hand = st.hands[t, s]
    if phase == TURN:
        if st.drawn[t] >= 0 and win_ok(st, rules, t, s, st.drawn[t], HOW_SELF):
            mask[HU_A] = 1
        for k in range(W):
            if hand[k] > 0:
                mask[DISCARD_A + k] = 1
        if not wall_spent(st, t):
            for k in range(W):
                if hand[k] == 4 and k != st.wild[t]:
                    mask[KONG_A + k] = 1
            for i in range(st.n_melds[t, s]):
                k = st.meld_tile[t, s, i]
                if st.meld_kind[t, s, i] == PONG_M and hand[k] > 0:
                    mask[KONG_A + k] = 1
    elif phase == CLAIM:
        k = st.claim_tile[t]
        if win_ok(st, rules, t, s, k, HOW_DISCARD):
            mask[HU_A] = 1
        if hand[k] >= 2:
            mask[PONG_A] = 1
            if hand[k] == 3 and not wall_spent(st, t):
                mask[DIRECT_KONG_A] = 1
        if s == (st.claim_from[t] + 1) % 4:
            shapes = chow_shapes(hand, k, st.wild[t])
            for shape in range(3):
                if shapes >> shape & 1:
                    mask[CHOW_A + shape] = 1
        mask[PASS_A] = 1
    else:
        mask[ROB_A] = 1
        mask[PASS_A] = 1
    n = 0
    for a in range(N_ACTIONS):
        n += mask[a]
    return n


# ------------------------------------------------------------------ claim windows (J3)


@njit(cache=True, nogil=True)
def claimants(st: State, rules: np.ndarray, t: int, s: int, k: int) -> None:
    """Seats that can claim discard k, into the queue: none for a wildcard (J2), 吃 only from
    the left (J3)."""
    st.q_len[t] = st.q_pos[t] = 0
    if k == st.wild[t]:
        return
    for i in range(1, 4):
        c = (s + i) % 4
        if (st.hands[t, c, k] >= 2 or (i == 1 and chow_shapes(st.hands[t, c], k, st.wild[t]) != 0)
                or win_ok(st, rules, t, c, k, HOW_DISCARD)):
            st.queue[t, st.q_len[t]] = c
            st.q_len[t] += 1


@njit(cache=True, nogil=True)
def robbers(st: State, rules: np.ndarray, t: int, s: int, k: int) -> None:
    """Seats that can rob the added kong of k (抢杠和), into the queue."""
    st.q_len[t] = st.q_pos[t] = 0
    for i in range(1, 4):
        c = (s + i) % 4
        if win_ok(st, rules, t, c, k, HOW_ROB):
            st.queue[t, st.q_len[t]] = c
            st.q_len[t] += 1


@njit(cache=True, nogil=True)
def discard(st: State, rules: np.ndarray, t: int, k: int) -> None:
    s = st.current[t]
    st.hands[t, s, k] -= 1
    st.river[t, s, st.river_len[t, s]] = k
    st.river_len[t, s] += 1
    st.river_counts[t, s, k] += 1
    st.after_kong[t] = 0
    st.drawn[t] = -1
    st.claim_tile[t], st.claim_from[t] = k, s
    claimants(st, rules, t, s, k)
    if st.q_len[t]:
        st.phase[t], st.current[t] = CLAIM, st.queue[t, 0]
    else:
        next_draw(st, rules, t, s)


@njit(cache=True, nogil=True)
def add_meld(st: State, t: int, s: int, kind: int, tile: int) -> None:
    """Record a declared meld and its tiles (the fifth-copy rule, J2)."""
    i = st.n_melds[t, s]
    st.meld_kind[t, s, i], st.meld_tile[t, s, i] = kind, tile
    st.n_melds[t, s] = i + 1
    if kind == CHOW_M:
        for j in range(3):
            st.meld_counts[t, s, tile + j] += 1
    else:
        st.meld_counts[t, s, tile] += 3 if kind == PONG_M else 4


@njit(cache=True, nogil=True)
def take_discard(st: State, t: int, src: int, k: int) -> None:
    """A claimed discard leaves the river."""
    st.river_len[t, src] -= 1
    st.river_counts[t, src, k] -= 1


@njit(cache=True, nogil=True)
def resolve_claims(st: State, rules: np.ndarray, t: int) -> None:
    """All asked seats answered: 胡 first (the first in turn order wins: 截和), then 杠/碰, then 吃."""
    k, src, n = st.claim_tile[t], st.claim_from[t], st.q_len[t]
    for i in range(n):
        if st.answers[t, i] == HU_A:
            w = st.queue[t, i]
            take_discard(st, t, src, k)
            st.hands[t, w, k] += 1
            settle(st, rules, t, w, k, src, HOW_DISCARD)
            return
    for i in range(n):
        a = st.answers[t, i]
        if a == PONG_A or a == DIRECT_KONG_A:
            c = st.queue[t, i]
            take_discard(st, t, src, k)
            if a == PONG_A:
                st.hands[t, c, k] -= 2
                add_meld(st, t, c, PONG_M, k)
                st.phase[t], st.current[t], st.drawn[t], st.after_kong[t] = TURN, c, -1, 0
            else:
                st.hands[t, c, k] -= 3
                add_meld(st, t, c, KONG_M, k)
                replacement(st, rules, t, c)
            return
    for i in range(n):
        a = st.answers[t, i]
        if CHOW_A <= a < CHOW_A + 3:
            c = st.queue[t, i]
            take_discard(st, t, src, k)
            low = k - (a - CHOW_A)
            for j in range(low, low + 3):
                if j != k:
                    st.hands[t, c, j] -= 1
            add_meld(st, t, c, CHOW_M, low)
            st.phase[t], st.current[t], st.drawn[t], st.after_kong[t] = TURN, c, -1, 0
            return
    next_draw(st, rules, t, src)


@njit(cache=True, nogil=True)
def self_kong(st: State, rules: np.ndarray, t: int, k: int) -> None:
    """暗杠 (four in hand) or 加杠 onto one's 碰, which the others may rob first."""
    s = st.current[t]
    if st.hands[t, s, k] == 4:
        st.hands[t, s, k] = 0
        add_meld(st, t, s, ANKAN_M, k)
        replacement(st, rules, t, s)
        return
    st.claim_tile[t], st.claim_from[t] = k, s
    robbers(st, rules, t, s, k)
    if st.q_len[t]:
        st.phase[t], st.current[t] = ROB, st.queue[t, 0]
    else:
        complete_added_kong(st, rules, t, s, k)


@njit(cache=True, nogil=True)
def complete_added_kong(st: State, rules: np.ndarray, t: int, s: int, k: int) -> None:
    st.hands[t, s, k] -= 1
    for i in range(st.n_melds[t, s]):
        if st.meld_kind[t, s, i] == PONG_M and st.meld_tile[t, s, i] == k:
            st.meld_kind[t, s, i] = ADDKONG_M
    st.meld_counts[t, s, k] += 1
    replacement(st, rules, t, s)


@njit(cache=True, nogil=True)
def resolve_rob(st: State, rules: np.ndarray, t: int) -> None:
    k, s = st.claim_tile[t], st.claim_from[t]
    for i in range(st.q_len[t]):
        if st.answers[t, i] == ROB_A:
            w = st.queue[t, i]
            st.hands[t, s, k] -= 1  # the kong is void; the 碰 stays
            st.hands[t, w, k] += 1
            settle(st, rules, t, w, k, s, HOW_ROB)
            return
    complete_added_kong(st, rules, t, s, k)


# ------------------------------------------------------------------ settlement (J5-J8, B1)


@njit(cache=True, nogil=True)
def pay(st: State, rules: np.ndarray, t: int, payer: int, payee: int, points: int) -> None:
    """A payment of points·N beans between two seats (B1, B2): at once, or with balances queued
    for the settlement event (:func:`~.settlement.settle_event`, B4)."""
    owe(st, t, payer, payee, points * rules[R_COEF], rules[R_BALANCES] != 0)


@njit(cache=True, nogil=True)
def end(st: State, rules: np.ndarray, t: int, reason: int) -> None:
    """Take the rake (B1; with balances at most what a seat holds, B4) and close the hand."""
    close_hand(st, t, reason, rules[R_RAKE], OVER, rules[R_BALANCES] != 0)


@njit(cache=True, nogil=True)
def escape(st: State, rules: np.ndarray, t: int) -> None:
    """J11: the seat to act escapes; it pays each other seat X_e (``escape_x``), from a limited
    balance split in the ratio owed (B4), and the hand ends."""
    s = st.current[t]
    st.escaped[t, s] = 1
    owed = np.full(3, joy_escape_x(rules[R_ESCAPE_X], rules[R_ROOM]) * rules[R_COEF], np.int64)
    paid = np.empty(3, np.int64)
    escape_split(st.balances[t, s], rules[R_BALANCES] != 0, 0, owed, paid)
    for i in range(1, 4):
        transfer(st, t, s, (s + i) % 4, paid[i - 1])
    end(st, rules, t, END_ESCAPE)


@njit(cache=True, nogil=True)
def settle(st: State, rules: np.ndarray, t: int, w: int, k: int, source: int, how: int) -> None:
    """Score the win (k already in w's hand), draw the bird, pay (J4-J8), end (J10)."""
    fan, fwo, x = score(st, rules, t, w, k, how, visible(st, t, k))
    st.hands[t, w, k] -= 1
    st.won[t, w] = 1
    st.win_seat[t], st.win_tile[t], st.win_from[t], st.win_fan[t], st.win_x[t] = w, k, source, fan, x
    dealer = st.dealer[t]
    bird = st.last_drawn[t]  # J8: when only flowers are left, the last tile drawn (海底)
    for i in range(st.head[t], st.tail[t]):
        if st.wall[t, i] < W:
            bird = st.wall[t, i]  # else the next non-flower tile of the wall
            break
    b_seat = bird_seat(bird, dealer)
    st.bird[t], st.bird_seat[t] = bird, b_seat
    for i in range(1, 4):  # payers in turn order from the winner (J6)
        payer = (w + i) % 4
        if source < 0:
            amount = x
        elif rules[R_ALL_MCR]:
            amount = fan + 8 if payer == source else 8
        elif payer == source:
            amount = x
        else:
            continue
        if dealer == w or dealer == payer:  # J7
            amount *= 2
        if b_seat == w or b_seat == payer:  # J8
            amount *= 2
        pay(st, rules, t, payer, w, amount)
    settle_event(st, t, rules[R_BALANCES] != 0)
    end(st, rules, t, END_WIN)


# ------------------------------------------------------------------ stepping


@njit(cache=True, nogil=True)
def play(st: State, rules: np.ndarray, t: int, action: int) -> None:
    """Apply one legal action of ``current`` (the reference's ``_play``)."""
    st.sc_n[t] = 0
    if action == ESCAPE_A:
        escape(st, rules, t)
        return
    phase = st.phase[t]
    if phase == TURN:
        if action == HU_A:
            settle(st, rules, t, st.current[t], st.drawn[t], -1, HOW_SELF)
        elif action < KONG_A:
            discard(st, rules, t, action)
        else:
            self_kong(st, rules, t, action - KONG_A)
        return
    st.answers[t, st.q_pos[t]] = action
    st.q_pos[t] += 1
    if st.q_pos[t] < st.q_len[t]:
        st.current[t] = st.queue[t, st.q_pos[t]]
    elif phase == CLAIM:
        resolve_claims(st, rules, t)
    else:
        resolve_rob(st, rules, t)


@njit(cache=True, nogil=True)
def apply(st: State, rules: np.ndarray, t: int, action: int) -> bool:
    """Play ``action`` and every lone legal action after it; returns whether the hand ended."""
    play(st, rules, t, action)
    while st.phase[t] != OVER:
        if compute_mask(st, rules, t) != 1:
            return False
        a = 0
        while st.mask[t, a] == 0:
            a += 1
        play(st, rules, t, a)
    return True
