"""Items (道具, S17) in the compiled engine (issue 50 item 3): ``mjenv.vector`` with ``items`` plays
the readable engine's game step for step. The same VectorEnv on both backends (the readable one,
``backend="reference"``, and the compiled one) gets the same random legal actions, items
included; at every step the seats, masks, observations (float32 and uint8), rewards, terminations,
infos and ``state()`` must agree, and at every episode end the compiled ``item_uses`` must count
the uses made. test_items.py's scripted item hands run on both engines side by side, and the AEC
env with ``backend="compiled"`` takes the option the same way. With items off the compiled engine
plays byte for byte as before the port (a digest taken on the commit before).
Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

import tests.mjenv.test_items as scenarios
from mjenv import blood_battle_v0, vector
from mjenv.engine.blood_battle import BloodBattleGame, seeded_wall
from mjenv.rules import items as item_rules
from mjenv.vector import seeding
from mjenv.vector.reference import ReferenceBackend
from mjenv.vector.rules import items as compiled_items
from tests.mjenv.vector.vector_twin import CompiledTwin

MIXED = [{"qiankun": 1, "toutian": 2}, {"yihua": 2, "shunfeng": 1}, {"qianliyan": 3, "qiankun": 1},
         {"toutian": 1, "yihua": 1, "qianliyan": 1, "shunfeng": 2}]
CASES = [
    {"preset": "happy", "items": 1},
    {"preset": "qq", "items": 2, "observation_dtype": "uint8"},
    {"preset": "qq", "mode": "classic", "items": 2, "match_hands": 3},
    {"preset": "happy", "items": MIXED, "qiankun_tiles": 13, "qianliyan_parts": 3, "escape": True,
     "bankroll": 3000, "min_beans": 500, "match_hands": 2},
]
IDS = ["happy-items1", "qq-items2-uint8", "qq-classic-items2", "happy-mixed-escape-bankroll"]
SHARED_INFO = ("seat", "beans", "end_reason", "_final", "won", "escaped", "balances", "match_end")


def _uses_in_state(state: np.ndarray, uses: slice) -> np.ndarray:
    """Each seat's item uses this hand, (N, 4, 5), read from the state's ``item_uses`` planes."""
    return state[:, uses, 0].reshape(-1, 4, 5).round().astype(np.int64)


def _play_both(options: dict[str, Any], num_envs: int, episodes: int, seed: int) -> tuple[int, np.ndarray]:
    """Step both backends with the same random legal actions (items used whenever drawn, a few
    escapes where allowed) until ``episodes`` episodes ended, comparing everything at every step;
    the episodes, and how often each item was used."""
    ref = vector.make("blood_battle", num_envs, backend="reference", **options)
    com = vector.make("blood_battle", num_envs, **options)
    assert isinstance(ref.backend, ReferenceBackend) and not isinstance(com.backend, ReferenceBackend)
    (obs_r, info_r), (obs_c, info_c) = ref.reset(seed=seed), com.reset(seed=seed)
    layout = ref.backend.layout
    rng = np.random.default_rng(seed)
    done, used = 0, np.zeros(5, dtype=np.int64)
    while done < episodes:
        for key in ("observation", "action_mask"):
            assert obs_r[key].dtype == obs_c[key].dtype
            assert np.array_equal(obs_r[key], obs_c[key]), key
        assert np.array_equal(info_r["seat"], info_c["seat"])
        state = ref.state()
        assert np.array_equal(state, com.state())
        mask = obs_r["action_mask"].copy()
        if layout.ESCAPE >= 0:  # rarely escape: uniform picks would end most hands at once
            escape = (rng.random(num_envs) < 0.01) & (mask[:, layout.ESCAPE] > 0)
            mask[:, layout.ESCAPE] = 0
            mask[escape] = 0
            mask[escape, layout.ESCAPE] = 1
        actions = vector.random_actions(mask, rng)
        item = actions - layout.ITEM
        uses = _uses_in_state(state, ref.backend.observer.state_views["item_uses"])
        for t in np.flatnonzero((item >= 0) & (item < 5)):
            uses[t, info_r["seat"][t], item[t]] += 1
            used[item[t]] += 1
        obs_r, rew_r, term_r, trunc_r, info_r = ref.step(actions)
        obs_c, rew_c, term_c, trunc_c, info_c = com.step(actions)
        for a, b in ((rew_r, rew_c), (term_r, term_c), (trunc_r, trunc_c)):
            assert np.array_equal(a, b)
        for key in SHARED_INFO:
            assert (key in info_r) == (key in info_c), key
            if key in info_r:
                assert np.array_equal(info_r[key], info_c[key]), key
        if term_c.any():  # the finished hand's uses: those the state showed, and this step's
            assert np.array_equal(info_c["item_uses"][term_c], uses[term_c])
        done += int(term_r.sum())
    return done, used


@pytest.mark.parametrize("options", CASES, ids=IDS)
def test_the_compiled_engine_plays_items_as_the_readable_one(options: dict[str, Any]) -> None:
    episodes, used = _play_both(options, num_envs=4, episodes=4, seed=5)
    assert episodes >= 4 and used.all()  # every item was played


@pytest.mark.slow
@pytest.mark.parametrize("options", CASES, ids=IDS)
def test_a_thousand_episodes_with_items_agree(options: dict[str, Any]) -> None:
    episodes, used = _play_both(options, num_envs=16, episodes=1_000, seed=2_026)
    assert episodes >= 1_000 and used.all()


def test_items_play_the_same_on_two_threads() -> None:
    """The threads' parts hold their own tables' item draws: one thread and two play alike."""
    envs = [vector.make("blood_battle", 6, items=2, num_threads=n) for n in (1, 2)]
    (one, _), (two, _) = (env.reset(seed=9) for env in envs)
    rng = np.random.default_rng(9)
    for _ in range(150):
        assert np.array_equal(one["observation"], two["observation"])
        actions = vector.random_actions(one["action_mask"], rng)
        (one, r1, t1, _, _), (two, r2, t2, _, _) = (env.step(actions) for env in envs)
        assert np.array_equal(r1, r2) and np.array_equal(t1, t2)
    for env in envs:
        env.close()


ITEMS_OFF_DIGEST = "a179690405c294b9bbafc12ecf802a80f29a6bd5cc720ec80a1d3029e19df7ef"
"""The digest below on the commit before items came to the compiled engine (3f22ac4)."""


def test_items_off_the_compiled_engine_plays_byte_for_byte_as_before() -> None:
    h = hashlib.sha256()
    for opts in ({}, {"preset": "qq"}, {"mode": "classic", "match_hands": 2},
                 {"preset": "qq", "escape": True, "bankroll": 3000}, {"escape": True, "observation_dtype": "uint8"}):
        env = vector.make("blood_battle", 4, **opts)
        obs, info = env.reset(seed=7)
        rng = np.random.default_rng(7)
        for _ in range(150):
            for part in (obs["observation"], obs["action_mask"], info["seat"], env.state()):
                h.update(np.ascontiguousarray(part).tobytes())
            obs, rewards, terminated, _, info = env.step(vector.random_actions(obs["action_mask"], rng))
            h.update(rewards.tobytes())
            h.update(terminated.tobytes())
    assert h.hexdigest() == ITEMS_OFF_DIGEST


def test_the_items_generator_draws_as_numpy() -> None:
    """The items' generator: seeded by a whole wall, its integers, choice and 乾坤大挪移 walls."""
    for seed in range(40):
        wall, dealer = seeded_wall(seed)
        words = np.asarray(wall, dtype=np.uint32)
        users = [(dealer + i) % 4 for i in range(4) if seed >> i & 1] or [dealer]
        rng, g = np.random.default_rng(words), seeding.words_generator(words)
        expected = item_rules.qiankun_wall(wall, dealer, users, 1 + seed % 13, rng)
        got = np.array(wall, dtype=np.int8)  # the engine's types, so its compiled code serves
        compiled_items.qiankun_wall(got, np.int8(dealer), np.int8(sum(1 << u for u in users)),
                                    np.int64(1 + seed % 13), g)
        assert got.tolist() == expected
        pick = np.empty(seed % 7 + 1, dtype=np.int64)
        seeding.choice(g, 30, pick)
        assert pick.tolist() == rng.choice(30, size=len(pick), replace=False).tolist()
        assert [seeding.integers(g, 50, 50 + n) for n in (1, 2, 55)] == [int(rng.integers(50, 50 + n)) for n in (1, 2, 55)]


@pytest.fixture
def twins(monkeypatch: pytest.MonkeyPatch) -> list[CompiledTwin]:
    """test_items.py's scripted hands as twins: each also played by a compiled table, which must
    agree at every decision (seat, mask, observation with the item planes, beans) and at the end."""
    made: list[CompiledTwin] = []
    readable = scenarios.scripted_game

    def twin(*args: Any, **kwargs: Any) -> CompiledTwin:
        made.append(CompiledTwin(readable(*args, **kwargs), "blood_battle"))
        return made[-1]

    monkeypatch.setattr(scenarios, "scripted_game", twin)
    return made


@pytest.mark.parametrize("scenario, args", [
    (scenarios.test_toutian_takes_the_nearest_copy_and_offers_zimo, ("happy",)),
    (scenarios.test_toutian_takes_the_nearest_copy_and_offers_zimo, ("qq",)),
    (scenarios.test_yihua_swaps_with_a_seeded_wall_tile, ()),
    (scenarios.test_qianliyan_names_the_part_or_none, (4,)),
    (scenarios.test_qianliyan_names_the_part_or_none, (7,)),
    (scenarios.test_shunfeng_sees_the_next_draw_until_it_is_drawn, ()),
    (scenarios.test_a_swap_of_the_heard_tile_ends_the_knowledge, ()),
    (scenarios.test_no_escape_inside_an_item_decision, ()),
    (scenarios.test_qiankun_deals_a_near_flush, (10,)),
    (scenarios.test_qiankun_deals_a_near_flush, (13,)),
], ids=["toutian-happy", "toutian-qq", "yihua", "qianliyan-4", "qianliyan-7", "shunfeng", "swap-heard",
        "no-escape", "qiankun-10", "qiankun-13"])
def test_the_item_scenarios_on_both_engines(twins: list[CompiledTwin], scenario: Any, args: tuple) -> None:
    scenario(*args)
    assert twins and all(t.venv.backend.n_actions == t.game.layout.n for t in twins)


def test_a_scripted_swap_on_both_engines() -> None:
    """偷天换日 on an arranged wall: the compiled table takes the nearest copy and offers 自摸 on it."""
    wall = [k for k in range(27) for _ in range(4)]
    game = BloodBattleGame(blood_battle_v0.raw_env(items={"toutian": 1}).rules, wall, dealer=0)
    env = vector.make("blood_battle", 1, items={"toutian": 1})
    obs, info = env.reset(seed=0, options={"wall": wall, "dealer": 0})
    layout = env.backend.layout
    for action in (layout.VOID + 2, layout.VOID + 2, layout.VOID + 2, layout.VOID + 2, layout.ITEM + 1,
                   layout.GIVE + 13, layout.NAME + 26):
        assert np.array_equal(obs["action_mask"][0], game.legal_mask())
        game.apply(action)
        obs, _, _, _, info = env.step(np.array([action]))
    assert np.array_equal(obs["action_mask"][0], game.legal_mask())
    assert env.backend.arrays.wall[0].tolist() == game.wall
    assert env.backend.arrays.hands[0].tolist() == [list(h[:27]) for h in game.hands]


def test_the_aec_env_on_the_compiled_engine_takes_items() -> None:
    """``blood_battle_v0.raw_env(items=..., backend="compiled")`` plays the readable env's game."""
    options = {"preset": "qq", "items": 2, "escape": True}
    ref, com = blood_battle_v0.raw_env(**options), blood_battle_v0.raw_env(backend="compiled", **options)
    rng = np.random.default_rng(3)
    steps, items = 0, 0
    for episode in range(2):
        for env in (ref, com):
            env.reset(seed=40 + episode)
        for agent in ref.agent_iter():
            assert com.agent_selection == agent
            for name in ref.possible_agents:
                a, b = ref.observe(name), com.observe(name)
                assert np.array_equal(a["observation"], b["observation"]) and np.array_equal(a["action_mask"], b["action_mask"])
            assert np.array_equal(ref.state(), com.state())
            assert (ref.rewards, ref.terminations, ref.infos) == (com.rewards, com.terminations, com.infos)
            _, _, terminated, truncated, _ = ref.last()
            action = None
            if not (terminated or truncated):
                legal = np.flatnonzero(ref.observe(agent)["action_mask"])
                legal = legal[legal != ref.spec.layout.ESCAPE]
                action = int(legal[rng.integers(len(legal))])
                items += action >= ref.spec.layout.ITEM
            ref.step(action)
            com.step(action)
            steps += 1
    assert steps > 100 and items > 10
