"""mjenv.vector.SingleSeatVectorEnv: the learning seat's view, rewards and autoreset."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from mjenv import blood_battle_v0
from mjenv.vector import SingleSeatVectorEnv
from mjenv.vector.env import IllegalActionError


def lowest_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A deterministic batched opponent: the lowest legal action."""
    assert observations.shape[0] == masks.shape[0]
    return masks.argmax(axis=1)


def test_learner_sees_what_the_aec_env_shows_that_seat():
    """Each table replayed through raw_env (opponents: lowest legal action): the same observation
    and mask at every decision of the learning seat, and the same bean changes."""
    n, seat, seed = 6, 2, 40
    env = SingleSeatVectorEnv("blood_battle", n, opponents=lowest_legal, seat=seat, preset="qq")
    assert isinstance(env, gymnasium.vector.VectorEnv)
    obs, info = env.reset(seed=seed)
    refs = [blood_battle_v0.raw_env(preset="qq") for _ in range(n)]
    for i, e in enumerate(refs):
        e.reset(seed=seed + i)
    rng = np.random.default_rng(3)
    episodes = 0
    for _ in range(150):
        masks = env.action_masks()
        assert masks.sum(axis=1).min() > 0  # never an all-zero mask for the learner
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        for i, e in enumerate(refs):
            while e.agent_selection != f"player_{seat}":  # opponents up to the seat's turn
                e.step(int(e.game.legal_mask().argmax()))
            ref = e.observe(e.agent_selection)
            np.testing.assert_array_equal(obs[i], ref["observation"])
            np.testing.assert_array_equal(masks[i], ref["action_mask"])
        obs, rewards, term, trunc, info = env.step(actions)
        for i, e in enumerate(refs):
            got = 0
            e.step(int(actions[i]))
            got += e.rewards[f"player_{seat}"]
            while not all(e.terminations.values()) and e.agent_selection != f"player_{seat}":
                e.step(int(e.game.legal_mask().argmax()))
                got += e.rewards[f"player_{seat}"]
            assert rewards[i] == got
            assert term[i] == all(e.terminations.values())
            if term[i]:
                assert info["beans"][i].tolist() == [e.infos[a]["beans"] for a in e.possible_agents]
                episodes += 1
                e.reset()
    assert episodes > 0 and not trunc.any()


def test_rewards_of_an_episode_sum_to_its_beans():
    env = SingleSeatVectorEnv("blood_battle", 16, seat=1, num_threads=2)
    env.reset(seed=8)
    rng = np.random.default_rng(0)
    total = np.zeros(16)
    checked = 0
    for _ in range(300):
        masks = env.action_masks()
        obs, rewards, term, trunc, info = env.step((rng.random(masks.shape) * masks).argmax(axis=1))
        assert obs.shape == (16, 73, 27) and rewards.dtype == np.float32
        total += rewards
        for i in np.flatnonzero(term):
            assert info["_final"][i] and total[i] == info["beans"][i, 1]
            total[i] = 0
            checked += 1
    assert checked > 10


def test_illegal_learner_action_raises_and_bad_arguments():
    env = SingleSeatVectorEnv("blood_battle", 3)
    env.reset(seed=0)
    actions = env.action_masks().argmax(axis=1)
    actions[1] = int(np.flatnonzero(env.action_masks()[1] == 0)[0])
    with pytest.raises(IllegalActionError, match="table 1"):
        env.step(actions)
    with pytest.raises(ValueError, match="seat"):
        SingleSeatVectorEnv("blood_battle", 2, seat=4)
    with pytest.raises(ValueError, match="opponents"):
        SingleSeatVectorEnv("blood_battle", 2, opponents="heuristic")
    with pytest.raises(RuntimeError, match="reset"):
        SingleSeatVectorEnv("blood_battle", 2).step(np.zeros(2, dtype=np.int64))
