"""Compiled (numba) batch versions of the baselines, one module per Python module they mirror.

``features`` ↔ :mod:`agents.features` (observation decoding, shanten and useful draws),
``heuristic`` ↔ :mod:`agents.heuristic` (and the plain-win points of
:func:`mjenv.rules.blood_battle.score_win` it values waits with), ``heuristic_joy`` ↔
:mod:`agents.heuristic_joy`, ``lookahead`` ↔ :mod:`agents.lookahead`, ``lookahead_joy`` ↔
:mod:`agents.lookahead_joy`. The pairing keeps each
compiled function next to the readable one it must agree with: the Python versions stay the
reference (``act``, ``lookahead``) that the tests compare against, and each compiled function
takes a whole batch and chooses exactly what the Python chooses, tie-breaks included.

Importing compiles nothing: numba compiles on the first call and caches the machine code on disk;
importing drops that cache when any source it may have compiled in changed (:mod:`mjenv.vector.cache`).
"""

from __future__ import annotations

from pathlib import Path

import mjenv
from mjenv.vector.cache import drop_stale_cache

_ROOT = Path(__file__).parent
# These functions inline the compiled engine (the search), mjenv's constants and each other (they
# own theirs: the readable modules import from here, never the reverse), so any of those sources
# changing drops this package's cache too.
drop_stale_cache(_ROOT, [*sorted(_ROOT.glob("*.py")), *sorted(Path(mjenv.__file__).parent.rglob("*.py"))])
