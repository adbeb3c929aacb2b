"""PettingZoo conformance, hidden information, bad input and matches for joy_mahjong_v0."""

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from mjenv import joy_mahjong_v0, tiles
from mjenv.engine.joy_mahjong import IllegalActionError, JOY_TILES

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
    e = joy_mahjong_v0.raw_env()
    e.reset(seed=3)
    assert e.observation_space("player_0") is e.observation_space("player_0")
    assert e.action_space("player_1") is e.action_space("player_2")
    obs = e.observe(e.agent_selection)
    assert obs["action_mask"].dtype == np.int8
    assert e.observation_space("player_0").contains(obs)
    assert obs is not e.observe(e.agent_selection)
    assert e.state_space.contains(e.state())


def _play_until(e, pred, rng):
    while not pred(e):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))


def test_hidden_tiles_do_not_leak():
    """Two states differing only in another seat's concealed tiles look the same to a seat."""
    rng = np.random.default_rng(0)
    e = joy_mahjong_v0.raw_env()
    e.reset(seed=5)
    _play_until(e, lambda e: e.game.phase == "turn" and len(e.game.rivers[e.game.dealer]) >= 3, rng)
    g = e.game
    me = g.current_player
    other = (me + 2) % 4
    twin = g.clone()
    held = next(k for k in range(34) if twin.hands[other][k])
    pos = next(i for i in range(twin.tail - 1, twin.head + 5, -1) if twin.wall[i] not in (held, *range(34, 42)))
    swapped = twin.wall[pos]
    twin.hands[other][held] -= 1
    twin.hands[other][swapped] += 1
    twin.wall[pos] = held
    assert not np.array_equal(e.observer.state(g), e.observer.state(twin))
    for seat in range(4):
        if seat != other:
            np.testing.assert_array_equal(e.observer.observe(g, seat), e.observer.observe(twin, seat))
    assert not np.array_equal(e.observer.observe(g, other), e.observer.observe(twin, other))


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
    e = joy_mahjong_v0.raw_env()
    e.reset(seed=2)
    agent = e.agent_selection
    before_obs = e.observe(agent)
    before_state = e.state()
    events = len(e.game.events)
    illegal = int(np.flatnonzero(before_obs["action_mask"] == 0)[-1])
    with pytest.raises(IllegalActionError, match=r"illegal action .*legal: .*discard"):
        e.step(illegal)
    with pytest.raises(IllegalActionError, match="legal"):
        e.step(10_000)
    with pytest.raises(IllegalActionError, match="must act"):
        e.step(None)
    assert e.agent_selection == agent and len(e.game.events) == events
    np.testing.assert_array_equal(e.state(), before_state)
    np.testing.assert_array_equal(e.observe(agent)["observation"], before_obs["observation"])
    np.testing.assert_array_equal(e.observe(agent)["action_mask"], before_obs["action_mask"])


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
    e = joy_mahjong_v0.raw_env()
    doc = joy_mahjong_v0.__doc__
    obs_shape = e.observation_space("player_0")["observation"].shape
    assert f"Discrete({e.action_space('player_0').n})" in doc
    assert f"{obs_shape}, float32" in doc
    assert f"{e.state_space.shape}, float32" in doc


def test_observation_planes_decode_to_the_game():
    rng = np.random.default_rng(4)
    e = joy_mahjong_v0.raw_env(room_coefficient=5)
    e.reset(seed=9)
    _play_until(e, lambda e: e.game.phase == "turn" and len(e.game.rivers[e.game.dealer]) >= 6, rng)
    g, v = e.game, e.observer.views
    seat = g.current_player
    obs = e.observe(e.agent_selection)["observation"]
    np.testing.assert_array_equal(obs[v["hand"]].sum(axis=0), g.hands[seat])
    assert obs[v["wild"]][0].argmax() == g.wild and obs[v["wild"]].sum() == 1
    assert obs[v["indicator"]][0].argmax() == g.indicator
    for r in range(4):
        s = (seat + r) % 4
        np.testing.assert_allclose(obs[v["river"]][r] * 4, np.bincount(g.rivers[s], minlength=34))
        assert obs[v["recent"]][4 * r, g.rivers[s][-1]] == 1
        assert obs[v["flowers"]][r, 0] * 8 == len(g.flowers[s])
        assert obs[v["dealer"]][r, 0] == (s == g.dealer)
        assert obs[v["chow"]][r].sum() == sum(m.kind == "chow" for m in g.melds[s])
    assert obs[v["seat_wind"]][g.seat_winds[seat]].all() and obs[v["seat_wind"]].sum() == 34
    assert obs[v["prevailing"]][g.prevailing_wind].all() and obs[v["prevailing"]].sum() == 34
    assert obs[v["phase"]][0].all() and obs[v["phase"]].sum() == 34
    assert obs[v["wall"]][0, 0] == pytest.approx(g.wall_count / 144)
    assert obs[v["rules"], 0].tolist() == [1, 0, 0, 0]
    if g.drawn is not None:
        assert obs[v["drawn"]][0, g.drawn] == 1


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
    rng = np.random.default_rng(0)
    hands, totals = [], {a: 0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            assert info["beans"] == totals[agent]
            e.step(None)
            continue
        g = raw.game
        if not hands or hands[-1][0] is not g:
            hands.append((g, g.dealer, g.prevailing_wind))
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
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
