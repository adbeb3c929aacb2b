"""Compiled Joy Mahjong rules (J2, J3, J8): the 财神 win check, 吃 options, the bird.

The same rules as :mod:`mjenv.rules.joy` and :mod:`mjenv.rules.joy_settlement`, as numba
functions over 34-slot count arrays (``int8``), for :mod:`mjenv.vector.engine.joy_mahjong`.
Fan counts are not here: the engine calls the reference scorer for them (see the engine).

:func:`can_win` follows :func:`mjenv.rules.joy.can_win` step by step, so the two agree on every
hand (tested against it): per group (m, p, s, honours) the fewest wildcards that turn the real
tiles into melds only, or into melds and the pair (a dynamic programme over the kinds, the same
as ``_fewest_wild``, capped so a wildcard never stands for a fifth copy of a kind counting the
concealed tiles and the melds), then 七对, 十三幺, 全不靠 / 七星不靠 and 组合龙. The uncapped
programme's answers are precomputed for every group (:func:`need_tables`); the capped one runs
only when copies in one's melds could bind and the uncapped check passed. :func:`can_complete`
is the engine's pre-check (some tile completes a 3n+1 hand; all four wildcards held included).
Rule IDs: docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
from numba import njit

N_KINDS = 34
N_SUIT_KINDS = 27
INF = 99  # "cannot": the reference's _INF
# The six knitted patterns (组合龙 / 全不靠): suit s takes the ranks r with (r - 1) % 3 == cls[s].
KNIT_CLASSES = np.array(list(permutations(range(3))), dtype=np.int64)
KNIT_KINDS = np.array([sorted(9 * s + c[s] + 3 * j for s in range(3) for j in range(3))
                       for c in KNIT_CLASSES], dtype=np.int64)
# Fields of a group's entry (the reference's _Group), as columns of an int64 row.
NEED0, DELTA, ODD, ORPHANS_OK, PAIRS, DISTINCT_OK, CLS, KNIT = range(8)  # KNIT..KNIT+2
GROUP_FIELDS = 11


@njit(cache=True, nogil=True)
def wildcard_of(indicator: int) -> int:
    """J2: the indicator + 1 within its suit (9→1); 东→南→西→北→中→发→白→东."""
    if indicator < N_SUIT_KINDS:
        return indicator - indicator % 9 + (indicator % 9 + 1) % 9
    return 27 + (indicator - 27 + 1) % 7


@njit(cache=True, nogil=True)
def rank_of(kind: int) -> int:
    """1-9 for suited kinds, 1-7 for 东南西北中发白."""
    return kind % 9 + 1 if kind < N_SUIT_KINDS else kind - 26


@njit(cache=True, nogil=True)
def bird_seat(bird: int, dealer: int) -> int:
    """J8: the seat the bird lands on, counting its number from the dealer in turn order."""
    return (dealer + rank_of(bird) - 1) % 4


@njit(cache=True, nogil=True)
def chow_shapes(hand: np.ndarray, k: int, wild: int) -> int:
    """J3 吃 of discard k: bit ``shape`` set when the claimed tile can be the lowest (0), middle
    (1) or highest (2) of a chow from ``hand``; the two tiles from the hand are never the
    wildcard (J2)."""
    if k >= N_SUIT_KINDS:
        return 0
    first = k - k % 9
    out = 0
    for shape in range(3):
        low = k - shape
        if low < first or low + 2 > first + 8:
            continue
        ok = True
        for t in range(low, low + 3):
            if t != k and (hand[t] == 0 or t == wild):
                ok = False
        if ok:
            out |= 1 << shape
    return out


@njit(cache=True, nogil=True)
def fewest_wild(h: np.ndarray, cap: np.ndarray, size: int, chows: bool, cur: np.ndarray,
                nxt: np.ndarray) -> tuple[int, int]:
    """Fewest wildcards (INF above 4) turning a group's real tiles ``h`` into melds only, and
    into melds and one pair, using at most ``cap[k]`` tiles of kind k: the reference's
    ``_fewest_wild``. A state is ``10·n1 + 2·n2 + pair`` (chows started one and two kinds back,
    the pair placed); its value the fewest wildcards so far. ``cur``/``nxt``: scratch of 50."""
    last_chow = size - 2 if chows else 0
    cur[:] = INF
    cur[0] = 0
    for i in range(size):
        c, top = h[i], cap[i]
        nxt[:] = INF
        found = False
        for state in range(50):
            cost = cur[state]
            if cost >= INF:
                continue
            n1, n2, pair = state // 10, (state >> 1) % 5, state & 1
            most = min(top, c + 4 - cost)
            for q in range(1 if pair else 2):
                fixed0 = n1 + n2 + 2 * q
                carried = 2 * n1 + (pair | q)
                for pung in (0, 3):
                    fixed = fixed0 + pung
                    if fixed > most:
                        break
                    if i < last_chow:
                        for n in range(max(c - fixed, 0), most - fixed + 1):
                            key, v = 10 * n + carried, cost + fixed + n - c
                            if v < nxt[key]:
                                nxt[key] = v
                                found = True
                    elif fixed >= c:
                        v = cost + fixed - c
                        if v < nxt[carried]:
                            nxt[carried] = v
                            found = True
        if not found:
            return INF, INF
        cur, nxt = nxt, cur
    melds_only = cur[0]
    return melds_only, min(cur[1], melds_only + 2)


@njit(cache=True, nogil=True)
def build_need_table(size: int) -> np.ndarray:
    """(need0, need2 - need0) of :func:`fewest_wild` without a cap beyond four, for every group
    of ``size`` kinds (counts 0-4, at most 14 tiles) indexed by its base-5 key: the common case
    of :func:`can_win` (no meld copies near the group's tiles) becomes a look-up."""
    n = 5 ** size
    out = np.full((n, 2), INF, np.int8)
    h = np.zeros(size, np.int64)
    cap = np.full(size, 4, np.int64)
    cur = np.empty(50, np.int64)
    nxt = np.empty(50, np.int64)
    for key in range(n):
        total, rest = 0, key
        for i in range(size):
            h[i] = rest % 5
            rest //= 5
            total += h[i]
        if total <= 14:
            need0, need2 = fewest_wild(h, cap, size, size == 9, cur, nxt)
            out[key, 0], out[key, 1] = need0, need2 - need0
    return out


def need_tables() -> tuple[np.ndarray, np.ndarray]:
    """The suit (5^9 rows) and honour (5^7 rows) tables of :func:`build_need_table`, built once
    per process (about a second)."""
    global _NEED_TABLES
    if _NEED_TABLES is None:
        _NEED_TABLES = (build_need_table(9), build_need_table(7))
    return _NEED_TABLES


_NEED_TABLES: tuple[np.ndarray, np.ndarray] | None = None


@njit(cache=True, nogil=True)
def group_entry(data: np.ndarray, extra: np.ndarray, lo: int, size: int, table: np.ndarray,
                scratch: np.ndarray, out: np.ndarray, exact: bool) -> bool:
    """The reference's ``_group`` entry of kinds lo..lo+size-1 into ``out`` (GROUP_FIELDS);
    returns whether copies held elsewhere cap the group.

    Copies held elsewhere (``extra``) cap a kind only where a wildcard could stand for it
    beside a real tile (within two ranks of a held tile, or held for honours), as the reference
    keys its table: results must match it exactly. The need comes from ``table``
    (:func:`build_need_table`, no caps) unless the group is capped and ``exact`` asks for the
    capped dynamic programme; ``scratch``: int64 (4, 50)."""
    chows = size == 9
    h, cap = scratch[0, :size], scratch[1, :size]
    key, mult, capped = 0, 1, False
    for i in range(size):
        h[i] = data[lo + i]
        key += h[i] * mult
        mult *= 5
    for i in range(size):
        near = h[i] > 0
        if chows:
            for d in (-2, -1, 1, 2):
                if 0 <= i + d < size and h[i + d] > 0:
                    near = True
        ex = extra[lo + i] if near else 0
        cap[i] = max(h[i], 4 - ex)
        capped |= cap[i] < 4
    if capped and exact:
        need0, need2 = fewest_wild(h, cap, size, chows, scratch[2], scratch[3])
        out[NEED0], out[DELTA] = need0, need2 - need0
    else:
        out[NEED0], out[DELTA] = table[key, 0], table[key, 1]
    odd = pairs = top = 0
    for i in range(size):
        odd += h[i] & 1
        pairs += h[i] >= 2
        top = max(top, h[i])
    out[ODD], out[PAIRS] = odd, pairs
    out[DISTINCT_OK] = top <= 1
    out[KNIT] = out[KNIT + 1] = out[KNIT + 2] = 0
    if chows:
        middle = 0
        seen = 0  # bit c: some held rank of class c
        for i in range(size):
            if h[i] > 0:
                out[KNIT + i % 3] += 1
                seen |= 1 << (i % 3)
                if 1 <= i <= 7:
                    middle += 1
        out[ORPHANS_OK] = middle == 0 and top <= 2
        if seen == 0:
            out[CLS] = -1
        elif seen == 1 or seen == 2 or seen == 4:
            out[CLS] = 0 if seen == 1 else (1 if seen == 2 else 2)
        else:
            out[CLS] = 3
    else:
        out[ORPHANS_OK] = top <= 2
        out[CLS] = -1
    return capped


@njit(cache=True, nogil=True)
def _groups(data: np.ndarray, extra: np.ndarray, suit_table: np.ndarray, honour_table: np.ndarray,
            scratch: np.ndarray, g: np.ndarray, exact: bool) -> bool:
    """The four group entries into ``g``; returns whether any is capped."""
    capped = False
    for s in range(3):
        capped |= group_entry(data, extra, 9 * s, 9, suit_table, scratch, g[s], exact)
    capped |= group_entry(data, extra, 27, 7, honour_table, scratch, g[3], exact)
    return capped


@njit(cache=True, nogil=True)
def _regular_win(data: np.ndarray, extra: np.ndarray, suit_table: np.ndarray, honour_table: np.ndarray,
                 scratch: np.ndarray, g: np.ndarray, w: int, capped: bool) -> bool:
    """The regular check on uncapped entries, redone with the caps only when it passes: a cap
    only raises a group's need, so a hand failing uncapped fails capped (most hands)."""
    if not _regular_ok(g, w):
        return False
    if not capped:
        return True
    _groups(data, extra, suit_table, honour_table, scratch, g, True)
    return _regular_ok(g, w)


@njit(cache=True, nogil=True)
def _regular_ok(g: np.ndarray, w: int) -> bool:
    """Some group takes the pair and the wildcards cover every group's need."""
    need = g[0, NEED0] + g[1, NEED0] + g[2, NEED0] + g[3, NEED0]
    delta = min(min(g[0, DELTA], g[1, DELTA]), min(g[2, DELTA], g[3, DELTA]))
    return need + delta <= w


@njit(cache=True, nogil=True)
def _knitted_suits_ok(g: np.ndarray) -> bool:
    """The held suited ranks fit one knitted pattern (one class per suit, classes distinct)."""
    used = 0
    for s in range(3):
        c = g[s, CLS]
        if c == 3:
            return False
        if c >= 0:
            if used >> c & 1:
                return False
            used |= 1 << c
    return True


@njit(cache=True, nogil=True)
def _knitted_straight_ok(data: np.ndarray, extra: np.ndarray, g: np.ndarray, w: int,
                         suit_table: np.ndarray, honour_table: np.ndarray, scratch: np.ndarray) -> bool:
    """组合龙: some knitted pattern's 9 tiles (wildcards filling gaps) plus melds and a pair."""
    parts = np.empty((4, GROUP_FIELDS), np.int64)
    for p in range(6):
        missing = 9
        for s in range(3):
            missing -= g[s, KNIT + KNIT_CLASSES[p, s]]
        if missing > w:
            continue
        rest = data.copy()
        occupied = extra.copy()
        blocked = False
        for j in range(9):
            k = KNIT_KINDS[p, j]
            if rest[k]:
                rest[k] -= 1
            elif data[k] + occupied[k] >= 4:
                blocked = True  # the wildcard would be a fifth copy
            occupied[k] += 1
        if blocked:
            continue
        capped = _groups(rest, occupied, suit_table, honour_table, scratch, parts, False)
        if _regular_win(rest, occupied, suit_table, honour_table, scratch, parts, w - missing, capped):
            return True
    return False


@njit(cache=True, nogil=True)
def can_win(concealed: np.ndarray, n_melds: int, wild: int, meld_counts: np.ndarray,
            suit_table: np.ndarray, honour_table: np.ndarray) -> bool:
    """J2: whether the concealed tiles (winning tile included) complete a winning shape with the
    wildcards of kind ``wild`` (-1: none); ``meld_counts``: the declared melds' tiles (fifth-copy
    rule); the tables: :func:`need_tables`. The reference's :func:`mjenv.rules.joy.can_win`."""
    scratch = np.empty((4, 50), np.int64)
    data = np.empty(N_KINDS, np.int64)
    extra = np.empty(N_KINDS, np.int64)
    for k in range(N_KINDS):
        data[k] = concealed[k]
        extra[k] = meld_counts[k]
    w = 0
    if wild >= 0:
        w = data[wild]
        data[wild] = 0
    g = np.empty((4, GROUP_FIELDS), np.int64)
    capped = _groups(data, extra, suit_table, honour_table, scratch, g, False)
    if _regular_win(data, extra, suit_table, honour_table, scratch, g, w, capped):
        return True
    if n_melds > 1:
        return False
    if n_melds == 0:
        if g[0, ODD] + g[1, ODD] + g[2, ODD] + g[3, ODD] <= w:
            return True  # 七对: a wildcard pairs each odd kind, the rest pair up
        if (g[0, ORPHANS_OK] and g[1, ORPHANS_OK] and g[2, ORPHANS_OK] and g[3, ORPHANS_OK]
                and g[0, PAIRS] + g[1, PAIRS] + g[2, PAIRS] + g[3, PAIRS] <= 1):
            return True  # 十三幺
        if (g[0, DISTINCT_OK] and g[1, DISTINCT_OK] and g[2, DISTINCT_OK] and g[3, DISTINCT_OK]
                and _knitted_suits_ok(g)):
            return True  # 全不靠 / 七星不靠
    knit_max = 0
    for s in range(3):
        knit_max += max(g[s, KNIT], max(g[s, KNIT + 1], g[s, KNIT + 2]))
    if 9 - knit_max > w:
        return False  # too few knitted tiles for any 组合龙
    return _knitted_straight_ok(data, extra, g, w, suit_table, honour_table, scratch)


@njit(cache=True, nogil=True)
def can_complete(concealed: np.ndarray, n_melds: int, wild: int, meld_counts: np.ndarray,
                 suit_table: np.ndarray, honour_table: np.ndarray) -> bool:
    """J2: whether some tile completes the 3n+1 concealed tiles into a win (the engine's
    pre-check of every win test): one more wildcard, or with all four held, each other kind
    with room for it. The reference's :func:`mjenv.rules.joy.can_complete`."""
    data = concealed.copy()
    if wild >= 0 and data[wild] < 4:
        data[wild] += 1
        return can_win(data, n_melds, wild, meld_counts, suit_table, honour_table)
    for k in range(N_KINDS):
        if k != wild and data[k] + meld_counts[k] < 4:
            data[k] += 1
            wins = can_win(data, n_melds, wild, meld_counts, suit_table, honour_table)
            data[k] -= 1
            if wins:
                return True
    return False
