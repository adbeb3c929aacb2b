"""numba's on-disk cache: dropped when a source it may have compiled in changed, and announced
when it must be filled.

numba checks only the timestamp of the file that defines a compiled function, not of the files
whose functions and constants it compiles in: an edited engine or heuristic would otherwise run
stale machine code in every function that inlined it.

The first compile of a fresh install takes a minute or two in silence (numba says nothing), so
:func:`announce_first_compile` prints one line on stderr when mjenv's or the agents' compiled code
starts compiling instead of loading from the cache: what happens, how long, where the cache is.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any, Iterable

import numba
from numba.core import event

COMPILE_SECONDS = "1-2 minutes on 2 free cores, more on a busy machine"
"""How long the first compile takes, as :data:`COMPILE_NOTICE` says it: docs/vector.md's figures
(blood battle 24-73 s, Joy Mahjong 103 s on the 2-core VM of this project, by its load)."""
COMPILE_NOTICE = ("mjenv: compiling the batched engine and agents (numba) for this machine, once ({seconds}); "
                  "later runs load them from the cache in {folder} (`mjenv warmup` compiles everything ahead, "
                  "e.g. for cluster nodes)")


def drop_stale_cache(root: Path, sources: Iterable[Path]) -> bool:
    """Delete the ``*.nbi`` / ``*.nbc`` files under ``root`` unless ``sources`` (and numba's
    version) are those of the last call; returns whether it deleted. The stamp lives in
    ``root/__pycache__/numba-sources.sha1``."""
    digest = hashlib.sha1(numba.__version__.encode())
    for path in sources:
        digest.update(str(path.relative_to(path.parents[1])).encode() + path.read_bytes())
    stamp = root / "__pycache__" / "numba-sources.sha1"
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except FileNotFoundError:
        pass
    for cached in [*root.rglob("*.nbi"), *root.rglob("*.nbc")]:
        cached.unlink(missing_ok=True)
    try:
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install: numba then caches elsewhere or not at all
        pass
    return True


class _FirstCompileNotice(event.Listener):
    """Prints :data:`COMPILE_NOTICE` at the first compile (not a cache load) of a function of
    ``prefixes``' modules in this process; numba sends "numba:compile" only on a cache miss."""

    def __init__(self, prefixes: tuple[str, ...]) -> None:
        self.prefixes = prefixes
        self.told = False
        self.registered = False

    def on_start(self, ev: Any) -> None:
        dispatcher = ev.data["dispatcher"]
        module = getattr(dispatcher.py_func, "__module__", None) or ""
        if self.told or not module.startswith(self.prefixes):
            return
        self.told = True
        print(COMPILE_NOTICE.format(seconds=COMPILE_SECONDS, folder=_cache_folder(dispatcher, module)),
              file=sys.stderr, flush=True)

    def on_end(self, ev: Any) -> None:
        pass


def _cache_folder(dispatcher: Any, module: str) -> str:
    """Where numba caches ``dispatcher``'s code, for people: the ``__pycache__`` folders under the
    package's sources where it can write there, else its cache folder (``NUMBA_CACHE_DIR``)."""
    path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    package = sys.modules.get(module.split(".")[0])
    root = Path(package.__file__).parent if package is not None and package.__file__ else None
    if path is None:
        return "numba's cache folder"
    if root is not None and Path(path).is_relative_to(root):
        return f"the __pycache__ folders under {root}"
    return str(path)


_NOTICE = _FirstCompileNotice(("mjenv.", "agents."))


def announce_first_compile() -> _FirstCompileNotice:
    """Make the first compile of this process print :data:`COMPILE_NOTICE` (once, however often
    this is called); returns the listener (``told`` says whether it printed)."""
    if not _NOTICE.registered:
        event.register("numba:compile", _NOTICE)
        _NOTICE.registered = True
    return _NOTICE
