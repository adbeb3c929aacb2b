"""Compiled (numba) batch versions of the baselines, one module per Python module they mirror.

``features`` ↔ :mod:`agents.features` (observation decoding, shanten and useful draws),
``heuristic`` ↔ :mod:`agents.heuristic`, ``heuristic_joy`` ↔ :mod:`agents.heuristic_joy`,
``lookahead`` ↔ :mod:`agents.lookahead`. Each takes a whole batch of observations and masks and
chooses exactly what the Python version chooses, tie-breaks included; the Python versions stay
the readable reference that the tests compare against. Importing this package compiles nothing:
numba compiles on the first call (cached on disk across runs).
"""
