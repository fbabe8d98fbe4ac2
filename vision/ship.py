"""Shipping a trained detector: ``models/tiles.{pt,onnx}`` (the localiser), ``models/tile_faces.{pt,onnx}``
(the tile classifier) and ``models/manifest.json``.

The manifest records what a user needs to trust the weights: classes, input sizes, sha256 of every
file, the training data and recipe, and the metrics measured by ``smj eval``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vision.detector import MODELS_DIR
from vision.quantize import calibration_crops, quantize_classifier

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_onnx(weights: Path, imgsz: int, *, dynamic: bool = False) -> Path:
    """Export a ``.pt`` to ONNX (opset 17, simplified) beside it; ``dynamic``: any batch size."""
    from ultralytics import YOLO

    model = YOLO(str(weights))
    return Path(
        model.export(format="onnx", imgsz=imgsz, opset=17, simplify=True, dynamic=dynamic, device="cpu")
    )


def _copy_stripped(weights: Path, target: Path) -> list[str]:
    """Copy a checkpoint without its optimizer state; a single-class localiser's class is named "tile"."""
    import torch
    from ultralytics.utils.torch_utils import strip_optimizer

    if weights.resolve() != target.resolve():
        shutil.copy2(weights, target)
    checkpoint = torch.load(target, map_location="cpu", weights_only=False)
    model = checkpoint.get("ema") or checkpoint["model"]
    if list(model.names.values()) == ["item"]:
        model.names = {0: "tile"}
        checkpoint["model"], checkpoint["ema"] = model, None
        torch.save(checkpoint, target)
    strip_optimizer(str(target))  # drop the optimizer state and EMA copy: half the size
    return [model.names[i] for i in sorted(model.names)]


def _train_args(weights: Path) -> dict[str, Any]:
    import torch

    checkpoint = torch.load(weights, map_location="cpu", weights_only=False)
    return dict(checkpoint.get("train_args") or {})


def _file_entry(path: Path) -> dict[str, Any]:
    return {"sha256": sha256(path), "bytes": path.stat().st_size}


def average_checkpoints(sources: Sequence[Path], out: Path) -> Path:
    """One checkpoint whose weights are the mean of ``sources``' (a uniform "model soup").

    The sources must be fine-tunes of one model (the same architecture and starting weights): their
    average often reads better than any of them, at no cost when it runs. The first source gives the
    rest of the checkpoint (class names, training arguments).
    """
    import torch

    if not sources:
        raise ValueError("no checkpoints to average")
    checkpoints = [torch.load(path, map_location="cpu", weights_only=False) for path in sources]
    models = [(checkpoint.get("ema") or checkpoint["model"]).float() for checkpoint in checkpoints]
    states = [model.state_dict() for model in models]
    if any(state.keys() != states[0].keys() for state in states):
        raise ValueError("the checkpoints to average are not of one architecture")
    averaged = {
        key: sum(state[key] for state in states) / len(states) if value.dtype.is_floating_point else value
        for key, value in states[0].items()
    }
    models[0].load_state_dict(averaged)
    checkpoint = {**checkpoints[0], "model": models[0], "ema": None, "optimizer": None}
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint, out)
    return out


def ship(
    weights: Path | None,
    *,
    imgsz: int | None = None,
    classifier: Path | None = None,
    classifier_imgsz: int | None = None,
    calibration: Path | None = None,
    models_dir: Path = MODELS_DIR,
    info: dict[str, Any] | None = None,
) -> Path:
    """Copy the weights into ``models_dir`` (tiles.pt/.onnx, tile_faces.pt/.onnx) and write the manifest.

    ``weights`` None ships the classifier alone: the localiser's files and manifest entries stay as they are.
    The classifier's ONNX is quantized to INT8 (``vision.quantize``), calibrated on crops from
    ``calibration`` (a crop dataset), by default the crops it was trained on; raises ValueError when
    there are none.
    """
    if weights is None and classifier is None:
        raise ValueError("nothing to ship: give a localiser, a classifier or both")
    if weights is not None and imgsz is None:
        raise ValueError("the localiser's input size (imgsz) is needed to export it")
    if classifier is not None:  # everything checked before anything is written
        train_args = _train_args(classifier)
        faces_imgsz = classifier_imgsz or int(train_args.get("imgsz", 64))  # the size it trained at
        crops_folder = calibration or Path(str(train_args.get("data", "")))
        crops = calibration_crops(crops_folder, faces_imgsz)
    models_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = models_dir / MANIFEST
    manifest: dict[str, Any] = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    manifest.update(info or {})
    files = dict(manifest.get("files", {}))
    if weights is not None:
        assert imgsz is not None
        target_pt = models_dir / "tiles.pt"
        names = _copy_stripped(weights, target_pt)
        onnx_path = export_onnx(target_pt, imgsz, dynamic=True)  # any input shape: the looks of vision.looks
        files |= {"tiles.pt": _file_entry(target_pt), "tiles.onnx": _file_entry(onnx_path)}
        manifest.update({"classes": names, "input_size": imgsz})
    if classifier is not None:
        faces_pt = models_dir / "tile_faces.pt"
        faces_names = _copy_stripped(classifier, faces_pt)
        faces_onnx = quantize_classifier(export_onnx(faces_pt, faces_imgsz, dynamic=True), crops)
        files |= {"tile_faces.pt": _file_entry(faces_pt), "tile_faces.onnx": _file_entry(faces_onnx)}
        manifest["classifier"] = {
            "classes": faces_names,
            "input_size": faces_imgsz,
            "onnx": f"INT8 (static QDQ, per-channel), calibrated on {len(crops)} crops of {crops_folder}",
        }
    manifest["files"] = files
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest_path
