"""The trainer's pulls towards the teacher (``kl_coef``, ``bc_coef``) and the seat-relative oracle critic."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.neural import CheckpointError, PolicyValueNet, read_checkpoint
from mjenv import blood_battle_v0, joy_mahjong_v0
from train.config import TrainConfig, make_config
from train.ppo import anchor_logprobs, gae, policy_copy, ppo_update, save_checkpoint, subsample_demos, to_batch, train
from train.rollout import LEARNER, RolloutWorker, all_weights, relative_state, relative_state_index

from tests.train.support import STATE_PLANES, fresh_net, tiny


# ---------------------------------------------------------------- config


@pytest.mark.parametrize("values, message", [
    ({"kl_coef": 0.1}, "'kl_coef' is > 0 but 'imitation_decisions' is 0 and 'init_policy' is empty"),
    ({"bc_coef": 0.5}, "'bc_coef' is > 0 but 'baseline_prob' is 0"),
    ({"oracle_seat_relative": True}, "'oracle_seat_relative' is true but 'oracle_critic' is false"),
    ({"total_decisions": 0}, "'total_decisions' and 'imitation_decisions' are both 0"),
    ({"kl_coef": -1.0}, "'kl_coef' must be >= 0"),
    ({"bc_coef": float("nan")}, "'bc_coef' must be a finite number"),
])
def test_config_refuses_regularisers_without_what_they_need(values: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_config(values)


# ---------------------------------------------------------------- seat-relative state


@pytest.mark.parametrize("module", [blood_battle_v0, joy_mahjong_v0])
def test_relative_state_orders_each_seat_view_as_the_observation_does(module) -> None:
    env = module.raw_env()
    observer = env.observer
    index = relative_state_index(observer.state_views, observer.state_planes)
    assert sorted(index[0]) == list(range(observer.state_planes))
    np.testing.assert_array_equal(index[0], np.arange(observer.state_planes))  # seat 0: already in order
    rng = np.random.default_rng(3)
    env.reset(seed=11)
    shared = [name for name in ("pong", "kong", "river", "recent", "won_tile", "chow")
              if name in observer.views and name in observer.state_views]
    assert {"pong", "river", "recent"} <= set(shared)
    checked = 0
    for _ in range(150):
        if all(env.terminations.values()):
            break
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        obs = env.observe(agent)["observation"]
        state = env.state()
        rel = relative_state(state[None], np.array([seat]), index)[0]
        hands = observer.state_views["hands"]
        np.testing.assert_array_equal(rel[hands.start:hands.start + 4], obs[observer.views["hand"]][:4] > 0)
        for name in shared:
            np.testing.assert_array_equal(rel[observer.state_views[name]], obs[observer.views[name]], err_msg=name)
        for name in ("phase", "wall"):  # not per seat: unchanged
            np.testing.assert_array_equal(rel[observer.state_views[name]], state[observer.state_views[name]])
        current = observer.state_views["current"]
        assert rel[current.start].all() and not rel[current.start + 1:current.stop].any()  # the decider is first
        checked += 1
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    assert checked > 50


def test_the_oracle_critic_reads_the_seat_relative_state(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, oracle_critic=True, oracle_seat_relative=True, envs_per_worker=2)
    absolute = tiny(tmp_path, oracle_critic=True, envs_per_worker=2)
    state_planes = blood_battle_v0.raw_env().observer.state_planes
    net = PolicyValueNet(blood_battle_v0.raw_env().observer.planes, cfg.channels, cfg.blocks, state_planes,
                         generator=torch.Generator().manual_seed(0))
    rel = RolloutWorker(cfg, 0).collect(1, all_weights(net), {}, [], 200)
    ab = RolloutWorker(absolute, 0).collect(1, all_weights(net), {}, [], 200)
    np.testing.assert_array_equal(rel.action, ab.action)  # the policy does not read the state
    env = blood_battle_v0.raw_env()
    index = relative_state_index(env.observer.state_views, env.observer.state_planes)
    np.testing.assert_array_equal(rel.state, relative_state(ab.state, ab.seat, index))
    assert (rel.seat != 0).any() and not np.array_equal(rel.state, ab.state)


# ---------------------------------------------------------------- bc_coef: the baselines' decisions


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_bc_coef_keeps_every_decision_of_the_baselines(tmp_path: Path, engine: str) -> None:
    cfg = tiny(tmp_path, engine=engine, baseline_opponents=["heuristic"], baseline_prob=1.0, bc_coef=0.5)
    r = RolloutWorker(cfg, 0).collect(1, all_weights(fresh_net(cfg)), {}, [], 200)
    assert all(sum(seat == LEARNER for seat in h.lineup) == 1 for h in r.hands)
    assert len(r.demos.action) == r.all_decisions - len(r.action) > 2 * len(r.action)
    heuristic, rng = load_policy("heuristic"), np.random.default_rng(0)
    assert r.demos.mask[np.arange(len(r.demos.action)), r.demos.action].all()
    for obs, mask, action in zip(r.demos.obs[:300], r.demos.mask[:300], r.demos.action[:300]):
        assert heuristic.act(obs, mask.astype(np.int8), rng) == action
    plain = RolloutWorker(dataclasses.replace(cfg, bc_coef=0.0), 0).collect(1, all_weights(fresh_net(cfg)), {}, [], 200)
    assert plain.demos is None
    np.testing.assert_array_equal(plain.action, r.action)  # keeping them changes no hand


def _batch(cfg: TrainConfig, net: PolicyValueNet, decisions: int = 300) -> dict:
    r = RolloutWorker(cfg, 0).collect(1, all_weights(net), {}, [], decisions)
    adv, ret = gae(r.reward, r.value, r.done, cfg.gamma, cfg.gae_lambda)
    return to_batch(r, adv, ret, torch.device("cpu"))


def test_bc_loss_teaches_the_baselines_actions(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, baseline_opponents=["heuristic"], baseline_prob=1.0, bc_coef=1.0, ent_coef=0.0,
               vf_coef=0.0, update_epochs=4, learning_rate=3e-3)
    net = fresh_net(cfg)
    batch = _batch(cfg, net)
    batch["advantage"] = torch.zeros_like(batch["advantage"])  # no policy-gradient signal: only cloning moves it
    subsample_demos(batch, np.random.default_rng(0))
    assert len(batch["demo_action"]) == len(batch["action"])

    def cross_entropy() -> float:
        with torch.no_grad():
            logits = net.logits(batch["demo_obs"], batch["demo_mask"])
        return float(-torch.log_softmax(logits, 1).gather(1, batch["demo_action"][:, None]).mean())

    before = cross_entropy()
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    for i in range(5):
        stats = ppo_update(net, optimizer, batch, cfg, np.random.default_rng(i))
    assert cross_entropy() < 0.7 * before
    assert 0 < stats["bc_loss"] < before


# ---------------------------------------------------------------- kl_coef: towards the cloned policy


def _kl_to(anchor: PolicyValueNet, net: PolicyValueNet, batch: dict) -> float:
    with torch.no_grad():
        p = torch.log_softmax(anchor.logits(batch["obs"], batch["mask"]), 1)
        q = torch.log_softmax(net.logits(batch["obs"], batch["mask"]), 1)
    return float(torch.where(batch["mask"], p.exp() * (p - q), 0.0).sum(1).mean())


def test_kl_penalty_holds_the_policy_near_the_cloned_one(tmp_path: Path) -> None:
    drift = {}
    for coef in (0.0, 5.0):
        cfg = tiny(tmp_path, imitation_decisions=1, kl_coef=coef, ent_coef=0.0, update_epochs=4, learning_rate=3e-3)
        net = fresh_net(cfg)
        anchor = policy_copy(net)
        batch = _batch(cfg, net)
        batch["anchor_logp"] = anchor_logprobs(anchor, batch)
        assert torch.allclose(batch["anchor_logp"].gather(1, batch["action"][:, None]).squeeze(1),
                              batch["logprob"], atol=1e-5)  # the anchor is the policy that played
        optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
        for i in range(4):
            stats = ppo_update(net, optimizer, batch, cfg, np.random.default_rng(i))
        drift[coef] = _kl_to(anchor, net, batch)
        assert (stats["kl_to_bc"] > 0) == (coef > 0)
    assert drift[5.0] < 0.5 * drift[0.0]


def test_the_imitated_policy_is_kept_as_the_anchor_and_resumed(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, imitation_decisions=300, total_decisions=0)
    run = train(cfg)
    ckpt = read_checkpoint(run / "checkpoint.pt")
    assert ckpt["global_step"] == 0 and ckpt["demonstrations"] >= 300
    policy = {k: v for k, v in ckpt["model"].items() if not k.startswith("critic_trunk.")}
    assert ckpt["anchor"].keys() == policy.keys()
    assert all(torch.equal(ckpt["anchor"][k], policy[k]) for k in policy)

    resumed = make_config({**cfg.__dict__, "total_decisions": 300, "kl_coef": 0.5,
                           "baseline_opponents": ["heuristic"], "baseline_prob": 0.5, "bc_coef": 0.5})
    train(resumed, resume=run)
    after = read_checkpoint(run / "checkpoint.pt")
    assert after["global_step"] >= 300
    assert all(torch.equal(after["anchor"][k], ckpt["anchor"][k]) for k in policy)  # the anchor stays
    assert any(not torch.equal(after["model"][k], policy[k]) for k in policy)  # the policy moved

    # A checkpoint written before the anchor was kept cannot resume with kl_coef, and says why.
    save_checkpoint(run / "checkpoint.pt", {k: v for k, v in ckpt.items() if k not in ("anchor", "sha256")})
    with pytest.raises(CheckpointError, match="kl_coef needs the policy the imitation ended with"):
        train(resumed, resume=run)


# ---------------------------------------------------------------- fine-tuning (init_policy)


def _policy_weights(model: dict) -> dict:
    return {k: v for k, v in model.items() if not k.startswith("critic_trunk.")}


def test_init_policy_starts_ppo_from_a_trained_policy_and_anchors_kl_to_it(tmp_path: Path) -> None:
    from train.export import export_policy

    base = train(tiny(tmp_path / "base", total_decisions=150, oracle_critic=True))
    exported = tmp_path / "policy.pt"
    export_policy(base / "checkpoint.pt", exported)
    start = _policy_weights(read_checkpoint(base / "checkpoint.pt")["model"])
    fresh = fresh_net(tiny(tmp_path)).state_dict()
    assert any(not torch.equal(start[k], fresh[k]) for k in start)  # so "starts from" can fail

    for spec in (base / "checkpoint.pt", exported):  # a trainer checkpoint (with an oracle critic) or an export
        cfg = tiny(tmp_path / spec.stem, init_policy=str(spec), kl_coef=0.5, total_decisions=150)
        run = train(cfg)
        ckpt = read_checkpoint(run / "checkpoint.pt")
        assert ckpt["anchor"].keys() == start.keys()
        assert all(torch.equal(ckpt["anchor"][k], start[k]) for k in start)  # the weights PPO started from
        assert any(not torch.equal(ckpt["model"][k], start[k]) for k in start)  # and PPO moved them
        assert ckpt["config"]["init_policy"] == str(spec)


def test_init_policy_into_an_oracle_critic_run_loads_the_critic_only_if_the_policy_has_one(tmp_path: Path) -> None:
    from train.export import export_policy
    from train.ppo import load_init_policy

    base = train(tiny(tmp_path / "base", total_decisions=150, oracle_critic=True))
    export_policy(base / "checkpoint.pt", tmp_path / "policy.pt")  # the policy alone, no critic
    start = read_checkpoint(base / "checkpoint.pt")["model"]
    for spec, critic_loaded in ((tmp_path / "policy.pt", False), (base / "checkpoint.pt", True)):
        cfg = tiny(tmp_path, init_policy=str(spec), oracle_critic=True)
        net = fresh_net(cfg, state_planes=STATE_PLANES)
        fresh = {k: v.clone() for k, v in net.state_dict().items() if k.startswith("critic_trunk.")}
        load_init_policy(cfg, net)
        after = net.state_dict()
        assert all(torch.equal(after[k], start[k]) for k in _policy_weights(start))
        assert fresh and all(torch.equal(after[k], start[k] if critic_loaded else fresh[k]) for k in fresh)
        assert not torch.equal(start[next(iter(fresh))], fresh[next(iter(fresh))])  # the two cases differ


@pytest.mark.parametrize("spec, overrides, message", [
    ("heuristic", {}, "'heuristic' is HeuristicPolicy, not a trained network"),
    ("no_such_policy", {}, "unknown policy 'no_such_policy'"),
    ("missing.pt", {}, "missing.pt"),
    ("blood_battle_happy", {}, "another network: channels 64 [(]config: 16[)], blocks 3 [(]config: 1[)], "
                               "lookahead True [(]config: False[)]"),
    ("joy_mahjong_popular", {"game": "joy_mahjong"}, "another network: .*channels 64"),
    ("blood_battle_happy", {"game": "joy_mahjong", "channels": 64, "blocks": 3, "lookahead": True},
     "config field 'init_policy': .*blood_battle"),
])
def test_a_bad_init_policy_stops_before_the_run_directory_is_made(tmp_path: Path, spec: str, overrides: dict,
                                                                  message: str) -> None:
    cfg = tiny(tmp_path, init_policy=spec, **overrides)
    with pytest.raises(ValueError, match=message):
        train(cfg)
    assert not (tmp_path / "runs").exists()


def test_python_m_train_names_a_bad_init_policy_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.ppo import main

    assert main(["--runs-dir", str(tmp_path / "runs"), "--channels", "16", "--blocks", "1",
                 "--init-policy", "blood_battle_happy", "--progress", "false"]) == 2
    err = capsys.readouterr().err
    assert "config field 'init_policy': blood_battle_happy is another network: channels 64 (config: 16)" in err
    assert "Traceback" not in err and not (tmp_path / "runs").exists()
