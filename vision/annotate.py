"""Drawing what was found on a photo: boxes with tile names, groups outlined, the winning tile marked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.detections import BACK, HONOUR, Detections

_TILE_COLOUR = (40, 170, 40)
_BACK_COLOUR = (200, 120, 0)
_HONOUR_COLOUR = (200, 0, 200)
_GROUP_COLOURS = [(230, 60, 60), (60, 90, 230), (230, 150, 0), (0, 170, 200), (150, 60, 200), (120, 120, 120)]
_WIN_COLOUR = (255, 0, 0)


def draw_detections(
    pixels: np.ndarray,
    detections: Detections,
    groups: Sequence[Sequence[int]] = (),
    win_index: int | None = None,
    caption: Sequence[str] = (),
) -> np.ndarray:
    """A copy of the RGB image with every detection boxed and named (its full class name, placed where it
    meets no other name: above its box, below it, or a line further out; left out where none is free),
    groups outlined in their colour, and ``caption`` (ASCII lines: the hand, the score, the scale) in a band
    under the photo."""
    canvas = np.ascontiguousarray(pixels.copy())
    scale = max(canvas.shape[:2]) / 1000
    thickness = max(1, round(2 * scale))
    font_scale = max(0.4, 0.6 * scale)
    for number, members in enumerate(groups):
        if not members:
            continue
        boxes = detections.boxes[list(members)]
        x1, y1 = boxes[:, :2].min(axis=0) - 6 * scale
        x2, y2 = boxes[:, 2:].max(axis=0) + 6 * scale
        colour = _GROUP_COLOURS[number % len(_GROUP_COLOURS)]
        cv2.rectangle(canvas, (int(x1), int(y1)), (int(x2), int(y2)), colour, thickness + 1)
    names = [detection.name for detection in detections]
    spots = label_spots(detections.boxes, names, (canvas.shape[1], canvas.shape[0]), font_scale)
    for index, detection in enumerate(detections):
        x1, y1, x2, y2 = (round(v) for v in detection.box)
        colour = (
            _BACK_COLOUR
            if detection.class_id == BACK
            else _HONOUR_COLOUR
            if detection.class_id == HONOUR
            else _TILE_COLOUR
        )
        if index == win_index:
            colour = _WIN_COLOUR
        cv2.rectangle(canvas, (x1, y1), (x2, y2), colour, thickness)
        spot = spots[index]
        if spot is None:
            continue
        left, top, right, bottom = spot
        cv2.rectangle(canvas, (left, top), (right, bottom), colour, -1)
        cv2.putText(
            canvas,
            names[index],
            (left + 1, bottom - 3),
            cv2.FONT_HERSHEY_SIMPLEX,
            font_scale,
            (255, 255, 255),
            1,
            cv2.LINE_AA,
        )
    return _with_caption(canvas, caption, font_scale) if caption else canvas


def label_spots(
    boxes: np.ndarray, names: Sequence[str], size: tuple[int, int], font_scale: float
) -> list[tuple[int, int, int, int] | None]:
    """Where each box's name is drawn, ``(left, top, right, bottom)``: above its box, below it, then a line
    further above or below, centred on it, inside the image (``size``: width, height) and over no name placed
    before it; None where no such place is free (the name is left out rather than drawn over another)."""
    width, height = size
    taken: list[tuple[int, int, int, int]] = []
    spots: list[tuple[int, int, int, int] | None] = []
    for box, name in zip(boxes, names, strict=True):
        x1, y1, x2, y2 = (round(float(v)) for v in box)
        (tw, th), _ = cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)
        w, h = tw + 2, th + 4
        left = min(max(0, (x1 + x2 - w) // 2), max(0, width - w))
        spot = None
        for top in (y1 - h, y2, y1 - 2 * h, y2 + h):
            if top < 0 or top + h > height:
                continue
            if not any(left < b2 and b1 < left + w and top < c2 and c1 < top + h for b1, c1, b2, c2 in taken):
                spot = (left, top, left + w, top + h)
                taken.append(spot)
                break
        spots.append(spot)
    return spots


def _with_caption(canvas: np.ndarray, lines: Sequence[str], font_scale: float) -> np.ndarray:
    """``canvas`` with a white band under it holding ``lines``."""
    (_, th), _ = cv2.getTextSize("Ag", cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)
    step = th * 2
    band = np.full((step * len(lines) + th, canvas.shape[1], 3), 255, np.uint8)
    for number, line in enumerate(lines):
        cv2.putText(
            band,
            line,
            (th, step * (number + 1)),
            cv2.FONT_HERSHEY_SIMPLEX,
            font_scale,
            (0, 0, 0),
            1,
            cv2.LINE_AA,
        )
    return np.vstack([canvas, band])


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")  # what an annotated photo is written as


def check_image_path(path: Path | str) -> Path:
    """``path`` when an annotated photo can be written there by its suffix; raises ``OSError``."""
    path = Path(path)
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        kinds = ", ".join(IMAGE_SUFFIXES)
        raise OSError(f"{path}: an annotated photo is written as {kinds}, not {path.suffix!r}")
    return path


def save_rgb(pixels: np.ndarray, path: Path | str) -> Path:
    """Write RGB ``pixels`` to ``path`` (its folder made); raises ``OSError`` naming the path."""
    path = check_image_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        written = cv2.imwrite(str(path), np.ascontiguousarray(pixels[:, :, ::-1]))
    except (OSError, cv2.error) as error:
        raise OSError(f"{path}: could not write the image ({error})") from None
    if not written:
        raise OSError(f"{path}: could not write the image")
    return path


def pil_font(size: int) -> Any:
    """Pillow's own font at ``size`` pixels (the fixed bitmap one where Pillow lacks FreeType): for images of
    text drawn by the project (the confusion matrix, contact sheets), with no font file to ship."""
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):
        return ImageFont.load_default()
