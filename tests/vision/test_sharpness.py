"""How sharp a photo's tiles are for their size (``vision.detect.sharpness``)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect.sharpness import BLURRED, photo_sharpness, tile_sharpness


def _tiles(side: int, blur: float, contrast: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A grey photo of three tiles ``side`` pixels wide with dark strokes on their faces, blurred by a
    Gaussian of ``blur`` pixels; their boxes."""
    height = int(side * 1.4)
    image = np.full((2 * height, 5 * side, 3), 90, np.uint8)
    boxes = []
    for k in range(3):
        x, y = side // 2 + k * (side + side // 4), height // 2
        cv2.rectangle(image, (x, y), (x + side, y + height), (235, 235, 225), -1)
        for stroke in range(3):  # 三-like bars and a stroke down
            sy = y + int(height * (0.25 + 0.2 * stroke))
            cv2.line(image, (x + side // 5, sy), (x + 4 * side // 5, sy), (40, 30, 30), max(1, side // 14))
        top, bottom = (x + side // 2, y + height // 6), (x + side // 3, y + 5 * height // 6)
        cv2.line(image, top, bottom, (160, 20, 20), max(1, side // 16))
        boxes.append((x, y, x + side, y + height))
    image = (90 + (image.astype(np.float32) - 90) * contrast).clip(0, 255).astype(np.uint8)
    if blur > 0:
        image = cv2.GaussianBlur(image, (0, 0), blur)
    return image, np.array(boxes, np.float32)


def test_sharpness_falls_as_the_blur_widens() -> None:
    values = [photo_sharpness(*_tiles(40, blur)) for blur in (0.0, 0.8, 1.6, 3.2)]
    assert all(v is not None for v in values)
    assert values == sorted(values, reverse=True) and len(set(values)) == 4
    assert values[0] >= BLURRED > values[-1]  # sharp tiles pass, tiles blurred over most of a stroke do not


@pytest.mark.parametrize("side", [30, 60, 120])
def test_the_same_blur_in_tile_widths_measures_alike_at_any_size(side: int) -> None:
    reference = photo_sharpness(*_tiles(60, 1.5))
    value = photo_sharpness(*_tiles(side, 1.5 * side / 60))
    assert reference is not None and value is not None
    assert value == pytest.approx(reference, rel=0.1)


def test_lighting_and_contrast_do_not_change_it() -> None:
    full, dim = photo_sharpness(*_tiles(50, 1.0)), photo_sharpness(*_tiles(50, 1.0, contrast=0.4))
    assert full is not None and dim is not None
    assert dim == pytest.approx(full, rel=0.1)


def test_boxes_too_small_off_the_photo_or_flat_are_not_measured() -> None:
    image, _ = _tiles(40, 0.0)
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    assert tile_sharpness(gray, np.array([10, 10, 15, 40], np.float32)) is None  # 5 px wide
    assert tile_sharpness(gray, np.array([9000, 10, 9050, 60], np.float32)) is None  # beyond the image
    assert photo_sharpness(image, np.zeros((0, 4), np.float32)) is None
    assert photo_sharpness(np.full_like(image, 128), np.array([[20, 20, 60, 76]], np.float32)) is None  # flat
