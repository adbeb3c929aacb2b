"""The learner's maths (train/ppo.py): GAE, the PPO and imitation updates, and a loss that stops being finite."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.neural import PolicyValueNet, read_checkpoint
from train.config import TrainConfig
from train.ppo import gae, imitation_update, main, ppo_update, to_batch
from train.rollout import RolloutWorker, all_weights

from tests.train.support import STATE_PLANES, fresh_net, tiny


def test_gae_without_discount_gives_returns_to_go_per_trajectory() -> None:
    rewards = np.array([1.0, 0.0, 2.0, -1.0, 3.0], dtype=np.float32)
    values = np.array([0.5, 0.1, 0.2, 0.0, 1.0], dtype=np.float32)
    dones = np.array([False, False, True, False, True])
    adv, ret = gae(rewards, values, dones, gamma=1.0, lam=1.0)
    np.testing.assert_allclose(ret, [3.0, 2.0, 2.0, 2.0, 3.0])
    np.testing.assert_allclose(adv, ret - values)
    adv0, _ = gae(rewards, values, dones, gamma=1.0, lam=0.0)  # λ = 0: one-step TD errors
    np.testing.assert_allclose(adv0, [1.0 + 0.1 - 0.5, 0.2 - 0.1, 2.0 - 0.2, -1.0 + 1.0 - 0.0, 3.0 - 1.0], atol=1e-6)


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
