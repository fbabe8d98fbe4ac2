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

import cv2
import numpy as np

from vision.contract import CLASSIFIER_CLASSES, FEATURES, crops_to_blob, tile_crops, upright_crops
from vision.detect.onnx_model import Runtime, load_onnx
from vision.geometry.boxes import row_directions


class ClassifierError(RuntimeError):
    """The classifier weights are missing or unusable."""


@dataclass(frozen=True, eq=False)
class Views:
    """What ``TileClassifier.read_views`` gives for N tiles: their class probabilities (N, C), the two views'
    readings averaged, and each view's L2-normalised features (N, 2, D), None for a model without them."""

    probabilities: np.ndarray
    features: np.ndarray | None


CHUNK = 64
"""Crops the network reads in one call: a photo's tiles go through in chunks of this many, so the memory a
photo takes is bounded whatever it holds (``benchmarks/bench_hostile.py``, case ``mosaic_1000_tiles``)."""


class TileClassifier:
    """``TileClassifier(path)``: ``.onnx`` weights through ONNX Runtime (a ``.pt`` checkpoint is the model
    factory's: ``vision.factory.torch_models``)."""

    def __init__(
        self, weights: Path | str, *, threads: int | None = None, runtime: Runtime | None = None
    ) -> None:
        self.weights = Path(weights)
        self.runtime = runtime
        if not self.weights.is_file():
            raise ClassifierError(f"{self.weights}: no such classifier weights file")
        self._lock = threading.Lock()
        self.has_features = False  # whether the model gives each crop's features (``infer``)
        self.feature_size = 0
        names = self._load(threads)
        unknown = [name for name in names if name not in CLASSIFIER_CLASSES]
        if unknown:
            raise ClassifierError(f"{self.weights}: classes {unknown} are not tile classes")
        self._class_map = np.array([CLASSIFIER_CLASSES.index(name) for name in names], np.int64)

    def _load(self, threads: int | None) -> list[str]:
        """Open the classifier's ONNX weights; its class names."""
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

    def _outputs(self, blob: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The network's class outputs (N, its classes) and features (N, D) or None, for a blob."""
        with self._lock:  # one call at a time, as the localiser's (``Detector``)
            if isinstance(self._fixed_batch, int) and self._fixed_batch != len(blob):
                runs = [self._session.run(None, {self._input: b[None]}) for b in blob]
                outputs = [np.concatenate(parts) for parts in zip(*runs, strict=True)]
            else:
                outputs = self._session.run(None, {self._input: blob})
        return outputs[0], outputs[self._features_at] if self.has_features else None

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
        # the network sees CHUNK crops at a time: its activations (and ONNX Runtime's arena, which keeps
        # its largest) are bounded by the chunk, not by how many tiles a photo shows
        outs: list[np.ndarray] = []
        features: list[np.ndarray] = []
        for start in range(0, len(crops), CHUNK):
            out, feature = self._outputs(crops_to_blob(crops[start : start + CHUNK]))
            outs.append(out)
            if feature is not None:
                features.append(feature)
        probs[:, self._class_map] = np.concatenate(outs)
        if not features:
            return probs, None
        return probs, np.concatenate(features).astype(np.float32, copy=False)

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
        tile). A tile in a row (``vision.geometry.boxes.row_directions``; ``scores``, the localiser's, tell a
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
        mean = probs.reshape(n, 4, probs.shape[1]).mean(axis=1)  # sizes given: a photo may hold no tile
        return views, None if features is None else features.reshape(n, 4, features.shape[1]), mean

    def classify(self, pixels: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class ids (into ``CLASSIFIER_CLASSES``) and their probabilities for boxes of an RGB image."""
        probs = self.read(pixels, boxes)
        classes = probs.argmax(1).astype(np.int64) if len(probs) else np.zeros(0, np.int64)
        return classes, probs[np.arange(len(classes)), classes]
