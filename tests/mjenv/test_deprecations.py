"""Moved import paths keep working for one minor version, with a DeprecationWarning that names the
new place, and give the new objects themselves (issue 49)."""

from __future__ import annotations

import importlib
import sys
import types
import warnings

import pytest

from mjenv import games
from mjenv.integrations import gymnasium as gym_views


def test_the_single_seat_env_imports_from_mjenv_wrappers_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"mjenv\.wrappers\.SingleSeatEnv .*mjenv\.integrations\.gymnasium"):
        from mjenv.wrappers import SingleSeatEnv
    assert SingleSeatEnv is gym_views.SingleSeatEnv


def test_the_old_helpers_of_mjenv_wrappers_warn_and_still_work() -> None:
    import mjenv.wrappers as old

    with pytest.warns(DeprecationWarning, match=r"mjenv\.games\.GAMES"):
        assert old.GAMES == {"blood_battle": "mjenv.blood_battle_v0", "joy_mahjong": "mjenv.joy_mahjong_v0"}
    with pytest.warns(DeprecationWarning, match=r"mjenv\.games\.game\(name\)\.raw_env"):
        env = old.make_raw_env("joy_mahjong", room="no_fan")
    assert type(env) is type(games.game("joy_mahjong").raw_env()) and env.rules.room == "no_fan"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        old.Nothing  # noqa: B018


def test_the_single_seat_vector_env_imports_from_mjenv_vector_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"mjenv\.vector\.SingleSeatVectorEnv .*mjenv\.integrations\.gymnasium"):
        from mjenv.vector import SingleSeatVectorEnv
    assert SingleSeatVectorEnv is gym_views.SingleSeatVectorEnv


def test_mjenv_rllib_env_forwards_to_the_rllib_integration_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in for mjenv.integrations.rllib (ray is an optional extra; the real module is checked
    # in test_integrations_rllib.py): the shim must hand out that module's objects, warning.
    stand_in = types.ModuleType("mjenv.integrations.rllib")
    stand_in.MahjongMultiAgentEnv = type("MahjongMultiAgentEnv", (), {})
    monkeypatch.setitem(sys.modules, "mjenv.integrations.rllib", stand_in)
    old = importlib.import_module("mjenv.rllib_env")
    with pytest.warns(DeprecationWarning, match=r"mjenv\.rllib_env\.MahjongMultiAgentEnv .*mjenv\.integrations\.rllib"):
        from mjenv.rllib_env import MahjongMultiAgentEnv
    assert MahjongMultiAgentEnv is stand_in.MahjongMultiAgentEnv
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a name the new module lacks is an AttributeError, not a warning
        with pytest.raises(AttributeError):
            old.Nothing  # noqa: B018


def test_the_sichuan_rules_module_is_the_blood_battle_one_with_a_warning() -> None:
    from mjenv.rules import blood_battle
    from mjenv.vector.rules import blood_battle as compiled

    for name, new in (("mjenv.rules.sichuan", blood_battle), ("mjenv.vector.rules.sichuan", compiled)):
        sys.modules.pop(name, None)
        with pytest.warns(DeprecationWarning, match=rf"{name.replace('.', '[.]')} .*{new.__name__.replace('.', '[.]')}"):
            old = importlib.import_module(name)
        assert old is new and old.score_win is new.score_win
