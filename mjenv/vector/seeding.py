"""The reference's seeded randomness, compiled: :func:`mjenv.engine.core.shuffled` draws a hand's
wall and rolls from ``np.random.default_rng([seed, hand_index])``; :func:`shuffled` returns exactly
the same numbers without the GIL, so the threads of :mod:`mjenv.vector` deal new hands in parallel.
The AEC env draws an episode's hand seed from ``default_rng(seed).integers(2**63)``;
:func:`streams` and :func:`next_seeds` keep one such generator per table as six words.

It follows numpy's algorithms word for word: ``SeedSequence`` (4-word pool, hashmix/mix),
``PCG64`` (XSL-RR 128/64, seeded with ``generate_state(4, uint64)``), ``Generator.permutation``
(Fisher-Yates with ``random_interval``'s masked rejection) and ``Generator.integers(4)`` (Lemire's
bounded 32-bit draw, sharing PCG64's buffered upper half-word); for the items (S17) also a
generator seeded by a whole wall, ``integers(low, high)`` and ``choice(pop, size, replace=False)``
(Floyd's sampling, then its shuffle). ``tests/mjenv/vector/test_seeding.py``
compares it with numpy over many seeds; a numpy that changed these streams would fail there.
Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_U32 = np.uint64(0xFFFFFFFF)
_INIT_A, _MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)
_INIT_B, _MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
_MIX_L, _MIX_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)
_MUL_HI, _MUL_LO = np.uint64(2549297995355413924), np.uint64(4865540595714422341)
_S16, _S32, _S58, _S63, _ONE = np.uint64(16), np.uint64(32), np.uint64(58), np.uint64(63), np.uint64(1)
_POOL = 4


@njit(cache=True, nogil=True)
def _hashmix(value: np.uint64, const: np.ndarray) -> np.uint64:
    """SeedSequence's hashmix on 32-bit words (``const[0]`` is the running hash constant)."""
    value = (value ^ const[0]) & _U32
    const[0] = (const[0] * _MULT_A) & _U32
    value = (value * const[0]) & _U32
    return value ^ (value >> _S16)


@njit(cache=True, nogil=True)
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    result = (_MIX_L * x - _MIX_R * y) & _U32
    return result ^ (result >> _S16)


@njit(cache=True, nogil=True)
def _seed_words(values: tuple, out: np.ndarray) -> int:
    """Non-negative ints as SeedSequence's uint32 entropy words (least significant first); count."""
    n = 0
    for v in values:
        value = np.uint64(v)
        out[n] = value & _U32
        n += 1
        value >>= _S32
        while value > 0:
            out[n] = value & _U32
            n += 1
            value >>= _S32
    return n


@njit(cache=True, nogil=True)
def _mul128(a_hi: np.uint64, a_lo: np.uint64, b_hi: np.uint64, b_lo: np.uint64) -> tuple:
    """(a * b) mod 2**128 as (high, low) 64-bit words."""
    a0, a1 = a_lo & _U32, a_lo >> _S32
    b0, b1 = b_lo & _U32, b_lo >> _S32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _S32) + (p01 & _U32) + (p10 & _U32)
    lo = (p00 & _U32) | ((mid & _U32) << _S32)
    hi = p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)
    hi += a_hi * b_lo + a_lo * b_hi
    return hi, lo


@njit(cache=True, nogil=True)
def _add128(a_hi: np.uint64, a_lo: np.uint64, b_hi: np.uint64, b_lo: np.uint64) -> tuple:
    lo = a_lo + b_lo
    return a_hi + b_hi + (np.uint64(1) if lo < a_lo else np.uint64(0)), lo


@njit(cache=True, nogil=True)
def _step(g: np.ndarray) -> None:
    """PCG64's LCG step; ``g`` = [state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger]."""
    hi, lo = _mul128(g[0], g[1], _MUL_HI, _MUL_LO)
    g[0], g[1] = _add128(hi, lo, g[2], g[3])


@njit(cache=True, nogil=True)
def _next64(g: np.ndarray) -> np.uint64:
    _step(g)
    x = g[0] ^ g[1]
    rot = g[0] >> _S58
    return (x >> rot) | (x << ((np.uint64(64) - rot) & _S63))


@njit(cache=True, nogil=True)
def _next32(g: np.ndarray) -> np.uint64:
    """PCG64's 32-bit draw: the low half of a 64-bit draw, its high half kept for the next call."""
    if g[4]:
        g[4] = 0
        return g[5]
    value = _next64(g)
    g[4], g[5] = 1, value >> _S32
    return value & _U32


@njit(cache=True, nogil=True)
def generator(seed: np.int64, hand: np.int64) -> np.ndarray:
    """The PCG64 state of ``np.random.default_rng([seed, hand])`` (``seed``, ``hand`` >= 0)."""
    words = np.zeros(4, np.uint64)
    return _seeded(words, _seed_words((seed, hand), words))


@njit(cache=True, nogil=True)
def _seeded(words: np.ndarray, n: int) -> np.ndarray:
    """PCG64 seeded by ``SeedSequence`` from the entropy ``words[:n]`` (``len(words) >= 4``)."""
    const = np.array([_INIT_A], np.uint64)
    pool = np.zeros(_POOL, np.uint64)
    for i in range(_POOL):
        pool[i] = _hashmix(words[i] if i < n else np.uint64(0), const)
    for i_src in range(_POOL):
        for i_dst in range(_POOL):
            if i_src != i_dst:
                pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], const))
    for i_src in range(_POOL, n):  # entropy beyond the pool: each word mixed into every pool word
        for i_dst in range(_POOL):
            pool[i_dst] = _mix(pool[i_dst], _hashmix(words[i_src], const))
    # generate_state(4, uint64): 8 hashed pool words, little-endian pairs
    state = np.zeros(8, np.uint64)
    h = _INIT_B
    for i in range(8):
        value = (pool[i % _POOL] ^ h) & _U32
        h = (h * _MULT_B) & _U32
        value = (value * h) & _U32
        state[i] = value ^ (value >> _S16)
    s_hi, s_lo = state[0] | (state[1] << _S32), state[2] | (state[3] << _S32)
    i_hi, i_lo = state[4] | (state[5] << _S32), state[6] | (state[7] << _S32)
    g = np.zeros(6, np.uint64)
    g[2], g[3] = (i_hi << _ONE) | (i_lo >> _S63), (i_lo << _ONE) | _ONE
    _step(g)
    g[0], g[1] = _add128(g[0], g[1], s_hi, s_lo)
    _step(g)
    return g


@njit(cache=True, nogil=True)
def _interval(g: np.ndarray, top: int) -> int:
    """``random_interval``: uniform in [0, top] by masked rejection (top < 2**32 here)."""
    if top == 0:
        return np.int64(0)
    mask = np.uint64(top)
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> np.uint64(shift)
    while True:
        value = _next32(g) & mask
        if value <= np.uint64(top):
            return np.int64(value)


@njit(cache=True, nogil=True)
def _below(g: np.ndarray, n: int) -> int:
    """``Generator.integers(n)`` for 1 < n < 2**32: Lemire's bounded draw on 32-bit words."""
    excl = np.uint64(n)
    m = _next32(g) * excl
    leftover = m & _U32
    if leftover < excl:
        threshold = (_U32 - (excl - _ONE)) % excl
        while leftover < threshold:
            m = _next32(g) * excl
            leftover = m & _U32
    return np.int64(m >> _S32)


@njit(cache=True, nogil=True)
def words_generator(words: np.ndarray) -> np.ndarray:
    """The PCG64 state of ``np.random.default_rng(np.asarray(words, dtype=np.uint32))``: entropy of
    any length (the items' generator is seeded by a hand's 108-tile wall, S17)."""
    n = len(words)
    padded = np.zeros(max(n, _POOL), np.uint64)
    for i in range(n):
        padded[i] = np.uint64(words[i]) & _U32
    return _seeded(padded, n)


@njit(cache=True, nogil=True)
def integers(g: np.ndarray, low: int, high: int) -> int:
    """``Generator.integers(low, high)`` (``high - low < 2**32``): Lemire's draw; a range of one
    value draws nothing, as numpy's."""
    return low if high - low == 1 else low + _below(g, high - low)


@njit(cache=True, nogil=True)
def permutation(g: np.ndarray, n: int) -> np.ndarray:
    """``Generator.permutation(n)``: Fisher-Yates over ``arange(n)`` with ``random_interval``."""
    order = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = _interval(g, i)
        order[i], order[j] = order[j], order[i]
    return order


@njit(cache=True, nogil=True)
def choice(g: np.ndarray, pop: int, out: np.ndarray) -> None:
    """``Generator.choice(pop, size=len(out), replace=False)`` into ``out`` (``pop <= 10000``):
    numpy's Floyd sampling, then its shuffle of the sample (Lemire draws)."""
    size = len(out)
    chosen = np.zeros(pop, np.bool_)
    for j in range(pop - size, pop):
        val = _below(g, j + 1) if j > 0 else 0
        if chosen[val]:  # Floyd: j itself is new, every earlier pick is below it
            val = j
        chosen[val] = True
        out[j - pop + size] = val
    for i in range(size - 1, 0, -1):
        k = _below(g, i + 1)
        out[i], out[k] = out[k], out[i]


@njit(cache=True, nogil=True)
def shuffled(tiles: np.ndarray, seed: np.int64, hand: np.int64, wall: np.ndarray, rolls: np.ndarray) -> None:
    """:func:`mjenv.engine.core.shuffled` into ``wall`` (the tiles in shuffled order) and
    ``rolls`` (``len(rolls)`` seat/wind rolls 0-3, the dealer's dice first)."""
    g = generator(seed, hand)
    n = len(tiles)
    order = permutation(g, n)
    for i in range(n):
        wall[i] = tiles[order[i]]
    for i in range(len(rolls)):
        rolls[i] = _below(g, 4)


@njit(cache=True, nogil=True)
def streams(seeds: np.ndarray) -> np.ndarray:
    """uint64 (N, 6): the PCG64 state of ``np.random.default_rng(seeds[i])`` per row (seeds >= 0)."""
    out = np.zeros((len(seeds), 6), np.uint64)
    words = np.zeros(4, np.uint64)
    for i in range(len(seeds)):
        out[i] = _seeded(words, _seed_words((seeds[i],), words))
    return out


@njit(cache=True, nogil=True)
def next_seeds(state: np.ndarray, tables: np.ndarray, out: np.ndarray) -> None:
    """``out[t] = Generator.integers(2**63)`` from row ``t`` of :func:`streams` for each listed
    table. numpy draws that bound by Lemire's method on a 64-bit word: for 2**63 it never rejects
    and keeps the word's top 63 bits."""
    for t in tables:
        out[t] = np.int64(_next64(state[t]) >> _ONE)
