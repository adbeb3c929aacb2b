"""Where rollout workers run: ``local`` processes (the default), ``ray`` actors, or ``inline``.

Each backend holds ``cfg.workers`` :class:`~train.rollout.RolloutWorker` objects and offers
``submit`` (start one update's rollouts on every worker and return at once), ``receive`` (wait for
them and join their batches) and ``collect`` (both), so the learner can update while the workers
play the next batch (``overlap``). Snapshot weights
are sent to a worker once and cached there until the snapshot leaves the pool.
``inline`` runs one worker in the learner's process (for debugging and quick tests).

Local workers hand their rollouts back through shared memory (:mod:`train.transport`).
"""

from __future__ import annotations

import multiprocessing
from abc import ABC, abstractmethod
from typing import Any

from .config import TrainConfig
from .records import Rollout, Weights
from .rollout import RolloutWorker
from .transport import Outbox, free_block, read_shared


class _Backend(ABC):
    """A rollout backend: ``submit`` then ``receive`` one update's rollouts, or ``collect`` both."""

    @abstractmethod
    def submit(self, update: int, weights: Weights, snapshots: dict[int, Weights],
               pool: list[tuple[int, float]], imitate: bool = False) -> None:
        """Start one update's rollouts on every worker; return at once."""

    @abstractmethod
    def receive(self) -> Rollout:
        """Wait for the submitted rollouts; every worker's, joined."""

    def collect(self, update: int, weights: Weights, snapshots: dict[int, Weights],
                pool: list[tuple[int, float]], imitate: bool = False) -> Rollout:
        """One update's rollouts from every worker, in turn."""
        self.submit(update, weights, snapshots, pool, imitate)
        return self.receive()


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
    """Worker process loop: a collect request in, a Rollout out (through its :class:`~train.transport.Outbox`); None stops it."""
    worker = RolloutWorker(cfg, index, torch_threads=1)  # one core per worker
    outbox = Outbox()
    try:
        while True:
            try:
                request = conn.recv()
            except EOFError:  # the learner is gone (killed): nothing left to do
                return
            if request is None:
                return
            conn.send(outbox.share(worker.collect(*request)))
    finally:
        outbox.close()


class LocalWorkers(_Backend):
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
        self.outboxes: list[str | None] = [None] * cfg.workers  # each worker's block, to free if it is killed

    def submit(self, update: int, weights: Weights, snapshots: dict[int, Weights],
               pool: list[tuple[int, float]], imitate: bool = False) -> None:
        """Start one update's rollouts on every worker."""
        if any(self.busy):  # a worker reuses its block for the next answer: the last one must be read first
            raise RuntimeError("receive() the submitted rollouts before submitting more")
        request = (update, weights, self.sync.new(snapshots), pool, self.cfg.decisions_per_worker, imitate)
        for i, conn in enumerate(self.conns):
            try:
                conn.send(request)
            except BrokenPipeError:
                self._dead(i)
            self.busy[i] = True

    def receive(self) -> Rollout:
        """The submitted rollouts of every worker, joined."""
        messages = []
        for i, conn in enumerate(self.conns):
            try:
                messages.append(conn.recv())
                self.outboxes[i] = messages[-1][1] or self.outboxes[i]
            except (EOFError, ConnectionResetError):
                self._dead(i)
            self.busy[i] = False
        return read_shared(messages, Rollout.concat)

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
                proc.join(timeout=10)
        for name in self.outboxes:  # a worker stopped by a signal could not free its block
            if name is not None:
                free_block(name)


class RayWorkers(_Backend):
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
        self.futures: list[Any] = []

    def submit(self, update: int, weights: Weights, snapshots: dict[int, Weights],
               pool: list[tuple[int, float]], imitate: bool = False) -> None:
        """Start one update's rollouts on every actor (weights shared through the object store)."""
        w_ref, s_ref = self.ray.put(weights), self.ray.put(self.sync.new(snapshots))
        self.futures = [a.collect.remote(update, w_ref, s_ref, pool, self.cfg.decisions_per_worker, imitate)
                        for a in self.actors]

    def receive(self) -> Rollout:
        """The submitted rollouts of every actor, joined."""
        futures, self.futures = self.futures, []
        return Rollout.concat(self.ray.get(futures))

    def close(self) -> None:
        """Stop the actors (Ray itself keeps running)."""
        for a in self.actors:
            self.ray.kill(a)


class InlineWorkers(_Backend):
    """One rollout worker in the learner's own process (``cfg.workers`` is ignored)."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg, self.sync = cfg, _SnapshotSync()
        self.worker = RolloutWorker(cfg, 0)

    def submit(self, update: int, weights: Weights, snapshots: dict[int, Weights],
               pool: list[tuple[int, float]], imitate: bool = False) -> None:
        """Keep the request: the rollouts run when ``receive`` asks for them (nothing overlaps)."""
        self.request = (update, weights, self.sync.new(snapshots), pool, self.cfg.decisions_per_worker, imitate)

    def receive(self) -> Rollout:
        """The kept request's rollouts."""
        return self.worker.collect(*self.request)

    def close(self) -> None:
        """Nothing to stop."""


def make_workers(cfg: TrainConfig) -> LocalWorkers | RayWorkers | InlineWorkers:
    """The rollout backend named by ``cfg.backend``."""
    return {"local": LocalWorkers, "ray": RayWorkers, "inline": InlineWorkers}[cfg.backend](cfg)
