"""Compiled observation decoding and hand evaluation: the array form of :mod:`agents.features`.

``decode`` fills a :data:`VIEW_ROWS` x 27 int64 work array (rows named below) from one
blood-battle observation, the fields of :class:`agents.features.BloodBattleView`.
``shanten`` / ``useful_masks`` answer what :class:`agents.features.HandEval` answers, with the
same per-group cost vectors (fewest tiles to add so a group contains m melds + p pairs, at index
m*2+p, each kind at most four times; :func:`mjenv.rules.shapes.group_targets` lists the same
targets). A group's vector is computed once by a small dynamic programme over its ranks and kept
in a table indexed by the group's base-5 key (:func:`suit_table`, :func:`honour_table`), next to
the ranks whose addition lowers each cost (improve masks, as ``agents.features.improve_masks``),
so a row is one memory read. Rows are filled on demand; the tables are passed as arguments
because numba freezes global arrays. A row's state column is written last, so threads sharing a
table (every writer of a row writes the same values) never read a half-written row where stores
keep their order (x86).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mjenv.encoding import BloodBattleObserver
from mjenv.tiles import N_SUIT_KINDS

if BloodBattleObserver.version != 0:  # the plane blocks read below are those of encoder v0
    raise ImportError(f"agents.compiled.features decodes encoder v0, not v{BloodBattleObserver.version}")
_V = {name: sl.start for name, sl in BloodBattleObserver.views.items()}
P_HAND, P_DRAWN, P_CLAIM, P_PONG, P_KONG = _V["hand"], _V["drawn"], _V["claim"], _V["pong"], _V["kong"]
P_OWN_ANKAN, P_RIVER, P_WON_TILE, P_VOID = _V["own_ankan"], _V["river"], _V["won_tile"], _V["void"]
P_ANKAN_COUNT, P_WON, P_PHASE, P_WALL = _V["ankan_count"], _V["won"], _V["phase"], _V["wall"]

# Rows of the decoded view (seats relative, 0 = self).
HAND, VISIBLE, OWN_ANKAN = 0, 1, 2  # counts, copies visible, own 暗杠 flags
RIVER, PONG, KONG = 3, 7, 11  # + relative seat: discard counts, 碰 flags, exposed kong flags
SCALARS = 15
VIEW_ROWS = 16
# Columns of the scalar row.
S_DRAWN, S_CLAIM, S_PHASE, S_WALL, S_VOID, S_WON, S_N_ANKAN, S_N_MELDS = 0, 1, 2, 3, 4, 8, 12, 16
# Phases, in the observation's order, then "over".
PH_VOID, PH_TURN, PH_CLAIM, PH_ROB, PH_OVER = 0, 1, 2, 3, 4

INF = 99
N_COSTS = 10  # m*2+p for m <= 4 melds, p <= 1 pair


@njit(cache=True, nogil=True)
def new_view() -> np.ndarray:
    """A work array for :func:`decode`."""
    return np.zeros((VIEW_ROWS, N_SUIT_KINDS), dtype=np.int64)


@njit(cache=True, nogil=True)
def decode(o: np.ndarray, v: np.ndarray) -> None:
    """Fill the view ``v`` from the observation ``o`` (planes x 27), as :func:`agents.features.decode`."""
    v[:] = 0
    sc = v[SCALARS]
    for k in range(27):
        n = 0
        for i in range(4):
            n += o[P_HAND + i, k] > 0.5
        v[HAND, k] = n
        v[VISIBLE, k] = n
        v[OWN_ANKAN, k] = o[P_OWN_ANKAN, k] > 0.5
        if v[OWN_ANKAN, k]:
            v[VISIBLE, k] += 4
            sc[S_N_MELDS] += 1
        for r in range(4):
            x = np.int64(np.rint(np.float64(o[P_RIVER + r, k]) * 4))
            v[RIVER + r, k] = x
            v[VISIBLE, k] += x
            if o[P_PONG + r, k] > 0.5:
                v[PONG + r, k] = 1
                v[VISIBLE, k] += 3
            if o[P_KONG + r, k] > 0.5:
                v[KONG + r, k] = 1
                v[VISIBLE, k] += 4
            if o[P_WON_TILE + r, k] > 0.5:
                v[VISIBLE, k] += 1
        sc[S_N_MELDS] += v[PONG, k] + v[KONG, k]
    sc[S_DRAWN] = -1
    sc[S_CLAIM] = -1
    for k in range(26, -1, -1):  # the lowest marked kind, as decode's first list entry
        if o[P_DRAWN, k] > 0.5:
            sc[S_DRAWN] = k
        if o[P_CLAIM, k] > 0.5:
            sc[S_CLAIM] = k
    for r in range(4):
        sc[S_VOID + r] = -1
        for s in range(3):
            if o[P_VOID + r, 9 * s] > 0.5:
                sc[S_VOID + r] = s
                break
        sc[S_WON + r] = o[P_WON + r, 0] > 0.5
        sc[S_N_ANKAN + r] = np.int64(np.rint(np.float64(o[P_ANKAN_COUNT + r, 0]) * 4))
    best = 0
    for i in range(1, 4):
        if o[P_PHASE + i, 0] > o[P_PHASE + best, 0]:
            best = i
    sc[S_PHASE] = best if o[P_PHASE + best, 0] > 0.5 else PH_OVER
    sc[S_WALL] = np.int64(np.rint(np.float64(o[P_WALL, 0]) * 108))


@njit(cache=True, nogil=True)
def obvious_action(mask: np.ndarray, hu: int, rob_kong: int) -> int:
    """胡 / 抢杠胡 whenever offered, the only legal action when there is one, else -1 (both
    heuristics start so)."""
    if mask[hu]:
        return hu
    if mask[rob_kong]:
        return rob_kong
    legal = np.flatnonzero(mask)
    return legal[0] if len(legal) == 1 else -1


# ---------------------------------------------------------------- group cost tables


# Columns of a table row, and the states of its last column.
COSTS, MASKS, STATE = 0, N_COSTS, 2 * N_COSTS
EMPTY, HAS_COSTS, HAS_MASKS = 0, 1, 2
_TABLES: dict[str, np.ndarray] = {}


def _table(name: str, keys: int) -> np.ndarray:
    """A zeroed table (the pages are only committed where rows get filled)."""
    if name not in _TABLES:
        _TABLES[name] = np.zeros((keys, STATE + 1), dtype=np.int16)
    return _TABLES[name]


def suit_table() -> np.ndarray:
    """The table of a nine-rank suit (5**9 keys; at most 82 MB, mostly never touched)."""
    return _table("suit", 5 ** 9)


def honour_table() -> np.ndarray:
    """The table of the seven honours (pungs and pairs only)."""
    return _table("honour", 5 ** 7)


@njit(cache=True, nogil=True)
def group_key(counts: np.ndarray, lo: int, size: int) -> int:
    """The base-5 key of ``size`` counts from ``lo`` (each at most 4)."""
    key = 0
    m = 1
    for i in range(size):
        key += min(counts[lo + i], 4) * m
        m *= 5
    return key


@njit(cache=True, nogil=True)
def _fill_costs(table: np.ndarray, key: int, size: int, chows: bool) -> None:
    """Compute a group's cost vector: a DP over ranks whose state is the chows still open
    (started one and two ranks back), melds and pairs so far; a rank never holds five."""
    have = np.empty(size, dtype=np.int64)
    rest = key
    for i in range(size):
        have[i] = rest % 5
        rest //= 5
    cur = np.full((5, 5, 5, 2), INF, dtype=np.int64)  # [open from i-1][open from i-2][melds][pairs]
    nxt = np.empty_like(cur)
    cur[0, 0, 0, 0] = 0
    for i in range(size):
        nxt[:] = INF
        z_max = 4 if chows and i + 2 < size else 0
        for p1 in range(5):
            for p2 in range(5 - p1):
                for m in range(5):
                    for q in range(2):
                        base = cur[p1, p2, m, q]
                        if base >= INF:
                            continue
                        for z in range(min(z_max, 4 - m) + 1):
                            for u in range(2 if m + z < 4 else 1):
                                for dq in range(2 - q):
                                    use = p1 + p2 + z + 3 * u + 2 * dq
                                    if use > 4:
                                        continue
                                    cost = base + max(use - have[i], 0)
                                    if cost < nxt[z, p1, m + z + u, q + dq]:
                                        nxt[z, p1, m + z + u, q + dq] = cost
        cur, nxt = nxt, cur
    for j in range(N_COSTS):
        table[key, COSTS + j] = cur[0, 0, j // 2, j % 2]
    table[key, STATE] = HAS_COSTS


@njit(cache=True, nogil=True)
def group_costs(table: np.ndarray, key: int, size: int, chows: bool) -> np.ndarray:
    """The cost vector of a group key (computed on first use)."""
    if table[key, STATE] == EMPTY:
        _fill_costs(table, key, size, chows)
    return table[key, COSTS:COSTS + N_COSTS]


@njit(cache=True, nogil=True)
def improve_masks(table: np.ndarray, key: int, size: int, chows: bool) -> np.ndarray:
    """Per index m*2+p: bitmask of ranks whose addition lowers that cost (never a 5th copy)."""
    if table[key, STATE] != HAS_MASKS:
        base = group_costs(table, key, size, chows)
        masks = np.zeros(N_COSTS, dtype=np.int16)
        step = 1
        for t in range(size):
            if key // step % 5 < 4:
                grown = group_costs(table, key + step, size, chows)
                for j in range(N_COSTS):
                    if grown[j] < base[j]:
                        masks[j] |= 1 << t
            step *= 5
        table[key, MASKS:MASKS + N_COSTS] = masks
        table[key, STATE] = HAS_MASKS
    return table[key, MASKS:MASKS + N_COSTS]


@njit(cache=True, nogil=True)
def fold_at(a: np.ndarray, b: np.ndarray, y: int) -> int:
    """Best total at index ``y`` (m*2+p) of two cost vectors combined: melds add up, at most one pair."""
    best = INF
    for i in range(y + 1):
        if i & 1 and (y - i) & 1:
            continue
        x = a[i] + b[y - i]
        if x < best:
            best = x
    return best


# ---------------------------------------------------------------- blood-battle hand evaluation


@njit(cache=True, nogil=True)
def _suit_key(counts: np.ndarray, s: int, void: int, table: np.ndarray) -> int:
    """The key of suit ``s`` with its table row filled, -1 for the void suit."""
    if s == void:
        return -1
    key = group_key(counts, 9 * s, 9)
    group_costs(table, key, 9, True)
    return key


@njit(cache=True, nogil=True)
def _suit_rows(counts: np.ndarray, void: int, table: np.ndarray) -> tuple[int, int, int]:
    """The keys of suits 0, 1, 2 (-1 for the void), their table rows filled."""
    return (_suit_key(counts, 0, void, table), _suit_key(counts, 1, void, table),
            _suit_key(counts, 2, void, table))


@njit(cache=True, nogil=True)
def _rest_at(table: np.ndarray, keys: tuple[int, int, int], skip: int, y: int) -> int:
    """Best total at index ``y`` over the non-void suits other than ``skip`` (-1: none skipped)."""
    a = b = c = -1
    for s in range(3):
        if keys[s] >= 0 and s != skip:
            if a < 0:
                a = keys[s]
            elif b < 0:
                b = keys[s]
            else:
                c = keys[s]
    if b < 0:
        return table[a, COSTS + y]
    if c < 0:
        return fold_at(table[a, COSTS:], table[b, COSTS:], y)
    best = INF
    for x in range(y + 1):  # at most one odd index among three: fold_at keeps the other two even
        best = min(best, table[a, COSTS + x] + fold_at(table[b, COSTS:], table[c, COSTS:], y - x))
    return best


@njit(cache=True, nogil=True)
def _pair_stats(counts: np.ndarray, void: int) -> tuple[int, int]:
    """(pairs, kinds held an odd number of times) outside the void suit."""
    pairs = odd = 0
    for k in range(27):
        if k // 9 != void:
            pairs += counts[k] >> 1
            odd += counts[k] & 1
    return pairs, odd


@njit(cache=True, nogil=True)
def shanten_parts(counts: np.ndarray, void: int, n_melds: int, table: np.ndarray) -> tuple[int, int]:
    """(regular, seven-pairs) shanten over the non-void suits, as ``HandEval.reg`` / ``.sp``."""
    keys = _suit_rows(counts, void, table)
    reg = _rest_at(table, keys, -1, (4 - n_melds) * 2 + 1) - 1
    sp = INF
    if n_melds == 0:
        pairs, odd = _pair_stats(counts, void)
        short = max(0, 7 - pairs)
        sp = short + max(0, short - odd) - 1
    return reg, sp


@njit(cache=True, nogil=True)
def shanten(counts: np.ndarray, void: int, n_melds: int, table: np.ndarray) -> int:
    """``HandEval(counts, void, n_melds).shanten``."""
    reg, sp = shanten_parts(counts, void, n_melds, table)
    return min(reg, sp)


@njit(cache=True, nogil=True)
def useful_masks(counts: np.ndarray, void: int, n_melds: int, table: np.ndarray) -> tuple[int, int]:
    """Bit k set for kind k that lowers the shanten along the regular / the seven-pairs path
    (0 for a path not at the minimum), as ``HandEval.useful_masks``."""
    reg_s, sp_s = shanten_parts(counts, void, n_melds, table)
    s = min(reg_s, sp_s)
    need = 4 - n_melds
    reg = sp = 0
    if reg_s == s:
        keys = _suit_rows(counts, void, table)
        target = need * 2 + 1
        for suit in range(3):
            if keys[suit] < 0:
                continue
            imp = improve_masks(table, keys[suit], 9, True)
            m = 0
            for x in range(target + 1):
                if table[keys[suit], COSTS + x] + _rest_at(table, keys, suit, target - x) == s + 1:
                    m |= imp[x]
            reg |= np.int64(m) << (9 * suit)
    if sp_s == s:
        pairs, odd = _pair_stats(counts, void)
        short = 7 - pairs > odd  # a fresh single would also help
        for k in range(27):
            c = counts[k]
            if k // 9 != void and (c & 1 or (short and (c == 0 or c == 2))):
                sp |= 1 << k
    return reg, sp
