"""The models as the factory has them, ``.pt`` checkpoints read through torch, behind the serving
interfaces: ``TorchDetector`` (a localiser through ultralytics, with the same looks as the serving
``vision.detect.detector.Detector``) and ``TorchClassifier`` (a tile classifier of ``vision.factory.face_net``
or ultralytics). For measuring a run before shipping it (``smj eval --weights RUN/weights/best.pt``) and for
timing the runtimes against each other; serving opens the ``.onnx`` files ``smj ship`` makes from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vision.contract import CROP_SIZE
from vision.detect.classifier import ClassifierError, TileClassifier
from vision.detect.detector import Detector, Found, ModelError


def reader(weights: Path | str, *, classifier: Path | str | None = None, **options: Any) -> Detector:
    """A ``Detector`` for ``weights`` and ``classifier``: the serving one for ``.onnx`` files, a
    ``TorchDetector`` when either is a ``.pt`` checkpoint."""
    checkpoints = [Path(path).suffix == ".pt" for path in (weights, classifier) if path is not None]
    return (TorchDetector if any(checkpoints) else Detector)(weights, classifier=classifier, **options)


def classifier_reader(weights: Path | str, **options: Any) -> TileClassifier:
    """A ``TileClassifier`` for ``weights``: ``TorchClassifier`` for a ``.pt`` checkpoint."""
    return (TorchClassifier if Path(weights).suffix == ".pt" else TileClassifier)(weights, **options)


class TorchClassifier(TileClassifier):
    """A tile classifier ``.pt`` (``vision.factory.face_net``'s, or an ultralytics one) read through torch."""

    def _load(self, threads: int | None) -> list[str]:
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

    def _outputs(self, blob: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        import torch

        from vision.factory import face_net

        features = None
        with self._lock, torch.inference_mode():
            if self.has_features:
                result, found = face_net.torch_features(self._module, torch.from_numpy(blob))
                features = found.numpy()
            else:
                result = self._module(torch.from_numpy(blob))
        return (result[0] if isinstance(result, tuple) else result).numpy(), features


class TorchDetector(Detector):
    """A localiser ``.pt`` read through ultralytics (an ``.onnx`` one as serving reads it), looked with as the
    serving ``Detector`` looks; its classifier a ``TorchClassifier`` when that is a ``.pt`` too."""

    _torch = False

    def _classifier(self, weights: Path, threads: int | None) -> TileClassifier:
        return classifier_reader(weights, threads=threads, runtime=self.runtime)

    def _load(self, threads: int | None) -> list[str]:
        if self.weights.suffix == ".onnx":
            return super()._load(threads)
        self._torch = True
        try:
            from ultralytics import YOLO
        except ImportError:
            raise ModelError(
                f"{self.weights}: a .pt model needs ultralytics and torch (pip install -e '.[train]'); "
                "the .onnx weights need neither"
            ) from None
        import torch

        from vision.factory import face_net

        try:
            checkpoint = torch.load(self.weights, map_location="cpu", weights_only=False)
        except Exception:  # not a torch checkpoint at all: ultralytics says what it is below
            checkpoint = None
        if face_net.is_face_net(checkpoint):
            raise ModelError(
                f"{self.weights}: a tile classifier (models/tile_faces.pt), where a tile localiser "
                "(models/tiles.pt) is needed"
            )
        try:
            self._model = YOLO(str(self.weights), task="detect")
        except Exception as error:  # ultralytics raises many kinds
            raise ModelError(f"{self.weights}: not a loadable YOLO model ({error})") from None
        checkpoint = getattr(self._model, "ckpt", None)
        if not checkpoint or self._model.task != "detect":  # a config or a classifier loads too
            raise ModelError(f"{self.weights}: not a trained YOLO detection model")
        train_args = checkpoint.get("train_args", {})
        self.imgsz = int(train_args.get("imgsz", 640))  # the size it was trained (and exported) at
        self.dynamic = True  # ultralytics letterboxes to any size
        names = self._model.names
        return [names[i] for i in sorted(names)]

    def _infer(self, pixels: np.ndarray, shape: tuple[int, int], conf: float, iou: float) -> Found:
        if not self._torch:
            return super()._infer(pixels, shape, conf, iou)
        with self._lock:
            results: Any = self._model.predict(
                pixels[:, :, ::-1], conf=conf, iou=iou, imgsz=list(shape), verbose=False, device="cpu"
            )
        boxes = results[0].boxes
        classes = boxes.cls.numpy().astype(np.int64)
        return boxes.xyxy.numpy().reshape(-1, 4), boxes.conf.numpy(), self._class_map[classes]
