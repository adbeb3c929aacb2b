"""PettingZoo conformance, hidden information, bad input and matches for joy_mahjong_v0."""

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from mjenv import joy_mahjong_v0, tiles
from mjenv.engine.joy_mahjong import IllegalActionError, JOY_TILES
from tests.support import (check_hidden_tiles_do_not_leak, check_illegal_action_changes_nothing,
                     check_reference_table, check_shared_planes, check_spaces_are_stable, play_aec, play_until)

ROOMS = ["popular", "eight_fan", "no_fan"]


@pytest.mark.parametrize("room", ROOMS)
def test_api(room):
    api_test(joy_mahjong_v0.env(room=room), num_cycles=300)


def test_api_match():
    api_test(joy_mahjong_v0.env(match_hands=3, rake=5), num_cycles=600)


@pytest.mark.parametrize("room", ROOMS)
def test_seed(room):
    seed_test(lambda: joy_mahjong_v0.env(room=room), num_cycles=300)


@pytest.mark.parametrize("room", ROOMS)
def test_render(room):
    render_test(lambda render_mode=None: joy_mahjong_v0.env(room=room, render_mode=render_mode))


def test_registry_make():
    if not hasattr(pettingzoo, "make"):
        return
    e = pettingzoo.make("aec", "mjenv/joy_mahjong_v0", room="eight_fan")
    e.reset(seed=1)
    assert e.unwrapped.rules.room == "eight_fan"


def test_spaces_are_stable_and_mask_is_int8():
    check_spaces_are_stable(joy_mahjong_v0.raw_env())


def test_hidden_tiles_do_not_leak():
    check_hidden_tiles_do_not_leak(joy_mahjong_v0.raw_env())


def test_concealed_kong_kind_is_hidden():
    """Others see that a seat has a 暗杠, not of which kind."""
    e = joy_mahjong_v0.raw_env()
    e.reset(seed=0)
    from mjenv.melds import Meld
    g = e.game
    a, b = g.clone(), g.clone()
    a.melds[1].append(Meld("ankan", 4))
    b.melds[1].append(Meld("ankan", 20))
    v = e.observer.views
    for seat in (0, 2, 3):
        np.testing.assert_array_equal(e.observer.observe(a, seat), e.observer.observe(b, seat))
    own = e.observer.observe(a, 1)
    assert own[v["own_ankan"]][0, 4] == 1 and own[v["ankan_count"]][0, 0] == 0.25


def test_illegal_action_raises_and_changes_nothing():
    check_illegal_action_changes_nothing(joy_mahjong_v0.raw_env(), r"illegal action .*legal: .*discard",
                                         IllegalActionError)


@pytest.mark.parametrize("kwargs, field", [
    ({"room": "vip"}, "room"),
    ({"rooom": "popular"}, "rooom"),
    ({"rake": -1}, "rake"),
    ({"room_coefficient": 0}, "room_coefficient"),
    ({"room_coefficient": 2.0}, "room_coefficient"),
    ({"discard_payers": "everyone"}, "discard_payers"),
    ({"wucaishen_blocks_wufanhe": 1}, "wucaishen_blocks_wufanhe"),
    ({"render_mode": "rgb_array"}, "render_mode"),
    ({"match_hands": 0}, "match_hands"),
    ({"tile_style": "emoji"}, "tile_style"),
    ({"preset": "vip"}, "preset"),
])
def test_bad_options_fail_naming_the_field(kwargs, field):
    with pytest.raises((ValueError, TypeError), match=field):
        joy_mahjong_v0.env(**kwargs)


def test_rule_fields_by_name():
    e = joy_mahjong_v0.raw_env(room="no_fan", discard_payers="all_mcr", room_coefficient=200, rake=20)
    r = e.rules
    assert (r.room, r.discard_payers, r.room_coefficient, r.rake) == ("no_fan", "all_mcr", 200, 20)


def test_rules_file(tmp_path):
    f = tmp_path / "joy.yaml"
    f.write_text("game: joy_mahjong\npreset: standard\nrules: {room: eight_fan, rake: 3}\n")
    e = joy_mahjong_v0.raw_env(rules_file=str(f), rake=4)
    assert (e.rules.room, e.rules.rake) == ("eight_fan", 4)
    with pytest.raises(ValueError, match="joy_mahjong"):
        joy_mahjong_v0.raw_env(rules_file="configs/blood_battle_qq.yaml")


def test_action_names():
    e = joy_mahjong_v0.raw_env()
    assert e.action_name(0) == "discard 1m"
    assert e.action_name(33) == "discard P"
    assert e.action_name(34 + 27) == "kong E"
    assert [e.action_name(a) for a in (68, 69, 70)] == ["chow low", "chow mid", "chow high"]
    assert [e.action_name(a) for a in range(71, 76)] == ["pong", "kong on discard", "hu", "rob kong", "pass"]
    assert e.action_name_zh(31) == "打 中" and e.action_name_zh(71) == "碰" and e.action_name_zh(68).startswith("吃")
    with pytest.raises(ValueError):
        e.action_name(76)


def test_reference_table_matches_the_spaces():
    check_reference_table(joy_mahjong_v0.raw_env(), joy_mahjong_v0)


def test_observation_planes_decode_to_the_game():
    rng = np.random.default_rng(4)
    e = joy_mahjong_v0.raw_env(room_coefficient=5)
    e.reset(seed=9)
    play_until(e, lambda e: e.game.phase == "turn" and len(e.game.rivers[e.game.dealer]) >= 6, rng)
    g, v = e.game, e.observer.views
    seat = g.current_player
    obs = e.observe(e.agent_selection)["observation"]
    check_shared_planes(e, obs, 144)
    assert obs[v["wild"]][0].argmax() == g.wild and obs[v["wild"]].sum() == 1
    assert obs[v["indicator"]][0].argmax() == g.indicator
    for r in range(4):
        s = (seat + r) % 4
        assert obs[v["flowers"]][r, 0] * 8 == len(g.flowers[s])
        assert obs[v["chow"]][r].sum() == sum(m.kind == "chow" for m in g.melds[s])
    assert obs[v["seat_wind"]][g.seat_winds[seat]].all() and obs[v["seat_wind"]].sum() == 34
    assert obs[v["prevailing"]][g.prevailing_wind].all() and obs[v["prevailing"]].sum() == 34
    assert obs[v["phase"]][0].all() and obs[v["phase"]].sum() == 34
    assert obs[v["rules"], 0].tolist() == [1, 0, 0, 0]


def test_state_holds_the_wall_with_its_flowers():
    e = joy_mahjong_v0.raw_env()
    e.reset(seed=12)
    g, v = e.game, e.observer.state_views
    st = e.state()
    rest = g.wall[g.head : g.tail]
    rows = st[v["wall_order"]]
    flowers = st[v["wall_flowers"]].reshape(-1)
    for i, k in enumerate(rest):
        if k < 34:
            assert rows[i, k] == 1 and rows[i].sum() == 1
        else:
            assert rows[i].sum() == 0 and flowers[i] == 1
    for s in range(4):
        np.testing.assert_array_equal(st[v["hands"]][4 * s : 4 * s + 4].sum(axis=0), g.hands[s])


def test_reset_options_script_the_first_hand():
    wall = list(reversed(JOY_TILES))
    e = joy_mahjong_v0.raw_env()
    e.reset(seed=0, options={"wall": wall, "dealer": 2, "prevailing_wind": 3, "ignored": 1})
    g = e.game
    assert (g.dealer, g.prevailing_wind, g.seat_winds) == (2, 3, [2, 3, 0, 1])
    assert g.events[0]["wall"] == wall
    assert e.agent_selection == "player_2"


def test_same_seed_same_hand_and_seeded_winds():
    a, b = joy_mahjong_v0.raw_env(), joy_mahjong_v0.raw_env()
    seen = set()
    for seed in range(12):
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.game.wall == b.game.wall and a.game.dealer == b.game.dealer
        assert a.game.prevailing_wind == b.game.prevailing_wind
        seen.add((a.game.dealer, a.game.prevailing_wind))
    assert len(seen) > 4  # dealer and prevailing wind come from the seed


def test_match_passes_the_deal_and_advances_the_wind():
    """J10: the deal passes every hand, the prevailing wind advances every four hands from East;
    each hand's wall is a pure function of (seed, hand index); beans accumulate."""
    from mjenv.engine.joy_mahjong import seeded_wall
    e = joy_mahjong_v0.env(match_hands=16, rake=3)
    e.reset(seed=21)
    raw = e.unwrapped
    hands = []

    def note_hand(e):
        """Remember each new hand of the match with its dealer and wind."""
        g = raw.game
        if not hands or hands[-1][0] is not g:
            hands.append((g, g.dealer, g.prevailing_wind))

    totals = play_aec(e, np.random.default_rng(0), on_turn=note_hand)
    assert len(hands) == 16
    first = hands[0][1]
    for i, (g, dealer, wind) in enumerate(hands):
        assert dealer == (first + i) % 4
        assert wind == i // 4
        assert g.events[0]["wall"] == seeded_wall(21, i)[0]
    assert sum(totals.values()) == -4 * 3 * 16
    assert list(totals.values()) == raw.match_beans


def test_render_ansi_shows_the_wildcard_and_flowers():
    e = joy_mahjong_v0.raw_env(render_mode="ansi", tile_style="unicode")
    e.reset(seed=4)
    text = e.render()
    assert isinstance(text, str) and "财神" in text and tiles.glyph(e.game.wild) in text
