"""Readable observations, the plane reference, finite space bounds and the checkers' warnings."""

from __future__ import annotations

from tests.support import ROOT

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from mjenv import blood_battle_v0, joy_mahjong_v0, tiles
from mjenv.describe import describe_observation
from mjenv.games import GAME_NAMES
from mjenv.observation_docs import observation_docs

DOCS = ROOT / "docs" / "observations.md"
MODULES = [blood_battle_v0, joy_mahjong_v0]


def play(env, seed: int, until: int | None = None):
    """Random legal play; yields (agent, observation dict) at every decision (all hands of the episode)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for n, agent in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        yield agent, obs
        if until is not None and n >= until:
            return
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_docs_observations_is_generated_from_the_encoders() -> None:
    assert DOCS.read_text(encoding="utf-8") == observation_docs(), (
        "docs/observations.md differs from the encoders: run python -m mjenv.observation_docs > docs/observations.md")


@pytest.mark.parametrize("module", MODULES)
def test_every_plane_is_documented_once_in_order(module) -> None:
    obs = module.raw_env().observer
    table = observation_docs().split(f"`{module.__name__.split('.')[-1]}`")[1]
    rows = re.findall(r"^\| (\d+)(?:–(\d+))? \| `(\w+)` \|", table, re.M)[: len(obs.views)]
    covered = [i for lo, hi, _ in rows for i in range(int(lo), int(hi or lo) + 1)]
    assert covered == list(range(obs.planes))
    assert [name for _, _, name in rows] == list(obs.views)


@pytest.mark.parametrize("module,options", [(blood_battle_v0, {"preset": "happy"}),
                                            (blood_battle_v0, {"preset": "qq", "room_coefficient": 200, "rake": 400}),
                                            (joy_mahjong_v0, {"room": "eight_fan", "match_hands": 3}),
                                            (joy_mahjong_v0, {"room": "no_fan", "rake": 20})])
def test_observations_and_states_stay_inside_the_finite_bounds(module, options) -> None:
    env = module.env(**options)
    space = env.observation_space("player_0")
    box = space["observation"]
    assert np.isfinite(box.low).all() and np.isfinite(box.high).all() and (box.low < box.high).all()
    state_space = env.unwrapped.state_space
    assert np.isfinite(state_space.low).all() and np.isfinite(state_space.high).all()
    for seed in range(4):
        for agent, obs in play(env, seed):
            assert space.contains(obs), agent
            assert state_space.contains(env.state())
            for other in env.possible_agents:  # seats not to act are observed too
                assert box.contains(env.observe(other)["observation"])


def test_bean_bound_covers_the_worst_hands_the_rules_allow() -> None:
    """The bound is above what a seat can lose: three capped wins, 查大叫, 花猪, twelve kongs."""
    r = blood_battle_v0.raw_env(preset="qq", room_coefficient=200, rake=400).rules
    bound = blood_battle_v0.hand_bean_bound(r)
    capped = r.base_points * 2 ** (r.cap_fan - 1) + r.base_points  # add_base adds one base
    assert bound >= (6 * capped + 3 * r.flower_pig_points) * 200 + 400
    joy = joy_mahjong_v0.raw_env(room="eight_fan").rules
    assert joy_mahjong_v0.hand_bean_bound(joy) == 3 * (joy_mahjong_v0.MAX_FAN + 8) * 4


@pytest.mark.parametrize("module", MODULES)
def test_describe_shows_the_seats_hand_and_rivers_and_nothing_hidden(module) -> None:
    env = module.env()
    seen = 0
    for agent, obs in play(env, seed=11, until=90):
        g = env.unwrapped.game
        seat = env.unwrapped.possible_agents.index(agent)
        text = describe_observation(obs["observation"], env.unwrapped.observer)
        hand = list(g.hands[seat])
        drawn = g.drawn if g.current_player == seat and g.phase == "turn" else None
        if drawn is not None:
            hand[drawn] -= 1
            assert f"(just drew {tiles.fmt([drawn])}" in text
        assert f"\nhand {tiles.fmt(tiles.from_counts(hand)) if any(hand) else '-'}" in text
        assert text.startswith(f"player_{seat}'s view")
        for r in range(4):
            s = (seat + r) % 4
            river = tiles.from_counts(np.bincount(g.rivers[s], minlength=tiles.N_KINDS)) if g.rivers[s] else []
            lines = text.splitlines()
            at = next(i for i, line in enumerate(lines) if f" · player_{s}" in line)
            block = "\n".join(lines[at: at + 3])  # the seat's line, its melds, its river
            assert f"river {tiles.fmt(river) if river else '-'}" in block
            for m in g.melds[s]:
                shown = {"pong": "碰", "chow": "吃", "ankan": "暗杠"}.get(m.kind, "杠")
                if m.kind == "ankan" and s != seat:
                    assert "暗杠 ×" in block and "(hidden)" in block
                else:
                    assert f"{shown} {tiles.fmt(m.kinds())}" in block, (m, block)
            voids = getattr(g, "void", None)
            # revealed once all four chose (docs/rules-blood-battle.md#S2)
            if voids is not None and g.phase != "void":
                assert f"void {tiles.SUITS[voids[s]]}" in block
        assert text.count("\nhand ") == 1  # only the seat's own concealed tiles are listed
        seen += 1
    assert seen > 30


def test_describe_rejects_an_observation_of_another_game() -> None:
    obs = blood_battle_v0.raw_env().observer
    joy_obs = np.zeros((joy_mahjong_v0.raw_env().observer.planes, 34), np.float32)
    with pytest.raises(ValueError, match="pass the observer of the env it came from"):
        describe_observation(joy_obs, obs)
    with pytest.raises(ValueError, match="style must be"):
        describe_observation(np.zeros((obs.planes, obs.width), np.float32), obs, style="fancy")


@pytest.mark.parametrize("module", MODULES)
def test_seat_render_mode_is_the_view_of_the_seat_to_act(module) -> None:
    env = module.env(render_mode="seat")
    for n, (agent, obs) in enumerate(play(env, seed=2, until=25)):
        text = env.render()
        assert text == describe_observation(obs["observation"], env.unwrapped.observer, "zh")
        assert text.startswith(f"{agent}'s view")


@pytest.mark.parametrize("module", MODULES)
def test_pettingzoo_checkers_raise_no_warnings_of_ours(module) -> None:
    from pettingzoo.test import api_test, render_test

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(module.env(), num_cycles=30)
        render_test(lambda render_mode=None: module.env(render_mode=render_mode))
    # PettingZoo says the first two of every Dict-observation env that is not one of its own (a
    # hard-coded list of names), the third of any 2-D observation with a negative value (a seat's
    # lost beans); nothing about bounds, render modes or fps.
    expected = {"Observation is not a NumPy array",
                "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
                "The observation contains negative numbers and is in the shape of a graphical observation. "
                "This might be a bad thing."}
    assert {str(w.message) for w in caught} <= expected
    assert module.raw_env.metadata["render_fps"] > 0


@pytest.mark.parametrize("game", GAME_NAMES)
def test_gymnasium_checker_raises_no_warnings(game: str) -> None:
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for mode in (None, "ansi"):  # made by id, so the checker also tries the other render modes
            env = gymnasium.make("mjenv/SingleSeat-v0", game=game, illegal_action="first_legal", render_mode=mode)
            check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
