"""Observation decoding and fast hand evaluation for the blood-battle baselines.

``decode`` turns one seat's observation tensor (encoder v0, see
:class:`mjenv.encoding.BloodBattleObserver`) back into plain Python lists: the agent never
looks at the game. ``HandEval`` answers the questions a discard/claim heuristic asks
thousands of times per hand: shanten, and which tiles lower it (受入 / tile efficiency).

Shanten here uses *contains* semantics over the non-void suits only: the fewest tiles to add so
that the hand's usable tiles contain a complete hand, minus one. Void-suit (定缺) tiles can never
be part of a win, so leaving them out is exact, and it works whatever the tile count. It is
built from a memoised per-suit cost table (the method of ``shapes.regular_shanten``; the tests
check the two agree), so a discard decision costs a few dict look-ups per candidate instead of a
full shanten call per (discard, draw) pair.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from mjenv.encoding import BloodBattleObserver
from mjenv.melds import Meld
from mjenv.rules.shapes import group_targets

if BloodBattleObserver.version != 0:  # the plane blocks read below are those of encoder v0
    raise ImportError(f"agents.features decodes encoder v0, not v{BloodBattleObserver.version}")
_V = {name: sl.start for name, sl in BloodBattleObserver.views.items()}
_PHASES = ("void", "turn", "claim", "rob")
_INF = 99
_SHIFT = tuple(256 ** i for i in range(9))


# ---------------------------------------------------------------- observation decoding


class BloodBattleView(NamedTuple):
    """What one seat knows, decoded from its observation. Seats are relative (0 = self).

    Counts are 27-long lists of ints (one per suited kind). ``void[r]`` is the suit index, or -1
    while unknown. ``visible[k]`` counts every copy of kind k the seat can see (own hand, rivers,
    exposed melds, own 暗杠, tiles won on).
    """

    hand: list[int]
    drawn: int  # -1 when none
    claim: int  # tile offered (claim) or being added to a kong (rob); -1 otherwise
    phase: str
    void: list[int]
    won: list[bool]
    pongs: list[list[int]]  # per relative seat: kinds of its 碰
    kongs: list[list[int]]  # per relative seat: kinds of its exposed kongs
    own_ankan: list[int]
    n_ankan: list[int]  # per relative seat: number of 暗杠
    rivers: list[list[int]]  # per relative seat: discard counts per kind
    visible: list[int]
    wall: int

    @property
    def n_melds(self) -> int:
        """Declared melds of the observing seat (碰, exposed kongs, 暗杠)."""
        return len(self.pongs[0]) + len(self.kongs[0]) + len(self.own_ankan)

    def own_melds(self) -> list[Meld]:
        """The observing seat's melds as :class:`Meld` objects (for scoring)."""
        return ([Meld("pong", k) for k in self.pongs[0]] + [Meld("kong", k) for k in self.kongs[0]]
                + [Meld("ankan", k) for k in self.own_ankan])


_SPARSE = (_V["drawn"], _V["own_ankan"] + 1)  # drawn, claim, pong x4, kong x4, own_ankan
_ROW = {name: _V[name] - _SPARSE[0] for name in ("drawn", "claim", "pong", "kong", "own_ankan")}
_SCALARS = (_V["ankan_count"], _V["wall"] + 1)  # whole-plane scalars, read from column 0


def _scalar(sc: list[float], name: str, n: int) -> list[float]:
    """The n whole-plane scalars of view ``name`` from the scalar block."""
    i = _V[name] - _SCALARS[0]
    return sc[i:i + n]


def decode(obs: np.ndarray) -> BloodBattleView:
    """Decode a blood-battle observation tensor (encoder v0) into a :class:`BloodBattleView`.

    A handful of numpy calls, then plain lists: this runs at every decision.
    """
    o = obs
    hand = (o[_V["hand"]:_V["hand"] + 4] > 0.5).sum(axis=0).tolist()
    sparse: list[list[int]] = [[] for _ in range(_SPARSE[1] - _SPARSE[0])]
    for r, k in zip(*(x.tolist() for x in np.nonzero(o[_SPARSE[0]:_SPARSE[1]] > 0.5))):
        sparse[r].append(k)
    won_tiles = np.nonzero(o[_V["won_tile"]:_V["won_tile"] + 4] > 0.5)[1].tolist()
    river_arr = np.rint(o[_V["river"]:_V["river"] + 4] * 4).astype(np.int64)
    rivers = river_arr.tolist()
    voids = (o[_V["void"]:_V["void"] + 4, ::9] > 0.5).tolist()  # first rank of each suit
    sc = o[_SCALARS[0]:_SCALARS[1], 0].tolist()
    n_ankan = [round(x * 4) for x in _scalar(sc, "ankan_count", 4)]
    won = [x > 0.5 for x in _scalar(sc, "won", 4)]
    phase_row = _scalar(sc, "phase", 4)
    phase = _PHASES[phase_row.index(max(phase_row))] if max(phase_row) > 0.5 else "over"
    wall = round(_scalar(sc, "wall", 1)[0] * 108)
    pongs, kongs = sparse[_ROW["pong"]:_ROW["pong"] + 4], sparse[_ROW["kong"]:_ROW["kong"] + 4]
    own_ankan, drawn, claim = sparse[_ROW["own_ankan"]], sparse[_ROW["drawn"]], sparse[_ROW["claim"]]
    visible = (river_arr.sum(axis=0) + np.asarray(hand)).tolist()
    for r in range(4):
        for k in pongs[r]:
            visible[k] += 3
        for k in kongs[r]:
            visible[k] += 4
    for k in own_ankan:
        visible[k] += 4
    for k in won_tiles:
        visible[k] += 1
    void = [row.index(True) if True in row else -1 for row in voids]
    return BloodBattleView(hand, drawn[0] if drawn else -1, claim[0] if claim else -1,
                           phase, void, won, pongs, kongs, own_ankan, n_ankan, rivers, visible, wall)


# ---------------------------------------------------------------- hand evaluation


def _merges(need: int) -> tuple[tuple[int, int, int], ...]:
    """(a, b, a+b) index triples over m*2+p with melds <= need and pairs <= 1."""
    return tuple((a, b, a + b) for a in range(10) for b in range(10)
                 if a // 2 + b // 2 <= need and a % 2 + b % 2 <= 1)


_MERGES = tuple(_merges(n) for n in range(5))
# _PAIRS[need]: (i, j) with i + j == need*2+1 (one group gives i, the rest gives j).
_PAIRS = tuple(tuple((i, need * 2 + 1 - i) for i in range(need * 2 + 2)) for need in range(5))

_RANKS = np.arange(9)


# Per-suit missing-tile tables of every m melds + p pairs content, shared with mjenv's shanten.
_MISSING, _STARTS = group_targets(9, True)
_COSTS: dict[int, tuple[int, ...]] = {}
_IMPROVE: dict[int, tuple[int, ...]] = {}


def suit_key(counts: Sequence[int], suit: int) -> int:
    """The table key of one suit's nine counts (one byte per rank)."""
    lo = 9 * suit
    return int.from_bytes(bytes(counts[lo:lo + 9]), "little")


def _have(key: int) -> np.ndarray:
    """The nine rank counts of a key."""
    return np.frombuffer(key.to_bytes(9, "little"), dtype=np.uint8).astype(np.intp)


def suit_costs(key: int) -> tuple[int, ...]:
    """Fewest tiles to add so the suit contains m melds + p pairs, at index m*2+p (memoised)."""
    costs = _COSTS.get(key)
    if costs is None:
        total = _MISSING[_RANKS, _have(key)].sum(axis=0, dtype=np.int8)  # at most 14 per row
        costs = _COSTS[key] = tuple(np.minimum.reduceat(total, _STARTS).tolist())
    return costs


def improve_masks(key: int) -> tuple[int, ...]:
    """Per index m*2+p: bitmask of ranks whose addition lowers that cost (never a 5th copy)."""
    out = _IMPROVE.get(key)
    if out is None:
        base = suit_costs(key)
        have = _have(key)
        room = have < 4
        # All nine grown hands at once: adding rank t changes only row t's gather.
        now = _MISSING[_RANKS, have]
        total = now.sum(axis=0, dtype=np.int8)
        grown = total[None, :] + (_MISSING[_RANKS, np.minimum(have + 1, 4)] - now)
        grown_costs = np.minimum.reduceat(grown, _STARTS, axis=1).tolist()
        masks = [0] * 10
        for t in range(9):
            if not room[t]:
                continue
            _COSTS.setdefault(key + _SHIFT[t], tuple(grown_costs[t]))
            for j in range(10):
                if grown_costs[t][j] < base[j]:
                    masks[j] |= 1 << t
        out = _IMPROVE[key] = tuple(masks)
    return out


def fold(costs: Sequence[tuple[int, ...]], need: int) -> list[int]:
    """Combine per-suit cost vectors: best total at index m*2+p (m <= need, p <= 1)."""
    if not costs:
        return [0] + [_INF] * 9
    best = list(costs[0])
    merges = _MERGES[need]
    for c in costs[1:]:
        nxt = [_INF] * 10
        for a, b, j in merges:
            v = best[a] + c[b]
            if v < nxt[j]:
                nxt[j] = v
        best = nxt
    return best


def _complete_cost(costs: Sequence[tuple[int, ...]], need: int) -> int:
    """Fewest tiles to add for ``need`` melds and a pair over the groups (two-group fast path)."""
    if len(costs) == 2:
        a, b = costs
        return min(a[i] + b[j] for i, j in _PAIRS[need])
    return fold(costs, need)[need * 2 + 1]


class HandEval:
    """Shanten and useful tiles of a hand over the non-void suits (see the module docstring).

    ``counts``: 27 suited counts; ``void``: the void suit or -1; ``n_melds``: declared melds.
    Seven pairs counts only without melds.
    """

    __slots__ = ("counts", "void", "need", "suits", "keys", "costs", "reg", "sp")

    def __init__(self, counts: Sequence[int], void: int, n_melds: int) -> None:
        self.counts = counts
        self.void = void
        self.need = 4 - n_melds
        self.suits = [s for s in range(3) if s != void]
        self.keys = [suit_key(counts, s) for s in self.suits]
        self.costs = [suit_costs(k) for k in self.keys]
        self.reg = _complete_cost(self.costs, self.need) - 1
        self.sp = _seven_pairs(counts, self.suits) if n_melds == 0 else _INF

    @property
    def shanten(self) -> int:
        """min(regular, seven pairs); -1 = complete."""
        return min(self.reg, self.sp)

    def useful(self) -> list[int]:
        """Kinds (outside the void suit) whose addition lowers the shanten."""
        reg, sp = self.useful_masks()
        return bits(reg | sp)

    def useful_masks(self) -> tuple[int, int]:
        """Bit k set for kind k that lowers the shanten along the regular / the seven-pairs path
        (0 for a path that is not at the minimum)."""
        s = self.shanten
        reg = sp = 0
        if self.reg == s:
            total = s + 1
            pairs = _PAIRS[self.need]
            two = len(self.costs) == 2
            for i, suit in enumerate(self.suits):
                rest = self.costs[1 - i] if two else fold(self.costs[:i] + self.costs[i + 1:], self.need)
                a = self.costs[i]
                imp = improve_masks(self.keys[i])
                m = 0
                for x, y in pairs:
                    if a[x] + rest[y] == total:
                        m |= imp[x]
                reg |= m << (9 * suit)
        if self.sp == s:
            c = self.counts
            pairs_n, odd = _pair_stats(c, self.suits)
            short = 7 - pairs_n > odd  # a fresh single would also help
            for suit in self.suits:
                for k in range(9 * suit, 9 * suit + 9):
                    if c[k] & 1 or (short and c[k] in (0, 2)):
                        sp |= 1 << k
        return reg, sp


def bits(mask: int) -> list[int]:
    """The set bit positions of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _pair_stats(c: Sequence[int], suits: Sequence[int]) -> tuple[int, int]:
    """(pairs, kinds held an odd number of times) over the given suits."""
    pairs = odd = 0
    for s in suits:
        for x in c[9 * s:9 * s + 9]:
            pairs += x >> 1
            odd += x & 1
    return pairs, odd


def _seven_pairs(c: Sequence[int], suits: Sequence[int]) -> int:
    """Seven-pairs shanten (contains semantics): each missing pair costs 1, or 2 without a single."""
    pairs, odd = _pair_stats(c, suits)
    need = max(0, 7 - pairs)
    return need + max(0, need - odd) - 1
