"""Compiled blood-battle encoders: the values of :class:`mjenv.encoding.BloodBattleObserver`
(``observe`` of the seat to act, and ``state``) written into preallocated float32 buffers.

Plane offsets are read from the reference observer's named views, so both encoders share one
layout. Scalars are computed in float64 and stored as float32, as numpy does in the reference.
The optional planes (``optional`` bits of :mod:`.optional`) follow the default ones, the item
planes (rule option ``items``, S17: :data:`mjenv.encoding.ITEM_PLANES`) last. Rule IDs:
docs/rules-blood-battle.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...encoding import ITEM_PLANES, ITEM_STATE_PLANES, RECENT, BloodBattleObserver as _Obs
from ..engine.blood_battle import (ANKAN, CLAIM, GIVE, NAME, OVER, PONG, QIANKUN_PHASE, ROB, TURN, W, State,
                                   shunfeng_tile)
from ..rules.items import N_ITEMS, TOUTIAN
from .optional import ITEMS, optional_planes

_V = {name: sl.start for name, sl in _Obs.views.items()}
O_HAND, O_DRAWN, O_CLAIM, O_PONG, O_KONG, O_OWN_ANKAN, O_RIVER, O_RECENT, O_WON_TILE, O_VOID = (
    _V["hand"], _V["drawn"], _V["claim"], _V["pong"], _V["kong"], _V["own_ankan"], _V["river"], _V["recent"],
    _V["won_tile"], _V["void"])
O_ANKAN_COUNT, O_WON, O_DEALER, O_BEANS, O_SEAT, O_PHASE, O_WALL, O_AFTER_KONG, O_RULES = (
    _V["ankan_count"], _V["won"], _V["dealer"], _V["beans"], _V["seat"], _V["phase"], _V["wall"],
    _V["after_kong"], _V["rules"])
OBS_SHAPE = (_Obs.planes, _Obs.width)

_S = {name: sl.start for name, sl in _Obs.state_views.items()}
S_HANDS, S_PONG, S_KONG, S_ANKAN, S_RIVER, S_RECENT, S_WON_TILE, S_VOID = (
    _S["hands"], _S["pong"], _S["kong"], _S["ankan"], _S["river"], _S["recent"], _S["won_tile"], _S["void"])
S_WON, S_DEALER, S_BEANS, S_CURRENT, S_PHASE, S_CLAIM, S_WALL_ORDER, S_WALL = (
    _S["won"], _S["dealer"], _S["beans"], _S["current"], _S["phase"], _S["claim"], _S["wall_order"], _S["wall"])
WALL_ROWS = _Obs.state_views["wall_order"].stop - S_WALL_ORDER
STATE_SHAPE = (_Obs.state_planes, _Obs.width)
ITEM_OBS_PLANES = sum(n for _, n, _ in ITEM_PLANES)
ITEM_STATE = sum(n for _, n in ITEM_STATE_PLANES)
""":data:`mjenv.encoding.ITEM_PLANES`: 40 observation planes after the other optional ones
(inventory 5, uses 20, turn 5, step 5, given 1, 顺风耳 1, 千里眼 part, none and wall 3), and
:data:`mjenv.encoding.ITEM_STATE_PLANES`: 46 state planes (inventories 20, uses 20, step 5, given 1)."""


@njit(cache=True, nogil=True)
def observe(st: State, t: int, out: np.ndarray, bean_scale: float, rule_flags: np.ndarray, optional: int) -> None:
    """The observation of the seat to act at table ``t`` into ``out`` (planes, 27)."""
    observe_seat(st, t, st.current[t], bean_scale, rule_flags, optional, out)


@njit(cache=True, nogil=True)
def observe_seat(st: State, t: int, seat: int, bean_scale: float, rule_flags: np.ndarray, optional: int,
                 out: np.ndarray) -> None:
    """The observation of ``seat`` at table ``t`` into ``out`` (planes, 27): only what it may know."""
    out[:] = 0
    phase = st.phase[t]
    own_turn = phase == TURN and st.current[t] == seat
    for i in range(4):
        for k in range(W):
            if st.hands[t, seat, k] > i:
                out[O_HAND + i, k] = 1
    if own_turn and st.drawn[t] >= 0:
        out[O_DRAWN, st.drawn[t]] = 1
    if phase == CLAIM or phase == ROB:
        out[O_CLAIM, st.claim_tile[t]] = 1
    revealed = phase != 0
    for r in range(4):
        s = (seat + r) % 4
        n_ankan = 0.0
        for k in range(W):
            out[O_RIVER + r, k] = st.river_counts[t, s, k] * 0.25
            m = st.meld[t, s, k]
            if m == PONG:
                out[O_PONG + r, k] = 1
            elif m == ANKAN:
                n_ankan += 0.25
                if s == seat:
                    out[O_OWN_ANKAN, k] = 1
            elif m:
                out[O_KONG + r, k] = 1
        n = st.river_len[t, s]
        for i in range(min(n, RECENT)):
            out[O_RECENT + RECENT * r + i, st.river[t, s, n - 1 - i]] = 1
        v = st.void[t, s]
        if v >= 0 and (revealed or s == seat):
            out[O_VOID + r, 9 * v : 9 * v + 9] = 1
        if st.win_tile[t, s] >= 0:
            out[O_WON_TILE + r, st.win_tile[t, s]] = 1
        out[O_ANKAN_COUNT + r, :] = n_ankan
        out[O_WON + r, :] = st.won[t, s]
        out[O_DEALER + r, :] = s == st.dealer[t]
        out[O_BEANS + r, :] = st.beans[t, s] / bean_scale
    out[O_SEAT + seat, :] = 1
    if phase < OVER:
        out[O_PHASE + phase, :] = 1
    out[O_WALL, :] = (st.tail[t] - st.head[t]) / 108
    out[O_AFTER_KONG, :] = own_turn and st.after_kong[t] != 0
    for i in range(4):
        out[O_RULES + i, :] = rule_flags[i]
    if optional:
        optional_planes(st, t, seat, optional, bean_scale, out, OBS_SHAPE[0])
        if optional & ITEMS:
            item_obs(st, t, seat, out, out.shape[0] - ITEM_OBS_PLANES)


@njit(cache=True, nogil=True)
def state(st: State, t: int, out: np.ndarray, bean_scale: float, optional: int) -> None:
    """Perfect information of table ``t`` into ``out`` (state planes, 27), absolute seats."""
    out[:] = 0
    phase = st.phase[t]
    for s in range(4):
        for k in range(W):
            x = st.hands[t, s, k]
            for i in range(4):
                if x > i:
                    out[S_HANDS + 4 * s + i, k] = 1
            m = st.meld[t, s, k]
            if m == PONG:
                out[S_PONG + s, k] = 1
            elif m == ANKAN:
                out[S_ANKAN + s, k] = 1
            elif m:
                out[S_KONG + s, k] = 1
            out[S_RIVER + s, k] = st.river_counts[t, s, k] / 4
        n = st.river_len[t, s]
        for i in range(min(n, RECENT)):
            out[S_RECENT + RECENT * s + i, st.river[t, s, n - 1 - i]] = 1
        out[S_DEALER + s, :] = s == st.dealer[t]
        out[S_BEANS + s, :] = st.beans[t, s] / bean_scale
        if st.win_tile[t, s] >= 0:
            out[S_WON_TILE + s, st.win_tile[t, s]] = 1
        v = st.void[t, s]
        if v >= 0:
            out[S_VOID + s, 9 * v : 9 * v + 9] = 1
        out[S_WON + s, :] = st.won[t, s]
    if st.current[t] >= 0:
        out[S_CURRENT + st.current[t], :] = 1
    if phase < OVER:
        out[S_PHASE + phase, :] = 1
    if phase == CLAIM or phase == ROB:
        out[S_CLAIM, st.claim_tile[t]] = 1
    head = st.head[t]
    for i in range(min(st.tail[t] - head, WALL_ROWS)):
        out[S_WALL_ORDER + i, st.wall[t, head + i]] = 1
    out[S_WALL, :] = (st.tail[t] - head) / 108
    if optional:
        optional_planes(st, t, 0, optional, bean_scale, out, STATE_SHAPE[0])
        if optional & ITEMS:
            item_state(st, t, out, out.shape[0] - ITEM_STATE)


@njit(cache=True, nogil=True)
def item_step(st: State, t: int, out: np.ndarray, p: int) -> None:
    """``item_step`` (5 planes from ``p``) and ``item_given`` (1) of the item decision open now:
    乾坤大挪移, 偷天换日 give, 移花接木 give, 偷天换日 name, 千里眼 name."""
    phase, item = st.phase[t], st.item_pending[t]
    if phase == QIANKUN_PHASE:
        out[p, :] = 1
    elif phase == GIVE:
        out[p + (1 if item == TOUTIAN else 2), :] = 1
    elif phase == NAME:
        out[p + (3 if item == TOUTIAN else 4), :] = 1
        if st.item_given[t] >= 0:
            out[p + 5, st.item_given[t]] = 1


@njit(cache=True, nogil=True)
def item_obs(st: State, t: int, seat: int, out: np.ndarray, p: int) -> None:
    """The item planes of ``seat``'s observation from ``p``: what it holds, every seat's uses
    (public), its item decision, and its own knowledge (顺风耳's tile, 千里眼's answers)."""
    for i in range(N_ITEMS):
        out[p + i, :] = st.inventory[t, seat, i]
        for r in range(4):
            out[p + 5 + N_ITEMS * r + i, :] = st.item_uses[t, (seat + r) % 4, i]
    if st.current[t] == seat:
        if st.phase[t] == TURN:
            for i in range(N_ITEMS):
                out[p + 25 + i, :] = st.turn_used[t, i]
        item_step(st, t, out, p + 30)
    heard = shunfeng_tile(st, t, seat)
    if heard >= 0:
        out[p + 36, heard] = 1
    parts = st.qly_parts[t]
    for k in range(W):
        wall = st.qly_wall[t, seat, k]
        if wall >= 0:
            part = st.qly_part[t, seat, k]
            if part >= 0:
                out[p + 37, k] = (part + 1) / parts
            else:
                out[p + 38, k] = 1
            out[p + 39, k] = wall / 108


@njit(cache=True, nogil=True)
def item_state(st: State, t: int, out: np.ndarray, p: int) -> None:
    """The item planes of ``state()`` from ``p``: every seat's inventory and uses (absolute seats),
    the item decision open now."""
    for s in range(4):
        for i in range(N_ITEMS):
            out[p + N_ITEMS * s + i, :] = st.inventory[t, s, i]
            out[p + 20 + N_ITEMS * s + i, :] = st.item_uses[t, s, i]
    item_step(st, t, out, p + 40)
