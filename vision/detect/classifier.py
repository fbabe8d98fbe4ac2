"""The tile classifier: reads the face of each box the localiser found, from the photo's own pixels.

The detector finds where the tiles are; this small classification network (EfficientNet-Lite0,
``vision.factory.face_net``, exported to ONNX and shipped in INT8, see ``vision.factory.quantize``) names
each one from a crop of the photo at full resolution. Reading faces from crops keeps small and distant tiles
legible and lets the localiser run at a low input size. A tile is cut two ways: ``tile_crops`` (its box) and,
for a tile in a row, ``upright_crops`` (turned along its row); both make training and inference crops alike.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.detect.boxes import row_directions
from vision.detect.onnx_model import Runtime, load_onnx
from vision.detections import DETECTOR_CLASSES

NONE = len(DETECTOR_CLASSES)  # "not a tile": the localiser's false alarms
CLASSIFIER_CLASSES: tuple[str, ...] = (*DETECTOR_CLASSES, "none")
CROP_SIZE = 64
CROP_MARGIN = 0.08  # of the box's width and height, on each side
BOX_MARGINS = (-0.04, 0.22)  # a training crop's margin on each side, of its box: the localiser's are loose
FEATURES = "features"  # the ONNX output holding each crop's pooled features (vision.factory.face_net)


class ClassifierError(RuntimeError):
    """The classifier weights are missing or unusable."""


@dataclass(frozen=True, eq=False)
class Views:
    """What ``TileClassifier.read_views`` gives for N tiles: their class probabilities (N, C), the two views'
    readings averaged, and each view's L2-normalised features (N, 2, D), None for a model without them."""

    probabilities: np.ndarray
    features: np.ndarray | None


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
    the x axis (``angles`` in degrees, as ``vision.detect.boxes.row_directions`` gives them) and cut to the
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


class TileClassifier:
    """``TileClassifier(path)``: ``.onnx`` through ONNX Runtime, ``.pt`` through torch."""

    def __init__(
        self, weights: Path | str, *, threads: int | None = None, runtime: Runtime | None = None
    ) -> None:
        self.weights = Path(weights)
        self.runtime = runtime
        if not self.weights.is_file():
            raise ClassifierError(f"{self.weights}: no such classifier weights file")
        self.backend = "onnx" if self.weights.suffix == ".onnx" else "torch"
        self._lock = threading.Lock()
        self.has_features = False  # whether the model gives each crop's features (``infer``)
        self.feature_size = 0
        names = self._load_onnx(threads) if self.backend == "onnx" else self._load_torch()
        unknown = [name for name in names if name not in CLASSIFIER_CLASSES]
        if unknown:
            raise ClassifierError(f"{self.weights}: classes {unknown} are not tile classes")
        self._class_map = np.array([CLASSIFIER_CLASSES.index(name) for name in names], np.int64)

    def _load_onnx(self, threads: int | None) -> list[str]:
        model = load_onnx(self.weights, threads, ClassifierError, "classify", self.runtime)
        self.runtime = model.runtime
        self._session = model.session
        self.imgsz = model.imgsz
        self._input = model.input.name
        self._fixed_batch = model.input.shape[0]
        outputs = [output.name for output in self._session.get_outputs()]
        self.has_features = FEATURES in outputs
        if self.has_features:
            self._features_at = outputs.index(FEATURES)
            self.feature_size = int(self._session.get_outputs()[self._features_at].shape[1] or 0)
        return model.names

    def _load_torch(self) -> list[str]:
        try:
            import torch
        except ImportError:
            raise ClassifierError(
                f"{self.weights}: a .pt classifier needs torch (pip install -e '.[train]'); "
                "the .onnx one does not"
            ) from None
        from vision.factory import face_net

        try:
            checkpoint: Any = torch.load(self.weights, map_location="cpu", weights_only=False)
            if face_net.is_face_net(checkpoint):
                self._module = face_net.model_of(checkpoint)
                self.imgsz = self._module.imgsz
                self.has_features = True
                self.feature_size = int(self._module.net._fc.in_features)
            else:
                self._module = (checkpoint.get("ema") or checkpoint["model"]).float().eval()
                self.imgsz = int(checkpoint.get("train_args", {}).get("imgsz", CROP_SIZE))
        except Exception as error:  # torch and pickle raise many kinds
            raise ClassifierError(f"{self.weights}: not a loadable classifier ({error})") from None
        names = self._module.names
        return [names[i] for i in sorted(names)]

    @functools.cached_property
    def identity(self) -> str:
        """The weights file's sha256: which model gave a feature vector (a stored set's examples)."""
        with self.weights.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()

    def probabilities(self, crops: np.ndarray) -> np.ndarray:
        """(N, len(CLASSIFIER_CLASSES)) class probabilities for (N, S, S, 3) uint8 RGB crops."""
        return self.infer(crops)[0]

    def infer(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Class probabilities (N, len(CLASSIFIER_CLASSES)) and the crops' features (N, D), L2-normalised,
        from one call of the network (``vision.factory.face_net.add_features_output``); features None for a
        model without them (``has_features``)."""
        probs = np.zeros((len(crops), len(CLASSIFIER_CLASSES)), np.float32)
        if not len(crops):
            return probs, np.zeros((0, self.feature_size), np.float32) if self.has_features else None
        if crops.shape[1] != self.imgsz:
            crops = np.stack([cv2.resize(c, (self.imgsz, self.imgsz)) for c in crops])
        blob = crops_to_blob(crops)
        features: np.ndarray | None = None
        if self.backend == "onnx":
            with self._lock:  # one call at a time, as the localiser's (``Detector``)
                if isinstance(self._fixed_batch, int) and self._fixed_batch != len(blob):
                    runs = [self._session.run(None, {self._input: b[None]}) for b in blob]
                    outputs = [np.concatenate(parts) for parts in zip(*runs, strict=True)]
                else:
                    outputs = self._session.run(None, {self._input: blob})
            out = outputs[0]
            if self.has_features:
                features = outputs[self._features_at]
        else:
            import torch

            from vision.factory import face_net

            with self._lock, torch.inference_mode():
                if self.has_features:
                    result, found = face_net.torch_features(self._module, torch.from_numpy(blob))
                    features = found.numpy()
                else:
                    result = self._module(torch.from_numpy(blob))
            out = (result[0] if isinstance(result, tuple) else result).numpy()
        probs[:, self._class_map] = out
        return probs, None if features is None else features.astype(np.float32, copy=False)

    def read(
        self,
        pixels: np.ndarray,
        boxes: np.ndarray,
        scores: np.ndarray | None = None,
        *,
        flip_row_tiles: bool = True,
    ) -> np.ndarray:
        """(N, len(CLASSIFIER_CLASSES)) probabilities for boxes of an RGB image, read in one batch
        (``read_views``)."""
        return self.read_views(pixels, boxes, scores, flip_row_tiles=flip_row_tiles).probabilities

    def read_views(
        self,
        pixels: np.ndarray,
        boxes: np.ndarray,
        scores: np.ndarray | None = None,
        *,
        flip_row_tiles: bool = True,
    ) -> Views:
        """Every tile read in one batch from two views, its two readings averaged, and each view's features.

        A tile in no row: its box, as it is and upside down (a tile seen from across the table is the same
        tile). A tile in a row (``vision.detect.boxes.row_directions``; ``scores``, the localiser's, tell a
        tile's box from a second box on it) turned upright along that row (``upright_crops``), and, with
        ``flip_row_tiles``, that crop upside down too, else its box as it is.
        """
        boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
        crops = tile_crops(pixels, boxes, self.imgsz)
        if not len(boxes):
            probs, features = self.infer(crops)
            return Views(probs, None if features is None else features[:, None])
        angles, pitches = row_directions(boxes, scores)
        row = np.flatnonzero(np.isfinite(angles))
        turned = upright_crops(pixels, boxes[row], angles[row], pitches[row], self.imgsz)
        second = crops[:, ::-1, ::-1].copy()
        second[row] = turned
        if flip_row_tiles:
            crops[row] = turned[:, ::-1, ::-1]
        read, features = self.infer(np.concatenate([crops, second]))
        n = len(boxes)
        views = None if features is None else np.stack([features[:n], features[n:]], axis=1)
        return Views((read[:n] + read[n:]) / 2, views)

    def example_views(
        self, pixels: np.ndarray, boxes: np.ndarray, scores: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """What a set keeps of each tile, from one batch: every view the reader uses (``read_views``) as
        crops (N, 4, S, S, 3), in this order: its box as it lies, upside down, turned along its row (a tile
        in no row: its box again), and that upside down; their features (N, 4, D) (None for a model without
        them) and the tile's probabilities (N, C), averaged over the views."""
        boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
        crops = tile_crops(pixels, boxes, self.imgsz)
        turned = crops.copy()
        if len(boxes):
            angles, pitches = row_directions(boxes, scores)
            row = np.flatnonzero(np.isfinite(angles))
            turned[row] = upright_crops(pixels, boxes[row], angles[row], pitches[row], self.imgsz)
        views = np.stack([crops, crops[:, ::-1, ::-1], turned, turned[:, ::-1, ::-1]], axis=1)
        n = len(boxes)
        probs, features = self.infer(views.reshape(n * 4, *views.shape[2:]))
        mean = probs.reshape(n, 4, -1).mean(axis=1)
        return views, None if features is None else features.reshape(n, 4, -1), mean

    def classify(self, pixels: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class ids (into ``CLASSIFIER_CLASSES``) and their probabilities for boxes of an RGB image."""
        probs = self.read(pixels, boxes)
        classes = probs.argmax(1).astype(np.int64) if len(probs) else np.zeros(0, np.int64)
        return classes, probs[np.arange(len(classes)), classes]
