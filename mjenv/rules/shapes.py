"""Winning shapes, waits and shanten over 34-slot count arrays (docs/rules-blood-battle.md#S7;
game-independent).

A hand is a 34-slot count array (``np.int8`` array or list of ints, kinds as in
:mod:`mjenv.tiles`). The three suits form melds of pungs and chows, the honours
(27..33) only pungs and pairs. Seven pairs (七对) counts a four-of-a-kind as two pairs,
as Sichuan 龙七对 and MCR 七对 both do.

Speed: every check works per group (m, p, s, honours) on a table memoised by an int key
``int.from_bytes(counts[lo:lo+size])`` (one byte per kind, so adding a tile of kind ``t``
is ``key + 256**t``). A group's entry says, once and for all, whether it splits into melds
(and a pair), which tiles complete it, and how many pairs it holds; ``waits`` and
``is_regular_win`` only combine four entries.

Memory: the group tables are :class:`BoundedTable` dicts and every ``lru_cache`` has a size, so
memory stays bounded however many hands a run plays.

Shanten is exact: the fewest tiles to add so that the hand contains a complete hand whose
kinds appear at most four times, minus one. It therefore never calls a hand ready whose
only wait is a fifth copy (``1111m`` + three melds is 1-shanten, not ready).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import islice
from typing import Any, Hashable, NamedTuple, Sequence, Union

import numpy as np

Counts = Union[Sequence[int], np.ndarray]

N_KINDS = 34
# (first kind, number of kinds, chows allowed) for m, p, s and the honours.
_GROUPS = ((0, 9, True), (9, 9, True), (18, 9, True), (27, 7, False))
_SHIFT = tuple(256 ** i for i in range(9))
# _BITS[mask] = the set bit positions of a 9-bit mask, for turning wait masks into kinds.
_BITS = tuple(tuple(i for i in range(9) if mask >> i & 1) for mask in range(512))


class Decomposition(NamedTuple):
    """One regular reading of a hand: the pair's kind and the melds, sorted by (kind, type).

    A meld is ``("chow", lowest_kind)`` or ``("pung", kind)``.
    """

    pair: int
    melds: tuple[tuple[str, int], ...]


TABLE_LIMIT = 1 << 15
"""Entries a memo table keeps; random play reaches about 10,000 per table in 800 hands."""


class BoundedTable(dict):
    """A memo table that drops its oldest half once it holds ``limit`` entries: bounded memory,
    and a hit is still a plain dict lookup (no bookkeeping, unlike an LRU)."""

    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: Hashable, value: Any) -> Any:
        """Store ``value`` under ``key`` (evicting first when full) and return it."""
        if len(self) >= self.limit:
            for old in list(islice(self, len(self) // 2 or 1)):
                del self[old]
        self[key] = value
        return value


def _as_bytes(counts: Counts) -> bytes:
    """The 34 counts as bytes (one per kind); rejects other lengths and negative counts."""
    if isinstance(counts, np.ndarray) and counts.dtype.itemsize == 1:
        data = counts.tobytes()
    else:
        data = bytes(counts.tolist() if isinstance(counts, np.ndarray) else counts)
    if len(data) != N_KINDS:
        raise ValueError(f"expected a count array of {N_KINDS} kinds, got {len(data)}")
    return data


# ---------------------------------------------------------------- group tables


@lru_cache(maxsize=1 << 16)
def _melds_only(key: int, size: int, chows: bool) -> bool:
    """Whether the group's tiles split exactly into pungs (and chows when allowed)."""
    if key == 0:
        return True
    c = key.to_bytes(size, "little")
    i = next(k for k in range(size) if c[k])
    # The lowest tile must start a pung or a chow: try both.
    if c[i] >= 3 and _melds_only(key - 3 * _SHIFT[i], size, chows):
        return True
    return (chows and i <= size - 3 and c[i + 1] > 0 and c[i + 2] > 0
            and _melds_only(key - _SHIFT[i] - _SHIFT[i + 1] - _SHIFT[i + 2], size, chows))


def _melds_and_pair(key: int, size: int, chows: bool) -> bool:
    """Whether the group's tiles split into melds plus exactly one pair."""
    c = key.to_bytes(size, "little")
    return any(c[i] >= 2 and _melds_only(key - 2 * _SHIFT[i], size, chows) for i in range(size))


class _GroupInfo(NamedTuple):
    """What waits / is_regular_win need from one group."""

    mod: int  # tiles in the group, mod 3
    ok0: bool  # splits into melds (mod 0)
    ok2: bool  # splits into melds + a pair (mod 2)
    to_melds: int  # bit t: adding kind t gives melds only (mod 2 groups)
    to_pair: int  # bit t: adding kind t gives melds + a pair (mod 1 groups)
    pairs: int  # sum of count // 2 (seven pairs; a four is two pairs)
    odd: int  # bit t: kind t held an odd number of times


_SUIT_INFO = BoundedTable()  # group key -> _GroupInfo
_HONOUR_INFO = BoundedTable()


def _compute_info(key: int, size: int, chows: bool) -> _GroupInfo:
    """Build a group's table entry (run once per distinct group key)."""
    c = key.to_bytes(size, "little")
    mod = sum(c) % 3
    ok0 = mod == 0 and _melds_only(key, size, chows)
    ok2 = mod == 2 and _melds_and_pair(key, size, chows)
    to_melds = to_pair = 0
    if mod == 2:
        for t in range(size):
            if c[t] < 4 and _melds_only(key + _SHIFT[t], size, chows):  # no fifth copy
                to_melds |= 1 << t
    elif mod == 1:
        pairs = [2 * _SHIFT[i] for i in range(size) if c[i] >= 2]
        for t in range(size):
            if c[t] >= 4:  # no fifth copy
                continue
            # _melds_and_pair(key + kind t): the pair at a kind held twice, or at t held once
            grown = key + _SHIFT[t]
            if (c[t] == 1 and _melds_only(grown - 2 * _SHIFT[t], size, chows)
                    or any(_melds_only(grown - pair, size, chows) for pair in pairs)):
                to_pair |= 1 << t
    pairs = sum(x >> 1 for x in c)
    odd = sum(1 << t for t in range(size) if c[t] & 1)
    return _GroupInfo(mod, ok0, ok2, to_melds, to_pair, pairs, odd)


def _infos(data: bytes) -> list[_GroupInfo]:
    """The four group entries of a hand, computing missing ones."""
    out = []
    for lo, size, chows in _GROUPS:
        key = int.from_bytes(data[lo:lo + size], "little")
        table = _SUIT_INFO if chows else _HONOUR_INFO
        info = table.get(key)
        if info is None:
            info = table.put(key, _compute_info(key, size, chows))
        out.append(info)
    return out


# ---------------------------------------------------------------- win shapes


def is_regular_win(counts: Counts) -> bool:
    """S7: the tiles (3k+2 of them) form k melds and one pair."""
    data = _as_bytes(counts)
    if sum(data) % 3 != 2:
        return False
    pairs = 0
    for g in _infos(data):
        if g.mod == 0:
            if not g.ok0:
                return False
        elif g.mod == 2 and g.ok2:
            pairs += 1
        else:
            return False
    return pairs == 1


def is_seven_pairs(counts: Counts) -> bool:
    """S7: exactly 14 tiles in seven pairs; a four-of-a-kind is two pairs (龙七对)."""
    data = _as_bytes(counts)
    return sum(data) == 14 and not any(x & 1 for x in data)


def waits(counts: Counts) -> list[int]:
    """Kinds (ascending) whose addition to a 3k+1 hand makes a regular win or seven pairs.

    A kind the hand already holds four times is never a wait.
    """
    data = _as_bytes(counts)
    n = sum(data)
    if n % 3 != 1:
        raise ValueError(f"waits needs a hand of 3k+1 tiles, got {n}")
    gs = _infos(data)
    mask = 0  # bit kind set for a wait, over all 34 kinds
    ones = [i for i in range(4) if gs[i].mod == 1]
    twos = [i for i in range(4) if gs[i].mod == 2]
    rest_ok = all(g.ok0 for g in gs if g.mod == 0)
    if rest_ok and len(ones) == 1 and not twos:
        # The odd group takes the tile and the pair.
        i = ones[0]
        mask = gs[i].to_pair << _GROUPS[i][0]
    elif rest_ok and len(twos) == 2 and not ones:
        # One mod-2 group becomes melds, the other keeps the pair.
        a, b = twos
        if gs[b].ok2:
            mask |= gs[a].to_melds << _GROUPS[a][0]
        if gs[a].ok2:
            mask |= gs[b].to_melds << _GROUPS[b][0]
    if n == 13 and sum(g.pairs for g in gs) == 6:
        # Six pairs and one odd tile: that tile's kind (a triplet's fourth counts too).
        for (lo, _, _), g in zip(_GROUPS, gs):
            mask |= g.odd << lo
    out = []
    for lo, size, _ in _GROUPS:
        part = mask >> lo & ((1 << size) - 1)
        if part:
            out.extend(lo + t for t in _BITS[part])
    return out


def _meld_sets(c: list[int], start: int) -> list[list[tuple[str, int]]]:
    """Every way to split ``c`` (mutated and restored) into melds, lowest kind first."""
    i = start
    while i < N_KINDS and c[i] == 0:
        i += 1
    if i == N_KINDS:
        return [[]]
    out: list[list[tuple[str, int]]] = []
    if c[i] >= 3:
        c[i] -= 3
        out.extend([("pung", i)] + rest for rest in _meld_sets(c, i))
        c[i] += 3
    if i < 27 and i % 9 <= 6 and c[i + 1] and c[i + 2]:
        for k in (i, i + 1, i + 2):
            c[k] -= 1
        out.extend([("chow", i)] + rest for rest in _meld_sets(c, i))
        for k in (i, i + 1, i + 2):
            c[k] += 1
    return out


def decompositions(counts: Counts) -> list[Decomposition]:
    """S7/S8: all distinct regular readings (pair + melds) of a 3k+2 hand, sorted; [] if none."""
    data = _as_bytes(counts)
    if not is_regular_win(data):
        return []
    c = list(data)
    found: set[Decomposition] = set()
    for p in range(N_KINDS):
        if c[p] >= 2:
            c[p] -= 2
            for melds in _meld_sets(c, 0):
                found.add(Decomposition(p, tuple(sorted(melds, key=lambda m: (m[1], m[0])))))
            c[p] += 2
    return sorted(found)


# ---------------------------------------------------------------- shanten


@lru_cache(maxsize=4)  # two group kinds
def group_targets(size: int, chows: bool) -> tuple[np.ndarray, np.ndarray]:
    """Missing-tile tables over every group content of m melds + p pairs (m <= 4, p <= 1).

    A target row is one content with each kind at most 4, rows grouped by (m, p) in block
    order m*2+p. Returns ``missing[i, v, row] = max(row[i] - v, 0)`` (tiles of kind ``i`` the
    row needs when the hand holds ``v``) and the first row of each block.
    """
    eye = np.eye(size, dtype=np.int8)
    shapes = [eye[i] * 3 for i in range(size)]
    if chows:
        shapes += [eye[i] + eye[i + 1] + eye[i + 2] for i in range(size - 2)]
    melds = np.array(shapes, dtype=np.int8)
    pairs = eye * 2
    level = np.zeros((1, size), dtype=np.int8)
    blocks = []
    for _ in range(5):
        with_pair = (level[:, None, :] + pairs[None, :, :]).reshape(-1, size)
        with_pair = np.unique(with_pair[with_pair.max(axis=1) <= 4], axis=0)
        blocks += [level, with_pair]
        grown = (level[:, None, :] + melds[None, :, :]).reshape(-1, size)
        level = np.unique(grown[grown.max(axis=1) <= 4], axis=0)
    rows = np.concatenate(blocks)
    starts = np.cumsum([0] + [len(b) for b in blocks[:-1]])
    held = np.arange(5, dtype=np.int8)
    missing = np.maximum(rows.T[:, None, :] - held[None, :, None], 0).astype(np.int8)
    return np.ascontiguousarray(missing), starts


# (group size, chows) -> group key -> costs
_COSTS: dict[tuple[int, bool], BoundedTable] = {(9, True): BoundedTable(), (7, False): BoundedTable()}


def _group_costs(key: int, size: int, chows: bool) -> tuple[int, ...]:
    """Fewest tiles to add so the group contains m melds + p pairs, at index m*2+p."""
    memo = _COSTS[(size, chows)]
    costs = memo.get(key)
    if costs is None:
        missing, starts = group_targets(size, chows)
        have = np.frombuffer(key.to_bytes(size, "little"), dtype=np.uint8).astype(np.intp)
        # One gather per kind, summed over kinds: at most 14 per row, so int8 is enough.
        total = missing[np.arange(size), np.minimum(have, 4)].sum(axis=0, dtype=np.int8)
        costs = memo.put(key, tuple(np.minimum.reduceat(total, starts).tolist()))
    return costs


_INF = 99
# _MERGES[need]: (index a, index b, index of the sum) for m*2+p indices whose melds stay
# within ``need`` and pairs within one.
_MERGES = tuple(
    tuple((a, b, a + b) for a in range(10) for b in range(10)
          if a // 2 + b // 2 <= need and a % 2 + b % 2 <= 1)
    for need in range(5))


def _check_size(n: int, n_melds: int) -> int:
    """Melds still needed; raises unless the hand holds 3·need+1 or +2 tiles."""
    need = 4 - n_melds
    if not 0 <= n_melds <= 4 or n not in (3 * need + 1, 3 * need + 2):
        raise ValueError(f"shanten needs {3 * need + 1} or {3 * need + 2} tiles "
                         f"with {n_melds} declared melds, got {n}")
    return need


def regular_shanten(counts: Counts, n_melds: int = 0) -> int:
    """Tiles away from ready for four melds + a pair (-1 = complete); exact, no fifth copies."""
    data = _as_bytes(counts)
    return regular_gap(data, _check_size(sum(data), n_melds)) - 1


def regular_gap(data: bytes, need: int) -> int:
    """Fewest tiles to add so that the 34 counts ``data`` contain ``need`` melds and a pair (any
    tile count: "contains" semantics, e.g. a hand with its wildcards taken out)."""
    # best[m*2+p]: fewest added tiles for m melds and p pairs over the groups seen so far.
    best = [0] + [_INF] * 9
    for lo, size, chows in _GROUPS:
        costs = _group_costs(int.from_bytes(data[lo:lo + size], "little"), size, chows)
        nxt = [_INF] * 10
        for a, b, j in _MERGES[need]:
            v = best[a] + costs[b]
            if v < nxt[j]:
                nxt[j] = v
        best = nxt
    return best[need * 2 + 1]


def seven_pairs_shanten(counts: Counts) -> int:
    """Tiles away from ready for seven pairs (a four is two pairs); needs 13 or 14 tiles."""
    data = _as_bytes(counts)
    _check_size(sum(data), 0)
    # Every leftover tile is of a distinct kind with an odd count, so one draw pairs it.
    return 6 - sum(x >> 1 for x in data)


def shanten(counts: Counts, n_melds: int = 0) -> int:
    """Min of regular and (without declared melds) seven-pairs shanten; -1 = complete."""
    reg = regular_shanten(counts, n_melds)
    if n_melds == 0:
        return min(reg, seven_pairs_shanten(counts))
    return reg
