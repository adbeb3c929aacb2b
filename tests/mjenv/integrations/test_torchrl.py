"""The TorchRL view (mjenv.integrations.torchrl): a batched EnvBase on the compiled engine, checked
with TorchRL's own tools (check_env_specs, ActionMask, RewardSum, MaskedCategorical, Collector)
and step by step against the SingleSeatVectorEnv underneath."""

from __future__ import annotations

from tests.support import ROOT

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from tensordict.nn import TensorDictModule
from torchrl.collectors import Collector
from torchrl.envs import ActionMask, Compose, InitTracker, RewardSum, TransformedEnv
from torchrl.envs.utils import check_env_specs, step_mdp
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

from mjenv import games
from mjenv.engine.core import IllegalActionError
from mjenv.integrations.gymnasium import SingleSeatVectorEnv
from mjenv.integrations.torchrl import SingleSeatTorchEnv, make_env

DTYPES = {"float32": torch.float32, "uint8": torch.uint8}


@pytest.fixture(autouse=True)
def seeded_torch():
    """torch's global generator seeded (tests/conftest.py keeps torch on one thread)."""
    torch.manual_seed(0)


def lowest_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A deterministic batched opponent."""
    return masks.argmax(axis=1)


def own_beans(td) -> torch.Tensor:
    """The learning seat's entry of each row's bean table."""
    return td["beans"].gather(-1, td["seat"].unsqueeze(-1)).squeeze(-1)


# ---------------------------------------------------------------- specs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_check_env_specs_passes(game, dtype):
    env = make_env(game, 8, observation_dtype=dtype, seed=1)
    n_actions = int(games.game(game).raw_env().action_space("player_0").n)
    assert isinstance(env, SingleSeatTorchEnv) and env.batch_size == torch.Size([8])
    assert env.observation_spec["observation"].dtype == DTYPES[dtype]
    mask_spec = env.observation_spec["action_mask"]
    assert mask_spec.dtype == torch.bool and mask_spec.shape == (8, n_actions)
    assert env.action_spec.space.n == n_actions and set(env.done_keys) == {"done", "terminated", "truncated"}
    check_env_specs(env)  # the bare env samples from its own mask
    check_env_specs(TransformedEnv(make_env(game, 8, observation_dtype=dtype), ActionMask()),
                    break_when_any_done="both", seed=0)
    td = env.reset()
    assert td["observation"].dtype == DTYPES[dtype] and td["action_mask"].any(-1).all()


# ---------------------------------------------------------------- against the env underneath


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("game,options", [("blood_battle", {"preset": "qq"}), ("joy_mahjong", {"room": "no_fan"})])
def test_every_step_is_the_single_seat_vector_env(game, options, dtype):
    """Driven as TorchRL drives it (step_and_maybe_reset), the env shows what a SAME_STEP
    SingleSeatVectorEnv given the same seed and actions shows: the finished table's last view on
    the step that ends its episode (with done, beans and that episode's seat), then its next hand's
    first decision after the partial reset."""
    n, seed = 6, 21
    kw = dict(opponents=lowest_legal, seat="random", observation_dtype=dtype, **options)
    env = make_env(game, n, seed=seed, **kw)
    twin = SingleSeatVectorEnv(game, n, autoreset_mode="same_step", **kw)
    obs, info = twin.reset(seed=seed)
    td = env.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(200):
        np.testing.assert_array_equal(td["observation"].numpy(), obs)
        np.testing.assert_array_equal(td["action_mask"].numpy(), info["action_mask"] > 0)
        np.testing.assert_array_equal(td["seat"].numpy(), info["seat"])
        assert not td["done"].any()
        masks = info["action_mask"]
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        td["action"] = torch.from_numpy(actions)
        out, td = env.step_and_maybe_reset(td)
        obs, reward, term, _, info = twin.step(actions)
        nxt = out["next"]
        np.testing.assert_array_equal(nxt["reward"].squeeze(-1).numpy(), reward)
        np.testing.assert_array_equal(nxt["done"].squeeze(-1).numpy(), term)
        np.testing.assert_array_equal(nxt["terminated"].squeeze(-1).numpy(), term)
        assert not nxt["truncated"].any()
        for i in range(n):
            if term[i]:
                ends += 1
                np.testing.assert_array_equal(nxt["observation"][i].numpy(), info["final_obs"][i])
                assert nxt["action_mask"][i].all()
                assert nxt["beans"][i].tolist() == info["final_info"]["beans"][i].tolist()
                assert nxt["seat"][i] == info["final_info"]["seat"][i]
            else:
                np.testing.assert_array_equal(nxt["observation"][i].numpy(), obs[i])
                assert not nxt["beans"][i].any() and nxt["seat"][i] == info["seat"][i]
    assert ends >= 20


# ---------------------------------------------------------------- TorchRL's own tools


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_masked_random_rollouts_are_legal_and_episode_returns_are_the_beans(game):
    """TorchRL's masked random policy (ActionMask) over >= 1,000 episodes: every action legal,
    RewardSum's episode return and our own sum of the rewards equal the learning seat's bean delta
    in every finished episode."""
    n = 128
    env = TransformedEnv(make_env(game, n, seat="random", observation_dtype="uint8", seed=5),
                         Compose(ActionMask(), RewardSum()))
    own = torch.zeros(n, dtype=torch.float64)
    episodes = mismatched = 0
    seats = set()
    td = env.reset()
    while episodes < 1000:
        rollout = env.rollout(100, break_when_any_done=False, auto_reset=False, tensordict=td)
        td = step_mdp(rollout[:, -1])  # the next rollout goes on from here
        chosen = rollout["action_mask"].gather(-1, rollout["action"].unsqueeze(-1))
        assert chosen.all(), "an illegal action was sampled"
        for t in range(rollout.shape[1]):
            nxt = rollout[:, t]["next"]
            own += nxt["reward"].squeeze(-1)
            done = nxt["done"].squeeze(-1)
            truth = own_beans(nxt)[done]
            mismatched += int((nxt["episode_reward"].squeeze(-1)[done] != truth).sum())
            mismatched += int((own[done] != truth).sum())
            seats.update(nxt["seat"][done].tolist())
            episodes += int(done.sum())
            own[done] = 0
    assert mismatched == 0 and seats == {0, 1, 2, 3}


class Logits(torch.nn.Module):
    """An MLP over the uint8 planes (cast to float inside, so that the env's data stays uint8)."""

    def __init__(self, planes: int, width: int, n_actions: int) -> None:
        super().__init__()
        self.mlp = MLP(in_features=planes * width, out_features=n_actions, num_cells=[32])

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.mlp(observation.flatten(-2).float() / 255)


def masked_actor(planes: int, width: int, n_actions: int) -> ProbabilisticActor:
    """A ProbabilisticActor whose MaskedCategorical samples only where ``action_mask`` is True."""
    return ProbabilisticActor(
        TensorDictModule(Logits(planes, width, n_actions), in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"}, distribution_class=MaskedCategorical,
        return_log_prob=True)


def test_a_collector_with_a_masked_categorical_actor():
    n, steps = 32, 40
    env = TransformedEnv(make_env("blood_battle", n, opponents="heuristic", observation_dtype="uint8", seed=2),
                         Compose(InitTracker(), RewardSum()))
    collector = Collector(env, masked_actor(73, 27, 62), frames_per_batch=n * steps, total_frames=n * steps * 3)
    batches = episodes = 0
    for batch in collector:
        batches += 1
        assert batch.shape == (n, steps) and batch["observation"].dtype == torch.uint8
        assert batch["action_mask"].gather(-1, batch["action"].unsqueeze(-1)).all()
        assert torch.isfinite(batch["action_log_prob"]).all()
        done = batch["next", "done"].squeeze(-1)
        assert torch.equal(batch["next", "episode_reward"].squeeze(-1)[done], own_beans(batch["next"])[done].float())
        episodes += int(done.sum())
    collector.shutdown()
    assert batches == 3 and episodes >= 30


# ---------------------------------------------------------------- seeds, resets and partial steps


def lowest_legal_policy(td):
    """A deterministic TorchRL policy: the lowest legal action of every table."""
    return td.set("action", td["action_mask"].int().argmax(-1))


def test_seeds_reproduce_every_rollout():
    def rollouts(seed):
        env = TransformedEnv(make_env("joy_mahjong", 16, seat="random", seed=seed), ActionMask())
        torch.manual_seed(7)  # the random policy draws from torch's generator, the opponents from the env's seed
        first = env.rollout(60, break_when_any_done=False)
        return first, env.rollout(30, break_when_any_done=False)  # a second full reset, drawn from the seed

    a, b = rollouts(3), rollouts(3)
    for x, y in zip(a, b):
        assert (x == y).all()
    assert not torch.equal(a[1]["observation"], a[0]["observation"][:, :30])  # the second reset dealt anew
    assert not torch.equal(rollouts(4)[0]["observation"], a[0]["observation"])
    env = make_env("joy_mahjong", 16, seat="random")
    env.set_seed(3)
    assert torch.equal(env.reset()["observation"], a[0]["observation"][:, 0])


def test_break_when_all_done_plays_every_table_to_the_end_of_its_hand():
    """rollout(break_when_all_done=True) passes "_step": the finished tables wait (no engine work)
    while the others play on, so each table's hand is the one it plays in an uninterrupted rollout;
    the waiting tables then start the hand the engine dealt them when TorchRL resets them."""
    n, kw = 8, dict(opponents=lowest_legal, seat="random", preset="qq")
    env, plain = make_env("blood_battle", n, seed=4, **kw), make_env("blood_battle", n, seed=4, **kw)
    held = env.rollout(1000, policy=lowest_legal_policy, break_when_all_done=True)
    whole = plain.rollout(held.shape[1] + 1, policy=lowest_legal_policy, break_when_any_done=False)
    done = held["next", "done"].squeeze(-1)
    assert done.any(1).all()
    for i in range(n):
        t = int(done[i].nonzero()[0])
        assert torch.equal(held["next", "reward"][i, : t + 1], whole["next", "reward"][i, : t + 1])
        assert torch.equal(held["observation"][i, : t + 1], whole["observation"][i, : t + 1])
        assert held["next", "reward"][i, : t + 1].sum() == own_beans(held["next"][i, t])
    with pytest.raises(RuntimeError, match="finished their episodes and were not reset"):
        env.step(lowest_legal_policy(step_mdp(held[:, -1])))
    restart = step_mdp(held[:, -1])
    restart["_reset"] = torch.ones(n, 1, dtype=torch.bool)
    restart = env.reset(restart)
    first_done = done.int().argmax(1)
    for i in range(n):  # every table starts the hand the engine dealt it when it finished
        assert torch.equal(restart["observation"][i], whole["observation"][i, int(first_done[i]) + 1])
    assert not restart["done"].any()


def test_a_finished_table_left_out_of_a_partial_step_repeats_its_last_step():
    n = 6
    env = make_env("blood_battle", n, opponents=lowest_legal, seed=1)
    td = env.reset()
    while True:
        out = env.step(lowest_legal_policy(td))
        done = out["next", "done"].squeeze(-1)
        if done.any():
            break
        td = step_mdp(out)
    last = out["next"].clone()
    td = step_mdp(out)
    td["_step"] = ~done
    again = env.step(lowest_legal_policy(td))["next"]
    for key in ("observation", "action_mask", "seat", "beans", "done", "terminated"):
        assert torch.equal(again[key][done], last[key][done]), key
    assert not again["reward"][done].any() and again["action_mask"][done].all()
    assert not torch.equal(again["observation"][~done], last["observation"][~done])  # the others played


def test_partial_resets_take_finished_tables_only():
    kw = dict(opponents=lowest_legal, preset="qq")
    env, twin = make_env("blood_battle", 4, seed=9, **kw), SingleSeatVectorEnv("blood_battle", 4, autoreset_mode="same_step", **kw)
    td = env.reset()
    twin.reset(seed=9)
    td["_reset"] = torch.tensor([[True], [False], [False], [False]])
    with pytest.raises(ValueError, match=r"tables \[0\] in the middle of their hands"):
        env.reset(td)
    td["_reset"] = torch.ones(4, 1, dtype=torch.int64)
    with pytest.raises(ValueError, match="'_reset' must be a bool tensor"):
        env.reset(td)
    del td["_reset"]
    out = env.step(lowest_legal_policy(td))  # nothing changed: the tables play on as the twin does
    _, reward, *_ = twin.step(td["action"].numpy())
    np.testing.assert_array_equal(out["next", "reward"].squeeze(-1).numpy(), reward)
    every = step_mdp(out)
    every["_reset"] = torch.ones(4, 1, dtype=torch.bool)  # every table, mid-hand: a fresh deal for all
    before = every["observation"].clone()
    assert not torch.equal(env.reset(every)["observation"], before)


# ---------------------------------------------------------------- bad input


def test_bad_arguments_get_clear_errors():
    for bad in (0, -2, True, 2.0, "3"):
        with pytest.raises(ValueError, match="num_envs"):
            make_env("blood_battle", bad)
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        make_env("chess", 2)
    with pytest.raises(ValueError, match="seat"):
        make_env("blood_battle", 2, seat=4)
    with pytest.raises(ValueError, match="observation_dtype"):
        make_env("blood_battle", 2, observation_dtype="float16")
    with pytest.raises(ValueError, match="unknown policy 'no_such_policy'"):
        make_env("blood_battle", 2, opponents="no_such_policy")
    with pytest.raises(ValueError, match="illegal_action"):
        make_env("blood_battle", 2, illegal_action="ignore")
    for bad in (-1, 2**63, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            make_env("blood_battle", 2, seed=bad)
    env = make_env("blood_battle", 3, seed=0)
    with pytest.raises(ValueError, match="seed"):
        env.set_seed("0")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.full_action_spec.zero().update({"action": torch.zeros(3, dtype=torch.int64)}))


def test_an_illegal_action_raises_and_changes_nothing():
    kw = dict(opponents=lowest_legal)
    env, twin = make_env("blood_battle", 3, seed=0, **kw), SingleSeatVectorEnv("blood_battle", 3, autoreset_mode="same_step", **kw)
    td = env.reset()
    twin.reset(seed=0)
    legal = td["action_mask"].int().argmax(-1)
    td["action"] = legal.clone()
    td["action"][1] = int((~td["action_mask"][1]).nonzero()[0])
    with pytest.raises(IllegalActionError, match="table 1"):
        env.step(td)
    td["action"] = legal.float()
    with pytest.raises(TypeError, match="integers"):
        env.step(td)
    td["action"] = legal
    out = env.step(td)
    obs, reward, *_ = twin.step(legal.numpy())
    np.testing.assert_array_equal(out["next", "observation"].numpy(), obs)
    np.testing.assert_array_equal(out["next", "reward"].squeeze(-1).numpy(), reward)


def test_importing_mjenv_imports_neither_torch_nor_torchrl():
    import subprocess
    import sys

    code = ("import sys, mjenv, mjenv.integrations; "
            "assert 'torchrl' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- docs/integrations/torchrl.md

DOC = ROOT / "docs" / "integrations" / "torchrl.md"
DOC_BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("i", range(len(DOC_BLOCKS)))
def test_docs_blocks_run(i, capsys):
    exec(compile(DOC_BLOCKS[i], f"docs/integrations/torchrl.md block {i}", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_docs_show_a_rollout_and_a_collector():
    assert len(DOC_BLOCKS) >= 2
    assert any("env.rollout(" in b and "ActionMask()" in b for b in DOC_BLOCKS)
    assert any("Collector(" in b and "MaskedCategorical" in b for b in DOC_BLOCKS)
