"""The Gymnasium views as docs/observations.md describes them: ``render_mode="seat"`` (the
learning seat's view as text), the observer on the env for ``describe_observation``, and
observation spaces that print in one short line."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest

import mjenv
from mjenv import blood_battle_v0
from mjenv.describe import describe_observation


def test_single_seat_env_renders_the_seat_and_exposes_its_observer() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium.make warns about a render mode not in metadata
        env = gymnasium.make("mjenv/BloodBattle-v0", render_mode="seat")
        obs, info = env.reset(seed=0)
        text = env.render()
    assert text.startswith(f"player_{info['seat']}'s view (blood battle)")
    assert describe_observation(obs, env.unwrapped.observer).startswith("player_0's view")
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert "player_0's view" in env.render()
    assert gymnasium.make("mjenv/JoyMahjong-v0", render_mode="ansi").unwrapped.render_mode == "ansi"


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_vector_env_renders_each_tables_seat_and_exposes_its_observer(dtype: str) -> None:
    env = gymnasium.make_vec("mjenv/BloodBattle-v0", num_envs=2, render_mode="seat", observation_dtype=dtype)
    assert env.render() is None  # before reset
    obs, info = env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and all(f.startswith("player_0's view (blood battle)") for f in frames)
    assert describe_observation(obs[1], env.unwrapped.observer) == frames[1]
    env.close()
    with pytest.raises(ValueError, match="render_mode must be one of"):
        gymnasium.make_vec("mjenv/BloodBattle-v0", num_envs=1, render_mode="rgb_array")


def test_observation_spaces_print_in_one_short_line() -> None:
    single = gymnasium.make("mjenv/JoyMahjong-v0")
    vector = gymnasium.make_vec("mjenv/BloodBattle-v0", num_envs=64, mask_in_observation=True)
    for space in (single.observation_space, vector.observation_space, vector.single_observation_space,
                  blood_battle_v0.env().observation_space("player_0")):
        text = repr(space)
        assert len(text) < 200 and "\n" not in text and "[" not in text, text[:300]
    assert repr(single.observation_space).startswith("Box(-") and "(82, 34), float32)" in repr(single.observation_space)
    vector.close()
    assert mjenv.__version__


def test_vector_render_shows_a_finished_tables_last_view() -> None:
    env = gymnasium.make_vec("mjenv/BloodBattle-v0", num_envs=4, render_mode="seat", illegal_action="first_legal")
    obs, info = env.reset(seed=1)
    for _ in range(400):
        obs, _, terminated, _, info = env.step(info["action_mask"].argmax(axis=1))
        if terminated.any():
            t = int(np.flatnonzero(terminated)[0])
            assert env.render()[t] == describe_observation(obs[t], env.unwrapped.observer)
            assert "phase over" in env.render()[t]
            break
    else:
        raise AssertionError("no hand ended in 400 steps")
    env.close()
