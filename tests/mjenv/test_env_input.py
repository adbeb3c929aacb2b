"""The AEC adapter of both games under bad input and unmasked samplers: ``illegal_action``,
``reset`` that validates before it touches anything, ``log_path`` checks and write failures,
calls before ``reset``, and separate instances in threads."""

import importlib
import threading

import numpy as np
import pytest
from pettingzoo.test import api_test
from pettingzoo.test.state_test import test_state as pettingzoo_state_test

from mjenv import games
from mjenv.engine.core import IllegalActionError
from mjenv.replay import read_log, verify_log

GAMES = {name: importlib.import_module(g.env_module) for name, g in games.GAMES.items()}  # game -> env module
SCALE = {"blood_battle": 192.0, "joy_mahjong": 64.0}  # -illegal_reward by default: the bean scale


def _play(e, steps, rng):
    """``steps`` random legal actions on a raw env (fewer if the episode ends)."""
    for _ in range(steps):
        if all(e.terminations.values()):
            return
        e.step(int(rng.choice(np.flatnonzero(e.game.legal_mask()))))


def _finish(e, rng):
    """Random legal play to the end of the episode; each seat's summed rewards."""
    totals = dict.fromkeys(e.possible_agents, 0)
    while not all(e.terminations.values()):
        e.step(int(rng.choice(np.flatnonzero(e.game.legal_mask()))))
        for a in e.possible_agents:
            totals[a] += e.rewards[a]
    return totals


def _snapshot(e):
    """Everything a failed call must leave as it was."""
    return (e.agent_selection, e.hand_index, e._hand_seed, e.np_random.bit_generator.state,
            list(e.match_beans), dict(e.rewards), dict(e._cumulative_rewards), dict(e.terminations),
            {a: dict(i) for a, i in e.infos.items()}, list(e.game.events), e.state().tobytes(),
            e.observe(e.agent_selection)["action_mask"].tobytes())


def _illegal(e):
    """A masked-out action of the seat to act."""
    return int(np.flatnonzero(e.game.legal_mask() == 0)[0])


# ---------------------------------------------------------------- illegal_action


@pytest.mark.parametrize("game", GAMES)
def test_raise_names_the_mask_and_the_option(game):
    e = GAMES[game].raw_env()
    e.reset(seed=1)
    before = _snapshot(e)
    with pytest.raises(IllegalActionError, match=r"for player_\d; legal: .*action mask.*illegal_action='first_legal'"):
        e.step(_illegal(e))
    with pytest.raises(IllegalActionError, match=r"must act.*legal: .*action mask"):
        e.step(None)
    assert _snapshot(e) == before


@pytest.mark.parametrize("game", GAMES)
def test_first_legal_plays_the_lowest_legal_action_and_flags_it(game):
    e, twin = GAMES[game].raw_env(illegal_action="first_legal"), GAMES[game].raw_env()
    e.reset(seed=4)
    twin.reset(seed=4)
    agent = e.agent_selection
    e.step(_illegal(e))
    twin.step(int(np.flatnonzero(twin.game.legal_mask())[0]))
    assert e.infos[agent] == {"illegal_action": True} and twin.infos[agent] == {}
    assert e.game.events == twin.game.events and e.rewards == twin.rewards
    # The flag holds until the seat's next step.
    _play(e, 40, np.random.default_rng(0))
    assert "illegal_action" not in e.infos[agent]


@pytest.mark.parametrize("game", GAMES)
def test_terminate_ends_the_episode_with_the_documented_penalty(game, tmp_path):
    path = tmp_path / "hands.jsonl"
    e = GAMES[game].env(illegal_action="terminate", log_path=path)
    e.reset(seed=2)
    _play(e.unwrapped, 12, np.random.default_rng(2))
    offender = e.agent_selection
    beans = list(e.unwrapped.match_beans)
    e.step(_illegal(e.unwrapped))
    u = e.unwrapped
    assert all(u.terminations.values()) and not any(u.truncations.values())
    assert u.rewards == {a: (-SCALE[game] if a == offender else 0) for a in u.possible_agents}
    for i, a in enumerate(u.possible_agents):
        assert u.infos[a]["beans"] == beans[i] and u.infos[a]["end_reason"] == "illegal_action"
        assert not e.observe(a)["action_mask"].any()
    assert u.infos[offender]["illegal_action"]
    # The PettingZoo episode then runs out as usual: each agent sees its end and steps None.
    seen = {}
    for agent in e.agent_iter():
        _, reward, terminated, _, _ = e.last()
        assert terminated
        seen[agent] = reward
        e.step(None)
    assert seen[offender] == -SCALE[game] and not e.agents
    assert not path.exists()  # an unfinished hand writes no replay log
    # The penalty is an option.
    e = GAMES[game].raw_env(illegal_action="terminate", illegal_reward=-5)
    e.reset(seed=2)
    offender = e.agent_selection
    e.step(_illegal(e))
    assert e.rewards[offender] == -5.0


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("mode", ["first_legal", "terminate"])
def test_pettingzoo_tests_that_ignore_the_mask_pass_with_the_option(game, mode):
    # PettingZoo's state test steps action_space(agent).sample(), without the mask.
    pettingzoo_state_test(GAMES[game].env(illegal_action=mode), num_cycles=60)
    api_test(GAMES[game].env(illegal_action=mode), num_cycles=60)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_state_test_hits_the_mask_by_default(game):
    with pytest.raises(IllegalActionError, match="illegal_action="):
        pettingzoo_state_test(GAMES[game].env(), num_cycles=60)


@pytest.mark.parametrize("kwargs, field", [
    ({"illegal_action": "ignore"}, "illegal_action"),
    ({"illegal_reward": float("nan")}, "illegal_reward"),
    ({"illegal_reward": True}, "illegal_reward"),
    ({"illegal_reward": "-1"}, "illegal_reward"),
])
@pytest.mark.parametrize("game", GAMES)
def test_bad_illegal_action_options_fail_at_construction(game, kwargs, field):
    with pytest.raises(ValueError, match=field):
        GAMES[game].raw_env(**kwargs)


@pytest.mark.parametrize("game", GAMES)
def test_a_bool_is_not_an_action(game):
    e = GAMES[game].raw_env(illegal_action="first_legal")  # not even replaced: it is no action
    e.reset(seed=0)
    before = _snapshot(e)
    for bad in (True, np.bool_(False), 1.0, "1"):
        with pytest.raises(TypeError, match="integer action id"):
            e.step(bad)
    assert _snapshot(e) == before


# ---------------------------------------------------------------- before reset


@pytest.mark.parametrize("game", GAMES)
def test_calls_before_reset_say_to_reset(game):
    e = GAMES[game].raw_env()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), e.state):
        with pytest.raises(RuntimeError, match=r"before reset\(\): call reset\(\) first"):
            call()
    e.reset(seed=0)  # and nothing was broken by them
    assert e.observe(e.agent_selection)["action_mask"].any()


# ---------------------------------------------------------------- reset validates first


BAD_RESETS = [
    ({"seed": 999, "options": {"dealer": 9}}, ValueError, "'dealer' must be an int 0-3"),
    ({"seed": 999, "options": {"dealer": "1"}}, ValueError, "'dealer' must be an int 0-3"),
    ({"seed": 999, "options": {"dealer": True}}, ValueError, "'dealer' must be an int 0-3"),
    ({"seed": 999, "options": [1]}, TypeError, "options must be a dict"),
    ({"seed": 999, "options": {"wall": 7}}, TypeError, "'wall' must be a list"),
    ({"seed": 999, "options": {"wall": [0] * 144}}, ValueError, "wall holds each"),
    ({"seed": -1}, TypeError, "seed must be None or an int >= 0"),
    ({"seed": "7"}, TypeError, "seed must be None or an int >= 0"),
    ({"seed": 1.5}, TypeError, "seed must be None or an int >= 0"),
    ({"options": {"dealer": 9}}, ValueError, "'dealer'"),  # unseeded: the stream must not move
]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kwargs, error, match", BAD_RESETS)
def test_a_failed_reset_changes_nothing(game, kwargs, error, match):
    e = GAMES[game].raw_env()
    e.reset(seed=0)
    _play(e, 9, np.random.default_rng(0))
    before = _snapshot(e)
    with pytest.raises(error, match=match):
        e.reset(**kwargs)
    assert _snapshot(e) == before


@pytest.mark.parametrize("game", GAMES)
def test_the_hand_after_a_failed_reset_logs_its_true_seed_and_replays(game, tmp_path):
    path = tmp_path / "hands.jsonl"
    e, twin = GAMES[game].raw_env(log_path=path), GAMES[game].raw_env()
    for env in (e, twin):
        env.reset(seed=0)
        _play(env, 9, np.random.default_rng(0))
    with pytest.raises(ValueError, match="dealer"):
        e.reset(seed=999, options={"dealer": 9})
    assert _finish(e, np.random.default_rng(1)) == _finish(twin, np.random.default_rng(1))
    (hand,) = read_log(path)
    assert hand.header.record["seed"] == 0
    assert verify_log(path).hands[0].seed == 0
    # An unseeded reset after a failed one continues the seeded stream as if it had not failed.
    with pytest.raises(ValueError, match="dealer"):
        e.reset(options={"dealer": -1})
    e.reset()
    twin.reset()
    assert e._hand_seed == twin._hand_seed and e.game.events == twin.game.events


# ---------------------------------------------------------------- log_path


@pytest.mark.parametrize("game", GAMES)
def test_log_path_is_checked_at_construction(game, tmp_path):
    with pytest.raises(ValueError, match=r"log_path .*missing.* does not exist; create it first"):
        GAMES[game].raw_env(log_path=tmp_path / "missing" / "hands.jsonl")
    with pytest.raises(ValueError, match="log_path .* is a folder"):
        GAMES[game].raw_env(log_path=tmp_path)
    with pytest.raises(TypeError, match="log_path"):
        GAMES[game].raw_env(log_path=3)
    GAMES[game].raw_env(log_path=str(tmp_path / "hands.jsonl"))  # a new file in a folder is fine


@pytest.mark.parametrize("game", GAMES)
def test_a_failed_log_write_leaves_the_env_usable(game, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "hands.jsonl"
    e, twin = GAMES[game].raw_env(log_path=path, match_hands=2), GAMES[game].raw_env(match_hands=2)
    rng, twin_rng = np.random.default_rng(3), np.random.default_rng(3)
    for env in (e, twin):
        env.reset(seed=3)
    folder.rmdir()  # the folder goes away during the first hand
    while e.hand_index == 0:
        action = int(rng.choice(np.flatnonzero(e.game.legal_mask())))
        twin.step(int(twin_rng.choice(np.flatnonzero(twin.game.legal_mask()))))
        if twin.hand_index == 0:
            e.step(action)
            continue
        with pytest.raises(OSError, match=r"could not append the finished hand to log_path .*hands.jsonl.*unaffected"):
            e.step(action)
    # The hand was settled and the next one dealt, exactly as without a log.
    assert e.match_beans == twin.match_beans and e.rewards == twin.rewards
    assert e._cumulative_rewards == twin._cumulative_rewards
    assert e.agent_selection == twin.agent_selection and e.game.events == twin.game.events
    assert e.observe(e.agent_selection)["action_mask"].any()
    folder.mkdir()  # writable again: the second hand is logged
    assert _finish(e, rng) == _finish(twin, twin_rng)
    assert e.infos == twin.infos and all(e.terminations.values())
    (hand,) = read_log(path)
    assert hand.header.record["hand_index"] == 1


# ---------------------------------------------------------------- threads


@pytest.mark.parametrize("game", GAMES)
def test_separate_instances_play_the_same_in_threads(game):
    def run(seed, out):
        e = GAMES[game].raw_env()
        e.reset(seed=seed)
        out[seed] = (_finish(e, np.random.default_rng(seed)), e.game.events)

    alone, threaded = {}, {}
    for seed in range(4):
        run(seed, alone)
    threads = [threading.Thread(target=run, args=(seed, threaded)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert threaded == alone
    assert "not thread-safe" in GAMES[game].__doc__
