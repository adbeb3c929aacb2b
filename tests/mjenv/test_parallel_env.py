"""The PettingZoo Parallel env of both games (mjenv/parallel.py, docs/integrations/pettingzoo.md):
PettingZoo's own parallel tests, step-for-step agreement with the AEC env over hundreds of seeded
games per preset and room, windows of several deciding seats (定缺, 一炮多响, 截和, rob, an escape
in the middle of one), illegal actions and bad input, the docs page's examples."""

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test
from pettingzoo.utils.conversions import aec_to_parallel

from agents.registry import load_policy
from mjenv import blood_battle_v0, joy_mahjong_v0, tiles
from mjenv.engine import blood_battle as blood_engine
from mjenv.engine import joy_mahjong as joy_engine
from mjenv.engine.core import IllegalActionError
from tests.support import ROOT

GAMES = {"blood_battle": blood_battle_v0, "joy_mahjong": joy_mahjong_v0}
AGENTS = [f"player_{i}" for i in range(4)]
VARIANTS = [("blood_battle", {"preset": "happy"}), ("blood_battle", {"preset": "qq"}),
            ("joy_mahjong", {"room": "popular"}), ("joy_mahjong", {"room": "eight_fan"}),
            ("joy_mahjong", {"room": "no_fan"})]
DOC = ROOT / "docs" / "integrations" / "pettingzoo.md"


def no_op_mask(env):
    """The mask of a seat without a decision: PASS alone."""
    mask = np.zeros(env.layout.n, dtype=np.int8)
    mask[env.layout.PASS] = 1
    return mask


def deciding(env, obs):
    """The agents whose mask is not the no-op's."""
    return [a for a in AGENTS if not np.array_equal(obs[a]["action_mask"], no_op_mask(env))]


class RandomPlay:
    """Random legal actions of the deciding seats; ``eager`` takes 胡, 抢杠胡, kongs and 碰/吃 first,
    and a ``policy`` (agents/) decides instead, so that wins and windows of several claimants come
    often; ESCAPE only with probability ``escape``. ``script``: the actions of the first steps."""

    def __init__(self, layout, seed, eager=False, policy=None, escape=0.0, script=()):
        self.layout, self.rng, self.eager, self.escape = layout, np.random.default_rng(seed), eager, escape
        self.policy, self.script = policy, list(script)

    def __call__(self, movers, obs):
        if self.script:
            actions = self.script.pop(0)
            assert sorted(actions) == movers
            return actions
        if self.policy is not None:
            return {a: self.policy.act(obs[a]["observation"], obs[a]["action_mask"], self.rng) for a in movers}
        return {a: self.pick(obs[a]["action_mask"]) for a in movers}

    def pick(self, mask):
        L = self.layout
        if L.ESCAPE >= 0 and mask[L.ESCAPE] and self.rng.random() < self.escape:
            return L.ESCAPE
        legal = [int(a) for a in np.flatnonzero(mask) if a != L.ESCAPE]
        if self.eager:
            for a in (L.HU, L.ROB_KONG, L.DIRECT_KONG, L.PONG, L.CHOW, L.CHOW + 1, L.CHOW + 2):
                if a >= 0 and a in legal:
                    return a
            kongs = [a for a in legal if L.KONG <= a < 2 * L.KONG]
            if kongs:
                return kongs[0]
        return legal[self.rng.integers(len(legal))]


def play_both(module, options, seed, policy, reset_options=None, stats=None):
    """Play one episode of the Parallel env and, alongside, of the AEC env made with the same
    options, feeding each parallel step's actions to the AEC env in the order it asks for them.
    Every step must agree: the AEC env asks exactly the deciding seats (up to an escape), shows
    each the observation and mask the Parallel env showed, and the per-seat rewards of the step,
    every seat's observation after it, the end and the final infos are the same. ``policy(movers,
    obs)`` gives the deciding seats' actions. Returns the Parallel env's returns; counts the
    windows, the seats of a window the engine plays itself (one legal action) and the ignored
    answers in ``stats``."""
    par, aec = module.parallel_env(**options), module.raw_env(**options)
    obs, infos = par.reset(seed=seed, options=reset_options)
    aec.reset(seed=seed, options=reset_options)
    assert infos == {a: {} for a in AGENTS}
    L, returns = par.layout, dict.fromkeys(AGENTS, 0)
    stats = Counter() if stats is None else stats
    while par.agents:
        movers = deciding(par, obs)
        assert movers and all(obs[a]["action_mask"].sum() > 1 for a in movers)
        stats[f"{par.aec.game.phase} window of {len(movers)}"] += 1
        stats["asked seats without a choice"] += len(par.aec.game.asked_seats()) - len(movers)
        actions = policy(movers, obs)
        actions.update({a: L.PASS for a in AGENTS if a not in movers})
        asked, rewards = [], dict.fromkeys(AGENTS, 0)
        while aec.agent_selection in movers and aec.agent_selection not in asked:
            agent = aec.agent_selection
            seen = aec.observe(agent)
            assert np.array_equal(seen["observation"], obs[agent]["observation"])
            assert np.array_equal(seen["action_mask"], obs[agent]["action_mask"])
            aec.step(actions[agent])
            asked.append(agent)
            for a in AGENTS:
                rewards[a] += aec.rewards[a]
            if actions[agent] == L.ESCAPE or all(aec.terminations.values()):
                break
        obs, rew, term, trunc, info = par.step(actions)
        ignored = [a for a in AGENTS if info[a].get("action_ignored")]
        assert sorted(asked + ignored) == sorted(movers)
        if ignored:  # only an escape (or the end it brings) cuts a window short
            assert actions[asked[-1]] == L.ESCAPE
            stats["answers ignored after an escape"] += len(ignored)
        assert rew == rewards
        over = all(aec.terminations.values())
        assert term == dict.fromkeys(AGENTS, over) and trunc == dict.fromkeys(AGENTS, False)
        for seat, a in enumerate(AGENTS):
            assert np.array_equal(obs[a]["observation"], aec.observe_seat(seat))
            returns[a] += rew[a]
        if over:
            assert par.agents == []
            for a in AGENTS:
                assert {k: info[a][k] for k in aec.infos[a]} == aec.infos[a]
                assert returns[a] == info[a]["beans"]
    stats["games"] += 1
    return returns


# ---------------------------------------------------------------- PettingZoo's tests


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("options", [{}, {"escape": True, "match_hands": 2}])
def test_pettingzoo_parallel_api_test(game, options):
    parallel_api_test(GAMES[game].parallel_env(**options), num_cycles=2000)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_parallel_seed_test_with_the_option(game):
    # parallel_seed_test samples every action without the mask.
    parallel_seed_test(lambda: GAMES[game].parallel_env(illegal_action="first_legal"))
    with pytest.raises(IllegalActionError, match="illegal_action="):
        parallel_seed_test(lambda: GAMES[game].parallel_env())


@pytest.mark.parametrize("game", GAMES)
def test_a_seed_and_the_actions_decide_the_whole_episode(game):
    # PettingZoo's seed test stops after one step: play whole matches twice.
    runs = []
    for _ in range(2):
        env = GAMES[game].parallel_env(match_hands=2, illegal_action="first_legal")
        obs, _ = env.reset(seed=11)
        for space_seed, agent in enumerate(AGENTS):
            env.action_space(agent).seed(space_seed)
        trace = []
        while env.agents:
            obs, rew, term, trunc, info = env.step({a: env.action_space(a).sample() for a in env.agents})
            trace.append(([obs[a]["observation"].tobytes() + obs[a]["action_mask"].tobytes() for a in AGENTS],
                          rew, term, info))
        runs.append(trace)
    assert len(runs[0]) > 10 and runs[0] == runs[1]


def test_pettingzoo_make_builds_the_parallel_envs():
    for env_id, options in [("mjenv/blood_battle_v0", {"preset": "qq"}), ("mjenv/joy_mahjong-v0", {"room": "no_fan"})]:
        env = pettingzoo.make("parallel", env_id, **options)
        assert isinstance(env, pettingzoo.ParallelEnv)
        obs, _ = env.reset(seed=3)
        assert set(obs) == set(AGENTS)
        assert (env.aec.preset if "preset" in options else env.aec.rules.room) == next(iter(options.values()))


@pytest.mark.parametrize("game", GAMES)
def test_the_aec_env_stays_unparallelizable(game):
    # Its seats are not asked once per cycle in agent order, which PettingZoo's aec_to_parallel
    # assumes: the flag stays False, so that wrapper refuses it; parallel_env is the way.
    env = GAMES[game].env()
    assert env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(env)


# ---------------------------------------------------------------- agreement with the AEC env


@pytest.mark.parametrize("game, options", VARIANTS, ids=[f"{g}-{next(iter(o.values()))}" for g, o in VARIANTS])
def test_parallel_steps_replay_exactly_on_the_aec_env(game, options):
    """100 seeded games per preset / room: random play, eager claims and (blood battle, where random
    hands seldom get ready) the game's heuristic."""
    module, stats = GAMES[game], Counter()
    layout, heuristic = module.raw_env(**options).layout, load_policy("heuristic", game)
    for seed in range(100):
        policy = heuristic if game == "blood_battle" and seed % 3 == 2 else None
        play_both(module, options, seed, RandomPlay(layout, seed, eager=seed % 3 == 1, policy=policy), stats=stats)
    assert stats["games"] == 100
    several = sum(n for k, n in stats.items() if re.fullmatch(r"(claim|rob) window of [234]", k))
    assert several >= 5, stats  # windows of several deciding seats are exercised (11 to 96 of them)
    if game == "blood_battle":
        assert stats["void window of 4"] == 100  # 定缺: the four seats in one step
    if options.get("preset") == "qq":
        assert stats["asked seats without a choice"] >= 1  # S13's forced win of a later claimant


@pytest.mark.parametrize("game, options", [
    ("blood_battle", {"preset": "happy", "escape": True, "bankroll": 3000}),
    ("blood_battle", {"preset": "qq", "escape": True, "match_hands": 3}),
    ("joy_mahjong", {"room": "popular", "escape": True, "match_hands": 3, "observation_dtype": "uint8"}),
])
def test_escapes_and_matches_replay_exactly_on_the_aec_env(game, options):
    module, stats = GAMES[game], Counter()
    layout = module.raw_env(**options).layout
    for seed in range(60):
        play_both(module, options, seed, RandomPlay(layout, seed, eager=seed % 2 == 1, escape=0.01), stats=stats)
    assert stats["games"] == 60 and sum(n for k, n in stats.items() if " window of " in k) > 60 * 30
    assert stats["answers ignored after an escape"] >= 1, stats


def test_log_files_match_the_aec_env(tmp_path):
    for game, module in GAMES.items():
        paths = {kind: tmp_path / f"{game}-{kind}.jsonl" for kind in ("parallel", "aec")}
        par = module.parallel_env(log_path=paths["parallel"], match_hands=2)
        aec = module.raw_env(log_path=paths["aec"], match_hands=2)
        obs, _ = par.reset(seed=5)
        aec.reset(seed=5)
        play = RandomPlay(par.layout, 5)
        while par.agents:
            movers = deciding(par, obs)
            actions = play(movers, obs)
            obs, *_ = par.step(actions)
            for _ in movers:
                aec.step(actions[aec.agent_selection])
        text = paths["parallel"].read_text(encoding="utf-8")
        assert text.count("\n") > 100 and text == paths["aec"].read_text(encoding="utf-8")


# ---------------------------------------------------------------- windows of several seats

MULTI_HANDS = [  # tests/mjenv/test_blood_battle_scenarios.py: seats 1-3 all win on the dealer's 5m
    "23779m11334579p", "123m456p789p11p46m", "888m222p666p999m5m", "11m33m77m44p88p33p5m"]
MULTI_DRAWS = "1s 2s 3s 4s 5m"  # with void s, each seat's discard of its s tile is forced
MULTI_WALL = {"wall": blood_engine.scripted_wall(MULTI_HANDS, MULTI_DRAWS), "dealer": 0}
VOID_S = blood_battle_v0.LAYOUT.VOID + 2
FIVE_M = blood_battle_v0.LAYOUT.DISCARD + tiles.parse("5m")[0]


def blood_to_the_5m(options):
    """A blood-battle env at the claim window of three on the dealer's 5m: 定缺 in one step of
    four, then the void discards (played by the engine, or asked with ``escape``: every
    decision is asked), then the dealer's discard."""
    env = blood_battle_v0.parallel_env(**options)
    obs, _ = env.reset(options=MULTI_WALL)
    assert deciding(env, obs) == AGENTS
    obs, *_ = env.step(dict.fromkeys(AGENTS, VOID_S))
    for _ in range(4 if options.get("escape") else 0):
        (agent,) = deciding(env, obs)
        obs, *_ = env.step({agent: int(np.flatnonzero(obs[agent]["action_mask"])[0])})  # the s tile
    assert deciding(env, obs) == ["player_0"] and env.aec.game.drawn == tiles.parse("5m")[0]
    obs, *_ = env.step({"player_0": FIVE_M})
    return env, obs


@pytest.mark.parametrize("preset", ["happy", "qq"])
def test_three_claimants_answer_in_one_step(preset):
    env, obs = blood_to_the_5m({"preset": preset})
    L = env.layout
    assert deciding(env, obs) == ["player_1", "player_2", "player_3"]
    for a in ("player_1", "player_2", "player_3"):
        assert obs[a]["action_mask"][L.HU] and obs[a]["action_mask"][L.PASS]
    assert np.array_equal(obs["player_0"]["action_mask"], no_op_mask(env))
    obs, rew, term, _, info = env.step({"player_0": L.PASS, "player_1": L.HU, "player_2": L.PASS, "player_3": L.HU})
    assert [w.seat for w in env.aec.game.wins] == [1, 3]  # 一炮多响
    assert rew["player_0"] < 0 < rew["player_1"] < rew["player_3"] and rew["player_2"] == 0
    assert not any(term.values()) and not any(i for i in info.values())


def test_an_escape_in_a_window_asks_the_later_seats_again():
    options = {"preset": "happy", "escape": True}
    env, obs = blood_to_the_5m(options)
    L = env.layout
    before = {a: obs[a]["observation"] for a in AGENTS}
    obs, rew, term, _, info = env.step({"player_1": L.ESCAPE, "player_2": L.HU, "player_3": L.HU})
    assert env.aec.game.escaped == [False, True, False, False] and not env.aec.game.wins
    assert [a for a in AGENTS if info[a].get("action_ignored")] == ["player_2", "player_3"]
    assert rew["player_1"] < 0 and not any(term.values())
    # Seats 2 and 3 are asked again, and now see the escape and its payments.
    assert deciding(env, obs) == ["player_2", "player_3"]
    for a in ("player_2", "player_3"):
        assert not np.array_equal(obs[a]["observation"], before[a])
    obs, rew, *_ = env.step({"player_2": L.PASS, "player_3": L.HU})
    assert [w.seat for w in env.aec.game.wins] == [3]
    # The same actions replay exactly on the AEC env.
    L, stats = blood_battle_v0.LAYOUT.with_escape(True), Counter()
    script = [dict.fromkeys(AGENTS, VOID_S), *({a: L.DISCARD + 18 + i} for i, a in enumerate(AGENTS)),
              {"player_0": FIVE_M}, {"player_1": L.ESCAPE, "player_2": L.HU, "player_3": L.HU},
              {"player_2": L.PASS, "player_3": L.HU}]
    play_both(blood_battle_v0, options, 0, RandomPlay(L, 0, script=script), reset_options=MULTI_WALL, stats=stats)
    assert stats["answers ignored after an escape"] == 2


JIEHU_HANDS = ["159m159pESWNCFP", "123m45m789p234s55s", "123p456p789p111s6m", "159m159pESWNCFP"]


@pytest.mark.parametrize("answers, winner", [(("HU", "HU"), 1), (("PASS", "HU"), 2)])
def test_jiehu_two_claimants_in_one_step_the_first_in_turn_order_wins(answers, winner):
    env = joy_mahjong_v0.parallel_env()
    L = env.layout
    answers = [getattr(L, name) for name in answers]
    obs, _ = env.reset(options={"wall": joy_engine.scripted_wall(JIEHU_HANDS, "6m 7s 2p"), "dealer": 0})
    obs, *_ = env.step({"player_0": L.DISCARD + tiles.parse("6m")[0]})
    assert deciding(env, obs) == ["player_1", "player_2"]
    obs, rew, term, _, info = env.step({"player_1": answers[0], "player_2": answers[1]})
    assert all(term.values()) and [w.seat for w in env.aec.game.wins] == [winner]
    assert rew[AGENTS[winner]] > 0 > rew["player_0"]
    assert sum(rew.values()) == -4 * env.aec.rules.rake


def test_an_escape_that_ends_the_hand_ignores_the_later_claimant():
    env = joy_mahjong_v0.parallel_env(escape=True)
    L = env.layout
    obs, _ = env.reset(options={"wall": joy_engine.scripted_wall(JIEHU_HANDS, "6m 7s 2p"), "dealer": 0})
    obs, *_ = env.step({"player_0": L.DISCARD + tiles.parse("6m")[0]})
    obs, rew, term, _, info = env.step({"player_1": L.ESCAPE, "player_2": L.HU})
    assert all(term.values()) and info["player_1"]["end_reason"] == "escape" and not env.aec.game.wins
    assert info["player_2"]["action_ignored"] and env.agents == []


def test_rob_window_in_one_step():
    # tests/mjenv/test_joy_mahjong_scenarios.py: seat 1 passes its win on the 6m, seat 2 碰s it, later adds
    # the 4th 6m; seat 1 is asked whether to rob it.
    env = joy_mahjong_v0.parallel_env()
    L = env.layout
    wall = joy_engine.scripted_wall(["159m159pESWNCFP", "123m45m789p234s55s", "66m19p19sESWNCFP", "159m159pESWNCFP"],
                                    "6m 7s C F P 6m 2p")
    obs, _ = env.reset(options={"wall": wall, "dealer": 0})
    D = {k: L.DISCARD + tiles.parse(k)[0] for k in ("6m", "E", "C", "F", "P")}
    for actions in [{"player_0": D["6m"]}, {"player_1": L.PASS, "player_2": L.PONG}, {"player_2": D["E"]},
                    {"player_3": D["C"]}, {"player_0": D["F"]}, {"player_1": D["P"]},
                    {"player_2": L.KONG + tiles.parse("6m")[0]}]:
        assert sorted(actions) == deciding(env, obs)
        obs, *_ = env.step(actions)
    assert env.aec.game.phase == "rob" and deciding(env, obs) == ["player_1"]
    assert obs["player_1"]["action_mask"][L.ROB_KONG]
    obs, rew, term, *_ = env.step({"player_1": L.ROB_KONG})
    assert all(term.values()) and rew["player_1"] > 0 > rew["player_2"]


# ---------------------------------------------------------------- illegal actions and bad input


def snapshot(env):
    """What a refused step must leave as it was."""
    aec = env.aec
    return (list(env.agents), list(aec.game.events), aec.state().tobytes(), dict(aec.rewards),
            {a: dict(i) for a, i in aec.infos.items()}, {s: m.tobytes() for s, m in env._deciding.items()})


def at_a_claim_window(**options):
    env, obs = blood_to_the_5m(options)
    return env, obs, env.layout


@pytest.mark.parametrize("actions, error, match", [
    ({"player_1": 54, "player_2": 56, "player_3": 56}, IllegalActionError, r"illegal action 54 \(pong\) for player_1"),
    ({"player_2": 56, "player_3": 56}, IllegalActionError, "player_1 must decide this step"),
    ({"player_1": None, "player_2": 56, "player_3": 56}, IllegalActionError, "player_1 must decide"),
    ({"player_0": 56, "player_1": 56, "player_2": 56, "player_3": 56}, IllegalActionError,
     r"illegal action 56 \(hu\) for player_0; legal: 58 \(pass\)"),
    ({"player_1": 56, "player_2": 56, "player_3": True}, TypeError, "not a bool"),
    ({"player_1": 56, "player_2": 56, "player_3": 56.0}, TypeError, "integer action id"),
    ({"player_1": 56, "player_2": 56, "player_3": 56, "player_9": 58}, ValueError, "unknown agents"),
    ([56, 56, 56], TypeError, "dict of agent -> action"),
])
def test_bad_actions_raise_and_change_nothing(actions, error, match):
    env, obs, L = at_a_claim_window()
    before = snapshot(env)
    with pytest.raises(error, match=match):
        env.step(actions)
    assert snapshot(env) == before
    # The later claimants' actions were not played either: the window is whole, and plays.
    obs, rew, *_ = env.step({"player_1": L.HU, "player_2": L.HU, "player_3": L.HU})
    assert [w.seat for w in env.aec.game.wins] == [1, 2, 3]


def test_a_failed_reset_changes_nothing():
    env, obs, L = at_a_claim_window()
    before = snapshot(env)
    for seed, options in [(-1, None), ("7", None), (None, {"dealer": 9}), (None, {"wall": [0, 1, 2]})]:
        with pytest.raises((TypeError, ValueError)):
            env.reset(seed=seed, options=options)
        assert snapshot(env) == before
    obs, rew, *_ = env.step({"player_1": L.HU, "player_2": L.PASS, "player_3": L.PASS})
    assert [w.seat for w in env.aec.game.wins] == [1]


def test_first_legal_replaces_and_flags_every_illegal_action():
    env, obs, L = at_a_claim_window(illegal_action="first_legal")
    twin, _, _ = at_a_claim_window()
    # player_1's lowest legal action is 胡 (56 < 58): the replacement; player_0's 0 becomes PASS.
    obs, rew, term, _, info = env.step({"player_0": 0, "player_1": 3, "player_2": L.PASS, "player_3": L.HU})
    expected = twin.step({"player_1": L.HU, "player_2": L.PASS, "player_3": L.HU})
    assert rew == expected[1] and [w.seat for w in env.aec.game.wins] == [1, 3]
    assert {a for a in AGENTS if info[a].get("illegal_action")} == {"player_0", "player_1"}


def test_terminate_ends_the_episode_and_penalises_the_first_offender_in_the_engines_order():
    env, obs, L = at_a_claim_window(illegal_action="terminate", illegal_reward=-7)
    obs, rew, term, _, info = env.step({"player_1": L.HU, "player_2": 0, "player_3": 0})
    assert all(term.values()) and env.agents == [] and not env.aec.game.wins  # nothing of the step played
    assert rew == {"player_0": 0, "player_1": 0, "player_2": -7.0, "player_3": 0}
    assert all(info[a]["end_reason"] == "illegal_action" for a in AGENTS)
    assert info["player_2"]["illegal_action"] and info["player_3"]["illegal_action"]


@pytest.mark.parametrize("game", GAMES)
def test_misuse_of_the_env_says_what_to_do(game):
    env = GAMES[game].parallel_env()
    with pytest.raises(RuntimeError, match="before reset"):
        env.step({})
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="render_mode"):
        GAMES[game].parallel_env(render_mode="seat")
    with pytest.raises(ValueError, match="illegal_action"):
        GAMES[game].parallel_env(illegal_action="ignore")
    obs, _ = env.reset(seed=0)
    while env.agents:
        obs, *_ = env.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in deciding(env, obs)})
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step({})


@pytest.mark.parametrize("game", GAMES)
def test_spaces_state_and_render(game):
    env = GAMES[game].parallel_env(render_mode="ansi")
    aec = GAMES[game].raw_env()
    obs, _ = env.reset(seed=1)
    for a in AGENTS:
        assert env.observation_space(a) is env.observation_space(a) and env.action_space(a) is env.action_space(a)
        assert env.observation_space(a).contains(obs[a])
        assert env.action_space(a) == aec.action_space(a)
    assert env.state().shape == aec.state_space.shape and isinstance(env.render(), str)
    assert env.metadata["name"] == f"{game}_v0"
    assert f"PASS ({env.no_op})" in GAMES[game].__doc__ and "parallel_env(**options)" in GAMES[game].__doc__


# ---------------------------------------------------------------- the docs page


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S))
def test_the_docs_examples_run(block, capsys):
    exec(compile(block, str(DOC), "exec"), {})
    assert capsys.readouterr().out.strip()
