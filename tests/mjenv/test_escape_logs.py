"""Replay logs, narration and the viewer with the escape and bankroll options (B4, S16,
J11): logs verify by re-simulation, edits are caught, the text and the page show the escape and the
balances, and logs with the options off keep their format.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (B, S) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tests.mjenv.test_blood_battle_scenarios as bb
from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.config import OPTION_GROUPS
from mjenv.replay import ReplayMismatch, read_log, verify_log
from mjenv.viewer import render_html, view_data
from tests.support import cli_replay, edit_line, expect_log_error, play_episode, read_records, round_trip
from tests.mjenv.test_viewer import drive, follow

BB_CONFIGS = [
    dict(preset="happy", escape=True),
    dict(preset="happy", escape=True, bankroll=[30, 100, 300, 2000], match_hands=3, rake=5),
    dict(preset="qq", escape=True, bankroll=200),
    dict(preset="qq", mode="classic", escape=True, bankroll=500, match_hands=3, rake=2),
]
JOY_CONFIGS = [dict(room=room, escape=True, bankroll=60, match_hands=2, rake=1)
               for room in ("popular", "eight_fan", "no_fan")]


def test_round_trip_with_escapes_and_balances(tmp_path):
    """Random play (escaping often: ESCAPE is one legal action among few) logs and verifies."""
    (tmp_path / "bb").mkdir()
    (tmp_path / "joy").mkdir()
    kinds, reasons, games = round_trip(tmp_path / "bb", blood_battle_v0.raw_env, "blood_battle", BB_CONFIGS, 30,
                                       eager=lambda i: i % 2 == 1)
    assert {"escape", "dingque_reveal", "end_hand"} <= set(kinds) and reasons["escape"] > 0
    kinds, reasons, games = round_trip(tmp_path / "joy", joy_mahjong_v0.raw_env, "joy_mahjong", JOY_CONFIGS, 20,
                                       eager=lambda i: i % 2 == 1)
    assert "escape" in kinds and reasons["escape"] > 0


@pytest.fixture()
def match_log(tmp_path) -> tuple[Path, list[str]]:
    """A three-hand happy match with small balances, logged (seed 3: escapes and short payments)."""
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "m.jsonl"
    play_episode(blood_battle_v0.raw_env(log_path=path, **BB_CONFIGS[1]), seed=3)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    records = [json.loads(t) for t in lines]
    assert sum(r["type"] == "header" for r in records) == 3
    assert any(r["type"] == "escape" for r in records) and any("owed" in r for r in records)
    return path, lines


def test_balances_are_logged_and_chained(match_log):
    path, _ = match_log
    hands = read_log(path)
    starts = [h.lines[0].record["balances"] for h in hands]
    ends = [h.lines[-1].record["balances"] for h in hands]
    assert starts[0] == [30, 100, 300, 2000]
    assert starts[1:] == ends[:-1]  # a match carries the balances from hand to hand
    result = verify_log(path)
    assert [h.balances for h in result.hands] == ends


@pytest.mark.parametrize("nth,message", [
    (0, "are not the header's bankroll"),
    (1, "are not the balances hand 0 ended with"),
])
def test_edited_start_balances_are_caught(tmp_path, match_log, nth, message):
    _, lines = match_log

    def change(rec):
        rec["balances"][0] += 1
    # Checked before the hand is re-simulated: the start must be the bankroll (hand 0) or where
    # the hand before it in the log ended.
    edited, line = edit_line(lines, "start_hand", change, nth=nth)
    expect_log_error(tmp_path, edited, line, ReplayMismatch, match=message, check=verify_log)


@pytest.mark.parametrize("kind,change", [
    ("escape", lambda r: r.update(penalty=r["penalty"] + 1)),
    ("escape", lambda r: r.update(actor=(r["actor"] + 1) % 4)),
    ("end_hand", lambda r: r["balances"].__setitem__(0, r["balances"][0] + 1)),
])
def test_edited_escape_and_balances_are_mismatches(tmp_path, match_log, kind, change):
    _, lines = match_log
    edited, line = edit_line(lines, kind, change)
    expect_log_error(tmp_path, edited, line, ReplayMismatch, check=verify_log)


def test_cli_replay_narrates_escapes_and_balances(tmp_path, match_log, capsys):
    _, lines = match_log
    code, out, err = cli_replay(tmp_path, capsys, lines, "--render")
    assert code == 0 and err == ""
    assert "逃跑 escapes: it leaves the hand, 扣豆" in out
    assert "owed" in out and "; balances [" in out and "holds" in out
    assert "OK, 3 hand(s) verified" in out


def test_default_logs_keep_their_format(tmp_path):
    """Options off: no option group in the header, no balances, owed or escape lines."""
    path = tmp_path / "d.jsonl"
    play_episode(blood_battle_v0.raw_env(log_path=path, preset="qq"), seed=1)
    records = read_records(path)
    optional = {name for group in OPTION_GROUPS.values() for name in group}
    assert not optional & set(records[0]["options"])
    assert set(records[1]) == {"type", "dealer", "wall"}
    assert set(records[-1]) == {"type", "reason", "beans"}
    assert not [r for r in records if r["type"] == "escape" or "owed" in r]


# ---------------------------------------------------------------- the viewer


def test_table_view_follows_an_escape_and_the_balances():
    """The escape test hands: seat 0 escapes after the two wins; the table rebuilt from events
    matches the engine (its beans include the 扣豆), marks the escaper and shows the balances."""
    g = bb.new_game("happy", bb.MULTI_HANDS, draws=bb.MULTI_DRAWS + " 1s", escape=True, bankroll=[100, 50, 50, 50])
    view = follow(g, bb.dingque() + bb.MULTI_ROUND + [(1, bb.HU), (2, bb.PASS), (3, bb.HU), (0, 62)])
    snap = view.snapshot()
    assert snap["escaped"] == [True, False, False, False]
    assert snap["balances"] == g.balances == [0, 58, 53, 76]


def test_table_view_of_a_void_phase_escape():
    hands = ["123456789m1123p", "258m369m147p258p9p", "478m369m47p369p58p", "1257m2357p24689p"]
    g = bb.new_game("happy", hands, draws="9s 1s", escape=True)
    view = follow(g, [(0, 62), (1, bb.VOID("s")), (2, bb.VOID("s")), (3, bb.VOID("s"))])
    assert view.voids == [-1, 2, 2, 2] and view.voids_public


def test_page_shows_the_escape_and_the_balances(tmp_path, match_log):
    path, _ = match_log
    data = view_data(path)
    hand = next(h for h in data["hands"] if any(f["type"] == "escape" for f in h["frames"]))
    assert hand["balances"] is not None
    assert any(p["to"] is None and p["reason"] == "escape_penalty" for p in hand["pays"])
    page = render_html({**data, "hands": [hand]})
    got = drive(page, len(hand["frames"]) - 1, tmp_path)
    assert got["errors"] == []
    at = next(i for i, f in enumerate(hand["frames"]) if f["type"] == "escape")
    assert "逃跑 escapes" in got["frames"][at]["now"]
    assert "no one" in got["end"]["wins"] and "balances P0" in got["end"]["wins"]


@pytest.mark.parametrize("game,reason,wins,escapes,text", [
    ("blood_battle", "escape", 0, 1, "an escape (逃跑) ends the hand (S16)"),
    ("joy_mahjong", "escape", 0, 1, "an escape (逃跑) ends the hand (J11)"),
    # happy: the hand ends once fewer than two seats are in play, wins and escapes together.
    ("blood_battle", "win", 2, 1, "2 wins and 1 escape leave one seat in play (S16.1)"),
    ("blood_battle", "win", 1, 2, "1 win and 2 escapes leave one seat in play (S16.1)"),
    ("blood_battle", "win", 3, 0, "3 wins: three seats have won (S14)"),
])
def test_ending_text(game, reason, wins, escapes, text):
    from mjenv.narration import ending_text
    assert ending_text(game, reason, wins, escapes) == text
