"""RLlib on the compiled engine (mjenv.integrations.rllib): ppo_config's single-seat and self-play
paths, checked with RLlib's own EnvRunners, episode objects and metrics against the envs' bean
tables, with episodes cut into chunks as PPO's sampling cuts them. Sampling runs in-process
(num_env_runners=0); Ray runs locally without token authentication."""

from __future__ import annotations

from tests.support import ROOT

import dataclasses
import importlib.util
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

from mjenv import games
from mjenv.engine.core import IllegalActionError
from mjenv.integrations.gymnasium import SingleSeatVectorEnv
from mjenv.integrations.rllib import (AGENTS, MaskedPPOModule, SelfPlayEnvRunner, SelfPlayMultiAgentVectorEnv,
                                      ppo_config)
from mjenv.vector import SelfPlayVectorEnv, random_actions

DOC = ROOT / "docs" / "integrations" / "rllib.md"
DOC_BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
RAKE = {"blood_battle": 400, "joy_mahjong": 20}


@pytest.fixture(autouse=True)
def local_rllib(monkeypatch):
    """One torch thread (CI machines have two) and a local Ray without token authentication."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def in_process(config, seed: int = 0):
    """The config sampling in this process, every finished episode in the metrics' window."""
    return (config.env_runners(num_env_runners=0).debugging(seed=seed)
            .reporting(metrics_num_episodes_for_smoothing=100_000)
            .rl_module(model_config={"fcnet_hiddens": [32]}))


def sample_in_chunks(runner, chunk_steps: int, episodes: int) -> tuple[dict, list]:
    """Samples ``chunk_steps`` at a time (as PPO's rollout fragments) until ``episodes`` ended:
    every chunk by episode id, and the ids of the finished episodes."""
    chunks, done = defaultdict(list), []
    while len(done) < episodes:
        for chunk in runner.sample(num_timesteps=chunk_steps):
            chunks[chunk.id_].append(chunk)
            if chunk.is_done:
                done.append(chunk.id_)
    return chunks, done


# ---------------------------------------------------------------- single seat


def recording_seat(finished: list):
    """SingleSeatVectorEnv recording each finished episode as the env counts it:
    (the learning seat's decisions, its beans in the bean table)."""

    class RecordingSeat(SingleSeatVectorEnv):
        def reset(self, **kwargs):
            self.decisions, self.resetting = np.zeros(self.num_envs, np.int64), np.zeros(self.num_envs, np.bool_)
            return super().reset(**kwargs)

        def step(self, actions):
            obs, reward, terminated, truncated, info = super().step(actions)
            self.decisions = np.where(self.resetting, 0, self.decisions + 1)  # NEXT_STEP: a reset step decides nothing
            for i in np.flatnonzero(terminated):
                finished.append((int(self.decisions[i]), float(info["beans"][i, info["seat"][i]])))
            self.resetting = terminated
            return obs, reward, terminated, truncated, info

    return RecordingSeat


SINGLE_SEAT = [("blood_battle", {"preset": "qq", "seat": "random"}),
               ("joy_mahjong", {"room": "popular", "seat": "random", "observation_dtype": "uint8"})]
SELF_PLAY = [("blood_battle", {"preset": "happy"}), ("joy_mahjong", {"room": "no_fan", "observation_dtype": "uint8"})]


@pytest.mark.parametrize("game,options", SINGLE_SEAT)
def test_single_seat_returns_and_lengths_are_the_seats_beans_and_decisions(game, options, monkeypatch):
    check_single_seat(game, options, monkeypatch, tables=6, episodes=40)


@pytest.mark.slow
@pytest.mark.parametrize("game,options", SINGLE_SEAT)
def test_single_seat_exact_over_3000_episodes(game, options, monkeypatch):
    check_single_seat(game, options, monkeypatch, tables=64, episodes=3000)


def check_single_seat(game: str, options: dict, monkeypatch, tables: int, episodes: int) -> None:
    """RLlib's single-agent episodes, sampled 2 steps per table at a time, are the env's."""
    finished = []
    gym_id = games.game(game).gym_id
    monkeypatch.setitem(gymnasium.registry, gym_id, dataclasses.replace(
        gymnasium.registry[gym_id], vector_entry_point=recording_seat(finished)))
    runner = SingleAgentEnvRunner(config=in_process(ppo_config(game, num_envs_per_env_runner=tables, **options)))
    assert isinstance(runner.env.unwrapped, SingleSeatVectorEnv) and runner.env.unwrapped.mask_in_observation
    chunks, done = sample_in_chunks(runner, chunk_steps=2 * tables, episodes=episodes)
    lengths = {e: sum(len(c) for c in chunks[e]) for e in done}
    returns = {e: sum(c.get_return() for c in chunks[e]) for e in done}
    assert all(len(chunks[e]) > 1 for e in done if lengths[e] > 4)  # the episodes were cut into chunks
    # RLlib's episodes are the env's, one for one (an illegal action would have raised on the way).
    assert Counter((lengths[e], returns[e]) for e in done) == Counter(finished)
    assert len({r for _, r in finished}) > 3  # the beans varied
    metrics = runner.get_metrics()
    assert float(metrics["episode_len_mean"]) == pytest.approx(np.mean([n for n, _ in finished]))
    assert float(metrics["episode_return_mean"]) == pytest.approx(np.mean([r for _, r in finished]))
    assert float(metrics["num_episodes_lifetime"]) == len(finished)


# ---------------------------------------------------------------- self-play


def recording_runner(finished: list, tables=None):
    """A SelfPlayEnvRunner recording each finished episode as the engine's view counts it: every
    seat's decisions and beans. ``tables``: an engine stand-in made from the view (optional)."""

    class RecordingRunner(SelfPlayEnvRunner):
        def make_env(self):
            super().make_env()
            view = self.env.selfplay = tables(self.env.selfplay) if tables else self.env.selfplay
            counts, seat = np.zeros((view.num_envs, 4), np.int64), np.zeros(view.num_envs, np.int64)
            reset, step = view.reset, view.step

            def recorded_reset(**kwargs):
                obs, info = reset(**kwargs)
                counts[:], seat[:] = 0, info["seat"]
                return obs, info

            def recorded_step(actions, active):
                out = step(actions, active)
                counts[np.flatnonzero(active), seat[active]] += 1  # the decisions just taken
                for i in np.flatnonzero(out[2]):
                    finished.append((counts[i].copy(), out[4]["beans"][i].copy()))
                    counts[i] = 0
                seat[:] = out[4]["seat"]
                return out

            view.reset, view.step = recorded_reset, recorded_step

    return RecordingRunner


def rllib_episodes(chunks, done) -> list[tuple]:
    """Each finished episode as RLlib holds it over its chunks: its length, and per agent its steps
    and return (None for an agent without an agent episode)."""
    out = []
    for e in done:
        steps, returns = Counter(), defaultdict(float)
        for chunk in chunks[e]:
            for agent, sa in chunk.agent_episodes.items():
                steps[agent] += len(sa)
                returns[agent] += sa.get_return()
        out.append((sum(len(c) for c in chunks[e]), tuple(steps[a] for a in AGENTS),
                    tuple(returns[a] if a in returns else None for a in AGENTS)))
    return out


@pytest.mark.parametrize("game,options", SELF_PLAY)
def test_self_play_agent_returns_and_steps_are_each_seats_beans_and_decisions(game, options):
    check_self_play(game, options, tables=6, episodes=16)


@pytest.mark.slow
@pytest.mark.parametrize("game,options", SELF_PLAY)
def test_self_play_exact_over_1000_hands(game, options):
    check_self_play(game, options, tables=64, episodes=1000)


def check_self_play(game: str, options: dict, tables: int, episodes: int) -> None:
    """RLlib's multi-agent episodes, sampled 3 decisions per table at a time, are the engine's."""
    finished = []
    config = in_process(ppo_config(game, multi_agent=True, num_envs_per_env_runner=tables, rake=RAKE[game],
                                   **options))
    runner = recording_runner(finished)(config=config)
    chunks, done = sample_in_chunks(runner, chunk_steps=3 * tables, episodes=episodes)
    assert all(len(chunks[e]) > 3 for e in done)  # every hand was cut into chunks
    expected = [(int(n.sum()), tuple(int(k) for k in n), tuple(float(b) if k else None for k, b in zip(n, beans)))
                for n, beans in finished]
    assert Counter(rllib_episodes(chunks, done)) == Counter(expected)
    assert all(beans.sum() == -4 * RAKE[game] for _, beans in finished)
    metrics = runner.get_metrics()
    assert float(metrics["episode_len_mean"]) == pytest.approx(np.mean([n.sum() for n, _ in finished]))
    for s, agent in enumerate(AGENTS):  # RLlib's per-agent means over the hands the seat played
        played = [beans[s] for n, beans in finished if n[s]]
        assert float(metrics["agent_episode_returns_mean"][agent]) == pytest.approx(np.mean(played))
    if game == "blood_battle":  # every seat decides (定缺): RLlib's episode return is the rake alone
        assert float(metrics["episode_return_mean"]) == -4 * RAKE[game]


class PayingTables:
    """An engine stand-in with SelfPlayVectorEnv's interface: the seats in turn, hands of 10
    decisions, 1 bean credited with every decision (a seat's first one too) and 2 at the end;
    ``beans`` is what each seat was paid in the hand."""

    LENGTH = 10

    def __init__(self, view: SelfPlayVectorEnv) -> None:
        self.num_envs = n = view.num_envs
        self.obs = np.zeros((n, *view.single_observation_space.shape), view.single_observation_space.dtype)
        self.mask = np.ones((n, view.single_action_space.n), np.int8)
        self.t, self.paid = np.zeros(n, np.int64), np.zeros((n, 4), np.int64)

    def reset(self, seed=None, options=None):
        self.t[:], self.paid[:] = np.arange(self.num_envs), 0  # staggered hands; nothing comes with a reset
        return self.obs.copy(), {"seat": self.t % 4, "action_mask": self.mask.copy()}

    def step(self, actions, active):
        n = self.num_envs
        ended = active & (self.t % self.LENGTH == self.LENGTH - 1)
        self.t += active
        info = {"seat": self.t % 4, "action_mask": self.mask.copy()}
        if ended.any():
            final_obs = np.empty(n, dtype=object)
            for i in np.flatnonzero(ended):
                final_obs[i] = np.zeros((4, *self.obs.shape[1:]), self.obs.dtype)
            info.update(final_rewards=np.where(ended[:, None], 2.0, 0.0).astype(np.float32), final_obs=final_obs,
                        beans=np.where(ended[:, None], self.paid + 2, 0), end_reason=np.full(n, "", dtype=object))
            self.paid[ended] = 0
        self.paid[np.flatnonzero(active), info["seat"][active]] += 1  # the reward that comes with the decision
        return self.obs.copy(), np.where(active, 1.0, 0.0).astype(np.float32), ended, np.zeros(n, np.bool_), info

    def close(self) -> None:
        """Nothing to release."""


def test_beans_credited_with_a_seats_first_decision_reach_its_return():
    """RLlib leaves a reward that comes with an agent's first observation out of its return; the
    env pays it with the seat's next observation instead, so nothing is lost."""
    finished = []
    config = in_process(ppo_config(multi_agent=True, num_envs_per_env_runner=4))
    runner = recording_runner(finished, PayingTables)(config=config)
    chunks, done = sample_in_chunks(runner, chunk_steps=8, episodes=12)
    expected = [(int(n.sum()), tuple(int(k) for k in n), tuple(float(b) for b in beans)) for n, beans in finished]
    assert Counter(rllib_episodes(chunks, done)) == Counter(expected)


def check_decision(table: dict, seat: int, planes: np.ndarray, mask: np.ndarray) -> None:
    """``table`` is the one observation of ``seat``: its flattened planes and float mask."""
    ((agent, o),) = table.items()
    assert agent == AGENTS[seat] and o["action_mask"].dtype == np.float32
    np.testing.assert_array_equal(o["observations"], planes.reshape(-1))
    np.testing.assert_array_equal(o["action_mask"], mask)


def test_next_step_autoreset_follows_the_engine():
    """The step that ends a hand gives every seat its last view and beans; the next step ignores
    that table's action and returns the next hand's first decision, which SelfPlayVectorEnv
    (same-step) returned when the hand ended."""
    n = 5
    env = SelfPlayMultiAgentVectorEnv("blood_battle", n)
    view = SelfPlayVectorEnv("blood_battle", n, final_observations=True)
    obs, _ = env.reset(seed=4)
    vobs, vinfo = view.reset(seed=4)
    for i in range(n):
        check_decision(obs[i], vinfo["seat"][i], vobs[i], vinfo["action_mask"][i])
    rng, waiting, ends, resets = np.random.default_rng(0), np.zeros(n, np.bool_), 0, 0
    for _ in range(400):
        actions = random_actions(vinfo["action_mask"], rng)
        obs, rewards, terminateds, truncateds, infos = env.step(
            [{} if waiting[i] else {AGENTS[vinfo["seat"][i]]: actions[i]} for i in range(n)])
        vobs, vreward, vterm, _, vinfo = view.step(actions, ~waiting)  # a waiting table does not play
        for i in range(n):
            assert not truncateds[i]["__all__"]
            if vterm[i]:
                ends += 1
                assert terminateds[i] == {**dict.fromkeys(AGENTS, True), "__all__": True} and set(obs[i]) == set(AGENTS)
                for s, agent in enumerate(AGENTS):
                    assert not obs[i][agent]["action_mask"].any()
                    np.testing.assert_array_equal(obs[i][agent]["observations"], vinfo["final_obs"][i][s].reshape(-1))
                    assert rewards[i][agent] == vinfo["final_rewards"][i, s]  # (first decisions' rewards are 0 here)
                    assert infos[i][agent]["beans"] == vinfo["beans"][i, s]
                continue
            check_decision(obs[i], vinfo["seat"][i], vobs[i], vinfo["action_mask"][i])
            assert not terminateds[i]["__all__"]
            if waiting[i]:  # RLlib takes this as the table's reset: rewards and flags are all 0 / False
                resets += 1
                assert rewards[i] == dict.fromkeys(AGENTS, 0.0)
            else:
                assert rewards[i] == {AGENTS[vinfo["seat"][i]]: vreward[i]}
        waiting = vterm.copy()
    assert ends > 0 and resets > 0


def test_illegal_actions_and_bad_input():
    env = SelfPlayMultiAgentVectorEnv("joy_mahjong", 3, illegal_action="first_legal")
    obs, _ = env.reset(seed=1)
    agents = [next(iter(table)) for table in obs]
    illegal = int(np.flatnonzero(obs[0][agents[0]]["action_mask"] == 0)[0])
    legal = [int(np.flatnonzero(table[a]["action_mask"])[0]) for table, a in zip(obs, agents)]
    _, _, _, _, infos = env.step([{agents[0]: illegal}, {agents[1]: legal[1]}, {agents[2]: legal[2]}])
    assert infos[0] == {agents[0]: {"illegal_action": True}} and infos[1] == infos[2] == {}
    strict = SelfPlayMultiAgentVectorEnv("blood_battle", 2)
    obs, _ = strict.reset(seed=0)
    agents = [next(iter(table)) for table in obs]
    with pytest.raises(KeyError, match="must act"):
        strict.step([{}, {agents[1]: 0}])
    with pytest.raises(ValueError, match="one dict per table"):
        strict.step([{}])
    illegal = int(np.flatnonzero(obs[0][agents[0]]["action_mask"] == 0)[0])
    legal = int(np.flatnonzero(obs[1][agents[1]]["action_mask"])[0])
    with pytest.raises(IllegalActionError):
        strict.step([{agents[0]: illegal}, {agents[1]: legal}])
    with pytest.raises(ValueError, match="final_observations"):
        SelfPlayMultiAgentVectorEnv("blood_battle", 2, final_observations=False)
    with pytest.raises(NotImplementedError, match="stepped together"):
        strict.envs[0].step({})


def test_ppo_config_refuses_what_it_sets_and_bad_values():
    with pytest.raises(ValueError, match="autoreset_mode"):
        ppo_config("blood_battle", autoreset_mode="same_step")
    with pytest.raises(ValueError, match="mask_in_observation"):
        ppo_config("blood_battle", mask_in_observation=False)
    with pytest.raises(ValueError, match="final_observations"):
        ppo_config("blood_battle", multi_agent=True, final_observations=True)
    with pytest.raises(ValueError, match="unknown game"):
        ppo_config("go")
    with pytest.raises(ValueError, match="num_envs_per_env_runner"):
        ppo_config("blood_battle", num_envs_per_env_runner=0)
    config = in_process(ppo_config("blood_battle", multi_agent=True)).environment("CartPole-v1")
    with pytest.raises(ValueError, match="MahjongMultiAgentEnv"):
        SelfPlayEnvRunner(config=config)


def test_masked_module_never_picks_an_illegal_action_and_values_every_row():
    space = SelfPlayMultiAgentVectorEnv("blood_battle", 1).single_observation_spaces["player_0"]
    module = MaskedPPOModule(observation_space=space, action_space=gymnasium.spaces.Discrete(62),
                             model_config={"fcnet_hiddens": [16], "vf_share_layers": False})
    rng = np.random.default_rng(0)
    mask = (rng.random((64, 62)) < 0.1).astype(np.float32)
    mask[np.arange(64), rng.integers(62, size=64)] = 1
    mask[0] = 0  # a finished seat's last view: no legal action, the logits stay finite
    batch = {Columns.OBS: {"observations": torch.randn(64, space["observations"].shape[0]),
                           "action_mask": torch.from_numpy(mask)}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    dist = torch.distributions.Categorical(logits=logits[1:])
    chosen = dist.sample((200,))
    assert torch.from_numpy(mask[1:]).gather(1, chosen.T).all()
    assert torch.isfinite(logits).all() and module.compute_values(batch).shape == (64,)
    with pytest.raises(ValueError, match="'observations' and 'action_mask'"):
        MaskedPPOModule(observation_space=space["observations"], action_space=gymnasium.spaces.Discrete(62))


# ---------------------------------------------------------------- the docs and the benchmark


def test_docs_examples_run(monkeypatch, capsys, tmp_path):
    """Every Python block of docs/integrations/rllib.md, each alone as a reader copies it (a local Ray)."""
    import ray
    import ray.tune.trainable.trainable as trainable

    monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path), raising=False)  # not ~/ray_results
    assert DOC_BLOCKS and any("ppo_config(" in block for block in DOC_BLOCKS)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        for i, block in enumerate(DOC_BLOCKS):
            exec(compile(block, f"docs/integrations/rllib.md block {i}", "exec"), {})
            assert capsys.readouterr().out.strip()
    finally:
        ray.shutdown()


def test_the_benchmark_measures_the_three_paths():
    spec = importlib.util.spec_from_file_location("bench_rllib", ROOT / "bench" / "toolkits" / "rllib.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    rows = bench.measure("blood_battle", quick=True, tables=8)
    assert [row["engine"] for row in rows] == ["aec", "compiled", "compiled"]
    assert all(row["toolkit"] == "rllib" and row["steps_per_s"] > 0 and row["path"] for row in rows)
    assert all("ceiling" in row["notes"] for row in rows[1:]) and all("env " in row["notes"] for row in rows)


def test_the_old_rllib_env_path_gives_the_multi_agent_env_with_a_warning() -> None:
    import mjenv.integrations.rllib as new

    with pytest.warns(DeprecationWarning, match=r"mjenv\.rllib_env\.MahjongMultiAgentEnv .*mjenv\.integrations\.rllib"):
        from mjenv.rllib_env import MahjongMultiAgentEnv
    assert MahjongMultiAgentEnv is new.MahjongMultiAgentEnv
