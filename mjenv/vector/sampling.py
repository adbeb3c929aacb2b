"""Uniformly random legal actions for a batch of masks: the random policy of benchmarks and
opponents, one uniform draw per table instead of one per action."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _pick(mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    for t in range(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):
            n += mask[t, a] != 0
        k = min(int(u[t] * n), n - 1)
        out[t] = -1
        for a in range(mask.shape[1]):
            if mask[t, a] != 0:
                if k == 0:
                    out[t] = a
                    break
                k -= 1


def random_actions(action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int64 (N,): a uniformly random legal action per row of ``action_mask`` (N, A); -1 for a row
    with no legal action."""
    mask = np.ascontiguousarray(action_mask)
    if mask.ndim != 2:
        raise ValueError(f"action_mask must be 2-D (tables, actions), got shape {mask.shape}")
    out = np.empty(mask.shape[0], dtype=np.int64)
    _pick(mask, rng.random(mask.shape[0]), out)
    return out
