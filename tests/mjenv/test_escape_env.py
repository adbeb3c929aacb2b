"""The escape and bankroll options through the AEC envs (B4, S16, J11 of docs/rules-blood-battle.md and docs/rules-joy-mahjong.md): spaces, the
optional planes of observations and state(), infos, and bad options."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.describe import describe_observation
from tests.support import check_hidden_tiles_do_not_leak, finish_hand


@pytest.mark.parametrize("module,options,n,obs,state", [
    # Off (the default): the layouts, observations and states of record.
    (blood_battle_v0, {}, 62, (73, 27), (134, 27)),
    (joy_mahjong_v0, {}, 76, (82, 34), (176, 34)),
    # ESCAPE is the last action; the blood battle adds the `escaped` planes (4 per seat).
    (blood_battle_v0, {"escape": True}, 63, (77, 27), (138, 27)),
    (joy_mahjong_v0, {"escape": True}, 77, (82, 34), (176, 34)),
    # bankroll adds the `balance` planes (4 per seat).
    (blood_battle_v0, {"bankroll": 500}, 62, (77, 27), (138, 27)),
    (blood_battle_v0, {"escape": True, "bankroll": 500}, 63, (81, 27), (142, 27)),
    (joy_mahjong_v0, {"escape": True, "bankroll": [5, 6, 7, 8]}, 77, (86, 34), (180, 34)),
])
def test_spaces(module, options, n, obs, state):
    e = module.raw_env(**options)
    assert e.action_space("player_0").n == n
    assert e.observation_space("player_0")["observation"].shape == obs
    assert e.state_space.shape == state
    e.reset(seed=1)
    assert e.observe(e.agent_selection)["observation"].shape == obs
    assert e.state().shape == state
    assert e.observation_space("player_0").contains(e.observe(e.agent_selection))


def test_escaped_and_balance_planes_decode_to_the_game():
    """The dealer escapes at once (happy): every seat sees it in `escaped`, per relative seat;
    `balance` holds each seat's beans over bean_scale; state() holds both per absolute seat."""
    e = blood_battle_v0.raw_env(escape=True, bankroll=[1000, 2000, 3000, 4000], room_coefficient=2)
    e.reset(seed=4)
    dealer = e.game.dealer
    e.step(e.layout.ESCAPE)
    g, v, scale = e.game, e.observer.views, e.observer.bean_scale
    assert g.escaped[dealer] and not g.over
    seat = g.current_player
    obs = e.observe(e.agent_selection)["observation"]
    for r in range(4):
        s = (seat + r) % 4
        assert obs[v["escaped"]][r, 0] == (s == dealer)
        assert obs[v["balance"]][r] == pytest.approx([g.balances[s] / scale] * 27)
    state, sv = e.state(), e.observer.state_views
    assert [state[sv["escaped"]][s, 0] for s in range(4)] == [float(s == dealer) for s in range(4)]
    assert state[sv["balance"]][:, 0] == pytest.approx([b / scale for b in g.balances])
    assert g.balances[dealer] < 1000 + 1000 * dealer  # it paid for its escape
    text = describe_observation(obs, e.observer)
    assert "escaped (逃跑)" in text and f"holds {g.balances[seat]}" in text


def test_hidden_tiles_do_not_leak_with_balances():
    check_hidden_tiles_do_not_leak(blood_battle_v0.raw_env(bankroll=300))
    check_hidden_tiles_do_not_leak(joy_mahjong_v0.raw_env(bankroll=300))


def test_infos_with_a_bankroll():
    e = joy_mahjong_v0.raw_env(escape=True, bankroll=100, escape_x=2)
    e.reset(seed=0)
    e.step(e.layout.ESCAPE)  # the dealer escapes: 2 to each other seat, the hand ends
    assert all(e.terminations.values())
    balances = [e.infos[a]["balance"] for a in e.possible_agents]
    assert sorted(balances) == [94, 102, 102, 102]
    assert {e.infos[a]["match_end"] for a in e.possible_agents} == {"hands"}
    default = joy_mahjong_v0.raw_env()
    default.reset(seed=0)
    finish_hand(default, np.random.default_rng(0))
    assert set(default.infos["player_0"]) == {"beans", "end_reason"}  # as before the options


@pytest.mark.parametrize("module,options,error,match", [
    (blood_battle_v0, {"escape_factor": 2}, ValueError, "escape_factor.*escape=True"),
    (blood_battle_v0, {"escape_min_penalty": 5}, ValueError, "escape_min_penalty.*escape=True"),
    (blood_battle_v0, {"escape": True, "escape_rule": "qq", "escape_min_compensation": 5}, ValueError,
     "escape_min_compensation.*happy"),
    (blood_battle_v0, {"escape": True, "escape_rule": "both"}, ValueError, "escape_rule"),
    (blood_battle_v0, {"escape": 1}, TypeError, "escape"),
    (blood_battle_v0, {"escape": True, "escape_factor": -1}, ValueError, "escape_factor"),
    (blood_battle_v0, {"escape": True, "escape_min_penalty": -1}, ValueError, "escape_min_penalty"),
    (blood_battle_v0, {"bankroll": [100, 100]}, ValueError, "bankroll"),
    (blood_battle_v0, {"bankroll": 100.0}, TypeError, "bankroll"),
    (blood_battle_v0, {"bankroll": [100, -1, 100, 100]}, ValueError, "bankroll"),
    (blood_battle_v0, {"min_beans": 10}, ValueError, "min_beans' needs bankroll"),
    (blood_battle_v0, {"bankroll": 10, "min_beans": 20}, ValueError, "below min_beans"),
    (blood_battle_v0, {"bankroll": 10, "min_beans": -1}, ValueError, "min_beans"),
    (joy_mahjong_v0, {"escape_x": 5}, ValueError, "escape_x.*escape=True"),
    (joy_mahjong_v0, {"escape": True, "escape_x": 0}, ValueError, "escape_x"),
    (joy_mahjong_v0, {"escape_factor": 2}, ValueError, "unknown rule field"),
])
def test_bad_options_fail_at_construction_naming_the_field(module, options, error, match):
    with pytest.raises(error, match=match):
        module.raw_env(**options)


def test_escape_fields_in_a_rules_file(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("game: blood_battle\npreset: happy\nrules:\n  escape: true\n  escape_factor: 2\n"
                    "  bankroll: [100, 200, 300, 400]\n  min_beans: 50\n", encoding="utf-8")
    r = blood_battle_v0.raw_env(rules_file=str(path)).rules
    assert (r.escape, r.escape_factor, r.bankroll, r.min_beans) == (True, 2, (100, 200, 300, 400), 50)


def test_defaults_of_record():
    r = blood_battle_v0.raw_env(escape=True, room_coefficient=200).rules
    assert (r.escape_rule, r.escape_factor, r.escape_penalty_floor, r.escape_compensation_floor) == (
        "happy", 1, 200 * 192, 200 * 6)
    assert blood_battle_v0.raw_env(preset="qq", escape=True).rules.escape_rule == "qq"
