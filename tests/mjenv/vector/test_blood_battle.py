"""mjenv.vector blood battle: parity with blood_battle_v0.raw_env, seeding, threads, bad input.

Parity plays random and eager legal actions (``vector_parity.mixed_actions``) through both engines
and compares at every step the seat to act, the mask, the observation, the rewards and
``state()``, and at every episode end the beans, the winners and the end reason. The default
suite plays 400 hands per configuration (CI-sized: seconds each); ``-m slow`` plays 100,000
(without ``state()``, which the default suite compares).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
import warnings

import numba
import numpy as np
import pytest

import mjenv.vector as mv
from mjenv import blood_battle_v0
from mjenv.games import GAME_NAMES
from mjenv.vector.env import IllegalActionError
from tests.mjenv.vector.vector_parity import check_parity, mixed_actions, random_actions

TABLES = 64
FAST_HANDS = 400
CONFIGS = {
    "happy": {},
    "qq": {"preset": "qq"},
    "qq_classic_match": {"preset": "qq", "mode": "classic", "match_hands": 2},
    "happy_match": {"match_hands": 2},
    # every remaining rule field away from its default
    "happy_fields": {"gen_counts_kongs": False, "cap_fan": 8, "base_points": 2, "direct_kong_units": 3,
                     "added_kong_units": 2, "concealed_kong_units": 1, "self_draw_bonus": "none",
                     "flower_pig_units": 5, "room_coefficient": 200, "rake": 400},
    "qq_fields": {"preset": "qq", "gen_counts_kongs": False, "cap_fan": 4, "gang_pao_transfer": False,
                  "mode": "classic"},
}


def hands_to_episodes(options: dict, hands: int) -> int:
    return -(-hands // options.get("match_hands", 1))


@pytest.mark.parametrize("name", list(CONFIGS))
def test_parity_400_hands(name):
    options = CONFIGS[name]
    venv = mv.make("blood_battle", TABLES, final_observations=True, **options)
    result = check_parity(venv, options, seed=1000, episodes=hands_to_episodes(options, FAST_HANDS))
    assert result["episodes"] >= hands_to_episodes(options, FAST_HANDS)
    assert result.get("win", 0) > 0 and result.get("draw", 0) > 0  # both endings were compared


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_parity_100000_hands(name):
    options = CONFIGS[name]
    venv = mv.make("blood_battle", 256, **options)
    # state() costs the reference 60% of the harness time; the default suite compares it every step
    result = check_parity(venv, options, seed=7_000_000, episodes=hands_to_episodes(options, 100_000),
                          rng_seed=7, check_state=False)
    assert result["episodes"] >= hands_to_episodes(options, 100_000)


def play(venv, steps: int, seed: int = 3) -> list:
    """The observations, masks, rewards and terminations of ``steps`` mixed-play steps."""
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(0)
    trace = [(obs["observation"].copy(), obs["action_mask"].copy(), info["seat"].copy())]
    for _ in range(steps):
        obs, rewards, term, trunc, info = venv.step(mixed_actions(obs, rng))
        trace.append((obs["observation"].copy(), obs["action_mask"].copy(), info["seat"].copy(),
                      rewards.copy(), term.copy()))
    return trace


def assert_same_trace(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def test_results_do_not_depend_on_thread_count():
    one = play(mv.make("blood_battle", 37, preset="qq"), 250)
    for threads in (2, 3):
        venv = mv.make("blood_battle", 37, preset="qq", num_threads=threads)
        assert_same_trace(one, play(venv, 250))
        venv.close()


def test_threads_step_in_one_parallel_call_and_part_k_plays_on_the_caller(monkeypatch):
    """``num_threads=3`` plays each step's tables as three parts of one compiled call (numba's
    pool); ``step(..., part=k)`` plays them all through view k on the calling thread. Both play
    what one thread plays."""
    import mjenv.vector.blood_battle as bb

    calls = []
    parallel = bb._step_parts
    monkeypatch.setattr(bb, "_step_parts", lambda views, bounds, *args: (calls.append((len(views), bounds.copy())),
                                                                         parallel(views, bounds, *args)))
    one = play(mv.make("blood_battle", 37, preset="qq"), 40)
    assert calls == []  # one thread never goes through the pool
    assert_same_trace(one, play(mv.make("blood_battle", 37, preset="qq", num_threads=3), 40))
    assert len(calls) == 40 and all(n == 3 and bounds.tolist() == [0, 12, 24, 37] for n, bounds in calls)

    envs = [mv.make("blood_battle", 37, preset="qq", num_threads=k, copy=False) for k in (1, 2)]
    obs = [venv.reset(seed=3)[0] for venv in envs]
    rng, live, ended_some = np.random.default_rng(0), np.arange(37, dtype=np.int64), False
    for _ in range(60):  # the tables whose hand goes on, until some have ended
        actions = mixed_actions(obs[0], rng)
        deltas = [np.zeros((37, 4), dtype=np.int64) for _ in envs]
        ended = [venv.backend.step(actions, live, d, venv._obs, **part)
                 for venv, d, part in zip(envs, deltas, ({}, {"part": 1}))]
        np.testing.assert_array_equal(ended[0], ended[1])
        np.testing.assert_array_equal(deltas[0], deltas[1])
        live, ended_some = live[~ended[0]], ended_some or ended[0].any()
        for o in obs[1:]:
            np.testing.assert_array_equal(o["observation"][live], obs[0]["observation"][live])
            np.testing.assert_array_equal(o["action_mask"][live], obs[0]["action_mask"][live])
    assert ended_some and len(live) > 0
    assert len(calls) == 40  # part=k bypassed the pool


def test_a_process_forked_after_the_pool_started_plays_its_threads_on_one_thread():
    """GNU OpenMP (numba's ``omp`` layer) cannot run in a forked child: numba would terminate it.
    A child forked after this process used the pool plays ``num_threads=2`` on one thread
    instead, the same games, with a warning (on other layers it keeps the pool, no warning)."""
    one = play(mv.make("blood_battle", 37, preset="qq"), 30)
    play(mv.make("blood_battle", 37, preset="qq", num_threads=2), 3)  # the pool has started here
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                many = play(mv.make("blood_battle", 37, preset="qq", num_threads=2), 30)
            same = len(one) == len(many) and all(np.array_equal(u, v) for x, y in zip(one, many)
                                                  for u, v in zip(x, y))
            warned = any("forked" in str(w.message) for w in caught)
            code = 0 if same and warned == (numba.threading_layer() == "omp") else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_python_threads_take_turns_on_the_pool_even_under_the_workqueue_layer():
    """numba's ``workqueue`` layer terminates the process when two parallel calls meet; three
    Python threads stepping their own two-thread envs at once take turns and play one thread's games."""
    code = textwrap.dedent("""
        import threading, numba, numpy as np
        numba.config.THREADING_LAYER = "workqueue"  # (the environment variable would miss the JIT cache)
        import mjenv.vector as mv
        from mjenv.vector import random_actions

        def final_obs(threads, seed):
            v = mv.make("blood_battle", 48, num_threads=threads, copy=False)
            obs, _ = v.reset(seed=seed)
            rng = np.random.default_rng(seed)
            for _ in range(200):
                obs, *_ = v.step(random_actions(obs["action_mask"], rng))
            return obs["observation"].copy()

        got = {}
        workers = [threading.Thread(target=lambda s=s: got.update({s: final_obs(2, s)})) for s in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert all(np.array_equal(got[s], final_obs(1, s)) for s in range(3))
        print("same games on", numba.threading_layer())
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "same games on workqueue" in run.stdout


def info_trace(venv, steps: int) -> list:
    """Every returned array and ``info`` field of ``steps`` steps, a third of the tables waiting each step."""
    obs, info = venv.reset(seed=11)
    rng = np.random.default_rng(5)
    trace = []
    for _ in range(steps):
        active = rng.random(venv.num_envs) < 2 / 3
        obs, rewards, term, _, info = venv.step(mixed_actions(obs, rng), active)
        fields = [np.asarray(info[k]).astype(str if k == "end_reason" else None) for k in sorted(info)]
        trace.append((sorted(info), obs["observation"].copy(), obs["action_mask"].copy(), rewards.copy(),
                      term.copy(), *fields))
    return trace


def test_threads_deal_multi_hand_episodes_and_report_them_as_one_thread_does():
    """Each thread deals its own chunk's next hands: episodes of 2 hands, waiting tables and the
    finished episodes' beans, end reasons and win fields equal one thread's."""
    one = info_trace(mv.make("blood_battle", 37, match_hands=2), 300)
    assert sum(int(t[4].sum()) for t in one) > 20  # episodes ended along the way
    for threads in (2, 3):
        venv = mv.make("blood_battle", 37, match_hands=2, num_threads=threads)
        many = info_trace(venv, 300)
        venv.close()
        assert len(one) == len(many)
        for x, y in zip(one, many):
            assert x[0] == y[0]  # the same info keys at every step
            for u, v in zip(x[1:], y[1:]):
                np.testing.assert_array_equal(u, v)


def test_same_seed_same_game_and_unseeded_reset_plays():
    venv = mv.make("blood_battle", 5)
    assert_same_trace(play(venv, 120), play(venv, 120))
    obs, info = venv.reset()
    assert obs["action_mask"].sum(axis=1).min() > 0 and info["seat"].shape == (5,)


def test_observation_shapes_dtypes_and_spaces():
    venv = mv.make("blood_battle", 3)
    obs, info = venv.reset(seed=0)
    ref = blood_battle_v0.raw_env()
    assert obs["observation"].shape == (3, *ref.observation_space("player_0")["observation"].shape)
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert venv.single_action_space.n == ref.action_space("player_0").n
    assert venv.state().shape == (3, *ref.state_space.shape) and venv.state().dtype == np.float32
    assert info["seat"].dtype == np.int64


@pytest.mark.parametrize("game", GAME_NAMES)
def test_state_of_some_tables_is_those_rows_of_the_full_state(game):
    venv = mv.make(game, 5)
    obs, _ = venv.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, *_ = venv.step(random_actions(obs["action_mask"], rng))
    full = venv.state()
    assert not np.array_equal(full[1], full[3])
    np.testing.assert_array_equal(venv.state(np.array([3, 1, 3])), full[[3, 1, 3]])
    assert venv.state(np.array([], dtype=np.int64)).shape == (0, *venv.state_shape)
    for bad in (np.array([5]), np.array([-1]), np.array([0.5]), np.zeros((1, 1), dtype=np.int64)):
        with pytest.raises(ValueError, match="tables must be a 1-d array of table indices in"):
            venv.state(bad)


def test_copy_false_returns_reused_buffers_and_copy_true_fresh_arrays():
    fast = mv.make("blood_battle", 4, copy=False)
    obs, _ = fast.reset(seed=1)
    obs2, *_ = fast.step(mixed_actions(obs, np.random.default_rng(0)))
    assert obs2["observation"] is obs["observation"] and obs2["action_mask"] is obs["action_mask"]
    safe = mv.make("blood_battle", 4)
    obs, _ = safe.reset(seed=1)
    kept = obs["observation"].copy()
    obs2, *_ = safe.step(mixed_actions(obs, np.random.default_rng(0)))
    assert obs2["observation"] is not obs["observation"]
    np.testing.assert_array_equal(obs["observation"], kept)


def test_illegal_action_names_table_and_changes_no_table():
    venv = mv.make("blood_battle", 6)
    obs, info = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(30):
        obs, *_ , info = venv.step(mixed_actions(obs, rng))
    before = (obs["observation"].copy(), obs["action_mask"].copy(), venv.state())
    actions = mixed_actions(obs, rng)
    bad = int(np.flatnonzero(obs["action_mask"][4] == 0)[0])
    actions[4] = bad
    with pytest.raises(IllegalActionError, match=rf"table 4: illegal action {bad} .*legal: "):
        venv.step(actions)
    with pytest.raises(IllegalActionError, match=r"table 0: illegal action 99 \(outside the action space\)"):
        venv.step(np.full(6, 99))
    actions_neg = actions.copy()
    actions_neg[3] = -1  # a negative index must not wrap to the mask's last column
    with pytest.raises(IllegalActionError, match=r"table 3: illegal action -1 \(outside the action space\)"):
        venv.step(actions_neg)
    np.testing.assert_array_equal(venv.state(), before[2])
    np.testing.assert_array_equal(venv.action_masks(), before[1])
    # The tables play on from where they were, exactly as an env that never saw the bad actions.
    twin = mv.make("blood_battle", 6)
    obs_t, _ = twin.reset(seed=5)
    rng_t = np.random.default_rng(1)
    for _ in range(30):
        obs_t, *_ = twin.step(mixed_actions(obs_t, rng_t))
    actions[4] = mixed_actions(obs, np.random.default_rng(2))[4]
    a, *_ = venv.step(actions)
    b, *_ = twin.step(actions)
    np.testing.assert_array_equal(a["observation"], b["observation"])


@pytest.mark.parametrize("actions, match", [
    (np.zeros(3), "int array of shape"),
    (np.zeros(4, dtype=np.int64), r"shape \(3,\)"),
])
def test_bad_actions_array_raises(actions, match):
    venv = mv.make("blood_battle", 3)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        venv.step(actions)


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match="reset"):
        mv.make("blood_battle", 2).step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("options", [
    {"preset": "nope"}, {"cap_fan": 0}, {"cap_fan": True}, {"no_such_rule": 1}, {"match_hands": 0},
    {"mode": "bloody"},
])
def test_options_are_validated_as_the_aec_env_does(options):
    with pytest.raises((ValueError, TypeError)) as aec:
        blood_battle_v0.raw_env(**options)
    with pytest.raises(type(aec.value), match=str(aec.value).replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        mv.make("blood_battle", 2, **options)


def test_make_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown game"):
        mv.make("riichi", 2)
    with pytest.raises(ValueError, match="num_envs"):
        mv.make("blood_battle", 0)
    with pytest.raises(ValueError, match="num_threads"):
        mv.make("blood_battle", 2, num_threads=0)
    with pytest.raises(ValueError, match="AEC env only"):
        mv.make("blood_battle", 2, render_mode="ansi")
    for bad in (-1, 2**63 - 1, True, 1.5):  # 2**63 - 1 + table 1 leaves the seed range
        with pytest.raises(ValueError, match="seed"):
            mv.make("blood_battle", 2).reset(seed=bad)


def test_rules_match_the_aec_env():
    venv = mv.make("blood_battle", 2, preset="qq", cap_fan=7)
    assert dataclasses.asdict(venv.backend.rules) == dataclasses.asdict(blood_battle_v0.raw_env(preset="qq", cap_fan=7).rules)


# ---------------------------------------------------------------------------- scripted scenarios


def _scenario_games(monkeypatch) -> list:
    """Run every test of test_blood_battle_scenarios and record each game it plays: its rules,
    wall, dealer, the actions applied (by seat) and the game itself."""
    import inspect
    import itertools

    import tests.mjenv.test_blood_battle_scenarios as scenarios
    from mjenv.engine.blood_battle import BloodBattleGame

    games = []
    init, apply = BloodBattleGame.__init__, BloodBattleGame.apply

    def recording_init(self, rules, wall, dealer, auto_forced=True):
        init(self, rules, wall, dealer, auto_forced)
        self.record = (rules, list(wall), dealer, [])
        games.append(self)

    def recording_apply(self, action):
        seat = self.current_player
        delta = apply(self, action)
        self.record[3].append((seat, int(action)))
        return delta

    monkeypatch.setattr(BloodBattleGame, "__init__", recording_init)
    monkeypatch.setattr(BloodBattleGame, "apply", recording_apply)
    for name, fn in inspect.getmembers(scenarios, inspect.isfunction):
        if not name.startswith("test_"):
            continue
        marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
        grids = []
        for m in marks:
            names = [n.strip() for n in m.args[0].split(",")] if isinstance(m.args[0], str) else list(m.args[0])
            grids.append([dict(zip(names, v if len(names) > 1 else (v,))) for v in m.args[1]])
        for combo in itertools.product(*grids):
            fn(**{k: v for d in combo for k, v in d.items()})
    monkeypatch.undo()
    return games


def test_scripted_scenarios_replay_in_parity(monkeypatch):
    """Each scenario's wall and moves, played through raw_env (forced moves auto-played) and the
    vector engine side by side: the same masks, observations, rewards and state at every step, and
    the scripted game's beans at its end."""
    games = _scenario_games(monkeypatch)
    replayed, compared = 0, 0
    for g in games:
        rules, wall, dealer, moves = g.record
        options = dataclasses.asdict(rules)
        ref = blood_battle_v0.raw_env(**options)
        ref.reset(seed=0, options={"wall": wall, "dealer": dealer})
        venv = mv.make("blood_battle", 1, **options)
        obs, info = venv.reset(seed=0, options={"wall": wall, "dealer": dealer})
        for seat, action in moves:
            game = ref.game
            if game.over or game.current_player != seat or not game.legal_mask()[action]:
                continue  # a forced move the script spelled out: both engines played it already
            want = ref.observe(ref.agent_selection)
            np.testing.assert_array_equal(obs["action_mask"][0], want["action_mask"])
            np.testing.assert_array_equal(obs["observation"][0], want["observation"])
            np.testing.assert_array_equal(venv.state()[0], ref.state())
            ref.step(action)
            compared += 1
            obs, rewards, term, trunc, info = venv.step(np.array([action]))
            assert rewards[0].tolist() == [ref.rewards[a] for a in ref.possible_agents]
            if ref.game.over:
                assert term[0] and info["beans"][0].tolist() == ref.game.beans
        # The replay followed the script: the same hands, beans and phase where the script stopped
        # (once the script's game, which asks forced moves too, has played its lone legal moves).
        while not g.over and np.count_nonzero(g.legal_mask()) == 1:
            g.apply(int(g.legal_mask().argmax()))
        if ref.game.hands == g.hands and ref.game.beans == g.beans and ref.game.phase == g.phase:
            replayed += 1
    moves = sum(len(g.record[3]) for g in games)
    assert replayed == len(games), f"{replayed} of {len(games)} scripted games followed to where they stop"
    print(f"{replayed} of {len(games)} scripted games followed, {compared} of {moves} moves compared")


def test_active_tables_step_and_the_others_wait():
    venv = mv.make("blood_battle", 4)
    obs, info = venv.reset(seed=2)
    before = venv.state()
    actions = mixed_actions(obs, np.random.default_rng(0))
    active = np.array([True, False, True, False])
    actions[1] = 999  # ignored: table 1 does not play
    obs2, rewards, term, trunc, info2 = venv.step(actions, active)
    after = venv.state()
    np.testing.assert_array_equal(after[~active], before[~active])
    assert not np.array_equal(after[active], before[active])
    assert (rewards[~active] == 0).all() and (info2["seat"][~active] == info["seat"][~active]).all()


def test_bench_vector_cli(capsys):
    import json

    from mjenv import benchmark
    from mjenv.cli import main

    assert main(["bench", "--vector", "--tables", "8", "--steps", "3", "--repeats", "1", "--decisions", "200",
                 "--no-memory", "--no-compile", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert "bench --vector" in captured.err  # the progress bar: the cold compile alone takes a minute
    assert result["game"] == "blood_battle" and result["num_envs"] == 8
    assert result["vector_1t_cpu"] > 0 and result["engine_only_cpu"] > 0
    assert result["two_thread_speedup"] == pytest.approx(result["vector_2t_wall"] / result["vector_1t_wall"])
    if "rlcard_mahjong" in result:
        assert result["ratio_1t_cpu_vs_rlcard"] == pytest.approx(result["vector_1t_cpu"] / result["rlcard_mahjong"])
    assert "8 tables" in benchmark.format_vector(result)
    assert main(["bench", "--vector", "--tables", "0", "--no-memory"]) == 2
    assert "num_envs" in capsys.readouterr().err
