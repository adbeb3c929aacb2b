"""Rollouts between processes (train/transport.py, train/backends.py): shared memory, the pipe fallback, local
worker processes."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from train.rollout import RolloutWorker, all_weights, policy_weights

from tests.train.support import fresh_net, same_rollouts, tiny


def test_rollouts_cross_processes_through_a_reused_shared_memory_block() -> None:
    from multiprocessing.shared_memory import SharedMemory

    from train.transport import Outbox, read_shared

    rng = np.random.default_rng(0)
    sent = [{"obs": rng.random((50, 7, 3), dtype=np.float32), "mask": rng.random((50, 4)) < 0.5,
             "hands": [1, (2, 3)], "step": np.arange(9)[::2]},  # a strided array goes in band
            {"obs": np.zeros((0, 7, 3), dtype=np.float32), "mask": np.ones((1, 4), dtype=bool),
             "hands": [], "step": np.arange(3)}]
    boxes = [Outbox(), Outbox()]
    try:
        messages = [box.share(obj) for box, obj in zip(boxes, sent)]
        joined = read_shared(messages, lambda got: [{k: (v.copy() if isinstance(v, np.ndarray) else v)
                                                  for k, v in obj.items()} for obj in got])
        for want, got in zip(sent, joined):
            assert want.keys() == got.keys() and want["hands"] == got["hands"]
            for key in ("obs", "mask", "step"):
                np.testing.assert_array_equal(got[key], want[key])
                assert got[key].dtype == want[key].dtype
        # The next answer reuses the block when it fits and moves to a bigger one when it does not.
        small = boxes[0].share({"x": np.ones(10)})
        assert small[1] == messages[0][1]
        big = boxes[0].share({"x": np.arange(10**5, dtype=np.float64)})
        assert big[1] != messages[0][1]
        with pytest.raises(FileNotFoundError):  # the outgrown block is freed
            SharedMemory(name=messages[0][1])
        np.testing.assert_array_equal(read_shared([big], lambda got: got[0]["x"].copy()), np.arange(10**5))
        # An error while the arrays are read reaches the caller and leaves the block usable.
        with pytest.raises(ZeroDivisionError):
            read_shared([big], lambda got: 1 / 0)
        assert read_shared([big], lambda got: float(got[0]["x"][-1])) == 10**5 - 1
    finally:
        for box in boxes:
            box.close()
    for box, (_, name, _) in zip(boxes, [big, messages[1]]):  # closed: the memory is back
        assert box.block is None
        with pytest.raises(FileNotFoundError):
            SharedMemory(name=name)


def test_rollouts_go_through_the_pipe_with_a_warning_where_shared_memory_is_too_small(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import train.transport as transport

    block = transport.SharedMemory(create=True, size=4096)
    try:
        assert transport._reserved(block)  # there is room for 4 KB
    finally:
        block.close()
        block.unlink()
    # Docker's 64 MB /dev/shm: no room for a large rollout.
    monkeypatch.setattr(transport, "_reserved", lambda block: block.size < 1 << 20)
    box, big = transport.Outbox(), {"x": np.arange(10**6, dtype=np.float64), "n": 3}
    with pytest.warns(RuntimeWarning, match=r"no room for a 9 MB rollout.*shm-size"):
        message = box.share(big)
    assert message[1] is None and box.block is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # fits: shared memory again, and no second warning
        small = box.share({"x": np.ones(4)})
    assert small[1] is not None
    try:
        got = transport.read_shared([message, small], lambda objs: [o["x"].copy() for o in objs])
    finally:
        box.close()
    np.testing.assert_array_equal(got[0], big["x"])
    np.testing.assert_array_equal(got[1], np.ones(4))


def test_local_worker_processes_collect_the_same_rollouts_and_report_a_dead_worker(tmp_path: Path) -> None:
    from train.backends import LocalWorkers

    cfg = tiny(tmp_path, backend="local", workers=2)
    net = fresh_net(cfg)
    snaps = {3: policy_weights(fresh_net(dataclasses.replace(cfg, seed=4)))}
    workers = LocalWorkers(cfg)
    try:
        got = workers.collect(2, all_weights(net), snaps, [(3, 1.0)])
        again = workers.collect(3, all_weights(net), snaps, [(3, 1.0)])  # snapshots cached, not resent
        workers.submit(4, all_weights(net), {}, [])
        with pytest.raises(RuntimeError, match="receive"):  # its blocks still hold the answers to read
            workers.submit(5, all_weights(net), {}, [])
        assert len(workers.receive().hands) > 0
        workers.procs[1].kill()
        workers.procs[1].join()
        with pytest.raises(RuntimeError, match="rollout worker 1 exited"):
            workers.collect(4, all_weights(net), {}, [])
    finally:
        workers.close()
    from multiprocessing.shared_memory import SharedMemory

    for name in workers.outboxes:  # the killed worker's block and the terminated one's are freed
        with pytest.raises(FileNotFoundError):
            SharedMemory(name=name)
    same_rollouts(got, [RolloutWorker(cfg, i).collect(2, all_weights(net), snaps, [(3, 1.0)], cfg.decisions_per_worker)
                         for i in range(2)])
    assert len(again.hands) > 0 and any(3 in h.lineup for h in again.hands)
