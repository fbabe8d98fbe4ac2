"""Geometry of xyxy boxes (``(N, 4)`` arrays: x1, y1, x2, y2): areas, overlaps, IoU, duplicates, rows."""

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


def drop_duplicates(
    boxes: np.ndarray, confidences: np.ndarray | None, *, iou: float, cover: float | None = None
) -> tuple[list[int], list[tuple[int, int]]]:
    """Two boxes on one tile: greedy, most confident first (``confidences`` None: in order), a box
    overlapping a kept one by ``iou`` (intersection over union), or covered by ``cover`` of its area
    (or covering it), is dropped.

    Returns the kept indices (ascending) and ``(dropped, kept in its place)`` pairs.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    area = areas(boxes)
    inter = intersections(boxes, boxes)
    union = area[:, None] + area[None, :] - inter
    smaller = np.minimum(area[:, None], area[None, :])
    same = (inter > 0) & (inter >= iou * union)
    if cover is not None:
        same |= (inter > 0) & (inter >= cover * smaller)
    ranks = np.zeros(len(boxes)) if confidences is None else np.asarray(confidences, np.float64)
    order = sorted(range(len(boxes)), key=lambda i: (-float(ranks[i]), i))
    kept: list[int] = []
    dropped: list[tuple[int, int]] = []
    for i in order:
        covering = [k for k in kept if same[i, k]]
        if covering:
            dropped.append((i, covering[0]))
        else:
            kept.append(i)
    return sorted(kept), dropped


NEIGHBOUR_REACH = 1.3  # a neighbour's centre lies within this many tile sizes (sqrt of the box area)
NEIGHBOUR_GAP = 0.3  # ... and no nearer than this many
NEIGHBOUR_SIZES = 1.5  # a neighbour is at most this much larger or smaller


def row_directions(boxes: np.ndarray, scores: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each box's row as its nearest neighbours of about its size show it: the row's direction in
    degrees (-90, 90], image axes with y down, 0 along the x axis) and its pitch (centre to centre);
    NaN for both where a box has no such neighbour.

    With a neighbour on either side the direction runs from one to the other; else it points to the
    nearest neighbour. A box overlapping a surer one (``scores``; without them, an earlier one) by half
    its union or more is a second box on one tile, or one straddling two: never a neighbour.
    """
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    angles = np.full(len(boxes), np.nan)
    pitches = np.full(len(boxes), np.nan)
    if len(boxes) < 2:
        return angles, pitches
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    sizes = np.sqrt(np.maximum(areas(boxes), 1e-9))
    distances = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    larger, smaller = np.maximum(sizes[:, None], sizes[None]), np.minimum(sizes[:, None], sizes[None])
    # a box much nearer than a tile is the same tile seen twice
    near = (distances > NEIGHBOUR_GAP * smaller) & (distances < NEIGHBOUR_REACH * larger)
    near &= larger < NEIGHBOUR_SIZES * smaller
    _, seconds = drop_duplicates(boxes, scores, iou=0.5)
    near[:, [second for second, _ in seconds]] = False
    for i in range(len(boxes)):
        nearest = [int(j) for j in np.argsort(distances[i], kind="stable") if near[i, j]][:2]
        if not nearest:
            continue
        if len(nearest) == 2 and np.dot(*(centres[nearest] - centres[i])) < 0:  # one on either side
            step, pitch = centres[nearest[1]] - centres[nearest[0]], distances[nearest[0], nearest[1]] / 2
        else:
            step, pitch = centres[nearest[0]] - centres[i], distances[i, nearest[0]]
        angle = np.degrees(np.arctan2(step[1], step[0]))
        angles[i] = 90.0 - (90.0 - angle) % 180.0  # folded into (-90, 90]
        pitches[i] = pitch
    return angles, pitches
