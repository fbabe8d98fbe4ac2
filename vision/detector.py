"""The tile detector: built once from a weights path, shared by every request.

Two runtimes behind one interface: ONNX Runtime (the default, fastest on CPU) for ``.onnx`` weights,
ultralytics/torch for ``.pt`` weights. ``detect`` keeps no state between calls and takes its
thresholds as arguments, so one ``Detector`` is safe to use from many threads.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.detections import DETECTOR_CLASSES, Detections
from vision.images import Photo

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
DEFAULT_WEIGHTS = MODELS_DIR / "tiles.onnx"
DEFAULT_CONF = 0.25
DEFAULT_IOU = 0.6


class ModelError(RuntimeError):
    """The weights are missing or not a tile detector of this project."""


def letterbox(pixels: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Resize keeping the aspect ratio into a ``size`` square, padded grey.

    Returns (image, gain, (pad_x, pad_y)).
    """
    height, width = pixels.shape[:2]
    gain = min(size / width, size / height)
    new_w, new_h = max(1, round(width * gain)), max(1, round(height * gain))
    resized = cv2.resize(
        pixels, (new_w, new_h), interpolation=cv2.INTER_AREA if gain < 1 else cv2.INTER_LINEAR
    )
    pad_x, pad_y = (size - new_w) / 2, (size - new_h) / 2
    top, left = round(pad_y - 0.1), round(pad_x - 0.1)
    canvas = np.full((size, size, 3), 114, np.uint8)
    canvas[top : top + new_h, left : left + new_w] = resized
    return canvas, gain, (left, top)


def unletterbox(
    boxes: np.ndarray, gain: float, pad: tuple[float, float], width: int, height: int
) -> np.ndarray:
    """Map xyxy boxes from the letterboxed square back to the original image, clipped to it."""
    mapped = boxes.astype(np.float32).copy()
    mapped[:, [0, 2]] = (mapped[:, [0, 2]] - pad[0]) / gain
    mapped[:, [1, 3]] = (mapped[:, [1, 3]] - pad[1]) / gain
    mapped[:, [0, 2]] = mapped[:, [0, 2]].clip(0, width)
    mapped[:, [1, 3]] = mapped[:, [1, 3]].clip(0, height)
    return mapped


def _nms_per_class(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou: float) -> np.ndarray:
    """Indices kept by class-aware NMS (for raw, non end-to-end model outputs)."""
    if len(boxes) == 0:
        return np.zeros(0, np.int64)
    offset = classes[:, None].astype(np.float32) * 4096.0  # shift each class apart
    shifted = boxes + offset
    xywh = np.concatenate([shifted[:, :2], shifted[:, 2:] - shifted[:, :2]], axis=1)
    keep = cv2.dnn.NMSBoxes(xywh.tolist(), scores.tolist(), 0.0, iou)
    return np.asarray(keep, np.int64).reshape(-1)


class Detector:
    """``Detector(path)`` loads ``.onnx`` with ONNX Runtime or ``.pt`` with ultralytics."""

    def __init__(self, weights: Path | str = DEFAULT_WEIGHTS, *, threads: int | None = None) -> None:
        self.weights = Path(weights)
        if not self.weights.is_file():
            raise ModelError(f"{self.weights}: no such weights file (the shipped model is models/tiles.onnx)")
        self.backend = "onnx" if self.weights.suffix == ".onnx" else "torch"
        self._lock = threading.Lock()  # only the torch path needs it: ultralytics predictors keep state
        if self.backend == "onnx":
            self._load_onnx(threads)
        else:
            self._load_torch()

    def _load_onnx(self, threads: int | None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self._session = ort.InferenceSession(
                str(self.weights), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise ModelError(f"{self.weights}: not a loadable ONNX model ({error})") from None
        meta = self._session.get_modelmeta().custom_metadata_map
        names = _parse_names(meta.get("names", ""))
        self.imgsz = int(json.loads(meta.get("imgsz", "[640, 640]"))[0]) if meta.get("imgsz") else 640
        self.end2end = meta.get("end2end", "False") == "True"
        self._input = self._session.get_inputs()[0].name
        self._class_map = _class_map(names)

    def _load_torch(self) -> None:
        from ultralytics import YOLO

        try:
            self._model = YOLO(str(self.weights), task="detect")
        except Exception as error:  # ultralytics raises many kinds
            raise ModelError(f"{self.weights}: not a loadable YOLO model ({error})") from None
        self.imgsz = 640  # the same input size as the shipped ONNX export (see models/manifest.json)
        names = self._model.names
        self._class_map = _class_map([names[i] for i in sorted(names)])

    @property
    def class_names(self) -> tuple[str, ...]:
        return DETECTOR_CLASSES

    def detect(
        self, photo: Photo | np.ndarray, *, conf: float = DEFAULT_CONF, iou: float = DEFAULT_IOU
    ) -> Detections:
        """Tiles in an RGB image; boxes in the image's own pixels."""
        pixels = photo.pixels if isinstance(photo, Photo) else photo
        height, width = pixels.shape[:2]
        if self.backend == "torch":
            boxes, scores, classes = self._run_torch(pixels, conf, iou)
        else:
            boxes, scores, classes = self._run_onnx(pixels, conf, iou)
        keep = classes >= 0
        return Detections(boxes[keep], classes[keep], scores[keep], (width, height))

    def _run_onnx(
        self, pixels: np.ndarray, conf: float, iou: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        square, gain, pad = letterbox(pixels, self.imgsz)
        blob = np.ascontiguousarray(square.transpose(2, 0, 1)[None], dtype=np.float32) / 255.0
        output = self._session.run(None, {self._input: blob})[0][0]
        if self.end2end:  # (max_det, 6): x1, y1, x2, y2, score, class
            output = output[output[:, 4] >= conf]
            boxes, scores, classes = output[:, :4], output[:, 4], output[:, 5].astype(np.int64)
        else:  # (4 + nc, anchors): cx, cy, w, h, class scores
            output = output.T
            class_scores = output[:, 4:]
            classes = class_scores.argmax(1)
            scores = class_scores[np.arange(len(classes)), classes]
            mask = scores >= conf
            centre, size = output[mask, :2], output[mask, 2:4]
            boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
            scores, classes = scores[mask], classes[mask]
            keep = _nms_per_class(boxes, scores, classes, iou)
            boxes, scores, classes = boxes[keep], scores[keep], classes[keep]
        boxes = unletterbox(boxes, gain, pad, pixels.shape[1], pixels.shape[0])
        return boxes, scores.astype(np.float32), self._class_map[classes]

    def _run_torch(
        self, pixels: np.ndarray, conf: float, iou: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self._lock:
            results: Any = self._model.predict(
                pixels[:, :, ::-1], conf=conf, iou=iou, imgsz=self.imgsz, verbose=False, device="cpu"
            )
        boxes = results[0].boxes
        classes = boxes.cls.numpy().astype(np.int64)
        return boxes.xyxy.numpy(), boxes.conf.numpy(), self._class_map[classes]


def _parse_names(text: str) -> list[str]:
    """ultralytics stores ``names`` in ONNX metadata as a Python dict literal."""
    import ast

    if not text:
        raise ModelError(
            "the ONNX model has no class names in its metadata; export it with 'smj train --export'"
        )
    names = ast.literal_eval(text)
    return [names[i] for i in sorted(names)]


def _class_map(names: list[str]) -> np.ndarray:
    """Model class index -> this project's class id (-1 for a class we don't know)."""
    return np.array([DETECTOR_CLASSES.index(n) if n in DETECTOR_CLASSES else -1 for n in names], np.int64)
