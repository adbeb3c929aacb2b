"""The AEC paths into the RL toolkits (docs/integrations/aec.md) and the overview's examples
(docs/integrations.md), on both games: PettingZoo's registry, sb3-contrib's
MaskablePPO on SingleSeatEnv, RLlib PPO with action masking, TorchRL's PettingZooWrapper.

The toolkits come from the extra ``integrations``; the imports are plain so that a test venv
without them fails here instead of skipping.
"""

import importlib
import re
from pathlib import Path

import numpy as np
import pettingzoo
import pytest

from mjenv import blood_battle_v0, games
from mjenv.engine.core import IllegalActionError
from mjenv.integrations.gymnasium import SingleSeatEnv
from tests.support import ROOT

GAMES = {name: importlib.import_module(g.env_module) for name, g in games.GAMES.items()}  # game -> env module
DOC = ROOT / "docs" / "integrations" / "aec.md"
OVERVIEW = ROOT / "docs" / "integrations.md"
DOC_BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def _run_doc_block(code, capsys):
    """Run one Python block of docs/integrations/aec.md as written; it must print something."""
    namespace = {}
    exec(compile(code, f"docs/integrations/aec.md block {DOC_BLOCKS.index(code)}", "exec"), namespace)
    assert capsys.readouterr().out.strip()
    return namespace


# ---------------------------------------------------------------- docs/integrations.md (the overview)


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", OVERVIEW.read_text(encoding="utf-8"), flags=re.S))
def test_overview_example_runs(block, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.chdir(tmp_path)  # RLlib's and SB3's logs stay out of the repository
    if "rllib" in block:
        import ray
        import ray.tune.trainable.trainable as trainable

        monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path), raising=False)
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        exec(compile(block, "docs/integrations.md", "exec"), {})
    finally:
        if "rllib" in block:
            ray.shutdown()
    assert capsys.readouterr().out.strip()


def test_overview_has_an_example_per_toolkit():
    blocks = re.findall(r"```python\n(.*?)```", OVERVIEW.read_text(encoding="utf-8"), flags=re.S)
    for marker in ("gymnasium.make_vec", "integrations.sb3", "integrations.torchrl", "integrations.rllib",
                   "SelfPlayVectorEnv", "parallel_env"):
        assert any(marker in b for b in blocks), marker


# ---------------------------------------------------------------- docs/integrations/aec.md


def test_docs_have_an_example_per_toolkit():
    for marker in ("SingleSeatEnv(", "MaskablePPO", "ray.rllib", "PettingZooWrapper", "pettingzoo.make"):
        assert any(marker in b for b in DOC_BLOCKS), marker


@pytest.mark.parametrize("i", [i for i, b in enumerate(DOC_BLOCKS) if "ray.rllib" not in b and "Collector(" not in b])
def test_docs_example_runs(i, capsys):
    _run_doc_block(DOC_BLOCKS[i], capsys)  # the RLlib and collector ones run in their own tests below


# ---------------------------------------------------------------- PettingZoo registry


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_make_plays_a_hand(game):
    assert hasattr(pettingzoo, "make"), "the tested PettingZoo (>= 1.27) has a registry"
    env = pettingzoo.make("aec", f"mjenv/{game}_v0")
    assert type(env.unwrapped) is type(GAMES[game].env().unwrapped)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert "beans" in info


# ---------------------------------------------------------------- sb3-contrib MaskablePPO


class StrictSeat(SingleSeatEnv):
    """Counts the steps and checks every action against the mask before the env does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.steps = self.illegal = 0

    def step(self, action):
        self.steps += 1
        self.illegal += not self.action_masks()[int(action)]
        return super().step(action)


@pytest.mark.parametrize("game", GAMES)
def test_maskable_ppo_trains_without_illegal_actions(game):
    from sb3_contrib import MaskablePPO

    env = StrictSeat(game=game, opponents="random", seat="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [64]})
    model.learn(total_timesteps=3000)
    assert model.num_timesteps >= 3000
    assert env.steps >= 3000 and env.illegal == 0
    # The trained policy plays a hand legally when given the masks.
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        obs, _, done, _, _ = env.step(int(action))
    assert env.illegal == 0


# ---------------------------------------------------------------- RLlib (new API stack)


def test_rllib_adapter_rewards_sum_to_the_bean_table():
    from mjenv.integrations.rllib import MahjongMultiAgentEnv

    env = MahjongMultiAgentEnv(game="blood_battle", rake=400)
    space = env.get_observation_space("player_0")
    assert set(space.spaces) == {"observations", "action_mask"} and space["action_mask"].dtype == np.float32
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        while True:
            ((agent, o),) = obs.items()
            assert space.contains(o) and o["action_mask"].any()
            obs, rewards, terminateds, truncateds, infos = env.step(
                {agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
            assert set(rewards) == set(obs)  # a reward only ever comes with an observation
            for a, r in rewards.items():
                totals[a] += r
            if terminateds["__all__"]:
                break
        # The end: a final observation for every seat, with an all-zero mask.
        assert set(obs) == set(env.possible_agents) and not truncateds["__all__"]
        assert all(space.contains(o) and not o["action_mask"].any() for o in obs.values())
        assert totals == {a: infos[a]["beans"] for a in env.possible_agents}
        assert sum(totals.values()) == -4 * 400


@pytest.mark.parametrize("game,fragment,episodes", [("blood_battle", 13, 12), ("joy_mahjong", 7, 12)])
def test_rllib_chunked_sampling_keeps_every_seats_rewards(game, fragment, episodes, monkeypatch):
    """RLlib's EnvRunner samples as train() does, rollout_fragment_length steps at a time, so
    episodes are cut into chunks; every finished episode's per-agent returns are the beans."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from mjenv.integrations.rllib import MahjongMultiAgentEnv

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    hands = []  # (each seat's beans, the seats observed before the end) per finished hand

    class Recording(MahjongMultiAgentEnv):
        def reset(self, **kwargs):
            obs, infos = super().reset(**kwargs)
            self.asked = set(obs)
            return obs, infos

        def step(self, action_dict):
            out = super().step(action_dict)
            if out[2]["__all__"]:
                hands.append((dict(zip(self.possible_agents, self.aec_env.match_beans)), self.asked))
            else:
                self.asked |= set(out[0])
            return out

    rake = {"blood_battle": 400, "joy_mahjong": 20}[game]
    config = (
        PPOConfig()
        .environment(Recording, env_config={"game": game, "rake": rake}, disable_env_checking=True)
        .env_runners(num_env_runners=0, rollout_fragment_length=fragment)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": [16]})}))
        .debugging(seed=0)
    )
    runner = MultiAgentEnvRunner(config=config)
    chunks, done = {}, []
    while len(done) < episodes:
        for chunk in runner.sample(num_timesteps=fragment):
            chunks.setdefault(chunk.id_, []).append(chunk)
            if chunk.is_done:
                done.append(chunk.id_)
    assert all(len(chunks[e]) > 1 for e in done)  # every episode was split
    for episode_id, (beans, asked) in zip(done, hands):
        returns = {}
        for chunk in chunks[episode_id]:
            for agent, sa in chunk.agent_episodes.items():
                returns[agent] = returns.get(agent, 0.0) + sa.get_return()
        # RLlib keeps no agent episode for a seat never asked during the hand (see the docs).
        assert returns == {a: float(b) for a, b in beans.items() if a in asked}
    if game == "blood_battle":  # every seat is asked (定缺): RLlib's own metric sees the rake alone
        metrics = runner.get_metrics()
        assert metrics["episode_return_mean"].peek() == -4 * rake


def test_rllib_env_pre_check():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    from mjenv.integrations.rllib import MahjongMultiAgentEnv

    # The pre-check steps an action sampled without the mask: "first_legal" lets it pass ...
    check_multiagent_environments(MahjongMultiAgentEnv({"game": "joy_mahjong", "illegal_action": "first_legal"}))
    check_multiagent_environments(MahjongMultiAgentEnv({"game": "blood_battle", "illegal_action": "terminate"}))
    # ... the default raises (so train with disable_env_checking=True, as documented).
    with pytest.raises(ValueError, match="step") as err:
        for _ in range(20):  # a random sample is legal now and then: try until one is not
            check_multiagent_environments(MahjongMultiAgentEnv({"game": "blood_battle"}))
    assert isinstance(err.value.__cause__, IllegalActionError)


def test_rllib_ppo_with_action_masking_runs_a_training_iteration(monkeypatch, capsys, tmp_path):
    """The RLlib example of docs/integrations.md: PPO with ActionMaskingTorchRLModule, one iteration."""
    import ray
    import ray.tune.trainable.trainable as trainable

    (code,) = [b for b in DOC_BLOCKS if "ray.rllib" in b]
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    # The algorithm's log folder: under tmp_path instead of ~/ray_results.
    monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path), raising=False)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        namespace = _run_doc_block(code, capsys)  # an illegal action would raise IllegalActionError
    finally:
        ray.shutdown()
    result = namespace["result"]
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled"] >= 256 and runners["num_episodes"] >= 1
    assert set(runners["num_agent_steps_sampled"]) == {f"player_{i}" for i in range(4)}
    assert "shared" in result["learners"]


# ---------------------------------------------------------------- TorchRL


@pytest.mark.parametrize("game,options", [("blood_battle", {"rake": 400}), ("joy_mahjong", {"rake": 20})])
def test_torchrl_pettingzoo_wrapper_rollout_with_one_group(game, options):
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    base = GAMES[game].env(**options)
    env = PettingZooWrapper(env=base, use_mask=True, group_map={"seats": list(base.possible_agents)}, seed=0)
    assert env.group_map == {"seats": [f"player_{i}" for i in range(4)]}
    for _ in range(2):
        td = env.rollout(max_steps=2000)  # random actions drawn from the masked action spec
        assert td["next", "done"][-1].all() and not td["next", "done"][:-1].any()
        acting = td["seats", "mask"]  # one seat acts per step
        assert (acting.sum(-1) == 1).all()
        chosen = td["seats", "action_mask"].gather(-1, td["seats", "action"].unsqueeze(-1)).squeeze(-1)
        assert chosen[acting].all()  # every action taken was legal
        rewards = td["next", "seats", "reward"].sum(0).squeeze(-1)
        assert rewards.tolist() == [float(b) for b in base.unwrapped.match_beans]
        assert rewards.sum().item() == -4 * options["rake"]


# The example must not lean on a default TorchRL announces it will change (0.15 adds InitTracker itself).
@pytest.mark.filterwarnings("error:The env passed to Collector is missing transforms:FutureWarning")
def test_torchrl_collector_with_the_mask_aware_policy_of_the_docs(capsys):
    (code,) = [b for b in DOC_BLOCKS if "Collector(" in b]
    namespace = _run_doc_block(code, capsys)
    batch = namespace["batch"]
    acting = batch["seats", "mask"]
    assert (acting.sum(-1) == 1).all() and namespace["chosen"][acting].all()


@pytest.mark.parametrize("mode", ["first_legal", "terminate"])
def test_torchrl_default_collector_policy_runs_with_the_option(mode):
    from torchrl.collectors import Collector
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    def collect(**options):
        base = blood_battle_v0.env(**options)
        env = PettingZooWrapper(env=base, use_mask=True, group_map={"seats": list(base.possible_agents)}, seed=0)
        collector = Collector(env, policy=None, frames_per_batch=60, total_frames=60)  # random, unmasked
        try:
            return next(iter(collector))
        finally:
            collector.shutdown()

    with pytest.raises(IllegalActionError, match="illegal_action="):
        collect()
    batch = collect(illegal_action=mode)
    assert batch.batch_size == (60,)
    if mode == "terminate":  # an unmasked random action ends a hand quickly, with the penalty
        ends = batch["next", "done"].squeeze(-1)
        assert ends.any()
        assert (batch["next", "seats", "reward"][ends].min() == -192.0)
