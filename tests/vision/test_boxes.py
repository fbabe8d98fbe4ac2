"""Two boxes on one tile (``vision.geometry.boxes.drop_duplicates``): the grouper and the row finder share
it."""

from __future__ import annotations

import numpy as np

from vision.geometry.boxes import drop_duplicates

TILE = [0.0, 0.0, 30.0, 40.0]
SHIFTED = [6.0, 0.0, 36.0, 40.0]  # IoU 0.67 with TILE
INNER = [5.0, 5.0, 20.0, 25.0]  # wholly inside TILE, IoU 0.25
NEIGHBOUR = [31.0, 0.0, 61.0, 40.0]  # the next tile of a row: touching, not overlapping


def test_the_surer_of_two_overlapping_boxes_is_kept() -> None:
    boxes = np.array([TILE, SHIFTED, NEIGHBOUR], np.float32)
    assert drop_duplicates(boxes, np.array([0.4, 0.9, 0.8]), iou=0.5) == ([1, 2], [(0, 1)])
    assert drop_duplicates(boxes, np.array([0.9, 0.4, 0.8]), iou=0.5) == ([0, 2], [(1, 0)])


def test_without_confidences_the_earlier_box_is_kept() -> None:
    boxes = np.array([SHIFTED, TILE], np.float32)
    assert drop_duplicates(boxes, None, iou=0.5) == ([0], [(1, 0)])


def test_a_box_inside_another_is_a_duplicate_only_when_cover_is_asked() -> None:
    boxes = np.array([TILE, INNER], np.float32)
    confidences = np.array([0.9, 0.8])
    assert drop_duplicates(boxes, confidences, iou=0.5) == ([0, 1], [])
    assert drop_duplicates(boxes, confidences, iou=0.5, cover=0.85) == ([0], [(1, 0)])


def test_tiles_side_by_side_are_all_kept() -> None:
    row = np.array([[31.0 * k, 0.0, 31.0 * k + 30.0, 40.0] for k in range(14)], np.float32)
    assert drop_duplicates(row, np.linspace(0.5, 0.9, 14), iou=0.5, cover=0.85) == (list(range(14)), [])
