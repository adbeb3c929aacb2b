"""Issue 47 item 1: every episode of the single-seat views returns its seat's beans, exactly, as
the toolkits' own episode statistics record them (Gymnasium's ``RecordEpisodeStatistics``, SB3's
``VecMonitor``), with escape, tiny bankrolls and random seats, where hands often end before the
learning seat acts (merged without bankroll, left out with it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

GAMES = ("blood_battle", "joy_mahjong")
GAME_OPTIONS = {"blood_battle": {"preset": "qq"}, "joy_mahjong": {}}
"""qq: an escape ends the hand (S16.2, docs/rules-blood-battle.md), so hands end before the learner acts often."""


def _random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row (escape included: hands end early and often)."""
    mask = np.asarray(mask)
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def _vector_episodes(game: str, num_envs: int, episodes: int, **options: Any) -> dict[str, int]:
    """Plays ``SingleSeatVectorEnv`` under ``RecordEpisodeStatistics`` until ``episodes`` ended;
    counts the episodes whose recorded return is not the seat's beans, and with a bankroll those
    whose balances are not ``bankroll + beans``."""
    import gymnasium
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    import mjenv  # noqa: F401  (registers the ids)

    env_id = {"blood_battle": "mjenv/BloodBattle-v0", "joy_mahjong": "mjenv/JoyMahjong-v0"}[game]
    envs = RecordEpisodeStatistics(gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                                                      **GAME_OPTIONS[game], **options))
    bankroll = options.get("bankroll")
    rng = np.random.default_rng(1)
    _, info = envs.reset(seed=7)
    counts = {"episodes": 0, "wrong_return": 0, "wrong_balances": 0, "skipped": 0}
    while counts["episodes"] < episodes:
        _, _, terminated, _, info = envs.step(_random_actions(info["action_mask"], rng))
        for i in np.flatnonzero(terminated):
            beans = info["beans"][i]
            counts["episodes"] += 1
            counts["skipped"] += int(info["skipped_hands"][i])
            counts["wrong_return"] += info["episode"]["r"][i] != beans[info["seat"][i]]
            if bankroll is not None:
                counts["wrong_balances"] += not np.array_equal(info["balances"][i], bankroll + beans)
    envs.close()
    return counts


def _sb3_episodes(game: str, num_envs: int, episodes: int, **options: Any) -> dict[str, int]:
    """The same count through SB3's ``VecMonitor`` over ``make_vec_env``."""
    from stable_baselines3.common.vec_env import VecMonitor

    from mjenv.integrations.sb3 import make_vec_env

    envs = VecMonitor(make_vec_env(game, num_envs, **GAME_OPTIONS[game], **options))
    bankroll = options.get("bankroll")
    rng = np.random.default_rng(2)
    envs.seed(11)
    envs.reset()
    counts = {"episodes": 0, "wrong_return": 0, "wrong_balances": 0, "skipped": 0}
    while counts["episodes"] < episodes:
        _, _, dones, infos = envs.step(_random_actions(envs.env_method("action_masks"), rng))
        for i in np.flatnonzero(dones):
            beans = infos[i]["beans"]
            counts["episodes"] += 1
            counts["skipped"] += int(infos[i]["skipped_hands"])
            counts["wrong_return"] += infos[i]["episode"]["r"] != beans[infos[i]["seat"]]
            if bankroll is not None:
                counts["wrong_balances"] += not np.array_equal(infos[i]["balances"], bankroll + beans)
    envs.close()
    return counts


def _aec_episodes(game: str, episodes: int, **options: Any) -> dict[str, int]:
    """The same count on ``SingleSeatEnv`` (the AEC engine) under ``RecordEpisodeStatistics``."""
    from gymnasium.wrappers import RecordEpisodeStatistics

    from mjenv.integrations.gymnasium import SingleSeatEnv

    env = RecordEpisodeStatistics(SingleSeatEnv(game, **GAME_OPTIONS[game], **options))
    bankroll = options.get("bankroll")
    rng = np.random.default_rng(3)
    counts = {"episodes": 0, "wrong_return": 0, "wrong_balances": 0, "skipped": 0}
    for e in range(episodes):
        _, info = env.reset(seed=e)
        counts["skipped"] += info.get("skipped_episodes", 0)
        done = False
        while not done:
            _, _, done, _, info = env.step(int(_random_actions(info["action_mask"][None], rng)[0]))
        counts["episodes"] += 1
        counts["wrong_return"] += info["episode"]["r"] != info["beans"]
        if bankroll is not None:
            counts["wrong_balances"] += info["balance"] != bankroll + info["beans"]
    return counts


CONFIGS = [dict(escape=True, seat="random"), dict(escape=True, bankroll=1, seat="random"),
           dict(escape=True, bankroll=1, seat=2)]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("options", CONFIGS, ids=["escape", "bankroll1", "bankroll1-seat2"])
def test_vector_view_returns_are_the_seats_beans(game, options):
    counts = _vector_episodes(game, 64, 600, **options)
    assert counts["skipped"] > 0  # the merged / left-out hands happened
    assert counts["wrong_return"] == 0 and counts["wrong_balances"] == 0, counts


@pytest.mark.parametrize("game", GAMES)
def test_sb3_view_returns_are_the_seats_beans(game):
    counts = _sb3_episodes(game, 64, 600, escape=True, seat="random", bankroll=1)
    assert counts["skipped"] > 0
    assert counts["wrong_return"] == 0 and counts["wrong_balances"] == 0, counts


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("options", [dict(escape=True, seat="random"), dict(escape=True, bankroll=1)],
                         ids=["escape", "bankroll1"])
def test_aec_view_returns_are_the_seats_beans(game, options):
    counts = _aec_episodes(game, 60, **options)
    assert counts["wrong_return"] == 0 and counts["wrong_balances"] == 0, counts


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("options", CONFIGS + [dict(seat="random")],
                         ids=["escape", "bankroll1", "bankroll1-seat2", "plain"])
def test_tens_of_thousands_of_episodes(game, options):
    counts = _vector_episodes(game, 512, 20_000, **options)
    sb3 = _sb3_episodes(game, 512, 20_000, **options)
    print(game, options, "gymnasium", counts, "sb3", sb3)
    assert counts["wrong_return"] == counts["wrong_balances"] == 0, counts
    assert sb3["wrong_return"] == sb3["wrong_balances"] == 0, sb3
