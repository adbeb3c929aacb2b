"""Escape (逃跑 / 强退) and balance settlement as pure functions (B4, S16, J11 of docs/rules-blood-battle.md and docs/rules-joy-mahjong.md).

Amounts are worked out by hand from the rules in each comment. The engine-level cases (scripted
hands) are in test_escape_scenarios.py.
"""

from __future__ import annotations

import pytest

from mjenv import tiles
from mjenv.config import blood_battle_rules
from mjenv.rules.beans import pay_from_balance, split_in_ratio, starting_balances
from mjenv.rules.escape import (JOY_ESCAPE_X, draw_check_claims, happy_escape_beans, escape_split,
                                joy_escape_x, qq_escape_points)
from mjenv.rules.blood_battle import flower_pig_now, ready_points_now

CAP = 192  # 6·2^(6−1): the happy cap amount in points


@pytest.mark.parametrize("amount,weights,expected", [
    (100, [1, 1], [50, 50]),
    (100, [1, 2], [33, 67]),          # 33.3 / 66.7: the larger remainder takes the spare bean
    (10, [1, 1, 1], [4, 3, 3]),       # three equal remainders: the earliest share first
    (7, [0, 5, 0], [0, 7, 0]),
    (0, [3, 4], [0, 0]),
    (5, [0, 0], [0, 0]),              # nothing owed: nothing shared
    (1000, [192, 24, 12], [842, 105, 53]),
])
def test_split_in_ratio(amount, weights, expected):
    shares = split_in_ratio(amount, weights)
    assert shares == expected
    if sum(weights):
        assert sum(shares) == amount


@pytest.mark.parametrize("balance,owed,expected", [
    (None, [3600, 3600], [3600, 3600]),   # no balances: everything
    (10000, [3600, 3600], [3600, 3600]),  # enough
    (7200, [3600, 3600], [3600, 3600]),   # exactly enough
    (3000, [1000, 2000], [1000, 2000]),
    (300, [1000, 2000], [100, 200]),      # short: all it holds, 1 : 2
    (0, [1000, 2000], [0, 0]),            # holds nothing
])
def test_pay_from_balance(balance, owed, expected):
    assert pay_from_balance(balance, owed) == expected


def test_starting_balances():
    assert starting_balances(None) is None
    assert starting_balances(500) == [500] * 4
    assert starting_balances((1, 2, 3, 4)) == [1, 2, 3, 4]


# ---------------------------------------------------------------- happy: C_j (S16.1)


@pytest.mark.parametrize("escaper_pig,escaper_ready,pig,won,ready,expected", [
    # A 花猪 escaper owes the cap amount to every payee that is no 花猪, won or not (S15.1).
    (True, False, [False, True, False], [True, False, False], [0, 0, 24], [CAP, 0, CAP]),
    # Not ready, no 花猪: each ready payee that has not won its 查大叫 value (S15.2).
    (False, False, [False, False, False], [False, True, False], [48, 96, 0], [48, 0, 0]),
    # A ready escaper owes nothing as if the wall ran out.
    (False, True, [False, False, False], [False, False, False], [48, 24, 12], [0, 0, 0]),
])
def test_draw_check_claims(escaper_pig, escaper_ready, pig, won, ready, expected):
    assert draw_check_claims(escaper_pig, escaper_ready, pig, won, ready, CAP) == expected


# ---------------------------------------------------------------- happy: 扣豆 and 赔偿 (S16.1)


@pytest.mark.parametrize("claims,u,n,x,min_pen,min_comp,penalty,comps", [
    # Nothing owed as if the wall ran out, three seats in play, N = 200, x = 1:
    # 扣豆 = 200·(192·3 + 0) = 115200; each 赔偿 = max(200·6, 0) = 1200 (the minimum).
    ([0, 0, 0], 3, 200, 1, 200 * CAP, 200 * 6, 115200, [1200, 1200, 1200]),
    # Not ready against two ready seats (24 and 48 points), one seat has won (u = 2), N = 200:
    # 扣豆 = 200·(192·2 + 72) = 91200; 赔偿 = 200·24 = 4800, 200·48 = 9600, and 1200 to the winner.
    ([24, 48, 0], 2, 200, 1, 200 * CAP, 1200, 91200, [4800, 9600, 1200]),
    # The same with the 修正参数 x = 2: 扣豆 = 200·(384 + 144) = 105600; 赔偿 9600, 19200, 1200.
    ([24, 48, 0], 2, 200, 2, 200 * CAP, 1200, 105600, [9600, 19200, 1200]),
    # A 花猪 escaper, one payee a 花猪 too, u = 3, N = 1: 扣豆 = 192·3 + 384 = 960; 赔偿 192, 192, 6.
    ([CAP, CAP, 0], 3, 1, 1, CAP, 6, 960, [CAP, CAP, 6]),
    # Minimums above the formula bind: 扣豆 ≥ 100000, 赔偿 ≥ 500.
    ([0, 6, 0], 1, 1, 1, 100000, 500, 100000, [500, 500, 500]),
])
def test_happy_escape_beans(claims, u, n, x, min_pen, min_comp, penalty, comps):
    assert happy_escape_beans(claims, u, CAP, n, x, min_pen, min_comp) == (penalty, comps)


@pytest.mark.parametrize("balance,penalty,comps,paid_penalty,paid_comps", [
    # Enough beans: everything is paid.
    (None, 91200, [4800, 9600, 1200], 91200, [4800, 9600, 1200]),
    (200000, 91200, [4800, 9600, 1200], 91200, [4800, 9600, 1200]),
    # Seed 002 (a): 10680 beans against 扣豆 91200 : 赔偿 15600 (owed 106800 in all, a tenth of it):
    # 扣豆 9120, 赔偿 1560; (b) the 赔偿 split 4800 : 9600 : 1200 = 4 : 8 : 1 → 480, 960, 120.
    (10680, 91200, [4800, 9600, 1200], 9120, [480, 960, 120]),
    # Uneven: 1000 beans against 960 : 390 → 扣豆 711.1 → 711, 赔偿 288.9 → 289; then 289 split
    # 192 : 192 : 6 → 142.3, 142.3, 4.4 → 142, 142, 5 (the spare bean to the largest remainder).
    (1000, 960, [192, 192, 6], 711, [142, 142, 5]),
    # Nothing held: nothing paid.
    (0, 960, [192, 192, 6], 0, [0, 0, 0]),
])
def test_escape_split(balance, penalty, comps, paid_penalty, paid_comps):
    got_penalty, got_comps = escape_split(balance, penalty, comps)
    assert (got_penalty, got_comps) == (paid_penalty, paid_comps)
    if balance is not None and balance < penalty + sum(comps):
        assert got_penalty + sum(got_comps) == balance  # all it holds, no more


# ---------------------------------------------------------------- qq (S16.2) and Joy (J11)


@pytest.mark.parametrize("ready,wall,expected", [
    # Wall above four tiles: 16倍 = 96 points each, whatever the hands.
    ([0, 192, 24], 5, [96, 96, 96]),
    # In the last four tiles a ready seat takes its 查大叫 value when larger.
    ([0, 192, 24], 4, [96, 192, 96]),
    ([0, 192, 24], 0, [96, 192, 96]),
])
def test_qq_escape_points(ready, wall, expected):
    assert qq_escape_points(ready, wall, 6) == expected


def test_qq_escape_seed_example():
    """Seed 004 at N = 200: one seat escapes with two others unwon and the wall above four
    tiles: each of them receives 200·96 = 19200 beans."""
    assert [200 * p for p in qq_escape_points([0, 48], 30, 6)] == [19200, 19200]


@pytest.mark.parametrize("room,expected", [("popular", 8), ("eight_fan", 16), ("no_fan", 10)])
def test_joy_escape_x_default_per_room(room, expected):
    # J11: the room's X of an 8-fan win with no bird and no dealer: 8, 8 + 8, and the flat 10.
    assert joy_escape_x(None, room) == JOY_ESCAPE_X[room] == expected
    assert joy_escape_x(3, room) == 3


# ---------------------------------------------------------------- a hand's standing (S15 as of now)


RULES = blood_battle_rules("happy")


@pytest.mark.parametrize("hand,void,pig,ready", [
    # 3n+1: as 查花猪 / 查大叫 read it. 123m 456m 789m 11p 23p waits 1p/4p: 平胡 1 fan → 6.
    ("123456789m1123p", 2, False, 6),
    ("123m456p789s1122m", None, True, 0),
    # 3n+2 on its own turn: judged on its best discard. Discarding 9s leaves 123m 456m 789m 11p 23p.
    ("123456789m1123p9s", 2, False, 6),
    # Three suits whatever it discards (two of each of the other suits): a 花猪.
    ("1122m3344p5566s77m", None, True, 0),
    # Discarding the lone 9s leaves two suits, no 花猪, and six pairs waiting on 7m: 七对 3 fan → 24.
    ("1122m3344p55667m9s", None, False, 24),
])
def test_standing_as_if_the_wall_ran_out_now(hand, void, pig, ready):
    counts = tiles.to_counts(tiles.parse(hand))
    assert (flower_pig_now(counts), ready_points_now(counts, (), RULES, void)) == (pig, ready)
