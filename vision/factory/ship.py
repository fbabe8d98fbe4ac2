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

from vision.detect.detector import MODELS_DIR
from vision.factory import face_net
from vision.factory.quantize import calibration_crops, quantize_classifier

MANIFEST = "manifest.json"


def _load(path: Path) -> Any:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)


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
    checkpoint = _load(target)
    model = checkpoint.get("ema") or checkpoint["model"]
    if list(model.names.values()) == ["item"]:
        model.names = {0: "tile"}
        checkpoint["model"], checkpoint["ema"] = model, None
        torch.save(checkpoint, target)
    strip_optimizer(str(target))  # drop the optimizer state and EMA copy: half the size
    return [model.names[i] for i in sorted(model.names)]


def _classifier_source(checkpoint: dict[str, Any]) -> tuple[int, Path]:
    """The crop size a classifier checkpoint reads and the crop folder it was trained on."""
    if face_net.is_face_net(checkpoint):
        return int(checkpoint["imgsz"]), Path(str(checkpoint.get("data", "")))
    train_args = dict(checkpoint.get("train_args") or {})
    return int(train_args.get("imgsz", 64)), Path(str(train_args.get("data", "")))


def _ship_face_net(checkpoint: dict[str, Any], target: Path) -> tuple[list[str], Path]:
    """A pretrained-backbone classifier: its weights alone (no optimizer state) and its fp32 ONNX export."""
    model = face_net.model_of(checkpoint)
    kept = {key: checkpoint[key] for key in ("recipe", "data", "step", "val_top1") if key in checkpoint}
    face_net.save_checkpoint(model, target, **kept)
    return [model.names[i] for i in sorted(model.names)], face_net.export_onnx(target)


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
    checkpoints = [_load(path) for path in sources]
    pretrained = all(face_net.is_face_net(checkpoint) for checkpoint in checkpoints)
    models = [
        face_net.model_of(checkpoint)
        if pretrained
        else (checkpoint.get("ema") or checkpoint["model"]).float()
        for checkpoint in checkpoints
    ]
    states = [model.state_dict() for model in models]
    if any(state.keys() != states[0].keys() for state in states):
        raise ValueError("the checkpoints to average are not of one architecture")
    models[0].load_state_dict(_mean(states))
    if pretrained:
        return face_net.save_checkpoint(models[0], out, data=checkpoints[0].get("data", ""))
    checkpoint = {**checkpoints[0], "model": models[0], "ema": None, "optimizer": None}
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint, out)
    return out


def _mean(states: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The mean of state dicts' floating-point tensors (counters such as batch norms' are the first's)."""
    return {
        key: sum(state[key] for state in states) / len(states) if value.dtype.is_floating_point else value
        for key, value in states[0].items()
    }


def ship(
    weights: Path | None,
    *,
    imgsz: int | None = None,
    classifier: Path | None = None,
    classifier_imgsz: int | None = None,
    calibration: Path | None = None,
    models_dir: Path = MODELS_DIR,
    info: dict[str, Any] | None = None,
    quantize: bool = True,
) -> Path:
    """Copy the weights into ``models_dir`` (tiles.pt/.onnx, tile_faces.pt/.onnx) and write the manifest.

    ``weights`` None ships the classifier alone: the localiser's files and manifest entries stay as they are.
    The classifier's ONNX is quantized to INT8 (``vision.factory.quantize``), calibrated on crops from
    ``calibration`` (a crop dataset), by default the crops it was trained on; raises ValueError when
    there are none.
    """
    if weights is None and classifier is None:
        raise ValueError("nothing to ship: give a localiser, a classifier or both")
    if weights is not None and imgsz is None:
        raise ValueError("the localiser's input size (imgsz) is needed to export it")
    if classifier is not None:  # everything checked before anything is written
        faces_checkpoint = _load(classifier)
        trained_imgsz, trained_on = _classifier_source(faces_checkpoint)
        faces_imgsz = classifier_imgsz or trained_imgsz  # the size it trained at
        crops_folder = calibration or trained_on
        crops = calibration_crops(crops_folder, faces_imgsz) if quantize else None
    models_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = models_dir / MANIFEST
    manifest: dict[str, Any] = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    manifest.update(info or {})
    files = dict(manifest.get("files", {}))
    if weights is not None:
        assert imgsz is not None
        target_pt = models_dir / "tiles.pt"
        names = _copy_stripped(weights, target_pt)
        onnx_path = export_onnx(
            target_pt, imgsz, dynamic=True
        )  # any input shape: the looks of vision.detect.looks
        files |= {"tiles.pt": _file_entry(target_pt), "tiles.onnx": _file_entry(onnx_path)}
        manifest.update({"classes": names, "input_size": imgsz})
    if classifier is not None:
        faces_pt = models_dir / "tile_faces.pt"
        if face_net.is_face_net(faces_checkpoint):
            faces_names, faces_fp32 = _ship_face_net(faces_checkpoint, faces_pt)
        else:
            faces_names = _copy_stripped(classifier, faces_pt)
            faces_fp32 = export_onnx(faces_pt, faces_imgsz, dynamic=True)
        faces_onnx = quantize_classifier(faces_fp32, crops) if crops is not None else faces_fp32
        files |= {"tile_faces.pt": _file_entry(faces_pt), "tile_faces.onnx": _file_entry(faces_onnx)}
        manifest["classifier"] = {
            "classes": faces_names,
            "input_size": faces_imgsz,
            "onnx": f"INT8 (static QDQ, per-channel, 7-bit weights), calibrated on {len(crops)} crops of "
            f"{crops_folder}; a second output, features: the pooled features in float, L2-normalised"
            if crops is not None
            else "float32; a second output, features: the pooled features, L2-normalised",
        }
    manifest["files"] = files
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest_path
