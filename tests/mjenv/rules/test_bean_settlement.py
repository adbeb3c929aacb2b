"""Bean settlement of one hand (docs/rules-blood-battle.md B1, B3): each loser pays X·N + A, the
winner receives N·ΣX − A, the rake A leaves every seat once, and the seats sum to −4·A.

The engine-level cases (N and A applied to real hands) are in test_blood_battle_scenarios.py.
"""

from __future__ import annotations

import pytest

from mjenv.rules.beans import beans_of, settle

SETTLE_CASES = [
    # (payments (payer, payee, X), N, A, net beans per seat)
    # B3 Sichuan: three losers at X = 18, N = 200, A = 400: gross 3600 each, 10800 to the winner.
    ([(1, 0, 18), (2, 0, 18), (3, 0, 18)], 200, 400, [10400, -4000, -4000, -4000]),
    # The same without rake: the gross amounts.
    ([(1, 0, 18), (2, 0, 18), (3, 0, 18)], 200, 0, [10800, -3600, -3600, -3600]),
    # B3 Joy: X = 10 from each of three, N = 200, A = 20: 6000 − 20 and −(2000 + 20).
    ([(1, 0, 10), (2, 0, 10), (3, 0, 10)], 200, 20, [5980, -2020, -2020, -2020]),
    # Nothing paid (a draw with nobody ready): only the rake.
    ([], 5, 7, [-7, -7, -7, -7]),
    # 直杠 in happy at N = 1: the discarder pays 12.
    ([(0, 1, 12)], 1, 0, [-12, 12, 0, 0]),
    # 一炮多响: seat 0 pays three winners one-to-one (6, 12, 24) at N = 2, A = 3.
    ([(0, 1, 6), (0, 2, 12), (0, 3, 24)], 2, 3, [-87, 9, 21, 45]),
    # A blood hand: a 暗杠 by seat 2, then seat 1 self-draws (X = 24) while seat 2 has not won,
    # then seat 2 wins on seat 3's discard (X = 12); N = 10, A = 1.
    ([(0, 2, 12), (1, 2, 12), (3, 2, 12), (0, 1, 24), (2, 1, 24), (3, 1, 24), (3, 2, 12)], 10, 1,
     [-361, 599, 239, -481]),
]


@pytest.mark.parametrize("payments,n,a,expected", SETTLE_CASES)
def test_settle(payments, n, a, expected):
    net = settle(payments, n, a)
    assert net == expected
    assert sum(net) == -4 * a
    # Each seat's gross movement is N times its point balance.
    points = [0] * 4
    for payer, payee, x in payments:
        points[payer] -= x
        points[payee] += x
    assert [b + a for b in net] == [p * n for p in points]


@pytest.mark.parametrize("points,n,expected", [(18, 200, 3600), (0, 200, 0), (6, 1, 6), (54, 200, 10800)])
def test_beans_of(points, n, expected):
    assert beans_of(points, n) == expected


def test_settle_other_table_sizes():
    assert settle([(1, 0, 5)], 3, 2, n_seats=2) == [13, -17]
