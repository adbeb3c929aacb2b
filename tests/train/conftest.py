"""Fixtures of the trainer's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of ~150 decisions with no evaluation: the base of the resume tests."""
    from train.ppo import train  # imported here: only the trainer's tests need torch
    from tests.train.support import tiny

    return train(tiny(tmp_path_factory.mktemp("tiny"), total_decisions=150, checkpoint_every=1))
