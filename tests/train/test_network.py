"""The policy network (agents/neural.py) and its look-ahead planes (agents/lookahead.py)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.neural import NeuralPolicy, PolicyValueNet
from mjenv import blood_battle_v0
from train.rollout import RolloutWorker, all_weights

from tests.train.support import OBS_PLANES, fresh_net, tiny


def test_lookahead_planes_agree_with_the_rules_shanten_and_waits() -> None:
    from agents.features import decode
    from agents.lookahead import LOOKAHEAD_PLANES, lookahead, with_lookahead
    from mjenv.rules.shapes import shanten, waits

    env, teacher, rng = blood_battle_v0.raw_env(), load_policy("heuristic"), np.random.default_rng(0)
    checked = ready = 0
    for seed in range(6):
        env.reset(seed=seed)
        while not env.game.over:
            o = env.observe(env.agent_selection)
            view, planes = decode(o["observation"]), lookahead(o["observation"])
            assert planes.shape == (LOOKAHEAD_PLANES, 27)
            void = view.void[0]
            clean = void >= 0 and not any(view.hand[9 * void:9 * void + 9])
            if view.phase == "turn" and clean and sum(view.hand) % 3 == 2:
                after = {}
                for k in np.flatnonzero(view.hand):
                    counts = np.zeros(34, dtype=np.int8)
                    counts[:27] = view.hand
                    counts[k] -= 1
                    after[k] = shanten(counts, view.n_melds)
                    if after[k] == 0:  # ready after this discard: waits exist (an independent check)
                        assert waits(counts)
                best = min(after.values())
                ready += best == 0
                assert {k for k, s in after.items() if s == best} == set(np.flatnonzero(planes[0]))
                assert planes[5 + min(max(best, 0), 3)].all()  # the held hand's shanten = the best discard's
                checked += 1
            env.step(teacher.act(o["observation"], o["action_mask"], rng))
    assert checked > 100 and ready > 5
    batch = np.stack([env.observe(a)["observation"] for a in env.agents])
    assert with_lookahead(batch).shape == (4, batch.shape[1] + LOOKAHEAD_PLANES, 27)


def test_lookahead_planes_value_waits_with_the_envs_rules(tmp_path: Path) -> None:
    from agents.lookahead import with_lookahead
    from train.ppo import save_checkpoint

    # A qq table capped at 1 fan: every win is worth the same, so no wait outweighs another.
    options = {"preset": "qq", "cap_fan": 1}
    rules = blood_battle_v0.raw_env(**options).rules
    cfg = tiny(tmp_path, lookahead=True, envs_per_worker=4, env_options=options)
    worker = RolloutWorker(cfg, 0)
    r = worker.collect(1, all_weights(fresh_net(cfg)), {}, [], 400, imitate=True)  # the heuristic gets ready
    raw = r.obs[:, :OBS_PLANES]
    np.testing.assert_array_equal(r.obs, with_lookahead(raw, rules))
    assert not np.array_equal(r.obs, with_lookahead(raw))  # the default (happy) rules value them otherwise

    net = PolicyValueNet(OBS_PLANES, 8, 1, lookahead=True)
    path = tmp_path / "qq.pt"
    save_checkpoint(path, {"format": "mjenv.ppo/1", "arch": net.arch, "model": net.state_dict(),
                           "config": {"env_options": options}})
    policy = load_policy(path)  # a checkpoint plays with the rules it was trained with
    assert policy.net.rules == rules and pickle.loads(pickle.dumps(policy)).net.rules == rules
    np.testing.assert_array_equal(policy.net.prepare(raw), r.obs)


def test_honours_are_not_neighbours_in_the_joy_network() -> None:
    net = PolicyValueNet(82, 8, 1, game="joy_mahjong", generator=torch.Generator().manual_seed(0))
    x = torch.zeros(1, 82, 34)
    x[0, 0, 27] = 1.0  # one plane lit on 东 only
    mask = torch.ones(1, 76, dtype=torch.bool)
    with torch.no_grad():
        base = net.trunk(torch.zeros(1, 82, 34))
        lit = net.trunk(x)
    moved = (lit - base).abs().sum(dim=-1).reshape(-1)[:34]  # per kind: did its features change?
    # 东 changes through its own column and through the pooled context of the blocks; the context
    # moves every kind equally, so 南 (a would-be rank neighbour) changes no more than 白 (far away).
    assert moved[27] > moved[28]
    torch.testing.assert_close(moved[28], moved[33])
    assert net.logits(x, mask).shape == (1, 76)


def test_void_logits_follow_the_suits() -> None:
    net = PolicyValueNet(OBS_PLANES, 16, 1, lookahead=True, generator=torch.Generator().manual_seed(0))
    x = torch.randn(4, net.arch["obs_planes"] + 14, 27)
    mask = torch.ones(4, 62, dtype=torch.bool)
    rotated = x.reshape(4, -1, 3, 9)[:, :, [1, 2, 0]].reshape(4, -1, 27)  # suit order m p s -> p s m
    with torch.no_grad():
        void, void_rotated = net.logits(x, mask)[:, 59:62], net.logits(rotated, mask)[:, 59:62]
    torch.testing.assert_close(void_rotated, void[:, [1, 2, 0]])  # each suit's 定缺 logit moves with it
    assert not torch.allclose(void[:, 0], void[:, 1])


def test_policy_refuses_observations_of_another_encoder() -> None:
    policy = NeuralPolicy(PolicyValueNet(obs_planes=OBS_PLANES - 5, channels=8, blocks=1), name="old")
    with pytest.raises(ValueError, match=f"'old' was trained on observations of {OBS_PLANES - 5} planes"):
        policy.act(np.zeros((OBS_PLANES, 27), np.float32), np.ones(62, np.int8), np.random.default_rng(0))
