"""Boxes on parts of a tile, before the faces are read: a single pip of a 筒 tile, the upper or lower half
of a tile boxed apart, a box a fraction of its neighbours' size.

The localiser sometimes boxes a part of a tile as well as, or instead of, the tile: a 2-9 筒's pip looks
like a 1 筒, and the two halves of a 4 筒 each look like a 2 筒. Read as they are, each becomes a tile
that is not there. A box is a part of a tile when

- it lies inside a larger box (``NESTED`` of its area covered) at most ``PART_AREA`` of that box's area:
  a pip or a printed detail inside its tile's box (a box inside one twice its size is left to the row
  fitting: a tile inside a box drawn over two tiles, ``vision.detect.rowfit.split_doubles``);
- or, beside at least ``MIN_NEIGHBOURS`` tiles near it, its area is at most ``PART_AREA`` of their median:
  a pip boxed where its tile got no box of its own, a sliver of a tile behind another.

Two boxes stacked one above the other, each about half as tall as their neighbours (``HALF``), overlapping
across by ``ACROSS`` of the narrower, together as tall as them (``WHOLE``), are the halves of one tile: they
are joined into one box, the surer's score. Pure geometry on numpy arrays, so it is tested on drawn boxes.
"""

from __future__ import annotations

import numpy as np

from vision.detect.looks import CONFIDENT
from vision.geometry.boxes import areas, intersections

NESTED = 0.85  # of a box's area inside a larger box: it lies in it
PART_AREA = 0.3  # a box this fraction of a box it lies in, or of its neighbours' median area, is a part
NEIGHBOUR_REACH = 1.6  # neighbours: confident boxes whose centres lie within this many of their own sizes
MIN_NEIGHBOURS = 2
HALF = (0.35, 0.7)  # of the neighbours' median height: a half of a tile
ACROSS = 0.7  # the halves overlap across by this much of the narrower
WHOLE = (0.8, 1.25)  # of the neighbours' median height: two halves together


def without_parts(
    boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boxes, scores and classes with the halves of a tile joined and the parts of tiles dropped."""
    boxes, scores, classes = join_halves(boxes, scores, classes)
    keep = ~parts(boxes, scores)
    return boxes[keep], scores[keep], classes[keep]


def _neighbour_medians(boxes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each box: how many confident neighbours it has (others whose centre lies within
    ``NEIGHBOUR_REACH`` of their size of its centre), their median area and median height (NaN with none)."""
    count = np.zeros(len(boxes), np.int64)
    area = np.full(len(boxes), np.nan)
    height = np.full(len(boxes), np.nan)
    if len(boxes) < 2:
        return count, area, height
    box_areas = areas(boxes)
    sizes = np.sqrt(np.maximum(box_areas, 1e-9))
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    distances = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    near = (distances < NEIGHBOUR_REACH * sizes[None]) & (scores[None] >= CONFIDENT)
    np.fill_diagonal(near, False)
    heights = boxes[:, 3] - boxes[:, 1]
    for i in range(len(boxes)):
        others = np.flatnonzero(near[i])
        count[i] = len(others)
        if len(others):
            area[i] = float(np.median(box_areas[others]))
            height[i] = float(np.median(heights[others]))
    return count, area, height


def parts(boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """True for each box that is a part of a tile (the module docstring): nested in a box more than
    ``1 / PART_AREA`` its size, or that small beside ``MIN_NEIGHBOURS`` or more tiles."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    part = np.zeros(len(boxes), bool)
    if len(boxes) < 2:
        return part
    box_areas = areas(boxes)
    inside = intersections(boxes, boxes) / np.maximum(box_areas[:, None], 1e-9)
    np.fill_diagonal(inside, 0.0)
    small = box_areas[:, None] <= PART_AREA * box_areas[None]
    part |= ((inside >= NESTED) & small).any(axis=1)
    count, area, _ = _neighbour_medians(boxes, np.asarray(scores, np.float64))
    with np.errstate(invalid="ignore"):
        part |= (count >= MIN_NEIGHBOURS) & (box_areas <= PART_AREA * area)
    return part


def join_halves(
    boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two boxes on the upper and lower halves of one tile joined into one (the module docstring)."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    if len(boxes) < 2:
        return boxes, scores, classes
    count, _, height = _neighbour_medians(boxes, np.asarray(scores, np.float64))
    heights = boxes[:, 3] - boxes[:, 1]
    widths = boxes[:, 2] - boxes[:, 0]
    with np.errstate(invalid="ignore"):
        half = (count >= MIN_NEIGHBOURS) & (heights >= HALF[0] * height) & (heights <= HALF[1] * height)
    order = np.argsort(-np.asarray(scores), kind="stable")
    joined: dict[int, np.ndarray] = {}
    gone: set[int] = set()
    for i in order:
        if not half[i] or i in gone or i in joined:
            continue
        for j in order:
            if j == i or not half[j] or j in gone or j in joined:
                continue
            across = min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0])
            if across < ACROSS * min(widths[i], widths[j]):
                continue
            union = np.array(
                [*np.minimum(boxes[i, :2], boxes[j, :2]), *np.maximum(boxes[i, 2:], boxes[j, 2:])], np.float32
            )
            tall = (union[3] - union[1]) / np.nanmean([height[i], height[j]])
            if WHOLE[0] <= tall <= WHOLE[1]:
                joined[int(i)] = union
                gone.add(int(j))
                break
    if not joined:
        return boxes, scores, classes
    out = boxes.copy()
    for i, union in joined.items():
        out[i] = union
    keep = np.array([k not in gone for k in range(len(boxes))])
    return out[keep], scores[keep], classes[keep]
