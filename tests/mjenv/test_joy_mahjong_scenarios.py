"""Scenario tests of the Joy Mahjong engine on scripted walls (docs/rules-joy-mahjong.md J1-J10, B1).

Each test plays a short script on a wall built with ``scripted_wall``: the four hands, the head
draws (the dealer's 14th, then the 财神 indicator, then the draws of play) and the tail
(补花 and kong replacements, in order) are fixed. Fans come from ``mjenv.rules.joy``; the tests
here check what the engine decides — who may act, who wins, who pays and how often the base X
is doubled (J7 dealer, J8 bird) — reading X from the ``hora`` event.

Conventions, unless a test says otherwise: the dealer is seat 0, the indicator is 7s so the
wildcard is 8s, which nobody holds; N = 1, A = 0, so beans equal points.
``JUNK`` (13 distinct tiles with gaps of four) is never ready and can never 吃 or 碰.
``WAIT36`` (123m 45m 789p 234s 55s) waits on 3m / 6m; on 6m by discard it is worth 7 fan
(门前清 平和 无财神 连六), self-drawn 9 (不求人 instead of 门前清).
"""

from __future__ import annotations

import pytest

from mjenv import tiles
from mjenv.actions import JOY_MAHJONG as L
from mjenv.config import joy_mahjong_rules
from mjenv.engine.joy_mahjong import JOY_TILES, JoyMahjongGame, scripted_wall
from mjenv.melds import Meld
from tests.support import T, burn, legal, pays, play, tile_total, wall_back

JUNK = "159m159pESWNCFP"
PLAIN = "2345678m234789p"  # four seats can hold it: no honours, no 1m 9m 5p 6p 1s 9s
WAIT36 = "123m45m789p234s55s"
PONG, ZHIGANG, HU, ROB, PASS = L.PONG, L.DIRECT_KONG, L.HU, L.ROB_KONG, L.PASS
CHOW_LOW, CHOW_MID, CHOW_HIGH = L.CHOW, L.CHOW + 1, L.CHOW + 2


def D(tile: str) -> int:
    """Discard ``tile``."""
    return L.DISCARD + T(tile)


def KONG(tile: str) -> int:
    """暗杠 or 加杠 of ``tile`` on one's own turn."""
    return L.KONG + T(tile)


def new_game(hands: list[str], draws: str = "", tail: str = "", last: str = "", dealer: int = 0,
             prevailing: int = 0, **rules) -> JoyMahjongGame:
    """A hand on a scripted wall. ``draws``: head draws (the dealer's 14th, the indicator, then
    play); ``tail``: replacements in order; ``last``: the final head draws of the wall, in order.
    Rules default to the popular room with N = 1, A = 0."""
    wall = scripted_wall(hands, draws, wall_back(tail, last), dealer)
    rules = joy_mahjong_rules(**{"room_coefficient": 1, "rake": 0, **rules})
    return JoyMahjongGame(rules, wall, dealer, prevailing)


def event(g: JoyMahjongGame, kind: str) -> dict:
    (ev,) = [e for e in g.events if e["type"] == kind]
    return ev


def fan_names(g: JoyMahjongGame) -> set[str]:
    return {name for name, _ in event(g, "hora")["fans"]}


# ---------------------------------------------------------------------------- 1. flowers (J1)


def test_buhua_during_the_deal_in_turn_order_from_the_dealer():
    """Dealer seat 2 is dealt 1f and draws 4f as its 14th; seat 0 is dealt 2f 3f. 补花 goes
    dealer first (1f, then 4f), then seats 3, 0, 1 in turn order; the replacement of seat 0's 3f
    is itself a flower (5f) and is replaced again."""
    hands = ["2f3f" + "159m159pESWNC", JUNK, "1f" + "159m19pESWNCFP", JUNK]
    g = new_game(hands, draws="4f 7s", tail="1s 2s 3s 5f 4s", dealer=2)
    hua = [(e["actor"], e["pai"]) for e in g.events if e["type"] == "hua"]
    assert hua == [(2, "1f"), (2, "4f"), (0, "2f"), (0, "3f"), (0, "5f")]
    assert g.flowers == [[T("2f"), T("3f"), T("5f")], [], [T("1f"), T("4f")], []]
    # Replacements come from the tail in order: 1s 2s to the dealer, 3s 5f 4s to seat 0.
    assert g.hands[2][T("1s")] == 1 and g.hands[2][T("2s")] == 1 and g.drawn == T("2s")
    assert g.hands[0][T("3s")] == 1 and g.hands[0][T("4s")] == 1
    assert sum(g.hands[2]) == 14 and sum(g.hands[0]) == 13
    assert (g.indicator, g.wild) == (T("7s"), T("8s"))
    assert (g.phase, g.current_player) == ("turn", 2)
    assert tile_total(g) == 144


def test_buhua_in_play_is_automatic_and_public():
    """Seat 1 draws a flower: it is set aside, replaced from the tail, and seat 1 plays on with the
    replacement; nobody is asked about the flower."""
    g = new_game([PLAIN] * 4, draws="2s 7s 6f", tail="5s")
    play(g, [(0, D("2s"))])
    assert (g.phase, g.current_player, g.drawn, g.after_kong) == ("turn", 1, T("5s"), False)
    assert g.flowers[1] == [T("6f")]
    assert g.events[-2:] == [{"type": "hua", "actor": 1, "pai": "6f"},
                             {"type": "tsumo", "actor": 1, "pai": "5s", "replacement": True}]
    assert tile_total(g) == 144


# ---------------------------------------------------------------------------- 2. the 财神 (J2)


@pytest.mark.parametrize("indicator, wild", [
    ("5p", "6p"), ("9m", "1m"), ("9s", "1s"),    # within a suit, 9 -> 1
    ("E", "S"), ("N", "C"), ("C", "F"), ("P", "E"),  # 东南西北中发白 cycling: 北 -> 中, 白 -> 东
])
def test_wildcard_indicator(indicator, wild):
    g = new_game([PLAIN] * 4, draws=f"2s {indicator}")
    assert (g.indicator, g.wild) == (T(indicator), T(wild))
    assert event(g, "indicator") == {"type": "indicator", "pai": indicator, "wild": wild}


def test_a_flower_indicator_is_set_aside_and_the_next_tile_flipped():
    g = new_game([PLAIN] * 4, draws="2s 3f 8f 9m")
    assert g.indicator_flowers == [T("3f"), T("8f")]
    assert (g.indicator, g.wild) == (T("9m"), T("1m"))
    assert g.flowers == [[], [], [], []]  # out of play: nobody's flowers
    assert tile_total(g) == 144


# ---------------------------------------------------------------------------- 3. 吃 (J3)

CHOW_HANDS = [JUNK, "34m67m19pESWNCFP", "46m19p19sESWNCFP", "46m19p19sESWNCFP"]


@pytest.mark.parametrize("action, low, left", [
    (CHOW_LOW, "5m", "34m"),    # 5m 6m 7m: the claimed tile is the lowest
    (CHOW_MID, "4m", "37m"),    # 4m 5m 6m
    (CHOW_HIGH, "3m", "67m"),   # 3m 4m 5m
])
def test_chow_only_from_the_left_in_three_shapes(action, low, left):
    """The dealer discards 5m: only seat 1 (on the dealer's right, so the dealer is its left) is
    asked; seats 2 and 3 hold 4m 6m as well but may not 吃 from the dealer."""
    g = new_game(CHOW_HANDS, draws="5m 7s")
    play(g, [(0, D("5m"))])
    assert (g.phase, g.current_player, g.queue) == ("claim", 1, [1])
    assert legal(g) == {"chow low", "chow mid", "chow high", "pass"}
    play(g, [(1, action)])
    assert g.melds[1] == [Meld("chow", T(low), 0)]
    assert tiles.fmt([k for k in range(27) for _ in range(g.hands[1][k]) if k < 9]) == left
    assert (g.phase, g.current_player, g.drawn) == ("turn", 1, None)
    assert event(g, "chi")["consumed"] == [tiles.name(k) for k in sorted(set(range(T(low), T(low) + 3)) - {T("5m")})]
    assert g.rivers[0] == [] and tile_total(g) == 144


def test_chow_is_not_offered_to_the_other_seats():
    """Seat 1 discards 5m after drawing it: seat 2 (its left is seat 1) may 吃, seat 3 and the
    dealer may not, though all hold 4m 6m."""
    hands = ["46m19p19sESWNCFP", "19m159p9sESWNCFP", "46m19p19sESWNCFP", "46m19p19sESWNCFP"]
    g = new_game(hands, draws="2s 7s 5m")
    play(g, [(0, D("2s"))])
    assert g.current_player == 1 and g.drawn == T("5m")
    play(g, [(1, D("5m"))])
    assert (g.phase, g.current_player, g.queue) == ("claim", 2, [2])
    assert legal(g) == {"chow mid", "pass"}


# ---------------------------------------------------------------------------- 4. wildcards and claims (J2)


def test_a_wildcard_never_takes_part_in_a_chow():
    """Indicator 3m: 4m is wild. Seat 1 holds 3m 4m 6m 7m; on the dealer's 5m only 5m 6m 7m (no
    wildcard) may be made."""
    g = new_game(CHOW_HANDS, draws="5m 3m")
    assert g.wild == T("4m")
    play(g, [(0, D("5m"))])
    assert (g.phase, g.current_player) == ("claim", 1)
    assert legal(g) == {"chow low", "pass"}


def test_a_discarded_wildcard_cannot_be_claimed():
    """Indicator 4m: 5m is wild. Seat 1 holds 55m (a 碰 of any other kind) and seat 2 would win on
    5m, yet nobody is asked about the dealer's wild 5m: seat 1 simply draws."""
    hands = ["19m159p9sESWNCFP", "55m19p19sESWNCFP", "123m46m789p234s55s", JUNK]  # seat 2 waits on 5m
    g = new_game(hands, draws="5m 4m 2p")
    assert g.wild == T("5m")
    play(g, [(0, D("5m"))])
    assert (g.phase, g.current_player, g.drawn) == ("turn", 1, T("2p"))


def test_four_wildcards_cannot_be_konged():
    """Indicator 4m: seat 0 holds the four 5m wildcards; no kong of them is offered."""
    other = "19m159p9sESWNCFP"
    g = new_game(["5555m19p1sESWNCF", other, other, other], draws="P 4m")
    assert g.wild == T("5m") and g.hands[0][T("5m")] == 4
    assert "kong 5m" not in legal(g)
    assert "discard 5m" in legal(g)  # a wildcard may be discarded



FOUR_WILD = "147m234p678sEEEE"  # with 东 wild: 1m pair + 456m 789m (four stand-ins) + 234p 678s
NO_EAST = "159m159p19sSWNCF"  # never ready, holds no 东 (the wildcard) and no 7m


def test_four_wildcards_are_offered_the_discard_win():
    """J2: indicator 白 makes 东 wild; seat 1 holds all four and wins on the dealer's 1m."""
    g = new_game([NO_EAST, FOUR_WILD, NO_EAST, NO_EAST], draws="2s P")
    assert g.wild == T("E")
    play(g, [(0, D("1m"))])
    assert (g.phase, g.current_player) == ("claim", 1)
    assert legal(g) == {"hu", "pass"}
    play(g, [(1, HU)])
    assert [(w.seat, w.tile, w.source) for w in g.wins] == [(1, T("1m"), 0)]
    assert event(g, "hora")["fan"] == 7


def test_four_wildcards_are_offered_the_self_drawn_win():
    """J2: the same seat passes the 1m, then self-draws 7m (1m 4m 7m + four 东: 11m 456m 789m)."""
    g = new_game([NO_EAST, FOUR_WILD, NO_EAST, NO_EAST], draws="2s P 7m")
    play(g, [(0, D("1m")), (1, PASS)])
    assert (g.phase, g.current_player, g.drawn) == ("turn", 1, T("7m"))
    assert "hu" in legal(g)
    play(g, [(1, HU)])
    assert [(w.seat, w.tile, w.source) for w in g.wins] == [(1, T("7m"), None)]
    assert event(g, "hora")["fan"] == 9


def test_the_fifth_copy_limit_counts_only_ones_own_tiles():
    """J2: seat 1 pongs the dealer's 9p, so all other three copies are on the table; seat 2
    (123m 456m 789m 123s 9p) still wins on a self-drawn wildcard 8s standing for a second 9p:
    only its own tiles (one 9p) count towards the limit."""
    no_9p = "159m15p19sESWNCF"
    g = new_game(["159m159p19sSWNCF", "99p2468m2468pESW", "123m456m789m123s9p", no_9p],
                 draws="2s 7s 8s")
    assert g.wild == T("8s")
    play(g, [(0, D("9p")), (1, PONG), (2, PASS), (1, D("E"))])
    assert (g.current_player, g.drawn) == (2, T("8s"))
    assert "hu" in legal(g)
    play(g, [(2, HU)])
    assert g.wins[0].score.substitution == ((T("8s"), T("9p")),)

# ---------------------------------------------------------------------------- 5. 截和 (J3)

JIEHU_HANDS = [JUNK, WAIT36, "123p456p789p111s6m", JUNK]  # seat 2 waits on 6m (pair)


@pytest.mark.parametrize("answers, winner", [
    ((HU, HU), 1),      # both declare 胡: the first in turn order from the discarder wins
    ((PASS, HU), 2),    # the first passes: the second wins
    ((HU, PASS), 1),
])
def test_jiehu_first_claimant_in_turn_order_wins(answers, winner):
    g = new_game(JIEHU_HANDS, draws="6m 7s 2p")
    play(g, [(0, D("6m"))])
    assert g.queue == [1, 2]
    assert "hu" in legal(g)
    play(g, [(1, answers[0])])
    assert g.phase == "claim" and g.current_player == 2  # asked although seat 1 declared 胡
    assert "hu" in legal(g)
    play(g, [(2, answers[1])])
    assert g.over and g.end_reason == "win"
    assert [w.seat for w in g.wins] == [winner]
    assert [p[:2] for p in pays(g)] == [(0, winner)]  # only the discarder pays the one winner
    assert tile_total(g) == 144


# ---------------------------------------------------------------------------- 6. 抢杠和 (J6)

ROB_HANDS = [JUNK, WAIT36, "66m19p19sESWNCFP", JUNK]


def test_rob_an_added_kong_the_kong_maker_pays():
    """Seat 2 碰s the dealer's 6m (seat 1 passes its win), later draws the 4th 6m and adds it; seat 1
    robs the kong. Only the kong-maker pays, as a discarder: X, not doubled by the dealer (seat 0
    is neither winner nor payer); the bird 2p (rank 2 -> seat 1, the winner) doubles it."""
    g = new_game(ROB_HANDS, draws="6m 7s C F P 6m 2p")
    play(g, [(0, D("6m")), (1, PASS), (2, PONG), (2, D("E")),
             (3, D("C")), (0, D("F")), (1, D("P"))])
    assert g.current_player == 2 and g.drawn == T("6m")
    assert "kong 6m" in legal(g)
    play(g, [(2, KONG("6m"))])
    assert (g.phase, g.current_player) == ("rob", 1)
    assert legal(g) == {"rob kong", "pass"}
    play(g, [(1, ROB)])
    assert "抢杠和" in fan_names(g)
    X = event(g, "hora")["X"]
    assert event(g, "bird") == {"type": "bird", "pai": "2p", "seat": 1}
    assert pays(g) == [(2, 1, 2 * X)]
    assert g.melds[2] == [Meld("pong", T("6m"), 0)]  # the kong is void; the 碰 stays
    assert tile_total(g) == 144


# ---------------------------------------------------------------------------- 7. 杠上开花 vs 补花 (J9)

KONG_WINNER = "45m789p555s123p11s"  # waits 3m / 6m; 暗杠 of 5s once the 4th is drawn


@pytest.mark.parametrize("tail, flowers, gskh", [
    ("6m", 0, True),        # the kong's own replacement wins: 杠上开花
    ("1f 6m", 1, False),    # the kong replacement is a flower; its replacement wins: plain self-draw
])
def test_kong_replacement_win(tail, flowers, gskh):
    hands = [JUNK, KONG_WINNER, JUNK, JUNK]
    g = new_game(hands, draws="N 7s 5s", tail=tail)
    play(g, [(0, D("N")), (1, KONG("5s"))])
    assert (g.current_player, g.drawn, g.after_kong) == (1, T("6m"), gskh)
    assert len(g.flowers[1]) == flowers
    play(g, [(1, HU)])
    assert ("杠上开花" in fan_names(g)) == gskh
    assert event(g, "hora")["target"] == 1  # self-drawn
    assert [p[0] for p in pays(g)] == [0, 2, 3]


def test_win_on_a_flower_replacement_is_a_plain_self_draw():
    hands = [JUNK, WAIT36, JUNK, JUNK]
    g = new_game(hands, draws="N 7s 2f", tail="6m")
    play(g, [(0, D("N"))])
    assert (g.current_player, g.drawn, g.after_kong) == (1, T("6m"), False)
    play(g, [(1, HU)])
    names = fan_names(g)
    assert "杠上开花" not in names and "花牌" in names
    assert event(g, "hora")["target"] == 1
    assert [p[0] for p in pays(g)] == [0, 2, 3]


# ---------------------------------------------------------------------------- 8. rooms (J5)


def test_eight_fan_room_refuses_a_small_win_in_the_mask():
    """WAIT36 on the dealer's 6m is worth 7 fan: the popular room offers 胡, the eight_fan room
    does not (seat 1 is still asked, for its 吃); self-drawn it is 9 fan and allowed."""
    popular = new_game([JUNK, WAIT36, JUNK, JUNK], draws="6m 7s")
    play(popular, [(0, D("6m"))])
    assert "hu" in legal(popular)
    eight = new_game([JUNK, WAIT36, JUNK, JUNK], draws="6m 7s", room="eight_fan")
    play(eight, [(0, D("6m"))])
    assert (eight.phase, eight.current_player) == ("claim", 1)
    assert legal(eight) == {"chow high", "pass"}  # 4m 5m + 6m
    selfdraw = new_game([JUNK, WAIT36, JUNK, JUNK], draws="N 7s 6m", room="eight_fan")
    play(selfdraw, [(0, D("N"))])
    assert "hu" in legal(selfdraw)
    play(selfdraw, [(1, HU)])
    assert event(selfdraw, "hora")["X"] == event(selfdraw, "hora")["fan"] + 8


def test_eight_fan_room_does_not_ask_a_seat_whose_only_claim_is_a_small_win():
    hands = [JUNK, JUNK, JUNK, JUNK]
    hands[2] = "123p567p789s111s6m"  # single wait on 6m: 门前清, 无财神, 单钓将, 幺九刻: < 8
    g = new_game(hands, draws="6m 7s 2p", room="eight_fan")
    play(g, [(0, D("6m"))])
    assert (g.phase, g.current_player, g.drawn) == ("turn", 1, T("2p"))


@pytest.mark.parametrize("room", ["popular", "no_fan"])
def test_room_base(room):
    g = new_game([JUNK, WAIT36, JUNK, JUNK], draws="6m 7s 3p", room=room)
    play(g, [(0, D("6m")), (1, HU)])
    hora = event(g, "hora")
    assert hora["X"] == (10 if room == "no_fan" else hora["fan"])


# ---------------------------------------------------------------------------- 9. bird and dealer (J7, J8)


@pytest.mark.parametrize("bird, seat", [
    ("1p", 0), ("5s", 0), ("9m", 0), ("E", 0), ("C", 0),   # 1, 5, 9 -> the dealer
    ("2p", 1), ("6s", 1), ("S", 1), ("F", 1),              # 2, 6 -> 下家
    ("3p", 2), ("7p", 2), ("W", 2), ("P", 2),              # 3, 7 -> 对家
    ("4p", 3), ("8p", 3), ("N", 3),                        # 4, 8 -> 上家
])
def test_bird_positions_on_a_discard_win(bird, seat):
    """Seat 1 wins on the dealer's 6m. J7: the dealer pays, so ×2. J8: a bird on the winner (1) or
    the discarder (0) doubles again; on seats 2 or 3 it does nothing."""
    g = new_game([JUNK, WAIT36, JUNK, JUNK], draws=f"6m 7s {bird}")
    play(g, [(0, D("6m")), (1, HU)])
    assert event(g, "bird") == {"type": "bird", "pai": bird, "seat": seat}
    X = event(g, "hora")["X"]
    assert pays(g) == [(0, 1, X * 2 * (2 if seat in (0, 1) else 1))]


def test_bird_skips_flowers():
    g = new_game([JUNK, WAIT36, JUNK, JUNK], draws="6m 7s 5f 3p")
    play(g, [(0, D("6m")), (1, HU)])
    assert event(g, "bird")["seat"] == 2


@pytest.mark.parametrize("dealer, discarder_is_dealer", [(0, True), (2, False)])
def test_dealer_doubling_on_a_discard_win(dealer, discarder_is_dealer):
    """Seat 1 wins on seat 0's 6m; the bird (3p from the dealer) never lands on seats 0 or 1."""
    bird = "3p" if dealer == 0 else "2p"  # dealer 0: 3 -> seat 2; dealer 2: 2 -> seat 3
    hands = [JUNK, WAIT36, JUNK, JUNK]
    if dealer == 0:
        g = new_game(hands, draws=f"6m 7s {bird}")
        play(g, [(0, D("6m")), (1, HU)])
    else:  # dealer 2 discards N, seat 3 draws and discards P, seat 0 draws 6m and discards it
        g = new_game(hands, draws=f"N 7s P 6m {bird}", dealer=2)
        play(g, [(2, D("N")), (3, D("P")), (0, D("6m")), (1, HU)])
    X = event(g, "hora")["X"]
    assert event(g, "bird")["seat"] not in (0, 1)
    assert pays(g) == [(0, 1, X * (2 if discarder_is_dealer else 1))]


@pytest.mark.parametrize("bird, expected", [
    ("1p", [4, 4, 4]),   # the bird on the winner (the dealer): every payment ×2 ×2
    ("2p", [4, 2, 2]),   # on seat 1: only seat 1's payment doubles again
    ("4p", [2, 2, 4]),   # on seat 3
])
def test_dealer_self_draw_with_bird(bird, expected):
    """The dealer self-draws WAIT36 + 6m as its 14th tile (J7: each pair holds the dealer, ×2)."""
    g = new_game([WAIT36, JUNK, JUNK, JUNK], draws=f"6m 7s {bird}")
    assert "hu" in legal(g)
    play(g, [(0, HU)])
    X = event(g, "hora")["X"]
    assert pays(g) == [(s, 0, X * f) for s, f in zip((1, 2, 3), expected)]
    assert sum(g.beans) == 0 and g.beans[0] == X * sum(expected)


def test_beans_with_room_coefficient_and_rake():
    """B1 on a real win: each loser pays X·(dealer ×2)·(bird on the winner ×2)·N + A, the winner
    receives the sum less A; the seats sum to -4A. (B3's amounts are checked with injected X in
    test_joy_settlement.)"""
    g = new_game([WAIT36, JUNK, JUNK, JUNK], draws="6m 7s 1p", room_coefficient=200, rake=20)
    play(g, [(0, HU)])
    X = event(g, "hora")["X"]
    gross = 200 * X * 4  # dealer ×2, bird on the winner ×2
    assert g.beans == [3 * gross - 20, -gross - 20, -gross - 20, -gross - 20]
    assert sum(g.beans) == -4 * 20


# ---------------------------------------------------------------------------- 10. 荒庄 and the last tile (J10, J9)


def test_exhaustive_draw_takes_only_the_rake():
    g = new_game([PLAIN] * 4, draws="2s 7s", rake=20)
    total = burn(g)
    assert g.over and g.end_reason == "draw"
    assert total == [-20] * 4 and g.beans == [-20] * 4
    assert not [e for e in g.events if e["type"] == "pay"]
    assert g.wall_count == 0 and tile_total(g) == 144
    assert sorted(k for fl in g.flowers for k in fl) == list(range(34, 42))


# Tail fillers for the flowers drawn in play (all dead: nobody claims or wins on them).
FILLERS = "1s 1s 1s 1s 7m 7m 7m 7m".split()


def flowers_at_the_end(last: str, n: int) -> dict:
    """Wall script: the head's final draws are ``last`` then ``n`` flowers that are never drawn;
    the other 8 - n flowers lie in the middle and are replaced from the tail."""
    end = " ".join([last] + [f"{i}f" for i in range(1, n + 1)])
    return {"tail": " ".join(FILLERS[:8 - n]), "last": end}


@pytest.mark.parametrize("flowers_left", [0, 2])
def test_last_tile_win_the_bird_is_the_winning_tile(flowers_left):
    """Seat 2 self-draws its 6m as the last tile of the wall (妙手回春): the wall is then empty, or
    holds only flowers, which count as nothing left to draw (J8). The bird is the winning tile
    itself: 6 -> 下家 of the dealer, seat 1, a loser, whose payment alone doubles again; the
    dealer pays ×2 (J7), seat 3 pays X."""
    hands = [JUNK, JUNK, WAIT36, JUNK]
    # The other 6m copies are dealt out of reach, in the middle.
    g = new_game(hands, draws="N 7s", **flowers_at_the_end("6m", flowers_left))
    burn(g, wall=flowers_left)
    assert (g.current_player, g.drawn) == (2, T("6m"))
    play(g, [(2, HU)])
    assert "妙手回春" in fan_names(g)
    assert event(g, "bird") == {"type": "bird", "pai": "6m", "seat": 1}
    X = event(g, "hora")["X"]
    assert pays(g) == [(0, 2, 2 * X), (1, 2, 2 * X), (3, 2, X)]


@pytest.mark.parametrize("flowers_left", [0, 2])
def test_no_kong_after_the_last_tile(flowers_left):
    """Seat 2 holds four 5s: a kong is offered on its turns, but not once it has drawn the last
    tile (nothing but flowers left: no replacement could follow, J8)."""
    hands = [JUNK, JUNK, "5555s19m19pESWCF", JUNK]
    g = new_game(hands, draws="N 7s", **flowers_at_the_end("3p", flowers_left))
    burn(g, wall=g.wall_count - 2)  # seats 1 and 2 draw
    assert g.current_player == 2 and "kong 5s" in legal(g)
    burn(g, wall=flowers_left)
    assert (g.current_player, g.drawn) == (2, T("3p"))
    assert "kong 5s" not in legal(g)


JUNK_6M = "1569m19pESWNCFP"  # never ready; holds the 6m it discards after the last draw


@pytest.mark.parametrize("flowers_left", [0, 2])
def test_win_on_the_discard_after_the_last_tile_the_bird_is_the_last_tile(flowers_left):
    """Dealer seat 3. Seat 1 draws the wall's last tile, 3p (with 0 or only flowers left), and
    discards 6m; seat 2 wins on it (海底捞月). The bird is the last tile drawn, 3p — not the
    winning 6m: 3 counts from the dealer to seat 1, the discarder, so the payment doubles. The
    dealer is neither winner nor payer: no J7 doubling."""
    hands = [JUNK, JUNK_6M, WAIT36, JUNK]
    g = new_game(hands, draws="N 7s", dealer=3, **flowers_at_the_end("3p", flowers_left))
    burn(g, wall=flowers_left)
    assert (g.current_player, g.drawn) == (1, T("3p"))
    play(g, [(1, D("6m"))])
    assert (g.phase, g.current_player) == ("claim", 2)
    play(g, [(2, HU)])
    assert "海底捞月" in fan_names(g)
    assert event(g, "bird") == {"type": "bird", "pai": "3p", "seat": 1}
    X = event(g, "hora")["X"]
    assert pays(g) == [(1, 2, 2 * X)]


# ---------------------------------------------------------------------------- 11. the wall


def test_scripted_wall_conserves_the_144_tiles():
    wall = scripted_wall([JUNK, WAIT36, JUNK, JUNK], "6m 7s", "1f 2f")
    assert sorted(wall) == JOY_TILES and len(wall) == 144
    with pytest.raises(ValueError, match="one copy of 1f"):
        scripted_wall([JUNK, WAIT36, JUNK, JUNK], "1f", "1f")
