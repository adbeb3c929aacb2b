"""Command-line arguments that are checked before any work is done (``mjenv eval``, ``mjenv demo``)."""

from pathlib import Path

import pytest

import agents.arena
from mjenv.cli import main
from mjenv.demo import run_demo


def _exit_code(argv: list[str]) -> int:
    """The exit status of ``mjenv ARGV`` whether it returns or argparse exits."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.mark.parametrize("flag", ["--out", "--plot"])
@pytest.mark.parametrize("where, message", [("missing/r.out", "does not exist; create it first"),
                                            (".", "is a folder")])
def test_eval_output_paths_are_checked_before_the_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture, flag: str, where: str,
                                                             message: str) -> None:
    played = []
    monkeypatch.setattr(agents.arena, "run_arena", lambda **kw: played.append(kw))
    argv = ["eval", "--agents", "random", "random", "--deals", "2", "--no-progress", flag, str(tmp_path / where)]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert played == []  # nothing evaluated
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("argv", [["demo", "--seed", "-1"], ["demo", "--every", "-2"], ["demo", "--seed", "x"]])
def test_demo_refuses_negative_or_non_integer_numbers(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert "expected an int >= 0" in err and "Traceback" not in err


def test_run_demo_refuses_a_negative_seed() -> None:
    with pytest.raises(ValueError, match="seed must be an int >= 0, got -1"):
        run_demo(seed=-1)
    assert "seed 3" in run_demo(seed=3)
