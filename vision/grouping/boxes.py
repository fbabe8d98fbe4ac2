"""Duplicate boxes: two detections of one tile."""

from __future__ import annotations

import numpy as np

from vision.boxes import areas, intersections


def drop_duplicates(
    boxes: np.ndarray, confidences: np.ndarray, *, iou: float, cover: float
) -> tuple[list[int], list[tuple[int, int]]]:
    """Greedy, most confident first: a box overlapping a kept one by ``iou`` (intersection over union),
    or covered by ``cover`` of its area (or covering it), is dropped.

    Returns the kept indices (ascending) and ``(dropped, kept in its place)`` pairs.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    area = areas(boxes)
    inter = intersections(boxes, boxes)
    union = area[:, None] + area[None, :] - inter
    smaller = np.minimum(area[:, None], area[None, :])
    same = (inter > 0) & ((inter >= iou * union) | (inter >= cover * smaller))
    order = sorted(range(len(boxes)), key=lambda i: (-float(confidences[i]), i))
    kept: list[int] = []
    dropped: list[tuple[int, int]] = []
    for i in order:
        covering = [k for k in kept if same[i, k]]
        if covering:
            dropped.append((i, covering[0]))
        else:
            kept.append(i)
    return sorted(kept), dropped
