"""The compiled blood-battle game: the flow of :mod:`mjenv.engine.blood_battle` and
:mod:`mjenv.engine.core` over a struct of arrays, one row per table.

Every function takes the :class:`State` and a table index ``t`` and mirrors the reference method
of the same name (``_discard`` → :func:`discard` ...), so a rule is found in the same place in both
engines. Actions arrive checked against ``mask``; :func:`apply` plays one and then every lone
legal action (the reference's ``auto_forced``), adding each seat's bean change to ``delta``.
Rule IDs: docs/rules-blood-battle.md.

The rule options ``escape`` (S16) and ``bankroll`` (B4) follow the reference too: "in play" is
neither won nor escaped (turn order, claimants, robbers, payers, the end of the hand); ESCAPE
(the last action) is in every mask; with balances each settlement event's payments are queued
and paid together (:mod:`.settlement`). With both off every payment moves at once, as before.

The rule option ``items`` (S17) follows the reference too, behind the rule vector's ``R_ITEMS``:
the pre-deal phase ``QIANKUN_PHASE`` (乾坤大挪移), the item actions after ESCAPE (from
``rules[R_ITEM_A]``) on a seat's own turn, their follow-up phases ``GIVE`` and ``NAME``, and the
items' generator seeded by the hand's wall (:mod:`..rules.items`, :mod:`..seeding`), so both
engines draw the same tiles. With it off none of this is reached.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.experimental import structref

from ...actions import BLOOD_BATTLE as L
from ...rules.escape import QQ_LAST_TILES
from ..rules.escape import draw_check_claims, escape_split, happy_escape_beans, qq_escape_points
from ..rules.items import N_ITEMS, QIANKUN, QIANLIYAN, TOUTIAN, YIHUA, nearest, qiankun_wall, qianliyan_part
from ..seeding import integers, words_generator
from ..rules.shapes import suited_is_wait
from .settlement import MAX_DUES, close_hand, owe, settle_event, take, transfer
from .structs import ArraysType
from ..rules.blood_battle import (ADDKONG, AFTER_KONG, ANKAN, DEALER, FIRST_TURN, KONG, PONG, R_ADDED, R_BALANCES,
                             R_BASE, R_CAP_POINTS, R_CLASSIC, R_COEF, R_CONCEALED, R_DIRECT, R_ESCAPE,
                             R_ESCAPE_QQ, R_FACTOR, R_FORCED, R_INVENTORY, R_ITEM_A, R_ITEMS, R_MIN_COMPENSATION,
                             R_MIN_PENALTY, R_PIG, R_QIANKUN_TILES, R_QIANLIYAN_PARTS, R_RAKE, R_TRANSFER, ROB_KONG,
                             SELF_DRAWN, flower_pig_now, is_flower_pig, ready_points, ready_points_now, win_fan,
                             win_points)

N_TILES = 108
W = 27  # kinds
MAX_RIVER = 40  # >= 2 seats stay in play and alternate draws: <= 28 draws + 4 碰 + the dealer's 14th
MAX_KONGS = 27  # one kong per kind at most
VOID_PHASE, TURN, CLAIM, ROB, OVER, QIANKUN_PHASE, GIVE, NAME = 0, 1, 2, 3, 4, 5, 6, 7
"""Phases; the first four are the reference's ``void``, ``turn``, ``claim``, ``rob`` (encoder order);
after ``OVER`` the item phases (S17), which show no phase plane, as in the reference."""
END_NONE, END_WIN, END_DRAW, END_ESCAPE = 0, 1, 2, 3

DISCARD_A, KONG_A, PONG_A, DIRECT_KONG_A, HU_A, ROB_A, PASS_A, VOID_A, N_ACTIONS = (
    L.DISCARD, L.KONG, L.PONG, L.DIRECT_KONG, L.HU, L.ROB_KONG, L.PASS, L.VOID, L.n)
ESCAPE_A = L.with_escape(True).ESCAPE  # S16: the last action, in a mask one column wider

FIELDS = (
    "wall", "head", "tail", "dealer", "hands", "meld", "n_melds", "river", "river_len", "river_counts",
    "won", "win_tile", "win_from", "win_fan", "win_order", "beans", "void", "discarded", "any_call", "kong_maker", "kong_pay",
    "kong_transferred", "n_kongs", "last_kong", "kong_discard", "phase", "current", "drawn",
    "after_kong", "claim_tile", "claim_from", "queue", "answers", "q_len", "q_pos", "end_reason",
    "next_dealer", "mask", "delta",
    # S16 and B4 (rule options escape and bankroll): who left, who won or left, the 扣豆 paid, the beans held
    # (kept over a match), the beans each payer really paid a kong, the due queue of a settlement event.
    "escaped", "out_of_play", "penalty", "balances", "kong_paid", "due_n", "due_from", "due_to", "due_beans",
    # S17 (rule option items): each seat's items left and used this hand, the items the seat to act
    # used this turn, the item decision open (item, kind given), the tile in hand came from a swap,
    # what each seat heard (wall index, -1 none) and learnt per kind with 千里眼 (part, -1 none;
    # the live wall's length then, -1 not asked), the 乾坤大挪移 users, the items' generator.
    "inventory", "item_uses", "turn_used", "item_pending", "item_given", "swapped", "shunfeng",
    "qly_part", "qly_wall", "qly_parts", "qk_users", "item_rng",
)
Arrays = namedtuple("Arrays", FIELDS)
"""The state's arrays, for Python (the compiled code reads the same buffers through :class:`State`)."""


@structref.register
class StateType(ArraysType):
    """The numba type of :class:`State`."""


class State(structref.StructRefProxy):
    """The arrays of every table, passed to compiled functions by reference: one pointer per call
    instead of a tuple of 36 arrays (whose reference counts every call would touch)."""


structref.define_proxy(State, StateType, list(FIELDS))


def new_state(n: int, n_actions: int = N_ACTIONS) -> tuple[State, Arrays]:
    """Zeroed arrays for ``n`` tables (:func:`deal` fills a table), and the compiled view of them;
    ``n_actions``: the width of the masks (one more with the ESCAPE action)."""
    i8, i16, i64 = np.int8, np.int16, np.int64
    arrays = Arrays(
        wall=np.zeros((n, N_TILES), i8), head=np.zeros(n, i16), tail=np.zeros(n, i16), dealer=np.zeros(n, i8),
        hands=np.zeros((n, 4, W), i8), meld=np.zeros((n, 4, W), i8), n_melds=np.zeros((n, 4), i8),
        river=np.zeros((n, 4, MAX_RIVER), i8), river_len=np.zeros((n, 4), i8),
        river_counts=np.zeros((n, 4, W), i8), won=np.zeros((n, 4), i8), win_tile=np.zeros((n, 4), i8),
        win_from=np.zeros((n, 4), i8), win_fan=np.zeros((n, 4), i16), win_order=np.zeros((n, 4), i8),
        beans=np.zeros((n, 4), i64), void=np.zeros((n, 4), i8), discarded=np.zeros((n, 4), i8),
        any_call=np.zeros(n, i8), kong_maker=np.zeros((n, MAX_KONGS), i8),
        kong_pay=np.zeros((n, MAX_KONGS, 4), np.int32), kong_transferred=np.zeros((n, MAX_KONGS), i8),
        n_kongs=np.zeros(n, i8), last_kong=np.zeros(n, i8), kong_discard=np.zeros(n, i8),
        phase=np.full(n, OVER, i8), current=np.full(n, -1, i8), drawn=np.zeros(n, i8),
        after_kong=np.zeros(n, i8), claim_tile=np.zeros(n, i8), claim_from=np.zeros(n, i8),
        queue=np.zeros((n, 3), i8), answers=np.zeros((n, 3), i8), q_len=np.zeros(n, i8),
        q_pos=np.zeros(n, i8), end_reason=np.zeros(n, i8), next_dealer=np.zeros(n, i8),
        mask=np.zeros((n, n_actions), i8), delta=np.zeros((n, 4), i64),
        escaped=np.zeros((n, 4), i8), out_of_play=np.zeros((n, 4), i8), penalty=np.zeros((n, 4), i64),
        balances=np.zeros((n, 4), i64),
        kong_paid=np.zeros((n, MAX_KONGS, 4), i64), due_n=np.zeros(n, i8), due_from=np.zeros((n, MAX_DUES), i8),
        due_to=np.zeros((n, MAX_DUES), i8), due_beans=np.zeros((n, MAX_DUES), i64),
        inventory=np.zeros((n, 4, N_ITEMS), i8), item_uses=np.zeros((n, 4, N_ITEMS), i8),
        turn_used=np.zeros((n, N_ITEMS), i8), item_pending=np.full(n, -1, i8), item_given=np.full(n, -1, i8),
        swapped=np.zeros(n, i8), shunfeng=np.full((n, 4), -1, i16), qly_part=np.zeros((n, 4, W), i8),
        qly_wall=np.full((n, 4, W), -1, i8), qly_parts=np.ones(n, i8), qk_users=np.zeros(n, i8),
        item_rng=np.zeros((n, 6), np.uint64),
    )
    return State(*arrays), arrays


# ------------------------------------------------------------------ queries


@njit(cache=True, nogil=True)
def wall_count(st: State, t: int) -> int:
    return st.tail[t] - st.head[t]


@njit(cache=True, nogil=True, inline="always")
def in_play(st: State, t: int, s: int) -> bool:
    """Seat s has neither won nor escaped (S16): one read, as the default game's ``won`` was."""
    return st.out_of_play[t, s] == 0


@njit(cache=True, nogil=True)
def holds_void(st: State, t: int, s: int) -> bool:
    """Whether the seat still holds tiles of its void suit (S2)."""
    v = st.void[t, s]
    if v < 0:
        return False
    for k in range(9 * v, 9 * v + 9):
        if st.hands[t, s, k]:
            return True
    return False


@njit(cache=True, nogil=True)
def can_win_on(st: State, t: int, s: int, k: int, table: np.ndarray) -> bool:
    """Whether seat s (holding 3n+1) wins on tile k: shape, no void tile (S2, S7)."""
    if st.won[t, s] or k // 9 == st.void[t, s] or holds_void(st, t, s):
        return False
    return suited_is_wait(st.hands[t, s], k, table)


@njit(cache=True, nogil=True)
def can_win_now(st: State, t: int, s: int, table: np.ndarray) -> bool:
    """Whether seat s wins on its own 3n+2 hand: the drawn tile completes the hand before it."""
    k = st.drawn[t]
    st.hands[t, s, k] -= 1
    wins = can_win_on(st, t, s, k, table)
    st.hands[t, s, k] += 1
    return wins


@njit(cache=True, nogil=True)
def forced(st: State, t: int, rules: np.ndarray) -> bool:
    """S13: once a draw has taken one of the wall's last four tiles (<= 3 left) every win must
    be taken."""
    return rules[R_FORCED] != 0 and wall_count(st, t) <= 3


@njit(cache=True, nogil=True)
def compute_mask(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> int:
    """The legal mask of ``current`` into ``mask[t]``; returns the number of legal actions. With
    the rule option escape every seat asked is in play and may also escape (S16)."""
    n = game_mask(st, t, rules, table)
    if n and rules[R_ESCAPE] and st.phase[t] < OVER:  # S17: no escape inside an item decision
        st.mask[t, ESCAPE_A] = 1
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def game_mask(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> int:
    """The legal actions of the game into ``mask[t]`` (all of them but ESCAPE); returns how many."""
    mask = st.mask[t]
    mask[:] = 0
    s, phase = st.current[t], st.phase[t]
    if phase == VOID_PHASE:
        mask[VOID_A : VOID_A + 3] = 1
        return 3
    if phase == OVER:
        return 0
    hand = st.hands[t, s]
    n = 0
    if phase == TURN:
        if st.drawn[t] >= 0 and can_win_now(st, t, s, table):
            mask[HU_A] = 1
            n += 1
            if forced(st, t, rules):
                return n
        v = st.void[t, s]
        lo, hi = (9 * v, 9 * v + 9) if holds_void(st, t, s) else (0, W)
        for k in range(lo, hi):
            if hand[k]:
                mask[DISCARD_A + k] = 1
                n += 1
        if wall_count(st, t) > 0:
            for k in range(W):
                if k // 9 != v and (hand[k] == 4 or (st.meld[t, s, k] == PONG and hand[k])):
                    mask[KONG_A + k] = 1
                    n += 1
            if rules[R_ITEMS]:  # S17.2: the items left to use this turn, while the wall holds a tile
                ia = rules[R_ITEM_A]
                for i in range(TOUTIAN, N_ITEMS):
                    if st.inventory[t, s, i] and not st.turn_used[t, i]:
                        mask[ia + i] = 1
                        n += 1
    elif phase == CLAIM:
        k = st.claim_tile[t]
        if can_win_on(st, t, s, k, table):
            mask[HU_A] = 1
            n += 1
            if forced(st, t, rules):
                return n
        if k // 9 != st.void[t, s]:
            if hand[k] >= 2:
                mask[PONG_A] = 1
                n += 1
            if hand[k] == 3 and wall_count(st, t) > 0:
                mask[DIRECT_KONG_A] = 1
                n += 1
        mask[PASS_A] = 1
        n += 1
    elif phase == ROB:
        mask[ROB_A] = 1
        n = 1
        if not forced(st, t, rules):
            mask[PASS_A] = 1
            n = 2
    else:
        n = item_phase_mask(st, t, s, mask, rules)
    return n


@njit(cache=True, nogil=True)
def item_phase_mask(st: State, t: int, s: int, mask: np.ndarray, rules: np.ndarray) -> int:
    """The item decisions (S17.2): use 乾坤大挪移 or keep it (PASS); give any concealed kind; name
    a kind, for 偷天换日 one with a copy in the live wall (S17.4), for 千里眼 any. Returns how many."""
    phase, ia = st.phase[t], rules[R_ITEM_A]
    if phase == QIANKUN_PHASE:
        mask[ia + QIANKUN] = 1
        mask[PASS_A] = 1
        return 2
    n = 0
    if phase == GIVE:
        for k in range(W):
            if st.hands[t, s, k]:
                mask[ia + N_ITEMS + k] = 1
                n += 1
        return n
    name = ia + N_ITEMS + W
    if st.item_pending[t] != TOUTIAN:
        mask[name : name + W] = 1
        return W
    for i in range(st.head[t], st.tail[t]):
        a = name + st.wall[t, i]
        n += mask[a] == 0
        mask[a] = 1
    return n


# ------------------------------------------------------------------ settlement


@njit(cache=True, nogil=True)
def pay(st: State, t: int, payer: int, payee: int, points: int, rules: np.ndarray) -> None:
    """A payment of ``points``·N beans between two seats (B1, B2): at once, or with balances
    queued for the settlement event (:func:`~.settlement.settle_event`, B4)."""
    owe(st, t, payer, payee, points * rules[R_COEF], rules[R_BALANCES] != 0)


@njit(cache=True, nogil=True)
def kong_made(st: State, t: int, maker: int, payers: int, points: int, rules: np.ndarray) -> None:
    """Record a kong and collect ``points`` from each seat of the bit set ``payers`` (S5), one
    settlement event; the kong keeps the points owed and the beans really paid (B4)."""
    keep = rules[R_BALANCES] != 0
    i = st.n_kongs[t]
    st.n_kongs[t] = i + 1
    st.kong_maker[t, i] = maker
    st.kong_transferred[t, i] = 0
    st.kong_pay[t, i, :] = 0
    st.kong_paid[t, i, :] = 0
    for j in range(1, 4):  # in turn order from the maker, as the reference's payers
        p = (maker + j) % 4
        if payers >> p & 1:
            pay(st, t, p, maker, points, rules)
    settle_event(st, t, keep)  # with balances: the beans paid, due by due, in due_beans
    due = 0
    for j in range(1, 4):
        p = (maker + j) % 4
        if payers >> p & 1 and points:
            st.kong_pay[t, i, p] += points
            st.kong_paid[t, i, p] += st.due_beans[t, due] if keep else points * rules[R_COEF]
            due += 1
    st.last_kong[t] = i


@njit(cache=True, nogil=True)
def others_in_play(st: State, t: int, s: int) -> int:
    """Bit set of the seats after ``s`` that have neither won nor escaped."""
    out = 0
    for i in range(1, 4):
        o = (s + i) % 4
        if in_play(st, t, o):
            out |= 1 << o
    return out


@njit(cache=True, nogil=True)
def end(st: State, t: int, reason: int, rules: np.ndarray) -> None:
    """Take the rake (B1; with balances at most what a seat holds, B4) and close the hand."""
    close_hand(st, t, reason, rules[R_RAKE], OVER, rules[R_BALANCES] != 0)


@njit(cache=True, nogil=True)
def settle_win(st: State, t: int, w: int, k: int, source: int, ctx: int, rules: np.ndarray,
               table: np.ndarray) -> None:
    """Score a win and collect from the discarder or every seat in play (S11)."""
    hand = st.hands[t, w].copy()
    if source >= 0:
        hand[k] += 1
    fan = win_fan(hand, st.meld[t, w], st.n_melds[t, w], ctx, st.void[t, w], rules, table)
    x = win_points(fan, ctx, rules)
    st.win_tile[t, w] = k
    # The win's record for hand_result: source (-1 self-drawn), total fan, 1-based order in the hand.
    st.win_from[t, w], st.win_fan[t, w] = source, fan
    st.win_order[t, w] = 1 + np.count_nonzero(st.win_order[t])
    if source >= 0:
        pay(st, t, source, w, x, rules)
    else:
        payers = others_in_play(st, t, w)
        for p in range(4):
            if payers >> p & 1:
                pay(st, t, p, w, x, rules)


@njit(cache=True, nogil=True)
def exhaustive_draw(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> None:
    """流局 checks in order, each one settlement event: 查花猪, 查大叫, 退税 (S15), among the seats
    that have not escaped (S16)."""
    keep = rules[R_BALANCES] != 0
    pig = np.zeros(4, np.bool_)
    for s in range(4):
        pig[s] = not st.escaped[t, s] and is_flower_pig(st.hands[t, s], st.meld[t, s])
    for p in range(4):
        if pig[p]:
            for o in range(4):
                if not pig[o] and not st.escaped[t, o]:
                    pay(st, t, p, o, rules[R_PIG], rules)
    settle_event(st, t, keep)
    ready = np.zeros(4, np.int64)
    playing = np.zeros(4, np.bool_)
    for s in range(4):
        playing[s] = in_play(st, t, s) and not pig[s]
        if playing[s]:
            ready[s] = ready_points(st.hands[t, s], st.meld[t, s], st.n_melds[t, s], st.void[t, s],
                                    rules, table)
    for s in range(4):
        if playing[s] and ready[s] == 0:
            for o in range(4):
                if playing[o] and ready[o] > 0:
                    pay(st, t, s, o, ready[o], rules)
    settle_event(st, t, keep)
    for i in range(st.n_kongs[t]):
        m = st.kong_maker[t, i]
        if in_play(st, t, m) and ready[m] == 0 and not st.kong_transferred[t, i]:  # a 花猪's ready is 0
            for j in range(1, 4):  # the beans really paid, back to each payer still at the table
                p = (m + j) % 4
                if not st.escaped[t, p]:
                    owe(st, t, m, p, st.kong_paid[t, i, p], keep)
    settle_event(st, t, keep)
    end(st, t, END_DRAW, rules)


# ------------------------------------------------------------------ flow


@njit(cache=True, nogil=True)
def new_turn(st: State, t: int, rules: np.ndarray) -> None:
    """A seat's turn starts (a draw or a 碰): with items, every item may be used once again (S17.2)."""
    if rules[R_ITEMS]:
        st.turn_used[t, :] = 0
        st.swapped[t] = 0


@njit(cache=True, nogil=True)
def draw_head(st: State, t: int, s: int, rules: np.ndarray) -> int:
    new_turn(st, t, rules)
    k = st.wall[t, st.head[t]]
    st.head[t] += 1
    st.hands[t, s, k] += 1
    return k


@njit(cache=True, nogil=True)
def replacement(st: State, t: int, s: int, rules: np.ndarray) -> None:
    """Kong replacement draw from the tail of the wall (S5)."""
    new_turn(st, t, rules)
    st.tail[t] -= 1
    k = st.wall[t, st.tail[t]]
    st.hands[t, s, k] += 1
    st.phase[t], st.current[t], st.drawn[t], st.after_kong[t] = TURN, s, k, 1


@njit(cache=True, nogil=True)
def next_draw(st: State, t: int, after: int, rules: np.ndarray, table: np.ndarray) -> None:
    """The next seat in play after ``after`` draws; an empty wall ends the hand."""
    s = (after + 1) % 4
    while not in_play(st, t, s):
        s = (s + 1) % 4
    if wall_count(st, t) == 0:
        exhaustive_draw(st, t, rules, table)
        return
    st.drawn[t] = draw_head(st, t, s, rules)
    st.phase[t], st.current[t], st.after_kong[t] = TURN, s, 0


@njit(cache=True, nogil=True)
def after_wins(st: State, t: int, winners: int, source: int, rules: np.ndarray, table: np.ndarray) -> None:
    """Blood battle continues after the last winner (S14) while two seats are still in play
    (three wins, or fewer after escapes, S16.1); classic ends at the first win."""
    n_in, last, far = 0, -1, -1
    for w in range(4):
        if winners >> w & 1:
            st.won[t, w] = 1
            st.out_of_play[t, w] = 1
            d = (w - source - 1) % 4
            if d > far:
                far, last = d, w
        n_in += in_play(st, t, w)
    if rules[R_CLASSIC] or n_in < 2:
        st.next_dealer[t] = source
        end(st, t, END_WIN, rules)
        return
    next_draw(st, t, last, rules, table)


@njit(cache=True, nogil=True)
def take_discard(st: State, t: int, src: int, k: int) -> None:
    """A claimed discard leaves the river."""
    st.river_len[t, src] -= 1
    st.river_counts[t, src, k] -= 1


@njit(cache=True, nogil=True)
def first_turn(st: State, t: int, s: int) -> bool:
    """天胡/地胡 chance: the seat has not discarded and nobody has called (S8)."""
    return not st.discarded[t, s] and not st.any_call[t]


@njit(cache=True, nogil=True)
def discard_wins(st: State, t: int, winners: int, src: int, k: int, rules: np.ndarray, table: np.ndarray) -> None:
    take_discard(st, t, src, k)
    kd = st.kong_discard[t]
    for i in range(1, 4):  # in turn order from the discarder, as the reference's answers
        w = (src + i) % 4
        if not winners >> w & 1:
            continue
        ctx = (AFTER_KONG if kd >= 0 else 0) | (FIRST_TURN if first_turn(st, t, w) else 0)
        ctx |= DEALER if w == st.dealer[t] else 0
        settle_win(st, t, w, k, src, ctx, rules, table)
        if kd >= 0 and rules[R_TRANSFER]:  # S12: the beans the kong really earned (B4)
            income = 0
            for p in range(4):
                income += st.kong_paid[t, kd, p]
            owe(st, t, src, w, income, rules[R_BALANCES] != 0)
            st.kong_transferred[t, kd] = 1
    settle_event(st, t, rules[R_BALANCES] != 0)  # 一炮多响: one settlement event
    after_wins(st, t, winners, src, rules, table)


@njit(cache=True, nogil=True)
def rob_wins(st: State, t: int, robbers: int, s: int, k: int, rules: np.ndarray, table: np.ndarray) -> None:
    for i in range(1, 4):
        w = (s + i) % 4
        if robbers >> w & 1:
            settle_win(st, t, w, k, s, ROB_KONG | (DEALER if w == st.dealer[t] else 0), rules, table)
    settle_event(st, t, rules[R_BALANCES] != 0)
    after_wins(st, t, robbers, s, rules, table)


@njit(cache=True, nogil=True)
def self_draw_win(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> None:
    s, k = st.current[t], st.drawn[t]
    # S17.8: a tile swapped in by an item is never 杠上花
    ctx = SELF_DRAWN | (AFTER_KONG if st.after_kong[t] and not st.swapped[t] else 0)
    ctx |= FIRST_TURN if first_turn(st, t, s) else 0
    ctx |= DEALER if s == st.dealer[t] else 0
    settle_win(st, t, s, k, -1, ctx, rules, table)
    settle_event(st, t, rules[R_BALANCES] != 0)
    st.hands[t, s, k] -= 1
    after_wins(st, t, 1 << s, s, rules, table)


@njit(cache=True, nogil=True)
def open_window(st: State, t: int, phase: int, n: int, rules: np.ndarray, table: np.ndarray) -> bool:
    """Start asking the ``n`` queued seats (claim or rob window); False when nobody is asked."""
    st.q_len[t], st.q_pos[t] = n, 0
    if n == 0:
        return False
    st.phase[t], st.current[t] = phase, st.queue[t, 0]
    return True


@njit(cache=True, nogil=True)
def discard(st: State, t: int, k: int, rules: np.ndarray, table: np.ndarray) -> None:
    s = st.current[t]
    st.hands[t, s, k] -= 1
    st.river[t, s, st.river_len[t, s]] = k
    st.river_len[t, s] += 1
    st.river_counts[t, s, k] += 1
    st.discarded[t, s] = 1
    st.kong_discard[t] = st.last_kong[t] if st.after_kong[t] else -1
    st.after_kong[t] = 0
    st.drawn[t] = -1
    st.claim_tile[t], st.claim_from[t] = k, s
    # Claimants (S4): the cheap 碰 test first, then the waits.
    n = 0
    for i in range(1, 4):
        o = (s + i) % 4
        if in_play(st, t, o) and ((k // 9 != st.void[t, o] and st.hands[t, o, k] >= 2)
                                  or can_win_on(st, t, o, k, table)):
            st.queue[t, n] = o
            n += 1
    if not open_window(st, t, CLAIM, n, rules, table):
        next_draw(st, t, s, rules, table)


@njit(cache=True, nogil=True)
def complete_added_kong(st: State, t: int, s: int, k: int, rules: np.ndarray) -> None:
    st.hands[t, s, k] -= 1
    st.meld[t, s, k] = ADDKONG
    st.any_call[t] = 1
    kong_made(st, t, s, others_in_play(st, t, s), rules[R_ADDED], rules)
    replacement(st, t, s, rules)


@njit(cache=True, nogil=True)
def self_kong(st: State, t: int, k: int, rules: np.ndarray, table: np.ndarray) -> None:
    """暗杠 with four in hand, else 面下杠 onto one's 碰, which others may rob first (S5, S6)."""
    s = st.current[t]
    if st.hands[t, s, k] == 4:
        st.hands[t, s, k] = 0
        st.meld[t, s, k] = ANKAN
        st.n_melds[t, s] += 1
        st.any_call[t] = 1
        kong_made(st, t, s, others_in_play(st, t, s), rules[R_CONCEALED], rules)
        replacement(st, t, s, rules)
        return
    st.claim_tile[t], st.claim_from[t] = k, s
    n = 0
    for i in range(1, 4):
        o = (s + i) % 4
        if in_play(st, t, o) and can_win_on(st, t, o, k, table):
            st.queue[t, n] = o
            n += 1
    if not open_window(st, t, ROB, n, rules, table):
        complete_added_kong(st, t, s, k, rules)


@njit(cache=True, nogil=True)
def resolve_claims(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> None:
    """All asked seats answered: 胡 first, then 杠/碰 (S4)."""
    k, src = st.claim_tile[t], st.claim_from[t]
    winners, caller, call = 0, -1, -1
    for i in range(st.q_len[t]):
        a, o = st.answers[t, i], st.queue[t, i]
        if a == HU_A:
            winners |= 1 << o
        elif (a == PONG_A or a == DIRECT_KONG_A) and caller < 0:
            caller, call = o, a
    if winners:
        discard_wins(st, t, winners, src, k, rules, table)
        return
    if caller >= 0:
        take_discard(st, t, src, k)
        st.any_call[t] = 1
        st.n_melds[t, caller] += 1
        if call == PONG_A:
            st.hands[t, caller, k] -= 2
            st.meld[t, caller, k] = PONG
            st.phase[t], st.current[t], st.drawn[t], st.after_kong[t] = TURN, caller, -1, 0
            new_turn(st, t, rules)
        else:
            st.hands[t, caller, k] -= 3
            st.meld[t, caller, k] = KONG
            kong_made(st, t, caller, 1 << src, rules[R_DIRECT], rules)
            replacement(st, t, caller, rules)
        return
    next_draw(st, t, src, rules, table)


@njit(cache=True, nogil=True)
def resolve_rob(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> None:
    k, s = st.claim_tile[t], st.claim_from[t]
    robbers = 0
    for i in range(st.q_len[t]):
        if st.answers[t, i] == ROB_A:
            robbers |= 1 << st.queue[t, i]
    if not robbers:
        complete_added_kong(st, t, s, k, rules)
        return
    st.hands[t, s, k] -= 1  # the kong is void; the 碰 stays
    rob_wins(st, t, robbers, s, k, rules, table)


@njit(cache=True, nogil=True)
def answer(st: State, t: int, action: int, rules: np.ndarray, table: np.ndarray) -> None:
    """Record the answer of the seat asked; ask the next one, or resolve the window."""
    i = st.q_pos[t]
    st.answers[t, i] = action
    st.q_pos[t] = i + 1
    if i + 1 < st.q_len[t]:
        st.current[t] = st.queue[t, i + 1]
    elif st.phase[t] == CLAIM:
        resolve_claims(st, t, rules, table)
    else:
        resolve_rob(st, t, rules, table)


@njit(cache=True, nogil=True)
def choose_void(st: State, t: int, suit: int, rules: np.ndarray, table: np.ndarray) -> None:
    """定缺 (S2)."""
    s = st.current[t]
    st.void[t, s] = suit
    next_void(st, t, s, rules, table)


@njit(cache=True, nogil=True)
def next_void(st: State, t: int, s: int, rules: np.ndarray, table: np.ndarray) -> None:
    """The next seat in play after s chooses; after the last one before the dealer the choices
    become public and the dealer plays (S2), or, when it escaped, the next seat draws (S16)."""
    dealer = st.dealer[t]
    nxt = (s + 1) % 4
    while nxt != dealer and st.escaped[t, nxt]:
        nxt = (nxt + 1) % 4
    if nxt != dealer:
        st.current[t] = nxt
        return
    st.phase[t] = TURN
    if st.escaped[t, dealer]:
        next_draw(st, t, dealer, rules, table)
    else:
        st.current[t] = dealer


# ------------------------------------------------------------------ items (S17)


@njit(cache=True, nogil=True)
def init_items(st: State, t: int, rules: np.ndarray) -> bool:
    """Each seat's inventory (S17.1), no uses or knowledge yet, and the items' generator seeded by
    the hand's wall (so a logged wall replays its draws). With a 乾坤大挪移 holder the hand waits
    undealt on the first holder from the dealer (phase ``QIANKUN_PHASE``): True; else False."""
    for s in range(4):
        for i in range(N_ITEMS):
            st.inventory[t, s, i] = rules[R_INVENTORY + N_ITEMS * s + i]
    st.item_uses[t] = 0
    st.turn_used[t] = 0
    st.item_pending[t], st.item_given[t], st.swapped[t], st.qk_users[t] = -1, -1, 0, 0
    st.shunfeng[t] = -1
    st.qly_part[t] = 0
    st.qly_wall[t] = -1
    st.qly_parts[t] = rules[R_QIANLIYAN_PARTS]
    st.item_rng[t, :] = words_generator(st.wall[t])
    dealer = st.dealer[t]
    for i in range(4):
        seat = (dealer + i) % 4
        if st.inventory[t, seat, QIANKUN]:
            st.head[t], st.tail[t], st.drawn[t] = 0, N_TILES, -1
            st.phase[t], st.current[t] = QIANKUN_PHASE, seat
            return True
    return False


@njit(cache=True, nogil=True)
def shunfeng_tile(st: State, t: int, seat: int) -> int:
    """S17.7: the kind ``seat`` heard with 顺风耳 while the knowledge holds (not drawn, not moved), else -1."""
    i = st.shunfeng[t, seat]
    if i < st.head[t] or i >= st.tail[t]:
        return -1
    return st.wall[t, i]


@njit(cache=True, nogil=True)
def play_item(st: State, t: int, action: int, rules: np.ndarray, table: np.ndarray) -> None:
    """An item action (S17): keep 乾坤大挪移 (PASS), use an item, or an item's follow-up step."""
    ia = rules[R_ITEM_A]
    if action == PASS_A:
        next_qiankun(st, t, rules, table)
    elif action < ia + N_ITEMS:
        use_item(st, t, action - ia, rules, table)
    else:
        item_step(st, t, action - ia - N_ITEMS, rules)


@njit(cache=True, nogil=True)
def use_item(st: State, t: int, item: int, rules: np.ndarray, table: np.ndarray) -> None:
    """A seat chooses an item: 乾坤大挪移 before the deal, else its follow-up step or its effect."""
    s = st.current[t]
    st.inventory[t, s, item] -= 1
    st.item_uses[t, s, item] += 1
    if item == QIANKUN:
        st.qk_users[t] |= 1 << s
        next_qiankun(st, t, rules, table)
        return
    st.turn_used[t, item] = 1
    if item == TOUTIAN or item == YIHUA:
        st.item_pending[t], st.phase[t] = item, GIVE
    elif item == QIANLIYAN:
        st.item_pending[t], st.phase[t] = item, NAME
    else:  # S17.7 顺风耳: the next ordinary draw
        st.shunfeng[t, s] = st.head[t]


@njit(cache=True, nogil=True)
def next_qiankun(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> None:
    """The next holder (in turn order from the dealer) decides, or the deal is made (S17.3) and
    定缺 starts."""
    dealer = st.dealer[t]
    for i in range((st.current[t] - dealer) % 4 + 1, 4):
        seat = (dealer + i) % 4
        if st.inventory[t, seat, QIANKUN]:
            st.current[t] = seat
            return
    if st.qk_users[t]:
        qiankun_wall(st.wall[t], dealer, st.qk_users[t], rules[R_QIANKUN_TILES], st.item_rng[t])
    deal_hands(st, t, rules)


@njit(cache=True, nogil=True)
def item_step(st: State, t: int, choice: int, rules: np.ndarray) -> None:
    """The follow-up decisions of an item (``choice``: give kind k is k, name kind k is 27 + k):
    the kind to give (偷天换日, 移花接木), the kind to name (偷天换日, 千里眼); then its effect, and
    the seat decides again (S17.2)."""
    s, item, head, tail = st.current[t], st.item_pending[t], st.head[t], st.tail[t]
    if st.phase[t] == GIVE:
        if item == TOUTIAN:
            st.item_given[t], st.phase[t] = choice, NAME
            return
        swap(st, t, s, choice, integers(st.item_rng[t], head, tail))  # S17.5
    else:
        named = choice - W
        if item == TOUTIAN:  # S17.4
            swap(st, t, s, st.item_given[t], nearest(st.wall[t], head, tail, named))
        else:  # S17.6
            st.qly_part[t, s, named] = qianliyan_part(st.wall[t], head, tail, named, rules[R_QIANLIYAN_PARTS])
            st.qly_wall[t, s, named] = tail - head
    st.item_pending[t], st.item_given[t], st.phase[t] = -1, -1, TURN


@njit(cache=True, nogil=True)
def swap(st: State, t: int, s: int, given: int, i: int) -> None:
    """The given tile takes wall index i's place; that tile comes to the hand as if drawn, so 胡 is
    offered as 自摸 on it (S17.8), never as 杠上花; a heard tile that moved is no longer known."""
    taken = st.wall[t, i]
    st.wall[t, i] = given
    st.hands[t, s, given] -= 1
    st.hands[t, s, taken] += 1
    for o in range(4):
        if st.shunfeng[t, o] == i:
            st.shunfeng[t, o] = -1
    st.drawn[t], st.swapped[t] = taken, 1


# ------------------------------------------------------------------ escape (S16)


@njit(cache=True, nogil=True)
def ready_now(st: State, t: int, s: int, rules: np.ndarray, table: np.ndarray) -> int:
    """Seat s's 查大叫 value if the wall ran out now (S16)."""
    return ready_points_now(st.hands[t, s], st.meld[t, s], st.n_melds[t, s], st.void[t, s], rules, table)


@njit(cache=True, nogil=True)
def escape_dues(st: State, t: int, s: int, rules: np.ndarray, table: np.ndarray, payees: np.ndarray,
                owed: np.ndarray) -> tuple[int, int]:
    """What escaping seat s owes (S16): the payees (in turn order from s) into ``payees`` and the
    beans owed each into ``owed``; returns (how many payees, the 扣豆 to no one in beans).

    ``qq``: 16倍 to each seat at the table that has not won, in the last four tiles the larger of
    that and its 查大叫 value (S16.2). ``happy``: 扣豆 and 赔偿 to each seat at the table, from C_j,
    what s would pay j at an exhaustive draw now (S16.1)."""
    qq = rules[R_ESCAPE_QQ] != 0
    m = 0
    for i in range(1, 4):
        o = (s + i) % 4
        if not st.escaped[t, o] and not (qq and st.won[t, o]):
            payees[m] = o
            m += 1
    ready = np.zeros(3, np.int64)
    if qq:
        left = wall_count(st, t)
        for j in range(m):
            if left <= QQ_LAST_TILES:
                ready[j] = ready_now(st, t, payees[j], rules, table)
        points = np.empty(m, np.int64)
        qq_escape_points(ready, left, rules[R_BASE], points)
        for j in range(m):
            owed[j] = points[j] * rules[R_COEF]
        return m, 0
    pig = flower_pig_now(st.hands[t, s], st.meld[t, s], st.n_melds[t, s])
    ready_self = not pig and ready_now(st, t, s, rules, table) > 0
    payee_pig = np.zeros(3, np.bool_)
    payee_won = np.zeros(3, np.bool_)
    playing = 0
    for j in range(m):
        o = payees[j]
        payee_pig[j] = flower_pig_now(st.hands[t, o], st.meld[t, o], st.n_melds[t, o])
        payee_won[j] = st.won[t, o] != 0
        playing += in_play(st, t, o)
        # The payees' 查大叫 values matter only to an escaper that would pay them.
        if not (pig or ready_self or payee_won[j] or payee_pig[j]):
            ready[j] = ready_now(st, t, o, rules, table)
    claims = np.empty(m, np.int64)
    draw_check_claims(pig, ready_self, payee_pig, payee_won, ready, rules[R_PIG], claims)
    penalty = happy_escape_beans(claims, playing, rules[R_CAP_POINTS], rules[R_COEF], rules[R_FACTOR],
                                 rules[R_MIN_PENALTY], rules[R_MIN_COMPENSATION], owed[:m])
    return m, penalty


@njit(cache=True, nogil=True)
def escape(st: State, t: int, rules: np.ndarray, table: np.ndarray) -> None:
    """The seat to act leaves the hand at once and pays what the escape rule asks (S16; from a
    limited balance as seed 002 逃跑 (a), (b) say, B4); the hand ends (qq, or fewer than two seats
    left in play) or plays on without it."""
    s, phase = st.current[t], st.phase[t]
    st.escaped[t, s] = 1
    st.out_of_play[t, s] = 1
    payees = np.empty(3, np.int64)
    owed = np.empty(3, np.int64)
    m, penalty = escape_dues(st, t, s, rules, table, payees, owed)
    paid = np.empty(m, np.int64)
    st.penalty[t, s] = escape_split(st.balances[t, s], rules[R_BALANCES] != 0, penalty, owed, paid)
    take(st, t, s, st.penalty[t, s])
    for j in range(m):
        transfer(st, t, s, payees[j], paid[j])
    n_in = 0
    for o in range(4):
        n_in += in_play(st, t, o)
    if rules[R_ESCAPE_QQ] or n_in < 2:
        end(st, t, END_ESCAPE, rules)
    elif phase == TURN:
        next_draw(st, t, s, rules, table)
    elif phase == CLAIM or phase == ROB:
        answer(st, t, PASS_A, rules, table)  # the escaper's answer is dropped: it claims nothing
    else:
        next_void(st, t, s, rules, table)


@njit(cache=True, nogil=True)
def play(st: State, t: int, action: int, rules: np.ndarray, table: np.ndarray) -> None:
    """Apply one legal action of ``current``."""
    if action == ESCAPE_A and rules[R_ESCAPE]:  # else it is the first item action (S17)
        escape(st, t, rules, table)
        return
    phase = st.phase[t]
    if rules[R_ITEMS] and (phase > OVER or action >= rules[R_ITEM_A]):
        play_item(st, t, action, rules, table)
        return
    if phase == TURN:
        if action == HU_A:
            self_draw_win(st, t, rules, table)
        elif action < KONG_A:
            discard(st, t, action - DISCARD_A, rules, table)
        else:
            self_kong(st, t, action - KONG_A, rules, table)
    elif phase == CLAIM or phase == ROB:
        answer(st, t, action, rules, table)
    else:
        choose_void(st, t, action - VOID_A, rules, table)


@njit(cache=True, nogil=True)
def apply(st: State, t: int, action: int, rules: np.ndarray, table: np.ndarray) -> bool:
    """Play ``action``, then every lone legal action; refresh ``mask[t]``. True when the hand ended."""
    st.delta[t, :] = 0
    play(st, t, action, rules, table)
    while st.phase[t] != OVER:
        if compute_mask(st, t, rules, table) != 1:
            break
        play(st, t, np.argmax(st.mask[t]), rules, table)
    return st.phase[t] == OVER


@njit(cache=True, nogil=True)
def deal(st: State, t: int, dealer: int, rules: np.ndarray, table: np.ndarray) -> None:
    """Start a hand on ``wall[t]`` (already written): 13 tiles each from the dealer on, then the
    dealer's 14th, which counts as drawn (天胡); every seat then chooses its void."""
    st.hands[t] = 0
    st.meld[t] = 0
    st.n_melds[t] = 0
    st.river_len[t] = 0
    st.river_counts[t] = 0
    st.won[t] = 0
    st.win_tile[t] = -1
    st.win_from[t] = -1
    st.win_fan[t] = 0
    st.win_order[t] = 0
    st.beans[t] = 0
    st.void[t] = -1
    st.discarded[t] = 0
    st.any_call[t] = 0
    st.n_kongs[t] = 0
    st.last_kong[t] = -1
    st.kong_discard[t] = -1
    st.after_kong[t] = 0
    st.claim_tile[t], st.claim_from[t] = -1, -1
    st.q_len[t], st.q_pos[t] = 0, 0
    st.end_reason[t] = END_NONE
    st.escaped[t] = 0
    st.out_of_play[t] = 0
    st.penalty[t] = 0
    st.due_n[t] = 0
    st.dealer[t] = dealer
    st.next_dealer[t] = dealer
    if rules[R_ITEMS] and init_items(st, t, rules):  # S17.2: the pre-deal decisions first
        compute_mask(st, t, rules, table)
        return
    deal_hands(st, t, rules)
    compute_mask(st, t, rules, table)


@njit(cache=True, nogil=True)
def deal_hands(st: State, t: int, rules: np.ndarray) -> None:
    """13 tiles to each seat from the dealer on, then the dealer's 14th (it counts as drawn:
    天胡); 定缺 follows."""
    dealer = st.dealer[t]
    for i in range(4):
        seat = (dealer + i) % 4
        for j in range(13 * i, 13 * i + 13):
            st.hands[t, seat, st.wall[t, j]] += 1
    st.head[t], st.tail[t] = 52, N_TILES
    st.phase[t], st.current[t] = VOID_PHASE, dealer
    st.drawn[t] = draw_head(st, t, dealer, rules)
