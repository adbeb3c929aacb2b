"""The compiled Joy Mahjong observation and ``state()`` encoders: the same planes and values as
:class:`mjenv.encoding.JoyMahjongObserver` (version 0), written into preallocated buffers.

Plane offsets are constants here (numba freezes globals into its cache); a test checks them
against the reference observer's ``views`` / ``state_views``. The optional planes (``optional``
bits of :mod:`.optional`) follow the default ones.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine.joy_mahjong import ADDKONG_M, ANKAN_M, CHOW_M, CLAIM, KONG_M, OVER, PONG_M, ROB, TURN, W, State
from .optional import optional_planes

RECENT = 4
WALL_ROWS = 90
OBS_PLANES, STATE_PLANES = 82, 176
# Observation planes (JoyMahjongObserver.views).
O_HAND, O_DRAWN, O_CLAIM, O_CHOW, O_PONG, O_KONG, O_OWN_ANKAN, O_RIVER, O_RECENT = 0, 4, 5, 6, 10, 14, 18, 19, 23
O_WILD, O_INDICATOR, O_WON_TILE, O_FLOWERS, O_ANKAN_COUNT, O_DEALER, O_BEANS = 39, 40, 41, 45, 49, 53, 57
O_SEAT, O_SEAT_WIND, O_PREVAILING, O_PHASE, O_WALL, O_AFTER_KONG, O_RULES = 61, 65, 69, 73, 76, 77, 78
# State planes (JoyMahjongObserver.state_views).
S_HANDS, S_CHOW, S_PONG, S_KONG, S_ANKAN, S_RIVER, S_RECENT, S_WON_TILE = 0, 16, 20, 24, 28, 32, 36, 52
S_FLOWERS, S_DEALER, S_BEANS, S_CURRENT, S_PHASE, S_CLAIM, S_WILD, S_INDICATOR = 56, 60, 64, 68, 72, 75, 76, 77
S_PREVAILING, S_WALL_ORDER, S_WALL_FLOWERS, S_WALL = 78, 82, 172, 175
OBS_VIEWS = {"hand": O_HAND, "drawn": O_DRAWN, "claim": O_CLAIM, "chow": O_CHOW, "pong": O_PONG,
             "kong": O_KONG, "own_ankan": O_OWN_ANKAN, "river": O_RIVER, "recent": O_RECENT,
             "wild": O_WILD, "indicator": O_INDICATOR, "won_tile": O_WON_TILE, "flowers": O_FLOWERS,
             "ankan_count": O_ANKAN_COUNT, "dealer": O_DEALER, "beans": O_BEANS, "seat": O_SEAT,
             "seat_wind": O_SEAT_WIND, "prevailing": O_PREVAILING, "phase": O_PHASE, "wall": O_WALL,
             "after_kong": O_AFTER_KONG, "rules": O_RULES}
STATE_VIEWS = {"hands": S_HANDS, "chow": S_CHOW, "pong": S_PONG, "kong": S_KONG, "ankan": S_ANKAN,
               "river": S_RIVER, "recent": S_RECENT, "won_tile": S_WON_TILE, "flowers": S_FLOWERS,
               "dealer": S_DEALER, "beans": S_BEANS, "current": S_CURRENT, "phase": S_PHASE,
               "claim": S_CLAIM, "wild": S_WILD, "indicator": S_INDICATOR, "prevailing": S_PREVAILING,
               "wall_order": S_WALL_ORDER, "wall_flowers": S_WALL_FLOWERS, "wall": S_WALL}


@njit(cache=True, nogil=True)
def observe(st: State, t: int, seat: int, bean_scale: float, rule_flags: np.ndarray, optional: int,
            out: np.ndarray) -> None:
    """The observation of ``seat`` at table t into ``out`` (82, 34, + the optional planes): only
    what that seat may know."""
    out[:] = 0
    hand = st.hands[t, seat]
    for k in range(W):
        for i in range(hand[k]):
            out[O_HAND + i, k] = 1
    phase = st.phase[t]
    own_turn = st.current[t] == seat and phase == TURN
    out[O_WILD, st.wild[t]] = 1
    out[O_INDICATOR, st.indicator[t]] = 1
    if own_turn and st.drawn[t] >= 0:
        out[O_DRAWN, st.drawn[t]] = 1
    if phase == CLAIM or phase == ROB:
        out[O_CLAIM, st.claim_tile[t]] = 1
    for r in range(4):
        s = (seat + r) % 4
        for k in range(W):
            out[O_RIVER + r, k] = st.river_counts[t, s, k] / 4
        n_ankan = 0
        for i in range(st.n_melds[t, s]):
            kind, tile = st.meld_kind[t, s, i], st.meld_tile[t, s, i]
            if kind == CHOW_M:
                out[O_CHOW + r, tile] += 1  # the same chow can be made twice
            elif kind == PONG_M:
                out[O_PONG + r, tile] = 1
            elif kind == ANKAN_M:
                n_ankan += 1
                if s == seat:
                    out[O_OWN_ANKAN, tile] = 1
            else:
                out[O_KONG + r, tile] = 1
        n = st.river_len[t, s]
        for i in range(min(n, RECENT)):
            out[O_RECENT + RECENT * r + i, st.river[t, s, n - 1 - i]] = 1
        if st.won[t, s]:
            out[O_WON_TILE + r, st.win_tile[t]] = 1
        out[O_FLOWERS + r, :] = st.flowers[t, s] / 8
        out[O_ANKAN_COUNT + r, :] = n_ankan / 4
        out[O_BEANS + r, :] = st.beans[t, s] / bean_scale
    dealer = st.dealer[t]
    out[O_DEALER + (dealer - seat) % 4, :] = 1
    out[O_SEAT + seat, :] = 1
    out[O_SEAT_WIND + (seat - dealer) % 4, :] = 1
    out[O_PREVAILING + st.prevailing[t], :] = 1
    if phase != OVER:
        out[O_PHASE + phase, :] = 1
    out[O_WALL, :] = (st.tail[t] - st.head[t]) / 144
    out[O_AFTER_KONG, :] = own_turn and st.after_kong[t] != 0
    for i in range(4):
        out[O_RULES + i, :] = rule_flags[i]
    if optional:
        optional_planes(st, t, seat, optional, bean_scale, out, OBS_PLANES)


@njit(cache=True, nogil=True)
def state(st: State, t: int, bean_scale: float, optional: int, out: np.ndarray) -> None:
    """Perfect information into ``out`` (176, 34, + the optional planes): every hand, the wall
    order (absolute seats)."""
    out[:] = 0
    for s in range(4):
        for k in range(W):
            for i in range(st.hands[t, s, k]):
                out[S_HANDS + 4 * s + i, k] = 1
            out[S_RIVER + s, k] = st.river_counts[t, s, k] / 4
        for i in range(st.n_melds[t, s]):
            kind, tile = st.meld_kind[t, s, i], st.meld_tile[t, s, i]
            if kind == CHOW_M:
                out[S_CHOW + s, tile] += 1
            elif kind == PONG_M:
                out[S_PONG + s, tile] = 1
            elif kind == ANKAN_M:
                out[S_ANKAN + s, tile] = 1
            elif kind == KONG_M or kind == ADDKONG_M:
                out[S_KONG + s, tile] = 1
        n = st.river_len[t, s]
        for i in range(min(n, RECENT)):
            out[S_RECENT + RECENT * s + i, st.river[t, s, n - 1 - i]] = 1
        out[S_DEALER + s, :] = s == st.dealer[t]
        out[S_BEANS + s, :] = st.beans[t, s] / bean_scale
        out[S_FLOWERS + s, :] = st.flowers[t, s] / 8
        if st.won[t, s]:
            out[S_WON_TILE + s, st.win_tile[t]] = 1
    if st.current[t] >= 0:
        out[S_CURRENT + st.current[t], :] = 1
    phase = st.phase[t]
    if phase != OVER:
        out[S_PHASE + phase, :] = 1
    if phase == CLAIM or phase == ROB:
        out[S_CLAIM, st.claim_tile[t]] = 1
    out[S_WILD, st.wild[t]] = 1
    out[S_INDICATOR, st.indicator[t]] = 1
    out[S_PREVAILING + st.prevailing[t], :] = 1
    head = st.head[t]
    for row in range(min(st.tail[t] - head, WALL_ROWS)):
        k = st.wall[t, head + row]
        if k < W:
            out[S_WALL_ORDER + row, k] = 1
        else:
            out[S_WALL_FLOWERS + row // W, row % W] = 1
    out[S_WALL, :] = (st.tail[t] - head) / 144
    if optional:
        optional_planes(st, t, 0, optional, bean_scale, out, STATE_PLANES)
