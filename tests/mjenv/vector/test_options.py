"""mjenv.vector's options beyond the rules: illegal_action, observation_dtype (and the AEC env's
uint8 observations it mirrors), final observations, and every bad input refused before anything
changes (issue: "mjenv.vector input gaps")."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from pettingzoo.test import api_test

import mjenv.vector as mv
from mjenv import blood_battle_v0, games, joy_mahjong_v0
from mjenv.engine.core import IllegalActionError
from tests.mjenv.vector.test_joy_parity import play_parity
from tests.mjenv.vector.vector_parity import check_parity

OBSERVERS = {"blood_battle": blood_battle_v0.raw_env().observer, "joy_mahjong": joy_mahjong_v0.raw_env().observer}


# ---------------------------------------------------------------- uint8 observations


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_every_scaled_plane_value_decodes_exactly(game):
    """Each plane that is not 0/1 holds count / d (river, 暗杠 /4, wall /108 or /144, flowers /8):
    every value it can take survives the uint8 round trip bit for bit."""
    observer = OBSERVERS[game]
    scale, offset = observer.uint8_codec
    for name, d in observer.uint8_scales.items():
        plane = observer.views[name].start
        values = np.zeros((observer.planes, observer.width), dtype=np.float32)
        for count in range(int(d) + 1):
            values[plane] = np.float32(count / d)  # as the encoders compute it
            u8 = observer.to_uint8(values)
            assert u8[plane, 0] == count and observer.from_uint8(u8)[plane, 0] == values[plane, 0], (name, count)
    assert (scale[observer.views["beans"]] == 16).all() and (offset[observer.views["beans"]] == 128).all()


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_the_aec_env_observes_uint8_planes(game):
    f32 = games.game(game).raw_env()
    u8 = games.game(game).raw_env(observation_dtype="uint8")
    space = u8.observation_space("player_0")["observation"]
    assert space.dtype == np.uint8 and space.shape == f32.observation_space("player_0")["observation"].shape
    rng = np.random.default_rng(0)
    for seed in range(3):
        f32.reset(seed=seed)
        u8.reset(seed=seed)
        while not all(f32.terminations.values()):
            a, b = f32.observe(f32.agent_selection), u8.observe(u8.agent_selection)
            np.testing.assert_array_equal(b["observation"], f32.observer.to_uint8(a["observation"]))
            assert space.contains(b["observation"])
            action = int(rng.choice(np.flatnonzero(a["action_mask"])))
            f32.step(action)
            u8.step(action)
    api_test(games.game(game).env(observation_dtype="uint8"), num_cycles=200)
    with pytest.raises(ValueError, match="observation_dtype"):
        games.game(game).raw_env(observation_dtype="int8")


@pytest.mark.parametrize("options", [{"observation_dtype": "uint8"}, {"observation_dtype": "uint8", "preset": "qq"}])
def test_uint8_blood_battle_is_in_parity_with_the_aec_env(options):
    venv = mv.make("blood_battle", 32, final_observations=True, **options)
    assert venv.single_observation_space["observation"].dtype == np.uint8
    result = check_parity(venv, options, seed=7, episodes=200)
    assert result["episodes"] >= 200


def test_uint8_joy_is_in_parity_with_the_aec_env():
    stats = play_parity({"room": "eight_fan", "observation_dtype": "uint8"}, seed=3, games=200, tables=32)
    assert stats["games"] >= 200


# ---------------------------------------------------------------- illegal_action


def _sloppy(obs: dict[str, np.ndarray], rng: np.random.Generator, p: float = 0.05) -> np.ndarray:
    """Random legal actions, and now and then an illegal or out-of-range one."""
    mask = obs["action_mask"]
    actions = (rng.random(mask.shape) * mask).argmax(axis=1)
    wrong = rng.random(len(mask)) < p
    actions[wrong] = rng.integers(-3, mask.shape[1] + 3, size=wrong.sum())
    return actions


@pytest.mark.parametrize("game", games.GAME_NAMES)
@pytest.mark.parametrize("mode", ["first_legal", "terminate"])
def test_illegal_action_modes_play_what_the_aec_env_plays(game, mode):
    """Tables replayed through the AEC env with the same option and actions: the same rewards, ends,
    end reasons and next deals."""
    n, seed = 16, 21
    venv = mv.make(game, n, illegal_action=mode)
    refs = [games.game(game).raw_env(illegal_action=mode) for _ in range(n)]
    for i, e in enumerate(refs):
        e.reset(seed=seed + i)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(0)
    flagged = ended_illegally = 0
    for _ in range(300):
        actions = _sloppy(obs, rng)
        obs, rewards, term, _, info = venv.step(actions)
        for i, e in enumerate(refs):
            agent = e.agent_selection
            e.step(int(actions[i]))
            assert rewards[i].tolist() == [e.rewards[a] for a in e.possible_agents]
            illegal = bool(e.infos[agent].get("illegal_action"))  # the AEC flag of the seat that acted
            assert bool(info.get("illegal_action", np.zeros(n, bool))[i]) == illegal
            flagged += illegal
            assert term[i] == all(e.terminations.values())
            if term[i]:
                assert info["end_reason"][i] == e.infos["player_0"]["end_reason"]
                assert info["beans"][i].tolist() == [e.infos[a]["beans"] for a in e.possible_agents]
                ended_illegally += info["end_reason"][i] == "illegal_action"
                e.reset()
            assert info["seat"][i] == e.game.current_player
            np.testing.assert_array_equal(obs["observation"][i], e.observe(e.agent_selection)["observation"])
    assert flagged > 20
    assert (ended_illegally > 0) == (mode == "terminate")


def test_raise_mode_names_the_way_out():
    venv = mv.make("blood_battle", 3)
    obs, _ = venv.reset(seed=0)
    actions = obs["action_mask"].argmax(axis=1)
    actions[2] = 99
    with pytest.raises(IllegalActionError, match="table 2.*illegal_action='first_legal'"):
        venv.step(actions)
    np.testing.assert_array_equal(venv.action_masks(), obs["action_mask"])  # nothing was stepped


# ---------------------------------------------------------------- final observations, spaces


def test_final_observations_are_every_seats_view_and_declared_autoreset():
    venv = mv.make("joy_mahjong", 8, final_observations=True, observation_dtype="uint8")
    assert venv.metadata["autoreset_mode"] == venv.autoreset_mode == AutoresetMode.SAME_STEP
    obs, _ = venv.reset(seed=2)
    rng = np.random.default_rng(0)
    seen = 0
    while seen < 5:
        obs, _, term, _, info = venv.step(mv.random_actions(obs["action_mask"], rng))
        for i in np.flatnonzero(term):
            assert info["_final_obs"][i] and info["final_obs"][i].shape == (4, 82, 34)
            assert info["final_obs"][i].dtype == np.uint8
            seen += 1
        assert not any(info.get("_final_obs", np.zeros(8, bool))[~term])
    seats = venv.backend.seat
    later = venv.observe_seats([0, 5, 5], [seats[0], seats[5], (seats[5] + 1) % 4])
    assert later.shape == (3, 82, 34) and later.dtype == np.uint8
    np.testing.assert_array_equal(later[0], obs["observation"][0])  # the seat to act: the step's view
    np.testing.assert_array_equal(later[1], obs["observation"][5])
    assert not np.array_equal(later[1], later[2])  # another seat sees its own hand
    with pytest.raises(ValueError, match="seats"):
        venv.observe_seats([0], [4])


# ---------------------------------------------------------------- bad input, nothing changed


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_make_refuses_bad_arguments_with_clear_errors(game):
    for bad in (True, np.bool_(True), 0, -2, 2.0, "4"):
        with pytest.raises(ValueError, match="num_envs"):
            mv.make(game, bad)
    assert mv.make(game, np.int64(2)).num_envs == 2
    for bad in ("no", 1, None):
        with pytest.raises(ValueError, match="copy"):
            mv.make(game, 2, copy=bad)
    with pytest.raises(ValueError, match="final_observations"):
        mv.make(game, 2, final_observations="yes")
    with pytest.raises(ValueError, match="GiB"):  # refused before anything is allocated
        mv.make(game, 10**9)


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_reset_options_are_checked_before_any_table_changes(game):
    venv = mv.make(game, 3)
    obs, _ = venv.reset(seed=4)
    before = venv.state()
    for options, error in [({"dealer": True}, ValueError), ({"dealer": 4}, ValueError), ([1, 2], TypeError),
                           ({"dealr": 0}, ValueError), ({"wall": [0] * 3}, ValueError), ("dealer", TypeError)]:
        with pytest.raises(error):
            venv.reset(seed=5, options=options)
        np.testing.assert_array_equal(venv.state(), before)
    venv.reset(seed=5, options={"dealer": 2})
    assert venv.state()[:, :].shape == before.shape


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_calls_before_reset_raise(game):
    venv = mv.make(game, 2)
    for call in (venv.state, venv.action_masks, lambda: venv.observe_seats([0], [0]),
                 lambda: venv.step(np.zeros(2, dtype=np.int64))):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    with pytest.raises(ValueError, match="active"):
        venv.reset(seed=0)
        venv.step(np.zeros(2, dtype=np.int64), active=np.array([1, 0]))
