"""Sichuan fans, extras, cap and points (docs/rules-blood-battle.md S8-S11, S15), table-driven over
tile strings.

Every expectation is worked out by hand from the rules in the comment next to it.
X = 6 · 2^(fan-1) for a plain discard win: 1→6, 2→12, 3→24, 4→48, 5→96, 6→192.
"""

from __future__ import annotations

import pytest

from mjenv.config import blood_battle_rules
from mjenv.melds import parse_meld
from mjenv.rules.blood_battle import (
    BASE_PATTERNS, Fan, SichuanScore, WinContext, gen_count, is_flower_pig, ready_points, score_win,
)
from mjenv.tiles import counts_of

HAPPY = blood_battle_rules("happy")
QQ = blood_battle_rules("qq")


def win(hand: str, melds: tuple[str, ...] = (), rules=HAPPY, void: int | None = None,
        **ctx: bool) -> SichuanScore | None:
    return score_win(counts_of(hand), [parse_meld(m) for m in melds], WinContext(**ctx), rules, void)


def items(result: SichuanScore) -> list[tuple[str, int]]:
    return [(f.name, f.fan) for f in result.fans]


# ---------------------------------------------------------------- seed 004 section 五

SEED_EXAMPLES = [
    # 23445677p 345789s: 234p 456p 77p 345s 789s, two suits, chows → 平胡 1.
    ("23445677p345789s", [("平胡", 1)], 1),
    # 111m 222m 444m 333p + 99p: all pungs, no 1/9 in 222m, two suits → 对对胡 2.
    ("111222444m33399p", [("对对胡", 2)], 2),
    # 11 333 222 456 999s: one suit; 456s forces a chow and has no 1/9 → 清一色 3.
    ("11333222456999s", [("清一色", 3)], 3),
    # 123m×3 + 789p + 99p (not the 111/222/333m pungs): every set has a 1 or 9 → 带幺九 3.
    ("111222333m78999p", [("带幺九", 3)], 3),
    # Labelled 七对 in the seed, but 2222m is a four: 龙七对 5, 根 1 - 1 = 0 (S8 correction).
    ("2244552299m1199p", [("龙七对", 5)], 5),
    # 222 555 888s 888m + 55m: all pungs of rank 2/5/8 → 将对 4.
    ("222555888s88855m", [("将对", 4)], 4),
    # 11p 2222p 44p 55m 77m 99m: seven pairs with a four → 龙七对 5, 根 1 - 1 = 0.
    ("11222244p557799m", [("龙七对", 5)], 5),
    # 11 33 44 66 77 88 99s: one suit, seven pairs, no four → 清七对 5.
    ("11334466778899s", [("清七对", 5)], 5),
    # Labelled 清对 in the seed, but 11 22 55 66 77 88 99p is seven pairs → 清七对 5 (S8).
    ("99887755221166p", [("清七对", 5)], 5),
    # Seed writes 铜 for 筒: 11p + 123p + 789p×3, one suit, every set has a 1/9 → 清幺九 5.
    ("11123777888999p", [("清幺九", 5)], 5),
    # 11 22 4444 55 77 99m: one-suit seven pairs with a four → 清龙七对 6, 根 1 - 1 = 0.
    ("11224444557799m", [("清龙七对", 6)], 6),
]


@pytest.mark.parametrize("hand, expected, fan", SEED_EXAMPLES)
def test_seed_examples(hand: str, expected: list[tuple[str, int]], fan: int) -> None:
    for rules in (HAPPY, QQ):
        result = win(hand, rules=rules)
        assert result is not None
        assert items(result) == expected
        assert result.total_fan == result.capped_fan == fan
        assert result.multiplier == 2 ** (fan - 1)
        assert result.X == 6 * 2 ** (fan - 1)


def test_base_patterns_table() -> None:
    # S8: the thirteen base patterns and their fan, Chinese names as in the seed.
    assert {f.name: f.fan for f in BASE_PATTERNS} == {
        "平胡": 1, "对对胡": 2, "清一色": 3, "带幺九": 3, "七对": 3, "清对": 4, "将对": 4,
        "龙七对": 5, "清七对": 5, "清幺九": 5, "天胡": 6, "地胡": 6, "清龙七对": 6,
    }
    assert Fan("根", "root", 2) == Fan("根", "root", 2)


# ---------------------------------------------------------------- more base patterns


@pytest.mark.parametrize("hand, melds, expected", [
    # Plain seven pairs, two suits, no four → 七对 3.
    ("1133557799m2244p", (), [("七对", 3)]),
    # 111 333 555 777 + 99m: one suit all pungs → 清对 4.
    ("111333555777m99m", (), [("清对", 4)]),
    # Declared pong of 9p counts as a set with a 9: 123m 789m 123p 11p + 999p → 带幺九 3.
    ("123m789m123p11p", ("pong:9p",), [("带幺九", 3)]),
    # A declared pong of 4p has no 1/9 → only 平胡 1.
    ("123m789m123p11p", ("pong:4p",), [("平胡", 1)]),
    # 9p pong + 789p in hand owns all four 9p: 带幺九 3 + 根 1.
    ("123m789m789p11p", ("pong:9p",), [("带幺九", 3), ("根", 1)]),
    # Declared 2s pong + 555s 888s 888m 55m: all pungs of 2/5/8 → 将对 4.
    ("555888s888m55m", ("pong:2s",), [("将对", 4)]),
    # The same with a 3s pong is only 对对胡 2.
    ("555888s888m55m", ("pong:3s",), [("对对胡", 2)]),
    # Declared pong of 1m in a one-suit hand: 234 567 888 99 + 111 → 清一色 3.
    ("234567888m99m", ("pong:1m",), [("清一色", 3)]),
    # 1111 22 33 77 88 99m reads as 清龙七对 (6, 根 1-1) or 11+123×2+789×2 清幺九 (5, 根 1):
    # both 6 in total; the larger base pattern names the hand.
    ("11112233778899m", (), [("清龙七对", 6)]),
    # Two fours in a seven-pairs hand: 龙七对 5 + 根 (2 - 1) → 6.
    ("11112222m334455p", (), [("龙七对", 5), ("根", 1)]),
])
def test_other_patterns(hand: str, melds: tuple[str, ...], expected: list[tuple[str, int]]) -> None:
    result = win(hand, melds)
    assert result is not None
    assert items(result) == expected


def test_dai_yao_jiu_needs_the_chow_reading() -> None:
    # With the 111/222/333m pungs the 222m set has no 1/9; 123m×3 makes it 带幺九 (S8).
    assert items(win("111222333m78999p")) == [("带幺九", 3)]
    # With 55p as the pair no reading has a 1/9 in every set: only 平胡 1.
    assert items(win("111222333m78955p")) == [("平胡", 1)]


# ---------------------------------------------------------------- extras (S9)


@pytest.mark.parametrize("hand, melds, ctx, rules, expected, total, X", [
    # 杠上花 after a declared kong, happy: 对对胡 2 + 根 1 (the kong) + 杠上花 1 + 自摸加番 1 = 5.
    ("111222m33399p", ("kong:4m",), dict(self_drawn=True, after_kong=True), HAPPY,
     [("对对胡", 2), ("根", 1), ("杠上花", 1), ("自摸加番", 1)], 5, 96),
    # Same in qq: 2 + 1 + 1 = 4 fan, ×8, +1 for 自摸加底 → 6·9 = 54.
    ("111222m33399p", ("kong:4m",), dict(self_drawn=True, after_kong=True), QQ,
     [("对对胡", 2), ("根", 1), ("杠上花", 1), ("自摸加底", 0)], 4, 54),
    # 杠上炮: a discard win right after the discarder's kong: 平胡 1 + 1 = 2.
    ("23445677p345789s", (), dict(after_kong=True), HAPPY, [("平胡", 1), ("杠上炮", 1)], 2, 12),
    # 抢杠胡: 平胡 1 + 1 = 2.
    ("23445677p345789s", (), dict(rob_kong=True), QQ, [("平胡", 1), ("抢杠胡", 1)], 2, 12),
    # 天胡, happy: 6 + 自摸加番 1 = 7, capped at 6 → 192.
    ("23445677p345789s", (), dict(first_turn=True, dealer=True, self_drawn=True), HAPPY,
     [("天胡", 6), ("自摸加番", 1)], 7, 192),
    # 天胡, qq: 6 fan ×32, +1 for 自摸加底 → 6·33 = 198.
    ("23445677p345789s", (), dict(first_turn=True, dealer=True, self_drawn=True), QQ,
     [("天胡", 6), ("自摸加底", 0)], 6, 198),
    # 地胡 on a discard: 6; with a four in hand 根 1 → 7, capped 6 → 192.
    ("111123m456p789p55p", (), dict(first_turn=True), HAPPY, [("地胡", 6), ("根", 1)], 7, 192),
    # 天胡 replaces the pattern: on 11224444557799m it beats 清龙七对 (6 with 根 1-1),
    # keeps the full 根 1, + 自摸加番 1 → 8, capped 6.
    ("11224444557799m", (), dict(first_turn=True, dealer=True, self_drawn=True), HAPPY,
     [("天胡", 6), ("根", 1), ("自摸加番", 1)], 8, 192),
    # last_tile adds nothing (no 海底 fan in S8-S9).
    ("23445677p345789s", (), dict(last_tile=True), HAPPY, [("平胡", 1)], 1, 6),
])
def test_extras(hand, melds, ctx, rules, expected, total, X) -> None:
    result = win(hand, melds, rules=rules, **ctx)
    assert result is not None
    assert items(result) == expected
    assert result.total_fan == total
    assert result.X == X


@pytest.mark.parametrize("hand, melds, with_kongs, without", [
    # Four 1m in hand (111 + 123m): 平胡 1 + 根 1 in both settings.
    ("111123m456p789p55p", (), 2, 2),
    # A 5p pong plus the 4th 5p in hand (567p): an undeclared four, 根 in both settings (S9).
    ("123456m99m567p", ("pong:5p",), 2, 2),
    # A declared kong of 5p, each kind of kong: 根 only when gen_counts_kongs.
    ("123456789m99m", ("kong:5p",), 2, 1),
    ("123456789m99m", ("addkong:5p",), 2, 1),
    ("123456789m99m", ("ankan:5p",), 2, 1),
    # 对对胡 with a kong: 2 + 根 1.
    ("222m444m333p99p", ("kong:1m",), 3, 2),
])
def test_gen(hand: str, melds: tuple[str, ...], with_kongs: int, without: int) -> None:
    on = blood_battle_rules("happy", gen_counts_kongs=True)
    off = blood_battle_rules("happy", gen_counts_kongs=False)
    assert win(hand, melds, rules=on).total_fan == with_kongs
    assert win(hand, melds, rules=off).total_fan == without
    ms = [parse_meld(m) for m in melds]
    assert gen_count(counts_of(hand), ms, on) == 1
    assert gen_count(counts_of(hand), ms, off) == (0 if any(m.is_kong for m in ms) else 1)


# ---------------------------------------------------------------- cap and self-draw bonus (S9-S11)


def test_cap() -> None:
    # 1111 4444 55 77 99m: 清龙七对 6 + 根 (2 - 1) = 7.
    result = win("11114444557799m")
    assert items(result) == [("清龙七对", 6), ("根", 1)]
    assert (result.total_fan, result.capped_fan, result.multiplier, result.X) == (7, 6, 32, 192)
    wide = win("11114444557799m", rules=blood_battle_rules("happy", cap_fan=8))
    assert (wide.total_fan, wide.capped_fan, wide.multiplier, wide.X) == (7, 7, 64, 384)
    low = win("11114444557799m", rules=blood_battle_rules("qq", cap_fan=3))
    assert (low.capped_fan, low.X) == (3, 24)


@pytest.mark.parametrize("rules, expected, total, multiplier, X", [
    # happy add_fan: 对对胡 2 + 自摸加番 1 = 3 → ×4 → 24.
    (HAPPY, [("对对胡", 2), ("自摸加番", 1)], 3, 4, 24),
    # qq add_base: 对对胡 2 → ×2, +1 → 6·3 = 18 (B3).
    (QQ, [("对对胡", 2), ("自摸加底", 0)], 2, 3, 18),
    # none: just 对对胡 2 → 12.
    (blood_battle_rules("qq", self_draw_bonus="none"), [("对对胡", 2)], 2, 2, 12),
    # base_points scales X: add_base with base 10 → 10·3 = 30.
    (blood_battle_rules("qq", base_points=10), [("对对胡", 2), ("自摸加底", 0)], 2, 3, 30),
])
def test_self_draw_bonus(rules, expected, total, multiplier, X) -> None:
    result = win("111222444m33399p", rules=rules, self_drawn=True)
    assert items(result) == expected
    assert (result.total_fan, result.multiplier, result.X) == (total, multiplier, X)
    # A discard win gets no bonus.
    assert win("111222444m33399p", rules=rules).multiplier == 2


# ---------------------------------------------------------------- not a win


@pytest.mark.parametrize("hand, melds, void", [
    ("111222444m33399p", (), 1),  # holds the void suit p (S2)
    ("123456789m99m", ("pong:5p",), 1),  # a void-suit meld counts too
    ("123m456p789s11122s", (), None),  # three suits (S2 缺门)
    ("123m456m789p22p", ("pong:9s",), None),  # three suits only counting the meld
    ("123456789mEEE22m", (), None),  # honours (S1)
    ("1234567891234m", (), None),  # no shape
    ("1133557799m2245p", (), None),  # neither seven pairs nor melds
    ("12345678999m", ("chow:123p",), None),  # no chow in blood battle (S3)
    ("1122334455667m", (), None),  # 13 tiles
])
def test_not_a_win(hand: str, melds: tuple[str, ...], void: int | None) -> None:
    assert win(hand, melds, void=void) is None


def test_void_other_suit_is_fine() -> None:
    assert win("111222444m33399p", void=2).total_fan == 2


def test_win_context_checks() -> None:
    with pytest.raises(ValueError, match="rob_kong"):
        WinContext(rob_kong=True, self_drawn=True)
    with pytest.raises(ValueError, match="天胡"):
        WinContext(first_turn=True, dealer=True)
    # 地胡 in qq, self-drawn on the first draw: 6 fan ×32, +1 → 198.
    assert win("23445677p345789s", rules=QQ, first_turn=True, self_drawn=True).X == 198


# ---------------------------------------------------------------- 查大叫 and 花猪 (S15)


@pytest.mark.parametrize("hand, melds, void, points", [
    # Waits 1m/4m/7m; 7m makes 11..77m seven pairs in one suit: 清七对 5 → 96 (no four possible).
    ("1122334455667m", (), None, 96),
    # Only the seven-pairs wait 6p: 1111 22 33 44m 55 66p → 龙七对 5 + 根 (1 - 1) → 96.
    ("1111223344m556p", (), None, 96),
    # Tanki on 5p: 111+123m 456p 789p 55p → 平胡 1 + 根 1 (four 1m) → 2 fan → 12.
    ("1111m23m456p789p5p", (), None, 12),
    # Tanki on 5p beside a 6p pong: 123 456 789m 55p + 666p → 平胡 1 → 6.
    ("123456789m5p", ("pong:6p",), None, 6),
    # The only wait is a fifth 5p (pong of 5p + one 5p in hand): not ready → 0.
    ("123456789m5p", ("pong:5p",), None, 0),
    # Holding the void suit m: cannot win → 0.
    ("1122334455667m", (), 0, 0),
    # Ready shape but all three suits (花猪) → 0.
    ("123m456p789s1123s", (), None, 0),
    # Not ready.
    ("13579m12345678p", (), None, 0),
])
def test_ready_points(hand: str, melds: tuple[str, ...], void: int | None, points: int) -> None:
    ms = [parse_meld(m) for m in melds]
    for rules in (HAPPY, QQ):  # no self-draw bonus at 查大叫, so both presets agree
        assert ready_points(counts_of(hand), ms, rules, void) == points


@pytest.mark.parametrize("gen_counts_kongs", [True, False])
def test_ready_points_count_a_pong_plus_its_fourth_tile(gen_counts_kongs: bool) -> None:
    # S15.2 with S9: 123456m 99m 56p + a 5p pong waits 4p / 7p; either way 平胡 1 + 根 1 (the
    # pong plus the 4th 5p in hand, an undeclared four) = 2 fan → 12.
    rules = blood_battle_rules("happy", gen_counts_kongs=gen_counts_kongs)
    assert ready_points(counts_of("123456m99m56p"), [parse_meld("pong:5p")], rules) == 12


def test_ready_points_capped() -> None:
    # 1111 4444 55 77 9m waits 9m: 清龙七对 6 + 根 1 = 7, capped 6 → 192; cap_fan 8 → 384.
    hand = counts_of("1111444455779m")
    assert ready_points(hand, [], HAPPY) == 192
    assert ready_points(hand, [], blood_battle_rules("happy", cap_fan=8)) == 384


@pytest.mark.parametrize("hand, melds, pig", [
    ("123m456p789s1122s", (), True),
    ("123m456p1122p", ("pong:5s",), True),  # a meld's suit counts
    ("123m456p11122p", (), False),
    ("1111222233334m", (), False),
])
def test_flower_pig(hand: str, melds: tuple[str, ...], pig: bool) -> None:
    assert is_flower_pig(counts_of(hand), [parse_meld(m) for m in melds]) is pig
