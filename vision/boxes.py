"""Geometry of xyxy boxes (``(N, 4)`` arrays: x1, y1, x2, y2): areas, overlaps, IoU."""

from __future__ import annotations

import numpy as np


def intersections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, M) intersection areas of boxes a (N, 4) and b (M, 4)."""
    top_left = np.maximum(a[:, None, :2], b[None, :, :2])
    bottom_right = np.minimum(a[:, None, 2:], b[None, :, 2:])
    return np.prod(np.clip(bottom_right - top_left, 0, None), axis=2)


def areas(boxes: np.ndarray) -> np.ndarray:
    return np.prod(boxes[:, 2:] - boxes[:, :2], axis=1)


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix of xyxy boxes a (N,4) and b (M,4)."""
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)), np.float32)
    inter = intersections(a, b)
    return inter / np.maximum(areas(a)[:, None] + areas(b)[None, :] - inter, 1e-9)


def inside_fraction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fraction of each box of a covered by each box of b."""
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)), np.float32)
    return intersections(a, b) / np.maximum(areas(a)[:, None], 1e-9)
