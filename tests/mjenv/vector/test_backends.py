"""The same VectorEnv, two backends (issue 49): ``mjenv.vector.make(game, n, backend="reference")``
(the readable engine, one Python game per table) and ``backend="compiled"`` play identical hands:
at every step the seats, masks, observations, rewards, terminations, every info and ``state()``;
every finished hand's ``hand_result`` field by field (the game's win details included) and the
walls and dealers each hand was dealt. Rule IDs: docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agents.registry import load_policy
from mjenv import vector
from mjenv.vector.reference import ReferenceBackend

CASES = [
    ("blood_battle", {"preset": "happy"}), ("blood_battle", {"preset": "qq"}),
    ("blood_battle", {"preset": "happy", "mode": "classic", "match_hands": 3}),
    ("blood_battle", {"preset": "qq", "escape": True, "bankroll": 3000, "min_beans": 500, "match_hands": 4}),
    ("blood_battle", {"preset": "happy", "escape": True, "match_hands": 2}),
    ("blood_battle", {"preset": "qq", "items": 2, "escape": True}),
    ("joy_mahjong", {"room": "popular"}), ("joy_mahjong", {"room": "eight_fan"}),
    ("joy_mahjong", {"room": "no_fan", "match_hands": 5}),
    ("joy_mahjong", {"room": "popular", "escape": True, "bankroll": 400, "min_beans": 100, "match_hands": 4,
                     "observation_dtype": "uint8"}),
]
IDS = [f"{g}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for g, o in CASES]
WIN_FIELDS = {"blood_battle": {"win_from", "fan", "win_order"},
              "joy_mahjong": {"winner", "win_tile", "win_from", "fan", "X", "bird", "bird_seat"}}
"""The game's win details every backend's ``hand_result`` gives (and ``penalty`` with blood-battle
escape, ``item_uses`` with items)."""


class _Recorded:
    """A backend whose ``hand_result`` and ``dealt`` answers are kept (every hand, not only the
    last one of an episode that the infos show)."""

    def __init__(self, backend: Any) -> None:
        self.results: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
        self.deals: list[tuple[np.ndarray, ...]] = []
        hand_result, start_hands = backend.hand_result, backend.start_hands

        def recorded_result(tables: np.ndarray) -> dict[str, np.ndarray]:
            out = hand_result(tables)
            self.results.append((tables.copy(), {k: v.copy() for k, v in out.items()}))
            return out

        def recorded_start(tables: np.ndarray, *args: Any, **kwargs: Any) -> None:
            start_hands(tables, *args, **kwargs)
            self.deals.append((np.asarray(tables).copy(), *backend.dealt(np.asarray(tables))))

        backend.hand_result, backend.start_hands = recorded_result, recorded_start


def _same_hand_results(game: str, options: dict[str, Any], ref: _Recorded, com: _Recorded) -> int:
    """Every hand_result and deal of the two backends agree, field by field; the hands compared."""
    assert len(ref.results) == len(com.results) and len(ref.deals) == len(com.deals)
    fields = {"end_reason", "won"} | WIN_FIELDS[game]
    fields |= {"escaped"} if options.get("escape") else set()
    fields |= {"penalty"} if options.get("escape") and game == "blood_battle" else set()
    fields |= {"balances"} if options.get("bankroll") else set()
    fields |= {"item_uses"} if options.get("items") else set()
    for (tables_r, r), (tables_c, c) in zip(ref.results, com.results):
        assert np.array_equal(tables_r, tables_c)
        assert set(r) == set(c) == fields
        for key in fields:
            assert r[key].dtype == c[key].dtype and r[key].shape == c[key].shape, key
            assert np.array_equal(r[key], c[key]), key
    for a, b in zip(ref.deals, com.deals):
        for x, y in zip(a, b):
            assert np.array_equal(x, y)
    if "item_uses" in fields:  # the random picks used items: the counts compared are not all 0
        assert sum(int(r["item_uses"].sum()) for _, r in ref.results) > 0
    return sum(len(t) for t, _ in ref.results)


def _play_both(game: str, options: dict[str, Any], num_envs: int, episodes: int, seed: int) -> int:
    """Step both backends with the same random legal actions (a few escapes where allowed) until
    ``episodes`` episodes have ended over all tables, comparing everything at every step and
    every hand's result; the hands played."""
    ref = vector.make(game, num_envs, backend="reference", **options)
    com = vector.make(game, num_envs, **options)
    assert isinstance(ref.backend, ReferenceBackend) and not isinstance(com.backend, ReferenceBackend)
    rec_r, rec_c = _Recorded(ref.backend), _Recorded(com.backend)
    (obs_r, info_r), (obs_c, info_c) = ref.reset(seed=seed), com.reset(seed=seed)
    rng = np.random.default_rng(seed)
    layout = ref.backend.layout
    escape, wins = layout.ESCAPE, [layout.HU, layout.ROB_KONG]
    # The heuristic reads float32 planes; with uint8 ones the random picks take every win offered.
    heuristic = load_policy("heuristic", game) if ref.observation_dtype == "float32" else None
    done = 0
    while done < episodes:
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs_r[key], obs_c[key]), key
        assert np.array_equal(info_r["seat"], info_c["seat"])
        assert np.array_equal(ref.state(), com.state())
        actions = vector.random_actions(obs_r["action_mask"], rng)
        if heuristic is not None:  # mostly the heuristic's choices: hands that are won, often several times
            guided = rng.random(num_envs) < 0.9
            if layout.ITEM >= 0:  # an item's give/name step, after a random pick: the heuristic has no part in it
                guided &= obs_r["action_mask"][:, :layout.ITEM].any(axis=1)
            if guided.any():
                actions[guided] = heuristic.act_batch(obs_r["observation"][guided], obs_r["action_mask"][guided], rng)
        if escape >= 0:  # rarely escape: uniform picks would end most hands at once
            rare = rng.random(num_envs) < 0.01
            actions[rare & (obs_r["action_mask"][:, escape] > 0)] = escape
            plain = ~rare & (actions == escape)
            masks = obs_r["action_mask"].copy()
            masks[:, escape] = 0
            actions[plain] = vector.random_actions(masks[plain], rng)
        for win in wins:  # take every win offered: the win details are compared
            take = (obs_r["action_mask"][:, win] > 0) & (actions != escape)
            actions[take] = win
        obs_r, rew_r, term_r, trunc_r, info_r = ref.step(actions)
        obs_c, rew_c, term_c, trunc_c, info_c = com.step(actions)
        for a, b in ((rew_r, rew_c), (term_r, term_c), (trunc_r, trunc_c)):
            assert np.array_equal(a, b)
        assert set(info_r) == set(info_c)
        for key in info_r:
            assert np.array_equal(info_r[key], info_c[key]), key
            assert info_r[key].dtype == info_c[key].dtype, key
        done += int(term_r.sum())
    return _same_hand_results(game, options, rec_r, rec_c)


@pytest.mark.parametrize("game, options", CASES, ids=IDS)
def test_the_same_vector_env_plays_the_same_hands_on_both_backends(game: str, options: dict[str, Any]) -> None:
    assert _play_both(game, options, num_envs=8, episodes=16, seed=11) >= 16


@pytest.mark.slow
@pytest.mark.parametrize("game, options", CASES, ids=IDS)
def test_a_few_hundred_hands_per_preset_agree(game: str, options: dict[str, Any]) -> None:
    assert _play_both(game, options, num_envs=16, episodes=300, seed=2_026) >= 300


def test_the_backend_is_checked_by_name() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of \('compiled', 'reference'\), got 'gpu'"):
        vector.make("blood_battle", 2, backend="gpu")
    with pytest.raises(ValueError, match=r"belong to the AEC env only"):
        vector.make("joy_mahjong", 2, backend="reference", log_path="x.jsonl")


def test_replay_logs_are_asked_for_before_they_are_noted() -> None:
    venv = vector.make("blood_battle", 2, backend="reference")
    venv.reset(seed=1)
    with pytest.raises(ValueError, match=r"log_decision needs replay logs: call keep_logs\(\) first"):
        venv.backend.log_decision(0)
    venv.backend.keep_logs()
    with pytest.raises(ValueError, match=r"probs must have shape \(\d+,\), one per action"):
        venv.backend.log_decision(0, np.zeros(3))


def test_a_compiled_backend_without_its_step_arguments_cannot_be_made() -> None:
    """CompiledBackend is abstract: a game's compiled backend that forgets ``_step_args`` fails when
    it is made, not at its first step; both games' backends define it."""
    from mjenv.vector.backend import CompiledBackend
    from mjenv.vector.blood_battle import BloodBattleBackend
    from mjenv.vector.joy_mahjong import JoyMahjongBackend

    class Partial(CompiledBackend):
        game = "blood_battle"

    with pytest.raises(TypeError, match="abstract"):
        Partial(1, None, None, {})
    assert not BloodBattleBackend.__abstractmethods__ and not JoyMahjongBackend.__abstractmethods__
