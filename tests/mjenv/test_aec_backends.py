"""The AEC env on either engine: ``backend="compiled"`` plays the readable default's game step for
step behind the same PettingZoo API (issue 49). Every step of many seeded games of every preset,
mode and room, and of the rule options, is compared: the agent to act, observations of every
seat, masks, rewards, cumulative rewards, terminations, infos and ``state()``.
Rule IDs: docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.compiled_table import CompiledTable

GAMES = {"blood_battle": blood_battle_v0, "joy_mahjong": joy_mahjong_v0}

CASES = [
    ("blood_battle", {"preset": "happy"}), ("blood_battle", {"preset": "qq"}),
    ("blood_battle", {"preset": "happy", "mode": "classic", "match_hands": 3}),
    ("blood_battle", {"preset": "qq", "mode": "classic"}),
    ("blood_battle", {"preset": "qq", "escape": True, "bankroll": 3000, "min_beans": 500, "match_hands": 4}),
    ("blood_battle", {"preset": "happy", "escape": True, "observation_dtype": "uint8"}),
    ("joy_mahjong", {"room": "popular"}), ("joy_mahjong", {"room": "eight_fan"}),
    ("joy_mahjong", {"room": "no_fan", "match_hands": 5, "rake": 2}),
    ("joy_mahjong", {"room": "popular", "escape": True, "bankroll": 400, "min_beans": 100, "match_hands": 4}),
    ("joy_mahjong", {"room": "popular", "discard_payers": "all_mcr", "observation_dtype": "uint8"}),
]


def _play_both(game: str, options: dict[str, Any], episodes: int, seed: int, escape_rate: float = 0.02) -> int:
    """Play ``episodes`` seeded episodes on both engines with the same random legal actions (a few
    escapes where the rules allow them), comparing everything at every step; the steps played."""
    mod = GAMES[game]
    ref, com = mod.raw_env(**options), mod.raw_env(backend="compiled", **options)
    rng = np.random.default_rng(seed)
    steps = 0
    for episode in range(episodes):
        # The first episode seeded, the next ones from each env's own stream (unseeded resets).
        for env in (ref, com):
            env.reset(seed=seed + episode if episode % 2 == 0 else None)
        for agent in ref.agent_iter():
            assert com.agent_selection == agent, f"step {steps}"
            for seat, name in enumerate(ref.possible_agents):
                a, b = ref.observe(name), com.observe(name)
                assert a["observation"].dtype == b["observation"].dtype
                assert np.array_equal(a["observation"], b["observation"]), f"step {steps}, seat {seat}"
                assert np.array_equal(a["action_mask"], b["action_mask"]), f"step {steps}, seat {seat}"
            assert np.array_equal(ref.state(), com.state()), f"step {steps}"
            assert (ref.rewards, ref._cumulative_rewards, ref.terminations, ref.truncations, ref.infos) == \
                (com.rewards, com._cumulative_rewards, com.terminations, com.truncations, com.infos), f"step {steps}"
            _, _, terminated, truncated, _ = ref.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(ref.observe(agent)["action_mask"])
                plain = legal[legal < mod.LAYOUT.n]  # ESCAPE (the last action, with escape) apart
                escape = len(plain) < len(legal) and rng.random() < escape_rate
                action = mod.LAYOUT.n if escape else int(plain[rng.integers(len(plain))])
            ref.step(action)
            com.step(action)
            steps += 1
        assert (ref.infos, ref.rewards, ref.match_beans) == (com.infos, com.rewards, com.match_beans)
        for name in ref.possible_agents:  # the finished table, seen by every seat
            assert np.array_equal(ref.observe(name)["observation"], com.observe(name)["observation"])
    return steps


IDS = [f"{g}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for g, o in CASES]


@pytest.mark.parametrize("game, options", CASES, ids=IDS)
def test_the_compiled_backend_plays_the_readable_game_step_for_step(game: str, options: dict[str, Any]) -> None:
    assert _play_both(game, options, episodes=2, seed=100) > 60


@pytest.mark.slow
@pytest.mark.parametrize("game, options", CASES, ids=IDS)
def test_many_seeded_games_agree_on_both_backends(game: str, options: dict[str, Any]) -> None:
    assert _play_both(game, options, episodes=40, seed=7_000, escape_rate=0.01) > 1500


@pytest.mark.parametrize("game", GAMES)
def test_illegal_action_modes_and_scripted_resets_agree(game: str) -> None:
    mod = GAMES[game]
    for mode in ("first_legal", "terminate"):
        ref, com = mod.raw_env(illegal_action=mode), mod.raw_env(illegal_action=mode, backend="compiled")
        for env in (ref, com):
            env.reset(seed=5, options={"dealer": 2})
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0]))  # illegal
        assert (ref.agent_selection, ref.rewards, ref.terminations, ref.infos) == \
            (com.agent_selection, com.rewards, com.terminations, com.infos)
        assert np.array_equal(ref.state(), com.state())
    for env in (mod.raw_env(), mod.raw_env(backend="compiled")):
        with pytest.raises(ValueError):
            env.reset(seed=1, options={"wall": [0] * 5})  # a bad scripted wall changes nothing
        with pytest.raises(RuntimeError, match="before reset"):
            env.step(0)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_and_seed_tests_pass_on_the_compiled_backend(game: str) -> None:
    mod = GAMES[game]
    api_test(mod.env(backend="compiled"), num_cycles=300)
    api_test(mod.env(backend="compiled", match_hands=3), num_cycles=500)
    seed_test(lambda: mod.env(backend="compiled"), num_cycles=300)


def test_the_compiled_backend_is_one_table_of_the_compiled_engine() -> None:
    env = blood_battle_v0.raw_env(backend="compiled", preset="qq")
    env.reset(seed=0)
    assert isinstance(env.game, CompiledTable) and env.game.backend.num_envs == 1
    assert env.game.backend.spec is env.spec  # one spec: the env's options are checked once
    assert env.render() is None and blood_battle_v0.raw_env().backend == "reference"


@pytest.mark.parametrize("options, match", [
    ({"backend": "gpu"}, r"backend must be one of \('reference', 'compiled'\), got 'gpu'"),
    ({"backend": "compiled", "render_mode": "ansi"}, r"render_mode='ansi' needs the readable engine"),
    ({"backend": "compiled", "log_path": "hands.jsonl"}, r"log_path='hands.jsonl' needs the readable engine"),
    ({"backend": "compiled", "cap_fan": 0}, r"cap_fan"),
])
def test_bad_backend_options_fail_naming_them(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        blood_battle_v0.raw_env(**options)
    with pytest.raises(ValueError, match="Parallel API plays the readable engine only"):
        joy_mahjong_v0.parallel_env(backend="compiled")


def test_the_seat_render_mode_works_on_the_compiled_backend() -> None:
    ref, com = (joy_mahjong_v0.raw_env(render_mode="seat", backend=b) for b in ("reference", "compiled"))
    for env in (ref, com):
        env.reset(seed=8)
    assert isinstance(ref.render(), str) and com.render() == ref.render()
