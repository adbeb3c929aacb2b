"""The rule options escape and bankroll reach the agents, the arena and the trainer (S16, J11, B4 of
docs/rules-blood-battle.md and docs/rules-joy-mahjong.md): policies built for the default layout
read its part of the wider observations and masks and never escape; networks trained with
``escape`` have an ESCAPE logit; the arena counts escapes per agent; the trainer learns with them."""

from __future__ import annotations

from tests.support import ROOT

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.arena import run_arena
from agents.neural import NeuralPolicy, PolicyValueNet, read_checkpoint
from agents.registry import load_policy
from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.cli import main
from train.ppo import train

from tests.train.support import ROOT, tiny

OPTIONS = {"escape": True, "bankroll": 4000}


def _decisions(module, options: dict, hands: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Observations and masks of every decision of ``hands`` random hands with ``options``
    (nobody escapes: the first legal action other than ESCAPE is played)."""
    env = module.raw_env(**options)
    obs, masks = [], []
    rng = np.random.default_rng(seed)
    for h in range(hands):
        env.reset(seed=seed + h)
        for agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            legal = np.flatnonzero(o["action_mask"][:-1])  # not ESCAPE, the last action
            env.step(int(rng.choice(legal)))
    return obs, masks


@pytest.mark.parametrize("module, game, name", [
    (blood_battle_v0, "blood_battle", "heuristic"), (blood_battle_v0, "blood_battle", "blood_battle_happy"),
    (joy_mahjong_v0, "joy_mahjong", "heuristic"), (joy_mahjong_v0, "joy_mahjong", "joy_mahjong_popular"),
])
def test_default_policies_read_the_default_part_and_never_escape(module, game: str, name: str) -> None:
    obs, masks = _decisions(module, OPTIONS, hands=3, seed=11)
    default = module.raw_env()
    planes, n = default.observer.planes, default.action_space("player_0").n
    wide_obs, wide_masks = np.stack(obs), np.stack(masks)
    assert wide_obs.shape[1] > planes and wide_masks.shape[1] == n + 1  # the options' planes and ESCAPE
    policy = load_policy(name, game)
    rng = np.random.default_rng(0)
    wide = policy.act_batch(wide_obs, wide_masks, rng)
    assert np.array_equal(wide, policy.act_batch(wide_obs[:, :planes], wide_masks[:, :n], rng))
    assert (wide < n).all() and wide_masks[np.arange(len(wide)), wide].all()
    one_by_one = [policy.act(o, m, rng) for o, m in zip(obs[:40], masks[:40])]
    assert one_by_one == wide[:40].tolist()


def test_a_network_without_escape_gives_escape_probability_zero() -> None:
    obs, masks = _decisions(blood_battle_v0, OPTIONS, hands=1, seed=3)
    policy = load_policy("blood_battle_happy")
    probs = policy.action_probs(obs[5], masks[5])
    assert probs.shape == (63,) and probs[62] == 0 and probs.sum() == pytest.approx(1, abs=1e-5)


def test_a_network_with_escape_has_its_logit_and_refuses_masks_without_it() -> None:
    net = PolicyValueNet(77, 8, 1, escape=True, generator=torch.Generator().manual_seed(0))
    assert net.n_actions == 63 and net.arch["escape"] is True
    obs, masks = _decisions(blood_battle_v0, {"escape": True}, hands=1, seed=4)
    policy = NeuralPolicy(net, "escaper", greedy=False)
    o, m = np.stack(obs), np.stack(masks).astype(bool)
    logits = net.logits(torch.from_numpy(o), torch.from_numpy(m))
    assert logits.shape == (len(o), 63) and (logits[:, 62] > -1e8).all()  # ESCAPE is legal at every decision
    actions = [policy.act(x, y, np.random.default_rng(i)) for i, (x, y) in enumerate(zip(obs, masks))]
    assert all(masks[i][a] for i, a in enumerate(actions))
    with pytest.raises(ValueError, match="trained with 63 actions, got masks of 62"):
        policy.act_batch(o, m[:, :62], np.random.default_rng(0))


def test_old_checkpoints_have_no_escape_and_stay_as_they_are() -> None:
    path = ROOT / "agents" / "checkpoints" / "blood_battle_happy.pt"
    before = path.read_bytes()
    ckpt = read_checkpoint(path)
    assert ckpt["arch"]["escape"] is False  # filled in for files from before the option
    assert load_policy(str(path)).net.n_actions == 62 and path.read_bytes() == before


@pytest.mark.parametrize("game, options", [
    ("blood_battle", {"preset": "happy", "escape": True}),
    ("blood_battle", {"preset": "qq", "escape": True, "bankroll": 3000}),
    ("joy_mahjong", {"room": "popular", "escape": True, "bankroll": 2000}),
])
def test_the_arena_counts_escapes_per_agent_on_both_backends(game: str, options: dict) -> None:
    ref = run_arena(game, ["heuristic", "random"], deals=6, seed=5, env_options=options, progress=False,
                    backend="reference")
    vec = run_arena(game, ["heuristic", "random"], deals=6, seed=5, env_options=options, progress=False,
                    backend="compiled")
    assert vec.records == ref.records  # the escaped seats too
    stats = vec.stats()
    assert stats["heuristic"]["escapes"] == 0 and stats["heuristic"]["escape_rate"] == 0
    escapes = sum(len(r.escaped) for r in vec.records)
    assert escapes > 0 and stats["random"]["escapes"] == escapes
    assert stats["random"]["escape_rate"] == escapes / stats["random"]["seat_hands"]
    assert "escape" in vec.format_table().splitlines()[1]


def test_the_escape_column_shows_only_with_the_option() -> None:
    res = run_arena("blood_battle", ["heuristic", "random"], deals=2, seed=1, progress=False)
    assert "escape" not in res.format_table().splitlines()[1]
    assert not {"escapes", "escape_rate"} & set(res.stats()["random"])


def test_mjenv_eval_takes_the_options_as_rules(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "r.json"
    assert main(["eval", "--agents", "heuristic", "random", "--deals", "3", "--rule", "escape=true",
                 "--rule", "bankroll=5000", "--out", str(out), "--no-progress"]) == 0
    d = json.loads(out.read_text())
    assert d["rules"]["escape"] is True and d["rules"]["bankroll"] == 5000
    assert d["results"]["random"]["escape_rate"] > 0 and d["results"]["heuristic"]["escape_rate"] == 0


@pytest.mark.parametrize("game, options", [("blood_battle", {"preset": "happy", "escape": True}),
                                           ("joy_mahjong", {"room": "popular", "escape": True})])
def test_the_trainer_learns_with_escape_and_its_network_may_escape(tmp_path: Path, game: str, options: dict) -> None:
    cfg = tiny(tmp_path, game=game, env_options=options, total_decisions=400, checkpoint_every=1)
    run = train(cfg)
    ckpt = read_checkpoint(run / "checkpoint.pt")
    layout_n = (blood_battle_v0 if game == "blood_battle" else joy_mahjong_v0).raw_env().action_space("player_0").n
    assert ckpt["arch"]["escape"] is True
    policy = load_policy(str(run / "checkpoint.pt"), game)
    assert policy.net.n_actions == layout_n + 1
    module = blood_battle_v0 if game == "blood_battle" else joy_mahjong_v0
    obs, masks = _decisions(module, options, hands=1, seed=2)
    probs = policy.action_probs(obs[0], masks[0])
    assert probs[layout_n] > 0  # ESCAPE has a probability: the network may learn to use it


@pytest.mark.parametrize("game", ["blood_battle", "joy_mahjong"])
def test_the_toolkit_view_plays_named_opponents_with_the_options(game: str) -> None:
    from mjenv.integrations.gymnasium import SingleSeatVectorEnv

    env = SingleSeatVectorEnv(game, 8, opponents="heuristic", escape=True, bankroll=3000)
    env.reset(seed=1)
    ended = escaped = 0
    for _ in range(300):
        masks = env.action_masks()
        assert masks.shape[1] == env.single_action_space.n and masks[:, -1].all()  # ESCAPE offered to the learner
        _, _, terminated, _, info = env.step(np.array([np.flatnonzero(m[:-1])[0] for m in masks]))
        if terminated.any():  # the ending hands' facts of the options
            ended += int(terminated.sum())
            escaped += int(info["escaped"][terminated].sum())
            assert (info["balances"][terminated] >= 0).all() and info["balances"][terminated].sum() > 0
    assert ended > 8 and escaped == 0  # hands end, and neither the learner nor a heuristic ever escaped


def test_a_network_trained_with_other_planes_is_not_trimmed_to_fit() -> None:
    """Only a network of the default layout reads the default part: one trained with a bankroll
    (77 planes, 62 actions) refuses an escape table's masks, whose 77 planes mean other things."""
    net = PolicyValueNet(77, 8, 1, generator=torch.Generator().manual_seed(0))
    obs, masks = _decisions(blood_battle_v0, {"escape": True}, hands=1, seed=4)
    with pytest.raises(ValueError, match="trained with 62 actions, got masks of 63"):
        NeuralPolicy(net, "bankrolled").act_batch(np.stack(obs), np.stack(masks), np.random.default_rng(0))
