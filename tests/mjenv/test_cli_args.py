"""Command-line arguments that are checked before any work is done (``mjenv eval``, ``mjenv demo``,
output paths of every command: never an input file, always a place a file can be written)."""

import json
import os
import shutil
from pathlib import Path

import pytest

import agents.arena
from agents.arena import deal_log_path, run_arena
from agents.registry import SHIPPED_CHECKPOINTS
from mjenv.demo import run_demo
from tests.support import cli_status

SHIPPED = SHIPPED_CHECKPOINTS["blood_battle_qq"]


@pytest.mark.parametrize("flag", ["--out", "--plot"])
@pytest.mark.parametrize("where, message", [("missing/r.out", "does not exist; create it first"),
                                            (".", "is a folder"), ("/proc/r.json", "cannot write /proc/r.json")])
def test_eval_output_paths_are_checked_before_the_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture, flag: str, where: str,
                                                             message: str) -> None:
    played = []
    monkeypatch.setattr(agents.arena, "run_arena", lambda **kw: played.append(kw))
    argv = ["eval", "--agents", "random", "random", "--deals", "2", "--no-progress", flag, str(tmp_path / where)]
    assert cli_status(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert played == []  # nothing evaluated
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("argv", [["demo", "--seed", "-1"], ["demo", "--every", "-2"], ["demo", "--seed", "x"]])
def test_demo_refuses_negative_or_non_integer_numbers(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    assert cli_status(argv) == 2
    err = capsys.readouterr().err
    assert "expected an int >= 0" in err and "Traceback" not in err


def test_run_demo_refuses_a_negative_seed() -> None:
    with pytest.raises(ValueError, match="seed must be an int >= 0, got -1"):
        run_demo(seed=-1)
    assert "seed 3" in run_demo(seed=3)


def _no_traceback(capsys: pytest.CaptureFixture, *messages: str) -> None:
    """The last command printed ``messages`` on stderr, without a traceback."""
    err = capsys.readouterr().err
    assert all(m in err for m in messages), err
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A replay log of one deal (four hands) of random agents."""
    root = tmp_path_factory.mktemp("log")
    run_arena(agents=["random", "random"], deals=1, progress=False, log_dir=root / "logs")
    return deal_log_path(root / "logs", 0)


def _alias(kind: str, source: Path, folder: Path) -> Path:
    """``source`` itself, a hard link to it or a symbolic link to it, in ``folder``."""
    if kind == "same path":
        return source
    alias = folder / f"{kind.replace(' ', '_')}.out"
    os.link(source, alias) if kind == "hard link" else alias.symlink_to(source)
    return alias


ALIASES = ["same path", "hard link", "symbolic link"]


@pytest.mark.parametrize("kind", ALIASES)
def test_view_refuses_to_write_over_its_log(tmp_path: Path, log: Path, capsys: pytest.CaptureFixture,
                                            kind: str) -> None:
    source = tmp_path / "L.jsonl"
    shutil.copy(log, source)
    before = source.read_bytes()
    out = _alias(kind, source, tmp_path)
    assert cli_status(["view", str(source), "-o", str(out)]) == 2
    _no_traceback(capsys, "is the same file as the log")
    assert source.read_bytes() == before


def test_view_checks_its_default_output_path(tmp_path: Path, log: Path, capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / "L.jsonl"
    shutil.copy(log, source)
    (tmp_path / "L.html").mkdir()  # where the page would go by default
    assert cli_status(["view", str(source)]) == 2
    _no_traceback(capsys, "L.html is a folder")


def test_view_that_fails_leaves_an_existing_page_and_no_temporary_file(tmp_path: Path, log: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1].replace('"end_hand"', '"end_hand", "extra": 1')  # the last hand is malformed
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text("the page of yesterday")
    assert cli_status(["view", str(bad), "-o", str(page)]) == 2
    _no_traceback(capsys, f"malformed log at line {len(lines)}")
    assert page.read_text() == "the page of yesterday"
    assert sorted(os.listdir(tmp_path)) == ["bad.jsonl", "page.html"]


@pytest.mark.parametrize("kind", ALIASES)
def test_compare_refuses_to_write_over_a_results_file(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                      kind: str) -> None:
    base, new = tmp_path / "A.json", tmp_path / "B.json"
    for path, agent in ((base, "random"), (new, "heuristic")):
        path.write_text(json.dumps(run_arena(agents=[agent, "random"], deals=2, progress=False).to_dict()))
    before = base.read_bytes()
    out = _alias(kind, base, tmp_path)
    assert cli_status(["compare", "--base", str(base), "--new", str(new), "--out", str(out)]) == 2
    _no_traceback(capsys, "is the same file as the results file")
    assert base.read_bytes() == before
    assert cli_status(["compare", "--base", str(base), "--new", str(new), "--out", "/proc/c.json"]) == 2
    _no_traceback(capsys, "cannot write /proc/c.json")


@pytest.mark.parametrize("flag", ["--out", "--plot"])
def test_eval_refuses_to_write_over_a_policy_it_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture, flag: str) -> None:
    played = []
    monkeypatch.setattr(agents.arena, "run_arena", lambda **kw: played.append(kw))
    policy = tmp_path / "policy.pt"
    shutil.copy(SHIPPED, policy)
    argv = ["eval", "--agents", str(policy), "random", "--deals", "2", "--no-progress", flag, str(policy)]
    assert cli_status(argv) == 2
    _no_traceback(capsys, "is the same file as the policy checkpoint")
    assert played == [] and policy.read_bytes() == SHIPPED.read_bytes()


def test_eval_refuses_one_file_for_results_and_plot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    played = []
    monkeypatch.setattr(agents.arena, "run_arena", lambda **kw: played.append(kw))
    out = str(tmp_path / "r.out")
    assert cli_status(["eval", "--agents", "random", "random", "--no-progress", "--out", out, "--plot", out]) == 2
    _no_traceback(capsys, "--out and --plot name the same file")
    assert played == []


def test_eval_log_folder_that_cannot_be_made_is_refused_before_the_evaluation(capsys: pytest.CaptureFixture) -> None:
    assert cli_status(["eval", "--agents", "random", "random", "--deals", "1", "--no-progress",
                       "--log", "/proc/logs"]) == 2
    _no_traceback(capsys, "cannot create folder /proc/logs")


@pytest.mark.parametrize("command", [["demo"], ["play"]])
def test_demo_and_play_check_their_log_before_the_hand(command: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    assert cli_status([*command, "--log", "/proc/hand.jsonl"]) == 2
    _no_traceback(capsys, "cannot write /proc/hand.jsonl")
    assert cli_status([*command, "--log", str(tmp_path)]) == 2
    _no_traceback(capsys, "is a folder")


def test_play_refuses_a_log_that_is_an_opponent_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    policy = tmp_path / "policy.pt"
    shutil.copy(SHIPPED, policy)
    assert cli_status(["play", "--opponents", f"random,{policy},random", "--log", str(policy)]) == 2
    out, err = capsys.readouterr()
    assert "is the same file as the policy checkpoint" in err and "Traceback" not in err
    assert out == ""  # no hand dealt
    assert policy.read_bytes() == SHIPPED.read_bytes()
