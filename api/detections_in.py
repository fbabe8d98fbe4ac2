"""Detections as the API takes them (``/group``, ``/examples``), converted to the library's ``Detections``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from api.errors import ApiError
from vision.detections import CLASS_IDS, Detections

DetectionItem = tuple[str, Sequence[float], float, Sequence[tuple[str, float]]]
"""A detection as the API takes it: class name, box, confidence, alternatives (suited name, confidence)."""


def detections_from(items: Sequence[DetectionItem], size: tuple[int, int]) -> Detections:
    """Detections read from the API (already validated) as ``Detections``.

    Every row gets as many alternatives as the longest list given; the missing ones have confidence 0,
    which the re-reading never takes.
    """
    if not items:
        return Detections.empty(size)
    width = max(len(others) for *_, others in items)
    alternatives = np.zeros((len(items), width), np.int64)
    alternative_confidences = np.zeros((len(items), width), np.float32)
    for row, (*_, others) in enumerate(items):
        for rank, (name, confidence) in enumerate(others):
            alternatives[row, rank] = CLASS_IDS[name]
            alternative_confidences[row, rank] = confidence
    return Detections(
        np.array([box for _, box, _, _ in items], np.float32),
        np.array([CLASS_IDS[name] for name, _, _, _ in items], np.int64),
        np.array([confidence for _, _, confidence, _ in items], np.float32),
        size,
        alternatives if width else None,
        alternative_confidences if width else None,
    )


def detections_in_photo(items: Sequence[DetectionItem], size: tuple[int, int]) -> Detections:
    """As ``detections_from``; a box outside the photo raises ``ApiError`` 422 ``box_outside_image``."""
    width, height = size
    for index, (_, (x1, y1, x2, y2), _, _) in enumerate(items):
        if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
            raise ApiError(
                422, "box_outside_image", f"detections[{index}].box lies outside the {width}x{height} photo"
            )
    return detections_from(items, size)
