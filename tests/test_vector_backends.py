"""The same VectorEnv, two backends (issue 49): ``mjenv.vector.make(game, n, backend="reference")``
(the readable engine, one Python game per table) and ``backend="compiled"`` play identical hands:
at every step the seats, masks, observations, rewards, terminations, the shared infos and
``state()``. Rule IDs: docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mjenv import vector
from mjenv.vector.reference import ReferenceBackend

CASES = [
    ("blood_battle", {"preset": "happy"}), ("blood_battle", {"preset": "qq"}),
    ("blood_battle", {"preset": "happy", "mode": "classic", "match_hands": 3}),
    ("blood_battle", {"preset": "qq", "escape": True, "bankroll": 3000, "min_beans": 500, "match_hands": 4}),
    ("joy_mahjong", {"room": "popular"}), ("joy_mahjong", {"room": "eight_fan"}),
    ("joy_mahjong", {"room": "no_fan", "match_hands": 5}),
    ("joy_mahjong", {"room": "popular", "escape": True, "bankroll": 400, "min_beans": 100, "match_hands": 4,
                     "observation_dtype": "uint8"}),
]
IDS = [f"{g}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for g, o in CASES]
SHARED_INFO = ("seat", "beans", "end_reason", "_final", "won", "escaped", "balances", "match_end", "illegal_action")


def _play_both(game: str, options: dict[str, Any], num_envs: int, episodes: int, seed: int) -> int:
    """Step both backends with the same random legal actions (a few escapes where allowed) until
    ``episodes`` episodes have ended over all tables, comparing everything at every step; the episodes."""
    ref = vector.make(game, num_envs, backend="reference", **options)
    com = vector.make(game, num_envs, **options)
    assert isinstance(ref.backend, ReferenceBackend) and not isinstance(com.backend, ReferenceBackend)
    (obs_r, info_r), (obs_c, info_c) = ref.reset(seed=seed), com.reset(seed=seed)
    rng = np.random.default_rng(seed)
    escape = ref.backend.layout.ESCAPE
    done = 0
    while done < episodes:
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs_r[key], obs_c[key]), key
        assert np.array_equal(info_r["seat"], info_c["seat"])
        assert np.array_equal(ref.state(), com.state())
        actions = vector.random_actions(obs_r["action_mask"], rng)
        if escape >= 0:  # rarely escape: uniform picks would end most hands at once
            rare = rng.random(num_envs) < 0.01
            actions[rare & (obs_r["action_mask"][:, escape] > 0)] = escape
            plain = ~rare & (actions == escape)
            masks = obs_r["action_mask"].copy()
            masks[:, escape] = 0
            actions[plain] = vector.random_actions(masks[plain], rng)
        obs_r, rew_r, term_r, trunc_r, info_r = ref.step(actions)
        obs_c, rew_c, term_c, trunc_c, info_c = com.step(actions)
        for a, b in ((rew_r, rew_c), (term_r, term_c), (trunc_r, trunc_c)):
            assert np.array_equal(a, b)
        assert set(info_r) == set(info_c) & set(info_r)  # the compiled infos add the per-game win details
        for key in SHARED_INFO:
            assert (key in info_r) == (key in info_c), key
            if key in info_r:
                assert np.array_equal(info_r[key], info_c[key]), key
        done += int(term_r.sum())
    return done


@pytest.mark.parametrize("game, options", CASES, ids=IDS)
def test_the_same_vector_env_plays_the_same_hands_on_both_backends(game: str, options: dict[str, Any]) -> None:
    assert _play_both(game, options, num_envs=4, episodes=6, seed=11) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("game, options", CASES, ids=IDS)
def test_a_few_hundred_hands_per_preset_agree(game: str, options: dict[str, Any]) -> None:
    assert _play_both(game, options, num_envs=16, episodes=300, seed=2_026) >= 300


def test_the_backend_is_checked_by_name() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of \('compiled', 'reference'\), got 'gpu'"):
        vector.make("blood_battle", 2, backend="gpu")
    with pytest.raises(ValueError, match=r"belong to the AEC env only"):
        vector.make("joy_mahjong", 2, backend="reference", log_path="x.jsonl")
