"""examples/ppo_selfplay_vector.py: it runs to its evaluation on both games, and its per-(table,
seat) credit and GAE match a plain per-trajectory computation and the env's beans."""

from __future__ import annotations

from tests.support import ROOT

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mjenv.vector as mv
from mjenv.vector import SelfPlayVectorEnv

EXAMPLE = ROOT / "examples" / "ppo_selfplay_vector.py"


def load_example():
    spec = importlib.util.spec_from_file_location("ppo_selfplay_vector", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


ex = load_example()


@pytest.mark.parametrize("game", ["blood_battle", "joy_mahjong"])
def test_the_example_trains_and_prints_its_evaluation(game):
    tiny = ["--game", game, "--train-seconds", "3", "--num-envs", "16", "--num-steps", "16", "--hidden", "32",
            "--eval-hands", "64", "--eval-envs", "16", "--log-every", "1", "--torch-threads", "1"]
    run = subprocess.run([sys.executable, str(EXAMPLE), *tiny], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "update    1" in out and "trained" in out
    line = next(line for line in out.splitlines() if line.startswith("evaluation vs 3 x random"))
    assert "beans per hand, 95% CI [" in line and "over 64 hands" in line
    assert "wall time" in out


def test_arguments_come_from_the_dataclass():
    args = ex.parse_args(["--game", "joy_mahjong", "--variant", "no_fan", "--eval-sample", "--gae-lambda", "0.9"])
    assert (args.game, args.variant, args.eval_sample, args.gae_lambda) == ("joy_mahjong", "no_fan", True, 0.9)
    assert ex.env_options(args) == {"room": "no_fan"} and ex.env_options(ex.parse_args([])) == {}
    for bad in (["--num-envs", "many"], ["--num-envs", "0"], ["--reward-scale", "0"], ["--game", "poker"],
                ["--variant", "no_fan"]):
        with pytest.raises(SystemExit) as exit_:
            ex.parse_args(bad)
        assert exit_.value.code == 2


def test_gae_of_a_hand_written_rollout():
    """One table: seats 0,1,0,1,0 end an episode (final rewards 1,-3,2,0), then seat 2 opens the next.
    Seat 1 received 4 beans before its first decision: that decision keeps them."""
    seats = np.array([[0], [1], [0], [1], [0], [2]])
    rewards = np.array([[0], [4], [5], [-5], [2], [0]], dtype=np.float32)
    terminated = np.array([[0], [0], [0], [0], [1], [0]], dtype=bool)
    finals = np.zeros((6, 1, 4), dtype=np.float32)
    finals[4, 0] = [1, -3, 2, 0]
    decided = np.zeros((1, 4), dtype=bool)
    first = ex.first_decisions(seats, terminated, decided)
    assert first[:, 0].tolist() == [True, True, False, False, False, True]
    assert decided[0].tolist() == [False, False, True, False]  # carried into the next rollout
    values = np.zeros((6, 1), dtype=np.float32)
    adv, ret, valid = ex.seat_gae(seats, rewards, first, terminated, finals, values, 1.0, 1.0)
    assert valid[:, 0].tolist() == [True] * 5 + [False]  # seat 2's outcome is not known yet
    assert ret[:, 0].tolist() == [5 + 2 + 1, 4 - 5 - 3, 2 + 1, -3, 1, 0]
    values[:, 0] = [1, 2, 3, 4, 5, 6]
    adv, ret, valid = ex.seat_gae(seats, rewards, first, terminated, finals, values, 1.0, 0.0)
    # lambda 0: one-step targets, the reward to the seat's next decision plus that decision's value
    assert ret[:5, 0].tolist() == [5 + 3, 4 - 5 + 4, 2 + 5, -3 + 0, 1 + 0]


def reference_gae(seats, rewards, terminated, finals, values, gamma, lam, decided):
    """The same quantities by plain loops over each (table, seat) trajectory."""
    T, N = seats.shape
    adv = np.zeros((T, N))
    valid = np.zeros((T, N), dtype=bool)
    for i in range(N):
        for s in range(4):
            # This seat's decisions as (step, credit, outcome known, episode ends after it).
            steps, credit, known, ends = [], [], [], []
            seen = bool(decided[i, s])
            for t in range(T):
                if seats[t, i] == s:
                    if steps and not ends[-1]:
                        credit[-1] += rewards[t, i]
                        known[-1] = True
                    steps.append(t)
                    credit.append(0.0 if seen else float(rewards[t, i]))
                    known.append(False)
                    ends.append(False)
                    seen = True
                if terminated[t, i]:
                    if steps and not ends[-1]:
                        credit[-1] += finals[t, i, s]
                        known[-1] = ends[-1] = True
                    seen = False
            following = 0.0  # the advantage of the next decision in the same episode
            for k in reversed(range(len(steps))):
                t = steps[k]
                if not known[k]:
                    following = 0.0
                    continue
                if ends[k]:
                    following = credit[k] - values[t, i]
                else:
                    next_value = values[steps[k + 1], i]
                    following = credit[k] + gamma * next_value - values[t, i] + gamma * lam * following
                adv[t, i], valid[t, i] = following, True
    return adv, valid


@pytest.mark.parametrize("game", ["blood_battle", "joy_mahjong"])
def test_gae_equals_per_trajectory_loops_over_rollouts_of_the_view(game):
    """Real games of the view in three rollouts, ``decided`` carried from one to the next."""
    n, T = 12, 70
    env = SelfPlayVectorEnv(game, n)
    obs, info = env.reset(seed=3)
    reward = np.zeros(n, dtype=np.float32)
    rng = np.random.default_rng(0)
    decided = np.zeros((n, 4), dtype=bool)
    checked = 0
    for _ in range(3):
        seats, rewards = np.zeros((T, n), dtype=np.int64), np.zeros((T, n), dtype=np.float32)
        terminated, finals = np.zeros((T, n), dtype=bool), np.zeros((T, n, 4), dtype=np.float32)
        for t in range(T):
            seats[t], rewards[t] = info["seat"], reward
            obs, reward, terminated[t], _, info = env.step(mv.random_actions(info["action_mask"], rng))
            if terminated[t].any():
                finals[t] = info["final_rewards"]
        values = rng.normal(size=(T, n)).astype(np.float32)
        expected, expected_valid = reference_gae(seats, rewards, terminated, finals, values, 0.9, 0.8, decided)
        first = ex.first_decisions(seats, terminated, decided)
        adv, ret, valid = ex.seat_gae(seats, rewards, first, terminated, finals, values, 0.9, 0.8)
        np.testing.assert_array_equal(valid, expected_valid)
        np.testing.assert_allclose(adv[valid], expected[valid], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(ret, adv + values)
        checked += valid.sum()
        assert valid.mean() > 0.85  # only each seat's last, unresolved decision is left out
    assert checked > 2000


def test_returns_of_first_decisions_are_the_beans():
    """gamma = lambda = 1, values 0: a seat's first decision of an episode played out inside the
    rollout returns exactly that seat's beans of the episode."""
    n, T = 8, 400
    env = SelfPlayVectorEnv("blood_battle", n)
    obs, info = env.reset(seed=5)
    reward = np.zeros(n, dtype=np.float32)
    rng = np.random.default_rng(1)
    seats, rewards = np.zeros((T, n), dtype=np.int64), np.zeros((T, n), dtype=np.float32)
    terminated, finals = np.zeros((T, n), dtype=bool), np.zeros((T, n, 4), dtype=np.float32)
    beans: dict[tuple[int, int], np.ndarray] = {}  # (table, step the episode ended) -> bean table
    for t in range(T):
        seats[t], rewards[t] = info["seat"], reward
        obs, reward, terminated[t], _, info = env.step(mv.random_actions(info["action_mask"], rng))
        for i in np.flatnonzero(terminated[t]):
            finals[t, i] = info["final_rewards"][i]
            beans[(i, t)] = info["beans"][i]
    first = ex.first_decisions(seats, terminated, np.zeros((n, 4), dtype=bool))
    _, ret, valid = ex.seat_gae(seats, rewards, first, terminated, finals, np.zeros((T, n), np.float32), 1.0, 1.0)
    checked = 0
    for i in range(n):
        ends = [t for t in range(T) if terminated[t, i]]
        for t in range(T):
            later = [e for e in ends if e >= t]
            if first[t, i] and later:
                assert valid[t, i] and ret[t, i] == beans[(i, later[0])][seats[t, i]]
                checked += 1
    assert checked >= 4 * n
