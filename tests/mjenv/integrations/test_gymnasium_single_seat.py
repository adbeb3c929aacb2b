"""SingleSeatEnv (the gymnasium single-seat view) and the RLlib adapter's env logic, without toolkits."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mjenv  # noqa: F401  (registers mjenv/SingleSeat-v0)
from agents import RandomPolicy
from mjenv import blood_battle_v0
from mjenv.engine.core import IllegalActionError
from mjenv.games import GAME_NAMES
from mjenv.integrations.gymnasium import SingleSeatEnv

GAMES = list(GAME_NAMES)
# Warnings check_env gives for every env with an unbounded Box, and for a render mode without fps.
KNOWN_WARNINGS = ("infinity", "render fps")


def _random_episode(env, seed, rng):
    """Play one episode with random legal actions; ``(reset info, steps)`` where each step is
    ``(reward, the seat's beans in the engine's own table after the step, info)``."""
    obs, info0 = env.reset(seed=seed)
    steps, done = [], False
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert not truncated and isinstance(reward, float)
        steps.append((reward, env.aec_env.game.beans[env.seat], info))
    return info0, steps


@pytest.mark.parametrize("mode", ["first_legal", "terminate"])
@pytest.mark.parametrize("game", GAMES)
def test_check_env_passes(game, mode):
    # check_env steps action_space.sample() without the mask: the option makes its defaults pass.
    env = gymnasium.make("mjenv/SingleSeat-v0", game=game, seat="random", illegal_action=mode).unwrapped
    assert env.spec is not None  # so check_env also checks determinism and both render modes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    unknown = [str(w.message) for w in caught if not any(k in str(w.message) for k in KNOWN_WARNINGS)]
    assert not unknown


@pytest.mark.parametrize("game,options", [
    ("blood_battle", {"preset": "happy", "rake": 400}),
    ("blood_battle", {"preset": "qq", "mode": "classic"}),
    ("joy_mahjong", {"room": "popular"}),
    ("joy_mahjong", {"room": "no_fan", "rake": 20}),
])
def test_reward_is_the_engine_bean_delta_of_the_seat(game, options):
    env = SingleSeatEnv(game=game, opponents="random", seat="random", **options)
    rng = np.random.default_rng(0)
    seats, nonzero_hands = set(), 0
    for seed in range(30):
        info0, steps = _random_episode(env, seed, rng)
        seats.add(env.seat)
        # The rewards are the increments of the engine's bean table (zero at the deal) between
        # the seat's decisions; beans of an episode skipped at reset come with the first one.
        previous = -info0.get("carried_reward", 0.0)
        for reward, beans, _ in steps:
            assert reward == beans - previous
            previous = beans
        final = steps[-1][2]  # the final beans cover the hands merged at reset (issue 47)
        carried = info0.get("carried_reward", 0.0)
        assert final["beans"] - carried == env.aec_env.game.beans[env.seat] == env.aec_env.infos[env._agent]["beans"]
        assert sum(s[0] for s in steps) == final["beans"]
        nonzero_hands += final["beans"] != 0
    assert len(seats) > 1 and nonzero_hands > 0
    if options.get("rake"):
        assert nonzero_hands == 30


def test_rewards_between_turns_and_at_the_end_are_counted():
    env = SingleSeatEnv(game="blood_battle", seat=1, rake=400)
    rng = np.random.default_rng(1)
    # The rake is taken after the seat's last decision: the last reward carries it.
    for seed in range(5):
        _, steps = _random_episode(env, seed, rng)
        before = steps[-2][1] if len(steps) > 1 else 0
        assert steps[-1][0] == steps[-1][1] - before and steps[-1][1] <= -400 + sum(
            e["beans"] for e in env.aec_env.game.events if e["type"] == "pay" and e["to"] == 1)
    # Another seat's kong or win that the learning seat pays, between two of its decisions.
    for seed in range(200):
        env.reset(seed=seed)
        done = False
        while not done:
            n_events = len(env.aec_env.game.events)
            _, reward, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            paid = sum(e["beans"] for e in env.aec_env.game.events[n_events:] if e["type"] == "pay" and e["from"] == 1)
            received = sum(e["beans"] for e in env.aec_env.game.events[n_events:] if e["type"] == "pay" and e["to"] == 1)
            if paid and not done:
                assert reward == received - paid
                return
    pytest.fail("no payment by the learning seat between its turns in 200 hands")


@pytest.mark.parametrize("game", GAMES)
def test_illegal_action_raises_and_changes_nothing(game):
    env = SingleSeatEnv(game=game, seat=2)
    obs, _ = env.reset(seed=5)
    mask = env.action_masks()
    bad = int(np.flatnonzero(mask == 0)[0])
    events = len(env.aec_env.game.events)
    with pytest.raises(IllegalActionError, match=rf"illegal action {bad} .*legal: "):
        env.step(bad)
    with pytest.raises(IllegalActionError, match="outside the action space"):
        env.step(env.action_space.n)
    with pytest.raises(TypeError, match="integer"):
        env.step(1.5)
    assert len(env.aec_env.game.events) == events
    assert np.array_equal(env.action_masks(), mask)
    assert np.array_equal(env._observe(), obs)
    env.step(np.int64(np.flatnonzero(mask)[0]))  # numpy integers are fine


def test_first_legal_mode_replaces_and_flags_the_illegal_action():
    env = SingleSeatEnv(seat=0, illegal_action="first_legal")
    env.reset(seed=3)
    legal = np.flatnonzero(env.action_masks())
    bad = int(np.flatnonzero(env.action_masks() == 0)[0])
    twin = SingleSeatEnv(seat=0)
    twin.reset(seed=3)
    obs, reward, *_, info = env.step(bad)
    obs2, reward2, *_, info2 = twin.step(int(legal[0]))
    assert info["illegal_action"] and "illegal_action" not in info2
    assert np.array_equal(obs, obs2) and reward == reward2


@pytest.mark.parametrize("game", GAMES)
def test_terminate_mode_ends_the_episode_with_the_penalty(game):
    env = SingleSeatEnv(game=game, seat=1, illegal_action="terminate", illegal_reward=-1000, rake=10)
    twin = SingleSeatEnv(game=game, seat=1, rake=10)
    rng = np.random.default_rng(0)
    env.reset(seed=7)
    twin.reset(seed=7)
    for _ in range(2):  # legal steps first, played alike by both
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, reward, done, _, info = env.step(action)
        _, twin_reward, twin_done, _, _ = twin.step(action)
        assert (reward, done) == (twin_reward, twin_done) and not done and "illegal_action" not in info
    bad = int(np.flatnonzero(env.action_masks() == 0)[0])
    before = env.aec_env.game.beans[1]
    _, reward, done, truncated, info = env.step(bad)
    assert done and not truncated and info["illegal_action"] and info["end_reason"] == "illegal_action"
    assert reward == -1000 and info["beans"] == before  # the penalty is the whole reward of the step
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_opponents_stay_strict_whatever_the_mode():
    def always_zero(observation, action_mask, rng):
        return 0  # discard 1m: illegal in the void phase

    for mode in ("first_legal", "terminate"):
        env = SingleSeatEnv(seat=0, opponents=always_zero, illegal_action=mode)
        with pytest.raises(IllegalActionError, match=r"for opponent 'always_zero' at seat \d.*mask it is given"):
            for seed in range(10):  # until an opponent is asked before seat 0
                env.reset(seed=seed)
                env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_a_bool_is_not_an_action_of_the_single_seat():
    env = SingleSeatEnv(seat=0, illegal_action="first_legal")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="integer action id"):
        env.step(True)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # nothing was played


def test_step_after_the_end_or_before_reset_raises():
    env = SingleSeatEnv()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    _random_episode(env, 0, np.random.default_rng(0))
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_bad_options_fail_at_construction():
    with pytest.raises(ValueError, match="game"):
        SingleSeatEnv(game="riichi")
    with pytest.raises(ValueError, match="seat"):
        SingleSeatEnv(seat=4)
    with pytest.raises(ValueError, match="opponents"):
        SingleSeatEnv(opponents=["random", "random"])
    with pytest.raises(ValueError, match="illegal_action"):
        SingleSeatEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="cap_fan"):
        SingleSeatEnv(cap_fan=-1)
    with pytest.raises(ValueError, match="unknown policy"):
        SingleSeatEnv(opponents="nobody")


@pytest.mark.parametrize("game", GAMES)
def test_opponents_by_name_callable_and_policy_object(game):
    calls = {"f": 0}

    def lowest_legal(observation, action_mask, rng):
        calls["f"] += 1
        return int(np.flatnonzero(action_mask)[0])

    class Counting(RandomPolicy):
        name = "counting"
        n = 0

        def act(self, observation, action_mask, rng):
            Counting.n += 1
            return super().act(observation, action_mask, rng)

    name = "heuristic"  # each game's own
    env = SingleSeatEnv(game=game, opponents=[name, lowest_legal, Counting()], seat=0)
    assert env.opponents[0].name == name
    assert isinstance(env.opponents[2], Counting)
    rng = np.random.default_rng(0)
    for seed in range(3):
        _random_episode(env, seed, rng)
    assert calls["f"] > 0 and Counting.n > 0
    assert env._opponent_at[1].name == name and env._opponent_at[3] is env.opponents[2]
    one = SingleSeatEnv(game=game, opponents=name)
    assert one.opponents[0] is one.opponents[1] is one.opponents[2]


@pytest.mark.parametrize("game", GAMES)
def test_deterministic_given_the_seed(game):
    def trajectory(seed):
        env = SingleSeatEnv(game=game, opponents="random", seat="random")
        rng = np.random.default_rng(7)
        out = []
        obs, info = env.reset(seed=seed)
        out.append((env.seat, obs.tobytes()))
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            out.append((obs.tobytes(), reward))
        # An unseeded reset continues the seeded stream.
        obs, _ = env.reset()
        out.append((env.seat, obs.tobytes()))
        return out

    assert trajectory(11) == trajectory(11)
    assert trajectory(11) != trajectory(12)


def test_fixed_seat_deals_the_aec_env_hand_of_the_seed():
    env = SingleSeatEnv(game="blood_battle", seat=3, opponents="random")
    env.reset(seed=21)
    raw = blood_battle_v0.raw_env()
    raw.reset(seed=21)
    assert env.aec_env.game.events[0] == raw.game.events[0]  # the same wall and dealer
    assert env.aec_env.game.current_player == 3


def test_match_episodes_span_several_hands():
    env = SingleSeatEnv(game="blood_battle", seat=0, match_hands=3, rake=100)
    _, steps = _random_episode(env, 4, np.random.default_rng(0))
    assert env.aec_env.hand_index == 3
    assert sum(s[0] for s in steps) == steps[-1][2]["beans"] == env.aec_env.match_beans[0]


def test_render_modes():
    env = SingleSeatEnv(render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)
    assert SingleSeatEnv().render() is None


def test_an_episode_over_before_the_seat_acts_is_carried_into_the_next():
    # Joy Mahjong, dealer 0 wins on its first turn (天和); the learning seat 2 is never asked.
    from mjenv.engine.joy_mahjong import scripted_wall

    wall = scripted_wall(["123456789m123p5p", "1112223334445s", "EEESSSWWWNNNC", "FFFPPPCCC6666s"],
                         draws="5p7s", dealer=0)

    def win_when_possible(observation, action_mask, rng):
        return 73 if action_mask[73] else int(np.flatnonzero(action_mask)[0])  # 73 = 胡

    env = SingleSeatEnv(game="joy_mahjong", seat=2, opponents=win_when_possible)
    assert env.action_name(73) == "hu"
    obs, info = env.reset(seed=0, options={"wall": wall, "dealer": 0})
    assert info["skipped_episodes"] == 1 and info["carried_reward"] < 0
    assert env.aec_env.game.events[0]["wall"] != wall  # a fresh deal from the seeded stream
    rewards, done = [], False
    while not done:
        obs, reward, done, _, last = env.step(int(np.flatnonzero(env.action_masks())[0]))
        rewards.append(reward)
    assert sum(rewards) == last["beans"] == info["carried_reward"] + env.aec_env.infos[env._agent]["beans"]


def test_the_gymnasium_views_import_neither_torch_nor_ray():
    import subprocess
    import sys

    code = ("import sys; from mjenv.integrations.gymnasium import SingleSeatEnv, SingleSeatVectorEnv; "
            "e = SingleSeatEnv(opponents='heuristic'); e.reset(seed=0); e.step(int(e.action_masks().argmax())); "
            "v = SingleSeatVectorEnv(num_envs=4, opponents='heuristic'); v.reset(seed=0); v.step(v.action_masks().argmax(1)); "
            "assert 'torch' not in sys.modules and 'ray' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
