"""Escape (逃跑 / 强退) and bean balances on scripted hands (B4, S16, J11 of docs/rules-blood-battle.md and docs/rules-joy-mahjong.md).

The hands and helpers come from the blood-battle and Joy scenario tests (same conventions: the
dealer is seat 0, every seat voids 条, N = 1 and A = 0 unless a test says otherwise, every
decision is asked). Each amount is worked out by hand in a comment; the pure settlement
functions are tested in test_escape_settlement.py.

Every scenario runs twice: on the readable engine, and on the readable and compiled engines side
by side (``vector_twin.CompiledTwin``: the compiled table is dealt the same wall through the reset
options and must agree at every decision and at the end of the hand).
"""

from __future__ import annotations

import sys

import pytest

import tests.mjenv.test_joy_mahjong_scenarios as joy
from mjenv.rules.escape import JOY_ESCAPE_X
from tests.support import burn, legal, pays, play
from tests.mjenv.test_blood_battle_scenarios import (D, DRAWS_LEAVING, FORCED_JUNK, GANG_PAO_HANDS, HU, KONG, MULTI_DRAWS,
                                         MULTI_HANDS, MULTI_ROUND, PASS, PONG, READY_5P, ROB_HANDS, VOID, _in_turns,
                                         _rest, dingque, last_draws, new_game)
from tests.mjenv.vector.vector_twin import CompiledTwin

ESCAPE_BB, ESCAPE_JOY = 62, 76  # the last action of each game's layout with escape=True
CAP = 192  # 6·2^(6−1)


@pytest.fixture(autouse=True, params=["readable", "compiled"])
def engine(request, monkeypatch):
    """``compiled``: the scenarios' games are twins, each also played by the compiled engine."""
    if request.param == "compiled":
        blood, joy_game = new_game, joy.new_game
        monkeypatch.setattr(sys.modules[__name__], "new_game",
                            lambda *a, **k: CompiledTwin(blood(*a, **k), "blood_battle"))
        monkeypatch.setattr(joy, "new_game", lambda *a, **k: CompiledTwin(joy_game(*a, **k), "joy_mahjong"))
    return request.param


def escape_events(g) -> list[dict]:
    return [e for e in g.events if e["type"] == "escape"]


def acts_after_escape(g, seat: int) -> list[dict]:
    """Events after ``seat``'s escape in which it acts (draws, discards, claims, wins)."""
    i = next(i for i, e in enumerate(g.events) if e["type"] == "escape" and e["actor"] == seat)
    return [e for e in g.events[i + 1:] if e.get("actor") == seat]


# ---------------------------------------------------------------------------- the action (S16, J11)


def test_escape_is_the_last_action_and_offered_at_every_decision():
    g = new_game("happy", MULTI_HANDS, draws=MULTI_DRAWS, escape=True)
    assert g.layout.n == 63 and g.layout.name(ESCAPE_BB) == "escape"
    assert "escape" in legal(g)  # 定缺
    play(g, dingque())
    assert "escape" in legal(g)  # own turn
    play(g, MULTI_ROUND)
    assert g.phase == "claim" and "escape" in legal(g)  # claim
    off = new_game("happy", MULTI_HANDS, draws=MULTI_DRAWS)
    assert off.layout.n == 62 and "escape" not in legal(off)


def test_escape_is_the_only_choice_besides_a_forced_win():
    """S13 in qq: a seat that can win in the last four tiles must win, or leave the table."""
    seat = DRAWS_LEAVING[3]
    hands = list(FORCED_JUNK)
    hands.insert(seat, READY_5P)
    g = new_game("qq", hands, draws="1s", last=last_draws("5p", 3), escape=True)
    play(g, dingque() + [(0, D("1s"))])
    burn(g, wall=3)
    assert g.current_player == seat and legal(g) == {"hu", "escape"}


# ---------------------------------------------------------------------------- qq (S16.2)


QQ_HANDS = [
    "23667788m12234p",        # junk
    "222m444m666p888p9m",     # 对对胡, waits 9m: self-draws it
    "11m33m77m11p33p77p5p",   # 七对, waits 5p
    "555m123p456p78p11m",
]
QQ_DRAWS = "1s 2s 3s 4s 5s 9m 9m"


def test_qq_escape_ends_the_hand_and_pays_16_bei_to_each_seat_not_won():
    """Seed 004 at N = 200, A = 400: seat 1 self-draws, then seat 2 escapes on its turn with two
    others (0 and 3) unwon and the wall far above four tiles: each receives 200·96 = 19200; the
    winner, seat 1, receives nothing. The hand ends at once; the rake is still taken."""
    g = new_game("qq", QQ_HANDS, draws=QQ_DRAWS, escape=True, room_coefficient=200, rake=400)
    play(g, dingque() + [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("4s")), (0, D("5s"))])
    # 对对胡 2 fan, add_base: X = 6·(2+1) = 18 from each of three, ·200.
    assert play(g, [(1, HU)]) == [-3600, 10800, -3600, -3600]
    assert g.current_player == 2 and g.wall_count > 4
    assert play(g, [(2, ESCAPE_BB)]) == [19200 - 400, -400, -38400 - 400, 19200 - 400]
    assert pays(g, "escape") == [(2, 0, 19200), (2, 3, 19200)]
    assert g.over and g.end_reason == "escape" and g.escaped == [False, False, True, False]
    assert not [e for e in g.events if e["type"] == "ryukyoku"]  # no draw checks
    assert g.next_dealer == 0  # no win: the dealer stays (classic mode reads it)


# Seat 1 waits on 6m with 清龙七对 (1111m 22 33 44 55m + 6m): 6 fan (the dragon's 根 counted in
# the pattern), X = 6·32 = 192 > 96. Seat 0 waits on 1p/4p with 清一色 (+ 根 on 1p): at most 48 < 96.
# Seats 2 and 3 are never ready. The wall holds 5 tiles when seat 2 is asked, 4 for seat 3.
LAST_FOUR_HANDS = ["123456789p1123p", "1111223344556m", "258m369m147p258p9p", "478m369m47p369p58p"]


@pytest.mark.parametrize("left,escaper,expected", [
    # Above four tiles: 16倍 = 96 to each.
    (5, 2, [(2, 0, 96), (2, 1, 96), (2, 3, 96)]),
    # In the last four: seat 1 takes its 查大叫 value 192 instead; seat 0's 48 < 96 keeps 96.
    (4, 3, [(3, 0, 96), (3, 1, 192), (3, 2, 96)]),
])
def test_qq_escape_in_the_last_four_tiles_pays_the_larger_of_16_bei_and_chadajiao(left, escaper, expected):
    g = new_game("qq", LAST_FOUR_HANDS, draws="1s", escape=True)
    play(g, dingque() + [(0, D("1s"))])
    burn(g, wall=left)
    assert g.current_player == escaper
    play(g, [(escaper, ESCAPE_BB)])
    assert pays(g, "escape") == expected


# ---------------------------------------------------------------------------- happy (S16.1)


def test_happy_escape_not_ready_pays_chadajiao_claims_and_the_hand_goes_on():
    """Seat 1 self-draws; seat 0 (not ready) escapes on its turn. C_j as if the wall ran out now:
    seat 1 has won (0), seat 2 is ready with 七对 (3 fan, 24), seat 3 is ready with 平胡 (6);
    u = 2 seats in play. 扣豆 = 192·2 + (24 + 6) = 414 to no one; 赔偿 max(6, C_j) = 6, 24, 6."""
    g = new_game("happy", QQ_HANDS, draws=QQ_DRAWS + " 5m 7s 5p", escape=True)
    play(g, dingque() + [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("4s")), (0, D("5s"))])
    assert play(g, [(1, HU)]) == [-24, 72, -24, -24]  # 对对胡 2 + 自摸 1 = 3 fan → 24 each
    play(g, [(2, D("9m")), (3, D("5m"))])
    # Seat 0 holds 23667788m12234p + 7s: not ready; no 花猪, since discarding 7s leaves two suits.
    assert play(g, [(0, ESCAPE_BB)]) == [-414 - 36, 6, 24, 6]
    assert escape_events(g) == [{"type": "escape", "actor": 0, "penalty": 414}]
    assert pays(g, "escape") == [(0, 1, 6), (0, 2, 24), (0, 3, 6)]
    assert not g.over
    # The escaper is skipped: after seat 0 comes seat 1 (won), so seat 2 draws 5p and self-draws
    # 七对 (3 + 1 = 4 fan, 48): only seat 3 pays, not the escaper.
    assert g.current_player == 2
    assert play(g, [(2, HU)]) == [0, 0, 48, -48]
    # One seat left in play: the hand ends there, with no draw checks.
    assert g.over and g.end_reason == "win"
    assert acts_after_escape(g, 0) == []
    assert sum(g.beans) == -414  # zero-sum apart from the 扣豆


def test_happy_escape_by_a_flower_pig_and_the_draw_checks_after_it():
    """The hands of test_exhaustive_draw: seat 2 is a 花猪 and escapes after its 暗杠. C_j = 192 to each
    non-花猪 payee (0, 1, 3), u = 3: 扣豆 = 192·3 + 576 = 1152, 赔偿 192 each. Its kong income
    stays. At the draw it takes no part: 查大叫 and 退税 leave it out, and seat 1's refund skips it."""
    hands = ["2222m333p45p777p9p", "9999m1456m12467p", "8888p1p67m1s2s3s4s6s7s", "345p666p99p111m78m"]
    opening, tail = "9p 8m 5s 6m", "8s 9s 9s"
    rest = _rest(hands, opening, tail)
    g = new_game("happy", hands, draws=opening + " " + _in_turns([0, 1], {}, rest), tail=tail, escape=True)
    play(g, dingque())
    play(g, [(0, KONG("2m")), (0, D("8s")), (1, KONG("9m")), (1, D("9s"))])
    assert play(g, [(2, KONG("8p"))]) == [-12, -12, 36, -12]
    assert play(g, [(2, ESCAPE_BB)]) == [192, 192, -1152 - 576, 192]
    # Seat 3 self-draws 6m: 平胡 1 + 自摸 1 = 2 fan, 12 from seats 0 and 1 only.
    assert play(g, [(3, HU)]) == [-12, -12, 0, 24]
    delta = burn(g)
    assert g.end_reason == "draw"
    assert pays(g, "flower_pig") == []  # the 花猪 left the table
    assert pays(g, "not_ready") == [(1, 0, 24)]  # seat 1 not ready pays the ready seat 0 (S15.2)
    assert pays(g, "kong_refund") == [(1, 0, 12), (1, 3, 12)]  # not to the escaper
    assert delta == [24 + 12, -24 - 24, 0, 12]
    assert acts_after_escape(g, 2) == []
    assert sum(g.beans) == -1152


def test_happy_escape_when_ready_pays_the_minimums_seed_numbers():
    """N = 200: the dealer, ready on its first turn (its best discard leaves a ready hand), escapes.
    C = 0 and u = 3: 扣豆 = 200·192·3 = 115200; 赔偿 = max(200·6, 0) = 1200 to each other seat."""
    hands = ["2222m333p45p777p9p", "9999m1456m12467p", "8888p1p67m1s2s3s4s6s7s", "345p666p99p111m78m"]
    g = new_game("happy", hands, draws="9p", escape=True, room_coefficient=200)
    play(g, dingque())
    assert play(g, [(0, ESCAPE_BB)]) == [-115200 - 3600, 1200, 1200, 1200]
    assert g.current_player == 1 and g.phase == "turn"  # the next seat draws


def test_happy_escape_that_leaves_one_seat_ends_the_hand_with_no_draw_checks():
    """Seats 1 and 3 win on the dealer's 5m; the dealer then escapes, leaving seat 2 alone in play.
    C: seat 2 is ready with 对对胡 on 5m (12); the winners 0. u = 1: 扣豆 = 192 + 12 = 204;
    赔偿 6, 12, 6."""
    g = new_game("happy", MULTI_HANDS, draws=MULTI_DRAWS + " 1s", escape=True)
    play(g, dingque() + MULTI_ROUND)
    assert play(g, [(1, HU), (2, PASS), (3, HU)]) == [-30, 6, 0, 24]
    assert play(g, [(0, ESCAPE_BB)]) == [-228, 6, 12, 6]
    assert g.over and g.end_reason == "escape"
    assert [e["type"] for e in g.events[-3:]] == ["pay", "pay", "end_hand"]  # no 流局 checks


def test_escape_in_a_claim_window_keeps_the_other_answers():
    """Seat 2 escapes while asked about the dealer's 5m; seats 1 and 3 still win on it. Seat 2 is
    ready (C = 0), u = 3: 扣豆 576, 赔偿 6 each. After the two wins only seat 0 is in play."""
    g = new_game("happy", MULTI_HANDS, draws=MULTI_DRAWS, escape=True)
    play(g, dingque() + MULTI_ROUND)
    assert play(g, [(1, HU), (2, ESCAPE_BB), (3, HU)]) == [6 - 30, 6 + 6, -576 - 18, 6 + 24]
    assert [(w.seat, w.source) for w in g.wins] == [(1, 0), (3, 0)]
    assert g.over and g.end_reason == "win"


@pytest.mark.parametrize("preset,expected,kong_made", [
    # happy: seat 2 (ready on 5m, C = 0; u = 3) pays 扣豆 576 and 赔偿 6 to each of 3, 0, 1; seat 3
    # passes, the 面下杠 is made and paid 6 by the seats in play, 0 and 3, not by the escaper.
    ("happy", [6 - 6, 6 + 12, -576 - 18, 6 - 6], True),
    # qq: the escape ends the hand at once: 96 to each of the three; the kong is never made.
    ("qq", [96, 96, -288, 96], False),
])
def test_escape_in_a_rob_window(preset, expected, kong_made):
    hands = list(ROB_HANDS)
    hands[1] = "55m1s13699m44557p"
    g = new_game(preset, hands, draws="5m 2s 3s 4s 5m", tail="6s", escape=True)
    play(g, dingque() + [(0, D("5m")), (1, PONG), (2, PASS), (3, PASS), (1, D("1s")),
                         (2, D("2s")), (3, D("3s")), (0, D("4s")), (1, KONG("5m"))])
    assert g.phase == "rob" and g.current_player == 2
    assert play(g, [(2, ESCAPE_BB)] + [(3, PASS)] * kong_made) == expected
    assert any(e["type"] == "kakan" for e in g.events) == kong_made
    assert g.over != kong_made


def test_dealer_escapes_while_choosing_its_void():
    """The dealer leaves during 定缺 (14 tiles: 123456789m 1123p + 9s; its best discard, 9s, leaves
    a ready 平胡: C = 0). The others choose; the reveal shows no void for it; seat 1 draws first."""
    hands = ["123456789m1123p", "258m369m147p258p9p", "478m369m47p369p58p", "1257m2357p24689p"]
    g = new_game("happy", hands, draws="9s 1s", escape=True)
    assert play(g, [(0, ESCAPE_BB)]) == [-576 - 18, 6, 6, 6]
    play(g, [(1, VOID("s")), (2, VOID("s")), (3, VOID("s"))])
    reveal = next(e for e in g.events if e["type"] == "dingque_reveal")
    assert reveal["voids"] == [None, "s", "s", "s"]
    assert (g.phase, g.current_player, g.drawn) == ("turn", 1, 18)  # 1s


# ---------------------------------------------------------------------------- balances (B4)


def test_short_escaper_splits_what_it_holds_seed_002_a_b():
    """The one-seat-left escape with the dealer holding 100 (70 after paying 30 for the wins). It
    owes 扣豆 204 and 赔偿 6 + 12 + 6 = 24. (a) 70 split 204 : 24 → 62.6 / 7.4 → 63 and 7 (the
    spare bean to the larger remainder); (b) 7 split 6 : 12 : 6 → 1.75 / 3.5 / 1.75 → 2, 3, 2."""
    g = new_game("happy", MULTI_HANDS, draws=MULTI_DRAWS + " 1s", escape=True, bankroll=[100, 50, 50, 50])
    play(g, dingque() + MULTI_ROUND)
    play(g, [(1, HU), (2, PASS), (3, HU)])
    assert g.balances == [70, 56, 50, 74]
    assert play(g, [(0, ESCAPE_BB)]) == [-70, 2, 3, 2]
    assert escape_events(g) == [{"type": "escape", "actor": 0, "penalty": 63, "penalty_owed": 204}]
    assert [(e["to"], e["beans"], e["owed"]) for e in g.events if e["type"] == "pay" and e["reason"] == "escape"] == [
        (1, 2, 6), (2, 3, 12), (3, 2, 6)]
    assert g.balances == [0, 58, 53, 76]
    assert g.events[-1]["balances"] == g.balances


def test_short_discarder_splits_among_its_winners_and_the_rake_takes_what_is_left():
    """qq classic, 一炮多响 with the dealer holding 20 against 6 + 24: one settlement event, so it
    pays 20 split 6 : 24 = 4 and 16. The rake A = 3 then finds it empty: it pays none of it."""
    g = new_game("qq", MULTI_HANDS, draws=MULTI_DRAWS, mode="classic", bankroll=[20, 100, 100, 100], rake=3)
    play(g, dingque() + MULTI_ROUND)
    assert play(g, [(1, HU), (2, PASS), (3, HU)]) == [-20, 4 - 3, -3, 16 - 3]
    assert [(e["to"], e["beans"], e.get("owed")) for e in g.events if e["type"] == "pay"] == [(1, 4, 6), (3, 16, 24)]
    assert g.balances == [0, 101, 97, 113]
    assert sum(g.beans) == -9  # the rake of three seats


def test_gang_pao_transfer_pays_the_income_really_received():
    """qq: seat 0 holds 5 when seat 1's 暗杠 asks 12 of it, so the kong earns 5 + 12 + 12 = 29 beans
    (36 points). On the 杠上炮 each winner is owed 12 or 24 for the win and 29 for the transfer;
    seat 1, holding 10 + 29 = 39, pays it in the ratio 12 : 29 : 24 : 29 → 5, 12, 10, 12."""
    g = new_game("qq", GANG_PAO_HANDS, draws="1s 7m", tail="5p", bankroll=[5, 10, 100, 100])
    play(g, dingque() + [(0, D("1s"))])
    assert play(g, [(1, KONG("5m"))]) == [-5, 29, -12, -12]
    play(g, [(1, D("5p"))])
    assert play(g, [(2, HU), (3, HU)]) == [0, -39, 17, 22]
    assert [(e["to"], e["points"], e["beans"], e["owed"]) for e in g.events[-6:] if e["type"] == "pay"] == [
        (2, 12, 5, 12), (2, 36, 12, 29), (3, 24, 10, 24), (3, 36, 12, 29)]
    assert g.balances == [0, 0, 105, 110]


def test_kong_refund_from_a_short_maker():
    """happy: seat 1 (bankroll 10) earns 36 for its 暗杠, pays 36 for the two 杠上炮 wins, and holds
    10 at the draw, where it owes 12 back to each payer (S15.3): 10 split 12 : 12 : 12 in payment
    order (seats 2, 3, 0) → 4, 3, 3."""
    g = new_game("happy", GANG_PAO_HANDS, draws="1s 7m", tail="5p", bankroll=[100, 10, 100, 100])
    play(g, dingque() + [(0, D("1s")), (1, KONG("5m")), (1, D("5p")), (2, HU), (3, HU)])
    assert g.balances[1] == 10
    assert burn(g) == [3, -10, 4, 3]
    assert pays(g, "kong_refund") == [(1, 0, 3), (1, 2, 4), (1, 3, 3)]
    assert g.balances[1] == 0 and min(g.balances) >= 0


# ---------------------------------------------------------------------------- Joy (J11)


@pytest.mark.parametrize("room", ["popular", "eight_fan", "no_fan"])
def test_joy_escape_pays_the_room_x_to_each_other_seat(room):
    """J11: the dealer escapes on its first turn: X_e = the room's X of an 8-fan win with no bird
    and no dealer (8, 16, 10), ·N = 200 to each other seat; the hand ends, the rake A = 20 taken."""
    g = joy.new_game([joy.PLAIN] * 4, draws="2s 7s", room=room, escape=True, room_coefficient=200, rake=20)
    assert g.layout.n == 77 and "escape" in legal(g)
    x = JOY_ESCAPE_X[room]
    assert play(g, [(0, ESCAPE_JOY)]) == [-3 * 200 * x - 20, 200 * x - 20, 200 * x - 20, 200 * x - 20]
    assert pays(g, "escape") == [(0, s, 200 * x) for s in (1, 2, 3)]
    assert g.over and g.end_reason == "escape" and g.next_dealer == 1
    assert not [e for e in g.events if e["type"] in ("hora", "bird")]


def test_joy_escape_x_option_and_a_short_escaper():
    """escape_x = 5 with the escaper holding 7 against 3·5 = 15: 7 split 5 : 5 : 5 → 3, 2, 2."""
    g = joy.new_game([joy.PLAIN] * 4, draws="2s 7s", escape=True, escape_x=5, bankroll=[7, 0, 0, 0])
    assert play(g, [(0, ESCAPE_JOY)]) == [-7, 3, 2, 2]
    assert g.balances == [0, 3, 2, 2]


def test_joy_win_paid_from_a_short_balance():
    """The dealer self-draws (X doubled for the dealer and the bird on it); seat 2 holds 5: it pays
    5, the others the full amount. Rewards are the beans that moved."""
    g = joy.new_game([joy.WAIT36, joy.JUNK, joy.JUNK, joy.JUNK], draws="6m 7s 1p", bankroll=[0, 1000, 5, 1000])
    delta = play(g, [(0, joy.HU)])
    full = joy.event(g, "hora")["X"] * 4
    assert delta == [2 * full + 5, -full, -5, -full]
    assert g.balances == [2 * full + 5, 1000 - full, 0, 1000 - full]
