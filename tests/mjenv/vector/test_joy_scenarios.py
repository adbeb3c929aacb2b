"""The Joy scripted scenarios (tests/mjenv/test_joy_mahjong_scenarios.py) replayed through mjenv.vector.

Each scenario test is run once with the reference engine recording the hands it plays (rules,
wall, dealer, prevailing wind and every action applied); each recorded hand is then replayed
through ``vector.make("joy_mahjong", 1)`` and ``joy_mahjong_v0.raw_env``, both reset with the
scripted wall, comparing the seat to act, the mask, the observation, ``state()`` and the rewards
at every step, and the finished hand (win, fan, X, bird) at the end.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import tests.mjenv.test_joy_mahjong_scenarios as scen
from mjenv import joy_mahjong_v0, vector
from mjenv.config import as_dict
from mjenv.engine.joy_mahjong import JoyMahjongGame
from tests.mjenv.vector.test_joy_parity import _check_hand_end, _Recorder


class _Recording(JoyMahjongGame):
    """The reference game, keeping the actions it played."""

    made: list["_Recording"] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.played: list[int] = []
        _Recording.made.append(self)

    def apply(self, action: int) -> list[int]:
        delta = super().apply(action)  # an illegal action raises and is not recorded
        self.played.append(int(action))
        return delta


def _scenarios() -> Iterator[tuple[str, Callable, dict[str, Any]]]:
    """Every scenario test with each of its parameter sets."""
    for name, fn in inspect.getmembers(scen, inspect.isfunction):
        if not name.startswith("test_"):
            continue
        marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            yield name, fn, {}
            continue
        (mark,) = marks
        names = [a.strip() for a in mark.args[0].split(",")]
        for i, values in enumerate(mark.args[1]):
            values = values if len(names) > 1 else (values,)
            yield f"{name}[{i}]", fn, dict(zip(names, values))


SCENARIOS = list(_scenarios())


def _same_decision(ref: Any, venv: Any, obs: dict, info: dict, at: str) -> None:
    """The seat to act, its mask and observation, and state() of table 0 against the reference."""
    agent = ref.agent_selection
    assert info["seat"][0] == ref.possible_agents.index(agent), at
    want = ref.observe(agent)
    assert np.array_equal(obs["action_mask"][0], want["action_mask"]), at
    assert np.array_equal(obs["observation"][0], want["observation"]), at
    assert np.array_equal(venv.state()[0], ref.state()), at


def _replay(g: _Recording, where: str) -> None:
    """Replay the recorded hand (the deal alone when it played nothing) through both envs."""
    options = as_dict(g.rules)
    script = {"wall": g.events[0]["wall"], "dealer": g.dealer, "prevailing_wind": g.prevailing_wind}
    ref = joy_mahjong_v0.raw_env(**options)
    ref.reset(seed=0, options=script)
    venv = vector.make("joy_mahjong", 1, **options)
    rec = _Recorder(venv.backend)
    obs, info = venv.reset(seed=0, options=script)
    for step, action in enumerate(g.played):
        at = f"{where} step {step}"
        _same_decision(ref, venv, obs, info, at)
        game = ref.game
        ref.step(action)
        obs, rewards, terminated, _, info = venv.step(np.array([action]))
        assert rewards[0].tolist() == [ref.rewards[a] for a in ref.possible_agents], at
        assert bool(terminated[0]) == game.over, at
        if game.over:
            _check_hand_end(game, rec.tables[0], at)
    if not ref.game.over:
        _same_decision(ref, venv, obs, info, f"{where} after the script")
    venv.close()


@pytest.mark.parametrize("name, fn, kwargs", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_scenario_replays_through_the_vector_engine(monkeypatch, name, fn, kwargs):
    _Recording.made = []
    monkeypatch.setattr(scen, "JoyMahjongGame", _Recording)
    fn(**kwargs)
    assert _Recording.made or name.startswith("test_scripted_wall"), "the scenario made no game"
    for i, g in enumerate(_Recording.made):
        _replay(g, f"{name} game {i}")
