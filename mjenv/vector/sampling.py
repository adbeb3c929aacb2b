"""Uniformly random legal actions for a batch of masks: the random policy of benchmarks and
opponents, one uniform draw per table instead of one per action."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _pick(mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """Row t's legal action number ``int(u[t] * n)`` of its ``n`` (-1 for none), in one branch-free
    pass that lists the legal actions (2-3x faster than counting, then scanning)."""
    legal = np.empty(mask.shape[1] + 1, np.int64)
    for t in range(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):
            legal[n] = a  # kept only when the action is legal (n moves on)
            n += mask[t, a] != 0
        out[t] = legal[min(int(u[t] * n), n - 1)] if n > 0 else -1


def random_actions(action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int64 (N,): a uniformly random legal action per row of ``action_mask`` (N, A); -1 for a row
    with no legal action."""
    mask = np.ascontiguousarray(action_mask)
    if mask.ndim != 2:
        raise ValueError(f"action_mask must be 2-D (tables, actions), got shape {mask.shape}")
    out = np.empty(mask.shape[0], dtype=np.int64)
    _pick(mask, rng.random(mask.shape[0]), out)
    return out
