"""The game spec (mjenv/spec.py): a game name and its options become one frozen, checked value that
the AEC env, the Parallel env and the compiled backends all read (issue 49)."""

from __future__ import annotations

from tests.support import ROOT

import dataclasses
from pathlib import Path

import pytest

from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv import spec as mjenv_spec
from mjenv.spec import GAME_RULES, GameSpec, spec



def test_a_spec_holds_the_rules_layout_observer_and_match_settings() -> None:
    s = spec("blood_battle", "qq", escape=True, match_hands=3, observation_dtype="uint8")
    assert isinstance(s, GameSpec) and s.preset == "qq" and s.rules.escape_rule == "qq"
    assert s.layout.n == 63 and s.match_hands == 3 and s.illegal_action == "raise"
    assert s.illegal_reward == -192.0 and s.script_keys == ("wall", "dealer")
    assert s.observation_box().dtype.name == "uint8" and s.observation_box().shape == (77, 27)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.match_hands = 2  # type: ignore[misc]
    j = spec("joy_mahjong", room="no_fan")
    assert j.rules.room == "no_fan" and j.preset == "standard" and j.layout.n == 76
    assert j.script_keys == ("wall", "dealer", "prevailing_wind") and j.illegal_reward == -40.0


def test_the_envs_take_their_spec_and_build_nothing_else() -> None:
    env = joy_mahjong_v0.raw_env("eight_fan", rake=3, match_hands=2)
    same = spec("joy_mahjong", room="eight_fan", rake=3, match_hands=2)
    assert dataclasses.replace(env.spec, observer=None) == dataclasses.replace(same, observer=None)
    assert env.observer.bean_scale == same.observer.bean_scale == 4 * 24
    assert (env.rules, env.layout, env.observer, env.match_hands) == \
        (env.spec.rules, env.spec.layout, env.spec.observer, 2)
    # The per-game bounds the env modules exported are the spec's.
    assert blood_battle_v0.hand_bean_bound is mjenv_spec.blood_battle_bean_bound
    assert joy_mahjong_v0.hand_bean_bound is mjenv_spec.joy_mahjong_bean_bound
    assert set(GAME_RULES) == {"blood_battle", "joy_mahjong"}


@pytest.mark.parametrize("game, options, error, match", [
    ("riichi", {}, ValueError, r"unknown game 'riichi'"),
    ("blood_battle", {"room": "popular"}, ValueError, r"unknown rule field\(s\) \['room'\]"),
    ("blood_battle", {"preset": "vip"}, ValueError, r"unknown preset 'vip'"),
    ("joy_mahjong", {"match_hands": 0}, ValueError, r"match_hands must be an int >= 1"),
    ("joy_mahjong", {"illegal_action": "ignore"}, ValueError, r"illegal_action must be one of"),
    ("joy_mahjong", {"illegal_reward": float("nan")}, ValueError, r"illegal_reward must be a finite number"),
    ("blood_battle", {"observation_dtype": "float64"}, ValueError, r"observation_dtype"),
    ("joy_mahjong", {"rules_file": str(ROOT / "configs" / "blood_battle_happy.yaml")}, ValueError,
     r"game 'blood_battle' is not joy_mahjong"),
])
def test_bad_options_fail_naming_them(game: str, options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        spec(game, **options)


def test_a_rules_file_sets_the_preset_under_the_overrides() -> None:
    s = spec("blood_battle", rules_file=str(ROOT / "configs" / "blood_battle_happy.yaml"), rake=7)
    assert s.preset == "happy" and s.rules.rake == 7


def test_a_game_without_every_per_game_method_cannot_be_made():
    """GameRules is abstract: a new game that forgets one of its methods fails when it is made."""

    class Partial(mjenv_spec.GameRules):
        game = "blood_battle"

        def make_rules(self, preset, room, overrides):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Partial()
    assert all(type(rules)() is not None for rules in GAME_RULES.values())
