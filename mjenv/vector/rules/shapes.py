"""Compiled winning shapes and waits over count arrays (the array form of :mod:`mjenv.rules.shapes`).

Every check reads one table per group of kinds. A group's counts (each 0-4) form a base-5 key
``sum(c[i] * 5**i)``; ``SUIT_TABLE`` (9 kinds, chows allowed, 5**9 entries) and ``HONOUR_TABLE``
(7 kinds, pungs and pairs only, 5**7 entries) hold per key the bits below, built once per process
by a compiled loop (about a second; no file on disk). Both games share them: the tables are passed
as arguments (numba freezes global arrays into its cache, 2 MB each time).
"""

from __future__ import annotations

import numpy as np
from numba import njit

MELDS = 1  # the group splits exactly into melds (pungs, and chows in a suit)
MELDS_PAIR = 2  # the group splits into melds and one pair
YAO_MELDS = 4  # suit only: melds, each holding a 1 or a 9 (123, 789, 111, 999)
YAO_MELDS_PAIR = 8  # suit only: such melds and a pair of 1s or 9s

POW5 = 5 ** np.arange(9, dtype=np.int64)


@njit(cache=True, nogil=True)
def _melds_only(c: np.ndarray, size: int, chows: bool) -> bool:
    """Whether counts ``c[:size]`` split into melds; ``c`` is consumed.

    The lowest tile starts ``c % 3`` chows and pungs the rest: three identical chows read as
    three pungs, so this greedy reading finds a split whenever one exists.
    """
    for i in range(size):
        x = c[i]
        if x < 0:
            return False
        n = x % 3
        if n:
            if not chows or i + 2 >= size or c[i + 1] < n or c[i + 2] < n:
                return False
            c[i + 1] -= n
            c[i + 2] -= n
    return True


@njit(cache=True, nogil=True)
def _yao_bits(c: np.ndarray) -> int:
    """YAO_MELDS / YAO_MELDS_PAIR of a suit: ranks 4-6 empty, 2 and 3 only in 123, 7 and 8 only in
    789, what is left of the 1s and 9s pungs (and one pair)."""
    if c[3] or c[4] or c[5] or c[1] != c[2] or c[6] != c[7]:
        return 0
    d0, d8 = c[0] - c[1], c[8] - c[7]
    if d0 < 0 or d8 < 0 or d0 == 1 or d8 == 1 or d0 == 4 or d8 == 4:
        return 0
    pairs = (d0 == 2) + (d8 == 2)
    return YAO_MELDS if pairs == 0 else (YAO_MELDS_PAIR if pairs == 1 else 0)


@njit(cache=True, nogil=True)
def build_table(size: int, chows: bool) -> np.ndarray:
    """The bits of every group key of ``size`` kinds (see the module docstring)."""
    n = 5 ** size
    out = np.zeros(n, dtype=np.uint8)
    c = np.zeros(9, dtype=np.int64)
    work = np.zeros(9, dtype=np.int64)
    for key in range(n):
        rest, total = key, 0
        for i in range(size):
            c[i] = rest % 5
            rest //= 5
            total += c[i]
        bits = 0
        if total % 3 == 0:
            work[:size] = c[:size]
            if _melds_only(work, size, chows):
                bits |= MELDS
        elif total % 3 == 2:
            for p in range(size):
                if c[p] >= 2:
                    work[:size] = c[:size]
                    work[p] -= 2
                    if _melds_only(work, size, chows):
                        bits |= MELDS_PAIR
                        break
        if chows and size == 9 and bits:
            bits |= _yao_bits(c)
        out[key] = bits
    return out


_TABLES: dict[str, np.ndarray] = {}


def suit_table() -> np.ndarray:
    """The 9-kind suit table (built on first use, then shared by every backend)."""
    if "suit" not in _TABLES:
        _TABLES["suit"] = build_table(9, True)
    return _TABLES["suit"]


def honour_table() -> np.ndarray:
    """The 7-kind honour table (pungs and pairs only)."""
    if "honour" not in _TABLES:
        _TABLES["honour"] = build_table(7, False)
    return _TABLES["honour"]


@njit(cache=True, nogil=True)
def suit_key(h: np.ndarray, lo: int) -> int:
    """The base-5 key of the nine kinds from ``lo``."""
    key = 0
    m = 1
    for i in range(9):
        key += h[lo + i] * m
        m *= 5
    return key


@njit(cache=True, nogil=True)
def suited_regular_bits(h: np.ndarray, table: np.ndarray) -> int:
    """Of a suited hand (27 kinds, 3k+2 tiles): 0 when it is not melds and one pair, else
    1 | 2 when some reading has every meld and the pair holding a 1 or a 9 (带幺九)."""
    pair_suits = 0
    yao = True
    for s in range(3):
        bits = table[suit_key(h, 9 * s)]
        if bits & MELDS:
            yao = yao and (bits & YAO_MELDS) != 0
        elif bits & MELDS_PAIR:
            pair_suits += 1
            yao = yao and (bits & YAO_MELDS_PAIR) != 0
        else:
            n = 0
            for i in range(9):
                n += h[9 * s + i]
            if n:
                return 0
    if pair_suits != 1:
        return 0
    return 3 if yao else 1


@njit(cache=True, nogil=True)
def is_seven_pairs(h: np.ndarray, width: int) -> bool:
    """Exactly 14 tiles in seven pairs; a four is two pairs."""
    n = 0
    for k in range(width):
        if h[k] & 1:
            return False
        n += h[k]
    return n == 14


@njit(cache=True, nogil=True)
def suited_is_wait(h: np.ndarray, k: int, table: np.ndarray) -> bool:
    """Whether kind ``k`` completes the suited 3k+1 hand ``h`` (regular or seven pairs); never
    a fifth copy. ``h`` is restored."""
    if h[k] >= 4:
        return False
    h[k] += 1
    ok = suited_regular_bits(h, table) != 0 or is_seven_pairs(h, 27)
    h[k] -= 1
    return ok
