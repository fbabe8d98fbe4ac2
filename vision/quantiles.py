"""Percentiles and medians of the small arrays a photo's boxes and crops give, by a partial sort.

NumPy's ``percentile`` and ``median`` spend tens of microseconds a call on checks and dispatch, more than the
sort itself of a tile's crop (a few thousand values) or of a row's boxes (a dozen): a photo asks for a few
hundred of them. These give the same values (NumPy's default, linear interpolation between the two nearest
ranks) from ``np.partition`` or one ``np.sort``, for arrays without NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def percentile(values: np.ndarray | Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of all of ``values``, as ``np.percentile`` gives it."""
    return percentiles(values, (q,))[0]


def percentiles(values: np.ndarray | Sequence[float], qs: Sequence[float]) -> list[float]:
    """The ``qs``-th percentiles (0-100) of all of ``values``, as ``np.percentile`` gives them."""
    flat = np.asarray(values).ravel()
    if not flat.size:
        raise ValueError("percentiles of no values")
    ranks = [_ranks(q, flat.size) for q in qs]
    ranked = np.partition(flat, sorted({rank for low, high, _ in ranks for rank in (low, high)}))
    return [_lerp(float(ranked[low]), float(ranked[high]), weight) for low, high, weight in ranks]


def median(values: np.ndarray | Sequence[float]) -> float:
    """The median of all of ``values``, as ``np.median`` gives it."""
    return percentiles(values, (50.0,))[0]


def column_percentile(values: np.ndarray, q: float) -> np.ndarray:
    """The ``q``-th percentile (0-100) of each column of a 2-D array, as ``np.percentile(values, q,
    axis=0)`` gives it (float64)."""
    ranked = np.sort(np.asarray(values), axis=0)
    if not len(ranked):
        raise ValueError("percentiles of no values")
    low, high, weight = _ranks(q, len(ranked))
    return _lerp(ranked[low].astype(np.float64), ranked[high].astype(np.float64), weight)


def _ranks(q: float, size: int) -> tuple[int, int, float]:
    """The two ranks (0-based) the ``q``-th percentile of ``size`` values lies between, and its weight
    toward the upper one."""
    position = q / 100.0 * (size - 1)
    low = min(int(position), size - 1)
    return low, min(low + 1, size - 1), position - low


def _lerp(below: Any, above: Any, weight: float) -> Any:
    """NumPy's interpolation between neighbouring ranks: from the nearer of the two, so that a weight of
    0 or 1 gives that rank exactly."""
    if weight >= 0.5:
        return above - (above - below) * (1.0 - weight)
    return below + (above - below) * weight
