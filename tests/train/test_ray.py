"""The Ray backend (train/backends.py): the same rollouts as local workers, joining a cluster."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agents.neural import read_checkpoint
from train.ppo import train
from train.rollout import RolloutWorker, all_weights, policy_weights

from tests.train.support import fresh_net, same_rollouts, tiny


def test_ray_backend_collects_the_same_rollouts_as_local_workers(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import ray  # the test command installs the ray extra
    from train.backends import RayWorkers

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    cfg = tiny(tmp_path, backend="ray", workers=2, total_decisions=400, snapshot_every=1)
    assert cfg.engine == "compiled"  # the default: the actors play on the compiled engine
    net = fresh_net(cfg)
    snaps = {3: policy_weights(fresh_net(dataclasses.replace(cfg, seed=4)))}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        workers = RayWorkers(cfg)
        got = workers.collect(2, all_weights(net), snaps, [(3, 1.0)])
        workers.close()
        run_dir = train(cfg)  # the trainer end to end on Ray actors
    finally:
        ray.shutdown()
    same_rollouts(got, [RolloutWorker(cfg, i).collect(2, all_weights(net), snaps, [(3, 1.0)], cfg.decisions_per_worker)
                         for i in range(2)])
    assert read_checkpoint(run_dir / "checkpoint.pt")["global_step"] >= 400


def test_ray_backend_joins_a_cluster_when_given_an_address(tmp_path: Path, monkeypatch) -> None:
    """--ray-address auto makes the backend call ray.init(address="auto") (multi-node use)."""
    import ray

    from train.backends import RayWorkers

    seen = {}

    class Joined(Exception):
        pass

    def fake_init(**kwargs):
        seen.update(kwargs)
        raise Joined

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    with pytest.raises(Joined):
        RayWorkers(tiny(tmp_path, backend="ray", ray_address="auto"))
    assert seen == {"address": "auto"}
