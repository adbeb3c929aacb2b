"""Joy Mahjong settlement of one hand (docs/rules-joy-mahjong.md J5-J8, J10, B1, B3): rooms, who
pays, dealer and bird doubling, the bird draw, beans and the rake.

Seats are 0..3 in turn order; in the tables below ``W`` is the winner, ``D`` the discarder (None
for a self-draw), ``dealer`` the dealer's seat and ``bird`` the seat the bird landed on.
"""

from __future__ import annotations

from tests.support import ROOT

import random

import numpy as np
import pytest

from mjenv.config import joy_mahjong_rules
from mjenv.rules.beans import settle
from mjenv.rules.joy_settlement import (
    bird_seat,
    bird_tile,
    payment_pairs,
    payments,
    room_allows_win,
    room_base,
    settle_hand,
    wall_spent,
)
from mjenv.tiles import parse_tile

RULES = joy_mahjong_rules()
MCR = joy_mahjong_rules(discard_payers="all_mcr")


# --- B3: the Joy worked example -------------------------------------------------------------

def test_b3_joy_injected_x():
    """B3 Joy: N = 200, X = 10 from each of three losers on a self-draw, A = 20."""
    rules = joy_mahjong_rules(room_coefficient=200, rake=20)
    net = settle_hand([30, -10, -10, -10], rules)
    assert net == [5980, -2020, -2020, -2020]
    gross = [b + 20 for b in net]
    assert gross == [6000, -2000, -2000, -2000]
    assert sum(net) == -4 * 20
    # beans.settle on the same payments gives the same table (B1 is implemented once).
    assert settle([(1, 0, 10), (2, 0, 10), (3, 0, 10)], 200, 20) == net


@pytest.mark.parametrize("dealer", range(4))
def test_b3_joy_from_fan(dealer):
    """B3 Joy, from the fan: popular room, the dealer self-draws a 5-fan hand, no bird (None:
    on a self-draw every seat is the winner or a loser, so only a missing bird hits nobody)
    → X = 5·1·2 = 10 per loser."""
    rules = joy_mahjong_rules(room_coefficient=200, rake=20)
    base = room_base(5, "popular")
    deltas = payments(dealer, None, dealer, None, base, rules)
    assert deltas[dealer] == 30 and all(deltas[s] == -10 for s in range(4) if s != dealer)
    net = settle_hand(deltas, rules)
    assert net[dealer] == 5980
    assert all(net[s] == -2020 for s in range(4) if s != dealer)


def test_b3_joy_from_a_real_hand():
    """B3 Joy end to end: a real 5-fan hand (无财神 2, 幺九刻 1, 单钓将 1, 自摸 1) scored by
    ``mjenv.score``, self-drawn by the dealer in the popular room, settled at N = 200, A = 20."""
    import mjenv

    scored = mjenv.score(game="joy_mahjong", hand="345m22p678s", win_tile="2p", melds=("chow:234s", "pong:N"),
                         self_drawn=True, room="popular", room_coefficient=200, rake=20)
    assert (scored.fan, scored.X) == (5, 5)
    rules = joy_mahjong_rules(room_coefficient=200, rake=20)
    deltas = payments(0, None, 0, None, scored.X, rules)
    assert deltas == [30, -10, -10, -10]  # X = 5·1·2 = 10 per loser
    assert settle_hand(deltas, rules) == [5980, -2020, -2020, -2020]


@pytest.mark.parametrize("n,a", [(1, 0), (200, 20), (7, 3)])
def test_huang_zhuang_pays_only_the_rake(n, a):
    """J10: a 荒庄 (exhaustive draw) moves no points; the rake A is still taken from every seat."""
    rules = joy_mahjong_rules(room_coefficient=n, rake=a)
    assert settle_hand([0, 0, 0, 0], rules) == [-a] * 4
    assert settle_hand(None, rules) == [-a] * 4


# --- J8: where the bird lands -----------------------------------------------------------------

# The bird's number (1-9; 东南西北中发白 = 1-7) → seats after the dealer, as J8 lists it:
# 1,5,9 → dealer; 2,6 → 下家 (+1); 3,7 → 对家 (+2); 4,8 → 上家 (+3).
OFFSET_OF_NUMBER = {1: 0, 5: 0, 9: 0, 2: 1, 6: 1, 3: 2, 7: 2, 4: 3, 8: 3}
BIRD_TILES = (
    [(f"{r}{s}", r) for s in "mps" for r in range(1, 10)]
    + [(t, i + 1) for i, t in enumerate(("东", "南", "西", "北", "中", "发", "白"))]
)


@pytest.mark.parametrize("tile,number", BIRD_TILES)
@pytest.mark.parametrize("dealer", range(4))
def test_bird_seat_every_tile_every_dealer(tile, number, dealer):
    assert bird_seat(parse_tile(tile), dealer) == (dealer + OFFSET_OF_NUMBER[number]) % 4


@pytest.mark.parametrize("tile,dealer,seat", [
    ("一万", 0, 0), ("五筒", 2, 2), ("九条", 3, 3),   # 1, 5, 9: the dealer
    ("二万", 3, 0), ("六条", 1, 2),                   # 2, 6: the dealer's 下家
    ("三筒", 1, 3), ("七万", 2, 0),                   # 3, 7: opposite
    ("四条", 0, 3), ("八筒", 1, 0),                   # 4, 8: the dealer's 上家
    ("东", 2, 2), ("南", 2, 3), ("西", 2, 0), ("北", 2, 1),
    ("中", 2, 2), ("发", 2, 3), ("白", 2, 0),
])
def test_bird_seat_named_examples(tile, dealer, seat):
    assert bird_seat(parse_tile(tile), dealer) == seat


@pytest.mark.parametrize("flower", range(34, 42))
def test_flower_is_never_a_bird(flower):
    with pytest.raises(ValueError, match="flower"):
        bird_seat(flower, 0)


# --- J8: drawing the bird ---------------------------------------------------------------------

F1, F2 = parse_tile("1f"), parse_tile("8f")
M5, P3, S9, E, C = (parse_tile(t) for t in ("5m", "3p", "9s", "E", "C"))


@pytest.mark.parametrize("wall,last_drawn,expected", [
    ([P3, S9, E], M5, P3),                   # the next wall tile (head first)
    ([F1, F2, S9, E], M5, S9),               # flowers are skipped
    ([F1, C], M5, C),
    ([], M5, M5),                            # the wall is empty: the last tile drawn is the bird
    ([F1, F2], C, C),                        # only flowers left: the last tile drawn is the bird
])
def test_bird_tile(wall, last_drawn, expected):
    assert bird_tile(wall, last_drawn) == expected
    assert wall_spent(wall) == (expected == last_drawn)


def test_bird_tile_accepts_numpy_wall():
    wall = np.array([F1, S9, E], dtype=np.int8)
    got = bird_tile(wall, np.int64(M5))
    assert got == S9 and type(got) is int
    assert bird_tile(np.array([F1], dtype=np.int8), np.int64(M5)) == M5


def test_bird_tile_does_not_touch_the_wall():
    wall = [F1, P3]
    bird_tile(wall, M5)
    assert wall == [F1, P3]


@pytest.mark.parametrize("wall,last_drawn,match", [
    ([], F1, "flower"),
    ([P3], 42, "last_drawn"),
    ([P3], True, "last_drawn"),
    ([42, P3], M5, r"remaining_wall\[0\]"),
    ([-1], M5, r"remaining_wall\[0\]"),
])
def test_bird_tile_bad_input(wall, last_drawn, match):
    with pytest.raises(ValueError, match=match):
        bird_tile(wall, last_drawn)


# --- J5: rooms --------------------------------------------------------------------------------

@pytest.mark.parametrize("fan,room,x", [
    (1, "popular", 1), (5, "popular", 5), (13, "popular", 13),
    (8, "eight_fan", 16), (9, "eight_fan", 17), (24, "eight_fan", 32),
    (1, "no_fan", 10), (8, "no_fan", 10), (88, "no_fan", 10),
])
def test_room_base(fan, room, x):
    assert room_base(fan, room) == x


@pytest.mark.parametrize("fan_without_flowers,room,ok", [
    (1, "popular", True), (0, "no_fan", True), (7, "eight_fan", False), (8, "eight_fan", True),
])
def test_room_allows_win(fan_without_flowers, room, ok):
    assert room_allows_win(fan_without_flowers, room) is ok


@pytest.mark.parametrize("call,match", [
    (lambda: room_base(5, "vip"), "room must be one of"),
    (lambda: room_base(-1, "popular"), "fan"),
    (lambda: room_allows_win(8, "vip"), "room must be one of"),
])
def test_room_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- J6-J8: who pays, dealer and bird (discard_payers="discarder") ----------------------------

CASES = [
    # (label, W, D, dealer, bird, base, expected deltas)
    # Discard win, the discarder alone pays (J6); dealer on a third seat, no bird.
    ("discard plain", 0, 2, 1, None, 5, [5, 0, -5, 0]),
    # J8 discard: a hit on the winner or the discarder doubles; a hit on a third seat does not.
    ("discard bird on winner", 0, 2, 1, 0, 5, [10, 0, -10, 0]),
    ("discard bird on discarder", 0, 2, 3, 2, 5, [10, 0, -10, 0]),
    ("discard bird on third seat", 0, 2, 3, 1, 5, [5, 0, -5, 0]),
    ("discard bird on the dealer bystander", 0, 2, 3, 3, 5, [5, 0, -5, 0]),
    # J7 discard: dealer as winner, as the (paying) loser, as neither.
    ("discard dealer wins", 1, 3, 1, None, 4, [0, 8, 0, -8]),
    ("discard dealer pays", 1, 3, 3, None, 4, [0, 8, 0, -8]),
    ("discard dealer neither", 1, 3, 0, None, 4, [0, 4, 0, -4]),
    ("discard dealer neither, bird on him", 1, 3, 2, 2, 4, [0, 4, 0, -4]),
    # Dealer and bird stack: ×4.
    ("discard dealer wins + bird on discarder", 1, 3, 1, 3, 4, [0, 16, 0, -16]),
    ("discard dealer pays + bird on winner", 2, 0, 0, 2, 3, [-12, 0, 12, 0]),
    # 抢杠和: the kong-maker is passed as discarder and pays alone.
    ("rob kong", 3, 1, 2, None, 6, [0, -6, 0, 6]),
    # Self-draw: all three pay (J6). J7: dealer as winner (all ×2) or as a loser (that one ×2).
    ("self-draw dealer wins", 2, None, 2, None, 3, [-6, -6, 18, -6]),
    ("self-draw dealer is loser 0", 2, None, 0, None, 3, [-6, -3, 12, -3]),
    ("self-draw dealer is loser 3", 2, None, 3, None, 3, [-3, -3, 12, -6]),
    # J8 self-draw: a hit on the winner doubles all three; a hit on a loser doubles only that one.
    # W = 0, dealer = 1, so seat 1 always pays ×2 for the dealer.
    ("self-draw bird on winner", 0, None, 1, 0, 2, [16, -8, -4, -4]),
    ("self-draw bird on loser 1 (the dealer)", 0, None, 1, 1, 2, [12, -8, -2, -2]),
    ("self-draw bird on loser 2", 0, None, 1, 2, 2, [10, -4, -4, -2]),
    ("self-draw bird on loser 3", 0, None, 1, 3, 2, [10, -4, -2, -4]),
    # Dealer wins and the bird is on the winner: every loser ×4.
    ("self-draw dealer wins + bird on winner", 3, None, 3, 3, 5, [-20, -20, -20, 60]),
    # Dealer wins, bird on one loser: that loser ×4, the others ×2.
    ("self-draw dealer wins + bird on loser", 3, None, 3, 0, 5, [-20, -10, -10, 40]),
]


@pytest.mark.parametrize("label,w,d,dealer,bird,base,expected", CASES, ids=[c[0] for c in CASES])
def test_payments(label, w, d, dealer, bird, base, expected):
    deltas = payments(w, d, dealer, bird, base, RULES)
    assert deltas == expected
    assert sum(deltas) == 0
    pairs = payment_pairs(w, d, dealer, bird, base, RULES)
    assert all(payee == w and payer != w for payer, payee, _ in pairs)
    assert settle(pairs, 1, 0) == deltas


# --- J5 × J7 × J8: each room's X with bird and dealer -----------------------------------------

ROOM_CASES = [
    # (room, fan, W, D, dealer, bird, expected)
    # popular: X = fan. Dealer discards, bird on the winner: 7·2·2.
    ("popular", 7, 0, 1, 1, 0, [28, -28, 0, 0]),
    # popular self-draw, dealer = W, bird on loser 2: 3·2 from 1 and 3, 3·2·2 from 2.
    ("popular", 3, 0, None, 0, 2, [24, -6, -12, -6]),
    # eight_fan: X = fan + 8. Dealer third seat, bird on discarder: (9+8)·2.
    ("eight_fan", 9, 0, 1, 2, 1, [34, -34, 0, 0]),
    # eight_fan self-draw, dealer a loser (3), bird on that same loser: 16·4 from 3, 16 others.
    ("eight_fan", 8, 1, None, 3, 3, [-16, 96, -16, -64]),
    # no_fan: X = 10 whatever the fan. Dealer wins, bird on a third seat: 10·2 only.
    ("no_fan", 40, 2, 3, 2, 0, [0, 0, 20, -20]),
    # no_fan self-draw, dealer wins, bird on winner: 10·4 from each.
    ("no_fan", 1, 1, None, 1, 1, [-40, 120, -40, -40]),
]


@pytest.mark.parametrize("room,fan,w,d,dealer,bird,expected", ROOM_CASES)
def test_rooms_with_bird_and_dealer(room, fan, w, d, dealer, bird, expected):
    rules = joy_mahjong_rules(room=room)
    assert payments(w, d, dealer, bird, room_base(fan, rules.room), rules, fan) == expected


# --- J6 option all_mcr ------------------------------------------------------------------------

MCR_CASES = [
    # (label, W, D, dealer, bird, base, fan, expected)
    # Discarder fan + 8, the two bystanders 8 each; dealer a bystander doubles only his own 8.
    ("plain", 0, 2, 3, None, 5, 5, [37, -8, -13, -16]),
    ("dealer wins: all three ×2", 0, 2, 0, None, 5, 5, [58, -16, -26, -16]),
    ("dealer discards: only the discarder ×2", 0, 2, 2, None, 5, 5, [42, -8, -26, -8]),
    ("bird on winner: all three ×2", 0, 2, 1, 0, 5, 5, [74, -32, -26, -16]),
    ("bird on discarder: only the discarder ×2", 0, 2, 1, 2, 5, 5, [50, -16, -26, -8]),
    ("bird on a bystander: only his 8 ×2", 0, 2, 1, 3, 5, 5, [45, -16, -13, -16]),
    # The discard amounts do not depend on the room's base: eight_fan passes base = fan + 8.
    ("eight_fan base", 1, 3, 0, None, 17, 9, [-16, 41, -8, -17]),
    # A self-draw under all_mcr is paid as usual: the room's base from each of three.
    ("self-draw unchanged", 0, None, 0, 1, 5, 5, [40, -20, -10, -10]),
]


@pytest.mark.parametrize("label,w,d,dealer,bird,base,fan,expected", MCR_CASES,
                         ids=[c[0] for c in MCR_CASES])
def test_all_mcr(label, w, d, dealer, bird, base, fan, expected):
    deltas = payments(w, d, dealer, bird, base, MCR, fan)
    assert deltas == expected
    assert sum(deltas) == 0


def test_all_mcr_self_draw_equals_default():
    for w in range(4):
        for dealer in range(4):
            for bird in (None, 0, 1, 2, 3):
                args = (w, None, dealer, bird, 9)
                assert payments(*args, MCR, 9) == payments(*args, RULES, 9)


def test_all_mcr_discard_needs_the_fan():
    with pytest.raises(ValueError, match="all_mcr.*fan"):
        payments(0, 1, 0, None, 5, MCR)  # fan left at its default 0


# --- zero-sum apart from the rake (property) --------------------------------------------------

def _expected_pair(base, fan, mode, w, d, payer, dealer, bird):
    """What one payer owes, stated straight from J6-J8 (a second, independent reading)."""
    if d is None:
        amount = base
    elif mode == "discarder":
        amount = base if payer == d else 0
    else:
        amount = fan + 8 if payer == d else 8
    hits = (dealer == w or dealer == payer) + (bird is not None and (bird == w or bird == payer))
    return amount * 2 ** hits


def test_random_hands_zero_sum_apart_from_rake():
    rng = random.Random(20240601)
    rooms = ("popular", "eight_fan", "no_fan")
    for _ in range(3000):
        rules = joy_mahjong_rules(room=rng.choice(rooms),
                                  discard_payers=rng.choice(("discarder", "all_mcr")),
                                  room_coefficient=rng.randint(1, 500), rake=rng.randint(0, 100))
        w = rng.randrange(4)
        d = rng.choice([None] + [s for s in range(4) if s != w])
        dealer = rng.randrange(4)
        bird_kind = bird_tile([rng.randrange(42) for _ in range(rng.randint(0, 3))],
                              rng.randrange(34))
        bird = None if rng.random() < 0.1 else bird_seat(bird_kind, dealer)
        fan = rng.randint(1, 120)
        base = room_base(fan, rules.room)
        deltas = payments(w, d, dealer, bird, base, rules, fan)
        assert sum(deltas) == 0
        assert deltas[w] > 0 and all(deltas[s] <= 0 for s in range(4) if s != w)
        for s in range(4):
            if s != w:
                assert -deltas[s] == _expected_pair(base, fan, rules.discard_payers, w, d, s, dealer, bird)
        net = settle_hand(deltas, rules)
        assert sum(net) == -4 * rules.rake
        assert net == [x * rules.room_coefficient - rules.rake for x in deltas]
        pairs = payment_pairs(w, d, dealer, bird, base, rules, fan)
        assert settle(pairs, rules.room_coefficient, rules.rake) == net


# --- bad input --------------------------------------------------------------------------------

BAD = [
    # (label, kwargs overriding a valid call, message pattern)
    ("winner 4", {"winner": 4}, "winner must be a seat 0-3"),
    ("winner -1", {"winner": -1}, "winner must be a seat 0-3"),
    ("winner bool", {"winner": True}, "winner must be a seat 0-3"),
    ("discarder 4", {"discarder": 4}, "discarder must be a seat 0-3"),
    ("dealer 5", {"dealer": 5}, "dealer must be a seat 0-3"),
    ("bird seat 4", {"bird": 4}, "bird .* must be a seat 0-3"),
    ("winner == discarder", {"winner": 2, "discarder": 2}, "discarder must differ from winner"),
    ("base 0", {"base": 0}, "base must be an int >= 1"),
    ("base float", {"base": 2.5}, "base must be an int >= 1"),
    ("fan negative", {"fan": -1}, "fan must be an int >= 0"),
]


@pytest.mark.parametrize("label,override,match", BAD, ids=[b[0] for b in BAD])
def test_payments_bad_input(label, override, match):
    args = {"winner": 0, "discarder": 2, "dealer": 1, "bird": None, "base": 5, "rules": RULES, "fan": 5}
    args.update(override)
    with pytest.raises(ValueError, match=match):
        payments(**args)


def test_payments_bad_rules():
    class Other:
        discard_payers = "everyone"
    with pytest.raises(ValueError, match="discard_payers"):
        payments(0, 1, 0, None, 5, Other())


@pytest.mark.parametrize("bird,dealer,match", [
    (34, 0, "flower"), (41, 2, "flower"), (42, 0, "tile kind 0-41"), (-1, 0, "tile kind 0-41"),
    (0, 4, "dealer must be a seat 0-3"), (0, -1, "dealer must be a seat 0-3"),
])
def test_bird_seat_bad_input(bird, dealer, match):
    with pytest.raises(ValueError, match=match):
        bird_seat(bird, dealer)


@pytest.mark.parametrize("deltas,match", [
    ([1, -1, 0], "4 entries"),
    ([10, -5, -5, 1], "sum to 0"),
    ([1.0, -1, 0, 0], r"deltas_points\[0\] must be an int"),
])
def test_settle_hand_bad_input(deltas, match):
    with pytest.raises(ValueError, match=match):
        settle_hand(deltas, RULES)


# --- the docs' worked examples ----------------------------------------------------------------

def test_docs_bird_example():
    """docs/rules-joy-mahjong.md §10: dealer 0, bird 6m → seat 1; seat 2 self-draws 3 fan in the
    popular room: the dealer pays 6 (J7), the bird's seat 6 (J8), seat 3 pays 3."""
    bird = bird_seat(parse_tile("6m"), 0)
    assert bird == 1
    assert payments(2, None, 0, bird, room_base(3, "popular"), RULES) == [-6, -6, 15, -3]


def test_docs_list_every_joy_rule_field():
    """Every JoyMahjongRules field has a row in docs/rules-joy-mahjong.md §12."""
    from pathlib import Path

    from mjenv.config import JoyMahjongRules, field_names

    doc = (ROOT / "docs" / "rules-joy-mahjong.md").read_text("utf-8")
    for name in field_names(JoyMahjongRules):
        assert f"| `{name}` |" in doc, name
