"""PPO self-play trainer (train/) and the neural agent (agents/neural.py)."""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.neural import CheckpointError, NeuralPolicy, PolicyValueNet, read_checkpoint
from mjenv import blood_battle_v0
from train.config import TrainConfig, make_config, parse_args
from train.pool import OpponentPool
from train.ppo import gae, imitation_update, main, ppo_update, to_batch, train
from train.rollout import (BASELINE, LEARNER, TEACHER, HandSummary, RolloutWorker, all_weights, credit_rewards,
                           policy_weights)

ROOT = Path(__file__).resolve().parents[1]
OBS_PLANES = blood_battle_v0.raw_env().observer.planes
STATE_PLANES = blood_battle_v0.raw_env().observer.state_planes
QUICKSTART = ROOT / "configs" / "quickstart_blood_battle.yaml"
TINY = dict(backend="inline", workers=1, envs_per_worker=4, decisions_per_worker=150, channels=16, blocks=1,
            minibatch_size=64, update_epochs=2, progress=False, eval_opponents=[], torch_threads=1)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny networks: several threads only contend with each other (and other tests) for the cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny(tmp_path: Path, **overrides) -> TrainConfig:
    """A config small enough for a test: a few hundred decisions, inline rollouts."""
    return make_config({**TINY, "runs_dir": str(tmp_path / "runs"), **overrides})


def fresh_net(cfg: TrainConfig, state_planes: int = 0) -> PolicyValueNet:
    """The network the trainer starts from with this config's seed."""
    return PolicyValueNet(OBS_PLANES, cfg.channels, cfg.blocks, state_planes, cfg.lookahead,
                          generator=torch.Generator().manual_seed(cfg.seed))


# ---------------------------------------------------------------- config


def test_config_unknown_key_fails_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown config key 'totl_decisions'"):
        make_config({"totl_decisions": 100})
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_decisions: 100\nlearning_rte: 0.1\n")
    with pytest.raises(ValueError, match="'learning_rte'"):
        parse_args(["--config", str(bad)])


def test_config_wrong_type_and_range_fail_naming_the_field(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match="'workers' must be int"):
        make_config({"workers": "two"})
    with pytest.raises(ValueError, match="'latest_prob' must be in"):
        make_config({"latest_prob": 1.5})
    assert main(["--workers", "0"]) == 2
    assert "'workers' must be >= 1" in capsys.readouterr().err
    assert main(["--resume", "/nonexistent/run"]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_config_file_then_command_line_overrides() -> None:
    cfg, resume = parse_args(["--config", str(QUICKSTART), "--total-decisions", "20000", "--oracle-critic", "true",
                              "--env-options", "{preset: qq}"])
    assert resume is None
    assert cfg.total_decisions == 20000 and cfg.oracle_critic is True and cfg.env_options == {"preset": "qq"}
    assert cfg.channels == 32  # from the file
    assert isinstance(make_config({"learning_rate": 1}).learning_rate, float)


def test_every_config_field_has_a_docstring() -> None:
    from train.config import field_docs

    docs = field_docs()
    assert {f.name for f in dataclasses.fields(TrainConfig)} == set(docs)
    assert all(docs.values())


# ---------------------------------------------------------------- reward crediting


def test_credit_rewards_between_decisions_go_to_the_last_decision() -> None:
    actors = [0, 1, 2, 0, 3, 1]
    step_rewards = [
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [-2, 4, -2, 0],   # seat 1's kong paid while seat 2 acts: 0 → step 0, 1 → step 1, 2 → step 2
        [0, 0, 0, 0],
        [5, -5, 0, 0],    # a payment during seat 3's step: 0 → step 3, 1 → step 1
        [-1, -1, -1, 3],  # the final settlement, at seat 1's last step: 0 → 3, 1 → 5, 2 → 2, 3 → 4
    ]
    credited = credit_rewards(actors, step_rewards)
    assert credited == [-2, 4 - 5, -2 - 1, 5 - 1, 3, -1]
    for seat in range(4):
        mine = sum(c for c, a in zip(credited, actors) if a == seat)
        assert mine == sum(r[seat] for r in step_rewards)


def test_credit_rewards_before_a_first_decision_go_to_it() -> None:
    assert credit_rewards([0, 1], [[-3, 3, 0, 0], [0, 0, 0, 0]]) == [-3, 3]
    # Seat 1 never decides (a Joy hand won before its turn): nothing to credit, nothing lost for seat 0.
    assert credit_rewards([0], [[-3, 3, 0, 0]]) == [-3]


def _replay_env_rewards(hand: HandSummary, env_options: dict) -> tuple[list[int], list[int]]:
    """Replay a hand from its seed and actions through the AEC loop; each seat's summed ``env.last()``
    rewards and the final beans."""
    env = blood_battle_v0.env(**env_options)
    env.reset(seed=hand.seed)
    totals = dict.fromkeys(env.possible_agents, 0)
    actions = iter(hand.actions)
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else next(actions))  # an illegal action would raise
    assert next(actions, None) is None
    return list(totals.values()), list(env.unwrapped.game.beans)


@pytest.mark.parametrize("engine", ["vector", "aec"])
@pytest.mark.parametrize("with_pool", [False, True])
def test_rollout_credits_exactly_the_env_rewards_per_seat(tmp_path: Path, with_pool: bool, engine: str) -> None:
    cfg = tiny(tmp_path, envs_per_worker=3, env_options={"preset": "qq", "rake": 3}, engine=engine)
    worker = RolloutWorker(cfg, 0)
    net = fresh_net(cfg)
    snaps = {7: policy_weights(fresh_net(dataclasses.replace(cfg, seed=9)))} if with_pool else {}
    pool = [(7, 1.0)] if with_pool else []
    r = worker.collect(1, all_weights(net), snaps, pool, 300)
    assert len(r.action) >= 300 and len(r.hands) >= 3
    assert r.mask[np.arange(len(r.action)), r.action].all()  # every chosen action was legal
    np.testing.assert_array_equal(r.reward, (r.beans / worker.scale).astype(np.float32))
    saw_snapshot = False
    for h, hand in enumerate(r.hands):
        totals, final = _replay_env_rewards(hand, cfg.env_options)
        assert totals == final == list(hand.beans)
        assert sum(totals) == -4 * 3  # zero-sum apart from the rake
        for seat in range(4):
            rows = np.flatnonzero((r.hand == h) & (r.seat == seat))
            if hand.lineup[seat] != LEARNER:
                saw_snapshot = True
                assert rows.size == 0  # snapshot decisions are not trained on
                continue
            assert rows.size > 0 and np.all(np.diff(rows) == 1)  # contiguous per (hand, seat)
            assert int(r.beans[rows].sum()) == totals[seat]  # exactly, in beans
            assert r.done[rows].tolist() == [False] * (rows.size - 1) + [True]
    assert saw_snapshot == with_pool
    assert r.all_decisions == sum(len(h.actions) for h in r.hands)


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


def test_joy_mahjong_trains_with_the_same_trainer(tmp_path: Path) -> None:
    from mjenv import joy_mahjong_v0

    cfg = tiny(tmp_path, game="joy_mahjong", env_options={"room": "popular"}, total_decisions=300,
               snapshot_every=1, checkpoint_every=1)
    run_dir = train(cfg)
    scalars = _scalars(run_dir)
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
    assert _scalars(run_dir / "imitation")["imitation/accuracy"]  # the imitation phase ran on the Joy teacher
    env, rng = joy_mahjong_v0.raw_env(), np.random.default_rng(0)
    env.reset(seed=4)
    while not env.game.over:
        obs = env.observe(env.agent_selection)
        prepared = policy.net.prepare(obs["observation"][None])
        np.testing.assert_array_equal(prepared, with_lookahead_joy(obs["observation"][None]))
        action = policy.act(obs["observation"], obs["action_mask"], rng)
        assert obs["action_mask"][action] == 1
        env.step(action)


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


@pytest.mark.parametrize("engine", ["vector", "aec"])
def test_demonstrations_are_the_teachers_actions_in_every_seat(tmp_path: Path, engine: str) -> None:
    cfg = tiny(tmp_path, envs_per_worker=2, engine=engine)
    r = RolloutWorker(cfg, 0).collect(1, all_weights(fresh_net(cfg)), {}, [], 200, imitate=True)
    teacher, rng = load_policy("heuristic"), np.random.default_rng(0)
    assert len(r.action) == r.all_decisions >= 200  # every seat's decisions are kept
    assert all(h.lineup == (TEACHER,) * 4 for h in r.hands)
    for obs, mask, action in zip(r.obs, r.mask, r.action):
        assert teacher.act(obs, mask.astype(np.int8), rng) == action
    for h, hand in enumerate(r.hands):  # each seat's credited beans still sum to its hand result
        for seat in range(4):
            rows = r.hand == h
            assert int(r.beans[rows & (r.seat == seat)].sum()) == hand.beans[seat]


def test_baseline_opponents_take_the_other_three_seats(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, envs_per_worker=3, baseline_opponents=["heuristic", "random"], baseline_prob=1.0)
    r = RolloutWorker(cfg, 0).collect(1, all_weights(fresh_net(cfg)), {}, [], 300)
    rivals = set()
    for h, hand in enumerate(r.hands):
        me = [s for s in range(4) if hand.lineup[s] == LEARNER]
        others = {hand.lineup[s] for s in range(4)} - {LEARNER}
        assert len(me) == 1 and len(others) == 1 and others <= {BASELINE, BASELINE - 1}
        rivals |= others
        assert set(r.seat[r.hand == h]) == set(me)  # only the learner's decisions are kept
    assert rivals == {BASELINE, BASELINE - 1}
    with pytest.raises(ValueError, match="'baseline_opponents' is empty"):
        tiny(tmp_path, baseline_prob=0.5)


def test_gae_without_discount_gives_returns_to_go_per_trajectory() -> None:
    rewards = np.array([1.0, 0.0, 2.0, -1.0, 3.0], dtype=np.float32)
    values = np.array([0.5, 0.1, 0.2, 0.0, 1.0], dtype=np.float32)
    dones = np.array([False, False, True, False, True])
    adv, ret = gae(rewards, values, dones, gamma=1.0, lam=1.0)
    np.testing.assert_allclose(ret, [3.0, 2.0, 2.0, 2.0, 3.0])
    np.testing.assert_allclose(adv, ret - values)
    adv0, _ = gae(rewards, values, dones, gamma=1.0, lam=0.0)  # λ = 0: one-step TD errors
    np.testing.assert_allclose(adv0, [1.0 + 0.1 - 0.5, 0.2 - 0.1, 2.0 - 0.2, -1.0 + 1.0 - 0.0, 3.0 - 1.0], atol=1e-6)


# ---------------------------------------------------------------- learning


def _fixed_batch(cfg: TrainConfig, net: PolicyValueNet, decisions: int = 400) -> dict:
    worker = RolloutWorker(cfg, 0)
    r = worker.collect(1, all_weights(net), {}, [], decisions)
    adv, ret = gae(r.reward, r.value, r.done, cfg.gamma, cfg.gae_lambda)
    return to_batch(r, adv, ret, torch.device("cpu"))


def _value_loss(net: PolicyValueNet, batch: dict) -> float:
    with torch.no_grad():
        _, v = net(batch["obs"], batch["mask"], batch["state"])
    return float(((v - batch["return"]) ** 2).mean())


def _forward_dtypes(net: PolicyValueNet) -> list[torch.dtype]:
    """The dtypes of the logits ``net`` returns, recorded per forward pass from now on."""
    seen: list[torch.dtype] = []
    net.register_forward_hook(lambda module, inputs, out: seen.append(out[0].dtype))
    return seen


@pytest.mark.parametrize("oracle, dtype", [(False, "float32"), (True, "float32"), (False, "bfloat16")])
def test_value_loss_falls_on_a_fixed_batch(tmp_path: Path, oracle: bool, dtype: str) -> None:
    cfg = tiny(tmp_path, oracle_critic=oracle, reward_scale=6.0, ent_coef=0.0, learning_rate=2e-3,
               minibatch_size=256, clip_vloss=False, learner_dtype=dtype)
    net = fresh_net(cfg, state_planes=STATE_PLANES if oracle else 0)
    batch = _fixed_batch(cfg, net)
    if oracle:
        assert batch["state"].shape[1:] == (STATE_PLANES, 27)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    before = _value_loss(net, batch)
    dtypes = _forward_dtypes(net)
    for i in range(15):
        stats = ppo_update(net, optimizer, batch, cfg, np.random.default_rng(i))
        assert all(math.isfinite(v) for v in stats.values())
    assert set(dtypes) == {getattr(torch, dtype)}  # the learner's precision (learner_dtype)
    assert all(p.dtype == torch.float32 for p in net.parameters())  # mixed precision: weights stay float32
    assert _value_loss(net, batch) < 0.7 * before


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_imitation_update_learns_the_teachers_actions(tmp_path: Path, dtype: str) -> None:
    # Enough demonstrations and steps that the drop does not hinge on one seed's deals (it did at 600).
    cfg = tiny(tmp_path, envs_per_worker=8, imitation_epochs=4, minibatch_size=128, reward_scale=6.0,
               learner_dtype=dtype)
    net = fresh_net(cfg)
    r = RolloutWorker(cfg, 0).collect(1, all_weights(net), {}, [], 1500, imitate=True)
    zeros = np.zeros_like(r.reward)
    _, returns = gae(r.reward, zeros, r.done, 1.0, 1.0)
    batch = to_batch(r, zeros, returns, torch.device("cpu"))
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)

    def cross_entropy() -> float:
        with torch.no_grad():
            logits, _ = net(batch["obs"], batch["mask"])
        return float(-torch.log_softmax(logits, 1).gather(1, batch["action"][:, None]).mean())

    before = cross_entropy()
    dtypes = _forward_dtypes(net)
    for i in range(10):
        stats = imitation_update(net, optimizer, batch, cfg, np.random.default_rng(i))
    assert set(dtypes) == {getattr(torch, dtype)}
    assert cross_entropy() < 0.7 * before
    assert stats["accuracy"] > 0.6 and math.isfinite(stats["value_loss"])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_policy_update_raises_the_probability_of_rewarded_actions(tmp_path: Path, dtype: str) -> None:
    cfg = tiny(tmp_path, ent_coef=0.0, vf_coef=0.0, learning_rate=1e-3, update_epochs=3, minibatch_size=10_000,
               learner_dtype=dtype)
    net = fresh_net(cfg)
    batch = _fixed_batch(cfg, net)
    good = batch["advantage"] > batch["advantage"].mean()  # advantages are centred per minibatch (norm_adv)
    ppo_update(net, torch.optim.Adam(net.parameters(), lr=cfg.learning_rate), batch, cfg, np.random.default_rng(0))
    with torch.no_grad():
        logits, _ = net(batch["obs"], batch["mask"])
        new_logprob = torch.log_softmax(logits, 1).gather(1, batch["action"][:, None]).squeeze(1)
    # The update must improve the policy-gradient surrogate: actions with positive advantage
    # gain log-probability, actions with negative advantage lose it, weighted by the advantage.
    change = new_logprob - batch["logprob"]
    centred = batch["advantage"] - batch["advantage"].mean()  # the update normalises advantages
    assert float((centred * change).mean()) > 0
    assert float(change[good].mean()) > float(change[~good].mean())


# ---------------------------------------------------------------- pool


def test_pool_prefers_snapshots_that_beat_the_learner_and_drops_the_oldest() -> None:
    pool = OpponentPool(size=2, power=1.0)
    for update in (1, 2, 3):
        pool.add({"w": np.full(2, update, dtype=np.float32)}, update)
    assert [s.update for s in pool.snapshots] == [2, 3] and pool.next_id == 3
    strong, weak = pool.snapshots[0].id, pool.snapshots[1].id
    hands = [HandSummary(0, (LEARNER, strong, weak, LEARNER), (-10, 30, -20, 0), (False,) * 4, [])] * 5
    pool.record(hands)
    probs = dict(pool.priorities())
    assert probs[strong] > probs[weak] and abs(sum(probs.values()) - 1) < 1e-12
    clone = OpponentPool(size=2, power=1.0)
    clone.load_state_dict(pool.state_dict())
    assert clone.priorities() == pool.priorities()
    np.testing.assert_array_equal(clone.snapshots[1].weights["w"], pool.snapshots[1].weights["w"])


# ---------------------------------------------------------------- smoke run, checkpoints, agent


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trainer run of ~600 decisions with a pool snapshot, a checkpoint and a tiny evaluation."""
    tmp = tmp_path_factory.mktemp("smoke")
    cfg = tiny(tmp, total_decisions=600, snapshot_every=1, checkpoint_every=2, imitation_decisions=300, lookahead=True,
               baseline_opponents=["heuristic"], baseline_prob=0.3,
               eval_opponents=["random"], eval_deals=2, oracle_critic=True)
    return train(cfg)


def _scalars(run_dir: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_smoke_run_logs_finite_losses_and_changes_the_parameters(smoke_run: Path) -> None:
    scalars = _scalars(smoke_run)
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
                "charts/beans_per_hand", "charts/win_rate", "charts/eval_vs_random_beans_per_hand"):
        assert tag in scalars and all(math.isfinite(v) for v in scalars[tag]), tag
    imitation = _scalars(smoke_run / "imitation")
    for tag in ("imitation/policy_loss", "imitation/accuracy", "imitation/explained_variance"):
        assert tag in imitation and all(math.isfinite(v) for v in imitation[tag]), tag
    assert len(scalars["losses/policy_loss"]) >= 3  # several updates
    ckpt = read_checkpoint(smoke_run / "checkpoint.pt")
    assert ckpt["global_step"] >= 600 and ckpt["update"] >= 3 and len(ckpt["pool"]["snapshots"]) >= 1
    assert ckpt["demonstrations"] >= 300
    initial = fresh_net(make_config(ckpt["config"]), state_planes=STATE_PLANES).state_dict()
    changed = [k for k, v in ckpt["model"].items() if not torch.equal(v, initial[k])]
    assert len(changed) == len(initial)
    saved = (smoke_run / "config.yaml").read_text()
    assert "total_decisions: 600" in saved and "oracle_critic: true" in saved
    assert (smoke_run / "eval.json").is_file()


def test_checkpoint_loads_with_weights_only_and_as_an_agent(smoke_run: Path) -> None:
    path = smoke_run / "checkpoint.pt"
    raw = torch.load(path, weights_only=True)
    assert raw["format"] == "mjenv.ppo/1" and not [p for p in os.listdir(smoke_run) if p.endswith(".tmp")]
    policy = load_policy(str(path))
    assert isinstance(policy, NeuralPolicy) and policy.greedy
    env = blood_battle_v0.raw_env()
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    while not env.game.over:  # a whole hand with the neural policy in every seat: only legal actions
        obs = env.observe(env.agent_selection)
        a = policy.act(obs["observation"], obs["action_mask"], rng)
        assert obs["action_mask"][a] == 1
        env.step(a)
    obs = env.observe(env.agent_selection)
    batch_obs = np.stack([obs["observation"]] * 3)
    masks = np.zeros((3, 62), dtype=np.int8)
    masks[:, [3, 20, 59]] = 1
    greedy = policy.act_batch(batch_obs, masks, rng)
    assert (greedy == greedy[0]).all() and set(greedy) <= {3, 20, 59}
    sampler = NeuralPolicy(policy.net, greedy=False)
    assert set(sampler.act_batch(np.stack([obs["observation"]] * 50), np.repeat(masks[:1], 50, 0), rng)) <= {3, 20, 59}
    clone = pickle.loads(pickle.dumps(policy))  # how the arena sends it to its workers
    assert (clone.act_batch(batch_obs, masks, rng) == greedy).all()


def test_export_keeps_only_the_policy_and_plays_the_same(smoke_run: Path, tmp_path: Path) -> None:
    from train.export import main as export_main

    src, dst = smoke_run / "checkpoint.pt", tmp_path / "policy.pt"
    assert export_main([str(src), str(dst)]) == 0
    small = torch.load(dst, weights_only=True)
    assert "optimizer" not in small and "pool" not in small and small["arch"]["state_planes"] == 0
    assert not any(k.startswith("critic_trunk.") for k in small["model"])
    assert dst.stat().st_size < src.stat().st_size
    full, lean = load_policy(str(src)), load_policy(str(dst))
    env = blood_battle_v0.raw_env()
    env.reset(seed=11)
    obs = np.stack([env.observe(a)["observation"] for a in env.agents])
    masks = np.stack([env.observe(a)["action_mask"] for a in env.agents])
    masks[:] = 0
    masks[:, [2, 5, 11, 59, 60, 61]] = 1
    with torch.no_grad():
        a = full.net.logits(torch.from_numpy(full.net.prepare(obs)), torch.from_numpy(masks.astype(bool)))
        b = lean.net.logits(torch.from_numpy(lean.net.prepare(obs)), torch.from_numpy(masks.astype(bool)))
    torch.testing.assert_close(a, b)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert export_main([str(tmp_path / "junk.pt"), str(tmp_path / "out.pt")]) == 2
    assert not (tmp_path / "out.pt").exists()


def test_policy_refuses_observations_of_another_encoder() -> None:
    policy = NeuralPolicy(PolicyValueNet(obs_planes=OBS_PLANES - 5, channels=8, blocks=1), name="old")
    with pytest.raises(ValueError, match=f"'old' was trained on observations of {OBS_PLANES - 5} planes"):
        policy.act(np.zeros((OBS_PLANES, 27), np.float32), np.ones(62, np.int8), np.random.default_rng(0))


@pytest.mark.parametrize("content", [b"", b"not a checkpoint\n", b"abc", b"PK\x03\x04truncated zip"])
def test_corrupt_checkpoint_gives_a_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="broken.pt: not a readable torch checkpoint"):
        load_policy(str(path))


def test_checkpoint_of_something_else_gives_a_clear_error(tmp_path: Path, smoke_run: Path) -> None:
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    with pytest.raises(CheckpointError, match="not an mjenv PPO checkpoint"):
        read_checkpoint(other)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((smoke_run / "checkpoint.pt").read_bytes()[:5000])
    with pytest.raises(CheckpointError, match="truncated.pt"):
        read_checkpoint(truncated)
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        read_checkpoint(tmp_path / "missing.pt")


def test_resume_from_a_damaged_checkpoint_names_the_file(tmp_path: Path, smoke_run: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text((smoke_run / "config.yaml").read_text())
    (run / "checkpoint.pt").write_bytes((smoke_run / "checkpoint.pt").read_bytes()[:3000])
    assert main(["--resume", str(run)]) == 2
    assert "checkpoint.pt: not a readable torch checkpoint" in capsys.readouterr().err


def test_checkpoint_from_before_joy_mahjong_resumes_and_loads_as_blood_battle(tmp_path: Path,
                                                                              smoke_run: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text((smoke_run / "config.yaml").read_text())
    ckpt = torch.load(smoke_run / "checkpoint.pt", weights_only=True)
    del ckpt["arch"]["game"]  # the arch of checkpoints written before the "game" field existed
    ckpt.pop("sha256_all")  # and before the checksum of the plain values
    torch.save(ckpt, run / "checkpoint.pt")
    assert read_checkpoint(run / "checkpoint.pt")["arch"]["game"] == "blood_battle"
    assert isinstance(load_policy(run / "checkpoint.pt"), NeuralPolicy)
    cfg = make_config({**dataclasses.asdict(parse_args(["--resume", str(run)])[0]),
                       "total_decisions": ckpt["global_step"] + 50, "eval_opponents": []})
    train(cfg, run)
    assert read_checkpoint(run / "checkpoint.pt")["global_step"] > ckpt["global_step"]


# ---------------------------------------------------------------- resume after a kill


def _start(args: list[str]) -> subprocess.Popen:
    # The repository first, and whatever path the caller set (packages installed with --target) after it.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "train", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_resume_after_kill_continues_the_counter_and_matches_an_unbroken_run(tmp_path: Path) -> None:
    flags = ["--backend", "inline", "--envs-per-worker", "4", "--decisions-per-worker", "100",
             "--channels", "16", "--blocks", "1", "--minibatch-size", "64", "--update-epochs", "1",
             "--progress", "false", "--eval-opponents", "[]", "--checkpoint-every", "1",
             "--snapshot-every", "2", "--total-decisions", "1500"]
    proc = _start([*flags, "--runs-dir", str(tmp_path / "killed")])
    deadline = time.monotonic() + 120
    ckpt = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((tmp_path / "killed").glob("*/checkpoint.pt"))
        if found:
            ckpt = found[0]
            break
        time.sleep(0.05)
    assert ckpt is not None, proc.communicate()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = read_checkpoint(ckpt)
    assert killed["global_step"] < 1500, "the run finished before the kill: make it longer"

    resumed = _start(["--resume", str(ckpt.parent)])
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"at update {killed['update']}, decision {killed['global_step']}" in out
    final = read_checkpoint(ckpt)
    assert final["update"] > killed["update"] and final["global_step"] >= 1500

    unbroken_run = train(parse_args([*flags, "--runs-dir", str(tmp_path / "unbroken")])[0])
    reference = read_checkpoint(unbroken_run / "checkpoint.pt")
    assert (reference["update"], reference["global_step"], reference["hands"]) == (
        final["update"], final["global_step"], final["hands"])
    for k, v in reference["model"].items():  # nothing lost: the same weights as without the kill
        assert torch.equal(v, final["model"][k]), k


def test_resume_after_the_warm_start_keeps_its_logs_and_does_not_imitate_again(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, imitation_decisions=300, total_decisions=100)
    run_dir = train(cfg)
    first = read_checkpoint(run_dir / "checkpoint.pt")
    accuracy = _scalars(run_dir / "imitation")["imitation/accuracy"]
    assert first["demonstrations"] >= 300 and len(accuracy) >= 2
    train(dataclasses.replace(cfg, total_decisions=400), resume=run_dir)
    final = read_checkpoint(run_dir / "checkpoint.pt")
    assert final["demonstrations"] == first["demonstrations"]  # no second warm start
    assert final["global_step"] >= 400 and final["update"] > first["update"]
    assert _scalars(run_dir / "imitation")["imitation/accuracy"] == accuracy  # not purged by the resume



class _Stop(RuntimeError):
    """Stands for a crash in the middle of a run."""


def test_overlapped_imitation_plays_ahead_and_learns_exactly_what_the_sequential_one_learns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import train.ppo as ppo
    from train.backends import InlineWorkers

    events: dict[bool, list] = {True: [], False: []}

    class Recording(InlineWorkers):
        def submit(self, update, weights, snapshots, pool, imitate=False):
            events[overlap].append(("submit", update, imitate))
            super().submit(update, weights, snapshots, pool, imitate)

        def receive(self):
            events[overlap].append(("receive",))
            return super().receive()

    real_update = ppo.imitation_update

    def recording_update(*args, **kwargs):
        events[overlap].append(("learn",))
        return real_update(*args, **kwargs)

    monkeypatch.setattr(ppo, "make_workers", Recording)
    monkeypatch.setattr(ppo, "imitation_update", recording_update)
    models = {}
    for overlap in (True, False):
        run = train(tiny(tmp_path / str(overlap), imitation_decisions=450, total_decisions=0, overlap=overlap))
        models[overlap] = read_checkpoint(run / "checkpoint.pt")
    assert models[True]["demonstrations"] == models[False]["demonstrations"] >= 450
    for k, v in models[False]["model"].items():  # the same demonstrations, the same updates
        assert torch.equal(v, models[True]["model"][k]), k
    submits = [e for e in events[True] if e[0] == "submit"]
    assert all(imitate for _, _, imitate in submits) and len(submits) >= 3
    # Overlapped: batch u + 1 is submitted before batch u is learned; in turn: after it.
    assert events[True][:5] == [("submit", 1, True), ("receive",), ("submit", 2, True), ("learn",), ("receive",)]
    assert events[False][:5] == [("submit", 1, True), ("receive",), ("learn",), ("submit", 2, True), ("receive",)]
    n = len(submits)
    assert events[True].count(("receive",)) == events[True].count(("learn",)) == n  # none left over for PPO
    assert [e[0] for e in events[False]] == ["submit", "receive", "learn"] * n


def test_a_run_stopped_in_the_imitation_resumes_its_batch_in_flight_and_matches_an_unbroken_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import train.ppo as ppo

    cfg = tiny(tmp_path, imitation_decisions=600, total_decisions=150, checkpoint_every=1)
    calls = []
    real = ppo.imitation_update

    def stop_at_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise _Stop("killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(ppo, "imitation_update", stop_at_the_third)
    with pytest.raises(_Stop):
        train(cfg)
    monkeypatch.setattr(ppo, "imitation_update", real)
    run_dir = next((tmp_path / "runs").iterdir())
    stopped = read_checkpoint(run_dir / "checkpoint.pt")
    assert stopped["update"] == 2 and stopped["inflight"]["imitate"] and stopped["inflight"]["update"] == 3
    train(cfg, resume=run_dir)
    final = read_checkpoint(run_dir / "checkpoint.pt")
    reference = read_checkpoint(train(dataclasses.replace(cfg, runs_dir=str(tmp_path / "unbroken"))) / "checkpoint.pt")
    assert (final["update"], final["demonstrations"], final["global_step"]) == (
        reference["update"], reference["demonstrations"], reference["global_step"])
    for k, v in reference["model"].items():
        assert torch.equal(v, final["model"][k]), k


# ---------------------------------------------------------------- backends


def _same_rollouts(got, parts) -> None:
    """A backend's joined rollout equals the per-worker rollouts computed in this process."""
    want = type(parts[0]).concat(parts)
    for name in ("obs", "mask", "action", "beans", "done", "hand", "seat"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    np.testing.assert_allclose(got.logprob, want.logprob, rtol=1e-5, atol=1e-6)
    assert [h.actions for h in got.hands] == [h.actions for h in want.hands]


def test_rollouts_cross_processes_through_a_reused_shared_memory_block() -> None:
    from multiprocessing.shared_memory import SharedMemory

    from train.transport import Outbox, read_shared

    rng = np.random.default_rng(0)
    sent = [{"obs": rng.random((50, 7, 3), dtype=np.float32), "mask": rng.random((50, 4)) < 0.5,
             "hands": [1, (2, 3)], "step": np.arange(9)[::2]},  # a strided array goes in band
            {"obs": np.zeros((0, 7, 3), dtype=np.float32), "mask": np.ones((1, 4), dtype=bool),
             "hands": [], "step": np.arange(3)}]
    boxes = [Outbox(), Outbox()]
    try:
        messages = [box.share(obj) for box, obj in zip(boxes, sent)]
        joined = read_shared(messages, lambda got: [{k: (v.copy() if isinstance(v, np.ndarray) else v)
                                                  for k, v in obj.items()} for obj in got])
        for want, got in zip(sent, joined):
            assert want.keys() == got.keys() and want["hands"] == got["hands"]
            for key in ("obs", "mask", "step"):
                np.testing.assert_array_equal(got[key], want[key])
                assert got[key].dtype == want[key].dtype
        # The next answer reuses the block when it fits and moves to a bigger one when it does not.
        small = boxes[0].share({"x": np.ones(10)})
        assert small[1] == messages[0][1]
        big = boxes[0].share({"x": np.arange(10**5, dtype=np.float64)})
        assert big[1] != messages[0][1]
        with pytest.raises(FileNotFoundError):  # the outgrown block is freed
            SharedMemory(name=messages[0][1])
        np.testing.assert_array_equal(read_shared([big], lambda got: got[0]["x"].copy()), np.arange(10**5))
        # An error while the arrays are read reaches the caller and leaves the block usable.
        with pytest.raises(ZeroDivisionError):
            read_shared([big], lambda got: 1 / 0)
        assert read_shared([big], lambda got: float(got[0]["x"][-1])) == 10**5 - 1
    finally:
        for box in boxes:
            box.close()
    for box, (_, name, _) in zip(boxes, [big, messages[1]]):  # closed: the memory is back
        assert box.block is None
        with pytest.raises(FileNotFoundError):
            SharedMemory(name=name)


def test_rollouts_go_through_the_pipe_with_a_warning_where_shared_memory_is_too_small(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import train.transport as transport

    block = transport.SharedMemory(create=True, size=4096)
    try:
        assert transport._reserved(block)  # there is room for 4 KB
    finally:
        block.close()
        block.unlink()
    # Docker's 64 MB /dev/shm: no room for a large rollout.
    monkeypatch.setattr(transport, "_reserved", lambda block: block.size < 1 << 20)
    box, big = transport.Outbox(), {"x": np.arange(10**6, dtype=np.float64), "n": 3}
    with pytest.warns(RuntimeWarning, match=r"no room for a 9 MB rollout.*shm-size"):
        message = box.share(big)
    assert message[1] is None and box.block is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # fits: shared memory again, and no second warning
        small = box.share({"x": np.ones(4)})
    assert small[1] is not None
    try:
        got = transport.read_shared([message, small], lambda objs: [o["x"].copy() for o in objs])
    finally:
        box.close()
    np.testing.assert_array_equal(got[0], big["x"])
    np.testing.assert_array_equal(got[1], np.ones(4))


def test_local_worker_processes_collect_the_same_rollouts_and_report_a_dead_worker(tmp_path: Path) -> None:
    from train.backends import LocalWorkers

    cfg = tiny(tmp_path, backend="local", workers=2)
    net = fresh_net(cfg)
    snaps = {3: policy_weights(fresh_net(dataclasses.replace(cfg, seed=4)))}
    workers = LocalWorkers(cfg)
    try:
        got = workers.collect(2, all_weights(net), snaps, [(3, 1.0)])
        again = workers.collect(3, all_weights(net), snaps, [(3, 1.0)])  # snapshots cached, not resent
        workers.submit(4, all_weights(net), {}, [])
        with pytest.raises(RuntimeError, match="receive"):  # its blocks still hold the answers to read
            workers.submit(5, all_weights(net), {}, [])
        assert len(workers.receive().hands) > 0
        workers.procs[1].kill()
        workers.procs[1].join()
        with pytest.raises(RuntimeError, match="rollout worker 1 exited"):
            workers.collect(4, all_weights(net), {}, [])
    finally:
        workers.close()
    from multiprocessing.shared_memory import SharedMemory

    for name in workers.outboxes:  # the killed worker's block and the terminated one's are freed
        with pytest.raises(FileNotFoundError):
            SharedMemory(name=name)
    _same_rollouts(got, [RolloutWorker(cfg, i).collect(2, all_weights(net), snaps, [(3, 1.0)], cfg.decisions_per_worker)
                         for i in range(2)])
    assert len(again.hands) > 0 and any(3 in h.lineup for h in again.hands)


# ---------------------------------------------------------------- Ray backend


def test_ray_backend_collects_the_same_rollouts_as_local_workers(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import ray  # the test command installs the ray extra
    from train.backends import RayWorkers

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    cfg = tiny(tmp_path, backend="ray", workers=2, total_decisions=400, snapshot_every=1)
    assert cfg.engine == "vector"  # the default: the actors play on the compiled engine
    net = fresh_net(cfg)
    snaps = {3: policy_weights(fresh_net(dataclasses.replace(cfg, seed=4)))}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        workers = RayWorkers(cfg)
        got = workers.collect(2, all_weights(net), snaps, [(3, 1.0)])
        workers.close()
        run_dir = train(cfg)  # the trainer end to end on Ray actors
    finally:
        ray.shutdown()
    _same_rollouts(got, [RolloutWorker(cfg, i).collect(2, all_weights(net), snaps, [(3, 1.0)], cfg.decisions_per_worker)
                         for i in range(2)])
    assert read_checkpoint(run_dir / "checkpoint.pt")["global_step"] >= 400


def test_ray_backend_joins_a_cluster_when_given_an_address(tmp_path: Path, monkeypatch) -> None:
    """--ray-address auto makes the backend call ray.init(address="auto") (multi-node use)."""
    import ray

    from train.backends import RayWorkers

    seen = {}

    class Joined(Exception):
        pass

    def fake_init(**kwargs):
        seen.update(kwargs)
        raise Joined

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    with pytest.raises(Joined):
        RayWorkers(tiny(tmp_path, backend="ray", ray_address="auto"))
    assert seen == {"address": "auto"}


# ---------------------------------------------------------------- bad input fails up front (issue 11, items 11-15)


def _run_files(run: Path) -> dict[str, bytes]:
    """Every file of a run directory with its bytes."""
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of ~150 decisions with no evaluation: the base of the resume tests."""
    return train(tiny(tmp_path_factory.mktemp("tiny"), total_decisions=150, checkpoint_every=1))


def _copy_run(run: Path, dst: Path) -> Path:
    """A copy of a run directory (the tests that resume it must not change the shared one)."""
    import shutil

    return Path(shutil.copytree(run, dst))


@pytest.mark.parametrize("flag", [["--channels", "8"], ["--blocks", "2"], ["--seed", "5"], ["--lookahead", "true"],
                                  ["--oracle-critic", "true"], ["--game", "joy_mahjong"],
                                  ["--init-policy", "blood_battle_happy"]])
def test_resume_refuses_flags_that_change_the_network_or_seed(tmp_path: Path, tiny_run: Path, flag: list[str],
                                                              capsys: pytest.CaptureFixture) -> None:
    run = _copy_run(tiny_run, tmp_path / "run")
    before = _run_files(run)
    assert main(["--resume", str(run), *flag]) == 2
    err = capsys.readouterr().err
    assert f"{flag[0]} would change the network, its starting weights or the seed" in err and "Traceback" not in err
    assert _run_files(run) == before  # nothing written, config.yaml included


def test_checkpoint_values_are_covered_by_the_checksum(tmp_path: Path, tiny_run: Path) -> None:
    ckpt = torch.load(tiny_run / "checkpoint.pt", weights_only=True)
    assert read_checkpoint(tiny_run / "checkpoint.pt")["sha256_all"] == ckpt["sha256_all"]
    for name, value in (("update", ckpt["update"] + 1), ("config", {**ckpt["config"], "seed": 2}),
                        ("pool", {**ckpt["pool"], "next_id": "1"})):
        torch.save({**ckpt, name: value}, tmp_path / "edited.pt")
        with pytest.raises(CheckpointError, match="edited.pt: the checkpoint's values do not match its sha256_all"):
            read_checkpoint(tmp_path / "edited.pt")


@pytest.mark.parametrize("field, value", [("update", "12"), ("global_step", -1), ("hands", 1.5), ("elapsed_s", "1"),
                                          ("config", []), ("pool", []), ("pool", {"next_id": 0, "snapshots": [{}]}),
                                          ("optimizer", []), ("inflight", {"update": "x"}), ("anchor", [1])])
def test_resume_from_a_checkpoint_with_a_field_of_the_wrong_type_exits_2(tmp_path: Path, tiny_run: Path,
                                                                         capsys: pytest.CaptureFixture,
                                                                         field: str, value: object) -> None:
    """A checkpoint written before ``sha256_all`` (its tensors' checksum only) is checked field by field."""
    from agents.neural import tensor_checksum

    run = _copy_run(tiny_run, tmp_path / "run")
    ckpt = torch.load(run / "checkpoint.pt", weights_only=True)
    ckpt.pop("sha256_all", None)
    ckpt[field] = value
    ckpt["sha256"] = tensor_checksum(ckpt)
    torch.save(ckpt, run / "checkpoint.pt")
    before = _run_files(run)
    assert main(["--resume", str(run), "--total-decisions", "300"]) == 2
    err = capsys.readouterr().err
    assert f"checkpoint.pt: field {field!r} must be" in err and "Traceback" not in err
    assert _run_files(run) == before


def test_a_runs_dir_that_cannot_take_a_run_folder_exits_2_before_training(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "file").write_text("x")
    for runs_dir in ("/proc/runs", str(tmp_path / "file")):
        assert main(["--config", str(QUICKSTART), "--runs-dir", runs_dir, "--progress", "false"]) == 2
        err = capsys.readouterr().err
        assert "cannot create the run folder" in err and "Traceback" not in err


def test_shipped_checkpoints_from_before_sha256_all_load_and_stay_as_they_are() -> None:
    for path in sorted((ROOT / "agents" / "checkpoints").glob("*.pt")):
        before = path.read_bytes()
        ckpt = read_checkpoint(path)
        assert "sha256" in ckpt and "sha256_all" not in ckpt  # the tensors-only checksum is still checked
        assert isinstance(load_policy(str(path)), NeuralPolicy)
        assert path.read_bytes() == before


@pytest.mark.parametrize("kind", ["same path", "hard link", "symbolic link"])
def test_export_refuses_to_write_over_its_source(tmp_path: Path, tiny_run: Path, capsys: pytest.CaptureFixture,
                                                 kind: str) -> None:
    from train.export import main as export_main

    src = tmp_path / "checkpoint.pt"
    src.write_bytes((tiny_run / "checkpoint.pt").read_bytes())
    dst = src if kind == "same path" else tmp_path / "policy.pt"
    if kind == "hard link":
        os.link(src, dst)
    elif kind == "symbolic link":
        dst.symlink_to(src)
    assert export_main([str(src), str(dst)]) == 2
    err = capsys.readouterr().err
    assert "is the same file as the checkpoint" in err and "Traceback" not in err
    assert src.read_bytes() == (tiny_run / "checkpoint.pt").read_bytes()
    assert "optimizer" in read_checkpoint(src)  # still a trainer checkpoint --resume takes


@pytest.mark.parametrize("where, message", [("folder", "is a folder"), ("missing/p.pt", "does not exist"),
                                            ("/proc/p.pt", "cannot write /proc/p.pt")])
def test_export_to_a_path_that_cannot_take_the_file_exits_2_and_leaves_nothing(
        tmp_path: Path, tiny_run: Path, capsys: pytest.CaptureFixture, where: str, message: str) -> None:
    from train.export import main as export_main

    (tmp_path / "folder").mkdir()
    assert export_main([str(tiny_run / "checkpoint.pt"), str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["folder"] and os.listdir(tmp_path / "folder") == []


def test_a_failed_resume_changes_no_file_and_a_plain_resume_still_works(tmp_path: Path, tiny_run: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    run = _copy_run(tiny_run, tmp_path / "run")
    before = _run_files(run)
    saved = parse_args(["--resume", str(run)])[0]
    with pytest.raises(CheckpointError, match="checkpoint.pt: network .* differs from the config's"):
        train(dataclasses.replace(saved, channels=8), resume=run)  # past the flag check: the arch check
    assert _run_files(run) == before
    assert main(["--resume", str(run), "--total-decisions", "300"]) == 0
    assert "resumed" in capsys.readouterr().out
    assert read_checkpoint(run / "checkpoint.pt")["global_step"] >= 300


@pytest.mark.parametrize("field, value", [
    ("ent_coef", math.nan), ("max_grad_norm", -1.0), ("max_grad_norm", 0.0), ("clip_coef", -0.2), ("vf_coef", -1.0),
    ("learning_rate", 0.0), ("learning_rate", -3e-4), ("learning_rate", math.nan), ("learning_rate", math.inf),
    ("imitation_learning_rate", 0.0), ("gae_lambda", math.nan), ("target_kl", -0.1), ("reward_scale", math.inf),
    ("pfsp_power", 1e6), ("seed", -1), ("eval_seed", -1), ("channels", 200_000), ("blocks", 0), ("pool_size", -1),
])
def test_config_refuses_values_that_wreck_training(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"config field '{field}' must be"):
        make_config({field: value})


def test_every_numeric_config_field_has_bounds() -> None:
    from train.config import BOUNDS

    numeric = {f.name for f in dataclasses.fields(TrainConfig) if f.type in ("int", "float", int, float)}
    assert numeric == set(BOUNDS)
    defaults = TrainConfig()
    assert all(b.admits(getattr(defaults, name)) for name, b in BOUNDS.items())


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning")
def test_training_stops_with_a_clear_error_when_a_loss_becomes_non_finite(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    # A reward scale this small turns every bean into an infinite float32 reward.
    flags = ["--backend", "inline", "--envs-per-worker", "2", "--decisions-per-worker", "100", "--channels", "8",
             "--blocks", "1", "--progress", "false", "--eval-opponents", "[]", "--checkpoint-every", "1",
             "--total-decisions", "400", "--reward-scale", "1e-39", "--runs-dir", str(tmp_path / "runs")]
    assert main(flags) == 1
    err = capsys.readouterr().err
    assert "PPO loss became" in err and "the last checkpoint is untouched" in err and "Traceback" not in err
    for ckpt in (tmp_path / "runs").glob("*/checkpoint.pt"):
        read_checkpoint(ckpt)  # whatever was saved holds finite weights


def test_ppo_update_leaves_the_weights_alone_when_the_loss_is_not_finite(tmp_path: Path) -> None:
    from train.ppo import TrainingDiverged

    cfg = tiny(tmp_path)
    net = fresh_net(cfg)
    batch = _fixed_batch(cfg, net, decisions=100)
    batch["return"][0] = math.nan
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(TrainingDiverged, match="PPO loss became nan"):
        ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-3), batch, cfg, np.random.default_rng(0))
    assert all(torch.equal(v, before[k]) for k, v in net.state_dict().items())


def _rewrite(src: Path, dst: Path, edit) -> Path:
    """Copy a checkpoint through ``edit(ckpt)``, saved as the trainer saves (with a fresh checksum)."""
    from train.ppo import save_checkpoint

    ckpt = torch.load(src, weights_only=True)
    edit(ckpt)
    save_checkpoint(dst, ckpt)
    return dst


def test_checkpoint_with_non_finite_weights_is_refused_to_load_and_resume(tmp_path: Path, tiny_run: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    run = _copy_run(tiny_run, tmp_path / "run")
    _rewrite(run / "checkpoint.pt", run / "checkpoint.pt",
             lambda c: c["model"]["trunk.stem.linear.weight"].view(-1).__setitem__(3, math.nan))
    before = _run_files(run)
    with pytest.raises(CheckpointError, match=r"checkpoint.pt: non-finite weights .*trunk.stem.linear.weight"):
        load_policy(run / "checkpoint.pt")
    assert main(["--resume", str(run)]) == 2
    assert "non-finite weights" in capsys.readouterr().err
    assert _run_files(run) == before


def test_checkpoint_errors_name_the_file_and_the_reason(tmp_path: Path, tiny_run: Path) -> None:
    from train.export import main as export_main

    src = tiny_run / "checkpoint.pt"
    cases = {
        "wrong_arch.pt": (lambda c: c["arch"].update(channels=8), "weights do not fit its arch|needs"),
        "unknown_key.pt": (lambda c: c["arch"].update(colour=1), r"unknown \['colour'\]"),
        "huge.pt": (lambda c: c["arch"].update(channels=200_000), r"channels must be an int in \[1, 512\]"),
        "bad_arch.pt": (lambda c: c.update(arch=[16]), "'arch' must be a mapping"),
    }
    for name, (edit, reason) in cases.items():
        path = _rewrite(src, tmp_path / name, edit)
        with pytest.raises(CheckpointError, match=f"{name}: .*({reason})"):
            load_policy(path)
        assert export_main([str(path), str(tmp_path / f"out_{name}")]) == 2
        assert not (tmp_path / f"out_{name}").exists()  # nothing exported


def test_checksum_catches_flipped_bytes_in_the_weights(tmp_path: Path, tiny_run: Path) -> None:
    import zipfile

    src = tiny_run / "checkpoint.pt"
    raw = torch.load(src, weights_only=True)
    from agents.neural import tensor_checksum

    assert raw["sha256"] == tensor_checksum(raw)  # the trainer writes it
    with zipfile.ZipFile(src) as zf:  # torch stores tensors uncompressed: flip 32 bytes of the largest one
        info = max((i for i in zf.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    data = bytearray(src.read_bytes())
    name_len, extra_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len + info.file_size // 2
    data[start:start + 32] = bytes(b ^ 0xFF for b in data[start:start + 32])
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged.pt: the tensors do not match the checkpoint's sha256"):
        read_checkpoint(damaged)


def test_checkpoints_without_a_checksum_still_load(tmp_path: Path) -> None:
    from agents.registry import SHIPPED_CHECKPOINTS

    ckpt = torch.load(SHIPPED_CHECKPOINTS["blood_battle_happy"], weights_only=True)
    del ckpt["sha256"]  # as written before the checksum existed
    torch.save(ckpt, tmp_path / "old.pt")
    assert isinstance(load_policy(tmp_path / "old.pt"), NeuralPolicy)


def test_train_config_file_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_decisions: 100\neval_opponents: [random\n")
    for args, message in ((["--config", str(bad)], "bad.yaml: not valid YAML"),
                          (["--config", str(tmp_path / "missing.yaml")], "missing.yaml: no such config file"),
                          (["--config", str(tmp_path)], "is a folder")):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


@pytest.mark.parametrize("flag, field", [
    (["--eval-opponents", "[random, nobody]"], "eval_opponents"),
    (["--teacher", "nobody", "--imitation-decisions", "100"], "teacher"),
    (["--baseline-opponents", "[nobody]", "--baseline-prob", "0.5"], "baseline_opponents"),
    (["--eval-opponents", "[blood_battle_qq]", "--game", "joy_mahjong"], "eval_opponents"),
    (["--device", "tpu0"], "device"),
    (["--device", "cuda:99"], "device"),
    (["--env-options", "{preset: nope}"], "env_options"),
    (["--env-options", "{cap_fann: 3}"], "env_options"),
])
def test_bad_run_settings_fail_before_a_run_directory_is_made(tmp_path: Path, flag: list[str], field: str,
                                                              capsys: pytest.CaptureFixture) -> None:
    flags = ["--backend", "inline", "--envs-per-worker", "2", "--decisions-per-worker", "100", "--channels", "8",
             "--blocks", "1", "--progress", "false", "--total-decisions", "100", "--eval-deals", "1",
             "--runs-dir", str(tmp_path / "runs")]
    assert main([*flags, *flag]) == 2
    err = capsys.readouterr().err
    assert f"config field '{field}'" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


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
