"""Helpers of the trainer's tests (tests/train/): tiny configs, fresh networks, a shared finished run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.neural import PolicyValueNet
from mjenv import blood_battle_v0
from train.config import TrainConfig, make_config
from tests.support import ROOT

OBS_PLANES = blood_battle_v0.raw_env().observer.planes
STATE_PLANES = blood_battle_v0.raw_env().observer.state_planes
QUICKSTART = ROOT / "configs" / "quickstart_blood_battle.yaml"
TINY = dict(backend="inline", workers=1, envs_per_worker=4, decisions_per_worker=150, channels=16, blocks=1,
            minibatch_size=64, update_epochs=2, progress=False, eval_opponents=[], torch_threads=1)


def tiny(tmp_path: Path, **overrides) -> TrainConfig:
    """A config small enough for a test: a few hundred decisions, inline rollouts."""
    return make_config({**TINY, "runs_dir": str(tmp_path / "runs"), **overrides})


def fresh_net(cfg: TrainConfig, state_planes: int = 0) -> PolicyValueNet:
    """The network the trainer starts from with this config's seed."""
    return PolicyValueNet(OBS_PLANES, cfg.channels, cfg.blocks, state_planes, cfg.lookahead,
                          generator=torch.Generator().manual_seed(cfg.seed))


def logged_scalars(run_dir: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def run_files(run: Path) -> dict[str, bytes]:
    """Every file of a run directory with its bytes."""
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def copy_run(run: Path, dst: Path) -> Path:
    """A copy of a run directory (the tests that resume it must not change the shared one)."""
    import shutil

    return Path(shutil.copytree(run, dst))


def same_rollouts(got, parts) -> None:
    """A backend's joined rollout equals the per-worker rollouts computed in this process."""
    want = type(parts[0]).concat(parts)
    for name in ("obs", "mask", "action", "beans", "done", "hand", "seat"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    np.testing.assert_allclose(got.logprob, want.logprob, rtol=1e-5, atol=1e-6)
    assert [h.actions for h in got.hands] == [h.actions for h in want.hands]
