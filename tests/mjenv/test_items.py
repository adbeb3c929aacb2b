"""Items (道具, S17 of docs/rules-blood-battle.md) in the readable engine: the rule fields, the
action layout, each item's effect on an arranged wall, the observations, the agents, and
invariants over random games with ``items=2``.

Scripted hands follow test_blood_battle_scenarios.py (dealer seat 0, every decision asked).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import numpy as np
import pytest

from mjenv import blood_battle_v0, joy_mahjong_v0, tiles
from mjenv.actions import BLOOD_BATTLE, JOY_MAHJONG
from mjenv.config import as_dict, blood_battle_rules
from mjenv.engine.blood_battle import SUIT_TILES, BloodBattleGame, scripted_wall, seeded_wall
from mjenv.rules import items as R
from tests.support import legal, play
from tests.mjenv.test_blood_battle_scenarios import D, VOID, dingque
from tests.mjenv.test_blood_battle_scenarios import new_game as scripted_game

T = tiles.parse_tile
IL = BLOOD_BATTLE.with_options(False, True)  # the layout with items, without escape
USE = {name: IL.ITEM + i for i, name in enumerate(R.ITEMS)}


def GIVE(tile: str) -> int:
    return IL.GIVE + T(tile)


def NAME(tile: str) -> int:
    return IL.NAME + T(tile)


# ------------------------------------------------------------------ rule fields (S17.1)

@pytest.mark.parametrize("fields, field, words", [
    ({"items": -1}, "'items'", "count of qiankun"),
    ({"items": 100}, "'items'", "0-99"),
    ({"items": True}, "'items'", "bool"),
    ({"items": "2"}, "'items'", "str"),
    ({"items": {"jinshouzhi": 1}}, "'items'", "unknown item"),
    ({"items": {"toutian": 1.5}}, "'items'", "count of toutian"),
    ({"items": [1, 2]}, "'items'", "four mappings"),
    ({"items": [{}, {}, {}, {"yihua": -2}]}, "'items'[3]", "count of yihua"),
    ({"items": 1, "qiankun_tiles": 14}, "'qiankun_tiles'", "1-13"),
    ({"items": 1, "qiankun_tiles": 0}, "'qiankun_tiles'", "1-13"),
    ({"items": 1, "qianliyan_parts": 0}, "'qianliyan_parts'", "1-55"),
    ({"items": 1, "qianliyan_parts": 56}, "'qianliyan_parts'", "1-55"),
    ({"qiankun_tiles": 9}, "'qiankun_tiles'", "only with items"),
    ({"qianliyan_parts": 3}, "'qianliyan_parts'", "only with items"),
])
def test_bad_item_fields_are_refused_by_name(fields, field, words):
    with pytest.raises(ValueError, match=re.escape(f"rule field {field}")) as err:
        blood_battle_rules(**fields)
    assert words in str(err.value)
    with pytest.raises(ValueError, match=re.escape(f"rule field {field}")):  # the env: the same error
        blood_battle_v0.env(**fields)


def test_inventory_forms():
    assert blood_battle_rules(items=2).items == ((2,) * 5,) * 4
    assert blood_battle_rules(items={"shunfeng": 3}).items == ((0, 0, 0, 0, 3),) * 4
    per_seat = blood_battle_rules(items=[{"qiankun": 1}, {}, {"toutian": 2}, 0]).items
    assert per_seat == ((1, 0, 0, 0, 0), (0,) * 5, (0, 2, 0, 0, 0), (0,) * 5)
    r = blood_battle_rules("qq", items=[{"qiankun": 1}, {}, {"toutian": 2}, 1], qianliyan_parts=6)
    assert blood_battle_rules("qq", **as_dict(r)) == r  # logs and configs rebuild the same rules
    assert "items" not in as_dict(blood_battle_rules())  # off: left out, as before
    with pytest.raises(ValueError, match="unknown rule field"):  # blood battle only
        joy_mahjong_v0.env(items=1)


# ------------------------------------------------------------------ layout, and items off unchanged

def test_item_actions_come_after_the_others():
    assert (BLOOD_BATTLE.n, BLOOD_BATTLE.with_escape(True).n, JOY_MAHJONG.n) == (62, 63, 76)
    both = BLOOD_BATTLE.with_options(True, True)
    assert (IL.ITEM, IL.GIVE, IL.NAME, IL.n) == (62, 67, 94, 121)
    assert (both.ESCAPE, both.ITEM, both.n) == (62, 63, 122)
    assert [both.name(a) for a in (63, 67, 68, 95, 121)] == [
        "item qiankun", "item shunfeng", "give 1m", "name 1m", "name 9s"]
    assert BLOOD_BATTLE.with_options(False, False) is BLOOD_BATTLE
    assert blood_battle_v0.env(items=1).action_space("player_0").n == 121


ITEMS_OFF_DIGEST = "a3ef122f19d824f1a022610abda1db08f60883f5f0739031d25029ddb3882303"
"""The digest below on the commit before items (7ea325f): observations, masks, rewards and state of
15 seeded random games (happy, qq, classic, escape, uint8)."""


def test_items_off_plays_byte_for_byte_as_before():
    h = hashlib.sha256()
    for opts in ({}, {"preset": "qq"}, {"mode": "classic"}, {"escape": True}, {"observation_dtype": "uint8"}):
        for seed in range(3):
            env = blood_battle_v0.env(**opts)
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            h.update(str(env.action_space("player_0").n).encode())
            for _ in env.agent_iter():
                obs, r, term, trunc, _ = env.last()
                h.update(obs["observation"].tobytes())
                h.update(obs["action_mask"].tobytes())
                h.update(np.float64(r).tobytes())
                h.update(env.state().tobytes())
                if term or trunc:
                    env.step(None)
                    continue
                legal_actions = np.flatnonzero(obs["action_mask"])
                env.step(int(legal_actions[rng.integers(legal_actions.size)]))
    assert h.hexdigest() == ITEMS_OFF_DIGEST


# ------------------------------------------------------------------ each item on an arranged wall

# Seat 0 (void 条) holds 1-9m 1122p and draws 5s: giving 5s for 2p completes 123 456 789m 222p 11p;
# seat 1 holds every 1s, so none is in the wall.
HANDS = ["123456789m1122p", "1111222333444s", "666777888999s3m", "3344556677889p"]


ON_TURN = {"toutian": 1, "yihua": 1, "qianliyan": 1, "shunfeng": 1}


def turn_game(preset: str = "happy", **rules) -> BloodBattleGame:
    # one of each item but 乾坤大挪移, so that the hand starts with 定缺
    g = scripted_game(preset, HANDS, draws="5s", items=rules.pop("items", ON_TURN), **rules)
    play(g, dingque("smmm"))
    assert (g.phase, g.current_player) == ("turn", 0)
    return g


@pytest.mark.parametrize("preset", ["happy", "qq"])
def test_toutian_takes_the_nearest_copy_and_offers_zimo(preset):
    g = turn_game(preset)
    assert "hu" not in legal(g)  # a void tile in hand (S2)
    assert {"item toutian", "item yihua", "item qianliyan", "item shunfeng"} <= legal(g)
    where = g.wall.index(T("2p"), g.head)  # the copy nearest the draw end
    before = g.wall_count
    play(g, [(0, USE["toutian"])])
    assert g.phase == "give" and legal(g) == {"give 1m", "give 2m", "give 3m", "give 4m", "give 5m", "give 6m",
                                              "give 7m", "give 8m", "give 9m", "give 1p", "give 2p", "give 5s"}
    play(g, [(0, GIVE("5s"))])
    named = legal(g)
    assert g.phase == "name" and "name 2p" in named
    assert named == {f"name {tiles.name(k)}" for k in set(g.wall[g.head:g.tail])}  # S17.4: live kinds only
    play(g, [(0, NAME("2p"))])
    assert g.wall[where] == T("5s") and g.hands[0][T("2p")] == 3 and g.hands[0][T("5s")] == 0
    assert g.wall_count == before and g.current_player == 0 and g.phase == "turn"  # the turn is kept
    assert "item toutian" not in legal(g) and "item yihua" in legal(g)  # once per turn (S17.2)
    assert g.inventory[0][R.TOUTIAN] == 0 and g.item_uses[0][R.TOUTIAN] == 1
    assert "hu" in legal(g)  # S17.8: 自摸 on the tile received
    play(g, [(0, IL.HU)])
    win = g.wins[0]
    assert (win.seat, win.tile, win.source) == (0, T("2p"), None)
    assert "杠上花" not in {f.name for f in win.score.fans}
    assert sorted(g.wall[g.head:g.tail] + [k for s in range(4) for k in range(27) for _ in range(g.hands[s][k])]
                  + [k for s in range(4) for k in g.won_tiles[s]]) == SUIT_TILES


def test_yihua_swaps_with_a_seeded_wall_tile():
    games = [turn_game() for _ in range(2)]
    for g in games:
        wall = list(g.wall)
        play(g, [(0, USE["yihua"]), (0, GIVE("5s"))])
        ev = g.events[-1]
        assert ev["item"] == "yihua" and ev["give"] == "5s"
        i = ev["index"]
        assert g.head <= i < g.tail and g.wall[i] == T("5s") and ev["take"] == tiles.name(wall[i])
        assert g.drawn == wall[i] and g.hands[0][T("5s")] == 0
        assert g.wall[:i] + g.wall[i + 1:] == wall[:i] + wall[i + 1:]
    assert games[0].events[-1] == games[1].events[-1]  # a pure function of the wall


@pytest.mark.parametrize("parts", [1, 4, 7])
def test_qianliyan_names_the_part_or_none(parts):
    g = turn_game(qianliyan_parts=parts)
    live = g.wall[g.head:g.tail]
    play(g, [(0, USE["qianliyan"])])
    assert len(legal(g)) == 27  # any kind may be named
    play(g, [(0, NAME("2p"))])
    expected = live.index(T("2p")) * parts // len(live)
    assert g.qianliyan[0][T("2p")] == (expected, len(live))
    assert g.events[-1] == {"type": "item", "actor": 0, "item": "qianliyan", "kind": "2p", "part": expected,
                            "wall": len(live)}
    g2 = turn_game(items={"qianliyan": 2}, qianliyan_parts=parts)
    absent = T("1s")  # every copy is in seat 1's hand
    assert absent not in live
    play(g2, [(0, USE["qianliyan"]), (0, IL.NAME + absent)])
    assert g2.qianliyan[0][absent] == (-1, len(live))
    assert "item qianliyan" not in legal(g2)  # once per turn, though one is left
    assert g2.wall == g.wall


def test_shunfeng_sees_the_next_draw_until_it_is_drawn():
    g = turn_game()
    nxt = g.wall[g.head]
    play(g, [(0, USE["shunfeng"])])
    assert g.shunfeng_tile(0) == nxt and g.shunfeng_tile(1) == -1
    play(g, [(0, D("5s"))])
    while g.phase == "claim":
        play(g, [(g.current_player, IL.PASS)])
    assert g.current_player == 1 and g.hands[1][nxt] >= 1 and g.shunfeng_tile(0) == -1


def test_a_swap_of_the_heard_tile_ends_the_knowledge():
    g = turn_game()
    play(g, [(0, USE["shunfeng"])])
    nxt = g.wall[g.head]
    play(g, [(0, USE["toutian"]), (0, GIVE("5s")), (0, IL.NAME + nxt)])
    assert g.events[-1]["index"] == g.head and g.shunfeng_tile(0) == -1


def test_no_items_outside_the_own_turn_nor_with_an_empty_wall():
    g = turn_game()
    play(g, [(0, D("5s"))])
    for _ in range(3):
        if g.phase == "claim":
            assert not any(g.legal_mask()[IL.ITEM:])
            play(g, [(g.current_player, IL.PASS)])
    assert g.phase == "turn" and any(g.legal_mask()[IL.ITEM:IL.GIVE])
    g.head, g._mask = g.tail, None  # S17.7: nothing to swap with or see
    assert not any(g.legal_mask()[IL.ITEM:])


def test_no_escape_inside_an_item_decision():
    g = scripted_game("happy", HANDS, draws="5s", items=1, escape=True)
    lay = g.layout
    assert g.phase == "qiankun" and not g.legal_mask()[lay.ESCAPE]
    for seat in range(4):
        play(g, [(seat, lay.PASS)])
    play(g, dingque("smmm"))
    assert g.legal_mask()[lay.ESCAPE]
    play(g, [(0, lay.ITEM + R.TOUTIAN)])
    assert g.phase == "give" and not g.legal_mask()[lay.ESCAPE]


@pytest.mark.parametrize("n_suited", [10, 13])
def test_qiankun_deals_a_near_flush(n_suited):
    g = scripted_game("happy", HANDS, draws="5s", dealer=2, items=[{"qiankun": 1}, {}, {"qiankun": 1}, {"qiankun": 2}],
                      qiankun_tiles=n_suited)
    assert g.phase == "qiankun" and sum(map(sum, g.hands)) == 0  # decided before the deal
    assert legal(g) == {"item qiankun", "pass"}
    play(g, [(2, USE["qiankun"]), (3, IL.PASS), (0, USE["qiankun"])])  # turn order from the dealer
    assert g.phase == "void" and g.current_player == 2
    assert [c[R.QIANKUN] for c in g.inventory] == [0, 0, 0, 2]
    for seat in (0, 2):
        per_suit = [sum(g.hands[seat][9 * s: 9 * s + 9]) for s in range(3)]
        assert max(per_suit) >= n_suited
    assert sorted(g.wall) == SUIT_TILES and any(e["type"] == "qiankun_deal" for e in g.events)
    again = scripted_game("happy", HANDS, draws="5s", dealer=2, items=[{"qiankun": 1}, {}, {"qiankun": 1}, {"qiankun": 2}],
                          qiankun_tiles=n_suited)
    play(again, [(2, USE["qiankun"]), (3, IL.PASS), (0, USE["qiankun"])])
    assert again.wall == g.wall  # seeded by the wall


# ------------------------------------------------------------------ observations, agents, the compiled engine

def test_item_planes_show_own_knowledge_only():
    env = blood_battle_v0.raw_env(items={"shunfeng": 2, "qianliyan": 1, "yihua": 1})  # yihua: the turn stays open
    env.reset(options={"wall": scripted_wall(HANDS, "5s"), "dealer": 0})
    g, lay, views = env.game, env.game.layout, env.spec.observer.views
    for seat, a in dingque("smmm"):
        env.step(a)
    v = env.observe("player_0")["observation"]
    assert (v[views["item_inventory"], 0] == [0, 0, 1, 1, 2]).all()
    env.step(lay.ITEM + R.SHUNFENG)
    env.step(lay.ITEM + R.QIANLIYAN)
    assert env.observe("player_0")["observation"][views["item_step"], 0].tolist() == [0, 0, 0, 0, 1]
    env.step(lay.NAME + T("2p"))
    nxt = g.wall[g.head]
    mine, theirs = env.observe("player_0")["observation"], env.observe("player_1")["observation"]
    assert mine[views["shunfeng"]][0].tolist() == [float(k == nxt) for k in range(27)]
    assert not theirs[views["shunfeng"]].any() and not theirs[views["qianliyan_wall"]].any()
    part, wall = g.qianliyan[0][T("2p")]
    assert mine[views["qianliyan_part"].start, T("2p")] == pytest.approx((part + 1) / 4)
    assert mine[views["qianliyan_wall"].start, T("2p")] == pytest.approx(wall / 108)
    assert (mine[views["item_uses"], 0][[3, 4]] == 1).all() and (theirs[views["item_uses"], 0][[18, 19]] == 1).all()  # seat 0 is player_1's 上家
    assert env.observation_space("player_0")["observation"].contains(mine)
    assert env.state().shape == env.state_space.shape
    u8 = blood_battle_v0.raw_env(items=2, observation_dtype="uint8", escape=True)
    u8.reset(seed=1)
    for agent in u8.agent_iter(200):
        obs, _, term, trunc, _ = u8.last()
        assert u8.observation_space(agent).contains(obs)
        u8.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))  # items first


def test_the_heuristic_never_uses_items_and_random_does():
    from agents.registry import load_policy
    heuristic = load_policy("heuristic")
    env = blood_battle_v0.env(items=2)
    for seed in range(3):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(heuristic.act(obs["observation"], obs["action_mask"], rng)))
        assert not np.any(env.unwrapped.game.item_uses)
    random = load_policy("random")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(random.act(obs["observation"], obs["action_mask"], rng)))
    assert np.sum(env.unwrapped.game.item_uses) > 0  # random plays items


@pytest.mark.slow
def test_the_shipped_network_never_uses_items():
    """Slow: the network's look-ahead planes. Asked where items are legal, as random plays."""
    from agents.registry import load_policy
    network, random = load_policy("blood_battle_happy"), load_policy("random")
    env = blood_battle_v0.env(items=2)
    env.reset(seed=0)
    rng, asked = np.random.default_rng(0), 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        if mask[IL.ITEM:].any() and asked < 6:
            assert network.act(obs["observation"], mask, rng) < IL.ITEM
            asked += 1
        env.step(int(random.act(obs["observation"], mask, rng)))
    assert asked == 6


# ------------------------------------------------------------------ invariants over random games

def tile_counts(g: BloodBattleGame) -> np.ndarray:
    """Copies of each kind in the live wall, hands, melds, rivers and won piles."""
    out = g.wall[g.head:g.tail] + [k for w in g.won_tiles for k in w]
    out += [m.tile for ms in g.melds for m in ms for _ in range(3 if m.kind == "pong" else 4)]
    counts = np.bincount(out, minlength=27)[:27] + g.river_counts.sum(axis=0)[:27]
    return counts + np.frombuffer(b"".join(g.hands), np.uint8).reshape(4, -1)[:, :27].sum(axis=0)


def check_random_games(games: int) -> Counter:
    """Random play with items=2 (every decision asked): tiles, 顺风耳, 千里眼, 乾坤大挪移, beans."""
    used: Counter = Counter()
    configs = [("happy", "blood", False), ("qq", "blood", False), ("qq", "classic", False), ("happy", "blood", True)]
    for n in range(games):
        preset, mode, escape = configs[n % 4]
        rules = blood_battle_rules(preset, mode=mode, escape=escape, items=2, qiankun_tiles=8 + n % 6)
        wall, dealer = seeded_wall(n)
        g = BloodBattleGame(rules, wall, dealer, auto_forced=False)
        rng = np.random.default_rng(n)
        heard: dict[int, tuple[int, int]] = {}  # seat -> (wall index, kind), tracked from the events
        totals = [0] * 4
        while not g.over:
            assert (tile_counts(g) == 4).all()  # the 108 tiles are conserved
            mask = g.legal_mask()
            assert mask.any()
            if g.phase not in ("turn", "qiankun", "give", "name"):
                assert not mask[g.layout.ITEM:].any()
            n_events = len(g.events)  # one action a step: a 千里眼 step leaves the wall as it was
            delta = g.apply(int(rng.choice(np.flatnonzero(mask))))
            totals = [t + d for t, d in zip(totals, delta)]
            for ev in g.events[n_events:]:
                kind = ev["type"]
                if kind == "item":
                    used[ev["item"]] += 1
                    if ev["item"] == "shunfeng":
                        heard[ev["actor"]] = (g.head, tiles.parse(ev["seen"])[0])
                    elif ev["item"] == "qianliyan":
                        live = g.wall[g.head:g.tail]
                        k = tiles.parse(ev["kind"])[0]
                        part = live.index(k) * rules.qianliyan_parts // len(live) if k in live else -1
                        assert (ev["part"], ev["wall"]) == (part, len(live))
                    else:
                        heard = {s: h for s, h in heard.items() if h[0] != ev["index"]}  # moved by an item
                elif kind == "tsumo" and not ev.get("replacement"):
                    for s, (i, k) in list(heard.items()):
                        if i == g.head - 1 or (g.phase == "turn" and i < g.head):
                            assert tiles.name(k) == ev["pai"]
                            del heard[s]
                elif kind == "tsumo":
                    heard = {s: h for s, h in heard.items() if h[0] < g.tail}
                elif kind == "qiankun_deal":
                    used["qiankun"] += len(ev["users"])
                    for s in ev["users"]:
                        assert max(sum(g.hands[s][9 * u: 9 * u + 9]) for u in range(3)) >= rules.qiankun_tiles
            for s, (i, k) in heard.items():  # the engine's knowledge is the tracked one
                assert g.shunfeng_tile(s) == (k if g.head <= i < g.tail else -1)
        assert totals == g.beans == g.events[-1]["beans"]
        penalty = sum(e.get("penalty", 0) for e in g.events if e["type"] == "escape")
        assert sum(g.beans) == -penalty  # only 扣豆 goes to no one (no rake here)
    return used


def test_invariants_over_random_games():
    used = check_random_games(300)
    assert min(used[name] for name in R.ITEMS) > 50  # every item was played


@pytest.mark.slow
def test_invariants_over_many_random_games():
    used = check_random_games(5000)
    assert min(used[name] for name in R.ITEMS) > 1000
