"""The uint8 form of compiled observations (``observation_dtype="uint8"``): the reference's
:meth:`mjenv.encoding._PlaneRanges.to_uint8`, row by row, with the same float32 arithmetic."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def quantize_rows(src: np.ndarray, rows: np.ndarray, scale: np.ndarray, offset: np.ndarray,
                  dst: np.ndarray) -> None:
    """``dst[t] = clip(rint(src[t]·scale + offset), 0, 255)`` per plane, for every ``t`` in ``rows``."""
    for j in range(len(rows)):
        t = rows[j]
        for p in range(src.shape[1]):
            sc, of = scale[p], offset[p]
            for k in range(src.shape[2]):
                q = np.rint(src[t, p, k] * sc + of)
                dst[t, p, k] = 0 if q < 0 else (255 if q > 255 else np.uint8(q))
