"""The same trainer on Joy Mahjong: PPO and the imitation of its heuristic with the Joy look-ahead planes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.neural import PolicyValueNet, read_checkpoint
from train.ppo import train

from tests.train.support import logged_scalars, tiny


def test_joy_mahjong_trains_with_the_same_trainer(tmp_path: Path) -> None:
    from mjenv import joy_mahjong_v0

    cfg = tiny(tmp_path, game="joy_mahjong", env_options={"room": "popular"}, total_decisions=300,
               snapshot_every=1, checkpoint_every=1)
    run_dir = train(cfg)
    scalars = logged_scalars(run_dir)
    assert all(math.isfinite(v) for v in scalars["losses/policy_loss"] + scalars["losses/value_loss"])
    ckpt = read_checkpoint(run_dir / "checkpoint.pt")
    assert ckpt["arch"]["game"] == "joy_mahjong" and ckpt["global_step"] >= 300
    initial = PolicyValueNet(ckpt["arch"]["obs_planes"], 16, 1, game="joy_mahjong",
                             generator=torch.Generator().manual_seed(cfg.seed)).state_dict()
    assert all(not torch.equal(v, initial[k]) for k, v in ckpt["model"].items() if k.startswith("trunk."))
    policy, env, rng = load_policy(str(run_dir / "checkpoint.pt")), joy_mahjong_v0.raw_env(), np.random.default_rng(0)
    env.reset(seed=3)
    while not env.game.over:  # a whole Joy hand with the trained policy in every seat: only legal actions
        obs = env.observe(env.agent_selection)
        action = policy.act(obs["observation"], obs["action_mask"], rng)
        assert obs["action_mask"][action] == 1
        env.step(action)
    with pytest.raises(ValueError, match="config field 'game'"):
        tiny(tmp_path, game="riichi")


def test_joy_mahjong_imitates_its_heuristic_with_the_joy_lookahead_planes(tmp_path: Path) -> None:
    from agents.lookahead_joy import JOY_LOOKAHEAD_PLANES, with_lookahead_joy
    from mjenv import joy_mahjong_v0

    cfg = tiny(tmp_path, game="joy_mahjong", env_options={"room": "popular"}, lookahead=True, teacher="heuristic",
               imitation_decisions=400, total_decisions=200, snapshot_every=1, checkpoint_every=1)
    run_dir = train(cfg)
    policy = load_policy(str(run_dir / "checkpoint.pt"))
    assert policy.net.arch["lookahead"] and policy.net.trunk.stem.linear.in_features == 3 * (82 + JOY_LOOKAHEAD_PLANES)
    assert policy.net.rules is None  # Joy's planes read no rules
    assert logged_scalars(run_dir / "imitation")["imitation/accuracy"]  # the imitation phase ran on the Joy teacher
    env, rng = joy_mahjong_v0.raw_env(), np.random.default_rng(0)
    env.reset(seed=4)
    while not env.game.over:
        obs = env.observe(env.agent_selection)
        prepared = policy.net.prepare(obs["observation"][None])
        np.testing.assert_array_equal(prepared, with_lookahead_joy(obs["observation"][None]))
        action = policy.act(obs["observation"], obs["action_mask"], rng)
        assert obs["action_mask"][action] == 1
        env.step(action)
