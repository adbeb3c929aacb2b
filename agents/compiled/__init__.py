"""Compiled (numba) batch versions of the baselines, one module per Python module they mirror.

``features`` ↔ :mod:`agents.features` (observation decoding, shanten and useful draws),
``heuristic`` ↔ :mod:`agents.heuristic` (and the plain-win points of
:func:`mjenv.rules.sichuan.score_win` it values waits with), ``heuristic_joy`` ↔
:mod:`agents.heuristic_joy`, ``lookahead`` ↔ :mod:`agents.lookahead`, ``lookahead_joy`` ↔
:mod:`agents.lookahead_joy`. The pairing keeps each
compiled function next to the readable one it must agree with: the Python versions stay the
reference (``act``, ``lookahead``) that the tests compare against, and each compiled function
takes a whole batch and chooses exactly what the Python chooses, tie-breaks included.

Importing compiles nothing: numba compiles on the first call and caches the machine code on disk.
"""
