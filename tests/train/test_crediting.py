"""Reward crediting and what a rollout keeps (train/rollout.py): every bean credited once, to the right
decision; the learner's, the teacher's and the baselines' seats."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from agents import load_policy
from mjenv import blood_battle_v0
from train.records import BASELINE, LEARNER, TEACHER, HandSummary
from train.rollout import RolloutWorker, all_weights, credit_rewards, policy_weights

from tests.train.support import fresh_net, tiny


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


@pytest.mark.parametrize("engine", ["compiled", "reference"])
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


@pytest.mark.parametrize("engine", ["compiled", "reference"])
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
