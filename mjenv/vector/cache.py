"""numba's on-disk cache, dropped when a source it may have compiled in changed.

numba checks only the timestamp of the file that defines a compiled function, not of the files
whose functions and constants it compiles in: an edited engine or heuristic would otherwise run
stale machine code in every function that inlined it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

import numba


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
