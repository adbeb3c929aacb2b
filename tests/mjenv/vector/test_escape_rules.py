"""The compiled escape and balance rules (mjenv/vector/rules: beans, escape, blood_battle) against the
readable ones of mjenv/rules (B4, S15, S16, J11 of docs/rules-blood-battle.md and
docs/rules-joy-mahjong.md): the worked cases of test_escape_settlement.py, then thousands of random
inputs, each answer equal to the reference's."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import tiles
from mjenv.config import blood_battle_rules
from mjenv.melds import Meld
from mjenv.rules import beans as ref_beans
from mjenv.rules import escape as ref_escape
from mjenv.rules import blood_battle as ref_bb
from mjenv.vector.engine.joy_mahjong import ROOMS
from mjenv.vector.rules import beans, escape
from mjenv.vector.rules import blood_battle as bb
from mjenv.vector.rules.shapes import suit_table
from tests.mjenv.rules.test_escape_settlement import CAP

I64 = np.int64


def split(amount: int, weights: list[int]) -> list[int]:
    out = np.zeros(len(weights), I64)
    beans.split_in_ratio(amount, np.array(weights, I64), out)
    return out.tolist()


def pay(balance: int | None, owed: list[int]) -> list[int]:
    out = np.zeros(len(owed), I64)
    beans.pay_from_balance(2**62 if balance is None else balance, np.array(owed, I64), out)
    return out.tolist()


def esc_split(balance: int | None, penalty: int, comps: list[int]) -> tuple[int, list[int]]:
    paid = np.zeros(len(comps), I64)
    got = escape.escape_split(0 if balance is None else balance, balance is not None, penalty, np.array(comps, I64), paid)
    return got, paid.tolist()


@pytest.mark.parametrize("amount,weights,expected", [
    (100, [1, 1], [50, 50]), (100, [1, 2], [33, 67]), (10, [1, 1, 1], [4, 3, 3]), (7, [0, 5, 0], [0, 7, 0]),
    (0, [3, 4], [0, 0]), (5, [0, 0], [0, 0]), (1000, [192, 24, 12], [842, 105, 53]),
])
def test_split_in_ratio_worked_cases(amount, weights, expected):
    assert split(amount, weights) == expected


def test_balance_functions_match_the_reference_on_random_amounts():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(1, 7))
        weights = rng.integers(0, 4000, n) * (rng.random(n) < 0.8)
        total = int(weights.sum())
        amount = int(rng.integers(0, total + 2))
        assert split(amount, weights.tolist()) == ref_beans.split_in_ratio(amount, weights.tolist())
        balance = None if rng.random() < 0.1 else int(rng.integers(0, 2 * total + 2))
        assert pay(balance, weights.tolist()) == ref_beans.pay_from_balance(balance, weights.tolist())
        penalty = int(rng.integers(0, 5000))
        assert esc_split(balance, penalty, weights.tolist()) == ref_escape.escape_split(balance, penalty, weights.tolist())


def test_escape_points_match_the_reference_on_random_standings():
    rng = np.random.default_rng(1)
    for _ in range(3000):
        m = int(rng.integers(0, 4))
        pig, won = rng.random(m) < 0.3, rng.random(m) < 0.3
        ready = rng.integers(0, 4, m) * rng.choice([6, 12, 24, 48, 96, 192], m)
        e_pig, e_ready = bool(rng.random() < 0.3), bool(rng.random() < 0.3)
        claims = np.zeros(m, I64)
        escape.draw_check_claims(e_pig, e_ready, pig, won, ready, CAP, claims)
        want = ref_escape.draw_check_claims(e_pig, e_ready, pig.tolist(), won.tolist(), ready.tolist(), CAP)
        assert claims.tolist() == want
        u, n, x = int(rng.integers(0, 4)), int(rng.choice([1, 3, 200])), int(rng.integers(0, 3))
        floors = int(rng.integers(0, 50000)), int(rng.integers(0, 2000))
        comps = np.zeros(m, I64)
        penalty = escape.happy_escape_beans(claims, u, CAP, n, x, *floors, comps)
        assert (penalty, comps.tolist()) == ref_escape.happy_escape_beans(want, u, CAP, n, x, *floors)
        wall = int(rng.integers(0, 9))
        points = np.zeros(m, I64)
        escape.qq_escape_points(ready, wall, 6, points)
        assert points.tolist() == ref_escape.qq_escape_points(ready.tolist(), wall, 6)


@pytest.mark.parametrize("room", ROOMS)
def test_joy_escape_x(room):
    assert escape.joy_escape_x(-1, ROOMS.index(room)) == ref_escape.joy_escape_x(None, room)
    assert escape.joy_escape_x(3, ROOMS.index(room)) == 3


# ---------------------------------------------------------------- a hand's standing (S15 as of now)


RULES = blood_battle_rules("happy")
RULE_VECTOR = bb.rule_vector(RULES)


def standing(counts: list[int], melds: list[Meld], void: int | None) -> tuple[bool, int]:
    """(flower_pig_now, ready_points_now) of the compiled rules; the hand is restored."""
    h = np.array(counts[:27], np.int8)
    meld = np.zeros(27, np.int8)
    code = {"pong": bb.PONG, "kong": bb.KONG, "addkong": bb.ADDKONG, "ankan": bb.ANKAN}
    for m in melds:
        meld[m.tile] = code[m.kind]
    before = h.copy()
    got = (bb.flower_pig_now(h, meld, len(melds)),
           bb.ready_points_now(h, meld, len(melds), -1 if void is None else void, RULE_VECTOR, suit_table()))
    assert np.array_equal(h, before)
    return got


@pytest.mark.parametrize("hand,void,pig,ready", [
    ("123456789m1123p", 2, False, 6), ("123m456p789s1122m", None, True, 0), ("123456789m1123p9s", 2, False, 6),
    ("1122m3344p5566s77m", None, True, 0), ("1122m3344p55667m9s", None, False, 24),
])
def test_standing_worked_cases(hand, void, pig, ready):
    assert standing(tiles.to_counts(tiles.parse(hand)), [], void) == (pig, ready)


def _random_hand(rng: np.random.Generator) -> tuple[list[int], list[Meld]]:
    """3n+1 or 3n+2 tiles with 0-2 melds of distinct kinds, drawn in runs and pairs so that many
    hands are ready; no kind owned more than four times."""
    counts, melds = [0] * 34, []
    for k in rng.choice(27, size=int(rng.integers(0, 3)), replace=False):
        melds.append(Meld(str(rng.choice(["pong", "kong", "ankan", "addkong"])), int(k)))
    room = [4 - sum(3 if m.kind == "pong" else 4 for m in melds if m.tile == k) for k in range(27)]
    size = 13 - 3 * len(melds) + int(rng.integers(0, 2))
    suits = rng.choice(3, size=int(rng.integers(1, 4)), replace=False)
    while sum(counts) < size:
        k = 9 * int(rng.choice(suits)) + int(rng.integers(9))
        for j in range(int(rng.integers(1, 4))):
            kk = k + (j if rng.random() < 0.5 else 0)
            if sum(counts) < size and kk // 9 == k // 9 and counts[kk] < room[kk]:
                counts[kk] += 1
    return counts, melds


def test_standing_matches_the_reference_on_random_hands():
    rng = np.random.default_rng(2)
    met = {"pig": 0, "ready": 0, "3n+2": 0}
    for _ in range(3000):
        counts, melds = _random_hand(rng)
        void = None if rng.random() < 0.5 else int(rng.integers(3))
        want = (ref_bb.flower_pig_now(counts, melds), ref_bb.ready_points_now(counts, melds, RULES, void))
        assert standing(counts, melds, void) == want, (counts, melds, void)
        met["pig"] += want[0]
        met["ready"] += want[1] > 0
        met["3n+2"] += (sum(counts) + 3 * len(melds)) % 3 == 2
    assert min(met.values()) > 200, met  # every branch was met often
