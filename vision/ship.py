"""Shipping a trained detector: ``models/tiles.pt``, ``models/tiles.onnx`` and ``models/manifest.json``.

The manifest records what a user needs to trust the weights: classes, input size, sha256 of both
files, the training data and recipe, and the metrics measured by ``smj eval``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from vision.detector import MODELS_DIR

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_onnx(weights: Path, imgsz: int) -> Path:
    """Export a ``.pt`` to ONNX (opset 17, static 1x3xSxS input, simplified) beside it."""
    from ultralytics import YOLO

    model = YOLO(str(weights))
    return Path(
        model.export(format="onnx", imgsz=imgsz, opset=17, simplify=True, dynamic=False, device="cpu")
    )


def ship(
    weights: Path, *, imgsz: int, models_dir: Path = MODELS_DIR, info: dict[str, Any] | None = None
) -> Path:
    """Copy the weights into ``models_dir`` as tiles.pt / tiles.onnx and write the manifest."""
    from ultralytics import YOLO

    models_dir.mkdir(parents=True, exist_ok=True)
    target_pt = models_dir / "tiles.pt"
    if weights.resolve() != target_pt.resolve():
        shutil.copy2(weights, target_pt)
    from ultralytics.utils.torch_utils import strip_optimizer

    strip_optimizer(str(target_pt))  # drop the optimizer state and EMA copy: half the size
    onnx_path = export_onnx(target_pt, imgsz)
    names = YOLO(str(target_pt)).names
    manifest_path = models_dir / MANIFEST
    manifest: dict[str, Any] = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    manifest.update(info or {})
    manifest.update(
        {
            "classes": [names[i] for i in sorted(names)],
            "input_size": imgsz,
            "files": {
                "tiles.pt": {"sha256": sha256(target_pt), "bytes": target_pt.stat().st_size},
                "tiles.onnx": {"sha256": sha256(onnx_path), "bytes": onnx_path.stat().st_size},
            },
        }
    )
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest_path


def load_manifest(models_dir: Path = MODELS_DIR) -> dict[str, Any]:
    path = models_dir / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
