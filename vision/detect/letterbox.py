"""A photo fitted to the localiser's input (``letterbox``), its raw output read as boxes (``decode_output``),
and the boxes mapped back to the photo (``unletterbox``): pure functions of arrays, no model in them."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect import looks


def letterbox(
    pixels: np.ndarray, shape: int | tuple[int, int]
) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Resize keeping the aspect ratio into a canvas of ``shape`` (height, width; an int: a square),
    centred and padded grey. Returns (image, gain, (pad_x, pad_y)).
    """
    out_h, out_w = (shape, shape) if isinstance(shape, int) else shape
    height, width = pixels.shape[:2]
    gain = min(out_w / width, out_h / height)
    new_w, new_h = max(1, round(width * gain)), max(1, round(height * gain))
    resized = cv2.resize(
        pixels, (new_w, new_h), interpolation=cv2.INTER_AREA if gain < 1 else cv2.INTER_LINEAR
    )
    pad_x, pad_y = (out_w - new_w) / 2, (out_h - new_h) / 2
    top, left = round(pad_y - 0.1), round(pad_x - 0.1)
    canvas = np.full((out_h, out_w, 3), looks.PAD_GREY, np.uint8)
    canvas[top : top + new_h, left : left + new_w] = resized
    return canvas, gain, (left, top)


def unletterbox(
    boxes: np.ndarray, gain: float, pad: tuple[float, float], width: int, height: int
) -> np.ndarray:
    """Map xyxy boxes from the letterboxed canvas back to the original image, clipped to it."""
    mapped = boxes.astype(np.float32).copy()
    mapped[:, [0, 2]] = (mapped[:, [0, 2]] - pad[0]) / gain
    mapped[:, [1, 3]] = (mapped[:, [1, 3]] - pad[1]) / gain
    mapped[:, [0, 2]] = mapped[:, [0, 2]].clip(0, width)
    mapped[:, [1, 3]] = mapped[:, [1, 3]].clip(0, height)
    return mapped


def decode_output(
    output: np.ndarray, conf: float, iou: float, *, end2end: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The localiser's raw output for one image as boxes (xyxy, in the letterboxed canvas), scores and the
    model's class indices, at or above ``conf``: an end-to-end model's (max_det, 6) rows (x1, y1, x2, y2,
    score, class) as they are; otherwise (4 + classes, anchors) columns (cx, cy, w, h, class scores), each
    anchor's likeliest class, suppressed at ``iou``."""
    if end2end:
        output = output[output[:, 4] >= conf]
        return output[:, :4], output[:, 4], output[:, 5].astype(np.int64)
    output = output.T
    class_scores = output[:, 4:]
    classes = class_scores.argmax(1)
    scores = class_scores[np.arange(len(classes)), classes]
    mask = scores >= conf
    centre, size = output[mask, :2], output[mask, 2:4]
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    scores, classes = scores[mask], classes[mask]
    keep = looks.merge(boxes, scores, classes, iou)
    return boxes[keep], scores[keep], classes[keep]
