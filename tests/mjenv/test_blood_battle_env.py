"""PettingZoo conformance, hidden information and bad input for blood_battle_v0."""

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from mjenv import blood_battle_v0
from mjenv.engine.blood_battle import IllegalActionError
from tests.support import (check_hidden_tiles_do_not_leak, check_illegal_action_changes_nothing,
                     check_reference_table, check_shared_planes, check_spaces_are_stable, play_until)

PRESETS = ["happy", "qq"]


@pytest.mark.parametrize("preset", PRESETS)
def test_api(preset):
    api_test(blood_battle_v0.env(preset=preset), num_cycles=300)


@pytest.mark.parametrize("preset", PRESETS)
def test_api_classic_match(preset):
    api_test(blood_battle_v0.env(preset=preset, mode="classic", match_hands=3), num_cycles=500)


@pytest.mark.parametrize("preset", PRESETS)
def test_seed(preset):
    seed_test(lambda: blood_battle_v0.env(preset=preset), num_cycles=300)


@pytest.mark.parametrize("preset", PRESETS)
def test_render(preset):
    render_test(lambda render_mode=None: blood_battle_v0.env(preset=preset, render_mode=render_mode))


def test_registry_make():
    # PettingZoo has a registry from 1.27; on older versions importing mjenv must still work.
    assert hasattr(pettingzoo, "make") == hasattr(pettingzoo, "register")
    if not hasattr(pettingzoo, "make"):
        return
    e = pettingzoo.make("aec", "mjenv/blood_battle_v0", preset="qq")
    e.reset(seed=1)
    assert e.unwrapped.rules.direct_kong_units == 1


def test_spaces_are_stable_and_mask_is_int8():
    check_spaces_are_stable(blood_battle_v0.raw_env())


def test_void_choices_hidden_until_all_chose():
    obs = []
    for suit in (0, 1):
        e = blood_battle_v0.raw_env()
        e.reset(seed=11)
        first = e.agent_selection
        e.step(blood_battle_v0.LAYOUT.VOID + suit)
        obs.append(e.observe(e.agent_selection)["observation"])
        assert e.agent_selection != first
    np.testing.assert_array_equal(obs[0], obs[1])


def test_hidden_tiles_do_not_leak():
    check_hidden_tiles_do_not_leak(blood_battle_v0.raw_env())


def test_illegal_action_raises_and_changes_nothing():
    check_illegal_action_changes_nothing(blood_battle_v0.raw_env(), r"illegal action .*legal: .*void",
                                         IllegalActionError)


@pytest.mark.parametrize("kwargs, field", [
    ({"preset": "nope"}, "preset"),
    ({"cap_fann": 6}, "cap_fann"),
    ({"cap_fan": "6"}, "cap_fan"),
    ({"rake": -1}, "rake"),
    ({"mode": "sprint"}, "mode"),
    ({"gen_counts_kongs": 1}, "gen_counts_kongs"),
    ({"render_mode": "rgb_array"}, "render_mode"),
    ({"match_hands": 0}, "match_hands"),
])
def test_bad_options_fail_naming_the_field(kwargs, field):
    with pytest.raises((ValueError, TypeError), match=field):
        blood_battle_v0.env(**kwargs)


def test_rules_file_and_override(tmp_path):
    e = blood_battle_v0.raw_env(rules_file="configs/blood_battle_qq.yaml", cap_fan=8)
    assert e.rules.self_draw_bonus == "add_base" and e.rules.cap_fan == 8
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: blood_battle\npreset: qq\nrules: {capfan: 3}\n")
    with pytest.raises(ValueError, match="capfan"):
        blood_battle_v0.raw_env(rules_file=str(bad))


def test_action_names():
    e = blood_battle_v0.raw_env()
    assert e.action_name(4) == "discard 5m"
    assert e.action_name(27 + 9) == "kong 1p"
    assert e.action_name(54) == "pong"
    assert e.action_name(59) == "void m"
    with pytest.raises(ValueError):
        e.action_name(62)


def test_observation_planes_decode_to_the_game():
    """Named plane ranges hold what they claim, seat-relative (self, +1, +2, +3)."""
    rng = np.random.default_rng(4)
    e = blood_battle_v0.raw_env(room_coefficient=5)
    e.reset(seed=9)
    play_until(e, lambda e: e.game.phase == "turn" and len(e.game.rivers[0]) >= 6, rng)
    g, v = e.game, e.observer.views
    seat = g.current_player
    obs = e.observe(e.agent_selection)["observation"]
    check_shared_planes(e, obs, 108)
    for r in range(4):
        s = (seat + r) % 4
        np.testing.assert_array_equal(obs[v["void"]][r].nonzero()[0] // 9, [g.void[s]] * 9)
        assert obs[v["beans"]][r, 5] * e.observer.bean_scale == pytest.approx(g.beans[s])
        assert obs[v["won"]][r, 0] == g.won[s]
    assert obs[v["seat"]][seat].all() and obs[v["seat"]].sum() == 27
    assert obs[v["phase"]][1].all() and obs[v["phase"]].sum() == 27  # turn


def test_reference_table_matches_the_spaces():
    check_reference_table(blood_battle_v0.raw_env(), blood_battle_v0)


@pytest.mark.parametrize("preset, options, flags", [
    ("happy", {}, [0, 0, 0, 0]),
    ("qq", {}, [1, 1, 1, 0]),
    ("qq", {"mode": "classic"}, [1, 1, 1, 1]),
])
def test_rule_flags_are_observed(preset, options, flags):
    e = blood_battle_v0.raw_env(preset=preset, **options)
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)["observation"]
    assert obs[e.observer.views["rules"], 0].tolist() == flags


def test_after_kong_plane_marks_a_replacement_draw():
    rng = np.random.default_rng(1)
    for seed in range(40):
        e = blood_battle_v0.raw_env()
        e.reset(seed=seed)
        while not e.game.over:
            g = e.game
            obs = e.observe(e.agent_selection)
            flag = obs["observation"][e.observer.views["after_kong"].start, 0]
            assert flag == (g.phase == "turn" and g.after_kong)
            legal = np.flatnonzero(obs["action_mask"])
            kongs = [a for a in legal if 27 <= a < 54 or a == 55]
            e.step(int(kongs[0] if kongs else rng.choice(legal)))
            if e.game.after_kong and e.game.phase == "turn":
                obs = e.observe(e.agent_selection)["observation"]
                assert obs[e.observer.views["after_kong"].start].all()
                return
    pytest.fail("no kong replacement draw in 40 hands")
