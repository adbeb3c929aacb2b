"""mjenv.vector with Joy Mahjong: threads, seeding, spaces, options and bad input.

Parity with the AEC env is in test_vector_joy_parity.py; these tests cover what the batched
env adds around the Joy backend.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import mjenv.vector as mv
from mjenv import joy_mahjong_v0
from mjenv.engine.core import IllegalActionError
from mjenv.engine.joy_mahjong import scripted_wall


def _actions(obs: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Eager play: 胡 (73) first, else a uniformly random legal action."""
    mask = obs["action_mask"]
    actions = (rng.random(mask.shape) * mask).argmax(axis=1)
    return np.where(mask[:, 73] > 0, 73, actions)


def _trace(venv: mv.env.VectorEnv, steps: int, seed: int = 3) -> list:
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [(obs["observation"].copy(), obs["action_mask"].copy(), info["seat"].copy())]
    for _ in range(steps):
        obs, rewards, term, _, info = venv.step(_actions(obs, rng))
        out.append((obs["observation"].copy(), obs["action_mask"].copy(), info["seat"].copy(),
                    rewards.copy(), term.copy()))
    return out


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def test_results_do_not_depend_on_thread_count():
    """Two and three threads, the eight_fan room's scorer call-backs included, play the same."""
    one = _trace(mv.make("joy_mahjong", 37, room="eight_fan"), 300)
    assert sum(t[4].sum() for t in one[1:]) > 20  # episodes ended (and restarted) along the way
    for threads in (2, 3):
        venv = mv.make("joy_mahjong", 37, room="eight_fan", num_threads=threads)
        _same(one, _trace(venv, 300))
        venv.close()


def test_same_seed_same_game_and_spaces():
    venv = mv.make("joy_mahjong", 4, match_hands=2)
    _same(_trace(venv, 150), _trace(venv, 150))
    ref = joy_mahjong_v0.raw_env()
    obs, info = venv.reset()
    assert obs["observation"].shape == (4, *ref.observation_space("player_0")["observation"].shape)
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert obs["action_mask"].sum(axis=1).min() > 1  # a real choice at every table
    assert venv.single_action_space.n == ref.action_space("player_0").n == 76
    assert venv.state().shape == (4, *ref.state_space.shape)


@pytest.mark.parametrize("options", [
    {"room": "vip"}, {"rake": -1}, {"room_coefficient": True}, {"no_such_rule": 1},
    {"discard_payers": "everyone"}, {"match_hands": 0}, {"preset": "nope"},
])
def test_options_are_validated_as_the_aec_env_does(options):
    with pytest.raises((ValueError, TypeError)) as aec:
        joy_mahjong_v0.raw_env(**options)
    with pytest.raises(type(aec.value)) as vec:
        mv.make("joy_mahjong", 2, **options)
    assert str(vec.value) == str(aec.value)


def test_rules_match_the_aec_env_and_aec_only_options_are_refused():
    options = {"room": "no_fan", "discard_payers": "all_mcr", "rake": 3}
    venv = mv.make("joy_mahjong", 2, **options)
    assert dataclasses.asdict(venv.backend.rules) == dataclasses.asdict(joy_mahjong_v0.raw_env(**options).rules)
    with pytest.raises(ValueError, match=r"\['log_path'\] belong to the AEC env only"):
        mv.make("joy_mahjong", 2, log_path="x.jsonl")


JUNK = "159m159pESWNCFP"


@pytest.mark.parametrize("script, match", [
    ({"wall": list(range(144))}, "each of the 34 kinds 4 times"),
    ({"dealer": 4}, "dealer must be a seat 0-3"),
    ({"dealer": True}, "dealer must be a seat 0-3"),
    ({"prevailing_wind": -1}, "prevailing_wind must be 0-3"),
])
def test_bad_script_raises_and_changes_nothing(script, match):
    venv = mv.make("joy_mahjong", 3)
    obs, _ = venv.reset(seed=9)
    state = venv.state()
    with pytest.raises(ValueError, match=match):
        venv.reset(seed=1, options=script)
    np.testing.assert_array_equal(venv.state(), state)
    np.testing.assert_array_equal(venv.action_masks(), obs["action_mask"])


def test_script_deals_the_wall_to_every_table():
    """The scripted first hand: dealer seat 2, the 财神 indicator 7s (wildcard 8s), prevailing
    wind South; the next episode is seeded again."""
    wall = scripted_wall([JUNK, "123m45m789p234s55s", JUNK, JUNK], "N 7s", dealer=2)
    venv = mv.make("joy_mahjong", 2)
    obs, info = venv.reset(seed=0, options={"wall": wall, "dealer": 2, "prevailing_wind": 1})
    ref = joy_mahjong_v0.raw_env()
    ref.reset(seed=0, options={"wall": wall, "dealer": 2, "prevailing_wind": 1})
    assert info["seat"].tolist() == [2, 2]
    for i in range(2):
        np.testing.assert_array_equal(obs["observation"][i], ref.observe("player_2")["observation"])
        np.testing.assert_array_equal(venv.state()[i], ref.state())


def test_illegal_action_names_the_table_and_changes_nothing():
    venv = mv.make("joy_mahjong", 4)
    obs, _ = venv.reset(seed=2)
    state, mask = venv.state(), obs["action_mask"].copy()
    actions = _actions(obs, np.random.default_rng(0))
    bad = int(np.flatnonzero(mask[2] == 0)[0])
    actions[2] = bad
    with pytest.raises(IllegalActionError, match=rf"table 2: illegal action {bad} .*legal: "):
        venv.step(actions)
    np.testing.assert_array_equal(venv.state(), state)
    np.testing.assert_array_equal(venv.action_masks(), mask)
