"""Compiled items (道具, S17): the array form of :mod:`mjenv.rules.items`, giving the same walls and
answers from the same seeded draws (:mod:`mjenv.vector.seeding` follows numpy's generator).

A wall is an int8 row of kinds; its live part is ``wall[head:tail]`` (draws take ``head``, kong
replacements ``tail - 1``). Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...rules.items import QIANKUN, QIANLIYAN, SHUNFENG, TOUTIAN, YIHUA
from ..seeding import choice, integers, permutation

__all__ = ["QIANKUN", "QIANLIYAN", "SHUNFENG", "TOUTIAN", "YIHUA", "N_ITEMS", "nearest", "qiankun_wall",
           "qianliyan_part"]

N_ITEMS = 5


@njit(cache=True, nogil=True)
def qiankun_wall(wall: np.ndarray, dealer: int, users: int, n_suited: int, g: np.ndarray) -> None:
    """S17.3 in place: a wall whose deal gives each seat of the bit set ``users`` (served in turn
    order from the dealer) at least ``n_suited`` tiles of one suit, drawn from the generator ``g``
    exactly as :func:`mjenv.rules.items.qiankun_wall` draws them; the 108 tiles are conserved."""
    n = len(wall)
    pool = wall.copy()
    fixed = np.zeros((4, 13), np.int8)
    n_fixed = np.zeros(4, np.int64)
    of_suit = np.empty(n, np.int64)
    suits = np.empty(3, np.int64)
    picked = np.zeros(n, np.bool_)
    for i in range(4):
        seat = (dealer + i) % 4
        if not users >> seat & 1:
            continue
        counts = np.zeros(3, np.int64)
        for j in range(n):
            counts[pool[j] // 9] += 1
        m = 0
        for s in range(3):
            if counts[s] >= n_suited:
                suits[m] = s
                m += 1
        suit = suits[integers(g, 0, m)]
        c = 0
        for j in range(n):
            if pool[j] // 9 == suit:
                of_suit[c] = j
                c += 1
        take = np.empty(n_suited, np.int64)
        choice(g, c, take)
        take.sort()
        picked[:n] = False
        for q in range(n_suited):
            fixed[seat, q] = pool[of_suit[take[q]]]
            picked[of_suit[take[q]]] = True
        kept = 0
        for j in range(n):
            if not picked[j]:
                pool[kept] = pool[j]
                kept += 1
        n = kept
        n_fixed[seat] = n_suited
    order = permutation(g, n)
    pos, r = 0, 0
    for i in range(4):
        seat = (dealer + i) % 4
        for q in range(n_fixed[seat]):
            wall[pos] = fixed[seat, q]
            pos += 1
        for q in range(13 - n_fixed[seat]):
            wall[pos] = pool[order[r]]
            pos += 1
            r += 1
    while r < n:
        wall[pos] = pool[order[r]]
        pos += 1
        r += 1


@njit(cache=True, nogil=True)
def nearest(wall: np.ndarray, head: int, tail: int, kind: int) -> int:
    """The wall index of the copy of ``kind`` nearest the draw end in the live wall, or -1."""
    for i in range(head, tail):
        if wall[i] == kind:
            return i
    return -1


@njit(cache=True, nogil=True)
def qianliyan_part(wall: np.ndarray, head: int, tail: int, kind: int, parts: int) -> int:
    """S17.6: in which of ``parts`` equal parts of the live wall (0 at the draw end) the nearest
    copy of ``kind`` lies, or -1 when none is in the live wall."""
    i = nearest(wall, head, tail, kind)
    return -1 if i < 0 else (i - head) * parts // (tail - head)
