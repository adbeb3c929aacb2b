"""Joy Mahjong (欢乐麻将) winning shapes and fans with the 财神 wildcard (docs/rules-joy-mahjong.md J2,
J4, J5, J9).

Pure functions over a 34-slot count array of concealed tiles (the winning tile included) plus the
declared melds (:class:`mjenv.melds.Meld`); every piece of win context comes in a
:class:`JoyContext`, the rule options in a :class:`mjenv.config.JoyMahjongRules`.

Wildcards (J2). All copies of kind ``wild`` in the concealed hand are wild: each may stand for
any non-flower kind, itself included, but never for a fifth copy counting the concealed hand and
the player's own melds together (tiles elsewhere on the table are not counted: scoring never
reads table state). Wildcards never sit in a meld. A discarded wildcard cannot be claimed, so a
wildcard winning tile must be self-drawn.

Shapes (J2): regular (4 melds + a pair, declared melds included), 七对 (seven pairs; a
four-of-a-kind is two pairs, as in MCR), 十三幺, 全不靠 / 七星不靠 (14 distinct tiles of the
honours and one knitted 147/258/369 pattern), 组合龙 (a knitted straight + one meld + a pair).

Search. :func:`can_win` is the hot-path shape check: per group (m, p, s, honours) a memoised
table gives the fewest wildcards that turn the group's real tiles into melds only, or into melds
and the pair; the hand wins when some choice of pair group needs at most the wildcards held (the
rest, a multiple of three, form a free meld). Seven pairs, thirteen orphans and the knitted
shapes are counted directly. :func:`score_win` enumerates *completions*: the multisets of kinds
the wildcards stand for that make a winning shape (without wildcards PyMahjongGB alone judges
the hand). Regular completions are built per group: a memoised search places the group's lowest
real tile left into a pair, pung or one of the three chows containing it, a wildcard filling each
missing tile (a real tile is used wherever one is left: the completed hand, not the assignment,
is what is scored); the groups' completions are then combined under the wildcard budget and one
pair, and leftover wildcards form one free pair or one free meld of any kind. Seven pairs pairs
every odd kind and adds free pairs; the special shapes fill their fixed patterns. Completions are
deduplicated as multisets and each is scored once (once per kind it holds when the winning tile
is a wildcard) — never 34^w substitutions.

Scoring (J4). Each completed hand is scored by PyMahjongGB (the 81 MCR fans), then adjusted:
明暗杠 (5) becomes 暗杠 (2) + 明杠 (1); 无财神 (2) is added when there is no wildcard in the hand
or every wildcard stands for its own face; 花牌 counts 1 per flower (``ctx.flowers``). 无番和 (8)
is counted only when no fan other than flowers is counted: with the default
``wucaishen_blocks_wufanhe=True`` a hand with 无财神 is never 无番和 (PyMahjongGB's 无番和 is
dropped, leaving 无财神 alone); with ``False`` 无番和 is decided ignoring 无财神, so both count.
PyMahjongGB's wait fans are named as in the seed: 边张, 坎张, 单钓将. The result is the best
completion: highest total fan, then most wildcards used as their own face, then the smallest
(stand-ins, winning tile) in kind order — a deterministic tie rule.

Choices where the rules are silent (documented here, tested in tests/mjenv/rules/test_joy_wildcards.py):

- A completed hand is scored as an ordinary hand (J4: "the maximum over all legal
  substitutions"): the wait fans 边张 / 坎张 / 单钓将 are judged on the substituted tiles, even
  though the real hand, holding a wildcard, waits on more tiles.
- The winning tile is whatever it stands for: a wildcard winning tile (self-drawn) is tried as
  every kind of its completion, so the wait fans and 九莲宝灯 see the best reading.
- 和绝张 (J9, ``ctx.fourth_tile``) describes the physical winning tile, so it is passed on only
  when the winning tile is not a wildcard or stands for its own face. PyMahjongGB itself also
  counts 和绝张 when three copies of the winning kind are in the player's own pong (visible), and
  drops it when the concealed hand holds another copy; both apply to substituted tiles too.
- ``after_kong`` counts (杠上开花) only on a self-drawn win — MCR has no fan for a discard after a
  kong; a self-drawn ``after_kong`` without a declared kong is refused (ValueError), as the
  blood battle's 杠上花 is; ``rob_kong`` (抢杠和)
  only when the winning kind appears nowhere else in the hand or melds. ``last_tile`` is
  妙手回春 when self-drawn and 海底捞月 on a discard.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations, product
from typing import Any, Optional, Sequence

import numpy as np
from MahjongGB import MahjongFanCalculator

from ..config import JoyMahjongRules
from ..melds import Meld, check_replacement_win
from ..tiles import name as tile_name
from .shapes import BoundedTable, Counts

N_KINDS = 34
# PyMahjongGB tile codes: W 万 (our m), B 饼 (our p), T 条 (our s), F winds, J1-J3 = 中发白.
_CODE = ([f"W{r}" for r in range(1, 10)] + [f"B{r}" for r in range(1, 10)]
         + [f"T{r}" for r in range(1, 10)] + ["F1", "F2", "F3", "F4", "J1", "J2", "J3"])
_ORPHANS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)
# The six knitted patterns: suit s takes the ranks r with (r - 1) % 3 == cls[s].
_KNITTED_CLASSES = tuple(permutations(range(3)))
_KNITTED = tuple(tuple(sorted(9 * s + cls[s] + 3 * j for s in range(3) for j in range(3)))
                 for cls in _KNITTED_CLASSES)


# ---------------------------------------------------------------- context and result


@dataclass(frozen=True)
class JoyContext:
    """Everything about a win that the tiles do not show (J9); winds are 0..3 = E S W N.

    ``self_drawn``: 自摸. ``after_kong``: the self-drawn tile is a kong replacement (杠上开花; a
    flower replacement is a plain self-draw). ``rob_kong``: won on another seat's added kong
    (抢杠和). ``last_tile``: the last tile of the wall — 妙手回春 when self-drawn, 海底捞月 on the
    last discard. ``fourth_tile``: 和绝张, the winning tile's other three copies are visible.
    ``flowers``: flowers set aside by the winner (花牌, 1 fan each).
    """

    self_drawn: bool = False
    after_kong: bool = False
    rob_kong: bool = False
    last_tile: bool = False
    fourth_tile: bool = False
    seat_wind: int = 0
    prevailing_wind: int = 0
    flowers: int = 0

    def __post_init__(self) -> None:
        if self.rob_kong and self.self_drawn:
            raise ValueError("rob_kong (抢杠和) wins on another seat's kong tile, "
                             "so it cannot also be self_drawn")
        for field in ("seat_wind", "prevailing_wind"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
                raise ValueError(f"{field} must be 0..3 (E S W N), got {value!r}")
        if isinstance(self.flowers, bool) or not isinstance(self.flowers, int) \
                or not 0 <= self.flowers <= 8:
            raise ValueError(f"flowers must be 0..8, got {self.flowers!r}")


@dataclass(frozen=True)
class JoyFan:
    """One fan of a win: Chinese name (the seed's), English name, fan per occurrence, count."""

    name: str
    name_en: str
    fan: int
    count: int = 1

    @property
    def total(self) -> int:
        """fan · count."""
        return self.fan * self.count


@dataclass(frozen=True)
class JoyScore:
    """The fans of a Joy Mahjong win and its base X (J4, J5)."""

    fans: tuple[JoyFan, ...]
    fan: int
    """Total fan: every item, 无财神 and 花牌 included."""
    fan_without_flowers: int
    """``fan`` less 花牌: what the eight_fan room's minimum looks at (J5)."""
    X: int
    """J5 base of one paying pair before bird (J8) and dealer (J7) doubling: popular ``fan``,
    eight_fan ``fan + 8``, no_fan 10."""
    substitution: tuple[tuple[int, int], ...]
    """(wild kind, kind it stands for) for each wildcard of the concealed hand, sorted; a
    wildcard used as itself maps to itself. Empty without wildcards."""
    win_as: int
    """The kind the winning tile counts as (itself unless it is a wildcard)."""
    shape: str
    """``regular``, ``seven_pairs``, ``thirteen_orphans``, ``knitted`` (全不靠 / 七星不靠) or
    ``knitted_straight`` (组合龙 + a meld + a pair): the reading that scored."""

    @property
    def total_fan(self) -> int:
        """Same as ``fan`` (the blood battle's field name)."""
        return self.fan

    @property
    def capped_fan(self) -> int:
        """Same as ``fan``: Joy Mahjong has no cap."""
        return self.fan

    @property
    def multiplier(self) -> int:
        """1: the bird and dealer factors (J7, J8) are table events, applied at settlement."""
        return 1

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: the blood battle's keys plus the Joy fields (tiles as names)."""
        return {
            "fans": [{"name": f.name, "name_en": f.name_en, "fan": f.fan, "count": f.count}
                     for f in self.fans],
            "total_fan": self.fan,
            "capped_fan": self.fan,
            "multiplier": 1,
            "X": self.X,
            "fan_without_flowers": self.fan_without_flowers,
            "shape": self.shape,
            "substitution": [[tile_name(w), tile_name(t)] for w, t in self.substitution],
            "win_as": tile_name(self.win_as),
        }


# Names that differ from PyMahjongGB's: the seed's wait fans (seed 000 #78-80).
_SEED_NAMES = {"独听・边张": "边张", "独听・嵌张": "坎张", "独听・单钓": "单钓将"}
_MINGANGANG = "明暗杠"
_WUFANHE = "无番和"
WU_CAI_SHEN = JoyFan("无财神", "No Wildcard", 2)
AN_GANG = ("暗杠", "Concealed Kong", 2)
MING_GANG = ("明杠", "Melded Kong", 1)


def flower_fan(n: int) -> JoyFan:
    """J4 花牌: one fan per flower."""
    return JoyFan("花牌", "Flower Tiles", 1, n)


def wildcard_of(indicator: int) -> int:
    """J2: the wildcard shown by an indicator: +1 in its suit (9→1), 东南西北中发白 cycling (白→东)."""
    if not 0 <= indicator < N_KINDS:
        raise ValueError(f"an indicator is a non-flower kind 0..33, got {indicator!r}")
    if indicator < 27:
        return indicator - indicator % 9 + (indicator % 9 + 1) % 9
    return 27 + (indicator - 27 + 1) % 7


def x_of(fan: int, rules: JoyMahjongRules) -> int:
    """J5: X of a win worth ``fan`` in the room of ``rules`` (before bird and dealer doubling)."""
    if rules.room == "eight_fan":
        return fan + 8
    if rules.room == "no_fan":
        return 10
    return fan


def is_legal_win(score: JoyScore, rules: JoyMahjongRules) -> bool:
    """J5: the eight_fan room needs at least 8 fan without flowers; other rooms take any win."""
    return rules.room != "eight_fan" or score.fan_without_flowers >= 8


# ---------------------------------------------------------------- group tables (can_win)

_INF = 99


class _Group:
    """What can_win needs from one group's real tiles (memoised per group key)."""

    __slots__ = ("need0", "delta", "odd", "orphans_ok", "pairs", "distinct_ok", "cls", "knit",
                 "knit_max")

    def __init__(self, need0: int, need2: int, odd: int, orphans_ok: bool, pairs: int,
                 distinct_ok: bool, cls: int, knit: tuple[int, ...]) -> None:
        self.need0 = need0  # fewest wildcards for melds only
        self.delta = need2 - need0  # extra wildcards when this group also holds the pair
        self.odd = odd  # kinds held an odd number of times
        self.orphans_ok = orphans_ok  # only terminals/honours, each at most twice
        self.pairs = pairs  # kinds held twice (or more)
        self.distinct_ok = distinct_ok  # every kind at most once
        self.cls = cls  # suits: knitted class of the held ranks, -1 none, 3 mixed
        self.knit = knit  # suits: kinds held of ranks 147, 258, 369
        self.knit_max = max(knit)


def _fewest_wild(h: Sequence[int], cap: Sequence[int], chows: bool) -> tuple[int, int]:
    """Fewest wildcards (_INF above 4) that turn a group's real tiles ``h`` into melds only, and
    into melds and one pair, using at most ``cap[k]`` tiles of kind k (real and stand-ins).

    A left-to-right dynamic programme over the kinds. A state is ``10·n1 + 2·n2 + pair``: the
    chows started one kind back (n1) and two kinds back (n2, both still need this kind), and
    whether the pair is placed; its value is the fewest wildcards so far (at most 4). Each kind
    takes the pending chows, new chows, at most one pung and the pair; every real tile is used
    and the shortfall is filled by wildcards (:func:`_wild_moves`). This is the minimum of
    placing the lowest real tile in every pair, pung or chow that contains it (wildcards filling
    the gaps), found without search."""
    size = len(h)
    last_chow = size - 2 if chows else 0  # chows start below this kind
    states = {0: 0}
    for i in range(size):
        moves = _wild_moves(h[i], cap[i], i < last_chow)
        nxt: dict[int, int] = {}
        get = nxt.get
        for state, cost in states.items():
            for key, added in moves[state]:
                v = cost + added
                if v > 4:
                    break  # moves come cheapest first
                old = get(key)
                if old is None or v < old:
                    nxt[key] = v
        if not nxt:
            return _INF, _INF
        states = nxt
    melds_only = states.get(0, _INF)
    return melds_only, min(states.get(1, _INF), melds_only + 2)


@lru_cache(maxsize=64)  # count 0-4, cap count-4, chows may start or not: 30 at most
def _wild_moves(c: int, top: int, new_chows: bool) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The moves of :func:`_fewest_wild` at a kind held ``c`` times (at most ``top`` tiles of it
    in use): for each state, every (next state, wildcards added), cheapest first. The kind
    takes the ``n1 + n2`` pending chows, the pair (once), a pung or not, and ``n`` new chows
    when they may start here; all ``c`` real tiles are used, wildcards fill the rest."""
    table = []
    for state in range(50):
        n1, n2, pair = state // 10, (state >> 1) % 5, state & 1
        moves = []
        for q in ((0,) if pair else (0, 1)):
            fixed0 = n1 + n2 + 2 * q
            carried = 2 * n1 + (pair | q)  # n1 becomes n2 in the next state
            for pung in (0, 3):
                fixed = fixed0 + pung
                if fixed > top:
                    break
                if new_chows:  # n new chows, using every real tile: fixed + n >= c
                    moves += [(10 * n + carried, fixed + n - c) for n in range(max(c - fixed, 0), top - fixed + 1)]
                elif fixed >= c:
                    moves.append((carried, fixed - c))
        table.append(tuple(sorted(moves, key=lambda m: m[1])))
    return tuple(table)


@lru_cache(maxsize=64)  # kind < 9, two sizes, chows or not
def _shapes_at(i: int, size: int, chows: bool) -> tuple[tuple[tuple[int, ...], bool], ...]:
    """The pair, pung and chows (kind offsets in a group) that contain kind ``i``."""
    out: list[tuple[tuple[int, ...], bool]] = [((i, i), True), ((i, i, i), False)]
    if chows:
        for start in (i, i - 1, i - 2):
            if 0 <= start and start + 2 < size:
                out.append(((start, start + 1, start + 2), False))
    return tuple(out)


def _take(h: list[int], room: list[int], kinds: Sequence[int]) -> Optional[list[int]]:
    """Use real tiles for ``kinds`` where left, wildcards elsewhere; the wildcard kinds or None."""
    wild: list[int] = []
    for n, k in enumerate(kinds):
        if h[k]:
            h[k] -= 1
        elif room[k]:
            room[k] -= 1
            wild.append(k)
        else:
            _give(h, room, kinds[:n], wild)
            return None
    return wild


def _give(h: list[int], room: list[int], kinds: Sequence[int], wild: list[int]) -> None:
    """Undo :func:`_take`."""
    for k in wild:
        room[k] += 1
    real = list(kinds)
    for k in wild:
        real.remove(k)
    for k in real:
        h[k] += 1


def _build_group(key: int, size: int, chows: bool) -> _Group:
    """A group's table entry; ``key`` holds the real counts (bytes 0..8) and the occupied
    counts beyond them (melds, knitted tiles: bytes 9..17)."""
    h = list(key.to_bytes(18, "little")[:size])
    extra = key.to_bytes(18, "little")[9:9 + size]
    need0, need2 = _fewest_wild(h, [max(h[k], 4 - extra[k]) for k in range(size)], chows)
    odd = sum(x & 1 for x in h)
    pairs = sum(1 for x in h if x >= 2)
    if chows:
        orphans_ok = all(h[k] == 0 for k in range(1, 8)) and max(h) <= 2
        ranks = [k for k in range(size) if h[k]]
        classes = {k % 3 for k in ranks}
        cls = -1 if not classes else (classes.pop() if len(classes) == 1 else 3)
        knit = tuple(sum(1 for k in ranks if k % 3 == c) for c in range(3))
    else:
        orphans_ok, cls, knit = max(h) <= 2, -1, (0, 0, 0)
    return _Group(need0, need2, odd, orphans_ok, pairs, max(h) <= 1, cls, knit)


_SUIT_TABLE = BoundedTable()  # group key (real and elsewhere-held counts) -> _Group
_HONOUR_TABLE = BoundedTable()
_SPANS = ((0, 9), (9, 18), (18, 27))


_LOW_BITS = int.from_bytes(b"\x01" * 9, "little")  # bit 0 of each of 9 bytes


def _group(data: bytes | bytearray, extra: Optional[bytes], lo: int, hi: int) -> _Group:
    """The table entry of kinds lo..hi-1 (suits of 9, honours of 7).

    Copies held elsewhere (``extra``) only count for kinds a wildcard could stand for in a
    shape with a real tile — within two ranks of a held tile (suits) or held (honours); the
    others are dropped from the key, so hands with melds share more entries."""
    key = int.from_bytes(data[lo:hi], "little")
    if extra is not None:
        ex = int.from_bytes(extra[lo:hi], "little")
        if ex:
            held = (key | key >> 1 | key >> 2) & _LOW_BITS  # bit 0 set in each byte with tiles (<= 7)
            if hi - lo == 9:
                held = (held | held << 8 | held << 16 | held >> 8 | held >> 16) & _LOW_BITS
            key |= (ex & held * 0xFF) << 72
    table = _SUIT_TABLE if hi - lo == 9 else _HONOUR_TABLE
    g = table.get(key)
    if g is None:
        g = table.put(key, _build_group(key, hi - lo, hi - lo == 9))
    return g


def _regular_ok(gs: Sequence[_Group], w: int) -> bool:
    """Some group takes the pair and the wildcards cover every group's need."""
    g0, g1, g2, g3 = gs
    return g0.need0 + g1.need0 + g2.need0 + g3.need0 + min(g0.delta, g1.delta, g2.delta,
                                                          g3.delta) <= w


def _as_bytes(concealed: Counts) -> bytearray:
    """A mutable byte copy of 34 counts."""
    if isinstance(concealed, np.ndarray) and concealed.dtype.itemsize == 1:
        data = bytearray(concealed.tobytes())
    else:
        data = bytearray(concealed.tolist() if isinstance(concealed, np.ndarray) else concealed)
    if len(data) != N_KINDS:
        raise ValueError(f"expected a count array of {N_KINDS} kinds, got {len(data)}")
    return data


def can_win(concealed: Counts, n_melds: int, wild: Optional[int],
            meld_counts: Optional[Counts] = None) -> bool:
    """J2: whether the concealed tiles (winning tile included) complete a winning shape.

    ``wild`` is the wildcard kind (None: no wildcards); ``meld_counts`` (34 counts of the
    declared melds' tiles) lets the check respect the fifth-copy rule for tiles the player has
    melded; without it only the concealed copies are counted.
    """
    data = _as_bytes(concealed)
    w = 0
    if wild is not None:
        w = data[wild]
        data[wild] = 0
    if sum(data) + w != 14 - 3 * n_melds:
        raise ValueError(f"can_win needs {14 - 3 * n_melds} concealed tiles with {n_melds} "
                         f"melds, got {sum(data) + w}")
    if w > 4:  # the group tables stop at four stand-ins
        raise ValueError(f"can_win takes at most four wildcards, got {w}; to ask whether any "
                         "tile completes a hand use can_complete")
    extra = None
    if meld_counts is not None:
        extra = bytes(_as_bytes(meld_counts))
        if not any(extra):
            extra = None
    if extra is None:  # the hot path: four dict lookups
        get, from_bytes = _SUIT_TABLE.get, int.from_bytes
        g0 = get(from_bytes(data[0:9], "little")) or _group(data, None, 0, 9)
        g1 = get(from_bytes(data[9:18], "little")) or _group(data, None, 9, 18)
        g2 = get(from_bytes(data[18:27], "little")) or _group(data, None, 18, 27)
        g3 = _HONOUR_TABLE.get(from_bytes(data[27:34], "little")) or _group(data, None, 27, 34)
    else:
        g0, g1, g2, g3 = (_group(data, extra, 0, 9), _group(data, extra, 9, 18),
                          _group(data, extra, 18, 27), _group(data, extra, 27, 34))
    gs = (g0, g1, g2, g3)
    if g0.need0 + g1.need0 + g2.need0 + g3.need0 + min(g0.delta, g1.delta, g2.delta,
                                                       g3.delta) <= w:
        return True
    if n_melds > 1:
        return False
    if n_melds == 0:
        if g0.odd + g1.odd + g2.odd + g3.odd <= w:
            return True  # 七对: a wildcard pairs each odd kind, the rest pair up
        if (g0.orphans_ok and g1.orphans_ok and g2.orphans_ok and g3.orphans_ok
                and g0.pairs + g1.pairs + g2.pairs + g3.pairs <= 1):
            return True  # 十三幺: the wildcards fill the missing orphans (and the pair)
        if (g0.distinct_ok and g1.distinct_ok and g2.distinct_ok and g3.distinct_ok
                and _knitted_suits_ok(gs)):
            return True  # 全不靠 / 七星不靠: 16 slots, 14 - w held, so w always fit
    if 9 - g0.knit_max - g1.knit_max - g2.knit_max > w:
        return False  # too few knitted tiles for any 组合龙
    return _knitted_straight_ok(data, extra, gs, w)


def can_complete(concealed: Counts, n_melds: int, wild: Optional[int],
                 meld_counts: Optional[Counts] = None) -> bool:
    """J2: whether some tile completes the 3n+1 concealed tiles into a win (the engine's
    pre-check of every win test).

    A wildcard may stand for any tile (within the fifth-copy limit a real tile also obeys), so
    the hand wins on some tile exactly when it wins with one more wildcard. With all four
    wildcards held there is no fifth to add: each other kind is tried as the winning tile.
    """
    data = _as_bytes(concealed)
    if wild is not None and data[wild] < 4:
        data[wild] += 1
        return can_win(data, n_melds, wild, meld_counts)
    melded = _as_bytes(meld_counts) if meld_counts is not None else bytearray(N_KINDS)
    for k in range(N_KINDS):
        if k != wild and data[k] + melded[k] < 4:
            data[k] += 1
            wins = can_win(data, n_melds, wild, meld_counts)
            data[k] -= 1
            if wins:
                return True
    return False


def _knitted_suits_ok(gs: Sequence[_Group]) -> bool:
    """The held suited ranks fit one knitted pattern (one class per suit, classes distinct)."""
    classes = [g.cls for g in gs[:3] if g.cls != -1]
    return 3 not in classes and len(set(classes)) == len(classes)


def _knitted_straight_ok(data: bytearray, extra: Optional[bytes], gs: Sequence[_Group],
                         w: int) -> bool:
    """组合龙: some knitted pattern's 9 tiles (wildcards filling gaps) plus melds and a pair."""
    for cls, kinds in zip(_KNITTED_CLASSES, _KNITTED):
        missing = 9 - gs[0].knit[cls[0]] - gs[1].knit[cls[1]] - gs[2].knit[cls[2]]
        if missing > w:
            continue
        rest = bytearray(data)
        occupied = bytearray(extra) if extra is not None else bytearray(N_KINDS)
        blocked = False
        for k in kinds:
            if rest[k]:
                rest[k] -= 1
            elif data[k] + occupied[k] >= 4:
                blocked = True  # the wildcard would be a fifth copy
            occupied[k] += 1
        if blocked:
            continue
        parts = [_group(rest, bytes(occupied), lo, hi) for lo, hi in _SPANS]
        parts.append(gs[3] if extra is None else _group(rest, bytes(occupied), 27, 34))
        if _regular_ok(parts, w - missing):
            return True
    return False


# ---------------------------------------------------------------- completions (score_win)


_GROUP_SPANS = ((0, 9, True), (9, 9, True), (18, 9, True), (27, 7, False))


@lru_cache(maxsize=1 << 16)
def _group_fills(key: int, size: int, chows: bool) -> tuple[tuple[int, bool, tuple[int, ...]], ...]:
    """Every completion of one group's real tiles into melds and at most one pair using at most
    four wildcards: (wildcards used, pair?, stand-ins as group offsets). ``key`` holds the real
    counts (bytes 0..8) and the copies held elsewhere (melds, knitted tiles: bytes 9..17)."""
    raw = key.to_bytes(18, "little")
    h = list(raw[:size])
    room = [max(0, 4 - h[k] - raw[9 + k]) for k in range(size)]
    out: set[tuple[int, bool, tuple[int, ...]]] = set()
    _fill_group(h, room, chows, 0, False, [], out)
    return tuple(sorted(out))


def _fill_group(h: list[int], room: list[int], chows: bool, i: int, pair: bool,
                added: list[int], out: set[tuple[int, bool, tuple[int, ...]]]) -> None:
    """Place the lowest real tile left in a pair, pung or chow (wildcards fill the gaps)."""
    size = len(h)
    while i < size and not h[i]:
        i += 1
    if i == size:
        out.add((len(added), pair, tuple(sorted(added))))
        return
    for kinds, is_pair in _shapes_at(i, size, chows):
        if is_pair and pair:
            continue
        wild = _take(h, room, kinds)
        if wild is None:
            continue
        if len(added) + len(wild) <= 4:
            _fill_group(h, room, chows, i, pair or is_pair, added + wild, out)
        _give(h, room, kinds, wild)


def _regular_fills(c: list[int], extra: list[int], w: int, prefix: tuple[int, ...],
                   out: set[tuple[int, ...]]) -> None:
    """Add to ``out`` every multiset of stand-ins (after ``prefix``) completing the real tiles
    ``c`` into melds and one pair with ``w`` wildcards; ``extra`` counts copies held elsewhere.

    Groups complete independently (memoised per group); the wildcards left over form one free
    pair or one free meld of any kind with room.
    """
    options = []
    for lo, size, chows in _GROUP_SPANS:
        key = (int.from_bytes(bytes(c[lo:lo + size]), "little")
               | int.from_bytes(bytes(extra[lo:lo + size]), "little") << 72)
        opts = [(k, pair, tuple(lo + x for x in fill))
                for k, pair, fill in _group_fills(key, size, chows) if k <= w]
        if not opts:
            return
        options.append(opts)
    for combo in product(*options):
        used = combo[0][0] + combo[1][0] + combo[2][0] + combo[3][0]
        pairs = combo[0][1] + combo[1][1] + combo[2][1] + combo[3][1]
        left = w - used
        if pairs > 1 or left < 0:
            continue
        fills = prefix + combo[0][2] + combo[1][2] + combo[2][2] + combo[3][2]
        if left == 0:
            if pairs:
                out.add(tuple(sorted(fills)))
            continue
        room = [4 - c[k] - extra[k] for k in range(N_KINDS)]
        for k in fills:
            room[k] -= 1
        _free_groups(room, left, not pairs, fills, out)


_FREE_CHOWS = tuple(s + r for s in (0, 9, 18) for r in range(7))


def _free_groups(room: list[int], w: int, pair_left: bool, fills: tuple[int, ...],
                 out: set[tuple[int, ...]]) -> None:
    """The real tiles are placed: the ``w`` wildcards left form one free pair or free meld."""
    if w == 2 and pair_left:
        for t in range(N_KINDS):
            if room[t] >= 2:
                out.add(tuple(sorted(fills + (t, t))))
    elif w == 3 and not pair_left:
        for t in range(N_KINDS):
            if room[t] >= 3:
                out.add(tuple(sorted(fills + (t, t, t))))
        for t in _FREE_CHOWS:
            if room[t] and room[t + 1] and room[t + 2]:
                out.add(tuple(sorted(fills + (t, t + 1, t + 2))))


def _seven_pairs_fills(c: list[int], w: int, out: set[tuple[int, ...]]) -> None:
    """七对: a wildcard for each odd kind, the rest in free pairs (a four is two pairs)."""
    odd = [k for k in range(N_KINDS) if c[k] & 1]
    left = w - len(odd)
    if left < 0:
        return
    held = [c[k] + (k in odd) for k in range(N_KINDS)]
    if left == 0:
        out.add(tuple(odd))
        return
    if left == 2:
        for t in range(N_KINDS):
            if held[t] <= 2:
                out.add(tuple(sorted(odd + [t, t])))
        return
    for a in range(N_KINDS):  # left == 4
        for b in range(a, N_KINDS):
            if (held[a] <= 0) if a == b else (held[a] <= 2 and held[b] <= 2):
                out.add(tuple(sorted(odd + [a, a, b, b])))


def _orphans_fills(c: list[int], w: int, out: set[tuple[int, ...]]) -> None:
    """十三幺: the missing orphans, plus the pair's second tile if none is held twice."""
    if any(c[k] for k in range(N_KINDS) if k not in _ORPHANS) or max(c) > 2:
        return
    missing = [k for k in _ORPHANS if not c[k]]
    doubles = sum(1 for k in _ORPHANS if c[k] == 2)
    if doubles > 1:
        return
    if doubles == 1 and w == len(missing):
        out.add(tuple(missing))
    elif doubles == 0 and w == len(missing) + 1:
        for k in _ORPHANS:
            out.add(tuple(sorted(missing + [k])))


def _knitted_fills(c: list[int], w: int, out: set[tuple[int, ...]]) -> None:
    """全不靠 / 七星不靠: 14 distinct tiles of one knitted pattern and the honours."""
    if max(c) > 1:
        return
    held = {k for k in range(N_KINDS) if c[k]}
    for kinds in _KNITTED:
        slots = set(kinds) | set(range(27, 34))
        if held <= slots:
            for pick in combinations(sorted(slots - held), w):
                out.add(pick)


def _knitted_straight_fills(c: list[int], extra: list[int], w: int,
                            out: set[tuple[int, ...]]) -> None:
    """组合龙: a knitted pattern's 9 tiles (real, or wildcards with room), then melds and a pair."""
    for kinds in _KNITTED:
        rest, held, wild = c[:], extra[:], []
        for k in kinds:
            if rest[k]:
                rest[k] -= 1
            elif c[k] + held[k] >= 4:
                break  # a wildcard here would be a fifth copy
            else:
                wild.append(k)
            held[k] += 1
        else:
            if len(wild) <= w:
                _regular_fills(rest, held, w - len(wild), tuple(wild), out)


def completions(concealed: Counts, melds: Sequence[Meld],
                wild: Optional[int]) -> set[tuple[int, ...]]:
    """Every multiset (sorted tuple) of kinds the wildcards can stand for in a winning shape.

    ``{()}`` for a complete wildcard-free hand, the empty set when nothing completes it.
    """
    c = list(_as_bytes(concealed))
    w = 0
    if wild is not None:
        w, c[wild] = c[wild], 0
    extra = [0] * N_KINDS
    for m in melds:
        for k in m.kinds():
            extra[k] += 1
    out: set[tuple[int, ...]] = set()
    _regular_fills(c, extra, w, (), out)
    if not melds:
        _seven_pairs_fills(c, w, out)
        _orphans_fills(c, w, out)
        _knitted_fills(c, w, out)
    if len(melds) <= 1:
        _knitted_straight_fills(c, extra, w, out)
    return out


# ---------------------------------------------------------------- scoring


def _pack(m: Meld) -> tuple[str, str, int]:
    """A meld as a PyMahjongGB pack; offer 0 marks the concealed kong, 1 any claimed meld."""
    if m.kind == "chow":
        return ("CHI", _CODE[m.tile + 1], 1)
    if m.kind == "pong":
        return ("PENG", _CODE[m.tile], 1)
    return ("GANG", _CODE[m.tile], 0 if m.kind == "ankan" else 1)


Raw = tuple[tuple[int, int, str, str], ...]


def mcr_fans(hand: Counts, melds: Sequence[Meld], win_tile: int, ctx: JoyContext) -> Raw:
    """PyMahjongGB's verbose fans (value, count, name, English name) of a wildcard-free hand.

    ``hand`` holds the concealed tiles with the winning tile; flowers are not passed (J4 adds
    them). Raises ValueError when PyMahjongGB finds no win.
    """
    counts = list(_as_bytes(hand))
    counts[win_tile] -= 1
    standing = tuple(_CODE[k] for k in range(N_KINDS) for _ in range(counts[k]))
    return _call(tuple(_pack(m) for m in melds), standing, win_tile, ctx, ctx.fourth_tile)


def _call(packs: tuple, standing: tuple, win_as: int, ctx: JoyContext, fourth: bool) -> Raw:
    """One PyMahjongGB call; its TypeError (bad input or no win) becomes a ValueError."""
    try:
        return MahjongFanCalculator(
            packs, standing, _CODE[win_as], 0, ctx.self_drawn, fourth,
            (ctx.after_kong and ctx.self_drawn) or ctx.rob_kong, ctx.last_tile,
            ctx.seat_wind, ctx.prevailing_wind, True)
    except TypeError as exc:
        raise ValueError(f"PyMahjongGB rejects the hand: {exc}") from exc


def adjust(raw: Raw, wucaishen: bool, flowers: int, rules: JoyMahjongRules) -> tuple[JoyFan, ...]:
    """J4: PyMahjongGB's fans → the Joy fan list (明暗杠 split, 无财神, 无番和 rule, 花牌)."""
    fans: list[JoyFan] = []
    for value, count, name, name_en in raw:
        if name == _MINGANGANG:
            fans += [JoyFan(*AN_GANG), JoyFan(*MING_GANG)]
        elif name == _WUFANHE and wucaishen and rules.wucaishen_blocks_wufanhe:
            continue  # 无财神 is a fan, so the hand is not fan-less
        elif name != "花牌":
            fans.append(JoyFan(_SEED_NAMES.get(name, name), name_en, value, count))
    if wucaishen:
        fans.append(WU_CAI_SHEN)
    fans.sort(key=lambda f: -f.fan)  # stable: PyMahjongGB's (the seed's) order within a value
    if flowers:
        fans.append(flower_fan(flowers))
    return tuple(fans)


def _shape(raw: Raw) -> str:
    """The shape PyMahjongGB scored."""
    names = {r[2] for r in raw}
    if "十三幺" in names:
        return "thirteen_orphans"
    if names & {"全不靠", "七星不靠"}:
        return "knitted"
    if "组合龙" in names:
        return "knitted_straight"
    if names & {"七对", "连七对"}:
        return "seven_pairs"
    return "regular"


def score_completion(concealed: Counts, melds: Sequence[Meld], win_tile: int, wild: Optional[int],
                     stand_ins: Sequence[int], win_as: int, ctx: JoyContext,
                     rules: JoyMahjongRules) -> JoyScore:
    """J4 score of one substitution: the wildcards stand for ``stand_ins`` (one kind each, any
    order) and the winning tile counts as ``win_as`` (``win_tile`` itself unless it is wild).

    No shape or fifth-copy check beyond PyMahjongGB's: ValueError if it finds no win.
    """
    c = list(_as_bytes(concealed))
    w = c[wild] if wild is not None else 0
    if len(stand_ins) != w:
        raise ValueError(f"{w} wildcards but {len(stand_ins)} stand-ins")
    if wild is not None:
        c[wild] = 0
    for k in stand_ins:
        c[k] += 1
    if win_tile != wild and win_as != win_tile:
        raise ValueError("only a wildcard winning tile can count as another kind")
    own_face = sum(1 for k in stand_ins if k == wild)
    fourth = ctx.fourth_tile and (win_tile != wild or win_as == wild)
    counts = c[:]
    counts[win_as] -= 1
    standing = tuple(_CODE[k] for k in range(N_KINDS) for _ in range(counts[k]))
    raw = _call(tuple(_pack(m) for m in melds), standing, win_as, ctx, fourth)
    return _result(raw, own_face == w, tuple(sorted(stand_ins)), wild, win_as, ctx, rules)


def _result(raw: Raw, wucaishen: bool, stand_ins: tuple[int, ...], wild: Optional[int],
            win_as: int, ctx: JoyContext, rules: JoyMahjongRules) -> JoyScore:
    """Build the JoyScore of one scored completion."""
    fans = adjust(raw, wucaishen, ctx.flowers, rules)
    total = sum(f.total for f in fans)
    subst = tuple((wild, k) for k in stand_ins) if wild is not None else ()
    return JoyScore(fans, total, total - ctx.flowers, x_of(total, rules), subst, win_as,
                    _shape(raw))


def _quick_total(raw: Raw, wucaishen: bool, rules: JoyMahjongRules) -> int:
    """The fan total ``adjust`` would give, flowers excluded (the search's hot loop)."""
    total = 0
    for value, count, name, _ in raw:
        if name == _MINGANGANG:
            total += 3
        elif not (name == _WUFANHE and wucaishen and rules.wucaishen_blocks_wufanhe):
            total += value * count
    return total + 2 * wucaishen


def check_hand(concealed: Counts, melds: Sequence[Meld], win_tile: int, wild: Optional[int],
               ctx: JoyContext) -> list[int]:
    """Validate a hand for scoring (J1, J2); returns its counts. ValueError names the fault."""
    c = list(_as_bytes(concealed))
    if sum(c) + 3 * len(melds) != 14:
        raise ValueError(f"wrong tile count: {sum(c)} concealed + 3 x {len(melds)} melds, "
                         "expected 14 (a kong counts 3)")
    if not 0 <= win_tile < N_KINDS or not c[win_tile]:
        raise ValueError(f"the winning tile {win_tile!r} is not in the concealed hand")
    if wild is not None and not 0 <= wild < N_KINDS:
        raise ValueError(f"the wildcard must be a non-flower kind 0..33, got {wild!r}")
    owned = c[:]
    for m in melds:
        for k in m.kinds():
            owned[k] += 1
            if k == wild:
                raise ValueError(f"a wildcard ({tile_name(wild)}) never takes part in a meld "
                                 f"(J2): {m}")
    extra = [tile_name(k) for k in range(N_KINDS) if owned[k] > 4]
    if extra:
        raise ValueError(f"more than four copies of {', '.join(extra)} (hand and melds together)")
    check_replacement_win(melds, ctx.self_drawn, ctx.after_kong, "杠上开花")
    if win_tile == wild and not ctx.self_drawn:
        raise ValueError("a discarded wildcard cannot be claimed, not even to win (J2): a "
                         "wildcard winning tile must be self_drawn")
    return c


def score_win(concealed: Counts, melds: Sequence[Meld], win_tile: int, wild: Optional[int],
              ctx: JoyContext, rules: JoyMahjongRules) -> Optional[JoyScore]:
    """J2, J4, J5: the best score of a win over every legal wildcard substitution; None if no
    substitution makes a winning shape. ``concealed`` includes ``win_tile``; ``wild`` is the
    wildcard kind (None: no wildcards). The eight_fan minimum is :func:`is_legal_win`'s job.
    Malformed input (counts, fifth copies, a wildcard in a meld, a claimed wildcard, 杠上开花
    without a kong) raises
    ValueError.
    """
    melds = tuple(melds)
    c = check_hand(concealed, melds, win_tile, wild, ctx)
    w = c[wild] if wild is not None else 0
    # Without wildcards PyMahjongGB judges the shape itself (its shapes are J2's).
    fills = completions(c, melds, wild) if w else {()}
    if not fills:
        return None
    wild_win = win_tile == wild
    real = c[:]
    if wild is not None:
        real[wild] = 0
    if not wild_win:
        real[win_tile] -= 1
    base = [_CODE[k] for k in range(N_KINDS) for _ in range(real[k])]
    packs = tuple(_pack(m) for m in melds)
    fourth_real = ctx.fourth_tile and not wild_win
    best: Optional[tuple[tuple[int, int, tuple[int, ...], int], Raw]] = None
    for fill in fills:
        own_face = fill.count(wild) if w else 0
        wucaishen = own_face == w
        for win_as in (sorted(set(fill)) if wild_win else (win_tile,)):
            if wild_win:
                rest = list(fill)
                rest.remove(win_as)
                fourth = ctx.fourth_tile and win_as == wild
            else:
                rest, fourth = fill, fourth_real
            standing = tuple(base + [_CODE[k] for k in rest])
            try:
                raw = MahjongFanCalculator(
                    packs, standing, _CODE[win_as], 0, ctx.self_drawn, fourth,
                    (ctx.after_kong and ctx.self_drawn) or ctx.rob_kong, ctx.last_tile,
                    ctx.seat_wind, ctx.prevailing_wind, True)
            except TypeError as exc:
                if not w and str(exc) == "ERROR_NOT_WIN":
                    return None
                # With wildcards every completion is a winning shape by construction.
                raise RuntimeError(f"PyMahjongGB rejects a completion {fill} of "
                                   f"{c} with melds {melds}: {exc}") from exc
            # Highest fan, then most wildcards as their own face, then the smallest stand-ins.
            key = (_quick_total(raw, wucaishen, rules), own_face,
                   tuple(-k for k in fill), -win_as)
            if best is None or key > best[0]:
                best = (key, raw)
    assert best is not None
    (_, own_face, neg_fill, neg_win), raw = best
    stand_ins = tuple(-k for k in neg_fill)
    return _result(raw, own_face == w, stand_ins, wild, -neg_win, ctx, rules)
