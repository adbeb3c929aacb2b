"""Scenario tests of the blood-battle engine on scripted walls (docs/rules-blood-battle.md B1-B3, S2-S15).

Each test plays a short script on a wall built with ``scripted_wall``: every hand, draw and kong
replacement is fixed, and every bean amount is worked out by hand from the rules in a comment
(fan, X = 6·2^(fan-1) (+6 for the qq self-draw bonus), who pays whom).

Conventions, unless a test says otherwise:
- the dealer is seat 0 and every seat chooses 条 (s) as its void suit (定缺); N = 1, A = 0, so
  beans equal points;
- hands hold only 万/筒 tiles, so an 条 tile is a *dead* draw: nobody may claim it (S2) and the
  drawer discards it at once;
- hands written as ``JUNK_*`` are never ready (shanten >= 1) and are never woken by a scripted
  discard; they only fill the table.
"""

from __future__ import annotations

import pytest

from mjenv import tiles
from mjenv.actions import BLOOD_BATTLE as L
from mjenv.config import blood_battle_rules
from mjenv.engine.blood_battle import SUIT_TILES, BloodBattleGame, scripted_wall
from mjenv.melds import Meld
from mjenv.rules import beans as bean_rules
from tests.support import T, burn, legal, pays, play, wall_back

PRESETS = ["happy", "qq"]
PONG, ZHIGANG, HU, ROB, PASS = L.PONG, L.DIRECT_KONG, L.HU, L.ROB_KONG, L.PASS


# ---------------------------------------------------------------------------- script helpers


def D(tile: str) -> int:
    """Discard ``tile``."""
    return L.DISCARD + T(tile)


def KONG(tile: str) -> int:
    """暗杠 or 面下杠 of ``tile`` on one's own turn."""
    return L.KONG + T(tile)


def VOID(suit: str) -> int:
    return L.VOID + tiles.SUITS.index(suit)


def new_game(preset: str, hands: list[str], draws: str = "", tail: str = "", last: str = "",
             dealer: int = 0, **rules) -> BloodBattleGame:
    """A hand on a scripted wall. ``draws``: head draws (the first is the dealer's 14th tile);
    ``tail``: kong replacements, in order; ``last``: the final head draws of the wall, in order
    (they sit between the unscripted middle and the tail, so they are drawn when the wall runs
    out). Rules default to N = 1, A = 0. Every decision is asked, forced ones included
    (``auto_forced=False``), so a script spells out each move; see test_forced_moves_are_played_at_once."""
    wall = scripted_wall(hands, draws, wall_back(tail, last), dealer)
    rules = blood_battle_rules(preset, **{"room_coefficient": 1, "rake": 0, **rules})
    return BloodBattleGame(rules, wall, dealer, auto_forced=False)


def dingque(voids: str = "ssss", dealer: int = 0) -> list[tuple[int, int]]:
    """The 定缺 script: seats choose from the dealer on; ``voids[s]`` is seat s's void suit."""
    return [((dealer + i) % 4, VOID(voids[(dealer + i) % 4])) for i in range(4)]


def discards(g: BloodBattleGame) -> set[str]:
    """The legal discards of the seat asked, by name."""
    return {n for n in legal(g) if n.startswith("discard")}


def fans(win) -> dict[str, int]:
    return {f.name: f.fan for f in win.score.fans}


# ---------------------------------------------------------------------------- 1. kong payments (S5)

KONG_JUNK = ["1234689m123579p", None, "1234679m134569p", "123489m2356789p"]
KONG_MAKER_JUNK = "16789m14568p"


def _kong_step(preset: str, kind: str) -> tuple[BloodBattleGame, list[int]]:
    """Seat 1 makes one kong of 5m; returns the game and the deltas of the kong step."""
    hands = list(KONG_JUNK)
    if kind == "direct":  # 555m in hand; the dealer discards the 4th
        hands[1] = "555m" + KONG_MAKER_JUNK
        g = new_game(preset, hands, draws="5m", tail="1s")
        play(g, dingque() + [(0, D("5m"))])
        assert legal(g) == {"pong", "kong on discard", "pass"}
        delta = play(g, [(1, ZHIGANG)])
    elif kind == "added":  # 碰 the dealer's 5m, then draw the 4th and add it
        hands[1] = "55m1s" + KONG_MAKER_JUNK
        g = new_game(preset, hands, draws="5m 2s 3s 4s 5m", tail="6s")
        play(g, dingque() + [(0, D("5m")), (1, PONG), (1, D("1s")),
                             (2, D("2s")), (3, D("3s")), (0, D("4s"))])
        delta = play(g, [(1, KONG("5m"))])
    else:  # concealed: 555m in hand, draw the 4th
        hands[1] = "555m" + KONG_MAKER_JUNK
        g = new_game(preset, hands, draws="1s 5m", tail="2s")
        play(g, dingque() + [(0, D("1s"))])
        delta = play(g, [(1, KONG("5m"))])
    return g, delta


@pytest.mark.parametrize("kind,preset,expected,meld", [
    # 直杠: the discarder (seat 0) alone pays direct_kong_units·6 — happy 2倍 = 12, qq 1倍 = 6.
    ("direct", "happy", [-12, 12, 0, 0], Meld("kong", T("5m"), 0)),
    ("direct", "qq", [-6, 6, 0, 0], Meld("kong", T("5m"), 0)),
    # 面下杠: each of the three seats not yet won pays 1倍 = 6 (both presets).
    ("added", "happy", [-6, 18, -6, -6], Meld("addkong", T("5m"), 0)),
    ("added", "qq", [-6, 18, -6, -6], Meld("addkong", T("5m"), 0)),
    # 暗杠: each of the three pays 2倍 = 12 (both presets).
    ("concealed", "happy", [-12, 36, -12, -12], Meld("ankan", T("5m"))),
    ("concealed", "qq", [-12, 36, -12, -12], Meld("ankan", T("5m"))),
])
def test_kong_payments(kind, preset, expected, meld):
    g, delta = _kong_step(preset, kind)
    assert delta == expected
    assert g.melds[1] == [meld]
    # The kong-maker draws its replacement from the tail and plays on (S5).
    assert (g.phase, g.current_player, g.after_kong) == ("turn", 1, True)
    assert g.drawn == T({"direct": "1s", "added": "6s", "concealed": "2s"}[kind])


@pytest.mark.parametrize("preset", PRESETS)
def test_no_kong_with_an_empty_wall(preset):
    """Seat 1 holds 999p and pongs seat 3's 9p, keeping one 9p in hand; that pong shifts the turn
    order so that seat 1 draws the very last tile, its 4th 5m. With tiles left it may add to the
    pong; with none it may neither 暗杠 nor 面下杠, and seat 2 may not 直杠 the last discard
    (S5: a kong needs a replacement tile)."""
    hands = ["1246789m123568p", "555m999p7p346m124p", "777p12367m12458p", "1246789m123468p"]
    g = new_game(preset, hands, draws="1s 2s 3s 9p", last="5m")
    play(g, dingque() + [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("9p")), (1, PONG)])
    assert "kong 9p" in legal(g)  # 面下杠 offered while the wall has tiles
    play(g, [(1, D("1p"))])
    burn(g, wall=0)
    assert (g.current_player, g.drawn, g.hands[1][T("5m")]) == (1, T("5m"), 4)
    assert not {"kong 5m", "kong 9p"} & legal(g)
    play(g, [(1, D("7p"))])  # seat 2 holds 777p
    assert legal(g) == {"pong", "pass"}
    play(g, [(2, PASS)])
    assert g.end_reason == "draw"


# ---------------------------------------------------------------------------- 2. robbing a kong (S6)

ROB_HANDS = [
    "123446799m4567p",       # junk; the dealer's 14th is the 5m seat 1 pongs
    None,                    # the kong-maker
    "46m123p456p789p11p",    # waits 5m (平胡)
    "67m222p333p888p99p",    # waits 5m / 8m (平胡)
]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("robbers", [(2,), (2, 3)])
def test_rob_an_added_kong(preset, robbers):
    hands = list(ROB_HANDS)
    hands[1] = "55m1s13699m44557p"
    g = new_game(preset, hands, draws="5m 2s 3s 4s 5m", tail="6s")
    # Seats 2 and 3 could win on the dealer's 5m but pass; seat 1 pongs it.
    play(g, dingque() + [(0, D("5m")), (1, PONG), (2, PASS), (3, PASS), (1, D("1s")),
                         (2, D("2s")), (3, D("3s")), (0, D("4s"))])
    play(g, [(1, KONG("5m"))])  # 面下杠 declared: seats 2 and 3 may rob it first
    assert g.phase == "rob" and legal(g) == {"rob kong", "pass"}
    delta = play(g, [(s, ROB if s in robbers else PASS) for s in (2, 3)])
    # Each robber: 平胡 1 + 抢杠胡 1 = 2 fan -> X = 6·2 = 12, paid by the kong-maker (seat 1) as
    # the discarder; the kong is void, so nobody pays for it.
    expected = [0, -12 * len(robbers), 0, 0]
    for s in robbers:
        expected[s] = 12
    assert delta == expected
    assert [fans(w) for w in g.wins] == [{"平胡": 1, "抢杠胡": 1}] * len(robbers)
    assert pays(g, "added_kong") == []
    assert g.melds[1] == [Meld("pong", T("5m"), 0)] and g.hands[1][T("5m")] == 0
    # Play goes on after the last robber (S14): seat 3, or seat 0 when seat 3 robbed too.
    assert (g.phase, g.current_player) == ("turn", 3 if robbers == (2,) else 0)


@pytest.mark.parametrize("preset", PRESETS)
def test_concealed_kong_cannot_be_robbed(preset):
    """Seats 2 and 3 wait on 5m, but a 暗杠 of 5m opens no rob window (S6)."""
    hands = list(ROB_HANDS)
    hands[1] = "555m13699m44557p"
    g = new_game(preset, hands, draws="1s 5m", tail="2s")
    play(g, dingque() + [(0, D("1s"))])
    delta = play(g, [(1, KONG("5m"))])
    assert delta == [-12, 36, -12, -12]  # 暗杠: 2倍 = 12 from each of the three
    assert (g.phase, g.current_player, g.drawn) == ("turn", 1, T("2s"))
    assert not any(e["type"] == "kakan_declare" for e in g.events)
    assert g.wins == []


# ---------------------------------------------------------------------------- 3. 一炮多响 (S4, S14)

MULTI_HANDS = [
    "23779m11334579p",        # junk; draws the 5m and discards it
    "123m456p789p11p46m",     # 平胡 on 5m: 1 fan, X = 6
    "888m222p666p999m5m",     # 对对胡 on 5m: 2 fan, X = 12
    "11m33m77m44p88p33p5m",   # 七对 on 5m: 3 fan, X = 24
]
MULTI_DRAWS = "1s 2s 3s 4s 5m"  # a dead round (so no 地胡), then the dealer draws 5m
MULTI_ROUND = [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("4s")), (0, D("5m"))]


@pytest.mark.parametrize("preset", PRESETS)
def test_two_winners_on_one_discard(preset):
    g = new_game(preset, MULTI_HANDS, draws=MULTI_DRAWS)
    play(g, dingque() + MULTI_ROUND)
    assert g.phase == "claim"
    # Seats 1 and 3 win, seat 2 passes (S7); each settles one-to-one with the discarder:
    # seat 0 pays 6 to seat 1 and 24 to seat 3.
    assert play(g, [(1, HU), (2, PASS), (3, HU)]) == [-30, 6, 0, 24]
    assert [(w.seat, w.source, w.score.X) for w in g.wins] == [(1, 0, 6), (3, 0, 24)]
    # Blood mode: play continues with the seat after the last winner (seat 3) — the discarder,
    # seat 0, draws next; seat 2 is skipped.
    assert (g.over, g.phase, g.current_player) == (False, "turn", 0)


@pytest.mark.parametrize("preset", PRESETS)
def test_three_winners_on_one_discard_end_the_hand(preset):
    g = new_game(preset, MULTI_HANDS, draws=MULTI_DRAWS)
    play(g, dingque() + MULTI_ROUND)
    # Seat 0 pays 6 + 12 + 24 = 42; three seats have won, so the hand ends (S14).
    assert play(g, [(1, HU), (2, HU), (3, HU)]) == [-42, 6, 12, 24]
    assert [fans(w) for w in g.wins] == [{"平胡": 1}, {"对对胡": 2}, {"七对": 3}]
    assert g.over and g.end_reason == "win"


# ---------------------------------------------------------------------------- 4. 杠上花 / 杠上炮 (S9, S12)

@pytest.mark.parametrize("preset,expected,items", [
    # 平胡 1 + 根 1 (the 暗杠) + 杠上花 1 + 自摸加番 1 = 4 fan -> X = 6·8 = 48 from each of three.
    ("happy", [-48, 144, -48, -48], {"平胡": 1, "根": 1, "杠上花": 1, "自摸加番": 1}),
    # 平胡 1 + 根 1 + 杠上花 1 = 3 fan -> 4倍, +1倍 self-draw bonus -> X = 6·5 = 30 from each.
    ("qq", [-30, 90, -30, -30], {"平胡": 1, "根": 1, "杠上花": 1, "自摸加底": 0}),
])
def test_gang_shang_hua(preset, expected, items):
    hands = ["2466789m125567p", "5555m123p456p78p9m", "2366m234667899p", "223788m1235789p"]
    g = new_game(preset, hands, draws="1s 9m", tail="9p")
    play(g, dingque() + [(0, D("1s"))])
    assert play(g, [(1, KONG("5m"))]) == [-12, 36, -12, -12]  # 暗杠: 12 from each
    # The replacement 9p completes 123p 456p 789p 99m + 5555m.
    assert play(g, [(1, HU)]) == expected
    assert fans(g.wins[0]) == items


GANG_PAO_HANDS = [
    "1336799m233579p",         # junk
    "5555m223m113567p",        # makes a 暗杠, draws 5p from the tail and discards it
    "123m789m46p11p678p",      # 平胡 on 5p
    "222p888p444m666m5p",      # 对对胡 on 5p
]


@pytest.mark.parametrize("preset,win_delta,draw_delta", [
    # Seat 2: 平胡 1 + 杠上炮 1 = 2 fan -> X = 12; seat 3: 对对胡 2 + 杠上炮 1 = 3 fan -> X = 24.
    # happy: no transfer. At the draw seat 1 (not ready) refunds its kong income, 12 to each
    # payer — seats 2 and 3 included although they have won (S15.3).
    ("happy", [0, -36, 12, 24], [12, -36, 12, 12]),
    # qq: besides X, seat 1 hands each winner the full income of its kong, 3·12 = 36 (S12):
    # seat 2 gets 12 + 36 = 48, seat 3 gets 24 + 36 = 60. Transferred income is not refunded.
    ("qq", [0, -108, 48, 60], [0, 0, 0, 0]),
])
def test_gang_shang_pao(preset, win_delta, draw_delta):
    g = new_game(preset, GANG_PAO_HANDS, draws="1s 7m", tail="5p")
    play(g, dingque() + [(0, D("1s"))])
    assert play(g, [(1, KONG("5m"))]) == [-12, 36, -12, -12]
    play(g, [(1, D("5p"))])
    assert play(g, [(2, HU), (3, HU)]) == win_delta
    assert [fans(w) for w in g.wins] == [{"平胡": 1, "杠上炮": 1}, {"对对胡": 2, "杠上炮": 1}]
    assert (g.phase, g.current_player) == ("turn", 0)  # after the last winner, seat 3
    # Seats 0 and 1 play the wall out; neither is ready, neither is a 花猪.
    assert burn(g) == draw_delta
    assert g.end_reason == "draw"
    assert sum(g.beans) == 0


# ---------------------------------------------------------------------------- 5. blood battle to three wins (S14)

@pytest.mark.parametrize("preset,first,second", [
    # Seat 1 self-draws 对对胡: happy 2 + 自摸 1 = 3 fan -> X = 24; qq 6·(2+1) = 18.
    # Seat 2 self-draws 七对: happy 3 + 1 = 4 fan -> X = 48; qq 6·(4+1) = 30.
    ("happy", [-24, 72, -24, -24], [-48, 0, 96, -48]),
    ("qq", [-18, 54, -18, -18], [-30, 0, 60, -30]),
])
def test_blood_battle_runs_to_three_winners(preset, first, second):
    hands = [
        "23667788m12234p",        # junk
        "222m444m666p888p9m",     # 对对胡, waits 9m
        "11m33m77m11p33p77p5p",   # 七对, waits 5p
        "555m123p456p78p11m",     # draws the 4th 5m; then waits 6p / 9p
    ]
    g = new_game(preset, hands, draws="1s 2s 3s 4s 5s 9m 9m 5m 7s 5p 8s 9p", tail="6s")
    play(g, dingque() + [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("4s")), (0, D("5s"))])
    # Win 1: seat 1 self-draws 9m; all three others pay.
    assert play(g, [(1, HU)]) == first
    # Seat 2 draws and discards 9m: seat 1 would win on it again but, having won, is not asked;
    # seat 3 draws next.
    play(g, [(2, D("9m"))])
    assert (g.phase, g.current_player) == ("turn", 3)
    # 暗杠 by seat 3 after a win: only the seats still in play (0 and 2) pay 12 each.
    assert play(g, [(3, KONG("5m"))]) == [-12, 0, -12, 24]
    play(g, [(3, D("6s")), (0, D("7s"))])
    # Win 2: seat 2 self-draws 5p (seat 1 is skipped in turn order); only seats 0 and 3 pay.
    assert play(g, [(2, HU)]) == second
    play(g, [(3, D("8s"))])
    # Win 3: seat 3 wins on seat 0's 9p: 平胡 1 + 根 1 (the 5m kong) = 2 fan -> X = 12.
    # Seats 1 and 2 hold no claim (they have won); the third win ends the hand.
    assert play(g, [(0, D("9p")), (3, HU)]) == [-12, 0, 0, 12]
    assert [(w.seat, w.source) for w in g.wins] == [(1, None), (2, None), (3, 0)]
    assert g.over and g.end_reason == "win"
    assert sum(g.beans) == 0


# ---------------------------------------------------------------------------- 6. exhaustive draw (S15)


def _rest(hands: list[str], *scripted: str) -> list[int]:
    """The tiles of the wall that no hand or scripted draw names, in kind order."""
    left = list(SUIT_TILES)
    for k in tiles.parse(" ".join([*hands, *scripted])):
        left.remove(k)
    return left


def _in_turns(order: list[int], own: dict[int, list[int]], shared: list[int]) -> str:
    """Head draws going round ``order`` with no claims until every tile is used: a seat in
    ``own`` draws its own tiles, the others the next tile of ``shared``."""
    own = {s: list(ks) for s, ks in own.items()}
    shared = list(shared)
    out, i = [], 0
    while shared or any(own.values()):
        seat = order[i % len(order)]
        out.append((own[seat] if seat in own else shared).pop(0))
        i += 1
    return " ".join(tiles.name(k) for k in out)


@pytest.mark.parametrize("preset,pig_points", [
    ("happy", 192),  # the cap amount 6·2^(6-1)
    ("qq", 96),      # 16倍 = 6·16
])
def test_exhaustive_draw(preset, pig_points):
    """Seat 0 ready (with a 暗杠), seat 1 not ready (with a 暗杠), seat 2 a 花猪 (with a 暗杠),
    seat 3 won early. Then the wall runs out."""
    hands = [
        "2222m333p45p777p9p",       # + 9p: 暗杠 2m, then 333p 45p 777p 99p waits 3p / 6p / 9p
        "9999m1456m12467p",         # + 8m: 暗杠 9m, then 1456m 8m 12467p: not ready
        "8888p1p67m1s2s3s4s6s7s",   # + 5s: 暗杠 8p; holds 万, 筒 and 条 (void 条): 花猪
        "345p666p99p111m78m",       # self-draws 6m
    ]
    # Seat 0's waits are all held elsewhere (3p, 6p, 9p), so it can never win, yet it is ready.
    opening, tail = "9p 8m 5s 6m", "8s 9s 9s"
    rest = _rest(hands, opening, tail)
    pig_draws = [k for k in rest if k // 9 == 2][:16]  # the 花猪 only draws 条 and discards them
    shared = list(rest)
    for k in pig_draws:
        shared.remove(k)
    draws = opening + " " + _in_turns([0, 1, 2], {2: pig_draws}, shared)
    g = new_game(preset, hands, draws=draws, tail=tail)

    play(g, dingque())
    assert play(g, [(0, KONG("2m")), (0, D("8s"))]) == [36, -12, -12, -12]
    assert play(g, [(1, KONG("9m")), (1, D("9s"))]) == [-12, 36, -12, -12]
    assert play(g, [(2, KONG("8p")), (2, D("9s"))]) == [-12, -12, 36, -12]
    # Seat 3: 111m 678m 345p 666p 99p, 平胡 self-drawn: happy 1 + 1 = 2 fan -> 12; qq 6·(1+1) = 12.
    assert play(g, [(3, HU)]) == [-12, -12, -12, 36]

    delta = burn(g)
    assert g.end_reason == "draw"
    # S15.1 查花猪: seat 2 pays every non-花猪 seat, the winner (seat 3) included.
    assert pays(g, "flower_pig") == [(2, 0, pig_points), (2, 1, pig_points), (2, 3, pig_points)]
    # S15.2 查大叫: seat 1 (not ready) pays the ready seat 0 its largest X over its waits:
    # 3p -> 333p 345p 777p 99p + 2222m: 平胡 1 + 根 2 (the kong, 3333p) = 3 fan -> 24;
    # 6p -> 平胡 1 + 根 1 = 12; 9p -> 平胡 1 + 根 1 = 12. The 花猪 neither pays nor is paid here.
    assert pays(g, "not_ready") == [(1, 0, 24)]
    # S15.3 退税: seats 1 and 2 (not ready / 花猪) refund 12 to each seat that paid their kong;
    # seat 0 (ready) keeps its income.
    assert pays(g, "kong_refund") == sorted(
        [(1, 0, 12), (1, 2, 12), (1, 3, 12), (2, 0, 12), (2, 1, 12), (2, 3, 12)])
    p = pig_points
    assert delta == [p + 24 + 12 + 12, p - 24 - 36 + 12, -3 * p + 12 - 36, p + 12 + 12]
    # The checks run in the order of S15.
    order = {"flower_pig": 0, "not_ready": 1, "kong_refund": 2}
    steps = [order[e["reason"]] for e in g.events if e["type"] == "pay" and e["reason"] in order]
    assert steps == sorted(steps)
    assert sum(g.beans) == 0


# ---------------------------------------------------------------------------- 7. forced win in the last four (S13)

READY_5P = "123m456m789p234p5p"  # waits 2p / 5p (平胡)
FORCED_JUNK = ["256789m1445678p", "235579m1346689p", "237789m1267799p"]


# Wall count after each seat's head draw (55 after the deal; seat 1 draws first): seat s
# draws leaving 54 - (s - 1) % 4 - 4j, so the seat holding the 5p wait varies with ``left``.
DRAWS_LEAVING = {5: 2, 4: 3, 3: 0, 2: 1, 1: 2}


def last_draws(tile: str, left: int, tail: int = 0) -> str:
    """Dead 条 tiles for the last 8 head draws before ``tail`` replacement tiles, ``tile`` drawn
    when ``left`` tiles remain in the wall."""
    dead = "6s 7s 8s 9s 6s 7s 8s 9s".split()
    dead[tail - left - 1] = tile
    return " ".join(dead)


# (tiles left after the draw, forced in qq): the window opens with a draw of one of the last
# four tiles; the fifth-last tile (drawn with 5 left, leaving 4) is outside it (S13).
WINDOW = [(5, False), (4, False), (3, True), (1, True)]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("left, forced", WINDOW)
def test_last_four_forced_self_draw(preset, left, forced):
    """The seat that waits on 5p self-draws it leaving ``left`` tiles in the wall."""
    seat = DRAWS_LEAVING[left]
    hands = list(FORCED_JUNK)
    hands.insert(seat, READY_5P)
    g = new_game(preset, hands, draws="1s", last=last_draws("5p", left))
    play(g, dingque())
    burn(g, wall=left)
    assert (g.current_player, g.drawn, g.wall_count) == (seat, T("5p"), left)
    if forced and preset == "qq":
        assert legal(g) == {"hu"}
        # 平胡 self-drawn, qq: 6·(1+1) = 12 from each of the three.
        expected = [-12] * 4
        expected[seat] = 36
        assert play(g, [(seat, HU)]) == expected
    else:
        assert {"hu", "discard 5p"} <= legal(g)  # the seat may pass on the win


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("left, forced", WINDOW)
def test_last_four_forced_win_on_a_discard(preset, left, forced):
    """The seat that draws 5p leaving ``left`` tiles discards it; the next seat waits on it."""
    drawer = DRAWS_LEAVING[left]
    waiter = (drawer + 1) % 4
    hands = list(FORCED_JUNK)
    hands.insert(waiter, READY_5P)
    g = new_game(preset, hands, draws="1s", last=last_draws("5p", left))
    play(g, dingque())
    burn(g, wall=left)
    assert (g.current_player, g.drawn) == (drawer, T("5p"))
    play(g, [(drawer, D("5p"))])
    assert g.current_player == waiter
    if forced and preset == "qq":
        assert legal(g) == {"hu"}
        expected = [0] * 4
        expected[waiter], expected[drawer] = 6, -6  # 平胡 on a discard: X = 6
        assert play(g, [(waiter, HU)]) == expected
    else:
        assert legal(g) == {"hu", "pass"}


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("left, forced", [(7, False), (3, True)])
def test_last_four_forced_rob_of_an_added_kong(preset, left, forced):
    """Seat 1 pongs the dealer's 5m and adds the 4th, drawn leaving ``left`` tiles; seats 2 and
    3 wait on 5m. Inside the window robbing is forced (qq): 抢杠胡 is each robber's only action."""
    hands = list(ROB_HANDS)
    hands[1] = "55m1s13699m44557p"
    g = new_game(preset, hands, draws="5m", tail="6s", last=last_draws("5m", left, tail=1))
    play(g, dingque() + [(0, D("5m")), (1, PONG), (2, PASS), (3, PASS), (1, D("1s"))])
    burn(g, wall=left)
    assert (g.current_player, g.drawn, g.wall_count) == (1, T("5m"), left)
    play(g, [(1, KONG("5m"))])
    assert (g.phase, g.current_player) == ("rob", 2)
    if forced and preset == "qq":
        assert legal(g) == {"rob kong"}
        play(g, [(2, ROB)])
        assert legal(g) == {"rob kong"}
        play(g, [(3, ROB)])
        assert [w.seat for w in g.wins] == [2, 3]
    else:
        assert legal(g) == {"rob kong", "pass"}


# ---------------------------------------------------------------------------- 8. 定缺 masks (S2)

@pytest.mark.parametrize("preset", PRESETS)
def test_void_suit_discards_and_no_win_while_holding_one(preset):
    """Seat 2 chooses 万 void and holds 11m next to 123p 456p 789p 55s."""
    hands = ["3566789m125567p", "3466m124566899p", "123p456p789p55s11m", "3347889m237789p"]
    g = new_game(preset, hands, draws="5s 1s 9s 2s 1p 3s 9s 5s")
    play(g, dingque("ssms"))
    # The dealer holds one 条 (its void): that is its only legal discard.
    assert legal(g) == {"discard 5s"}
    play(g, [(0, D("5s"))])
    # 5s would make 555s + 11m + three chows, but seat 2 holds void tiles: 碰 yes, 胡 no.
    assert (g.current_player, legal(g)) == (2, {"pong", "pass"})
    play(g, [(2, PASS), (1, D("1s"))])
    assert (g.current_player, discards(g), "hu" in legal(g)) == (2, {"discard 1m"}, False)
    play(g, [(2, D("1m")), (3, D("2s"))])
    # The dealer, rid of its void tile, may discard anything it holds.
    assert discards(g) == {f"discard {tiles.name(k)}" for k in range(27) if g.hands[0][k]}
    play(g, [(0, D("1p")), (1, D("3s"))])
    assert discards(g) == {"discard 1m"}
    play(g, [(2, D("1m")), (3, D("5s"))])
    # Without void tiles the hand 123p 456p 789p 55s 99s now wins on the same 5s.
    assert (g.current_player, legal(g)) == (2, {"hu", "pong", "pass"})
    assert play(g, [(2, HU)]) == [0, 0, 6, -6]  # 平胡 on a discard: X = 6


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("void,asked", [("s", False), ("m", True)])
def test_no_claim_of_a_void_suit_tile(preset, void, asked):
    """Seat 1 holds 888s; the dealer discards the 4th 8s."""
    hands = ["12589m11237899p", "888s3478m245788p", "11235m12467899p", "33577889m23456p"]
    g = new_game(preset, hands, draws="8s 1s")
    play(g, dingque("s" + void + "ss") + [(0, D("8s"))])
    if asked:
        assert (g.phase, g.current_player) == ("claim", 1)
        assert legal(g) == {"pong", "kong on discard", "pass"}
    else:  # 条 is seat 1's void: no 碰, no 直杠, so nobody is asked and seat 1 draws
        assert (g.phase, g.current_player, g.drawn) == ("turn", 1, T("1s"))


# ---------------------------------------------------------------------------- 9. 天胡 / 地胡 (S8)

READY_1P = "123m456m789p234p1p"  # waits 1p / 4p; with 1p: 123m 456m 789p 234p 11p, 平胡
DI_JUNK = ["14556778m26789p", "223446778m3556p", "2356m235677889p"]


@pytest.mark.parametrize("preset,expected,items", [
    # 天胡 6 + 自摸加番 1 = 7 fan, capped at 6 -> X = 6·32 = 192 from each of three.
    ("happy", [576, -192, -192, -192], {"天胡": 6, "自摸加番": 1}),
    # 天胡 6 fan -> 32倍, +1倍 self-draw bonus -> X = 6·33 = 198 from each.
    ("qq", [594, -198, -198, -198], {"天胡": 6, "自摸加底": 0}),
])
def test_tian_hu(preset, expected, items):
    g = new_game(preset, [READY_1P, *DI_JUNK], draws="1p")
    play(g, dingque())
    assert play(g, [(0, HU)]) == expected
    assert fans(g.wins[0]) == items


@pytest.mark.parametrize("preset,route,expected", [
    # Self-drawn on the first draw: 地胡 6 (+1 fan happy, capped at 6) -> 192 from each (happy);
    # qq 6·(32+1) = 198 from each.
    ("happy", "self_draw", [-192, 576, -192, -192]),
    ("qq", "self_draw", [-198, 594, -198, -198]),
    # On the dealer's first discard: 地胡 6 -> X = 192, paid by the dealer alone.
    ("happy", "discard", [-192, 192, 0, 0]),
    ("qq", "discard", [-192, 192, 0, 0]),
])
def test_di_hu(preset, route, expected):
    hands = [DI_JUNK[0], READY_1P, DI_JUNK[1], DI_JUNK[2]]
    if route == "self_draw":
        g = new_game(preset, hands, draws="1s 1p")
        play(g, dingque() + [(0, D("1s"))])
    else:
        g = new_game(preset, hands, draws="1p")
        play(g, dingque() + [(0, D("1p"))])
    assert play(g, [(1, HU)]) == expected
    assert "地胡" in fans(g.wins[0])


@pytest.mark.parametrize("preset", PRESETS)
def test_no_di_hu_after_a_pong(preset):
    """Seat 2 pongs the dealer's 9m; seat 1 then wins on seat 2's 1p before its first discard."""
    hands = [DI_JUNK[0], READY_1P, "1347899m123569p", DI_JUNK[2]]
    g = new_game(preset, hands, draws="9m")
    play(g, dingque() + [(0, D("9m")), (2, PONG), (2, D("1p"))])
    assert play(g, [(1, HU)]) == [0, 6, -6, 0]  # plain 平胡: X = 6
    assert fans(g.wins[0]) == {"平胡": 1}


# ---------------------------------------------------------------------------- 10. qq classic mode (S1, S14)

def test_classic_first_win_ends_the_hand():
    hands = ["24556789m14467p", "123m456m789p234p5p", "133778m2367889p", "234m678m11p46p789p"]
    g = new_game("qq", hands, draws="1s 2s 3s 4s 5s 6s 5p", mode="classic")
    play(g, dingque() + [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("4s")),
                         (0, D("5s")), (1, D("6s")), (2, D("5p"))])
    # Seats 3 and 1 both win on seat 2's 5p (平胡, X = 6 each); the first win ends the hand and
    # the discarder (点炮) deals next.
    assert play(g, [(3, HU), (1, HU)]) == [0, 6, -12, 6]
    assert g.over and g.end_reason == "win"
    assert g.next_dealer == 2


def test_classic_draw_keeps_the_dealer():
    hands = ["1234689m234688p", "1345778m345899p", "13345m34556699p", "156789m2345678p"]
    g = new_game("qq", hands, draws="1s", dealer=2, mode="classic")
    play(g, dingque(dealer=2))
    assert burn(g) == [0, 0, 0, 0]  # nobody ready, no 花猪, no kongs
    assert g.end_reason == "draw"
    assert g.next_dealer == 2


# ---------------------------------------------------------------------------- 11. B3 worked example (B1, B3)

def test_b3_settlement_injected():
    # N = 200, A = 400, three losers at X = 18: gross 18·200 = 3600 per loser, 3·3600 = 10800
    # to the winner; each seat also pays the rake.
    net = bean_rules.settle([(1, 0, 18), (2, 0, 18), (3, 0, 18)], 200, 400)
    assert net == [10800 - 400, -3600 - 400, -3600 - 400, -3600 - 400] == [10400, -4000, -4000, -4000]
    assert sum(net) == -4 * 400 == -1600


def test_b3_settlement_from_a_real_hand():
    """qq classic: seat 1 self-draws 对对胡 (222m 444m 666p 888p 99m) after one dead round."""
    hands = ["1566788m125689p", "222m444m666p888p9m", "23366m22355779p", "37788m12345799p"]
    g = new_game("qq", hands, draws="1s 2s 3s 4s 5s 9m", mode="classic",
                 room_coefficient=200, rake=400)
    play(g, dingque() + [(0, D("1s")), (1, D("2s")), (2, D("3s")), (3, D("4s")), (0, D("5s"))])
    # 对对胡 2 fan, add_base: X = 6·(2+1) = 18 per loser. Winner 3·18·200 − 400 = 10400;
    # each loser 18·200 + 400 = 4000. The win ends the (classic) hand, so the rake is in this step.
    assert play(g, [(1, HU)]) == [-4000, 10400, -4000, -4000]
    assert g.wins[0].score.X == 18 and fans(g.wins[0]) == {"对对胡": 2, "自摸加底": 0}
    assert g.beans == [-4000, 10400, -4000, -4000]


@pytest.mark.parametrize("winners,expected", [
    # Two winners: blood mode goes on, so no rake yet: 6·3 = 18 and 24·3 = 72 from seat 0.
    ((1, 3), [-90, 18, 0, 72]),
    # Three winners end the hand: points·N, and A = 7 from every seat in the same step.
    ((1, 2, 3), [-42 * 3 - 7, 6 * 3 - 7, 12 * 3 - 7, 24 * 3 - 7]),
])
def test_room_coefficient_and_rake_in_the_engine(winners, expected):
    g = new_game("happy", MULTI_HANDS, draws=MULTI_DRAWS, room_coefficient=3, rake=7)
    play(g, dingque() + MULTI_ROUND)
    assert play(g, [(s, HU if s in winners else PASS) for s in (1, 2, 3)]) == expected
    assert g.over == (len(winners) == 3)


def test_forced_moves_are_played_at_once():
    """docs/rules-blood-battle.md#forced-moves: a seat with no choice is not asked. With the default
    auto_forced the dealer's
    lone void-suit tile is discarded within the step of the last 定缺 choice."""
    hands = ["23779m11334579p", "123m456p789p11p46m", "888m222p666p999m5m", "11m33m77m44p88p33p5m"]
    g = BloodBattleGame(blood_battle_rules("qq"), scripted_wall(hands, "1s 5m"), 0)
    for seat in range(4):
        assert g.current_player == seat
        g.apply(VOID("s"))
    assert g.rivers[0] == [T("1s")]  # played unasked: 1s was the dealer's only legal discard
    assert g.current_player == 1 and g.phase == "turn" and g.drawn == T("5m")
    assert len(g.legal_actions()) >= 2
