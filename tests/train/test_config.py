"""The trainer's config (train/config.py): fields, types, bounds, files, flags; bad settings fail before a run
directory is made."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from train.config import TrainConfig, make_config, parse_args
from train.ppo import main

from tests.train.support import QUICKSTART


def test_config_unknown_key_fails_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown config key 'totl_decisions'"):
        make_config({"totl_decisions": 100})
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_decisions: 100\nlearning_rte: 0.1\n")
    with pytest.raises(ValueError, match="'learning_rte'"):
        parse_args(["--config", str(bad)])


def test_config_wrong_type_and_range_fail_naming_the_field(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match="'workers' must be int"):
        make_config({"workers": "two"})
    with pytest.raises(ValueError, match="'latest_prob' must be in"):
        make_config({"latest_prob": 1.5})
    assert main(["--workers", "0"]) == 2
    assert "'workers' must be >= 1" in capsys.readouterr().err
    assert main(["--resume", "/nonexistent/run"]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_config_file_then_command_line_overrides() -> None:
    cfg, resume = parse_args(["--config", str(QUICKSTART), "--total-decisions", "20000", "--oracle-critic", "true",
                              "--env-options", "{preset: qq}"])
    assert resume is None
    assert cfg.total_decisions == 20000 and cfg.oracle_critic is True and cfg.env_options == {"preset": "qq"}
    assert cfg.channels == 32  # from the file
    assert isinstance(make_config({"learning_rate": 1}).learning_rate, float)


def test_every_config_field_has_a_docstring() -> None:
    from train.config import field_docs

    docs = field_docs()
    assert {f.name for f in dataclasses.fields(TrainConfig)} == set(docs)
    assert all(docs.values())


@pytest.mark.parametrize("field, value", [
    ("ent_coef", math.nan), ("max_grad_norm", -1.0), ("max_grad_norm", 0.0), ("clip_coef", -0.2), ("vf_coef", -1.0),
    ("learning_rate", 0.0), ("learning_rate", -3e-4), ("learning_rate", math.nan), ("learning_rate", math.inf),
    ("imitation_learning_rate", 0.0), ("gae_lambda", math.nan), ("target_kl", -0.1), ("reward_scale", math.inf),
    ("pfsp_power", 1e6), ("seed", -1), ("eval_seed", -1), ("channels", 200_000), ("blocks", 0), ("pool_size", -1),
])
def test_config_refuses_values_that_wreck_training(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"config field '{field}' must be"):
        make_config({field: value})


def test_every_numeric_config_field_declares_its_bounds() -> None:
    import typing

    from train.config import BOUNDS

    numeric = {name for name, kind in typing.get_type_hints(TrainConfig).items() if kind in (int, float)}
    assert numeric == set(BOUNDS)
    defaults = TrainConfig()
    assert all(b.admits(getattr(defaults, name)) for name, b in BOUNDS.items())
    # Declared at the field (Annotated metadata), so --help shows each range beside its field.
    assert typing.get_type_hints(TrainConfig, include_extras=True)["workers"].__metadata__ == (BOUNDS["workers"],)


def test_help_shows_each_fields_docstring_range_and_choices(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--workers INT Rollout workers (processes or Ray actors). (type: Annotated[int, >= 1], default: 2)" in text
    assert "--engine {compiled,reference,vector,aec}" in text and "--progress {true,false}" in text and "--latest-prob FLOAT" in text


@pytest.mark.parametrize("yaml_text, message", [
    ("engine: vectr\n", "config field 'engine' must be one of ('compiled', 'reference', 'vector', 'aec'), got 'vectr'"),
    ("workers: 0\n", "config field 'workers' must be >= 1, got 0"),
    ("workers: two\n", "config field 'workers' must be int, got str 'two'"),
    ("eval_opponents: random\n", "config field 'eval_opponents' must be a list, got str 'random'"),
    ("totl_decisions: 5\n", "unknown config key 'totl_decisions'"),
])
def test_config_file_values_fail_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture, yaml_text: str,
                                                  message: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml_text)
    assert main(["--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("flags, message", [
    (["--workers", "two"], "argument --workers: Expected a <class 'int'>. Got value: two"),
    (["--engine", "vectr"], "argument --engine:"),
    (["--progress", "maybe"], "argument --progress:"),
    (["--totl-decisions", "5"], "unrecognized arguments: --totl-decisions 5"),
    (["--total_decisions", "5"], "unrecognized arguments: --total_decisions 5"),  # the flags are spelled with dashes
])
def test_bad_flags_are_one_line_and_exit_2(capsys: pytest.CaptureFixture, flags: list[str], message: str) -> None:
    assert main(flags) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m train: error: ") and message in err and err.count("\n") == 1


def test_train_config_file_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_decisions: 100\neval_opponents: [random\n")
    for args, message in ((["--config", str(bad)], "bad.yaml: not valid YAML"),
                          (["--config", str(tmp_path / "missing.yaml")], "missing.yaml: no such config file"),
                          (["--config", str(tmp_path)], "is a folder")):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


@pytest.mark.parametrize("flag, field", [
    (["--eval-opponents", "[random, nobody]"], "eval_opponents"),
    (["--teacher", "nobody", "--imitation-decisions", "100"], "teacher"),
    (["--baseline-opponents", "[nobody]", "--baseline-prob", "0.5"], "baseline_opponents"),
    (["--eval-opponents", "[blood_battle_qq]", "--game", "joy_mahjong"], "eval_opponents"),
    (["--device", "tpu0"], "device"),
    (["--device", "cuda:99"], "device"),
    (["--env-options", "{preset: nope}"], "env_options"),
    (["--env-options", "{cap_fann: 3}"], "env_options"),
])
def test_bad_run_settings_fail_before_a_run_directory_is_made(tmp_path: Path, flag: list[str], field: str,
                                                              capsys: pytest.CaptureFixture) -> None:
    flags = ["--backend", "inline", "--envs-per-worker", "2", "--decisions-per-worker", "100", "--channels", "8",
             "--blocks", "1", "--progress", "false", "--total-decisions", "100", "--eval-deals", "1",
             "--runs-dir", str(tmp_path / "runs")]
    assert main([*flags, *flag]) == 2
    err = capsys.readouterr().err
    assert f"config field '{field}'" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_a_runs_dir_that_cannot_take_a_run_folder_exits_2_before_training(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "file").write_text("x")
    for runs_dir in ("/proc/runs", str(tmp_path / "file")):
        assert main(["--config", str(QUICKSTART), "--runs-dir", runs_dir, "--progress", "false"]) == 2
        err = capsys.readouterr().err
        assert "cannot create the run folder" in err and "Traceback" not in err
