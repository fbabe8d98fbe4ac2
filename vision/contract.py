"""The tile classifier's contract, free of any model: the classes it names (the detector's and ``none``), the
crop it reads (its size and margins, cut by ``tile_crops`` or, turned along its row, ``upright_crops``), the
blob those crops make (``crops_to_blob``), the name of its features output and the files a crop folder holds.
Serving (``vision.detect.classifier``), the model factory (``vision.factory``) and the dataset tools share it.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.detections import DETECTOR_CLASSES

NONE = len(DETECTOR_CLASSES)  # "not a tile": the localiser's false alarms
CLASSIFIER_CLASSES: tuple[str, ...] = (*DETECTOR_CLASSES, "none")
CROP_SIZE = 96  # the side the shipped classifier reads (models/manifest.json); training crops are cut so
CROP_MARGIN = 0.08  # of the box's width and height, on each side
BOX_MARGINS = (-0.04, 0.22)  # a training crop's margin on each side, of its box: the localiser's are loose
FEATURES = "features"  # the ONNX output holding each crop's pooled features (vision.factory.face_net)
CROP_SUFFIXES = {".png", ".jpg", ".jpeg"}  # the crop files of a crop folder (``smj dataset crops``)


def tile_crops(
    pixels: np.ndarray,
    boxes: np.ndarray,
    size: int = CROP_SIZE,
    margins: np.ndarray | float = CROP_MARGIN,
) -> np.ndarray:
    """(N, size, size, 3) uint8 crops of ``boxes`` (x1, y1, x2, y2), each widened by ``margins``.

    ``margins`` is one fraction for all sides or an (N, 4) array (left, top, right, bottom).
    A crop is squashed to a square: the network sees every tile with the same aspect.
    """
    height, width = pixels.shape[:2]
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    extra = np.broadcast_to(np.asarray(margins, np.float32), (len(boxes), 4)) if len(boxes) else None
    crops = np.zeros((len(boxes), size, size, 3), np.uint8)
    for i, (x1, y1, x2, y2) in enumerate(boxes):
        assert extra is not None
        w, h = max(x2 - x1, 1.0), max(y2 - y1, 1.0)
        left = int(np.clip(np.floor(x1 - extra[i, 0] * w), 0, width - 1))
        top = int(np.clip(np.floor(y1 - extra[i, 1] * h), 0, height - 1))
        right = int(np.clip(np.ceil(x2 + extra[i, 2] * w), left + 1, width))
        bottom = int(np.clip(np.ceil(y2 + extra[i, 3] * h), top + 1, height))
        patch = pixels[top:bottom, left:right]
        shrinking = patch.shape[0] > size or patch.shape[1] > size
        crops[i] = cv2.resize(
            patch, (size, size), interpolation=cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR
        )
    return crops


def upright_crops(
    pixels: np.ndarray,
    boxes: np.ndarray,
    angles: np.ndarray,
    pitches: np.ndarray,
    size: int = CROP_SIZE,
    margin: float = CROP_MARGIN,
) -> np.ndarray:
    """(N, size, size, 3) uint8 crops of tiles in rows, each turned so that its row runs along
    the x axis (``angles`` in degrees, as ``vision.geometry.boxes.row_directions`` gives them) and cut to the
    tile itself: ``pitches`` wide, as tall as the box and the angle say, widened by ``margin``.

    A box around a tile in a tilted row holds slices of its neighbours; turned, the tile fills the crop.
    Angles and pitches must be finite (boxes in a row).
    """
    crops = np.zeros((len(boxes), size, size, 3), np.uint8)
    for i, ((x1, y1, x2, y2), angle, pitch) in enumerate(zip(boxes, angles, pitches, strict=True)):
        turn = np.radians(abs(float(angle)))
        sin, cos = np.sin(turn), np.cos(turn)
        # the box's sides are pitch*cos + tall*sin and pitch*sin + tall*cos: tall, least squares
        tall = float(
            np.clip((x2 - x1) * sin + (y2 - y1) * cos - 2 * pitch * cos * sin, 0.8 * pitch, 2.2 * pitch)
        )
        out_w, out_h = max(1, round(pitch * (1 + 2 * margin))), max(1, round(tall * (1 + 2 * margin)))
        centre = ((x1 + x2) / 2, (y1 + y2) / 2)
        turning = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), float(angle), 1.0)
        turning[:, 2] += (out_w / 2 - centre[0], out_h / 2 - centre[1])
        patch = cv2.warpAffine(
            pixels, turning, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        shrinking = out_w > size or out_h > size
        crops[i] = cv2.resize(
            patch, (size, size), interpolation=cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR
        )
    return crops


def crops_to_blob(crops: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) uint8 RGB crops -> the network's (N, 3, S, S) float32 input in [0, 1]."""
    blob = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32)
    return np.divide(blob, 255.0, out=blob)  # in place: one array a batch, not two
