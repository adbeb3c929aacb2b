"""Issue 47 item 7: a checkpoint's recorded env options (look-ahead networks build their rules from
them) pass the user's validation, and options that name files are refused from a checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.neural import CheckpointError, _training_rules


def _ckpt(**env_options: object) -> dict:
    return {"config": {"env_options": env_options}}


@pytest.mark.parametrize("options, message", [
    ({"rules_file": "RULES"}, r"\['rules_file'\] name files"),
    ({"log_path": "LOG"}, r"\['log_path'\] name files"),
    ({"room_coefficient": 2**70}, "'room_coefficient' must be at most"),
    ({"bankroll": 2**63 - 1}, "'bankroll' must be at most"),
    ({"preset": "qq", "cap_fan": "6"}, "'cap_fan' must be int"),
])
def test_checkpoint_env_options_are_validated(tmp_path: Path, options: dict, message: str) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("game: blood_battle\npreset: [unclosed\n")  # malformed YAML: was a traceback
    log = tmp_path / "log.jsonl"
    options = {k: {"RULES": str(rules), "LOG": str(log)}.get(v, v) if isinstance(v, str) else v
               for k, v in options.items()}
    with pytest.raises(CheckpointError, match=message):
        _training_rules(tmp_path / "x.pt", _ckpt(**options))
    assert not log.exists()


def test_valid_checkpoint_env_options_give_the_rules(tmp_path: Path) -> None:
    rules = _training_rules(tmp_path / "x.pt", _ckpt(preset="qq", room_coefficient=100))
    assert rules.room_coefficient == 100 and rules.direct_kong_units == 1
