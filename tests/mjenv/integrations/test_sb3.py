"""The Stable-Baselines3 view (mjenv.integrations.sb3): a VecEnv on the compiled engine that
sb3-contrib's MaskablePPO trains on, checked against the SAME_STEP Gymnasium view (itself checked
against the AEC engine) and with SB3's own wrappers: VecMonitor's episode statistics and
VecNormalize's original rewards are the learning seat's bean deltas."""

from __future__ import annotations

from tests.support import ROOT

import re
from pathlib import Path

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecEnv, VecMonitor, VecNormalize

from mjenv import games
from mjenv.engine.core import IllegalActionError
from mjenv.integrations.gymnasium import SingleSeatVectorEnv
from mjenv.integrations.opponents import FrozenNetwork, Mixture
from mjenv.integrations.sb3 import FrozenPolicy, MahjongVecEnv, SelfPlayCallback, frozen_policy, make_vec_env

GAMES = games.GAME_NAMES
SMALL = {"n_steps": 16, "batch_size": 256, "n_epochs": 1, "policy_kwargs": {"net_arch": [32]}, "device": "cpu"}


def random_masked(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


# ---------------------------------------------------------------- the VecEnv


@pytest.mark.parametrize("game", GAMES)
def test_a_vecenv_whose_masks_sb3_contrib_reads_through_wrappers(game):
    envs = make_vec_env(game, 8, seat="random")
    assert isinstance(envs, VecEnv) and not isinstance(envs, DummyVecEnv) and envs.num_envs == 8
    assert isinstance(envs.env, SingleSeatVectorEnv) and envs.env.autoreset_mode == AutoresetMode.SAME_STEP
    spec = games.game(game)
    assert envs.observation_space == envs.env.single_observation_space
    assert envs.action_space.n == envs.env.single_action_space.n
    wrapped = VecNormalize(VecMonitor(envs))
    assert is_masking_supported(wrapped)
    wrapped.reset()
    masks = get_action_masks(wrapped)
    assert masks.shape == (8, envs.action_space.n) and masks.dtype == np.int8
    np.testing.assert_array_equal(masks, envs.env.venv.backend.mask)  # the engine's masks, all tables at once
    np.testing.assert_array_equal(wrapped.action_masks(), masks)
    np.testing.assert_array_equal(np.stack(envs.env_method("action_masks", indices=[5, 2])), masks[[5, 2]])
    assert envs.get_attr("game") == [spec.name] * 8 and envs.get_attr("render_mode", indices=3) == [None]
    assert envs.env_is_wrapped(VecMonitor) == [False] * 8
    assert envs.has_attr("action_masks") and not envs.has_attr("no_such_attribute")


@pytest.mark.parametrize("game,options", [("blood_battle", {"preset": "qq", "seat": "random"}),
                                          ("joy_mahjong", {"room": "no_fan", "observation_dtype": "uint8"})])
def test_every_step_is_the_same_step_gymnasium_view(game, options):
    """Same seed and actions: the SB3 view returns what SingleSeatVectorEnv (SAME_STEP) returns,
    the finished tables' views as terminal_observation and their bean tables in the infos."""
    n, seed = 16, 7
    envs = make_vec_env(game, n, opponents="heuristic", **options)
    ref = SingleSeatVectorEnv(game, n, opponents="heuristic", autoreset_mode="same_step", **options)
    envs.seed(seed)
    obs = envs.reset()
    ref_obs, ref_info = ref.reset(seed=seed)
    np.testing.assert_array_equal(obs, ref_obs)
    assert [i["seat"] for i in envs.reset_infos] == ref_info["seat"].tolist()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(120):
        actions = random_masked(envs.action_masks(), rng)
        obs, rewards, dones, infos = envs.step(actions)
        ref_obs, ref_rewards, ref_term, _, ref_info = ref.step(actions)
        np.testing.assert_array_equal(obs, ref_obs)
        np.testing.assert_array_equal(rewards, ref_rewards)
        np.testing.assert_array_equal(dones, ref_term)
        assert obs.dtype == envs.observation_space.dtype and rewards.dtype == np.float32 and dones.dtype == bool
        assert len(infos) == n and all(info == {} for d, info in zip(dones, infos) if not d)
        for i in np.flatnonzero(dones):
            final = ref_info["final_info"]
            info = infos[i]
            np.testing.assert_array_equal(info["terminal_observation"], ref_info["final_obs"][i])
            assert envs.observation_space.contains(info["terminal_observation"])
            assert info["TimeLimit.truncated"] is False and info["seat"] == final["seat"][i]
            assert info["beans"].tolist() == final["beans"][i].tolist()
            assert info["end_reason"] == final["end_reason"][i] and info["won"].tolist() == final["won"][i].tolist()
            ends += 1
    assert ends > 20


def test_the_vecenv_contract_as_sb3_checks_a_gym_env():
    """SB3's check_env takes single gym envs; these are its checks for a VecEnv: spaces, dtypes,
    shapes, no NaN (VecCheckNan), seeds and options go to the next reset, close."""
    envs = VecCheckNan(make_vec_env("blood_battle", 8, observation_dtype="uint8"), raise_exception=True)
    assert envs.seed(3) == [3 + i for i in range(8)]
    obs = envs.reset()
    space = envs.observation_space
    assert obs.shape == (8, *space.shape) and obs.dtype == space.dtype == np.uint8
    assert all(space.contains(o) for o in obs)
    rng = np.random.default_rng(0)
    for _ in range(60):
        obs, rewards, dones, infos = envs.step(random_masked(envs.action_masks(), rng))
        assert all(space.contains(o) for o in obs) and rewards.shape == dones.shape == (8,)
    # Options script every table's first hand: the same scripted deal at each table.
    envs.set_options({"dealer": 2})
    obs = envs.reset()
    dealer = envs.unwrapped.env.venv.backend.observer.views["dealer"]
    dealer_planes = obs[:, dealer].max(axis=2)  # per seat relative to the learner (seat 0): the dealer
    assert (dealer_planes == [0, 0, 1, 0]).all()
    envs.close()


@pytest.mark.parametrize("mode", ["first_legal", "terminate"])
def test_illegal_learner_actions_are_flagged_in_the_infos(mode):
    envs = make_vec_env("blood_battle", 4, illegal_action=mode)
    envs.seed(0)
    envs.reset()
    masks = envs.action_masks()
    actions = masks.argmax(axis=1)
    actions[2] = int(np.flatnonzero(masks[2] == 0)[0])
    _, rewards, dones, infos = envs.step(actions[:, None])  # (N, 1) actions are taken too
    assert [info.get("illegal_action", False) for info in infos] == [False, False, True, False]
    if mode == "terminate":
        assert dones.tolist() == [False, False, True, False] and infos[2]["end_reason"] == "illegal_action"
        assert rewards[2] == envs.env.venv.illegal_reward  # a penalty, not beans: the bean table is unchanged
        assert infos[2]["beans"].tolist() == [0, 0, 0, 0]
    else:
        assert not dones.any()


# ---------------------------------------------------------------- sb3-contrib MaskablePPO


class Strict(BaseCallback):
    """At every step: the actions MaskablePPO chose were legal under the masks it read, and every
    finished episode's VecMonitor return is its bean delta."""

    def __init__(self):
        super().__init__()
        self.steps = self.illegal = self.episodes = self.mismatched = 0

    def _on_step(self) -> bool:
        masks, actions = self.locals["action_masks"], self.locals["actions"]
        self.steps += len(actions)
        self.illegal += int((masks[np.arange(len(actions)), actions] == 0).sum())
        for done, info in zip(self.locals["dones"], self.locals["infos"]):
            if done:
                self.episodes += 1
                self.mismatched += info["episode"]["r"] != info["beans"][info["seat"]]
        return True


@pytest.mark.parametrize("game", GAMES)
def test_maskable_ppo_learns_on_it_without_an_illegal_action(game):
    envs = VecMonitor(make_vec_env(game, 64, opponents="random", seat="random", observation_dtype="uint8"))
    model = MaskablePPO("MlpPolicy", envs, seed=0, **SMALL)
    before = [p.detach().clone() for p in model.policy.parameters()]
    strict = Strict()
    model.learn(total_timesteps=64 * 16 * 4, callback=strict)
    assert model.num_timesteps == strict.steps == 64 * 16 * 4
    assert strict.illegal == 0 and strict.episodes > 100 and strict.mismatched == 0
    assert len(model.ep_info_buffer) == 100  # SB3's own episode log is filled
    assert any((p != b).any() for p, b in zip(model.policy.parameters(), before))  # it trained
    obs = envs.reset()
    for _ in range(30):  # the trained policy plays with the masks; an illegal action would raise
        actions, _ = model.predict(obs, action_masks=envs.action_masks(), deterministic=True)
        obs, _, _, _ = envs.step(actions)


@pytest.mark.parametrize("game", GAMES)
def test_vec_monitor_records_the_bean_deltas_and_step_counts_over_2000_episodes(game):
    n = 256
    envs = VecMonitor(make_vec_env(game, n, seat="random"))
    envs.seed(11)
    envs.reset()
    rng = np.random.default_rng(0)
    own_return, own_length = np.zeros(n), np.zeros(n, dtype=np.int64)  # counted here, step by step
    checked = mismatched = 0
    seats = set()
    while checked < 2000:
        _, rewards, dones, infos = envs.step(random_masked(get_action_masks(envs), rng))
        own_return += rewards
        own_length += 1
        for i in np.flatnonzero(dones):
            info = infos[i]
            truth = info["beans"][info["seat"]]
            mismatched += (info["episode"]["r"] != truth or own_return[i] != truth
                           or info["episode"]["l"] != own_length[i])
            seats.add(info["seat"])
            checked += 1
        own_return[dones], own_length[dones] = 0, 0
    assert mismatched == 0 and seats == {0, 1, 2, 3} and envs.episode_count == checked


def test_vec_normalize_runs_and_its_original_rewards_sum_to_the_bean_deltas():
    n = 128
    envs = VecNormalize(make_vec_env("blood_battle", n, opponents="heuristic", seat="random"), gamma=0.99)
    model = MaskablePPO("MlpPolicy", envs, seed=0, gamma=0.99, **SMALL)
    model.learn(total_timesteps=n * 16 * 2)
    assert envs.ret_rms.count > 1 and np.isfinite(envs.obs_rms.var).all()
    obs = envs.reset()
    beans = np.zeros(n)
    checked = mismatched = 0
    while checked < 500:
        actions, _ = model.predict(obs, action_masks=envs.action_masks())
        obs, rewards, dones, infos = envs.step(actions)
        assert np.abs(obs).max() <= envs.clip_obs and np.abs(rewards).max() <= envs.clip_reward
        beans += envs.get_original_reward()
        for i in np.flatnonzero(dones):
            mismatched += beans[i] != infos[i]["beans"][infos[i]["seat"]]
            assert np.abs(infos[i]["terminal_observation"]).max() <= envs.clip_obs  # normalised too
            checked += 1
        beans[dones] = 0
    assert mismatched == 0


def test_seed_and_reset_give_the_same_episodes():
    def play(seed):
        envs = make_vec_env("blood_battle", 16, opponents="random", seat="random")
        envs.seed(seed)
        first = envs.reset()
        rng = np.random.default_rng(1)
        record = [first]
        for _ in range(40):
            obs, rewards, dones, _ = envs.step(random_masked(envs.action_masks(), rng))
            record += [obs, rewards, dones]
        return record

    same, again, other = play(5), play(5), play(6)
    assert all(np.array_equal(a, b) for a, b in zip(same, again))
    assert not np.array_equal(same[0], other[0])
    envs = make_vec_env("blood_battle", 16)
    envs.seed(5)
    seeded = envs.reset()
    assert not np.array_equal(envs.reset(), seeded)  # the seed is used once, as in SB3's VecEnvs


def test_maskable_ppo_with_a_seed_is_reproducible():
    def learn():
        envs = VecMonitor(make_vec_env("joy_mahjong", 32, seat="random"))
        model = MaskablePPO("MlpPolicy", envs, seed=3, **SMALL)
        model.learn(total_timesteps=32 * 16 * 3)
        return [(e["r"], e["l"]) for e in model.ep_info_buffer]

    first = learn()
    assert len(first) > 30 and learn() == first


# ---------------------------------------------------------------- self-play


def learner_view(envs, planes):
    """What the learner reads of float32 planes: uint8 if its env quantises, then normalised if
    VecNormalize wraps it."""
    base = envs.unwrapped.env
    obs = base.venv.backend.observer.to_uint8(planes) if base.observation_dtype == "uint8" else planes
    return envs.normalize_obs(obs) if isinstance(envs, VecNormalize) else obs


@pytest.mark.parametrize("dtype,normalised", [("uint8", False), ("float32", True)])
def test_after_a_refresh_the_opponents_play_the_learners_current_weights(dtype, normalised):
    n = 32
    base = make_vec_env("blood_battle", n, observation_dtype=dtype, seat="random")
    envs = VecNormalize(base, norm_reward=False) if normalised else base
    model = MaskablePPO("MlpPolicy", envs, seed=0, **SMALL)
    past = frozen_policy(model, greedy=True)
    assert isinstance(past, FrozenNetwork)
    calls = []  # every opponent decision: the planes and masks it got, what it played
    act_batch = past.act_batch

    def recording(observations, masks, rng):
        actions = act_batch(observations, masks, rng)
        calls.append((observations.copy(), masks.copy(), actions))
        return actions

    past.act_batch = recording
    base.set_opponents(past)
    model.learn(total_timesteps=n * 16 * 3)  # the learner moves on; its copy stays where it was
    envs.training = False  # hold VecNormalize's statistics while comparing (a plain attribute otherwise)

    def play_and_compare():
        calls.clear()
        obs = envs.reset()
        for _ in range(20):
            obs, _, _, _ = envs.step(model.predict(obs, action_masks=envs.action_masks())[0])
        planes = np.concatenate([c[0] for c in calls])
        masks = np.concatenate([c[1] for c in calls])
        played = np.concatenate([c[2] for c in calls])
        greedy, _ = model.predict(learner_view(envs, planes), action_masks=masks, deterministic=True)
        return len(played), int((played != greedy).sum())

    decisions, differ = play_and_compare()
    assert decisions > 500 and differ > 0  # stale: the copy plays the weights of before learn()
    callback = SelfPlayCallback(past, every=1)
    callback.init_callback(model)
    callback.on_rollout_start()  # what learn() calls: the copy takes the current weights and statistics
    assert past.updates == 1
    decisions, differ = play_and_compare()
    assert decisions > 500 and differ == 0


def test_the_callback_refreshes_every_n_learner_steps():
    envs = make_vec_env("blood_battle", 32)
    model = MaskablePPO("MlpPolicy", envs, seed=0, **SMALL)
    past = frozen_policy(model)
    envs.set_opponents(Mixture({past: 1, "random": 1}))
    seen = []
    update = past.update
    past.update = lambda m: (seen.append(m.num_timesteps), update(m))
    model.learn(total_timesteps=32 * 16 * 6, callback=SelfPlayCallback([past], every=32 * 16 * 2))
    assert seen == [1024, 2048] and past.updates == 2  # rollouts start at 0, 512, ..., 2560 steps


# ---------------------------------------------------------------- bad input


def test_bad_arguments_give_clear_errors():
    with pytest.raises(ValueError, match="autoreset_mode"):
        make_vec_env("blood_battle", 4, autoreset_mode="next_step")
    with pytest.raises(ValueError, match="seat"):
        make_vec_env("blood_battle", 4, seat=4)
    with pytest.raises(ValueError, match="num_envs"):
        make_vec_env("blood_battle", 0)
    with pytest.raises(ValueError, match="unknown policy"):
        make_vec_env("blood_battle", 4, opponents="nobody")
    with pytest.raises((ValueError, KeyError), match="chess"):
        make_vec_env("chess", 4)
    with pytest.raises(TypeError, match="SAME_STEP"):
        MahjongVecEnv(SingleSeatVectorEnv("blood_battle", 2))
    envs = make_vec_env("blood_battle", 4)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(4, dtype=np.int64))
    envs.reset()
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.zeros(3, dtype=np.int64))
    actions = envs.action_masks().argmax(axis=1)
    actions[1] = int(np.flatnonzero(envs.action_masks()[1] == 0)[0])
    with pytest.raises(IllegalActionError, match="table 1"):
        envs.step(actions)
    with pytest.raises(RuntimeError, match="step_async"):
        envs.step_wait()
    with pytest.raises(AttributeError, match="one engine"):
        envs.set_attr("seat_option", 2)
    with pytest.raises(AttributeError, match="action_masks"):
        envs.env_method("render")
    with pytest.raises(IndexError, match="indices"):
        envs.env_method("action_masks", indices=[4])
    envs._seeds = [1, 5, 2, 3]
    with pytest.raises(ValueError, match=r"seed\(s\)"):
        envs.reset()
    envs._seeds = [None] * 4
    envs.set_options([{"dealer": 1}, {}, {}, {}])
    with pytest.raises(ValueError, match="set_options"):
        envs.reset()
    model = MaskablePPO("MlpPolicy", envs, **SMALL)
    with pytest.raises(TypeError, match="Stable-Baselines3 model"):
        frozen_policy(model.policy)
    with pytest.raises(TypeError, match="FrozenPolicy"):
        SelfPlayCallback(FrozenNetwork(model.policy), every=10)
    for every in (0, 1.5, True):
        with pytest.raises(ValueError, match="every"):
            SelfPlayCallback(frozen_policy(model), every=every)
    assert isinstance(frozen_policy(model), FrozenPolicy)


DOC = ROOT / "docs" / "integrations" / "sb3.md"


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S))
def test_the_docs_examples_run(block, capsys):
    exec(compile(block, str(DOC), "exec"), {})
    assert capsys.readouterr().out.strip()
