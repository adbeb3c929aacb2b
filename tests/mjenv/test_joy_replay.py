"""Joy Mahjong replay logs: the env writes them, ``verify_log`` / ``mjenv replay`` check them."""

import json
from collections import Counter

import pytest

from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.engine.joy_mahjong import seeded_wall
from mjenv.replay import LogFormatError, ReplayMismatch, verify_log
from tests.support import (action_lines, check_no_log_without_log_path, check_scripted_wall_replay, cli_replay,
                     drop_line, edit_line, expect_log_error, header, line_indices, play_episode, read_records,
                     round_trip, write_log)

CONFIGS = [
    dict(room="popular"),
    dict(room="eight_fan", rake=2, room_coefficient=5),
    dict(room="no_fan", discard_payers="all_mcr", match_hands=4),
]


def test_round_trip_over_rooms(tmp_path):
    """Episodes over the three rooms and rule overrides: every log verifies, the logged bean
    tables add up to the rewards the env paid, and every Joy line type shows up."""
    kinds, _, games = round_trip(tmp_path, joy_mahjong_v0.raw_env, "joy_mahjong", CONFIGS, 40,
                                 eager=lambda i: i % 4 != 0)
    assert games == 120
    assert set(kinds) >= {"start_hand", "tsumo", "replacement draw", "action", "hua", "indicator",
                          "indicator_flower", "dahai", "chi", "pon", "daiminkan", "ankan", "kakan",
                          "hora", "bird", "pay", "ryukyoku", "end_hand"}
    assert "dingque" not in kinds


def test_header_names_the_game_and_start_hand_the_wind(tmp_path):
    path = tmp_path / "g.jsonl"
    e = joy_mahjong_v0.raw_env(room="eight_fan", rake=3, match_hands=2, log_path=path)
    _, steps = play_episode(e, seed=42)
    lines = read_records(path)
    headers = [r for r in lines if r["type"] == "header"]
    assert headers[0] == header(e, "joy_mahjong", "standard", seed=42)
    assert headers[0]["options"]["room"] == "eight_fan" and headers[0]["options"]["rake"] == 3
    starts = [r for r in lines if r["type"] == "start_hand"]
    assert [s["prevailing_wind"] for s in starts] == [0, 0]  # a match starts in the East round
    assert len(starts[0]["wall"]) == 144
    actions = action_lines(e, lines, steps)
    # Deal, 补花 of the deal, then the 财神 indicator before the first decision.
    first = lines[:lines.index(actions[0])]
    assert [r["type"] for r in first[:2]] == ["header", "start_hand"]
    assert first[-1]["type"] == "indicator"


def test_scripted_wall_dealer_and_wind_replay(tmp_path):
    check_scripted_wall_replay(tmp_path, joy_mahjong_v0.raw_env, seeded_wall, dealer=2, prevailing_wind=3)


def test_one_log_may_hold_both_games(tmp_path):
    path = tmp_path / "mixed.jsonl"
    play_episode(blood_battle_v0.raw_env(log_path=path), seed=1)
    play_episode(joy_mahjong_v0.raw_env(log_path=path), seed=2)
    play_episode(blood_battle_v0.raw_env(preset="qq", log_path=path), seed=3)
    result = verify_log(path)
    assert [h.game for h in result.hands] == ["blood_battle", "joy_mahjong", "blood_battle"]


def test_no_log_without_log_path(tmp_path, monkeypatch):
    check_no_log_without_log_path(joy_mahjong_v0.raw_env, tmp_path, monkeypatch)


def test_bad_log_path_type_names_the_option():
    with pytest.raises(TypeError, match="log_path"):
        joy_mahjong_v0.env(log_path=3)


# ---------------------------------------------------------------- tampering


@pytest.fixture(scope="module")
def log_lines(tmp_path_factory) -> list[str]:
    """A Joy log of a few single hands (eager play) with flowers, claims, a win and its bird."""
    path = tmp_path_factory.mktemp("joylog") / "g.jsonl"
    e = joy_mahjong_v0.raw_env(log_path=path, rake=1)
    for seed in range(60):
        play_episode(e, seed=seed, eager=True)
        types = Counter(r["type"] for r in read_records(path))
        if types["bird"] and types["chi"] and types["hua"] and types["header"] >= 2:
            break
    assert types["bird"] and types["chi"] and types["hua"] and types["indicator"]
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_untampered_log_verifies(tmp_path, log_lines):
    result = verify_log(write_log(tmp_path, log_lines))
    assert result.hands[-1].end_line == len(log_lines)
    assert "win" in {h.end_reason for h in result.hands}


@pytest.mark.parametrize("kind, change, message", [
    ("bird", lambda r: r.update(seat=(r["seat"] + 1) % 4), "bird differs: seat"),
    ("bird", lambda r: r.update(pai="P" if r["pai"] != "P" else "E"), "bird differs: pai"),
    ("hua", lambda r: r.update(pai="8f" if r["pai"] != "8f" else "7f"), "hua differs: pai"),
    ("indicator", lambda r: r.update(wild="1m" if r["wild"] != "1m" else "2m"), "indicator differs: wild"),
    ("chi", lambda r: r.update(consumed=r["consumed"][::-1]), "chi differs: consumed"),
    ("hora", lambda r: r.update(fan=r["fan"] + 1), "hora differs: fan"),
])
def test_changed_joy_line_is_caught(tmp_path, log_lines, kind, change, message):
    lines, n = edit_line(log_lines, kind, change)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, message, check=verify_log)


@pytest.mark.parametrize("kind", ["hua", "indicator", "bird", "chi"])
def test_deleted_joy_line_is_caught_at_its_place(tmp_path, log_lines, kind):
    lines, n = drop_line(log_lines, kind)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, check=verify_log)


@pytest.mark.parametrize("kind, field, value, message", [
    ("hua", "pai", "5m", "field 'pai' must be a flower"),
    ("indicator_flower", "pai", "E", "field 'pai' must be a flower"),
    ("dahai", "pai", "9f", "field 'pai' must be a tile such as '5m' or 'E'"),
    ("chi", "consumed", "3p5p", "field 'consumed' must be a list of tiles"),
    ("bird", "seat", 4, "field 'seat' must be a seat"),
    ("hora", "fan", "8", "field 'fan' must be an int"),
    ("start_hand", "prevailing_wind", 7, "field 'prevailing_wind' must be a wind"),
])
def test_wrong_joy_field_types_name_the_line(tmp_path, log_lines, kind, field, value, message):
    if kind == "indicator_flower" and not line_indices(log_lines, kind):
        kind, field = "hua", "pai"  # no flower was flipped as the indicator in this log
    lines, n = edit_line(log_lines, kind, lambda r: r.update({field: value}))
    expect_log_error(tmp_path, lines, n, LogFormatError, message)


def test_line_types_belong_to_the_game_of_the_header(tmp_path, log_lines):
    lines = list(log_lines)
    lines[5] = json.dumps({"type": "dingque", "actor": 0, "suit": "m"}) + "\n"
    expect_log_error(tmp_path, lines, 6, LogFormatError, "unknown line type 'dingque'")
    lines, n = edit_line(log_lines, "start_hand", lambda r: r.pop("prevailing_wind"))
    expect_log_error(tmp_path, lines, n, LogFormatError, "missing field 'prevailing_wind'")


def test_bad_joy_header(tmp_path, log_lines):
    lines, n = edit_line(log_lines, "header", lambda r: r.update(game="blood_battle"))
    message = "env_version 'joy_mahjong_v0' is not 'blood_battle_v0'"
    expect_log_error(tmp_path, lines, n, LogFormatError, message)
    lines, n = edit_line(log_lines, "header", lambda r: r.update(game="riichi"))
    expect_log_error(tmp_path, lines, n, LogFormatError, "game 'riichi' is not one of")
    lines, n = edit_line(log_lines, "header", lambda r: r["options"].pop("room"))
    expect_log_error(tmp_path, lines, n, LogFormatError, r"missing \['room'\]")
    lines, n = edit_line(log_lines, "header", lambda r: r["options"].update(room="vip"))
    expect_log_error(tmp_path, lines, n, LogFormatError, "room", check=verify_log)
    lines, n = edit_line(log_lines, "start_hand", lambda r: r["wall"].pop())
    expect_log_error(tmp_path, lines, n, LogFormatError, "start_hand: a Joy Mahjong wall",
                     check=verify_log)


def test_truncated_joy_log_names_the_line(tmp_path, log_lines):
    end = line_indices(log_lines, "end_hand")[0]
    expect_log_error(tmp_path, log_lines[:end], end, LogFormatError, "before end_hand")


# ---------------------------------------------------------------- CLI


def test_cli_exit_codes(tmp_path, log_lines, capsys):
    code, out, _ = cli_replay(tmp_path, capsys, log_lines)
    assert code == 0 and "verified" in out

    lines, n = edit_line(log_lines, "bird", lambda r: r.update(seat=(r["seat"] + 2) % 4))
    code, _, err = cli_replay(tmp_path, capsys, lines, name="bad.jsonl")
    assert code == 1 and f"mismatch at line {n}: bird differs: seat" in err

    broken = log_lines[:9] + ['{"type": "hua", "actor": 0\n']
    code, _, err = cli_replay(tmp_path, capsys, broken, name="broken.jsonl")
    assert code == 2 and "malformed log at line 10: bad JSON" in err

    code, _, err = cli_replay(tmp_path, capsys, log_lines[:12], name="cut.jsonl")
    assert code == 2 and "malformed log at line 12:" in err


def test_cli_render_shows_flowers_indicator_and_bird(tmp_path, log_lines, capsys):
    code, out, _ = cli_replay(tmp_path, capsys, log_lines, "--render")
    assert code == 0
    assert "风圈" in out and " 补花 " in out and "财神 indicator" in out
    assert " 吃 " in out and "-> 吃 (" in out and " 胡 " in out and "鸟 " in out
    hands = sum(1 for t in log_lines if json.loads(t)["type"] == "header")
    assert out.count("phase over") == hands
