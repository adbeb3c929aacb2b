"""The optional planes of both games' compiled encoders (:data:`mjenv.encoding.OPTIONAL_PLANES`):
``escaped`` (S16) and ``balance`` (B4), 4 planes each after the default ones, only when their
rule option is on; the same values as the reference observer's ``_optional_planes``. Rule IDs:
docs/rules-blood-battle.md."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

ESCAPED, BALANCE, ITEMS = 1, 2, 4
"""Bits of ``optional``: which optional views an observer appends (in this order); ``ITEMS``, the
blood battle's item views (S17), last, written by :mod:`.blood_battle` (not here)."""


def optional_bits(observer: Any) -> int:
    """The ``optional`` bits of a reference observer (its ``optional`` views, its item views)."""
    return ((ESCAPED if "escaped" in observer.optional else 0) | (BALANCE if "balance" in observer.optional else 0)
            | (ITEMS if getattr(observer, "item_planes", False) else 0))


@njit(cache=True, nogil=True)
def optional_planes(st, t: int, first: int, optional: int, bean_scale: float, out: np.ndarray, start: int) -> None:
    """The optional planes of table ``t`` into ``out[start:]``, seat ``(first + r) % 4`` in row r:
    an observation's relative seats (``first`` the observer), or the state's absolute ones (0)."""
    p = start
    if optional & ESCAPED:
        for r in range(4):
            out[p + r, :] = st.escaped[t, (first + r) % 4]
        p += 4
    if optional & BALANCE:
        for r in range(4):
            out[p + r, :] = st.balances[t, (first + r) % 4] / bean_scale
