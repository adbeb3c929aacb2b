"""Replay logs: the env writes them, ``verify_log`` / ``mjenv replay`` re-simulate and check them."""

import json
from collections import Counter

import numpy as np
import pytest

from mjenv import blood_battle_v0, cli, tiles
from mjenv.engine.blood_battle import scripted_wall, seeded_wall
from mjenv.games import GAME_NAMES
from mjenv.replay import LogFormatError, ReplayMismatch, iter_log, read_log, verify_log
from tests.support import (action_lines, check_no_log_without_log_path, check_scripted_wall_replay, cli_replay,
                     drop_line, edit_line, expect_log_error, finish_hand, header, line_indices, play_episode,
                     read_records, round_trip, write_log)

L = blood_battle_v0.LAYOUT


CONFIGS = [
    dict(preset="happy"),
    dict(preset="qq"),
    dict(preset="qq", mode="classic", match_hands=3),
    dict(preset="happy", mode="classic", match_hands=2, rake=3, room_coefficient=5),
    dict(preset="qq", cap_fan=8, gen_counts_kongs=False, rake=1),
]


def test_round_trip_500_games(tmp_path):
    """500 episodes over both presets, modes and rule overrides: every log verifies, and each
    hand's logged bean table adds up to the rewards the env paid."""
    kinds, reasons, games = round_trip(tmp_path, blood_battle_v0.raw_env, "blood_battle", CONFIGS, 100,
                                       eager=lambda i: i % 2 == 1)
    assert games == 500
    # The run exercises every line type and every kind of settlement the logs can hold.
    assert set(kinds) == {"start_hand", "tsumo", "replacement draw", "action", "dingque", "dingque_reveal",
                          "dahai", "pon", "daiminkan", "ankan", "kakan_declare", "kakan", "hora", "pay",
                          "ryukyoku", "end_hand"}
    assert set(reasons) >= {"win", "direct_kong", "added_kong", "concealed_kong", "kong_refund",
                            "not_ready", "flower_pig", "gang_pao_transfer"}


def test_log_header_and_action_lines(tmp_path):
    path = tmp_path / "g.jsonl"
    e = blood_battle_v0.raw_env(preset="qq", mode="classic", match_hands=3, cap_fan=7, log_path=path)
    _, steps = play_episode(e, seed=42)
    lines = read_records(path)
    headers = [r for r in lines if r["type"] == "header"]
    assert [h["hand_index"] for h in headers] == [0, 1, 2]
    assert headers[0] == header(e, "blood_battle", "qq", seed=42)
    assert headers[0]["options"]["cap_fan"] == 7 and headers[0]["options"]["mode"] == "classic"
    actions = action_lines(e, lines, steps)
    assert sum(r["action"] == L.PASS for r in actions) > 0  # passes are logged too
    # Each hand: header, start_hand, the dealer's 14th tile, then the first 定缺 decision.
    first = lines.index(headers[1])
    assert [r["type"] for r in lines[first:first + 4]] == ["header", "start_hand", "tsumo", "action"]
    assert lines[first + 3]["action"] >= L.VOID


def test_no_log_without_log_path(tmp_path, monkeypatch):
    check_no_log_without_log_path(blood_battle_v0.raw_env, tmp_path, monkeypatch)


def test_unfinished_hand_is_not_logged_and_logs_append(tmp_path):
    path = tmp_path / "g.jsonl"
    e = blood_battle_v0.raw_env(log_path=path)
    e.reset(seed=3)
    for _ in range(10):
        e.step(int(np.flatnonzero(e.game.legal_mask())[0]))
    assert not path.exists()
    play_episode(e, seed=3)  # reset mid-hand: only the finished hand is written
    play_episode(blood_battle_v0.raw_env(log_path=path), seed=4)  # a second env appends
    result = verify_log(path)
    assert [h.seed for h in result.hands] == [3, 4]
    assert [h.header_line for h in result.hands] == [1, result.hands[0].end_line + 1]


def test_scripted_wall_replays_from_start_hand(tmp_path):
    check_scripted_wall_replay(tmp_path, blood_battle_v0.raw_env, seeded_wall, dealer=2)


def _scripted(tmp_path, hands, draws, tail, script):
    """Log a hand on a scripted wall (dealer 0): ``script`` of (seat, action), then random play."""
    path = tmp_path / "scripted.jsonl"
    e = blood_battle_v0.raw_env(preset="qq", log_path=path)
    e.reset(seed=0, options={"wall": scripted_wall(hands, draws, tail), "dealer": 0})
    for seat, action in [(s, L.VOID + 2) for s in range(4)] + script:  # everyone voids 条
        assert e.game.current_player == seat
        e.step(action)
    finish_hand(e, np.random.default_rng(0))
    verify_log(path)
    return read_records(path)


def D(tile: str) -> int:
    return L.DISCARD + tiles.parse_tile(tile)


def test_two_winners_on_one_discard_replay(tmp_path):
    """一炮多响 (docs/rules-blood-battle.md#S4): both wins and their payments are logged in order and
    verify."""
    hands = ["23779m11334579p", "123m456p789p11p46m", "888m222p666p999m5m", "11m33m77m44p88p33p5m"]
    lines = _scripted(tmp_path, hands, "1s 2s 3s 4s 5m", "",
                      # the lone 条 discards are forced, so the env plays them unasked
                      [(0, D("5m")), (1, L.HU), (2, L.PASS), (3, L.HU)])
    i = next(i for i, r in enumerate(lines) if r["type"] == "hora")
    assert [(r["type"], r.get("actor"), r.get("action")) for r in lines[i - 3:i]] == \
        [("action", 1, L.HU), ("action", 2, L.PASS), ("action", 3, L.HU)]
    # Each win settles one-to-one with the discarder, right after its hora line.
    assert [(r["type"], r.get("actor", r.get("from")), r.get("target", r.get("to")), r.get("X", r.get("beans")))
            for r in lines[i:i + 4]] == [("hora", 1, 0, 6), ("pay", 0, 1, 6), ("hora", 3, 0, 24), ("pay", 0, 3, 24)]


def test_robbed_kong_replay(tmp_path):
    """抢杠胡 (S6) by two seats: kakan_declare, the rob answers, two hora, no kakan."""
    hands = ["123446799m4567p", "55m1s13699m44557p", "46m123p456p789p11p", "67m222p333p888p99p"]
    lines = _scripted(tmp_path, hands, "5m 2s 3s 4s 5m", "6s",
                      # forced 条 discards are played unasked
                      [(0, D("5m")), (1, L.PONG), (2, L.PASS), (3, L.PASS),
                       (1, L.KONG + tiles.parse_tile("5m")), (2, L.ROB_KONG), (3, L.ROB_KONG)])
    i = next(i for i, r in enumerate(lines) if r["type"] == "kakan_declare")
    assert [r["type"] for r in lines[i - 1:i + 4]] == ["action", "kakan_declare", "action", "action", "hora"]
    robs = [r for r in lines if r["type"] == "hora"]
    assert [(r["actor"], r["target"]) for r in robs[:2]] == [(2, 1), (3, 1)]
    assert all(["抢杠胡", 1] in r["fans"] for r in robs[:2])
    assert not any(r["type"] == "kakan" and r["actor"] == 1 and r["pai"] == "5m" for r in lines)


def test_bad_log_path_type_names_the_option():
    with pytest.raises(TypeError, match="log_path"):
        blood_battle_v0.env(log_path=3)


# ---------------------------------------------------------------- tampering


@pytest.fixture(scope="module")
def log_lines(tmp_path_factory) -> list[str]:
    """A two-hand log (qq, eager play) with discards, kongs and wins."""
    path = tmp_path_factory.mktemp("log") / "g.jsonl"
    e = blood_battle_v0.raw_env(preset="qq", match_hands=2, log_path=path)
    play_episode(e, seed=19, eager=True)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    types = Counter(json.loads(t)["type"] for t in lines)
    assert types["header"] == 2 and types["pay"] > 0 and types["hora"] > 0
    return lines


def test_untampered_log_verifies(tmp_path, log_lines):
    result = verify_log(write_log(tmp_path, log_lines))
    assert len(result.hands) == 2
    assert result.hands[1].end_line == len(log_lines)
    assert "OK, 2 hand(s) verified" in result.summary()


def test_changed_discard_tile_is_caught(tmp_path, log_lines):
    def other_tile(r):
        r["pai"] = "2m" if r["pai"] != "2m" else "3m"
    lines, n = edit_line(log_lines, "dahai", other_tile, nth=5)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, "pai", check=verify_log)


def test_changed_pay_amount_is_caught(tmp_path, log_lines):
    def more(r):
        r["beans"] += 1
    lines, n = edit_line(log_lines, "pay", more)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, "beans", check=verify_log)


def test_changed_final_bean_table_is_caught(tmp_path, log_lines):
    def swap(r):
        r["beans"] = r["beans"][::-1] if r["beans"] != r["beans"][::-1] else [1, -1, 0, 0]
    lines, n = edit_line(log_lines, "end_hand", swap, nth=1)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, "beans", check=verify_log)


@pytest.mark.parametrize("kind, nth, message", [
    ("tsumo", 20, "before this action; the log lacks it"),
    ("action", 30, "waits for an action"),
    ("pay", 0, "differs"),
])
def test_deleted_line_is_caught_at_its_place(tmp_path, log_lines, kind, nth, message):
    lines, n = drop_line(log_lines, kind, nth)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, message, check=verify_log)


def test_changed_action_is_caught(tmp_path, log_lines):
    def void_other(r):  # a different, legal 定缺: later lines then disagree
        r["action"] = L.VOID + (r["action"] - L.VOID + 1) % 3
        r["name"] = L.name(r["action"])
    lines, n = edit_line(log_lines, "action", void_other)
    # Caught at the dingque event right after it.
    expect_log_error(tmp_path, lines, n + 1, ReplayMismatch, "suit", check=verify_log)

    def rename(r):
        r["name"] = "hu"
    lines, n = edit_line(log_lines, "action", rename, nth=3)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, "named 'hu'", check=verify_log)

    def wrong_seat(r):
        r["actor"] = (r["actor"] + 1) % 4
    lines, n = edit_line(log_lines, "action", wrong_seat, nth=6)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, "is to act", check=verify_log)

    def illegal(r):
        r["action"], r["name"] = L.ROB_KONG, L.name(L.ROB_KONG)
    lines, n = edit_line(log_lines, "action", illegal, nth=8)
    expect_log_error(tmp_path, lines, n, ReplayMismatch, "illegal in the re-simulation", check=verify_log)


# ---------------------------------------------------------------- malformed and truncated


def test_bad_json_names_the_line(tmp_path, log_lines):
    lines = list(log_lines)
    lines[4] = lines[4][:-3] + "\n"
    expect_log_error(tmp_path, lines, 5, LogFormatError, "bad JSON")


def test_missing_header(tmp_path, log_lines):
    expect_log_error(tmp_path, log_lines[1:], 1, LogFormatError, "expected a header line")


def test_empty_log(tmp_path):
    expect_log_error(tmp_path, [], 1, LogFormatError, "no hand")


def test_unknown_event_type(tmp_path, log_lines):
    lines = list(log_lines)
    lines[6] = json.dumps({"type": "chi", "actor": 0}) + "\n"
    expect_log_error(tmp_path, lines, 7, LogFormatError, "unknown line type 'chi'")


def test_hand_cut_before_end_hand(tmp_path, log_lines):
    end = line_indices(log_lines, "end_hand")[0]
    expect_log_error(tmp_path, log_lines[:end], end, LogFormatError, "before end_hand")
    cut = "".join(log_lines[:end])[:-25]  # mid-line, as a crashed writer leaves it
    expect_log_error(tmp_path, [cut], end, LogFormatError, "bad JSON")
    # A truncated hand followed by a whole one: the second header is where it breaks.
    expect_log_error(tmp_path, log_lines[:end] + log_lines, end + 1, LogFormatError, "truncated hand")


def test_line_after_end_hand_must_be_a_header(tmp_path, log_lines):
    end = line_indices(log_lines, "end_hand")[0]
    lines = log_lines[:end + 1] + [log_lines[end]] + log_lines[end + 1:]
    expect_log_error(tmp_path, lines, end + 2, LogFormatError, "expected a header line, got 'end_hand'")


@pytest.mark.parametrize("kind, field, value, message", [
    ("dahai", "actor", "0", "field 'actor' must be a seat"),
    ("dahai", "actor", True, "field 'actor' must be a seat"),
    ("tsumo", "pai", 5, "field 'pai' must be a suited tile"),
    ("pay", "beans", 1.5, "field 'beans' must be an int"),
    ("action", "action", None, "field 'action' must be an int"),
    ("end_hand", "beans", [0, 0, 0], "field 'beans' must be four ints"),
    ("start_hand", "wall", "1m2m", "field 'wall' must be a list of ints"),
    ("header", "hand_index", "0", "field 'hand_index' must be an int"),
    ("dahai", "extra", 1, "unexpected field"),
])
def test_wrong_field_types_name_the_line(tmp_path, log_lines, kind, field, value, message):
    def put(r):
        r[field] = value
    lines, n = edit_line(log_lines, kind, put)
    expect_log_error(tmp_path, lines, n, LogFormatError, message)


def test_missing_field(tmp_path, log_lines):
    lines, n = edit_line(log_lines, "hora", lambda r: r.pop("X"))
    expect_log_error(tmp_path, lines, n, LogFormatError, "missing field 'X'")


def test_bad_header_options_and_wall(tmp_path, log_lines):
    def bad_cap(r):
        r["options"]["cap_fan"] = "6"
    lines, n = edit_line(log_lines, "header", bad_cap, nth=1)
    expect_log_error(tmp_path, lines, n, LogFormatError, "cap_fan", check=verify_log)
    lines, n = edit_line(log_lines, "header", lambda r: r["options"].pop("rake"))
    expect_log_error(tmp_path, lines, n, LogFormatError, r"missing \['rake'\]")
    lines, n = edit_line(log_lines, "header", lambda r: r.update(game="joy_mahjong"))
    expect_log_error(tmp_path, lines, n, LogFormatError, "joy_mahjong")
    lines, n = edit_line(log_lines, "start_hand", lambda r: r["wall"].pop())
    expect_log_error(tmp_path, lines, n, LogFormatError, "start_hand: a blood-battle wall", check=verify_log)


def test_iter_log_reads_one_hand_at_a_time(tmp_path, log_lines):
    """For logs too large to hold: each hand comes as soon as it is read; a problem further on is
    raised when the reading reaches it, naming its line."""
    lines, n = edit_line(log_lines, "end_hand", lambda r: r.update(reason=1), nth=1)  # the second hand's end
    hands = iter_log(write_log(tmp_path, lines))
    first = next(hands)
    whole = read_log(write_log(tmp_path, log_lines, "ok.jsonl"))
    assert [ll.record for ll in first.lines] == [ll.record for ll in whole[0].lines]
    with pytest.raises(LogFormatError, match="field 'reason' must be a string") as err:
        next(hands)
    assert err.value.line == n


def test_not_utf8_names_the_line(tmp_path, log_lines):
    path = tmp_path / "b.jsonl"
    path.write_bytes("".join(log_lines[:3]).encode() + b'{"type": "\xff"}\n')
    with pytest.raises(LogFormatError, match="not UTF-8") as err:
        read_log(path)
    assert err.value.line == 4


# ---------------------------------------------------------------- CLI


def test_cli_exit_codes(tmp_path, log_lines, capsys):
    code, out, _ = cli_replay(tmp_path, capsys, log_lines)
    assert code == 0 and "OK, 2 hand(s) verified" in out

    lines, n = edit_line(log_lines, "pay", lambda r: r.update(points=r["points"] + 6))
    code, _, err = cli_replay(tmp_path, capsys, lines, name="bad.jsonl")
    assert code == 1 and f"mismatch at line {n}: pay differs: points" in err

    code, _, err = cli_replay(tmp_path, capsys, log_lines[:7] + ["{not json\n"], name="broken.jsonl")
    assert code == 2 and "malformed log at line 8: bad JSON" in err

    assert cli.main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_cli_render(tmp_path, log_lines, capsys):
    code, out, _ = cli_replay(tmp_path, capsys, log_lines, "--render")
    assert code == 0
    assert "new hand, dealer player_" in out
    assert " 打 " in out and "-> 过" in out and " 胡 " in out
    assert out.count("phase over") == 2  # the whole table at the end of each hand
    assert out.rstrip().splitlines()[-1].startswith(str(tmp_path))  # then the summary


# ---------------------------------------------------------------- header seed and version, deep nesting


def _one_hand(tmp_path, raw_env, seed=4, **reset) -> list[str]:
    """The lines of one logged hand."""
    path = tmp_path / "one.jsonl"
    play_episode(raw_env(log_path=path), seed=seed, **reset)
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_an_edited_seed_is_a_mismatch(tmp_path, game):
    from mjenv import joy_mahjong_v0

    raw_env = {"blood_battle": blood_battle_v0.raw_env, "joy_mahjong": joy_mahjong_v0.raw_env}[game]
    lines = _one_hand(tmp_path, raw_env)
    assert verify_log(write_log(tmp_path, lines)).hands[0].seed == 4
    for field, value in (("seed", 999), ("hand_index", 1)):
        edited, n = edit_line(lines, "header", lambda r: r.update({field: value}))
        expect_log_error(tmp_path, edited, n, ReplayMismatch, "deals another wall than the start_hand of line 2",
                         check=verify_log)


def test_a_scripted_wall_is_marked_in_the_header_and_needs_the_mark(tmp_path):
    wall = list(reversed(seeded_wall(9)[0]))
    lines = _one_hand(tmp_path, blood_battle_v0.raw_env, options={"wall": wall, "dealer": 1})
    assert json.loads(lines[0])["scripted"] == ["dealer", "wall"]
    verify_log(write_log(tmp_path, lines))
    unmarked, n = edit_line(lines, "header", lambda r: r.pop("scripted"))
    expect_log_error(tmp_path, unmarked, n, ReplayMismatch, "seed 4, hand 0 deals another wall", check=verify_log)
    bad, n = edit_line(lines, "header", lambda r: r.update(scripted="wall"))
    expect_log_error(tmp_path, bad, n, LogFormatError, "'scripted' must be a list of reset option names")


@pytest.mark.parametrize("version, message", [("99.0.0", "newer than this mjenv"), ("banana", "not a version number"),
                                              ("", "not a version number")])
def test_the_header_mjenv_version_is_checked(tmp_path, capsys, version, message):
    lines = _one_hand(tmp_path, blood_battle_v0.raw_env)
    edited, n = edit_line(lines, "header", lambda r: r.update(mjenv_version=version))
    expect_log_error(tmp_path, edited, n, LogFormatError, message)
    code, _, err = cli_replay(tmp_path, capsys, edited)
    assert code == 2 and message in err


def test_an_older_mjenv_version_still_verifies(tmp_path):
    lines = _one_hand(tmp_path, blood_battle_v0.raw_env)
    edited, _ = edit_line(lines, "header", lambda r: r.update(mjenv_version="0.0.9"))
    assert len(verify_log(write_log(tmp_path, edited)).hands) == 1


def test_deeply_nested_json_is_a_format_error(tmp_path, capsys):
    lines = _one_hand(tmp_path, blood_battle_v0.raw_env)
    nested = lines[:3] + ["[" * 100_000 + "]" * 100_000 + "\n"] + lines[3:]
    expect_log_error(tmp_path, nested, 4, LogFormatError, "nested too deeply")
    code, _, err = cli_replay(tmp_path, capsys, nested)
    assert code == 2 and "line 4" in err and "nested too deeply" in err
