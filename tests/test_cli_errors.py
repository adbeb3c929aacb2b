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


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.mark.parametrize("argv, message", [
    (["rate", "random", "--game", "blood"], "invalid choice: 'blood'"),
    (["ladder", "--game", "joy"], "invalid choice: 'joy'"),
    (["eval", "--plot", "/nonexistent/dir/r.png"], "folder '/nonexistent/dir' does not exist"),
    (["rate", "random", "--plot", "/nonexistent/dir/r.png"], "folder '/nonexistent/dir' does not exist"),
    (["rate", "random", "--hands", "-5"], "expected an int >= 1, got -5"),
    (["rate", "random", "--hands", "0"], "expected an int >= 1, got 0"),
    (["rate", "random", "--hands", "x"], "expected an int >= 1, got 'x'"),
    (["demo", "--seed", "-1"], "expected an int >= 0, got -1"),
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
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "usage:" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["view", "replay"])
def test_a_file_that_is_no_log_is_called_so(command: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = tmp_path / "r.json"
    results.write_text('{\n  "agents": ["heuristic", "random"]\n}\n')  # mjenv eval --out writes indented JSON
    assert _run([command, str(results)]) == 2
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
