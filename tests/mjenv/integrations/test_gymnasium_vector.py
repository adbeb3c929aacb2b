"""SingleSeatVectorEnv (mjenv.integrations.gymnasium): a real gymnasium.vector.VectorEnv on the
compiled engine, checked against the AEC engine table by table and with Gymnasium's own wrappers."""

from __future__ import annotations

from tests.support import ROOT

import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import ClipReward, NormalizeObservation, RecordEpisodeStatistics

import mjenv
from mjenv import games
from mjenv.engine.core import IllegalActionError
from mjenv.integrations.gymnasium import SingleSeatVectorEnv
from mjenv.integrations.opponents import FrozenNetwork, Mixture

MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]


def lowest_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A deterministic batched opponent: the lowest legal action."""
    assert observations.dtype == np.float32 and observations.shape[0] == masks.shape[0]
    return masks.argmax(axis=1)


class AECSeat:
    """What one table of the single-seat view must show, computed on the AEC engine: the learner
    at ``seat`` against the lowest-legal opponent, hands without a learner decision merged."""

    def __init__(self, game: str, seat: int, seed: int, opponent=lowest_legal, **options):
        self.e, self.seat, self.opponent = games.game(game).raw_env(**options), seat, opponent
        self.merged = np.zeros(4, dtype=np.int64)
        self.restart(seed)

    def _advance(self) -> float:
        """Opponents up to the learner's turn; the learner's beans on the way (merging hands it
        missed into the next one); whether the episode it took part in ended."""
        e, got = self.e, 0.0
        while True:
            while not all(e.terminations.values()) and e.game.current_player != self.seat:
                e.step(self._opponent_action())
                got += e.rewards[f"player_{self.seat}"]
            if not all(e.terminations.values()):
                return got
            self.merged += [e.infos[a]["beans"] for a in e.possible_agents]  # never asked: merge
            e.reset()

    def _opponent_action(self) -> int:
        """The batched opponent's choice for the seat to act, called on a batch of one."""
        e = self.e
        planes = e.observer.observe(e.game, e.game.current_player)[None]
        return int(self.opponent(planes, e.game.legal_mask()[None])[0])

    def observation(self) -> np.ndarray:
        return self.e.observe_seat(self.seat)

    def mask(self) -> np.ndarray:
        return self.e.game.legal_mask()

    def step(self, action: int) -> tuple[float, bool, np.ndarray | None]:
        """(reward, episode ended, bean table) of the learner's ``action``; after an end the table
        stands finished until :meth:`restart`."""
        e = self.e
        reward = self.carry
        self.carry = 0.0
        e.step(action)
        reward += e.rewards[f"player_{self.seat}"]
        while not all(e.terminations.values()) and e.game.current_player != self.seat:
            e.step(self._opponent_action())
            reward += e.rewards[f"player_{self.seat}"]
        if all(e.terminations.values()):
            beans = np.array([e.infos[a]["beans"] for a in e.possible_agents]) + self.merged
            self.merged[:] = 0
            return reward, True, beans
        return reward, False, None

    def restart(self, seed: int | None = None, options: dict | None = None) -> None:
        self.e.reset(seed=seed, options=options)
        self.carry = self._advance()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("game,options", [("blood_battle", {"preset": "qq"}), ("joy_mahjong", {"room": "no_fan"})])
def test_every_table_is_the_aec_engine_seen_from_one_seat(game, options, mode):
    n, seat, seed = 6, 2, 40
    env = SingleSeatVectorEnv(game, n, opponents=lowest_legal, seat=seat, autoreset_mode=mode, **options)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.autoreset_mode == env.metadata["autoreset_mode"] == mode
    refs = [AECSeat(game, seat, seed + i, **options) for i in range(n)]
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(3)
    episodes = 0
    finished = np.zeros(n, dtype=bool)
    for _ in range(250):
        masks = env.action_masks()
        for i, ref in enumerate(refs):
            if not finished[i]:
                np.testing.assert_array_equal(obs[i], ref.observation())
                np.testing.assert_array_equal(masks[i], ref.mask())
                np.testing.assert_array_equal(info["action_mask"][i], ref.mask())
        assert masks.sum(axis=1).min() > 0  # never an empty mask
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, rewards, term, trunc, info = env.step(actions)
        final = info if mode == AutoresetMode.NEXT_STEP else info.get("final_info", {})
        for i, ref in enumerate(refs):
            if finished[i]:  # NEXT_STEP: this step restarted the table, reward 0
                assert rewards[i] == 0 and not term[i]
                ref.restart()
                finished[i] = False
                continue
            reward, done, beans = ref.step(int(actions[i]))
            assert rewards[i] == reward and term[i] == done
            if done:
                episodes += 1
                assert final["_beans"][i] and final["beans"][i].tolist() == beans.tolist()
                assert final["seat"][i] == seat
                last_view = obs[i] if mode == AutoresetMode.NEXT_STEP else info["final_obs"][i]
                np.testing.assert_array_equal(last_view, ref.observation())
                if mode == AutoresetMode.NEXT_STEP:
                    finished[i] = True
                    assert masks.shape == env.action_masks().shape and env.action_masks()[i].all()
                else:
                    ref.restart()
    assert episodes > 10 and not trunc.any()


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_record_episode_statistics_is_exact_over_3000_episodes(game):
    """Gymnasium's RecordEpisodeStatistics assumes NEXT_STEP, the default: the return it records
    for each episode is that episode's bean delta of the learning seat, in every one."""
    n = 256
    env = RecordEpisodeStatistics(gymnasium.make_vec(games.game(game).gym_id, num_envs=n, seat="random",
                                                     vectorization_mode="vector_entry_point"))
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=11)
    rng = np.random.default_rng(0)
    own = np.zeros(n)  # our own sum of the rewards since each table's last reset step
    resetting = np.zeros(n, dtype=bool)
    checked = mismatched = 0
    seats = set()
    while checked < 3_000:
        m = info["action_mask"]
        obs, rewards, term, trunc, info = env.step((rng.random(m.shape) * m).argmax(axis=1))
        own[~resetting] += rewards[~resetting]
        assert (rewards[resetting] == 0).all()
        for i in np.flatnonzero(term):
            truth = info["beans"][i, info["seat"][i]]
            mismatched += info["episode"]["r"][i] != truth or own[i] != truth
            seats.add(int(info["seat"][i]))
            checked += 1
        own[resetting] = 0
        resetting = term
    assert mismatched == 0 and seats == {0, 1, 2, 3}


@pytest.mark.parametrize("mode", MODES)
def test_normalize_observation_and_clip_reward_run(mode):
    env = gymnasium.make_vec("mjenv/JoyMahjong-v0", num_envs=8, autoreset_mode=mode)
    if mode == AutoresetMode.SAME_STEP:  # Gymnasium's observation wrappers refuse SAME_STEP envs
        with pytest.raises(AssertionError):
            NormalizeObservation(env)
        env = ClipReward(env, -1.0, 1.0)
    else:
        env = ClipReward(NormalizeObservation(env), -1.0, 1.0)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        m = info["action_mask"]
        obs, rewards, term, trunc, info = env.step((rng.random(m.shape) * m).argmax(axis=1))
        assert obs.shape == (8, 82, 34) and np.isfinite(obs).all() and np.abs(rewards).max() <= 1.0


def test_registered_ids_make_the_vector_env_and_the_single_table_env():
    for game in games.GAMES.values():
        venv = gymnasium.make_vec(game.gym_id, num_envs=3, vectorization_mode="vector_entry_point")
        assert isinstance(venv, SingleSeatVectorEnv) and venv.game == game.name and venv.num_envs == 3
        env = gymnasium.make(game.gym_id).unwrapped
        assert type(env).__name__ == "SingleSeatEnv" and env.game == game.name
        assert env.observation_space == venv.single_observation_space
    venv = gymnasium.make_vec("mjenv/BloodBattle-v0", num_envs=4, preset="qq", opponents="heuristic")
    assert venv.venv.backend.rules.cap_fan == mjenv.blood_battle_v0.raw_env(preset="qq").rules.cap_fan


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_uint8_observations_are_the_float32_ones_as_small_integers(game):
    kw = dict(opponents=lowest_legal, seat="random")
    f32, u8 = SingleSeatVectorEnv(game, 16, **kw), SingleSeatVectorEnv(game, 16, observation_dtype="uint8", **kw)
    assert u8.single_observation_space.dtype == np.uint8 and u8.observation_space.contains(u8.reset(seed=5)[0])
    observer = f32.venv.backend.observer
    scale, offset = observer.uint8_codec
    beans = np.zeros(len(scale), dtype=bool)
    beans[observer.views["beans"]] = True
    a, _ = f32.reset(seed=5)
    b, _ = u8.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(100):
        np.testing.assert_array_equal(b, observer.to_uint8(a))
        back = observer.from_uint8(b)
        np.testing.assert_array_equal(back[:, ~beans], a[:, ~beans])  # exact but for the beans
        assert np.abs(back[:, beans] - np.clip(a[:, beans], -8, 7.9375)).max() <= 1 / 32
        m = f32.action_masks()
        actions = (rng.random(m.shape) * m).argmax(axis=1)
        a, ra, *_ = f32.step(actions)
        b, rb, *_ = u8.step(actions)
        np.testing.assert_array_equal(ra, rb)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_mask_in_observation_is_the_planes_flattened_and_the_mask(mode, dtype):
    """``mask_in_observation=True``: the same game, each observation a Dict of the flattened planes
    and the float32 mask of the info (also the finished tables' views in SAME_STEP's final_obs)."""
    kw = dict(opponents=lowest_legal, seat="random", autoreset_mode=mode, observation_dtype=dtype)
    plain, masked = SingleSeatVectorEnv("blood_battle", 8, **kw), SingleSeatVectorEnv(
        "blood_battle", 8, mask_in_observation=True, **kw)
    space = masked.single_observation_space
    assert set(space.spaces) == {"observations", "action_mask"} and space["action_mask"].dtype == np.float32
    assert space["observations"].shape == (73 * 27,) and space["observations"].dtype == dtype
    (a, info_a), (b, info_b) = plain.reset(seed=2), masked.reset(seed=2)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(300):
        assert masked.observation_space.contains(b)
        np.testing.assert_array_equal(b["observations"], a.reshape(8, -1))
        np.testing.assert_array_equal(b["action_mask"], info_b["action_mask"])
        np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
        actions = (rng.random((8, 62)) * info_a["action_mask"]).argmax(axis=1)
        a, ra, ta, _, info_a = plain.step(actions)
        b, rb, tb, _, info_b = masked.step(actions)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)
        for i in np.flatnonzero(tb) if mode == AutoresetMode.SAME_STEP else []:
            final = info_b["final_obs"][i]
            assert space.contains(final) and final["action_mask"].all()
            np.testing.assert_array_equal(final["observations"], info_a["final_obs"][i].reshape(-1))
        ended += int(tb.sum())
    assert ended > 0
    with pytest.raises(ValueError, match="mask_in_observation"):
        SingleSeatVectorEnv("blood_battle", 2, mask_in_observation="yes")


def test_random_seats_come_from_the_episode_seed():
    def seats(seed):
        env = SingleSeatVectorEnv("blood_battle", 64, seat="random")
        return env.reset(seed=seed)[1]["seat"]

    first = seats(3)
    np.testing.assert_array_equal(first, seats(3))
    assert not np.array_equal(first, seats(4)) and set(first.tolist()) == {0, 1, 2, 3}


class CountingPolicy:
    """A Policy (act_batch) that counts its calls and the rows it was given."""

    name = "counting"

    def __init__(self):
        self.calls = self.rows = 0

    def act_batch(self, observations, action_masks, rng):
        self.calls += 1
        self.rows += len(action_masks)
        return (rng.random(action_masks.shape) * action_masks).argmax(axis=1)


def test_a_policy_is_called_once_per_engine_step_over_all_its_tables(monkeypatch):
    policy = CountingPolicy()
    env = SingleSeatVectorEnv("blood_battle", 32, opponents=policy)
    raw_steps = []
    step = env.venv.step
    monkeypatch.setattr(env.venv, "step", lambda *a, **k: raw_steps.append(1) or step(*a, **k))
    env.reset(seed=0)
    for _ in range(20):
        env.step(env.action_masks().argmax(axis=1))
    learner_steps = 20
    assert policy.calls == len(raw_steps) - learner_steps  # one call per opponent engine step
    assert policy.rows > 3 * policy.calls  # each call covers many tables


def test_opponents_by_name_list_and_mixture():
    env = SingleSeatVectorEnv("blood_battle", 8, opponents=["heuristic", "random", "blood_battle_qq"])
    names = [type(p).__name__ for p in env.opponents.policies]
    assert len(names) == 3 and names[1] == "RandomOpponent"
    env.reset(seed=0)
    env.step(env.action_masks().argmax(axis=1))
    mixed = SingleSeatVectorEnv("joy_mahjong", 400, opponents={"random": 3, "heuristic": 1})
    mixed.reset(seed=1)
    share = (mixed.opponents.lineup == 0).mean()  # "random" was resolved first
    assert 0.68 < share < 0.82
    again = SingleSeatVectorEnv("joy_mahjong", 400, opponents=Mixture([("random", 3), ("heuristic", 1)]))
    again.reset(seed=1)
    np.testing.assert_array_equal(again.opponents.lineup, mixed.opponents.lineup)


def test_set_opponents_replaces_them_between_steps():
    calls = []

    def recording(observations, masks):
        calls.append(len(masks))
        return masks.argmax(axis=1)

    env = SingleSeatVectorEnv("blood_battle", 32, opponents="random")
    env.reset(seed=5)
    before = env.opponents
    with pytest.raises(ValueError, match="unknown policy"):
        env.set_opponents("no_such_policy")
    assert env.opponents is before  # a bad spec changes nothing
    mixture = Mixture({"heuristic": 1, recording: 1})
    env.set_opponents(mixture)
    fresh = SingleSeatVectorEnv("blood_battle", 32, opponents=mixture)
    fresh.reset(seed=5)
    np.testing.assert_array_equal(env.opponents.lineup, fresh.opponents.lineup)  # drawn from the hands' seeds
    assert set(np.unique(env.opponents.lineup)) == {0, 1}
    calls.clear()
    for _ in range(5):
        env.step(env.action_masks().argmax(axis=1))
    assert calls  # the new opponents play


def test_frozen_network_opponents_follow_the_updates_they_are_given():
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(73 * 27, 62))
    frozen = FrozenNetwork(net, greedy=True)
    env = SingleSeatVectorEnv("blood_battle", 16, opponents=frozen)
    env.reset(seed=0)
    obs = np.random.default_rng(0).random((5, 73, 27)).astype(np.float32)
    masks = np.ones((5, 62), dtype=np.int8)
    before = frozen.act_batch(obs, masks, np.random.default_rng(0))
    with torch.no_grad():
        net[1].bias.copy_(torch.arange(62.0) * 1e3)  # the live network now prefers the last action
    np.testing.assert_array_equal(frozen.act_batch(obs, masks, np.random.default_rng(0)), before)  # still frozen
    frozen.update(net)
    assert (frozen.act_batch(obs, masks, np.random.default_rng(0)) == 61).all()
    masks[:, 61] = 0
    assert (frozen.act_batch(obs, masks, np.random.default_rng(0)) == 60).all()  # the mask is respected
    for _ in range(10):
        env.step(env.action_masks().argmax(axis=1))


@pytest.mark.parametrize("mode,expect", [("first_legal", "lowest"), ("terminate", "penalty")])
def test_illegal_learner_actions_follow_the_option(mode, expect):
    env = SingleSeatVectorEnv("blood_battle", 4, illegal_action=mode)
    env.reset(seed=0)
    masks = env.action_masks()
    actions = masks.argmax(axis=1)
    actions[2] = int(np.flatnonzero(masks[2] == 0)[0])
    obs, rewards, term, trunc, info = env.step(actions)
    assert info["illegal_action"].tolist() == [False, False, True, False]
    if expect == "penalty":
        assert term.tolist() == [False, False, True, False]
        assert rewards[2] == env.venv.illegal_reward == -192 and info["end_reason"][2] == "illegal_action"
    else:
        assert not term.any()


def test_illegal_learner_action_raises_and_bad_arguments():
    env = SingleSeatVectorEnv("blood_battle", 3)
    env.reset(seed=0)
    actions = env.action_masks().argmax(axis=1)
    actions[1] = int(np.flatnonzero(env.action_masks()[1] == 0)[0])
    with pytest.raises(IllegalActionError, match="table 1"):
        env.step(actions)
    for bad in (4, True, np.bool_(True), "left", -1):
        with pytest.raises(ValueError, match="seat"):
            SingleSeatVectorEnv("blood_battle", 2, seat=bad)
    with pytest.raises(ValueError, match="unknown policy 'no_such_policy'"):
        SingleSeatVectorEnv("blood_battle", 2, opponents="no_such_policy")
    with pytest.raises(TypeError, match="numpy array"):
        SingleSeatVectorEnv("blood_battle", 2, opponents=np.array(["random"] * 3))
    with pytest.raises(ValueError, match="list of 3"):
        SingleSeatVectorEnv("blood_battle", 2, opponents=["random", "random"])
    with pytest.raises(ValueError, match="autoreset_mode"):
        SingleSeatVectorEnv("blood_battle", 2, autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(ValueError, match="observation_dtype"):
        SingleSeatVectorEnv("blood_battle", 2, observation_dtype="float16")
    with pytest.raises(ValueError, match="illegal_action"):
        SingleSeatVectorEnv("blood_battle", 2, illegal_action="ignore")
    with pytest.raises(RuntimeError, match="reset"):
        SingleSeatVectorEnv("blood_battle", 2).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        SingleSeatVectorEnv("blood_battle", 2).action_masks()


def test_a_failing_opponent_stops_the_env_until_reset():
    """An opponent's illegal action raises, naming it; the tables wait on opponents then, so the
    next step is refused (the learner's actions are never played for an opponent) until reset."""
    fail = {"on": False}

    def opp(o, m):
        return np.full(len(m), 999) if fail.pop("on", False) else m.argmax(1)

    env = SingleSeatVectorEnv("blood_battle", 2, opponents=opp)
    env.reset(seed=1)
    fail["on"] = True
    with pytest.raises(IllegalActionError, match="opponent 'opp'"):
        env.step(env.action_masks().argmax(1))
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(env.action_masks().argmax(1))
    obs, info = env.reset(seed=1)
    assert (info["seat"] == 0).all() and (env.venv.backend.seat == 0).all()
    env.step(env.action_masks().argmax(1))


def eager_opponent(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """胡 when it can, else the lowest legal action."""
    from mjenv.actions import JOY_MAHJONG as L

    return np.where(masks[:, L.HU] > 0, L.HU, masks.argmax(axis=1))


@pytest.mark.parametrize("mode", MODES)
def test_waiting_tables_neither_play_nor_change(mode):
    """``step(actions, active)``: table 2 waits at random steps; it then shows the same view, reward
    0, and later plays on as a one-table env that steps only when it is active; the other tables
    play as if nobody waited."""
    kw = dict(opponents=lowest_legal, autoreset_mode=mode, preset="qq")
    env, whole = SingleSeatVectorEnv("blood_battle", 4, **kw), SingleSeatVectorEnv("blood_battle", 4, **kw)
    alone = SingleSeatVectorEnv("blood_battle", 1, **kw)
    obs, _ = env.reset(seed=8)
    whole.reset(seed=8)
    alone.reset(seed=10)  # table 2 of the others
    rng = np.random.default_rng(2)
    waited = ended_then_waited = 0
    for _ in range(150):
        active = np.array([True, True, rng.random() < 0.6, True])
        masks = env.action_masks()
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        actions[2] = int(np.flatnonzero(masks[2])[-1]) if active[2] else 999  # ignored while waiting
        before = obs[2].copy(), masks[2].copy()
        obs, rewards, term, _, info = env.step(actions, active)
        w_obs, w_rewards, w_term, _, _ = whole.step(np.where(np.arange(4) == 2, whole.action_masks().argmax(1), actions))
        for i in (0, 1, 3):
            np.testing.assert_array_equal(obs[i], w_obs[i])
            assert rewards[i] == w_rewards[i] and term[i] == w_term[i]
        if active[2]:
            a_obs, a_rewards, a_term, _, _ = alone.step(actions[2:3])
            np.testing.assert_array_equal(obs[2], a_obs[0])
            np.testing.assert_array_equal(env.action_masks()[2], alone.action_masks()[0])
            assert rewards[2] == a_rewards[0] and term[2] == a_term[0]
        else:
            waited += 1
            ended_then_waited += bool(before[1].all())  # NEXT_STEP: a finished table's all-ones row
            np.testing.assert_array_equal(obs[2], before[0])
            np.testing.assert_array_equal(env.action_masks()[2], before[1])
            assert rewards[2] == 0 and not term[2]
    assert waited > 30 and (mode == AutoresetMode.SAME_STEP or ended_then_waited > 0)
    with pytest.raises(ValueError, match="active"):
        env.step(env.action_masks().argmax(1), np.ones(3, dtype=bool))


def test_a_hand_the_learner_never_saw_merges_into_its_next_episode():
    """Joy Mahjong, scripted: the dealer's first discard (1m) is won at once by seat 1, so the
    learner at seat 2 is never asked in that hand. Its beans there (the rake) come with its first
    decision of the next hand, the episode's bean table covers both hands, and the returns that
    RecordEpisodeStatistics records are still the bean deltas."""
    from mjenv.engine.joy_mahjong import scripted_wall

    junk = "159m159pESWNCFP"
    wall = scripted_wall([junk, "23m456p789p234s55s", junk, junk], "6s 7s", [], 0)
    n, seat, rake = 2, 2, 20
    env = RecordEpisodeStatistics(SingleSeatVectorEnv("joy_mahjong", n, opponents=eager_opponent, seat=seat,
                                                      rake=rake))
    refs = [AECSeat("joy_mahjong", seat, 0, opponent=eager_opponent, rake=rake) for i in range(n)]
    for i, ref in enumerate(refs):
        ref.merged[:] = 0
        ref.restart(100 + i, {"wall": wall, "dealer": 0})  # the scripted hand; then the table's next seeds
        assert ref.merged[seat] == -rake and ref.carry == -rake  # the first hand went by unseen
    obs, info = env.reset(seed=100, options={"wall": wall, "dealer": 0})
    for i, ref in enumerate(refs):
        np.testing.assert_array_equal(obs[i], ref.observation())
    rng = np.random.default_rng(0)
    checked = 0
    resetting, first = np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
    while checked < 6:
        masks = info["action_mask"]  # wrappers pass the info on (not action_masks())
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, rewards, term, _, info = env.step(actions)
        for i, ref in enumerate(refs):
            if resetting[i]:
                ref.restart()
                continue
            reward, done, beans = ref.step(int(actions[i]))
            assert rewards[i] == reward and term[i] == done
            if done:
                assert info["beans"][i].tolist() == beans.tolist()
                assert info["episode"]["r"][i] == beans[seat]
                assert info["skipped_hands"][i] == first[i]  # each table's first episode: two hands
                first[i] = False
                checked += 1
        resetting = term


DOC = ROOT / "docs" / "integrations" / "gymnasium.md"


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S))
def test_the_docs_examples_run(block, capsys):
    exec(compile(block, str(DOC), "exec"), {})
    assert capsys.readouterr().out.strip()
