"""Sichuan blood battle (血战到底) scoring: fan table, extras, cap and points (docs/rules-blood-battle.md
S7-S11, S15).

Pure functions over a 34-slot count array of concealed tiles plus the declared melds
(:class:`mjenv.melds.Meld`); the caller passes every piece of win context explicitly in a
:class:`WinContext` and the rule options in a :class:`mjenv.config.BloodBattleRules`.

Base patterns (S8) do not stack: the hand is read every way it can be (every regular
decomposition, and seven pairs when concealed) and the reading worth the most fan is kept.
Extras (S9) are added on top, the total is capped (S10), and the points of one paying seat
are ``X = base_points · 2^(capped − 1)`` (+ ``base_points`` for the qq self-draw bonus, S11).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ..config import BloodBattleRules
from ..melds import Meld, check_replacement_win
from .shapes import Counts, Decomposition, decompositions, is_seven_pairs, waits


@dataclass(frozen=True)
class Fan:
    """One scoring item: the seed's Chinese name, an English name, and its fan."""

    name: str
    name_en: str
    fan: int


# S8 base patterns. Seed 004 mislabels two examples; S8 keeps the definitions.
PING_HU = Fan("平胡", "plain win", 1)
DUI_DUI_HU = Fan("对对胡", "all pungs", 2)
QING_YI_SE = Fan("清一色", "full flush", 3)
DAI_YAO_JIU = Fan("带幺九", "terminal in every set", 3)
QI_DUI = Fan("七对", "seven pairs", 3)
QING_DUI = Fan("清对", "full flush all pungs", 4)
JIANG_DUI = Fan("将对", "2-5-8 all pungs", 4)
LONG_QI_DUI = Fan("龙七对", "dragon seven pairs", 5)
QING_QI_DUI = Fan("清七对", "full flush seven pairs", 5)
QING_YAO_JIU = Fan("清幺九", "full flush terminal in every set", 5)
TIAN_HU = Fan("天胡", "heavenly win", 6)
DI_HU = Fan("地胡", "earthly win", 6)
QING_LONG_QI_DUI = Fan("清龙七对", "full flush dragon seven pairs", 6)
BASE_PATTERNS = (PING_HU, DUI_DUI_HU, QING_YI_SE, DAI_YAO_JIU, QI_DUI, QING_DUI, JIANG_DUI,
                 LONG_QI_DUI, QING_QI_DUI, QING_YAO_JIU, TIAN_HU, DI_HU, QING_LONG_QI_DUI)

# S9 extras (根 is built with its count).
GANG_SHANG_HUA = Fan("杠上花", "win on kong replacement", 1)
GANG_SHANG_PAO = Fan("杠上炮", "win on discard after kong", 1)
QIANG_GANG_HU = Fan("抢杠胡", "robbing the kong", 1)
ZI_MO_FAN = Fan("自摸加番", "self-draw bonus fan", 1)
ZI_MO_DI = Fan("自摸加底", "self-draw bonus base", 0)


def root(n: int) -> Fan:
    """S9: the 根 item for ``n`` roots."""
    return Fan("根", "root", n)


@dataclass(frozen=True)
class WinContext:
    """Everything about a win that the tiles do not show (S8, S9).

    ``after_kong``: the winner self-draws a kong replacement (杠上花), or wins on the discard
    made right after the discarder's kong (杠上炮). ``first_turn``: 天胡 with ``dealer``, else
    地胡 (the engine decides when it applies). ``last_tile`` is accepted for completeness but
    adds no fan: S8-S9 (and both seeds) have no 海底 fan.
    """

    self_drawn: bool = False
    after_kong: bool = False
    rob_kong: bool = False
    first_turn: bool = False
    dealer: bool = False
    last_tile: bool = False

    def __post_init__(self) -> None:
        if self.rob_kong and self.self_drawn:
            raise ValueError("rob_kong (抢杠胡) wins on another seat's kong tile, "
                             "so it cannot also be self_drawn")
        if self.first_turn and self.dealer and not self.self_drawn:
            raise ValueError("first_turn with dealer is 天胡, a win on the dealer's initial "
                             "14 tiles, so self_drawn must be set")


@dataclass(frozen=True)
class SichuanScore:
    """The fan items of a win and the points of one paying seat (S8-S11)."""

    fans: tuple[Fan, ...]
    total_fan: int
    """Sum of the items, uncapped."""
    capped_fan: int
    """min(total_fan, cap_fan) (S10)."""
    multiplier: int
    """2^(capped_fan-1), +1 for the add_base self-draw bonus (S9, S11)."""
    X: int
    """base_points · multiplier: what one paying seat pays (S11)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return {
            "fans": [{"name": f.name, "name_en": f.name_en, "fan": f.fan} for f in self.fans],
            "total_fan": self.total_fan,
            "capped_fan": self.capped_fan,
            "multiplier": self.multiplier,
            "X": self.X,
        }


def _counts(concealed: Counts) -> list[int]:
    """Concealed counts as a 34-int list."""
    c = concealed.tolist() if isinstance(concealed, np.ndarray) else [int(x) for x in concealed]
    if len(c) != 34:
        raise ValueError(f"expected a count array of 34 kinds, got {len(c)}")
    return c


def _suits(c: list[int], melds: Sequence[Meld]) -> set[int]:
    """Suits (0 m, 1 p, 2 s) present among concealed tiles and melds."""
    found = {s for s in range(3) if any(c[9 * s:9 * s + 9])}
    found.update(m.tile // 9 for m in melds)
    return found


def is_flower_pig(concealed: Counts, melds: Sequence[Meld] = ()) -> bool:
    """S15.1 花猪: the player holds tiles of all three suits (declared melds count)."""
    return len(_suits(_counts(concealed), melds)) == 3


def gen_count(concealed: Counts, melds: Sequence[Meld], rules: BloodBattleRules) -> int:
    """S9 根: kinds the player owns all four of (kongs, four in hand, pong + 4th in hand).

    With ``rules.gen_counts_kongs`` false declared kongs do not count; every undeclared four
    still does, a 碰 plus its 4th tile in hand included (seed 004: 四张同样的牌不作杠算1根).
    """
    c = _counts(concealed)
    for m in melds:
        if rules.gen_counts_kongs or not m.is_kong:
            for k in m.kinds():
                c[k] += 1
    return sum(1 for x in c if x >= 4)


def _is_terminal(kind: int) -> bool:
    """Rank 1 or 9."""
    return kind % 9 in (0, 8)


def _regular_pattern(d: Decomposition, melds: Sequence[Meld], flush: bool) -> Fan:
    """S8: the best base pattern of one regular reading (declared melds are pungs/kongs)."""
    all_pungs = all(t == "pung" for t, _ in d.melds)
    # 带幺九: a pung/pair of rank 1 or 9, a chow 123 or 789 (lowest rank 1 or 7).
    yao_jiu = (_is_terminal(d.pair)
               and all(_is_terminal(k) or (t == "chow" and k % 9 == 6) for t, k in d.melds)
               and all(_is_terminal(m.tile) for m in melds))
    if flush and yao_jiu:
        return QING_YAO_JIU
    if flush and all_pungs:
        return QING_DUI
    if all_pungs and all(k % 9 in (1, 4, 7) for k in
                         [d.pair, *(k for _, k in d.melds), *(m.tile for m in melds)]):
        return JIANG_DUI
    if flush:
        return QING_YI_SE
    if yao_jiu:
        return DAI_YAO_JIU
    if all_pungs:
        return DUI_DUI_HU
    return PING_HU


def score_win(concealed: Counts, melds: Sequence[Meld], ctx: WinContext,
              rules: BloodBattleRules, void: Optional[int] = None) -> Optional[SichuanScore]:
    """S7-S11: the score of a win, or None when it is not a legal blood-battle win.

    ``concealed`` holds the concealed tiles including the winning tile; ``void`` is the
    seat's 定缺 suit (0 m, 1 p, 2 s). Not a win: no regular/seven-pairs shape, a tile of the
    void suit, three suits, honours, a chow meld (S3), seven pairs with melds, or a tile
    count that is not 14 (a kong counts 3). Raises ValueError for 杠上花 (``after_kong`` and
    ``self_drawn``) without a declared kong.
    """
    c = _counts(concealed)
    melds = tuple(melds)
    check_replacement_win(melds, ctx.self_drawn, ctx.after_kong, "杠上花")
    if sum(c) + 3 * len(melds) != 14 or any(c[27:]):
        return None
    if any(m.kind == "chow" or m.tile >= 27 for m in melds):
        return None
    suits = _suits(c, melds)
    if len(suits) == 3 or (void is not None and void in suits):
        return None
    flush = len(suits) == 1
    # (pattern, 根 adjustment): 龙七对 / 清龙七对 count one 根 fewer (S8).
    readings = [(_regular_pattern(d, melds, flush), 0) for d in decompositions(c)]
    if not melds and is_seven_pairs(c):
        dragon = 4 in c
        if flush:
            readings.append((QING_LONG_QI_DUI, -1) if dragon else (QING_QI_DUI, 0))
        else:
            readings.append((LONG_QI_DUI, -1) if dragon else (QI_DUI, 0))
    if not readings:
        return None
    if ctx.first_turn:
        readings.append((TIAN_HU if ctx.dealer else DI_HU, 0))
    # The reading worth the most in total; on a tie the larger base pattern names the hand.
    base, adjust = max(readings, key=lambda r: (r[0].fan + r[1], r[0].fan))
    roots = gen_count(c, melds, rules) + adjust
    items = [base]
    if roots > 0:
        items.append(root(roots))
    if ctx.after_kong:
        items.append(GANG_SHANG_HUA if ctx.self_drawn else GANG_SHANG_PAO)
    if ctx.rob_kong:
        items.append(QIANG_GANG_HU)
    bonus_base = 0
    if ctx.self_drawn and rules.self_draw_bonus == "add_fan":
        items.append(ZI_MO_FAN)
    elif ctx.self_drawn and rules.self_draw_bonus == "add_base":
        items.append(ZI_MO_DI)
        bonus_base = 1
    total = sum(f.fan for f in items)
    capped = min(total, rules.cap_fan)
    multiplier = 2 ** (capped - 1) + bonus_base
    return SichuanScore(tuple(items), total, capped, multiplier, rules.base_points * multiplier)


def ready_points(concealed13: Counts, melds: Sequence[Meld], rules: BloodBattleRules,
                 void: Optional[int] = None) -> int:
    """S15.2 查大叫: the largest X over all winning tiles (plain discard win, 根 included, capped).

    0 when not ready. A winning tile counts even if all its copies are visible, but never a
    fifth copy of a kind the player already owns four of.
    """
    c = _counts(concealed13)
    owned = c[:]
    for m in melds:
        for k in m.kinds():
            owned[k] += 1
    plain = WinContext()
    best = 0
    for t in waits(c):
        if owned[t] >= 4:
            continue
        c[t] += 1
        result = score_win(c, melds, plain, rules, void)
        c[t] -= 1
        if result is not None and result.X > best:
            best = result.X
    return best



def _discards(c: list[int]) -> Iterator[list[int]]:
    """``c`` with each held kind taken out once in turn (restored after each)."""
    for k in range(len(c)):
        if c[k]:
            c[k] -= 1
            yield c
            c[k] += 1


def _holds_3n2(c: list[int], melds: Sequence[Meld]) -> bool:
    """A hand of 3n+2 tiles (a kong counts 3): a seat that has drawn and not yet discarded."""
    return (sum(c) + 3 * len(melds)) % 3 == 2


def flower_pig_now(concealed: Counts, melds: Sequence[Meld] = ()) -> bool:
    """S15.1 as if the wall ran out now (used by S16): :func:`is_flower_pig`; a 3n+2 hand (a seat
    on its own turn, or one whose added kong is being robbed) only when every discard leaves
    three suits."""
    c = _counts(concealed)
    if not _holds_3n2(c, melds):
        return is_flower_pig(c, melds)
    return all(is_flower_pig(rest, melds) for rest in _discards(c))


def ready_points_now(concealed: Counts, melds: Sequence[Meld], rules: BloodBattleRules,
                     void: Optional[int] = None) -> int:
    """S15.2 as if the wall ran out now (used by S16): :func:`ready_points`; a 3n+2 hand is
    judged on its most favourable discard (the largest value over all discards)."""
    c = _counts(concealed)
    if not _holds_3n2(c, melds):
        return ready_points(c, melds, rules, void)
    return max((ready_points(rest, melds, rules, void) for rest in _discards(c)), default=0)
