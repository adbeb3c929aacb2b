"""SelfPlayVectorEnv (mjenv.vector.self_play): each table's seat to act with the reward credited to
it, checked against the raw batched env it wraps and against the trainer's own crediting
(train.rollout.credit_rewards, the specification) on the same games."""

from __future__ import annotations

from tests.support import ROOT

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import mjenv.vector as mv
from mjenv.engine.core import IllegalActionError
from mjenv.vector import SelfPlayVectorEnv
from train.rollout import credit_rewards

DOC = ROOT / "docs" / "integrations" / "selfplay.md"
DOC_BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)

CASES = [
    ("blood_battle", {"preset": "happy"}),
    ("blood_battle", {"preset": "qq", "match_hands": 2}),
    ("joy_mahjong", {"room": "popular"}),
]


class ViewCredits:
    """The view's rewards turned into one credit per decision by the documented rule: the reward
    returned with a seat's decision belongs to its previous decision in the episode (to that
    decision itself at the seat's first one), ``final_rewards`` to its last decision."""

    def __init__(self, n: int) -> None:
        self.last = np.full((n, 4), -1, dtype=np.int64)  # each seat's latest decision id in the episode
        self.credit: list[float] = []
        self.episode_sum = np.zeros((n, 4))  # rewards returned to each seat in the episode, finals included
        self.never_asked = 0

    def decide(self, seats: np.ndarray, rewards: np.ndarray) -> None:
        """Every table's seat to act takes a decision; ``rewards`` came with it."""
        for t, (s, r) in enumerate(zip(seats, rewards)):
            previous = self.last[t, s]
            self.last[t, s] = len(self.credit)
            self.credit.append(float(r) if previous < 0 else 0.0)
            if previous >= 0:
                self.credit[previous] += float(r)
            self.episode_sum[t, s] += r

    def finish(self, t: int, final: np.ndarray) -> np.ndarray:
        """Table ``t``'s episode ended with ``final`` (4,); returns what each seat was paid in it."""
        for s in range(4):
            if self.last[t, s] >= 0:
                self.credit[self.last[t, s]] += float(final[s])
            else:
                self.never_asked += 1
        paid = self.episode_sum[t] + final
        self.last[t], self.episode_sum[t] = -1, 0
        return paid


@pytest.mark.parametrize("game,options", CASES)
def test_rewards_sum_to_beans_and_equal_the_trainers_crediting(game, options):
    """Lockstep with the raw env it wraps: the same seats, observations and masks; for each table
    and episode a seat's rewards plus its final reward are its beans; and each decision's credit
    is credit_rewards' on the raw env's rewards of its episode."""
    n, seed = 48, 7
    view = SelfPlayVectorEnv(game, n, final_observations=True, **options)
    raw = mv.make(game, n, final_observations=True, **options)
    obs, info = view.reset(seed=seed)
    robs, rinfo = raw.reset(seed=seed)
    mine = ViewCredits(n)
    rewards = np.zeros(n, dtype=np.float32)  # the first decisions come with no reward
    rng = np.random.default_rng(1)
    episodes_done: list[tuple[list[int], list[int], list[list[int]]]] = []  # ids, actors, raw step rewards
    episode: list[tuple[list[int], list[int], list[list[int]]]] = [([], [], []) for _ in range(n)]
    episodes = 0
    for _ in range(1200):
        np.testing.assert_array_equal(info["seat"], rinfo["seat"])
        np.testing.assert_array_equal(obs, robs["observation"])
        np.testing.assert_array_equal(info["action_mask"], robs["action_mask"])
        np.testing.assert_array_equal(view.action_masks(), robs["action_mask"])
        ids = len(mine.credit) + np.arange(n)
        mine.decide(info["seat"], rewards)
        for t in range(n):
            episode[t][0].append(int(ids[t]))
            episode[t][1].append(int(rinfo["seat"][t]))
        actions = mv.random_actions(info["action_mask"], rng)
        obs, rewards, term, trunc, info = view.step(actions)
        robs, rrewards, rterm, _, rinfo = raw.step(actions)
        assert rewards.dtype == np.float32 and rewards.shape == (n,) and not trunc.any()
        np.testing.assert_array_equal(term, rterm)
        for t in range(n):
            episode[t][2].append(np.rint(rrewards[t]).astype(np.int64).tolist())
        if not term.any():
            assert "final_rewards" not in info
            continue
        assert info["final_rewards"].dtype == np.float32
        assert (info["final_rewards"][~term] == 0).all() and (rewards[term] == 0).all()
        for t in np.flatnonzero(term):
            paid = mine.finish(t, info["final_rewards"][t])
            np.testing.assert_array_equal(paid, info["beans"][t])
            np.testing.assert_array_equal(info["beans"][t], rinfo["beans"][t])
            for seat in range(4):
                np.testing.assert_array_equal(info["final_obs"][t][seat], rinfo["final_obs"][t][seat])
            episodes_done.append(episode[t])
            episode[t] = ([], [], [])
            episodes += 1
    assert episodes > 40
    credited = np.array(mine.credit)
    for ids, actors, step_rewards in episodes_done:
        assert credited[ids].tolist() == credit_rewards(actors, step_rewards)
    assert any(credited[ids].any() for ids, _, _ in episodes_done)


def test_a_seat_never_asked_gets_its_beans_in_the_final_rewards():
    """Joy Mahjong hands can end before a seat decides anything: its final reward is its beans."""
    n = 64
    view = SelfPlayVectorEnv("joy_mahjong", n)
    obs, info = view.reset(seed=3)
    asked = np.zeros((n, 4), dtype=bool)
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(3000):
        asked[np.arange(n), info["seat"]] = True
        obs, rewards, term, _, info = view.step(mv.random_actions(info["action_mask"], rng))
        for t in np.flatnonzero(term):
            for s in np.flatnonzero(~asked[t]):
                assert info["final_rewards"][t, s] == info["beans"][t, s]
                found += 1
            asked[t] = False
    assert found > 0


@pytest.mark.parametrize("game", ["blood_battle", "joy_mahjong"])
def test_uint8_observations_are_the_raw_envs(game):
    n = 16
    view = SelfPlayVectorEnv(game, n, observation_dtype="uint8")
    raw = mv.make(game, n, observation_dtype="uint8")
    assert view.single_observation_space.dtype == np.uint8
    obs, info = view.reset(seed=2)
    robs, _ = raw.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(100):
        assert obs.dtype == np.uint8 and obs.shape == (n, *view.single_observation_space.shape)
        assert all(view.single_observation_space.contains(o) for o in obs)
        np.testing.assert_array_equal(obs, robs["observation"])
        actions = mv.random_actions(info["action_mask"], rng)
        obs, *_, info = view.step(actions)
        robs, *_ = raw.step(actions)


def test_an_illegal_action_raises_and_changes_nothing():
    n = 8
    view, twin = SelfPlayVectorEnv("blood_battle", n), SelfPlayVectorEnv("blood_battle", n)
    obs, info = view.reset(seed=4)
    twin.reset(seed=4)
    rng = np.random.default_rng(0)
    for step in range(60):
        actions = mv.random_actions(info["action_mask"], rng)
        if step % 10 == 5:  # an illegal action at table 3: refused, nothing stepped
            bad = actions.copy()
            bad[3] = int(np.flatnonzero(info["action_mask"][3] == 0)[0])
            with pytest.raises(IllegalActionError, match="table 3"):
                view.step(bad)
        obs, rewards, term, _, info = view.step(actions)
        tobs, trewards, tterm, _, tinfo = twin.step(actions)
        np.testing.assert_array_equal(obs, tobs)
        np.testing.assert_array_equal(rewards, trewards)
        np.testing.assert_array_equal(info["seat"], tinfo["seat"])


def test_first_legal_plays_the_lowest_legal_action_and_flags_it():
    n = 8
    view = SelfPlayVectorEnv("blood_battle", n, illegal_action="first_legal")
    raw = mv.make("blood_battle", n)
    obs, info = view.reset(seed=5)
    raw.reset(seed=5)
    rng = np.random.default_rng(0)
    flagged = 0
    for _ in range(60):
        masks = info["action_mask"]
        actions = rng.integers(masks.shape[1], size=n)  # ignores the mask: mostly illegal
        legal = masks[np.arange(n), actions] == 1
        obs, rewards, term, _, info = view.step(actions)
        robs, *_ = raw.step(np.where(legal, actions, masks.argmax(axis=1)))
        np.testing.assert_array_equal(info.get("illegal_action", np.zeros(n, dtype=bool)), ~legal)
        np.testing.assert_array_equal(obs, robs["observation"])
        flagged += (~legal).sum()
    assert flagged > 100


def test_terminate_pays_the_penalty_in_the_final_rewards():
    """``illegal_action="terminate"``: the offender's final reward carries ``illegal_reward``; as in
    the AEC env, ``beans`` does not, so the seat's rewards sum to its beans plus the penalty."""
    n, penalty = 8, -100.0
    view = SelfPlayVectorEnv("blood_battle", n, illegal_action="terminate", illegal_reward=penalty)
    obs, info = view.reset(seed=6)
    paid = np.zeros((n, 4))
    rng = np.random.default_rng(0)
    ended = 0
    for step in range(200):
        actions = mv.random_actions(info["action_mask"], rng)
        offender = -1
        if step % 25 == 24:
            offender = step % n
            actions[offender] = int(np.flatnonzero(info["action_mask"][offender] == 0)[0])
            offender_seat = int(info["seat"][offender])
        obs, rewards, term, _, info = view.step(actions)
        for t in np.flatnonzero(term):
            total = paid[t] + info["final_rewards"][t]
            expected = info["beans"][t].astype(np.float64)
            if t == offender:
                assert info["illegal_action"][t] and info["end_reason"][t] == "illegal_action"
                expected[offender_seat] += penalty
                ended += 1
            np.testing.assert_array_equal(total, expected)
            paid[t] = 0
        paid[np.arange(n), info["seat"]] += rewards
    assert ended == 8


def test_reset_forgets_unpaid_rewards_and_action_masks_needs_reset():
    """After a reset mid-hand the view pays what a fresh view pays: nothing of the old hands."""
    played, fresh = SelfPlayVectorEnv("blood_battle", 16), SelfPlayVectorEnv("blood_battle", 16)
    with pytest.raises(RuntimeError, match="reset"):
        played.action_masks()
    _, info = played.reset(seed=8)
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, _, _, _, info = played.step(mv.random_actions(info["action_mask"], rng))
    unpaid = bool(played._unpaid.any())  # some seats hold beans not yet returned
    runs = []
    for env in (played, fresh):
        _, info = env.reset(seed=9)
        got, rng = [], np.random.default_rng(1)
        for _ in range(60):
            _, rewards, _, _, info = env.step(mv.random_actions(info["action_mask"], rng))
            got.append(rewards)
        runs.append(np.array(got))
    assert unpaid and runs[0].any()
    np.testing.assert_array_equal(runs[0], runs[1])


def test_inactive_tables_wait_and_then_play_what_they_would_have_played():
    """``step(actions, active)``: a waiting table keeps its decision (reward 0); when it plays
    again its game goes on exactly as if it had never waited."""
    n = 6
    waits, always = SelfPlayVectorEnv("blood_battle", n), SelfPlayVectorEnv("blood_battle", n)
    history = {}  # (env, table) -> what the table returned at each step it played
    for env in (waits, always):
        obs, info = env.reset(seed=3)
        rngs = [np.random.default_rng(t) for t in range(n)]  # one per table: it draws only when it plays
        for step in range(400):
            active = np.ones(n, dtype=np.bool_)
            if env is waits:
                active[0] = step % 3 != 0
            actions = np.array([rngs[t].choice(np.flatnonzero(info["action_mask"][t])) if active[t] else -1
                                for t in range(n)])
            before = (obs[0].copy(), info["seat"][0])
            obs, reward, terminated, _, info = env.step(actions, active)
            if not active[0]:
                np.testing.assert_array_equal(obs[0], before[0])
                assert info["seat"][0] == before[1] and reward[0] == 0 and not terminated[0]
            for t in np.flatnonzero(active):
                final = info["final_rewards"][t].tolist() if terminated[t] else None
                history.setdefault((env is waits, t), []).append(
                    (obs[t].tobytes(), int(info["seat"][t]), float(reward[t]), bool(terminated[t]), final))
    for t in range(n):
        played = history[(True, t)]
        assert played == history[(False, t)][:len(played)]
    assert any(h[3] for h in history[(True, 0)])  # the waiting table finished hands too


@pytest.mark.parametrize("i", range(len(DOC_BLOCKS)))
def test_docs_example_runs(i, capsys):
    """Each Python block of docs/integrations/selfplay.md runs as written and prints something."""
    exec(compile(DOC_BLOCKS[i], f"docs/integrations/selfplay.md block {i}", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_docs_have_a_block():
    assert DOC_BLOCKS and "SelfPlayVectorEnv" in DOC_BLOCKS[0]


def test_the_benchmark_measures_both_paths():
    path = DOC.parent.parent.parent / "bench" / "toolkits" / "selfplay.py"
    spec = importlib.util.spec_from_file_location("bench_selfplay", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    rows = bench.measure("blood_battle", quick=True)
    assert [row["engine"] for row in rows] == ["aec", "compiled", "compiled"]
    assert all(row["toolkit"] == "selfplay" and row["steps_per_s"] > 0 and row["path"] and row["notes"] for row in rows)
    assert rows[1]["steps_per_s"] > rows[0]["steps_per_s"]  # the compiled view outpaces one AEC table


def test_batched_spaces_fresh_masks_and_the_copy_option():
    """copy=True (the default): the caller's own arrays; copy=False: the engine's buffers, the same
    values, overwritten by the next step (as Gymnasium's vector envs)."""
    from mjenv.vector import SelfPlayVectorEnv

    env = SelfPlayVectorEnv("blood_battle", 5)
    obs, info = env.reset(seed=0)
    assert env.observation_space.shape == (5, 73, 27) and env.observation_space.contains(obs)
    assert env.action_space.shape == (5,)
    info["action_mask"][:] = 0  # the caller's array: the env's own masks stay
    assert env.action_masks().any(axis=1).all()
    shared = SelfPlayVectorEnv("blood_battle", 5, copy=False)
    env = SelfPlayVectorEnv("blood_battle", 5)
    (sobs, sinfo), (obs, info) = shared.reset(seed=3), env.reset(seed=3)
    first_obs, first_mask = sobs, sinfo["action_mask"]
    for _ in range(3):
        actions = mv.random_actions(info["action_mask"], np.random.default_rng(0))
        (sobs, _, _, _, sinfo), (obs, _, _, _, info) = shared.step(actions), env.step(actions)
        np.testing.assert_array_equal(sobs, obs)
        np.testing.assert_array_equal(sinfo["action_mask"], info["action_mask"])
    assert sobs is first_obs and sinfo["action_mask"] is first_mask  # one buffer, refilled
    with pytest.raises(ValueError, match="copy must be True or False"):
        SelfPlayVectorEnv("blood_battle", 2, copy="no")
