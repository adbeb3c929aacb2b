"""Where rollout workers run: ``local`` processes (the default), ``ray`` actors, or ``inline``.

Each backend holds ``cfg.workers`` :class:`~train.rollout.RolloutWorker` objects and offers one
call, ``collect``, that runs them all for one update and joins their batches. Snapshot weights
are sent to a worker once and cached there until the snapshot leaves the pool.
``inline`` runs one worker in the learner's process (for debugging and quick tests).
"""

from __future__ import annotations

import multiprocessing
from typing import Any

from .config import TrainConfig
from .rollout import Rollout, RolloutWorker, Weights


class _SnapshotSync:
    """Remembers which snapshots the workers already hold."""

    def __init__(self) -> None:
        self.sent: set[int] = set()

    def new(self, snapshots: dict[int, Weights]) -> dict[int, Weights]:
        """Snapshots not yet sent; from now on they count as sent."""
        fresh = {sid: w for sid, w in snapshots.items() if sid not in self.sent}
        self.sent = set(snapshots)
        return fresh


def _serve(conn: Any, cfg: TrainConfig, index: int) -> None:
    """Worker process loop: a collect request in, a Rollout out; None stops it."""
    worker = RolloutWorker(cfg, index, torch_threads=1)  # one core per worker
    while True:
        try:
            request = conn.recv()
        except EOFError:  # the learner is gone (killed): nothing left to do
            return
        if request is None:
            return
        conn.send(worker.collect(*request))


class LocalWorkers:
    """Rollout workers in spawned local processes, driven over pipes."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg, self.sync = cfg, _SnapshotSync()
        ctx = multiprocessing.get_context("spawn")  # fork after torch has started threads is unsafe
        self.conns, self.procs = [], []
        for i in range(cfg.workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, cfg, i), daemon=True, name=f"rollout-{i}")
            proc.start()
            child.close()  # so that recv() sees EOF if the worker dies
            self.conns.append(parent)
            self.procs.append(proc)
        self.busy = [False] * cfg.workers  # a request sent, its answer not read yet

    def collect(self, update: int, weights: Weights, snapshots: dict[int, Weights],
                pool: list[tuple[int, float]], imitate: bool = False) -> Rollout:
        """One update's rollouts from every worker."""
        request = (update, weights, self.sync.new(snapshots), pool, self.cfg.decisions_per_worker, imitate)
        for i, conn in enumerate(self.conns):
            try:
                conn.send(request)
            except BrokenPipeError:
                self._dead(i)
            self.busy[i] = True
        parts = []
        for i, conn in enumerate(self.conns):
            try:
                parts.append(conn.recv())
            except (EOFError, ConnectionResetError):
                self._dead(i)
            self.busy[i] = False
        return Rollout.concat(parts)

    def _dead(self, i: int) -> None:
        """Raise the error of a worker process that exited."""
        self.procs[i].join(timeout=5)
        raise RuntimeError(f"rollout worker {i} exited (code {self.procs[i].exitcode}); "
                           "its traceback, if any, is printed above")

    def close(self) -> None:
        """Stop the worker processes."""
        for conn, proc, busy in zip(self.conns, self.procs, self.busy):
            if busy:  # its answer would block on the pipe nobody reads any more (after an error)
                proc.terminate()
            elif proc.is_alive():
                try:
                    conn.send(None)
                except BrokenPipeError:  # it died just now: nothing to stop
                    pass
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()


class RayWorkers:
    """Rollout workers as Ray actors (one CPU each); starts a local Ray if none is running."""

    def __init__(self, cfg: TrainConfig) -> None:
        import ray  # only this backend needs Ray: pip install 'mjenv[ray]'

        self.ray, self.cfg, self.sync = ray, cfg, _SnapshotSync()
        if not ray.is_initialized():
            if cfg.ray_address:  # multi-node: join the running cluster
                ray.init(address=cfg.ray_address)
            else:
                ray.init(num_cpus=cfg.workers, include_dashboard=False)
        actor = ray.remote(num_cpus=1)(RolloutWorker)
        self.actors = [actor.remote(cfg, i, 1) for i in range(cfg.workers)]

    def collect(self, update: int, weights: Weights, snapshots: dict[int, Weights],
                pool: list[tuple[int, float]], imitate: bool = False) -> Rollout:
        """One update's rollouts from every actor (weights shared through the object store)."""
        w_ref, s_ref = self.ray.put(weights), self.ray.put(self.sync.new(snapshots))
        futures = [a.collect.remote(update, w_ref, s_ref, pool, self.cfg.decisions_per_worker, imitate)
                   for a in self.actors]
        return Rollout.concat(self.ray.get(futures))

    def close(self) -> None:
        """Stop the actors (Ray itself keeps running)."""
        for a in self.actors:
            self.ray.kill(a)


class InlineWorkers:
    """One rollout worker in the learner's own process (``cfg.workers`` is ignored)."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg, self.sync = cfg, _SnapshotSync()
        self.worker = RolloutWorker(cfg, 0)

    def collect(self, update: int, weights: Weights, snapshots: dict[int, Weights],
                pool: list[tuple[int, float]], imitate: bool = False) -> Rollout:
        """One update's rollouts."""
        return self.worker.collect(update, weights, self.sync.new(snapshots), pool,
                                   self.cfg.decisions_per_worker, imitate)

    def close(self) -> None:
        """Nothing to stop."""


def make_workers(cfg: TrainConfig) -> LocalWorkers | RayWorkers | InlineWorkers:
    """The rollout backend named by ``cfg.backend``."""
    return {"local": LocalWorkers, "ray": RayWorkers, "inline": InlineWorkers}[cfg.backend](cfg)
