"""How local rollout workers hand their rollouts back to the learner: through shared memory.

A rollout's arrays are about 8 KB per decision (float32 observations), some 110 MB per worker and
collection; pickled through a pipe they took longer than half the next collection
(``docs/experiments/2026-12-03-rollout-shared-memory.md``). A worker's :class:`Outbox` pickles the rollout with
its arrays out of band (protocol 5) into a shared-memory block that it reuses, and sends only the
small pickle and the block's name; the learner reads the arrays in place with
:func:`read_shared` while it joins them (``Rollout.concat``), which is the one copy.
"""

from __future__ import annotations

import errno
import os
import pickle
import warnings
from multiprocessing.shared_memory import SharedMemory
from typing import Any, Callable

__all__ = ["Outbox", "free_block", "read_shared"]


def _reserved(block: SharedMemory) -> bool:
    """Allocate the block's memory now, so that a full ``/dev/shm`` shows here (False) rather than
    as a SIGBUS that kills the worker in the middle of the copy. True where there is no
    ``/dev/shm`` file to allocate (not Linux)."""
    path = os.path.join("/dev/shm", block.name.lstrip("/"))
    if not os.path.exists(path):
        return True
    fd = os.open(path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, block.size)
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
        return False
    finally:
        os.close(fd)
    return True


class Outbox:
    """A worker's shared-memory block, reused for every answer (fresh pages cost more than the
    copy on these VMs) and grown when an answer does not fit; the worker unlinks it when it stops.
    Where ``/dev/shm`` is too small (Docker's default is 64 MB) answers go through the pipe."""

    def __init__(self) -> None:
        self.block: SharedMemory | None = None
        self.warned = False

    def share(self, obj: Any) -> tuple[bytes, str | None, list[int]]:
        """Pickle ``obj`` with its arrays' bytes out of band, copied into the block: ``(pickle,
        block name, buffer sizes)`` for :func:`read_shared` (name None: all in the pickle). The
        previous answer must have been read."""
        buffers: list[pickle.PickleBuffer] = []
        data = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
        raws = [b.raw() for b in buffers]
        size = sum(r.nbytes for r in raws)
        if self.block is None or self.block.size < size:
            self.close()
            block = SharedMemory(create=True, size=max(1, size + size // 4))  # room to grow
            if not _reserved(block):
                block.close()
                block.unlink()
                if not self.warned:
                    warnings.warn(f"/dev/shm has no room for a {block.size >> 20} MB rollout: rollouts go "
                                  "through the pipe, more slowly (docker run --shm-size=1g gives them room)",
                                  RuntimeWarning, stacklevel=2)
                    self.warned = True
                return pickle.dumps(obj, protocol=5), None, []
            self.block = block
        at = 0
        for r in raws:
            self.block.buf[at:at + r.nbytes] = r
            at += r.nbytes
        return data, self.block.name, [r.nbytes for r in raws]

    def close(self) -> None:
        """Free the block."""
        if self.block is not None:
            self.block.close()
            self.block.unlink()
            self.block = None


def read_shared(messages: list[tuple[bytes, str | None, list[int]]], use: Callable[[list[Any]], Any]) -> Any:
    """``use(objects)`` for the objects that :meth:`Outbox.share` sent, their arrays read in place
    from the workers' blocks: ``use`` must copy what it keeps (``Rollout.concat`` does)."""
    blocks = [SharedMemory(name=name) for _, name, _ in messages if name is not None]
    objects: list[Any] = []
    views: list[memoryview] = []
    try:
        opened = iter(blocks)
        for data, name, sizes in messages:
            if name is None:  # sent through the pipe
                objects.append(pickle.loads(data))
                continue
            block, mine, at = next(opened), [], 0
            for n in sizes:
                mine.append(block.buf[at:at + n])
                at += n
            views += mine
            objects.append(pickle.loads(data, buffers=mine))
        return use(objects)
    finally:
        objects.clear()  # drops the arrays over the blocks (a traceback through `use` shares this list)
        for v in views:
            v.release()
        for block in blocks:
            block.close()


def free_block(name: str) -> None:
    """Unlink a worker's shared-memory block unless the worker already did."""
    try:
        block = SharedMemory(name=name)
    except FileNotFoundError:
        return
    block.close()
    block.unlink()
