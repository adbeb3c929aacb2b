"""The rule option items (S17 of docs/rules-blood-battle.md) reaches the networks and the trainer:
a network of an items env has the item logits (use item i, give kind k, name kind k) in the
layout's order, so its ``n_actions`` is that layout's; checkpoints from before the option read
without them; a tiny training run with ``items=1`` learns and writes a network that may use items.
(The arena's counts: tests/agents/arena/test_arena_items.py; the default policies never using an
item: tests/mjenv/test_items.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.checkpoint import CheckpointError, check_arch
from agents.neural import NeuralPolicy, PolicyValueNet, read_checkpoint
from agents.registry import load_policy
from mjenv import blood_battle_v0
from mjenv.actions import BLOOD_BATTLE
from train.ppo import train

from tests.train.support import ROOT, logged_scalars, tiny

ITEMS_LAYOUT = BLOOD_BATTLE.with_options(False, True)


def _item_decisions(hands: int, seed: int, **options) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every decision of random hands with ``items=1``, item steps included."""
    env = blood_battle_v0.raw_env(items=1, **options)
    obs, masks = [], []
    rng = np.random.default_rng(seed)
    for h in range(hands):
        env.reset(seed=seed + h)
        while not env.game.over:
            o = env.observe(env.agent_selection)
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.stack(obs), np.stack(masks)


def test_a_network_with_items_has_the_item_logits_in_the_layouts_order() -> None:
    obs, masks = _item_decisions(hands=1, seed=3)
    net = PolicyValueNet(obs.shape[1], 8, 1, items=True, generator=torch.Generator().manual_seed(0))
    assert net.n_actions == ITEMS_LAYOUT.n == 121 and net.arch["items"] is True
    assert PolicyValueNet(obs.shape[1], 8, 1, escape=True, items=True).n_actions == 122
    steps = masks[:, ITEMS_LAYOUT.GIVE:].any(axis=1)  # the give / name decisions after an item was chosen
    assert steps.any() and not masks[steps, :ITEMS_LAYOUT.ITEM].any()
    logits = net.logits(torch.from_numpy(obs), torch.from_numpy(masks.astype(bool)))
    assert logits.shape == (len(obs), 121)
    assert ((logits > -1e8) == torch.from_numpy(masks.astype(bool))).all()  # a logit for every legal action
    policy = NeuralPolicy(net, "items", greedy=False)
    actions = policy.act_batch(obs, masks, np.random.default_rng(0))
    assert masks[np.arange(len(actions)), actions].all() and (actions[steps] >= ITEMS_LAYOUT.GIVE).all()
    with pytest.raises(ValueError, match="trained with 121 actions, got masks of 62"):
        policy.act_batch(obs[:, :obs.shape[1]], masks[:, :62], np.random.default_rng(0))
    with pytest.raises(ValueError, match="items are a rule option of the blood battle only"):
        PolicyValueNet(84, 8, 1, game="joy_mahjong", items=True)


def test_old_checkpoints_have_no_item_logits_and_a_joy_arch_with_items_is_refused() -> None:
    path = ROOT / "agents" / "checkpoints" / "blood_battle_happy.pt"
    before = path.read_bytes()
    assert read_checkpoint(path)["arch"]["items"] is False  # filled in for files from before the option
    assert load_policy(str(path)).net.n_actions == 62 and path.read_bytes() == before
    arch = {"obs_planes": 84, "channels": 8, "blocks": 1, "state_planes": 0, "lookahead": False, "escape": False,
            "game": "joy_mahjong", "items": True}
    with pytest.raises(CheckpointError, match="arch items needs game blood_battle"):
        check_arch(path, arch)
    with pytest.raises(CheckpointError, match="arch items must be true or false"):
        check_arch(path, {**arch, "game": "blood_battle", "items": 1})


def test_the_trainer_learns_with_items_and_its_network_may_use_them(tmp_path) -> None:
    cfg = tiny(tmp_path, env_options={"items": 1}, total_decisions=300, checkpoint_every=1)
    run = train(cfg)
    ckpt = read_checkpoint(run / "checkpoint.pt")
    assert ckpt["arch"]["items"] is True and ckpt["config"]["env_options"] == {"items": 1}
    policy = load_policy(str(run / "checkpoint.pt"))
    assert policy.net.n_actions == 121
    obs, masks = _item_decisions(hands=1, seed=2)
    turn = next(i for i, m in enumerate(masks) if m[ITEMS_LAYOUT.ITEM + 1:ITEMS_LAYOUT.GIVE].any())
    probs = policy.action_probs(obs[turn], masks[turn])
    assert probs[ITEMS_LAYOUT.ITEM:ITEMS_LAYOUT.GIVE].sum() > 0  # an item has a probability: it may learn to use it
    scalars = logged_scalars(run)
    assert any(np.isfinite(v).all() for k, v in scalars.items() if "loss" in k)
