"""One error style for every ``mjenv`` subcommand: one line on stderr, exit status 2, no usage dump
and no traceback; output piped into a reader that stops early (``| head``) ends quietly."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mjenv.cli import main
from tests.support import cli_status


@pytest.mark.parametrize("argv, message", [
    (["rate", "random", "--game", "blood"], "invalid choice: 'blood'"),
    (["ladder", "--game", "joy"], "invalid choice: 'joy'"),
    (["eval", "--plot", "/nonexistent/dir/r.png"], "folder '/nonexistent/dir' does not exist"),
    (["rate", "random", "--plot", "/nonexistent/dir/r.png"], "folder '/nonexistent/dir' does not exist"),
    (["rate", "random", "--hands", "-5"], "expected an int >= 1, got -5"),
    (["rate", "random", "--hands", "0"], "expected an int >= 1, got 0"),
    (["rate", "random", "--hands", "x"], "expected an int >= 1, got 'x'"),
    (["demo", "--seed", "-1"], "expected an int >= 0, got -1"),
    (["warmup", "--jobs", "0"], "expected an int >= 1, got 0"),
    (["demo", "--game", "mahjong"], "invalid choice: 'mahjong'"),
    (["score", "--hand", "11m"], "the following arguments are required: --win-tile"),
    (["compare", "--base", "nosuch_a.json", "--new", "nosuch_b.json"],
     "cannot read nosuch_a.json: No such file or directory"),
    (["view", "nosuch.jsonl"], "cannot read nosuch.jsonl: No such file or directory"),
    (["replay", "nosuch.jsonl"], "cannot read nosuch.jsonl: No such file or directory"),
    ([], "the following arguments are required: COMMAND"),
])
def test_every_bad_argument_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_status(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "usage:" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["view", "replay"])
def test_a_file_that_is_no_log_is_called_so(command: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = tmp_path / "r.json"
    results.write_text('{\n  "agents": ["heuristic", "random"]\n}\n')  # mjenv eval --out writes indented JSON
    assert cli_status([command, str(results)]) == 2
    err = capsys.readouterr().err
    assert f"{results} is not a replay log" in err and "bad JSON" not in err and err.count("\n") == 1, err


def test_output_piped_into_head_ends_quietly() -> None:
    # A pipe of one page (Linux): mjenv demo --every 1 prints ten times that, so the closed pipe
    # is met mid-output, as `mjenv demo --every 1 | head` meets it.
    read, write = os.pipe()
    fcntl.fcntl(write, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
    proc = subprocess.Popen([sys.executable, "-m", "mjenv", "demo", "--every", "1"], stdout=write,
                            stderr=subprocess.PIPE)
    os.close(write)
    with os.fdopen(read, "rb") as out:
        assert out.readline()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def test_the_game_options_are_declared_once_with_one_set_of_choices() -> None:
    from mjenv import games
    from mjenv.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    seen: dict[str, set] = {}
    for name, parser in commands.items():
        for action in parser._actions:
            if action.dest in ("game", "preset", "room", "mode", "rule"):
                seen.setdefault(action.dest, set()).add((name, tuple(action.choices or ())))
    by_option = {dest: {choices for _, choices in found} for dest, found in seen.items()}
    # Where argparse checks --game it offers every game; score checks the name itself (an unknown game is
    # a bad hand's kind of error there), bench takes either game's variant as --preset, warmup a list of games.
    assert by_option["game"] == {games.GAME_NAMES, ()}
    assert {name for name, choices in seen["game"] if not choices} == {"score"}
    assert by_option["room"] == {games.GAMES["joy_mahjong"].variants}
    assert by_option["preset"] == {("happy", "qq", "standard"), ()}
    assert {name for name, choices in seen["preset"] if not choices} == {"bench"}
    assert by_option["mode"] == {("blood", "classic")}
    assert {name for name, _ in seen["rule"]} == {"score", "eval", "play"}


@pytest.mark.parametrize("argv, message", [
    (["demo", "--preset", "standard"], "mjenv demo: error: "),  # the joy preset at a blood-battle table
    (["ladder", "--game", "joy_mahjong", "--preset", "standard"], "mjenv ladder: error: "),
    (["score", "--hand", "11224444557799m", "--win-tile", "9m", "--game", "go"], "mjenv score: error: unknown game"),
])
def test_bad_input_found_by_a_handler_is_one_line_and_exit_2(argv: list[str], message: str,
                                                             capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err, err
