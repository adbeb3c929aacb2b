"""Compiled look-ahead planes: the batch form of :func:`agents.lookahead.lookahead` (same planes,
same values; the plane table is in that module)."""

from __future__ import annotations

import numpy as np
from numba import njit

from mjenv.tiles import N_SUIT_KINDS

from .features import (HAND, PH_CLAIM, PH_OVER, PH_VOID, S_CLAIM, S_N_MELDS, S_PHASE, S_VOID, SCALARS,
                       VISIBLE, decode, new_view, shanten, useful_masks)
from .heuristic import danger, discard_weight, flush_suit, threats, toitoi_leaning

LOOKAHEAD_PLANES = 14


@njit(cache=True, nogil=True)
def _top_weight(sh: np.ndarray, w: np.ndarray, best: int) -> float:
    """The largest weight among the choices at the best shanten, 1 when that is 0 (the divisor of plane 2)."""
    top = w[0] * 0
    for i in range(len(sh)):
        if sh[i] == best:
            top = max(top, w[i])
    return top or 1


@njit(cache=True, nogil=True)
def _void_planes(out: np.ndarray, hand: np.ndarray, unseen: np.ndarray, table: np.ndarray) -> None:
    """Planes 0-2 and 5-8 for the 定缺 choice: the shanten and useful draws left by each void."""
    sh = np.zeros(3, dtype=np.int64)
    w = np.zeros(3, dtype=np.int64)
    for s in range(3):
        sh[s] = shanten(hand, s, 0, table)
        reg, sp = useful_masks(hand, s, 0, table)
        for t in range(27):
            if (reg | sp) >> t & 1:
                w[s] += unseen[t]
    best = sh.min()
    top = _top_weight(sh, w, best)
    for s in range(3):
        out[0, 9 * s:9 * s + 9] = sh[s] == best
        out[1, 9 * s:9 * s + 9] = sh[s] == best + 1
        out[2, 9 * s:9 * s + 9] = min(w[s] / top, 2.0)
    out[5 + min(max(best, 0), 3)] = 1.0


@njit(cache=True, nogil=True)
def _planes(out: np.ndarray, v: np.ndarray, table: np.ndarray, scoring: tuple) -> None:
    """The look-ahead planes of one decoded view into ``out`` (zeroed)."""
    hand, void, n = v[HAND], v[SCALARS, S_VOID], v[SCALARS, S_N_MELDS]
    phase, claim = v[SCALARS, S_PHASE], v[SCALARS, S_CLAIM]
    unseen = np.maximum(0, 4 - v[VISIBLE])
    if phase == PH_VOID:
        _void_planes(out, hand, unseen, table)
        return
    if phase == PH_OVER:
        return
    now = shanten(hand, void, n, table)
    out[5 + min(max(now, 0), 3)] = 1.0
    reg, sp = useful_masks(hand, void, n, table)
    for t in range(27):
        if (reg | sp) >> t & 1:
            out[3, t] = 1.0
    if hand.sum() % 3 == 2:  # own turn: one tile must go
        after = hand.copy()
        sh = np.full(27, 99, dtype=np.int64)
        w = np.zeros(27)
        for k in range(27):
            if hand[k]:
                after[k] -= 1
                sh[k] = shanten(after, void, n, table)
                w[k] = discard_weight(after, sh[k], v, void, unseen, table, scoring, True)
                after[k] += 1
        best = sh.min()
        top = _top_weight(sh, w, best)
        for k in range(27):
            if hand[k]:
                out[0, k] = sh[k] == best
                out[1, k] = sh[k] == best + 1
                out[2, k] = min(w[k] / top, 2.0)
    if claim >= 0 and phase == PH_CLAIM and hand[claim] >= 2:
        after = hand.copy()
        after[claim] -= 2
        pong = shanten(after, void, n + 1, table)
        out[9] = pong < now
        out[11] = pong == now
        if hand[claim] == 3:
            after[claim] -= 1
            out[13] = shanten(after, void, n + 1, table) <= now
    out[12] = toitoi_leaning(v)
    level = np.zeros(4)
    collects = np.zeros(4, dtype=np.int64)
    if threats(v, level, collects):
        for k in range(27):
            out[4, k] = min(danger(v, level, collects, k) / 3.0, 1.0)
    flush = flush_suit(v)
    if flush >= 0:
        out[10, 9 * flush:9 * flush + 9] = 1.0


@njit(cache=True, nogil=True)
def lookahead_batch(observations: np.ndarray, table: np.ndarray, scoring: tuple) -> np.ndarray:
    """The ``(N, LOOKAHEAD_PLANES, 27)`` planes of a batch of blood-battle observations."""
    out = np.zeros((len(observations), LOOKAHEAD_PLANES, N_SUIT_KINDS), dtype=np.float32)
    v = new_view()
    for i in range(len(observations)):
        decode(observations[i], v)
        _planes(out[i], v, table, scoring)
    return out
