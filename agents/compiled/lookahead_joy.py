"""Compiled Joy look-ahead planes: the batch form of :func:`agents.lookahead_joy.lookahead_joy`
(same planes, same values; the plane table is in that module)."""

from __future__ import annotations

import numpy as np
from numba import njit

from mjenv.encoding import JoyMahjongObserver

from .heuristic_joy import N_KINDS, P_PONG, _acceptance, _best_discard, _decode, _near, distance

JOY_LOOKAHEAD_PLANES = 15
P_PHASE = JoyMahjongObserver.views["phase"].start  # turn / claim / rob rows


@njit(cache=True, nogil=True)
def _discard_planes(out: np.ndarray, real: np.ndarray, m: int, w: int, wild: int, unseen: np.ndarray,
                    suits: np.ndarray, honours: np.ndarray) -> None:
    """Planes 0-2: each discard's distance against the lowest, and the best ones' 受入."""
    if real.sum() == 0:  # only wildcards: discarding one costs a wildcard
        out[0, wild] = 1.0
        return
    after = np.full(N_KINDS, 999, dtype=np.int64)
    for k in range(N_KINDS):
        if real[k]:
            real[k] -= 1
            after[k] = distance(real, m, w, suits, honours)
            real[k] += 1
    best = after.min()
    accepted = np.zeros(N_KINDS, dtype=np.int64)
    for k in range(N_KINDS):
        if after[k] == best:
            accepted[k] = _acceptance(real, k, m, w, best, unseen, wild, suits, honours)
    top = accepted.max() or 1
    for k in range(N_KINDS):
        if real[k]:
            out[0, k] = after[k] == best
            out[1, k] = after[k] == best + 1
            out[2, k] = min(accepted[k] / top, 2.0)


@njit(cache=True, nogil=True)
def _claim_planes(out: np.ndarray, real: np.ndarray, m: int, w: int, wild: int, k: int, now: int,
                  unseen: np.ndarray, suits: np.ndarray, honours: np.ndarray) -> None:
    """Planes 8-12: whether each call, then its best discard, brings the hand closer."""
    after = real.copy()
    discards = np.zeros(N_KINDS, dtype=np.int64)
    for option in range(4):  # 碰, then 吃 with the offered tile low / middle / high
        after[:] = real
        if option == 0:
            if after[k] < 2:
                continue
            after[k] -= 2
        else:
            low = k - (option - 1)
            if k >= 27 or low < 0 or low // 9 != k // 9 or (low + 2) // 9 != k // 9:
                continue
            short = False
            for t in range(low, low + 3):
                if t != k:
                    short |= after[t] < 1
                    after[t] -= 1
            if short:
                continue
        for t in range(N_KINDS):
            discards[t] = after[t] != 0 or (t == wild and w != 0)
        if discards.any():
            d, _ = _best_discard(after, m + 1, w, discards, wild, unseen, suits, honours)
            out[8 + option] = d < now
    if real[k] >= 3:
        after[:] = real
        after[k] -= 3
        out[12] = distance(after, m + 1, w, suits, honours) <= now


@njit(cache=True, nogil=True)
def _planes(out: np.ndarray, o: np.ndarray, real: np.ndarray, unseen: np.ndarray, suits: np.ndarray,
            honours: np.ndarray) -> None:
    """The look-ahead planes of one observation into ``out`` (plane 14 already written)."""
    turn, claim_phase, rob = o[P_PHASE, 0], o[P_PHASE + 1, 0], o[P_PHASE + 2, 0]
    if not (turn or claim_phase or rob):
        return
    wild, w, claim, m = _decode(o, real, unseen)
    now = distance(real, m, w, suits, honours)
    out[4 + min(max(now, 0), 3)] = 1.0
    out[3, wild] = 1.0
    for t in range(N_KINDS):
        if t != wild and real[t] < 4 and _near(real, t):
            real[t] += 1
            out[3, t] = distance(real, m, w, suits, honours) < now
            real[t] -= 1
    if (real.sum() + w) % 3 == 2:  # own turn: one tile must go
        _discard_planes(out, real, m, w, wild, unseen, suits, honours)
        for k in range(N_KINDS):
            four = real[k] >= 4
            if k != wild and (four or (real[k] and o[P_PONG, k])):
                real[k] -= 4 if four else 1
                out[13, k] = distance(real, m + four, w, suits, honours) <= now
                real[k] += 4 if four else 1
    if claim >= 0 and claim_phase:
        _claim_planes(out, real, m, w, wild, claim, now, unseen, suits, honours)


@njit(cache=True, nogil=True)
def lookahead_batch(observations: np.ndarray, suits: np.ndarray, honours: np.ndarray,
                    tile_order: np.ndarray) -> np.ndarray:
    """The ``(N, JOY_LOOKAHEAD_PLANES, 34)`` planes of a batch of Joy observations."""
    out = np.zeros((len(observations), JOY_LOOKAHEAD_PLANES, N_KINDS), dtype=np.float32)
    real = np.zeros(N_KINDS, dtype=np.int64)
    unseen = np.zeros(N_KINDS, dtype=np.int64)
    for i in range(len(observations)):
        out[i, 14] = tile_order
        _planes(out[i], observations[i], real, unseen, suits, honours)
    return out
